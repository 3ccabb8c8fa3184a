// What the drop-in `useChat` needs of `ChatStore`, through the installed package and a real
// `fetch` against a plain AI SDK route handler on 127.0.0.1 (`POST /api/chat`, a UI message
// stream written event by event): a send's own body keys, headers and metadata, the
// `prepareSendMessagesRequest` hook, `onFinish` after every turn (a stop included),
// `onToolCall`, `setMessages`, and a store that keeps no history on the server.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { installedPackage } from './installed.mjs';
import { createServer } from 'node:http';

let pkg;

before(async () => {
  pkg = await installedPackage('request-options');
});

/**
 * A `useChat` route handler: each POST is answered by `answer(body)`, a list of chunks written
 * 5 ms apart (`hold: true` leaves the stream open after them). Keeps what it was sent.
 */
async function aiSdkServer(answer) {
  const seen = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const body = text ? JSON.parse(text) : undefined;
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    if (req.method !== 'POST' || !req.url.startsWith('/api/chat')) {
      res.writeHead(404).end();
      return;
    }
    const { chunks, hold = false, status = 200 } = answer(body, seen.length);
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: 'boom' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' });
    for (const c of chunks) {
      res.write(`data: ${JSON.stringify(c)}\n\n`);
      await new Promise((r) => setTimeout(r, 5));
    }
    if (!hold) res.end('data: [DONE]\n\n');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, seen, close: () => server.close(), closeAll: () => server.closeAllConnections() };
}

const text = (id, words) => [
  { type: 'start', messageId: id },
  { type: 'text-start', id: 't' },
  ...words.map((delta) => ({ type: 'text-delta', id: 't', delta })),
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: 'stop' },
];

/** The store as the hook makes it for a plain AI SDK server. */
function plainStore(base, extra = {}) {
  return new pkg.ChatStore({
    baseUrl: base,
    sessionId: 'chat-1',
    routes: { chat: '/api/chat', stream: '/api/chat/{sessionId}/stream', catalog: '', turn: '' },
    capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true },
    hydrate: false,
    persist: false,
    attach: false,
    persistSeq: false,
    ...extra,
  });
}

