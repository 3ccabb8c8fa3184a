import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { postJson, readChunks, sid, startServer } from './helpers.mjs';

let s;
let dir;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'acs-static-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>app</title>');
  await writeFile(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
  s = await startServer(['--tps', '0', '--static', dir, '--fail-followups', '1']);
});
after(async () => {
  await s?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the control route: state, the request log, reset', async () => {
  let state = await (await fetch(`${s.base}/__control`)).json();
  assert.equal(state.failFollowups, 1, 'CLI flags set the starting faults');
  state = await s.control({ followupDelayMs: 5, notFound: ['messages'], cutStreamAfter: 3, cutStreams: 2 });
  assert.equal(state.followupDelayMs, 5);
  assert.deepEqual(state.notFound, ['messages']);
  assert.equal(state.cutStreamsLeft, 2);
  const bad = await postJson(`${s.base}/__control`, { notFound: ['nope'] });
  assert.equal(bad.status, 400);

  state = await s.reset();
  assert.equal(state.failFollowups, 1, 'reset goes back to the startup values');
  assert.equal(state.followupDelayMs, 0);
  assert.deepEqual(state.notFound, []);
  assert.deepEqual(await s.log(), [], 'reset clears the log');

  const id = sid('log');
  await readChunks(await s.chat({ sessionId: id, message: 'logged words:1' }));
  const fu = await s.followUp(id, { message: 'm', clientSeq: 1, clientNonce: 'n' });
  assert.equal(fu.status, 503, 'failFollowups from the CLI');
  const entries = await s.log();
  assert.deepEqual(
    entries.map((e) => [e.method, e.route, e.status, e.aborted]),
    [
      ['POST', 'chat', 200, false],
      ['POST', 'followup', 503, false],
    ],
  );
  assert.equal(entries[0].body.message, 'logged words:1');
  assert.equal(entries[1].path, `/api/v1/agent/chat/${id}/followup`);
  assert.equal(entries[1].sessionId, id);
  assert.ok(Date.parse(entries[0].time) > 0);
  assert.equal((await (await fetch(`${s.base}/__control/log?since=${entries[0].id}`)).json()).entries.length, 1);
});

test('a cut after 0 chunks: the head arrives, the body dies', async () => {
  await s.control({ cutStreamAfter: 0 });
  const id = sid('cut0');
  const res = await s.chat({ sessionId: id, message: 'x words:1' });
  assert.equal(res.status, 200);
  const { chunks, error } = await readChunks(res);
  assert.deepEqual(chunks, []);
  assert.ok(error);
  const rest = await readChunks(await s.resume(id, -1));
  assert.equal(rest.chunks[0].type, 'data-pi-mode');
});

test('CORS: preflight and allowed origins', async () => {
  const pre = await fetch(`${s.base}/api/v1/agent/chat`, {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-extra' },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  assert.match(pre.headers.get('access-control-allow-methods'), /DELETE/);
  assert.equal(pre.headers.get('access-control-allow-headers'), 'content-type,x-extra');
  const res = await s.chat({ sessionId: sid('cors'), message: 'x words:1' });
  assert.match(res.headers.get('access-control-expose-headers'), /x-turn-id/);
  await res.body.cancel();
});

test('static web app with SPA fallback; API 404s stay JSON', async () => {
  const index = await fetch(`${s.base}/`);
  assert.equal(index.status, 200);
  assert.match(index.headers.get('content-type'), /text\/html/);
  assert.match(await index.text(), /<title>app/);
  const deep = await fetch(`${s.base}/sessions/abc`);
  assert.equal(deep.status, 200, 'app routes fall back to index.html');
  assert.match(await deep.text(), /<title>app/);
  const js = await fetch(`${s.base}/assets/app.js`);
  assert.match(js.headers.get('content-type'), /javascript/);
  assert.equal((await fetch(`${s.base}/assets/missing.js`)).status, 404);
  const api = await fetch(`${s.base}/api/v1/agent/nothing`);
  assert.equal(api.status, 404);
  assert.equal((await api.json()).error.code, 'not_found');
});

test('pi sessions refuse PUT messages; DELETE session forgets it', async () => {
  const id = sid('pi-put');
  await readChunks(await s.chat({ sessionId: id, message: 'x words:1' }));
  const put = await postJson(`${s.api}/chat/${id}/messages`, { messages: [] }, 'PUT');
  assert.equal(put.status, 409);
  assert.equal((await fetch(`${s.api}/chat/${id}`, { method: 'DELETE' })).status, 204);
  assert.deepEqual(await s.messages(id), []);
  assert.equal((await fetch(`${s.api}/chat/${id}`, { method: 'DELETE' })).status, 404);
});
