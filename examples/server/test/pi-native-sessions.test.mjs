// pi-native sessions as the real server makes them (pi-native-protocol.md §3.6, §3.1): create by
// `POST …/sessions` (shape, strict body, requestId idempotency, resumeSessionId, unknown agent
// type), and `--native-sessions strict`: every session route of a session never created, or
// deleted, is 404 AGENT_SESSION_NOT_FOUND. (The lenient default is pi-native.test.mjs's.)
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { nativeRoutes, postJson, sid, sleep, startServer } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--tps', '0', '--words', '3', '--protocol', 'pi-native', '--native-sessions', 'strict']);
});
after(async () => {
  await s?.stop();
});

const { base, at, state, post } = nativeRoutes(() => s);
const create = (body) => (body === undefined ? fetch(base(), { method: 'POST' }) : postJson(base(), body));
const list = () => fetch(base()).then((r) => r.json()).then((j) => j.sessions);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function created(body) {
  const res = await create(body);
  assert.equal(res.status, 201);
  return (await res.json()).sessionId;
}

async function waitState(id, pred, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const doc = await state(id);
    if (pred(doc)) return doc;
    if (Date.now() > until) throw new Error(`state never matched: ${JSON.stringify(doc).slice(0, 800)}`);
    await sleep(50);
  }
}
const turnDone = (doc) => doc.state?.status === 'idle' && doc.state.messages.length === 2;

async function assertNotFound(pending, what) {
  const res = await pending;
  assert.equal(res.status, 404, what);
  const body = await res.json();
  assert.equal(body.error.code, 'AGENT_SESSION_NOT_FOUND', what);
  assert.equal(typeof body.error.message, 'string', what);
}

/** Every session route of `id` (its commands well-formed, so only the session can fail). */
function everyRoute(id) {
  return [
    ['state', fetch(at(id, '/state'))],
    ['events', fetch(at(id, '/events?cursor=0'))],
    ['prompt', post(id, 'prompt', { requestId: `p-${id}`, clientNonce: `p-${id}`, content: 'hi' })],
    ['followup', post(id, 'followup', { requestId: `f-${id}:1`, clientNonce: `f-${id}`, content: 'hi', clientSeq: 1 })],
    ['interrupt', post(id, 'interrupt', {})],
    ['stop', post(id, 'stop', {})],
    ['queue/clear', post(id, 'queue/clear', {})],
    ['rename', post(id, 'rename', { requestId: `r-${id}`, title: 'x' })],
    ['delete', fetch(`${at(id)}?requestId=d-${id}`, { method: 'DELETE' })],
  ];
}

test('create: 201 {agentTypeId, sessionId}, an empty idle session, listed with its title', async () => {
  const res = await create({ requestId: 'c-1', title: 'My chat' });
  assert.equal(res.status, 201);
  const answer = await res.json();
  assert.deepEqual(Object.keys(answer).sort(), ['agentTypeId', 'sessionId']);
  assert.equal(answer.agentTypeId, 'pi');
  assert.match(answer.sessionId, UUID);
  const id = answer.sessionId;

  const doc = await state(id);
  assert.deepEqual(doc.ref, { agentTypeId: 'pi', sessionId: id });
  assert.equal(doc.seq, 0);
  assert.deepEqual(
    { ...doc.state },
    { protocolVersion: 1, sessionId: id, seq: 0, status: 'idle', messages: [], queue: { followUps: [] }, followUpMode: 'one-at-a-time' },
  );
  assert.equal(doc.summary.title, 'My chat');

  const item = (await list()).find((x) => x.ref.sessionId === id);
  assert.ok(item, 'listed');
  assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'ref', 'status', 'title', 'updatedAt']);
  assert.deepEqual([item.title, item.status], ['My chat', 'idle']);
  assert.equal(typeof item.createdAt, 'number');
  assert.equal(item.updatedAt, item.createdAt);

  // no body, an empty body: new sessions each time, untitled
  const a = await created(undefined);
  const b = await created({});
  assert.notEqual(a, b);
  assert.equal((await state(a)).summary.title, '');
});

