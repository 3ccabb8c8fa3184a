import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readChunks, sid, startServer } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--resume-204', '--tps', '40']);
});
after(() => s?.stop());

test('--resume-204: the resume route answers 204 while the turn runs, and replays it once it ended', async () => {
  const id = sid('r204');
  const res = await s.chat({ sessionId: id, message: 'long words:40' });
  assert.equal(res.status, 200);
  let during;
  const whole = await readChunks(res, async (_c, i) => {
    if (i === 3) {
      during = await s.resume(id, -1);
      await during.arrayBuffer();
    }
  });
  assert.equal(during.status, 204, 'nothing to join while it runs');
  const entry = (await s.log()).find((e) => e.route === 'stream' && e.sessionId === id);
  assert.equal(entry.fault, 'resume204');
  // Still running on the server all along: the chat stream came whole.
  assert.equal(whole.error, undefined);
  assert.equal(whole.chunks.at(-1).type, 'finish');
  const replay = await s.resume(id, -1);
  assert.equal(replay.status, 200, 'a finished turn replays');
  assert.deepEqual((await readChunks(replay)).chunks, whole.chunks);
});

test('the control route turns it off and on', async () => {
  await s.control({ resume204: false });
  const id = sid('r204-off');
  const res = await s.chat({ sessionId: id, message: 'live words:40' });
  let joined;
  const main = await readChunks(res, async (_c, i) => {
    if (i === 3) joined = await s.resume(id, 3);
  });
  assert.equal(joined.status, 200, 'joined live');
  const rest = await readChunks(joined);
  assert.deepEqual(rest.chunks, main.chunks.slice(4));
  const bad = await s.control({ resume204: 'yes' });
  assert.equal(bad.error?.field ?? bad.field, 'resume204');
  await s.control({ resume204: true });
});
