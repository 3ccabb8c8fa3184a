// Hostile input through the built package (pkg/agent_chat_store.js, the release wasm): what a broken or
// malicious server can send must reach JS as typed errors and plain frozen data, never as a
// wasm panic (`RuntimeError: unreachable`), a polluted prototype, or a store that stops
// working. After each input a normal turn must stream and render.
// ACS_PKG=dir runs it against another build of the package.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
const pkgDir = process.env.ACS_PKG || resolve(root, 'pkg');
let pkg;

// Anything thrown out of a fetch task or a timer (a wasm trap among them) lands here.
const stray = [];
const onStray = (e) => stray.push(e);
before(async () => {
  pkg = await import(pathToFileURL(resolve(pkgDir, 'agent_chat_store.js')).href);
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);
});
after(() => {
  process.off('uncaughtException', onStray);
  process.off('unhandledRejection', onStray);
});
afterEach(() => {
  assert.deepEqual(stray.map(String), [], 'nothing escaped to the process (no wasm panic)');
  assert.equal({}.polluted, undefined, 'Object.prototype untouched');
  assert.equal(Object.prototype.polluted, undefined);
});

const sse = (o) => `data: ${typeof o === 'string' ? o : JSON.stringify(o)}\n\n`;
const enc = (s) => (typeof s === 'string' ? new TextEncoder().encode(s) : s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A fetch answering from `routes(path, init, n)` (n: how many times that path was asked):
 * `{status, headers, body: [chunks…], hang}`; chunks are strings or bytes, streamed one per
 * read; `hang: true` leaves the body open forever (until the request is aborted, as a real
 * fetch does).
 */
function serverFetch(routes) {
  const calls = [];
  const count = new Map();
  const fetch = async (url, init) => {
    const path = new URL(url).pathname;
    const n = (count.get(path) || 0) + 1;
    count.set(path, n);
    calls.push({ url, path, method: init.method, body: init.body && JSON.parse(init.body) });
    const r = routes(path, init, n) || { status: 404, body: [] };
    const chunks = [...(Array.isArray(r.body) ? r.body : [r.body ?? ''])];
    const signal = init.signal;
    const stream = new ReadableStream({
      start(c) {
        signal?.addEventListener('abort', () => {
          try { c.error(new DOMException('aborted', 'AbortError')); } catch {}
        });
      },
      async pull(c) {
        const next = chunks.shift();
        if (next === undefined) {
          if (r.hang) return new Promise(() => {});
          return c.close();
        }
        await sleep(1);
        c.enqueue(enc(next));
      },
    });
    return new Response(r.status === 204 ? null : stream, { status: r.status ?? 200, headers: r.headers || {} });
  };
  return { fetch, calls };
}

const SSE = { 'content-type': 'text/event-stream' };
const JSON_CT = { 'content-type': 'application/json' };

const until = async (store, pred, what = '') => {
  for (let i = 0; i < 1000; i++) {
    const s = store.getSnapshot();
    if (pred(s)) return s;
    await sleep(5);
  }
  throw new Error(`timed out ${what}: ${JSON.stringify(store.getSnapshot()).slice(0, 2000)}`);
};

const uiTurn = (id, text) => [
  sse({ type: 'start', messageId: id }),
  sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: text }),
  sse({ type: 'text-end', id: 't' }) + sse({ type: 'finish', finishReason: 'stop' }) + 'data: [DONE]\n\n',
];

/**
 * A store on an AI SDK server (no follow-ups, client-owned history) whose chat route answers
 * with `chat(n)` for the n-th turn, turns after `firstNormal` answering normally; other
 * routes from `extra`.
 */
function makeStore({ chat, extra = () => undefined, options = {} }) {
  const { fetch, calls } = serverFetch((path, init, n) => {
    const e = extra(path, init, n);
    if (e) return e;
    if (path.endsWith('/capabilities')) return { status: 200, headers: JSON_CT, body: '{"nativeFollowUp":false,"aiSdkOwnsHistory":true}' };
    if (path.endsWith('/catalog')) return { status: 404, body: '' };
    if (path.endsWith('/messages')) return init.method === 'PUT' ? { status: 204 } : { status: 200, headers: JSON_CT, body: '{"messages":[]}' };
    if (path.endsWith('/chat')) return chat(n) || { status: 200, headers: SSE, body: uiTurn(`ok-${n}`, 'pong') };
  });
  const errors = [];
  const events = [];
  const data = [];
  const store = new pkg.ChatStore({
    baseUrl: 'http://server.test', sessionId: 's1', fetch,
    onError: (e) => errors.push(e), onEvent: (e) => events.push(e), onData: (d) => data.push(d),
    ...options,
  });
  store.subscribe(() => {}); // `new ChatStore` does no IO: the first subscribe starts it, as a UI's would.
  return { store, calls, errors, events, data };
}