test('create: strict body, requestId idempotency, unknown agent type', async () => {
  for (const [body, field] of [
    [{ foo: 1 }, 'body.foo'],
    [{ title: '' }, 'body.title'],
    [{ title: 'x'.repeat(201) }, 'body.title'],
    [{ requestId: 'bad id!' }, 'body.requestId'],
    [{ resumeSessionId: 7 }, 'body.resumeSessionId'],
    [[], 'body'],
  ]) {
    const res = await create(body);
    assert.equal(res.status, 400, field);
    const e = await res.json();
    assert.deepEqual([e.error.code, e.error.details.field], ['AGENT_COMMAND_INVALID_STATE', field]);
  }
  assert.equal((await fetch(`${base()}?x=1`, { method: 'POST' })).status, 400);

  const first = await (await create({ requestId: 'idem-1', title: 'Same' })).json();
  const again = await create({ requestId: 'idem-1', title: 'Same' });
  assert.equal(again.status, 201);
  assert.deepEqual(await again.json(), first, 'the same answer, no new session');
  const other = await create({ requestId: 'idem-1', title: 'Different' });
  assert.equal(other.status, 409);
  assert.equal((await other.json()).error.code, 'AGENT_REQUEST_CONFLICT');
  assert.equal((await list()).filter((x) => x.title === 'Same').length, 1);

  const unknown = await postJson(`${s.base}/api/v1/agents/other/sessions`, {});
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).error.code, 'AGENT_TYPE_UNKNOWN');
});

test('create with resumeSessionId: that id while it has no turns, else a new one', async () => {
  const id = await created({});
  assert.equal(await created({ resumeSessionId: id }), id, 'still empty: resumed');
  assert.equal(await created({ resumeSessionId: id, title: 'Resumed' }), id);
  assert.equal((await state(id)).summary.title, 'Resumed');

  const unknown = sid('never-made');
  const fresh = await created({ resumeSessionId: unknown });
  assert.notEqual(fresh, unknown);
  assert.match(fresh, UUID);
  await assertNotFound(fetch(at(unknown, '/state')), 'the unknown id was not made');

  const r = await post(id, 'prompt', { requestId: 'rp-1', clientNonce: 'rp-1', content: 'hello words:1' });
  assert.equal(r.status, 202);
  await waitState(id, turnDone);
  const next = await created({ resumeSessionId: id });
  assert.notEqual(next, id, 'it has a turn: a new session');
});

test('strict: every session route of an unknown session is 404, and nothing is created', async () => {
  const id = sid('unknown');
  for (const [route, pending] of everyRoute(id)) await assertNotFound(pending, route);
  assert.ok(!(await list()).some((x) => x.ref.sessionId === id));
  await assertNotFound(fetch(at(id, '/state')), 'still unknown after a prompt and a follow-up');
});

test('strict: a deleted session is 404 on every route', async () => {
  const id = await created({ title: 'Doomed' });
  const del = await fetch(`${at(id)}?requestId=del-1`, { method: 'DELETE' });
  assert.equal(del.status, 204);
  for (const [route, pending] of everyRoute(id)) await assertNotFound(pending, route);
  assert.ok(!(await list()).some((x) => x.ref.sessionId === id));
});

test('strict: a created session runs a prompt and shows in the list', async () => {
  const id = await created({ requestId: 'run-1' });
  const r = await post(id, 'prompt', { requestId: 'run-p', clientNonce: 'run-p', content: 'first words words:2' });
  assert.equal(r.status, 202);
  assert.equal((await r.json()).cursor, 1);
  const doc = await waitState(id, turnDone);
  assert.deepEqual(doc.state.messages.map((m) => m.role), ['user', 'assistant']);
  assert.ok(doc.seq > 0);
  const fu = await post(id, 'followup', { requestId: 'run-f:1', clientNonce: 'run-f', content: 'later words:1', clientSeq: 1 });
  assert.equal(fu.status, 202);
  assert.equal((await post(id, 'queue/clear', {})).status, 202);
  assert.equal((await post(id, 'stop', {})).status, 202);
  assert.equal((await post(id, 'interrupt', {})).status, 202);
  assert.equal((await post(id, 'rename', { requestId: 'run-r', title: 'Ran' })).status, 200);

  const top = (await list())[0];
  assert.deepEqual([top.ref.sessionId, top.title, top.status], [id, 'Ran', 'idle'], 'most recently updated first');
  assert.ok(top.updatedAt >= top.createdAt);
});

