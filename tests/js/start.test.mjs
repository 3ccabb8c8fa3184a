// `new ChatStore()` does no IO (issue 40): the store starts when it is first subscribed to or
// asked to act, so a framework may make it during a render it repeats or throws away. What it
// asked for when it was made leaves then, in order. Through the built package (pkg/).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
let pkg;
before(async () => {
  pkg = await import(pathToFileURL(resolve(process.env.ACS_PKG || resolve(root, 'pkg'), 'agent_chat_store.js')).href);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const JSON_CT = { 'content-type': 'application/json' };

/** A fetch that records each request's method and path and answers as an empty server. */
function spy() {
  const calls = [];
  const fetch = async (url, init) => {
    const path = new URL(url).pathname;
    calls.push(`${init.method} ${path}`);
    if (path.endsWith('/chat')) {
      const sse = 'data: {"type":"start","messageId":"a1"}\n\ndata: {"type":"text-start","id":"t"}\n\n'
        + 'data: {"type":"text-delta","id":"t","delta":"pong"}\n\ndata: {"type":"text-end","id":"t"}\n\n'
        + 'data: {"type":"finish"}\n\ndata: [DONE]\n\n';
      return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (path.endsWith('/capabilities')) {
      return new Response('{"nativeFollowUp":false,"aiSdkOwnsHistory":true}', { status: 200, headers: JSON_CT });
    }
    if (init.method === 'GET' && path.endsWith('/stream')) return new Response(null, { status: 204 });
    return new Response('{"messages":[]}', { status: 200, headers: JSON_CT });
  };
  return { calls, fetch };
}

const make = (fetch, extra = {}) =>
  new pkg.ChatStore({ baseUrl: 'http://server.test', sessionId: 's1', fetch, persistSeq: false, ...extra });

test('a store made and read but never subscribed to makes no request, even after its timers would run', async () => {
  const { calls, fetch } = spy();
  const store = make(fetch);
  const s = store.getSnapshot();
  assert.equal(s.status, 'ready');
  assert.deepEqual(s.messages, []);
  assert.equal(s.busy, false);
  assert.equal(s.capabilitiesLoaded, false);
  await sleep(50);
  assert.equal(store.getSnapshot(), s, 'the snapshot did not move');
  assert.deepEqual(calls, []);
  store.dispose();
  await sleep(10);
  assert.deepEqual(calls, [], 'disposed before it started: nothing ever sent');
});

test('the first subscribe starts it: what it asked for when made leaves then, in order', async () => {
  const { calls, fetch } = spy();
  const store = make(fetch);
  await sleep(20);
  assert.deepEqual(calls, []);
  let told = 0;
  const off = store.subscribe(() => told++);
  await sleep(50);
  assert.deepEqual(calls.slice(0, 3), [
    'GET /api/v1/agent/capabilities',
    'GET /api/v1/agent/catalog',
    'GET /api/v1/agent/chat/s1/messages',
  ]);
  const s = store.getSnapshot();
  assert.equal(s.capabilitiesLoaded, true);
  assert.equal(s.hydrated, true);
  assert.ok(told > 0, 'the listener heard the answers');
  // A second subscribe (StrictMode's) starts nothing more.
  const before = calls.length;
  off();
  store.subscribe(() => {});
  store.start();
  await sleep(20);
  assert.equal(calls.length, before);
  store.dispose();
});

test('an action before any subscribe starts the store and works', async () => {
  const { calls, fetch } = spy();
  const store = make(fetch);
  assert.equal(store.send('ping').kind, 'sent');
  for (let i = 0; i < 100 && store.getSnapshot().status !== 'ready'; i++) await sleep(10);
  const s = store.getSnapshot();
  assert.equal(s.status, 'ready');
  assert.deepEqual(s.messages.map((m) => [m.role, m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')]), [
    ['user', 'ping'],
    ['assistant', 'pong'],
  ]);
  // The open's requests went first, then the send's.
  const chat = calls.findIndex((c) => c.endsWith('/chat'));
  assert.ok(chat > 0, calls.join(', '));
  assert.match(calls[0], /capabilities/);
  store.dispose();
});

test('start() is the explicit start; a disposed store that never started stays silent when acted on', async () => {
  const { calls, fetch } = spy();
  const store = make(fetch);
  store.start();
  await sleep(30);
  assert.ok(calls.length >= 2, calls.join(', '));
  store.dispose();

  const quiet = spy();
  const gone = make(quiet.fetch);
  gone.dispose();
  gone.send('hello');
  gone.subscribe(() => {});
  gone.start();
  await sleep(30);
  assert.deepEqual(quiet.calls, []);
});