test('files given to send become file parts and the chat POST carries them', async () => {
  const { store, calls } = makeStore({ chat: () => undefined });
  await until(store, (s) => s.capabilitiesLoaded, 'for the capabilities');
  const files = [
    { mediaType: 'text/plain', url: 'data:,hello', filename: 'a.txt', extra: 'ignored' },
    { mediaType: 'image/png', url: 'https://x.test/b.png', filename: null },
  ];
  assert.equal(store.send('look', files).kind, 'sent');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2, 'for the turn');
  assert.deepEqual(s.messages[0].parts.filter((p) => p.type === 'file'), [
    { type: 'file', mediaType: 'text/plain', filename: 'a.txt', url: 'data:,hello' },
    { type: 'file', mediaType: 'image/png', url: 'https://x.test/b.png' },
  ]);
  const post = calls.find((c) => c.path.endsWith('/chat'));
  const sent = post.body.messages.at(-1).parts.filter((p) => p.type === 'file');
  assert.deepEqual(sent.map((p) => p.url), ['data:,hello', 'https://x.test/b.png']);
  store.dispose();
});

test('switching back to a session whose message has the id and position of the other one shows its own text', async () => {
  // Found by review: the snapshot's part cache took message `w` of one session for `w` of the
  // other, showing "ab" for "bb", or trapping (wasm unreachable) when the old length fell
  // inside a multi-byte character.
  for (const textB of ['bb', 'é', 'a tail']) {
    const texts = { A: 'a', B: textB };
    const pending = [];
    const fetch = async (url, init = {}) => {
      const u = new URL(String(url));
      if ((init.method ?? 'GET') === 'GET' && u.pathname.endsWith('/messages')) {
        const sid = u.pathname.includes('/A/') ? 'A' : 'B';
        const body = JSON.stringify({ messages: [{ id: 'w', role: 'assistant', parts: [{ type: 'text', text: texts[sid] }] }] });
        return new Promise((res) => pending.push(() => res(new Response(body, { status: 200, headers: JSON_CT }))));
      }
      return new Response('{}', { status: 200, headers: JSON_CT });
    };
    const release = async () => { while (pending.length) pending.shift()(); await sleep(5); };
    const store = new pkg.ChatStore({
      sessionId: 'A', baseUrl: 'http://x.test', hydrate: true, fetch,
      capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true },
    });
    store.subscribe(() => {}); // `new ChatStore` does no IO: the first subscribe starts it, as a UI's would.
    const shown = () => store.getSnapshot().messages.map((m) => m.parts[0]?.text);
    await sleep(5); await release();
    assert.deepEqual(shown(), ['a']);
    store.switchSession('B'); await sleep(5); await release();
    assert.deepEqual(shown(), [textB]);
    store.switchSession('A'); await sleep(5); shown(); await release();
    assert.deepEqual(shown(), ['a']);
    store.switchSession('B'); await sleep(5);
    assert.deepEqual(shown(), [textB], 'the parked history of B, before its reload');
    await release();
    assert.deepEqual(shown(), [textB]);
    store.dispose();
  }
});

/** A following normal turn streams and renders; the store is usable. */
async function aNormalTurnWorks(store) {
  await until(store, (s) => !['submitted', 'streaming'].includes(s.status), 'for the store to settle');
  const before = store.getSnapshot().messages.length;
  const r = store.send('ping');
  assert.equal(r.kind, 'sent', JSON.stringify(r));
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === before + 2, 'for the normal turn');
  assert.equal(s.messages.at(-2).parts[0].text, 'ping');
  assert.equal(s.messages.at(-1).parts[0].text, 'pong');
  assert.ok(Object.isFrozen(s) && Object.isFrozen(s.messages.at(-1)));
}