test('strict: a session made by the SSE protocol exists', async () => {
  const id = sid('sse');
  await s.chat({ sessionId: id, message: 'hello words:1' }).then((r) => r.text());
  const doc = await waitState(id, turnDone);
  assert.equal(doc.state.status, 'idle');
});

test('the control route: nativeSessions reported and switched', async () => {
  assert.equal((await s.control({})).nativeSessions, 'strict');
  const bad = await postJson(`${s.base}/__control`, { nativeSessions: 'loose' });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.field, 'nativeSessions');

  assert.equal((await s.control({ nativeSessions: 'lenient' })).nativeSessions, 'lenient');
  const id = sid('lenient');
  const doc = await state(id);
  assert.deepEqual([doc.seq, doc.state.status], [0, 'idle'], 'lenient: an unknown session reads empty');
  assert.equal((await post(id, 'prompt', { requestId: 'l-1', clientNonce: 'l-1', content: 'hi words:1' })).status, 202, 'lenient: created by its prompt');
  await waitState(id, turnDone);

  assert.equal((await s.control({ nativeSessions: 'strict' })).nativeSessions, 'strict');
  await assertNotFound(fetch(at(sid('again'), '/state')), 'strict again');
  assert.equal((await state(id)).state.messages.length, 2, 'the session made while lenient exists');
});

// The store over a strict server, as over the real one: the built package's `ChatStore` with
// Node's streaming fetch. A session the server does not have shows empty (no error, no
// retries); a new one is created by its first send and followed under the server's id
// (`onSessionChange` tells the host); the list, rename and delete go through this protocol's
// own routes.
const PKG = new URL('../../../pkg/agent_chat_store.js', import.meta.url);
const built = existsSync(PKG);

test('ChatStore over a strict server: created by its first send, listed, renamed, deleted', { skip: !built && 'pkg/ is not built' }, async () => {
  const { ChatStore } = await import(PKG.href);
  const changes = [];
  const store = new ChatStore({
    protocol: 'pi-native', agentType: 'pi', baseUrl: s.base, sessionId: sid('stale'), persistSeq: false,
    onSessionChange: (id) => changes.push(id),
  });
  store.start(); // polled below, never subscribed: a store starts on its first subscribe or action
  const snap = () => store.getSnapshot();
  const until = async (pred, what, ms = 15_000) => {
    const end = Date.now() + ms;
    while (!pred(snap())) {
      if (Date.now() > end) throw new Error(`timed out: ${what}; status ${snap().status}, session ${snap().sessionId}`);
      await sleep(10);
    }
  };
  try {
    await until((x) => x.hydrated, 'the unknown session is opened, empty');
    assert.equal(snap().error, null);
    assert.deepEqual(snap().messages, []);
    const local = store.newSession();
    assert.equal(store.renameSession(local, 'Planned title'), true);
    assert.equal(store.send('hello words:5').kind, 'sent');
    await until((x) => x.sessionId !== local, 'the server named it');
    const named = snap().sessionId;
    assert.match(named, UUID);
    assert.equal(changes.at(-1), named);
    await until((x) => x.status === 'ready' && x.messages.length === 2, 'the turn ran there');
    const doc = await state(named);
    assert.equal(doc.state.messages.length, 2);
    assert.equal((await list()).find((x) => x.ref.sessionId === named)?.title, 'Planned title');

    assert.equal(store.loadSessions(), true);
    await until((x) => x.sessions.loaded && x.sessions.items.some((i) => i.id === named && !i.local), 'listed');
    assert.equal(snap().sessions.archivable, false);
    assert.equal(store.archiveSession(named, true), false);
    assert.equal(store.renameSession(named, 'Renamed'), true);
    await until(() => false === snap().sessions.loading, 'settled');
    await waitFor(async () => (await list()).find((x) => x.ref.sessionId === named)?.title === 'Renamed', 'the server renamed it');
    store.newSession();
    assert.equal(store.deleteSession(named), true);
    await waitFor(async () => !(await list()).some((x) => x.ref.sessionId === named), 'the server deleted it');
    assert.equal((await fetch(at(named, '/state'))).status, 404);
    assert.equal(snap().sessions.error, null);
  } finally {
    store.dispose();
  }
});

async function waitFor(check, what, ms = 10_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out: ${what}`);
    await sleep(50);
  }
}