const until = async (pred, what) => {
  for (let i = 0; i < 400; i++) {
    const v = pred();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('timed out: ' + what);
};

test('a send posts its own body keys, headers and metadata over the store options', async () => {
  const srv = await aiSdkServer(() => ({ chunks: text('a1', ['Hel', 'lo']) }));
  const prepared = [];
  const store = plainStore(srv.base, {
    headers: { 'x-store': 's' },
    body: { model: 'default', tenant: 't' },
    prepareSendMessagesRequest: async (req) => {
      prepared.push(req);
      return req.requestMetadata?.replace ? { body: { only: 'this' }, headers: { 'x-prepared': '1' } } : undefined;
    },
  });
  try {
    const r = store.send('hi', [], { body: { model: 'gpt-x', messages: 'nope' }, headers: { 'x-send': '1' }, metadata: { why: 'test' }, messageMetadata: { at: 1 }, id: 'u-1' });
    assert.equal(r.kind, 'sent');
    await until(() => store.getSnapshot().status === 'ready' && srv.seen.length === 1, 'the first turn');
    const first = srv.seen[0];
    assert.equal(first.body.model, 'gpt-x', 'the send over the store');
    assert.equal(first.body.tenant, 't');
    assert.equal(first.body.id, 'chat-1');
    assert.equal(first.body.trigger, 'submit-message');
    assert.equal(first.body.messages.length, 1, 'the history, never the send body\'s');
    assert.deepEqual(first.body.messages[0], { id: 'u-1', role: 'user', metadata: { at: 1 }, parts: [{ type: 'text', text: 'hi' }] });
    assert.equal(first.headers['x-store'], 's');
    assert.equal(first.headers['x-send'], '1');
    // The hook saw the request as the store made it.
    assert.equal(prepared[0].api, `${srv.base}/api/chat`);
    assert.equal(prepared[0].id, 'chat-1');
    assert.deepEqual(prepared[0].requestMetadata, { why: 'test' });
    assert.equal(prepared[0].body.model, 'gpt-x');
    assert.equal(prepared[0].body.messages, undefined);
    assert.equal(prepared[0].messages.length, 1);
    assert.equal(prepared[0].trigger, 'submit-message');
    assert.equal(store.getSnapshot().messages[1].parts[0].text, 'Hello');

    // A hook that replaces the whole body and the headers.
    store.send('again', [], { metadata: { replace: true } });
    await until(() => store.getSnapshot().status === 'ready' && srv.seen.length === 2, 'the second turn');
    assert.deepEqual(srv.seen[1].body, { only: 'this' });
    assert.equal(srv.seen[1].headers['x-prepared'], '1');
    assert.equal(srv.seen[1].headers['x-store'], undefined, 'the hook\'s headers replace them');
    assert.equal(srv.seen.filter((r) => r.method === 'PUT').length, 0, 'persist: false never PUTs');
  } finally {
    store.dispose();
    srv.close();
  }
});

test('onFinish follows every turn with its message, a stop and a failure included', async () => {
  const srv = await aiSdkServer((body, n) => {
    if (n === 2) return { chunks: text('a2', ['par']).slice(0, 3), hold: true };
    if (n === 3) return { status: 500 };
    return { chunks: text(`a${n}`, ['done']) };
  });
  const finishes = [];
  const store = plainStore(srv.base, { onFinish: (e) => finishes.push(e) });
  try {
    store.send('one');
    await until(() => finishes.length === 1, 'the first finish');
    assert.equal(finishes[0].message.id, 'a1');
    assert.equal(finishes[0].message.parts[0].text, 'done');
    assert.equal(finishes[0].messages, store.getSnapshot().messages, 'the snapshot\'s messages');
    assert.deepEqual([finishes[0].isAbort, finishes[0].isDisconnect, finishes[0].isError, finishes[0].finishReason], [false, false, false, 'stop']);
    assert.equal(store.getSnapshot().stopped, false);

    store.send('two');
    await until(() => store.getSnapshot().messages.at(-1)?.parts[0]?.text === 'par', 'the partial answer');
    store.stop();
    await until(() => finishes.length === 2, 'the finish of the stop');
    assert.equal(finishes[1].isAbort, true);
    assert.equal(finishes[1].message.parts[0].text, 'par', 'what came is the message');
    // The snapshot says it too: the last turn ended by a stop, not a failure.
    assert.deepEqual([store.getSnapshot().stopped, store.getSnapshot().status], [true, 'ready']);

    store.send('three');
    await until(() => finishes.length === 3, 'the finish of the failure');
    assert.equal(finishes[2].isError, true);
    assert.equal(finishes[2].message.parts.length, 0, 'nothing answered');
    assert.equal(store.getSnapshot().status, 'error');
    assert.equal(store.getSnapshot().stopped, false, 'a failure is not a stop');
  } finally {
    store.dispose();
    srv.closeAll();
    srv.close();
  }
});

test('onToolCall hears a client tool call, and its addToolOutput continues the turn', async () => {
  const srv = await aiSdkServer((body) => {
    const last = body.messages.at(-1);
    // The model's next step, in the message it continues.
    if (last.role === 'assistant') return { chunks: [{ type: 'start-step' }, ...text('a1', ['You are in ', 'Paris.']).slice(1)] };
    return {
      chunks: [
        { type: 'start', messageId: 'a1' },
        { type: 'start-step' },
        { type: 'tool-input-available', toolCallId: 'c1', toolName: 'getLocation', input: {} },
        { type: 'tool-input-available', toolCallId: 'c2', toolName: 'search', input: { q: 'x' }, providerExecuted: true },
        { type: 'finish-step' },
        { type: 'finish', finishReason: 'tool-calls' },
      ],
    };
  });
  const calls = [];
  const store = plainStore(srv.base, {
    sendAutomaticallyWhen: 'lastAssistantMessageIsCompleteWithToolCalls',
    onToolCall: ({ toolCall }) => {
      calls.push(toolCall);
      // Answered at once, as the AI SDK's docs do it.
      store.addToolOutput({ toolCallId: toolCall.toolCallId, output: 'Paris' });
    },
  });
  try {
    store.send('where am I?');
    await until(() => srv.seen.length === 2 && store.getSnapshot().status === 'ready', 'the continued turn');
    assert.deepEqual(calls, [{ toolCallId: 'c1', toolName: 'getLocation', input: {} }]);
    const answer = store.getSnapshot().messages.at(-1);
    assert.equal(answer.parts.find((p) => p.type === 'tool-getLocation').output, 'Paris');
    assert.equal(answer.parts.at(-1).text, 'You are in Paris.');
  } finally {
    store.dispose();
    srv.close();
  }
});

test('setMessages replaces the messages when idle and refuses bad ones, nothing changed', async () => {
  const srv = await aiSdkServer(() => ({ chunks: text('a9', ['ok']) }));
  const store = plainStore(srv.base);
  try {
    store.setMessages([
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'earlier' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'answer' }] },
    ]);
    const held = store.getSnapshot().messages;
    assert.deepEqual(held.map((m) => m.id), ['u1', 'a1']);
    assert.throws(() => store.setMessages([{ id: 'x', role: 'robot', parts: [] }]), (e) => e.code === 'Validation' && e.field === 'messages');
    assert.throws(() => store.setMessages('nope'), (e) => e.code === 'Validation');
    assert.equal(store.getSnapshot().messages, held, 'nothing changed');
    store.send('next');
    assert.throws(() => store.setMessages([]), (e) => e.code === 'Validation', 'a turn runs');
    await until(() => store.getSnapshot().status === 'ready', 'the turn');
    assert.equal(srv.seen[0].body.messages.length, 3, 'the set messages went with the turn');
  } finally {
    store.dispose();
    srv.close();
  }
});