test('invalid UTF-8 in the stream: U+FFFD in the text, a typed error for the unreadable chunk', async () => {
  const bytes = (...parts) => Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...new TextEncoder().encode(p)] : p)));
  const delta = bytes('data: {"type":"text-delta","id":"t","delta":"A', [0x80, 0xe2, 0x82, 0xc0, 0xaf, 0xed, 0xa0, 0x80], 'B"}\n\n');
  const bad = bytes('data: ', [0xff, 0xfe], '{"type":"text-delta"}\n\n');
  // Every byte its own network chunk: each multi-byte sequence is cut.
  const body = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }), ...[...delta, ...bad].map((b) => Uint8Array.of(b)),
    sse({ type: 'text-end', id: 't' }) + 'data: [DONE]\n\n'];
  const { store, errors } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body } });
  await until(store, (s) => s.capabilitiesLoaded);
  store.send('hello');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  const text = s.messages[1].parts[0].text;
  assert.match(text, /^A\uFFFD+B$/);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'Protocol');
  assert.ok(errors[0] instanceof Error);
  await aNormalTurnWorks(store);
  store.dispose();
});

test('a character split between two deltas (lone surrogate escapes) is one character in the snapshot and the next POST', async () => {
  // JSON.stringify writes half a UTF-16 pair as an escape; the `ai` package joins the halves.
  const delta = (d) => sse(`{"type":"text-delta","id":"t","delta":"${d}"}`);
  const body = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }) + delta('smile \\ud83d'),
    delta('\\ude00 and'), delta(' half \\uD83D'), delta('\\ude00!'), delta(' \\udc00') + sse({ type: 'text-end', id: 't' }) + 'data: [DONE]\n\n'];
  const { store, errors, calls } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body } });
  await until(store, (s) => s.capabilitiesLoaded);
  // Every snapshot while it streams (one network chunk each): the text as the `ai` package
  // holds it after each delta, a half alone until its other half comes; the later ones are
  // the previous text plus what grew, both halves crossing into JS on their own.
  const texts = [];
  const unsub = store.subscribe(() => {
    const m = store.getSnapshot().messages[1];
    if (m?.parts[0]?.text && texts.at(-1) !== m.parts[0].text) texts.push(m.parts[0].text);
  });
  store.send('hello');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  unsub();
  const full = 'smile \ud83d\ude00 and half \ud83d\ude00! \udc00';
  assert.deepEqual(texts, [
    'smile \ud83d',
    'smile \ud83d\ude00 and',
    'smile \ud83d\ude00 and half \ud83d',
    'smile \ud83d\ude00 and half \ud83d\ude00!',
    full,
  ]);
  assert.equal(s.messages[1].parts[0].text, full);
  assert.equal(full.slice(6, 8), '😀');
  assert.deepEqual(errors, []);
  store.send('again');
  await until(store, (s) => s.status === 'ready' && s.messages.length === 4);
  const post = calls.filter((c) => c.path.endsWith('/chat'))[1];
  assert.equal(post.body.messages[1].parts[0].text, 'smile 😀 and half 😀! \udc00');
  store.dispose();
});

test('sendAutomaticallyWhen as useChat takes it: a promise is awaited, never asked after a failed turn; clearError', async () => {
  const toolTurn = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'start-step' }),
    sse({ type: 'tool-input-available', toolCallId: 'c1', toolName: 'weather', input: {} }) + sse({ type: 'finish-step' }) + sse({ type: 'finish' }) + 'data: [DONE]\n\n'];
  const chats = (calls) => calls.filter((c) => c.path.endsWith('/chat')).length;
  // A promise of false is no: one POST (its truthiness, a Promise object, would have looped).
  let asked = 0;
  let answers = [false];
  const run = async (chat) => {
    asked = 0;
    const t = makeStore({ chat, options: { sendAutomaticallyWhen: () => { asked++; return Promise.resolve(answers.shift() ?? false); } } });
    await until(t.store, (s) => s.capabilitiesLoaded);
    t.store.send('weather?');
    await until(t.store, (s) => s.status !== 'submitted' && s.status !== 'streaming' && asked > 0);
    await sleep(20);
    return t;
  };
  let t = await run((n) => n === 1 && { status: 200, headers: SSE, body: toolTurn });
  assert.equal(chats(t.calls), 1);
  assert.equal(t.store.getSnapshot().status, 'ready');
  t.store.dispose();
  // A promise of true continues the conversation once it settles.
  answers = [true, false];
  t = await run((n) => n === 1 && { status: 200, headers: SSE, body: toolTurn });
  await until(t.store, (s) => s.status === 'ready' && s.messages.length === 2 && chats(t.calls) === 2);
  assert.equal(t.calls.filter((c) => c.path.endsWith('/chat'))[1].body.trigger, 'submit-message');
  t.store.dispose();
  // After a turn that failed (an `error` chunk), the predicate is not asked at all.
  answers = [true, true];
  const failed = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: 'x' }),
    sse({ type: 'error', errorText: 'bad' }) + sse({ type: 'text-delta', id: 't', delta: 'y' })];
  const f = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body: failed }, options: { sendAutomaticallyWhen: () => { asked++; return true; } } });
  asked = 0;
  await until(f.store, (s) => s.capabilitiesLoaded);
  f.store.send('hi');
  const s = await until(f.store, (s) => s.status === 'error');
  await sleep(20);
  assert.equal(asked, 0);
  assert.equal(chats(f.calls), 1);
  assert.equal(s.error.message, 'bad');
  assert.equal(s.messages[1].parts.find((p) => p.type === 'text').text, 'x', 'nothing after the error chunk');
  f.store.clearError();
  const cleared = f.store.getSnapshot();
  assert.equal(cleared.status, 'ready');
  assert.equal(cleared.error, null);
  assert.equal(cleared.messages, s.messages, 'the messages are the same objects');
  f.store.dispose();
});

