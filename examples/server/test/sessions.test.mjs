// The session list (SPEC §11) and sessions kept on disk across a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { postJson, readChunks, sid, sleep, startServer, textOf } from './helpers.mjs';

let pi;
let aiSdk;
before(async () => {
  [pi, aiSdk] = await Promise.all([startServer(['--tps', '0']), startServer(['--runtime', 'ai-sdk', '--tps', '0'])]);
});
after(() => Promise.all([pi?.stop(), aiSdk?.stop()]));

const list = async (s, q) => {
  const res = await s.sessions(q);
  assert.equal(res.status, 200);
  return res.json();
};
const ids = (page) => page.sessions.map((x) => x.id);
const turn = async (s, sessionId, message, extra) => {
  const { chunks, error } = await readChunks(await s.chat({ sessionId, message, ...extra }));
  assert.equal(error, undefined);
  return chunks;
};
/** `n` sessions, each with one turn, the last made first in the list. */
async function sessions(s, prefix, n) {
  const made = [];
  for (let i = 0; i < n; i++) {
    made.push(sid(`${prefix}${i}`));
    await turn(s, made[i], `session ${i} words:1`);
    await sleep(2); // distinct turn ends (equal ones would be ordered by id)
  }
  return made.reverse();
}
const errorCode = async (res) => (await res.json()).error.code;
/** Role and text of each part, as a user sees a history. */
const view = (messages) => messages.map((m) => ({ role: m.role, parts: m.parts.filter((p) => p.text !== undefined).map((p) => p.text) }));

test('a new server lists nothing; a session is listed from its first chat POST, not from reads', async () => {
  await pi.reset();
  assert.deepEqual(await list(pi), { sessions: [] });
  const id = sid('first');
  await fetch(`${pi.api}/capabilities?sessionId=${id}`);
  await pi.messages(id);
  assert.equal((await pi.resume(id, -1)).status, 204);
  assert.deepEqual(await list(pi), { sessions: [] }, 'capabilities, history and stream create nothing');

  const before = Date.now();
  await turn(pi, id, 'hello list words:1');
  const { sessions: [item], nextCursor } = await list(pi);
  assert.equal(nextCursor, undefined);
  assert.deepEqual(Object.keys(item).sort(), ['archived', 'createdAt', 'id', 'running', 'title', 'updatedAt']);
  assert.equal(item.id, id);
  assert.equal(item.title, 'hello list words:1', 'the first line of the first user message');
  assert.equal(item.running, false);
  assert.equal(item.archived, false);
  assert.ok(Date.parse(item.createdAt) >= before - 5 && Date.parse(item.updatedAt) >= Date.parse(item.createdAt));
  assert.equal(new Date(item.updatedAt).toISOString(), item.updatedAt, 'ISO-8601');
});

test('both runtimes: most recently updated first; a turn that ends moves its session up', async () => {
  for (const s of [pi, aiSdk]) {
    await s.reset();
    const [c, b, a] = await sessions(s, 'order', 3);
    assert.deepEqual(ids(await list(s)), [c, b, a]);
    const updated = (await list(s)).sessions.find((x) => x.id === a).updatedAt;
    await turn(s, a, 'again words:1');
    const page = await list(s);
    assert.deepEqual(ids(page), [a, c, b], 'the session whose turn ended last comes first');
    assert.ok(page.sessions[0].updatedAt > updated);
    assert.equal(page.sessions[0].title, 'session 0 words:1', 'the title stays the first message');
  }
  // A long first line is cut at 80 characters; later lines are not the title.
  const id = sid('long');
  await turn(aiSdk, id, `${'x'.repeat(100)}\nsecond line`);
  assert.equal((await list(aiSdk)).sessions[0].title, 'x'.repeat(80));
});

test('pages of limit=2 over 5 sessions visit each once; the last page has no nextCursor', async () => {
  await pi.reset();
  const all = await sessions(pi, 'page', 5);
  const walked = [];
  const sizes = [];
  let cursor;
  do {
    const page = await list(pi, { limit: '2', ...(cursor ? { cursor } : {}) });
    walked.push(...ids(page));
    sizes.push(page.sessions.length);
    cursor = page.nextCursor;
    assert.ok(cursor === undefined || typeof cursor === 'string');
  } while (cursor);
  assert.deepEqual(walked, all);
  assert.deepEqual(sizes, [2, 2, 1]);

  assert.equal((await list(pi, { limit: '0' })).sessions.length, 1, 'limit is clamped to 1..100');
  assert.equal((await list(pi, { limit: '1000' })).sessions.length, 5);
  assert.equal((await list(pi)).nextCursor, undefined, 'default limit 20');
  for (const q of [{ limit: 'two' }, { cursor: 'not-a-cursor' }, { archived: 'maybe' }]) {
    const res = await pi.sessions(q);
    assert.equal(res.status, 400, JSON.stringify(q));
    assert.equal(await errorCode(res), 'validation_error');
  }
});

