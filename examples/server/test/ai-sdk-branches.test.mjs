// AI SDK mode's branches (issue 41): the history PUT may carry the client's tree beside its
// visible path (`headId`, `tree: [{parentId, message}]`); the server keeps it, gives it back
// on GET, and across a restart. A PUT without one drops it: the client keeps no branches.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { postJson, sid, startServer } from './helpers.mjs';

const user = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const answer = (id, text) => ({ id, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] });

test('the tree of a history PUT is kept, given back, and survives a restart', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'acs-branches-'));
  let server;
  try {
    server = await startServer(['--runtime', 'ai-sdk', '--tps', '0'], { dataDir });
    const id = sid('branches');
    const messages = [user('u1', 'one'), answer('a1b', 'again')];
    const tree = [
      { parentId: null, message: messages[0] },
      { parentId: 'u1', message: answer('a1', 'first') },
      { parentId: 'u1', message: messages[1] },
    ];
    const put = (body) => postJson(`${server.api}/chat/${id}/messages`, body, 'PUT');
    assert.equal((await put({ headId: 'a1b', tree, messages })).status, 204);
    let got = await server.history(id);
    assert.deepEqual(got.messages, messages);
    assert.deepEqual(got.tree, tree);

    // Refused whole (400, nothing stored): a parent not listed before, an item without a message.
    for (const bad of [
      [{ parentId: 'nope', message: messages[0] }],
      [{ parentId: null }],
      'x',
    ]) {
      assert.equal((await put({ tree: bad, messages })).status, 400);
    }
    assert.deepEqual((await server.history(id)).tree, tree);

    await server.stop();
    server = await startServer(['--runtime', 'ai-sdk', '--tps', '0'], { dataDir });
    got = await server.history(id);
    assert.deepEqual(got.tree, tree, 'kept across a restart');

    // A client without branches stores its path alone: the tree goes.
    assert.equal((await put({ messages })).status, 204);
    got = await server.history(id);
    assert.equal(got.tree, undefined);
    assert.deepEqual(got.messages, messages);
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