test('a sendAutomaticallyWhen promise that settles after a session switch continues nothing (found by review)', async () => {
  const toolTurn = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'start-step' }),
    sse({ type: 'tool-input-available', toolCallId: 'c1', toolName: 'weather', input: {} }) + sse({ type: 'finish-step' }) + sse({ type: 'finish' }) + 'data: [DONE]\n\n'];
  let resolveIt;
  const t = makeStore({
    chat: (n) => n === 1 && { status: 200, headers: SSE, body: toolTurn },
    extra: (path, init) => path.includes('/s2/messages') && init.method === 'GET' && { status: 200, headers: JSON_CT,
      body: JSON.stringify({ messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'q' }] }, { id: 'b1', role: 'assistant', parts: [{ type: 'text', text: 'other session answer' }] }] }) },
    options: { sendAutomaticallyWhen: () => new Promise((r) => { resolveIt = r; }) },
  });
  await until(t.store, (s) => s.capabilitiesLoaded);
  t.store.send('weather?');
  await until(t.store, (s) => s.status === 'ready' && s.messages.length === 2 && resolveIt);
  t.store.switchSession('s2');
  await until(t.store, (s) => s.sessionId === 's2' && s.hydrated && s.messages.length === 2);
  resolveIt(true); // the answer about s1's messages
  await sleep(50);
  const posts = t.calls.filter((c) => c.path.endsWith('/chat')).map((c) => c.body.sessionId);
  assert.deepEqual(posts, ['s1'], 'no POST for s2 from s1\'s predicate');
  t.store.dispose();
});

test('a tool input key holding a lone surrogate stays one across snapshots (found by review)', async () => {
  const d = (x) => sse(JSON.stringify({ type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: x }));
  const body = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'tool-input-start', toolCallId: 'c1', toolName: 'x' }),
    d('{"\\ud83d": {"a": 1}, "b": 1'), d('2, "c": 3'), d('}') + sse({ type: 'finish' }) + 'data: [DONE]\n\n'];
  const { store, errors } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body } });
  await until(store, (s) => s.capabilitiesLoaded);
  const seen = [];
  const unsub = store.subscribe(() => {
    const p = store.getSnapshot().messages[1]?.parts.find((p) => p.type === 'tool-x');
    if (p?.input) seen.push(Object.entries(p.input).map(([k, v]) => [[...k].map((c) => c.codePointAt(0).toString(16)).join('+'), v]));
  });
  store.send('go');
  await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  unsub();
  const input = store.getSnapshot().messages[1].parts.find((p) => p.type === 'tool-x').input;
  assert.deepEqual(Object.keys(input).sort(), ['\ud83d', 'b', 'c'].sort());
  assert.deepEqual([input.b, input.c], [12, 3]);
  for (const snap of seen) assert.ok(snap.every(([k]) => !k.includes('10f83d')), JSON.stringify(snap));
  assert.deepEqual(input['\ud83d'], { a: 1 });
  assert.deepEqual(errors, []);
  store.dispose();
});

test('a 10 MB single event over maxEventBytes: a Protocol error, the history kept, the store goes on', async () => {
  const big = 'data: {"type":"text-delta","id":"t","delta":"' + 'x'.repeat(10_000_000) + '"}\n\n';
  const pieces = [];
  for (let i = 0; i < big.length; i += 65536) pieces.push(big.slice(i, i + 65536));
  const body = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: 'Hi' }),
    ...pieces, sse({ type: 'text-delta', id: 't', delta: ' there' }) + sse({ type: 'text-end', id: 't' }) + 'data: [DONE]\n\n'];
  const { store, errors } = makeStore({
    chat: (n) => n === 2 && { status: 200, headers: SSE, body },
    options: { limits: { maxEventBytes: 8 * 1024 * 1024 } },
  });
  await until(store, (s) => s.capabilitiesLoaded);
  await aNormalTurnWorks(store);
  store.send('tell me everything');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 4, 'for the big turn');
  assert.deepEqual(s.messages.map((m) => m.parts[0].text), ['ping', 'pong', 'tell me everything', 'Hi there']);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'Protocol');
  assert.match(errors[0].message, /larger than 8388608 bytes/);
  await aNormalTurnWorks(store);
  store.dispose();
});