test('a session updated between two page requests is not listed twice in the walk', async () => {
  await pi.reset();
  const all = await sessions(pi, 'keyset', 5);
  const first = await list(pi, { limit: '2' });
  assert.deepEqual(ids(first), all.slice(0, 2));
  // One the walk has not reached yet moves to the top (an offset would now repeat one).
  const moved = all[3];
  await turn(pi, moved, 'update words:1');
  const walked = [...ids(first)];
  let cursor = first.nextCursor;
  while (cursor) {
    const page = await list(pi, { limit: '2', cursor });
    walked.push(...ids(page));
    cursor = page.nextCursor;
  }
  assert.equal(new Set(walked).size, walked.length, `no session twice: ${walked}`);
  for (const id of all.filter((x) => x !== moved)) assert.ok(walked.includes(id), `${id} visited`);
  assert.equal(ids(await list(pi, { limit: '2' }))[0], moved, 'a walk from the top shows it first');
});

test('PATCH renames and archives; archived sessions are listed apart', async () => {
  for (const s of [pi, aiSdk]) {
    await s.reset();
    const [b, a] = await sessions(s, 'patch', 2);
    let res = await s.patchSession(a, { title: '  My\nchat ' });
    assert.equal(res.status, 200);
    const { session } = await res.json();
    assert.equal(session.id, a);
    assert.equal(session.title, 'My chat', 'one line, trimmed');
    assert.equal(session.archived, false);
    assert.equal((await list(s)).sessions.find((x) => x.id === a).title, 'My chat');
    assert.deepEqual(ids(await list(s)), [b, a], 'a rename keeps the order');

    res = await s.patchSession(a, { archived: true });
    assert.equal((await res.json()).session.archived, true);
    assert.deepEqual(ids(await list(s)), [b], 'gone from the default list');
    assert.deepEqual(ids(await list(s, { archived: 'false' })), [b]);
    const archived = await list(s, { archived: 'true' });
    assert.deepEqual(ids(archived), [a]);
    assert.equal(archived.sessions[0].archived, true);
    assert.equal(archived.sessions[0].title, 'My chat');

    await s.patchSession(a, { archived: false, title: '' });
    assert.deepEqual(ids(await list(s)), [b, a], 'unarchived: back in its place');
    assert.equal((await list(s)).sessions[1].title, 'session 0 words:1', 'an empty title clears the name');
    assert.deepEqual(ids(await list(s, { archived: 'true' })), []);

    res = await s.patchSession(sid('unknown'), { title: 'x' });
    assert.equal(res.status, 404);
    assert.equal(await errorCode(res), 'session_not_found');
    for (const body of [{ title: 5 }, { archived: 'yes' }, {}, [], { title: null }]) {
      res = await s.patchSession(a, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(await errorCode(res), 'validation_error');
    }
  }
});

test('DELETE: 204, then 404; the history, the list entry and the file are gone', async () => {
  await pi.reset();
  const [b, a] = await sessions(pi, 'delete', 2);
  assert.equal(readdirSync(path.join(pi.dataDir, 'pi')).length, 2);
  let res = await pi.deleteSession(a);
  assert.equal(res.status, 204);
  res = await pi.deleteSession(a);
  assert.equal(res.status, 404);
  assert.equal(await errorCode(res), 'session_not_found');
  assert.deepEqual(await pi.messages(a), []);
  assert.deepEqual(ids(await list(pi)), [b]);
  assert.equal(readdirSync(path.join(pi.dataDir, 'pi')).length, 1);
  // The older path of the same route.
  assert.equal((await fetch(`${pi.api}/chat/${encodeURIComponent(b)}`, { method: 'DELETE' })).status, 204);
  assert.deepEqual(await list(pi), { sessions: [] });

  // AI SDK sessions too.
  const [c] = await sessions(aiSdk, 'delete-ai', 1);
  assert.equal((await aiSdk.deleteSession(c)).status, 204);
  assert.deepEqual(await aiSdk.messages(c), []);
  assert.ok(!ids(await list(aiSdk)).includes(c));
});

test('running is true while a turn runs; DELETE then stops it', async () => {
  await pi.reset();
  await pi.control({ tps: 50 });
  const id = sid('running');
  const reading = readChunks(await pi.chat({ sessionId: id, message: 'long one words:300' }));
  let item;
  for (let i = 0; i < 50 && !item?.running; i++) {
    item = (await list(pi)).sessions.find((x) => x.id === id);
    if (!item?.running) await sleep(20);
  }
  assert.equal(item?.running, true);
  const res = await pi.deleteSession(id);
  assert.equal(res.status, 204);
  const { chunks } = await reading;
  assert.deepEqual(chunks.at(-1), { type: 'abort', reason: 'stopped' }, 'the turn was stopped');
  assert.deepEqual(await list(pi), { sessions: [] });
  await sleep(50);
  assert.deepEqual(readdirSync(path.join(pi.dataDir, 'pi')), [], 'the stopped turn wrote no file back');
  assert.deepEqual(await pi.messages(id), []);
  await pi.reset();
});

test('--untitled-sessions: no title until renamed; --not-found sessions: the list answers 404', async () => {
  const s = await startServer(['--tps', '0', '--untitled-sessions', '--not-found', 'sessions']);
  try {
    const res = await s.sessions();
    assert.equal(res.status, 404);
    assert.equal(await errorCode(res), 'not_found');
    await s.control({ notFound: [] });
    const [id] = await sessions(s, 'untitled', 1);
    const [item] = (await list(s)).sessions;
    assert.equal(item.id, id);
    assert.equal('title' in item, false);
    assert.equal((await (await s.patchSession(id, { title: 'Named' })).json()).session.title, 'Named');
    assert.equal((await list(s)).sessions[0].title, 'Named');
  } finally {
    await s.stop();
  }
});

test('a restarted server on the same data folder has the same sessions, histories and titles', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'acs-restart-'));
  try {
    let s = await startServer(['--tps', '0'], { dataDir });
    const one = sid('one');
    const two = sid('two');
    const three = sid('three');
    await turn(s, one, 'hello one words:2');
    await turn(s, two, 'think about two', { attachments: [{ mediaType: 'text/plain', url: 'data:text/plain,hi', filename: 'a.txt' }] });
    await turn(s, one, 'list files');
    await turn(s, two, 'echo hi there');
    await s.control({ runtime: 'ai-sdk' });
    await turn(s, three, 'hello three words:1');
    // The client's copy, as it PUTs it after a turn (here without the step-start parts).
    const put = (await s.messages(three)).map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== 'step-start') }));
    assert.equal((await postJson(`${s.api}/chat/${three}/messages`, { messages: put }, 'PUT')).status, 204);
    assert.equal((await s.patchSession(two, { title: 'Second chat' })).status, 200);

    const listed = await list(s);
    assert.deepEqual(ids(listed), [three, two, one]);
    const histories = {};
    for (const id of [one, two, three]) histories[id] = await s.messages(id);
    assert.deepEqual(view(histories[one]).map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'assistant']);
    await s.stop(); // SIGTERM to the child's PID

    s = await startServer(['--tps', '0'], { dataDir });
    try {
      assert.deepEqual(await list(s), listed, 'same sessions, titles, times and order');
      for (const id of [one, two, three]) {
        const restored = await s.messages(id);
        assert.deepEqual(view(restored), view(histories[id]), `${id}: same roles and texts`);
        assert.deepEqual(restored, histories[id], `${id}: the same messages, ids and parts`);
      }
      assert.deepEqual(await s.messages(three), put, 'the PUT history');
      const caps = await (await fetch(`${s.api}/capabilities?sessionId=${three}`)).json();
      assert.equal(caps.aiSdkOwnsHistory, true, 'a session keeps its runtime across a restart');

      // The restored agent goes on from the whole transcript.
      await turn(s, one, 'recall what I said');
      const after = await s.messages(one);
      assert.equal(after.length, histories[one].length + 2);
      assert.equal(textOf(after.at(-1)), 'Answer recall what I: before this you said "hello one words:2"; "list files".');
      assert.deepEqual(ids(await list(s)), [one, three, two]);
      // The AI SDK session goes on from the stored history too.
      await turn(s, three, 'recall it');
      assert.equal(textOf((await s.messages(three)).at(-1)), 'Answer recall it: before this you said "hello three words:1".');
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
