// The AI SDK build (`agent-chat-store/ai-sdk`, its own wasm without the pi modes and the replay
// helpers; issue 22), installed from pkg/ as a user installs it: the same store for an AI SDK
// server, and a clear refusal of what it leaves out. The `useChat` scenarios run on its
// `/react` entry in tests/js/use-chat.test.mjs.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { installedPackage } from './installed.mjs';

let full;
let ai;

before(async () => {
  full = await installedPackage('ai-sdk-full');
  ai = await installedPackage('ai-sdk', 'agent-chat-store/ai-sdk');
});

const until = async (pred, what) => {
  for (let i = 0; i < 400; i++) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('timed out: ' + what);
};

/** An AI SDK route handler answering every POST with "Hello"; `caps` is its capabilities route. */
async function server(caps) {
  const seen = [];
  const srv = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method, url: req.url });
    if (req.url.startsWith('/api/capabilities') && caps) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(caps));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' });
    for (const c of [
      { type: 'start', messageId: 'a1' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hello' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'stop' },
    ]) res.write(`data: ${JSON.stringify(c)}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${srv.address().port}`, seen, close: () => srv.close() };
}

const plain = { routes: { chat: '/api/chat', stream: '/api/chat/{sessionId}/stream', catalog: '', turn: '' }, hydrate: false, persist: false, attach: false, persistSeq: false };

test('the AI SDK build exports what the full one does, less the replay helpers', () => {
  const replay = ['replayPiNativeEvents', 'replayPiStream', 'replayUiMessageStream'];
  for (const name of replay) assert.equal(typeof full[name], 'function', `the full build has ${name}`);
  assert.deepEqual(Object.keys(ai).sort(), Object.keys(full).filter((k) => !replay.includes(k)).sort());
});

test('a turn against an AI SDK server is the same in both builds', async () => {
  const srv = await server();
  try {
    const shown = [];
    for (const pkg of [full, ai]) {
      const store = new pkg.ChatStore({ baseUrl: srv.base, sessionId: 'c1', capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true }, ...plain });
      store.send('hi');
      await until(() => store.getSnapshot().status === 'ready' && store.getSnapshot().messages.length === 2, 'the turn');
      shown.push(JSON.parse(JSON.stringify(store.getSnapshot().messages.map(({ role, parts }) => ({ role, parts })))));
      store.dispose();
    }
    assert.deepEqual(shown[1], shown[0]);
    assert.equal(shown[1][1].parts.find((p) => p.type === 'text').text, 'Hello');
  } finally {
    srv.close();
  }
});

test('protocol "pi-native" is a Validation error naming the option, in the AI SDK build only', () => {
  const options = { baseUrl: 'http://127.0.0.1:9', sessionId: 'c1', protocol: 'pi-native', agentType: 'pi', ...plain };
  const store = new full.ChatStore(options);
  store.dispose();
  assert.throws(() => new ai.ChatStore(options), (e) => e.code === 'Validation' && e.field === 'protocol' && /full build/.test(e.message));
});

test('a server that keeps a pi projection is refused: the error names it and sends are refused', async () => {
  const srv = await server({ nativeFollowUp: true, aiSdkOwnsHistory: false });
  try {
    const errors = [];
    const store = new ai.ChatStore({ baseUrl: srv.base, sessionId: 'c1', onError: (e) => errors.push(e), ...plain, routes: { ...plain.routes, capabilities: '/api/capabilities' } });
    store.subscribe(() => {}); // `new ChatStore` does no IO: the first subscribe starts it, as a UI's would.
    await until(() => store.getSnapshot().status === 'error', 'the refusal');
    const snap = store.getSnapshot();
    assert.equal(snap.error.field, 'aiSdkOwnsHistory');
    assert.equal(errors.length, 1);
    const r = store.send('hi');
    assert.equal(r.kind, 'blocked');
    assert.equal(r.reason, 'piUnsupported');
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(srv.seen.filter((s) => s.method === 'POST').length, 0, 'nothing was posted');
    store.dispose();
  } finally {
    srv.close();
  }
});