test('deeply nested JSON (100,000 `[`) in a chunk: an error, no stack overflow, the store goes on', async () => {
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const body = [sse(deep), sse('{"type":"data-x","data":' + deep + '}'), ...uiTurn('a1', 'fine')];
  const { store, errors } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body } });
  await until(store, (s) => s.capabilitiesLoaded);
  store.send('hello');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  assert.equal(s.messages[1].parts[0].text, 'fine');
  assert.deepEqual(errors.map((e) => e.code), ['Protocol', 'Protocol']);
  await aNormalTurnWorks(store);
  store.dispose();
});

test('deeply nested JSON through replayUiMessageStream and replayPiStream: an error, then they work', () => {
  const deepText = '['.repeat(100_000) + ']'.repeat(100_000);
  const deep = JSON.parse(deepText); // V8 parses it without recursion
  const ok = [{ type: 'start', messageId: 'm' }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'ok' }, { type: 'text-end', id: 't' }];
  const outcome = (f) => {
    try { return { value: f() }; } catch (e) { return { thrown: e }; }
  };
  for (const chunks of [[{ type: 'data-x', data: deep }], [...ok, { type: 'data-x', data: deep }]]) {
    const r = outcome(() => pkg.replayUiMessageStream(chunks));
    assert.ok(r.thrown || r.value.error, 'an error either way');
    if (r.thrown) {
      assert.ok(r.thrown instanceof Error);
      assert.ok(!(r.thrown instanceof WebAssembly.RuntimeError), `a wasm trap: ${r.thrown}`);
    }
    const p = outcome(() => pkg.replayPiStream([{ type: 'data-pi-tool-result', data: { seq: 1, messageId: 'm', toolCallId: 'c', output: deep } }]));
    if (p.thrown) assert.ok(!(p.thrown instanceof WebAssembly.RuntimeError), `a wasm trap: ${p.thrown}`);
  }
  // Deep, but as deep as the JSON reader takes: the strict reader scans it without recursing
  // past the stack.
  const d100 = JSON.parse('['.repeat(100) + ']'.repeat(100));
  assert.equal(pkg.replayUiMessageStream([...ok, { type: 'data-x', data: d100 }]).error, undefined);
  // Both helpers still work afterwards.
  assert.equal(pkg.replayUiMessageStream(ok).message.parts[0].text, 'ok');
  const pi = pkg.replayPiStream([
    { type: 'data-pi-message-start', data: { seq: 1, messageId: 'a', role: 'assistant' } },
    { type: 'data-pi-text-delta', data: { seq: 2, messageId: 'a', partId: '0', delta: 'ok' } },
  ]);
  assert.equal(pi.messages[0].parts[0].text, 'ok');
});

