// The session list (SPEC §11) through the installed package: `snapshot.sessions` frozen and kept
// while nothing in it changes, the actions' requests through a real `fetch` with streamed
// bodies, `onSessionChange`, and typed errors for bad arguments and refused changes.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { installedPackage } from './installed.mjs';
import { createServer } from 'node:http';

let pkg;

before(async () => {
  pkg = await installedPackage('sessions');
});

/** A list server on 127.0.0.1 keeping `sessions` (most recent first), answering in two chunks. */
async function listServer(sessions, { failPatch = false } = {}) {
  const seen = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const url = new URL(req.url, 'http://x');
    if (url.pathname.includes('/sessions')) seen.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (status, json) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      if (json === undefined) return res.end();
      const text = JSON.stringify(json);
      res.write(text.slice(0, 5));
      setTimeout(() => res.end(text.slice(5)), 3);
    };
    const m = url.pathname.match(/^\/api\/v1\/agent\/sessions(?:\/(.+))?$/);
    if (!m) return send(404, { error: { code: 'not_found', message: 'no route' } });
    if (!m[1]) {
      const limit = Number(url.searchParams.get('limit'));
      const from = Number(url.searchParams.get('cursor') ?? 0);
      const page = sessions.slice(from, from + limit);
      const next = from + limit < sessions.length ? String(from + limit) : undefined;
      return send(200, { sessions: page, nextCursor: next });
    }
    const id = decodeURIComponent(m[1]);
    const i = sessions.findIndex((s) => s.id === id);
    if (i < 0) return send(404, { error: { code: 'session_not_found', message: 'no session' } });
    if (req.method === 'DELETE') {
      sessions.splice(i, 1);
      return send(204);
    }
    if (failPatch) return send(500, { error: { code: 'storage', message: 'disk full' } });
    Object.assign(sessions[i], JSON.parse(body));
    return send(200, { session: sessions[i] });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close() };
}

const until = async (store, pred) => {
  for (let i = 0; i < 400; i++) {
    const s = store.getSnapshot();
    if (pred(s)) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('timed out: ' + JSON.stringify(store.getSnapshot().sessions));
};

const quiet = { capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false }, hydrate: false, persistSeq: false };

test('pages, switches and a new session through the installed package', async () => {
  const all = Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, title: `Chat ${i}`, updatedAt: `2026-12-0${5 - i}T00:00:00Z` }));
  const srv = await listServer(all);
  const changes = [];
  const store = new pkg.ChatStore({ ...quiet, baseUrl: srv.base, sessionId: 's0', sessionPageSize: 2, onSessionChange: (id) => changes.push(id) });
  try {
    const before = store.getSnapshot().sessions;
    assert.ok(Object.isFrozen(before) && Object.isFrozen(before.items));
    assert.deepEqual(before.items.map((i) => [i.id, i.local]), [['s0', true]]);
    assert.equal(store.loadSessions(), true);
    let s = await until(store, (x) => x.sessions.loaded);
    assert.deepEqual(s.sessions.items.map((i) => i.id), ['s0', 's1']);
    assert.equal(s.sessions.hasMore, true);
    assert.equal(s.sessions.error, null);
    assert.ok(Object.isFrozen(s.sessions.items[0]));

    // Something else changes: the list keeps its object.
    store.setDraft('typing');
    assert.equal(store.getSnapshot().sessions, s.sessions);

    assert.equal(store.loadMoreSessions(), true);
    assert.equal(store.loadMoreSessions(), false, 'one page request at a time');
    s = await until(store, (x) => x.sessions.items.length === 4 && !x.sessions.loading);
    store.loadMoreSessions();
    s = await until(store, (x) => !x.sessions.hasMore && !x.sessions.loading);
    assert.deepEqual(s.sessions.items.map((i) => i.id), ['s0', 's1', 's2', 's3', 's4']);
    assert.deepEqual(srv.seen.slice(0, 3), [
      'GET /api/v1/agent/sessions?limit=2&archived=false',
      'GET /api/v1/agent/sessions?cursor=2&limit=2&archived=false',
      'GET /api/v1/agent/sessions?cursor=4&limit=2&archived=false',
    ]);

    store.switchSession('s3');
    const id = store.newSession();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(changes, ['s3', id]);
    s = store.getSnapshot();
    assert.equal(s.sessionId, id);
    assert.deepEqual(s.sessions.items[0], { id, running: false, archived: false, local: true });

    assert.equal(store.renameSession('s2', 'Renamed'), true);
    assert.equal(store.getSnapshot().sessions.items.find((i) => i.id === 's2').title, 'Renamed', 'at once');
    assert.equal(store.deleteSession('s4'), true);
    assert.ok(!store.getSnapshot().sessions.items.some((i) => i.id === 's4'), 'at once');
    await until(store, () => srv.seen.length >= 5 && !all.some((x) => x.id === 's4') && all[2].title === 'Renamed');
    assert.deepEqual(srv.seen.slice(3).sort(), ['DELETE /api/v1/agent/sessions/s4', 'PATCH /api/v1/agent/sessions/s2']);
  } finally {
    store.dispose();
    srv.close();
  }
});

test('a refused rename puts the title back and the error is a ChatStoreError', async () => {
  const srv = await listServer([{ id: 'a', title: 'Old' }, { id: 'b' }], { failPatch: true });
  const errors = [];
  const store = new pkg.ChatStore({ ...quiet, baseUrl: srv.base, sessionId: 'a', onError: (e) => errors.push(e) });
  try {
    store.loadSessions();
    await until(store, (x) => x.sessions.loaded);
    store.renameSession('a', 'New');
    const s = await until(store, (x) => x.sessions.error !== null);
    assert.equal(s.sessions.items.find((i) => i.id === 'a').title, 'Old');
    assert.equal(s.sessions.error.name, 'ChatStoreError');
    assert.equal(s.sessions.error.code, 'Server');
    assert.equal(s.sessions.error.status, 500);
    assert.equal(errors.length, 1);
  } finally {
    store.dispose();
    srv.close();
  }
});

test('a server without a list, and bad arguments', async () => {
  const srv = await listServer([]);
  const store = new pkg.ChatStore({ ...quiet, baseUrl: srv.base, sessionId: 'a', routes: { sessions: '/nope' } });
  try {
    store.loadSessions();
    const s = await until(store, (x) => !x.sessions.available);
    assert.equal(s.sessions.error, null);
    assert.equal(store.loadSessions(), false);
    for (const call of [
      () => store.renameSession(1, 'x'),
      () => store.renameSession('a', null),
      () => store.archiveSession('a', 'yes'),
      () => store.deleteSession({}),
      () => store.loadSessions({ archived: 1 }),
      () => store.loadMoreSessions(5),
    ]) {
      assert.throws(call, (e) => e.name === 'ChatStoreError' && e.code === 'Validation');
    }
    assert.throws(() => new pkg.ChatStore({ sessionId: 'x', sessionPageSize: -1 }), (e) => e.code === 'Validation');
    assert.throws(() => new pkg.ChatStore({ sessionId: 'x', onSessionChange: 3 }), (e) => e.code === 'Validation');
  } finally {
    store.dispose();
    srv.close();
  }
});