test('__proto__ / constructor / prototype keys stay plain data everywhere and pollute nothing', async () => {
  const hostileText = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true},"ok":1}';
  const raw = (o) => JSON.stringify(o).replaceAll('"HOSTILE"', hostileText);
  const body = [
    `data: ${raw({ type: 'start', messageId: 'a1', messageMetadata: 'HOSTILE' })}\n\n`,
    `data: ${raw({ type: 'data-weather', id: 'w', data: 'HOSTILE' })}\n\n`,
    `data: ${raw({ type: 'data-note', data: 'HOSTILE', transient: true })}\n\n`,
    `data: ${raw({ type: 'tool-input-start', toolCallId: 'c', toolName: 'x' })}\n\n`,
    `data: ${raw({ type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"__proto__":{"polluted":true},"a":1' })}\n\n`,
    `data: ${raw({ type: 'tool-input-available', toolCallId: 'c', toolName: 'x', input: 'HOSTILE' })}\n\n`,
    `data: ${raw({ type: 'tool-output-available', toolCallId: 'c', output: 'HOSTILE' })}\n\n`,
    `data: ${raw({ type: 'message-metadata', messageMetadata: { constructor: { prototype: { polluted: true } } } })}\n\n`,
    `data: ${raw({ type: 'finish' })}\n\ndata: [DONE]\n\n`,
  ];
  const caps = '{"__proto__":{"nativeFollowUp":true,"polluted":true},"constructor":{"prototype":{"polluted":true}},"aiSdkOwnsHistory":true}';
  const catalog = `{"tools":[{"name":"__proto__","ui":{"__proto__":{"rendererId":"evil"}}},{"name":"x","inputSchema":${hostileText},"ui":{"rendererId":"weather"}}]}`;
  const history = `{"messages":[{"id":"__proto__","role":"user","metadata":${hostileText},"parts":[{"type":"text","text":"old"},{"type":"data-x","data":${hostileText}}]}]}`;
  const { store, data, errors } = makeStore({
    chat: (n) => n === 1 && { status: 200, headers: SSE, body },
    extra: (path, init) => {
      if (path.endsWith('/capabilities')) return { status: 200, headers: JSON_CT, body: caps };
      if (path.endsWith('/catalog')) return { status: 200, headers: JSON_CT, body: catalog };
      if (path.endsWith('/messages') && init.method === 'GET') return { status: 200, headers: JSON_CT, body: history };
    },
  });
  const loaded = await until(store, (s) => s.capabilitiesLoaded && s.hydrated && s.tools.length === 2);
  assert.equal(loaded.capabilities.nativeFollowUp, false, 'a __proto__ key is not the field');
  assert.equal(Object.getPrototypeOf(loaded.capabilities), Object.prototype);
  assert.equal(loaded.tools[0].name, '__proto__');
  assert.equal(Object.getPrototypeOf(loaded.tools[0]), Object.prototype);
  const hist = loaded.messages[0];
  assert.equal(hist.id, '__proto__');
  assert.ok(Object.hasOwn(hist.metadata, '__proto__'));
  assert.equal(Object.getPrototypeOf(hist.metadata), Object.prototype);
  assert.equal(hist.metadata.polluted, undefined);

  store.send('hello');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 3);
  assert.deepEqual(errors, []);
  const m = s.messages[2];
  const plain = (o, what, frozen = true) => {
    assert.equal(Object.getPrototypeOf(o), Object.prototype, `${what} keeps Object.prototype`);
    assert.ok(Object.hasOwn(o, '__proto__'), `${what}: __proto__ is an own data key`);
    assert.equal(o.polluted, undefined, `${what} inherits nothing`);
    assert.deepEqual(Object.getOwnPropertyDescriptor(o, '__proto__').value, { polluted: true });
    assert.equal(o.constructor.prototype.polluted, true, `${what}: constructor is plain data`);
    if (frozen) assert.ok(Object.isFrozen(o), `${what} is frozen`);
  };
  plain(m.metadata, 'metadata');
  plain(m.parts.find((p) => p.type === 'data-weather').data, 'data part');
  const tool = m.parts.find((p) => p.type === 'tool-x');
  plain(tool.input, 'tool input');
  plain(tool.output, 'tool output');
  // The tool part's resolved `ui` came from the catalog entry named `x`, not a prototype.
  assert.equal(tool.ui.rendererId, 'weather');
  // onData got both data chunks as plain objects.
  assert.equal(data.length, 2);
  for (const d of data) plain(d.data, 'onData', false);
  assert.equal({}.polluted, undefined);
  await aNormalTurnWorks(store);
  store.dispose();
});

test('__proto__ keys through the pure helpers: rejected by the strict reader, plain data in pi replays', () => {
  const hostile = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
  const ui = pkg.replayUiMessageStream([{ type: 'start', messageId: 'm' }, { type: 'data-x', data: hostile }]);
  assert.match(ui.error.message, /__proto__/, 'the ai package refuses such chunks');
  const pi = pkg.replayPiStream([
    { type: 'data-pi-message-start', data: { seq: 1, messageId: 'a', role: 'assistant' } },
    { type: 'data-pi-tool-call-start', data: { seq: 2, messageId: 'a', toolCallId: 'c', toolName: 't' } },
    { type: 'data-pi-tool-result', data: { seq: 3, messageId: 'a', toolCallId: 'c', output: hostile, details: hostile } },
  ]);
  const out = pi.messages[0].parts[0].output;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(Object.hasOwn(out, '__proto__'));
  assert.equal(out.polluted, undefined);
});

test('a never-ending silent stream: dropped after streamIdleTimeoutMs and resumed', async () => {
  const head = sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: 'Hel' });
  const resumed = [sse({ type: 'start', messageId: 'a1' }) + sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: 'Hel' }),
    sse({ type: 'text-delta', id: 't', delta: 'lo' }) + sse({ type: 'text-end', id: 't' }) + 'data: [DONE]\n\n'];
  // The stream route has a turn only once one was sent (before, a 204: nothing runs, which is
  // what the store's ask on opening the session hears).
  let sent = false;
  const { store, calls, events } = makeStore({
    chat: (n) => n === 1 && ((sent = true), { status: 200, headers: SSE, body: [head], hang: true }),
    extra: (path) => path.endsWith('/stream') && (sent ? { status: 200, headers: SSE, body: resumed } : { status: 204, body: [] }),
    options: { streamIdleTimeoutMs: 150, resumeDelayMs: 10 },
  });
  await until(store, (s) => s.capabilitiesLoaded);
  store.send('hello');
  await until(store, (s) => s.messages[1]?.parts[0]?.text === 'Hel', 'for the first delta');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2, 'for the resume');
  assert.equal(s.messages[1].parts[0].text, 'Hello');
  const resume = calls.filter((c) => c.path.endsWith('/stream')).at(-1);
  assert.match(resume.url, /cursor=2$/);
  assert.ok(events.some((e) => e.type === 'diagnostic' && /resuming/.test(e.message)));
  await aNormalTurnWorks(store);
  store.dispose();
});

test('a server answering HTML instead of SSE: a Protocol error, the store stays usable', async () => {
  const page = '<!doctype html><html><head><title>Sign in</title></head><body><script>alert(1)</script></body></html>';
  const { store, errors } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: [page] } });
  await until(store, (s) => s.capabilitiesLoaded);
  store.send('hello');
  const s = await until(store, (s) => s.status === 'error');
  assert.equal(s.error.code, 'Protocol');
  assert.ok(s.error instanceof Error);
  assert.equal(errors[0].code, 'Protocol');
  assert.equal(s.messages.length, 1, 'the message is kept');
  assert.ok(!JSON.stringify(s).includes('<script>'), 'nothing of the page reaches the snapshot');
  await aNormalTurnWorks(store);
  store.dispose();
});

test('10,000 unknown chunk types: diagnostics, the newest 32 in losses, still fast', async () => {
  let unknown = '';
  for (let i = 0; i < 10_000; i++) unknown += sse({ type: `future-type-${i}`, payload: 'x'.repeat(64) });
  const pieces = [];
  for (let i = 0; i < unknown.length; i += 16384) pieces.push(unknown.slice(i, i + 16384));
  const { store, events } = makeStore({ chat: (n) => n === 1 && { status: 200, headers: SSE, body: [...pieces, ...uiTurn('a1', 'answer')] } });
  await until(store, (s) => s.capabilitiesLoaded);
  const t0 = performance.now();
  store.send('hello');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  const took = performance.now() - t0;
  assert.ok(took < 5000, `${took} ms`);
  assert.equal(events.filter((e) => e.type === 'diagnostic' && e.message.startsWith('unknown chunk type')).length, 10_000);
  assert.equal(s.messages[1].parts.length, 1);
  assert.equal(s.messages[1].parts[0].text, 'answer');
  // The snapshot says what was skipped, the newest 32 of them only.
  assert.equal(s.losses.length, 32);
  assert.deepEqual(new Set(s.losses.map((l) => l.code)), new Set(['UnknownChunk']));
  assert.match(s.losses.at(-1).message, /future-type-9999/);
  assert.ok(JSON.stringify({ ...s, losses: [] }).length < 2000, 'the snapshot holds none of them');
  await aNormalTurnWorks(store);
  store.dispose();
});

test('malformed capabilities, history and catalog bodies: defaults, the store works', async () => {
  const bodies = ['', 'null', '[]', '{', '"text"', '<html>x</html>', '{"messages":"x","tools":"x","nativeFollowUp":"yes"}',
    '{"messages":[1,{"id":1},{"id":"a","role":"robot"},{"id":"b","role":"user","parts":[7]}],"tools":[{"name":5},null,{"name":"ok","ui":7}]}',
    '['.repeat(100_000), Uint8Array.of(0x7b, 0xff, 0xfe, 0x7d)];
  for (const b of bodies) {
    const { store } = makeStore({
      chat: () => undefined,
      extra: (path, init) => {
        if (path.endsWith('/capabilities') || path.endsWith('/catalog') || (path.endsWith('/messages') && init.method === 'GET')) {
          return { status: 200, headers: JSON_CT, body: [b] };
        }
      },
    });
    const s = await until(store, (s) => s.capabilitiesLoaded && s.hydrated, `for ${String(b).slice(0, 40)}`);
    assert.equal(s.capabilities.nativeFollowUp, false);
    assert.ok(Array.isArray(s.tools));
    await aNormalTurnWorks(store);
    store.dispose();
  }
});

// ===== arguments JSON.stringify refuses (too deep, cyclic, BigInt) ==========================

test('replay helpers answer a too-deep chunk with a typed error', () => {
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  for (const f of [
    () => pkg.replayUiMessageStream([{ type: 'data-x', data: deep }]),
    () => pkg.replayPiStream([{ type: 'data-pi-x', data: { deep } }]),
  ]) {
    assert.throws(f, (e) => e instanceof Error && e.code === 'Validation' && /chunks/.test(e.message));
  }
  // The helpers keep working afterwards.
  const r = pkg.replayUiMessageStream([{ type: 'start', messageId: 'm' }, { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'ok' }, { type: 'text-end', id: 't' }, { type: 'finish' }]);
  assert.equal(r.message.parts[0].text, 'ok');
});

test('a tool output or files JSON cannot carry is a typed error, and the store keeps working', async () => {
  const store = new pkg.ChatStore({
    sessionId: 's', capabilities: { nativeFollowUp: false },
    fetch: async () => new Response('', { status: 404 }),
  });
  const cyclic = {}; cyclic.self = cyclic;
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  for (const [what, output] of [['cyclic', cyclic], ['deep', deep], ['BigInt', { n: 1n }]]) {
    assert.throws(() => store.addToolOutput({ toolCallId: 'c', output }),
      (e) => e.code === 'Validation' && /output/.test(e.message), what);
  }
  assert.throws(() => store.send('hi', [cyclic]), (e) => e.code === 'Validation' && /files/.test(e.message));
  for (const [files, what] of [
    [{ mediaType: 'text/plain', url: 'data:,x' }, /files: expected an array/],
    [[{ url: 'data:,x' }], /files\[0\]: expected/],
    [[{ mediaType: 'text/plain', url: 'data:,x' }, { mediaType: 'text/plain', url: 5 }], /files\[1\]: expected/],
    [[{ mediaType: 'text/plain', url: 'data:,x', filename: 3 }], /files\[0\]\.filename/],
  ]) {
    assert.throws(() => store.send('hi', files), (e) => e.code === 'Validation' && what.test(e.message), String(what));
  }
  assert.equal(store.getSnapshot().messages.length, 0, 'nothing was sent');
  assert.equal(store.addToolOutput({ toolCallId: 'unknown', output: { ok: true } }), false);
  store.dispose();
});

test('a clock behind the last reload: the stored clientSeq keeps follow-ups above what the server took', async () => {
  // The page's storage, as a browser keeps it across reloads.
  const kept = new Map();
  globalThis.localStorage = { getItem: (k) => kept.get(k) ?? null, setItem: (k, v) => kept.set(k, String(v)) };
  try {
    const ahead = Date.now() + 3_600_000; // what the previous page, an hour ahead, gave out
    kept.set('agent-chat-store:seq:s-seq', String(ahead));
    const { store, calls } = makeStore({
      chat: (n) => n === 1 && { status: 200, headers: SSE, body: [sse({ type: 'data-turn-start', data: { turnId: 't1' } })], hang: true },
      extra: (path) => {
        if (path.endsWith('/capabilities')) return { status: 200, headers: JSON_CT, body: '{"nativeFollowUp":true,"aiSdkOwnsHistory":false}' };
        if (path.endsWith('/followup')) return { status: 202, headers: JSON_CT, body: '{"queued":true}' };
        if (path.endsWith('/messages')) return { status: 200, headers: JSON_CT, body: '{"messages":[],"activeTurn":null}' };
      },
      options: { sessionId: 's-seq' },
    });
    await until(store, (s) => s.capabilitiesLoaded && s.hydrated);
    store.send('hello');
    await until(store, (s) => s.status === 'streaming', 'for the turn');
    store.send('follow');
    await until(store, (s) => s.queued[0]?.state === 'accepted', 'for the follow-up');
    const post = calls.find((c) => c.path.endsWith('/followup'));
    assert.ok(post.body.clientSeq > ahead, `${post.body.clientSeq} <= ${ahead}`);
    assert.equal(Number(kept.get('agent-chat-store:seq:s-seq')), post.body.clientSeq);
    store.dispose();
  } finally {
    delete globalThis.localStorage;
  }
});
