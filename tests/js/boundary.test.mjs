// The JS boundary under attack (issue 17), through the built package (pkg/, release wasm):
// every exported function called with every JS type — and a throwing getter, a Proxy whose
// traps throw, a cycle, a BigInt, a 10 MB string — answers with success or a
// `ChatStoreError` (`code: 'Validation'`, `field` naming the argument), never a wasm trap
// (`RuntimeError`) or a plain `TypeError`, and the store goes on working. A broken custom
// `fetch` fails the turn with a typed error, nothing escapes, and the composer is usable.
// Timers past setTimeout's 32-bit range do not fire at once.
// ACS_PKG=dir runs it against another build of the package.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
const pkgDir = process.env.ACS_PKG || resolve(root, 'pkg');
let pkg;
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
afterEach(() => assert.deepEqual(stray.map(String), [], 'nothing escaped to the process'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();

function cycle() {
  const o = { a: 1 };
  o.self = o;
  return o;
}
const throwingGetter = () =>
  Object.defineProperty({}, 'toolCallId', { enumerable: true, get() { throw new Error('getter'); } });
const trapProxy = () =>
  new Proxy({}, {
    get() { throw new Error('get trap'); },
    has() { throw new Error('has trap'); },
    ownKeys() { throw new Error('ownKeys trap'); },
    getOwnPropertyDescriptor() { throw new Error('gopd trap'); },
    getPrototypeOf() { throw new Error('proto trap'); },
  });
const BIG = 'x'.repeat(10 * 1024 * 1024);

// Every JS type, and the hostile shapes. (The big string last: it is slow to hand over.)
const VALUES = () => [
  ['undefined', undefined], ['null', null], ['true', true], ['0', 0], ['NaN', NaN], ['-1', -1],
  ['2**53', 2 ** 53], ['Infinity', Infinity], ['bigint', 10n], ['string', 'fu-nope'], ['empty string', ''],
  ['symbol', Symbol('s')], ['object', {}], ['array', []], ['array of junk', [1, null, {}]],
  ['function', () => 1], ['Uint8Array', new Uint8Array([1, 2, 3])], ['Date', new Date(0)],
  ['Map', new Map([[1, 2]])], ['throwing getter', throwingGetter()], ['trap proxy', trapProxy()],
  ['cycle', cycle()], ['10 MB string', BIG],
];

/** Calls `f`; a throw must be a typed Validation error. Returns what happened. */
function attempt(label, f) {
  try {
    const r = f();
    if (r && typeof r.then === 'function') r.catch(() => {});
    return 'ok';
  } catch (e) {
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `${label}: a wasm trap: ${e}`);
    assert.equal(e?.name, 'ChatStoreError', `${label}: ${e?.name}: ${e?.message}`);
    assert.equal(e.code, 'Validation', `${label}: ${e.code}`);
    return 'refused';
  }
}

/** A server that answers the chat route with one short AI SDK turn. */
function okFetch() {
  const calls = [];
  const fetch = async (url, init) => {
    const path = String(url).split('?')[0];
    calls.push(`${init.method} ${path}`);
    if (path.endsWith('/chat')) {
      const body = ['start', 'text-start', 'text-delta', 'text-end', 'finish']
        .map((type) => `data: ${JSON.stringify({ type, messageId: 'a1', id: 't', delta: 'pong', finishReason: 'stop' })}\n\n`)
        .join('') + 'data: [DONE]\n\n';
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (path.endsWith('/messages') && init.method === 'GET') {
      return new Response('{"messages":[]}', { status: 200, headers: { 'content-type': 'application/json' } });
    }
    return new Response(init.method === 'PUT' ? null : '', { status: init.method === 'PUT' ? 204 : 404 });
  };
  return { fetch, calls };
}

const CAPS = { nativeFollowUp: false, aiSdkOwnsHistory: true };
const makeStore = (extra = {}) => {
  const { fetch, calls } = okFetch();
  const store = new pkg.ChatStore({ sessionId: 's1', capabilities: CAPS, fetch, persistSeq: false, ...extra });
  return { store, calls };
};

async function turnWorks(store) {
  const before = store.getSnapshot().messages.length;
  assert.deepEqual(store.send('ping'), { kind: 'sent' });
  for (let i = 0; i < 200 && store.getSnapshot().status !== 'ready'; i++) await sleep(5);
  const s = store.getSnapshot();
  assert.equal(s.status, 'ready', JSON.stringify(s.error));
  assert.equal(s.messages.length, before + 2);
  assert.equal(s.messages.at(-1).parts.find((p) => p.type === 'text').text, 'pong');
}

test('every store action with every JS type: success or a Validation error, then a turn works', async () => {
  const { store } = makeStore();
  const calls = {
    setDraft: (v) => store.setDraft(v),
    setDraftFiles: (v) => store.setDraftFiles(v),
    'send(text)': (v) => store.send(v),
    'send(text, files)': (v) => store.send('t', v),
    'send(text, files, options)': (v) => store.send('t', undefined, v),
    addToolOutput: (v) => store.addToolOutput(v),
    'addToolOutput({output})': (v) => store.addToolOutput({ toolCallId: 'c', output: v }),
    addToolApprovalResponse: (v) => store.addToolApprovalResponse(v),
    switchSession: (v) => store.switchSession(v),
    removeQueued: (v) => store.removeQueued(v),
    retryQueued: (v) => store.retryQueued(v),
    regenerate: (v) => store.regenerate(v),
    subscribe: (v) => store.subscribe(v),
    getSnapshot: (v) => store.getSnapshot(v),
    'submit (ignores arguments)': (v) => store.submit(v),
    'stop (ignores arguments)': (v) => store.stop(v),
    'clearError (ignores arguments)': (v) => store.clearError(v),
    'continueTurn (ignores arguments)': (v) => store.continueTurn(v),
    'resumeStream (ignores arguments)': (v) => store.resumeStream(v),
  };
  const refused = {};
  for (const [name, call] of Object.entries(calls)) {
    for (const [label, v] of VALUES()) {
      if (attempt(`${name}(${label})`, () => call(v)) === 'refused') (refused[name] ??= []).push(label);
      // Whatever was done, go back to the session and a known state.
      store.stop();
      if (store.getSnapshot().sessionId !== 's1') store.switchSession('s1');
      store.setDraft('');
    }
  }
  // The string arguments refuse every other type, and name the argument.
  for (const name of ['setDraft', 'send(text)', 'switchSession', 'removeQueued', 'retryQueued']) {
    assert.ok(refused[name].includes('object') && refused[name].includes('null'), `${name}: ${refused[name]}`);
    assert.ok(!refused[name].includes('string'), name);
  }
  try { store.setDraft(42); } catch (e) { assert.equal(e.field, 'text'); }
  try { store.switchSession({}); } catch (e) { assert.equal(e.field, 'sessionId'); }
  try { store.subscribe('no'); } catch (e) { assert.equal(e.field, 'listener'); }
  assert.ok(!(refused.regenerate ?? []).includes('undefined'), 'regenerate() takes no argument');
  await turnWorks(store);
  store.dispose();
});

test('the constructor and every option with every JS type: a store or a Validation error', async () => {
  const keys = ['sessionId', 'baseUrl', 'capabilities', 'routes', 'limits', 'retry', 'fetch', 'headers',
    'credentials', 'throttleMs', 'onData', 'onError', 'onEvent', 'sendAutomaticallyWhen',
    'followUpTimeoutMs', 'resumeAttempts', 'resumeDelayMs', 'streamIdleTimeoutMs', 'attach', 'hydrate', 'persistSeq',
    'protocol', 'agentType'];
  for (const [label, v] of VALUES()) {
    attempt(`new ChatStore(${label})`, () => new pkg.ChatStore(v).dispose());
  }
  const { fetch } = okFetch();
  for (const key of keys) {
    for (const [label, v] of VALUES()) {
      attempt(`option ${key} = ${label}`, () => {
        new pkg.ChatStore({ sessionId: 's1', fetch, capabilities: CAPS, persistSeq: false, [key]: v }).dispose();
      });
    }
  }
  const nested = { routes: 'chat', limits: 'maxEventBytes', retry: 'maxAttempts' };
  for (const [group, key] of Object.entries(nested)) {
    for (const [label, v] of VALUES()) {
      attempt(`option ${group}.${key} = ${label}`, () => {
        new pkg.ChatStore({ sessionId: 's1', fetch, persistSeq: false, [group]: { [key]: v } }).dispose();
      });
    }
  }
  try {
    new pkg.ChatStore({ sessionId: 's1', throttleMs: 'soon' });
    assert.fail('refused');
  } catch (e) {
    assert.equal(e.field, 'throttleMs');
  }
  const { store } = makeStore();
  await turnWorks(store);
  store.dispose();
});

test('the pure helpers with every JS type: a result or a Validation error', () => {
  for (const [label, v] of VALUES()) {
    attempt(`replayUiMessageStream(${label})`, () => pkg.replayUiMessageStream(v));
    attempt(`replayUiMessageStream([], ${label})`, () => pkg.replayUiMessageStream([], v));
    attempt(`replayPiStream(${label})`, () => pkg.replayPiStream(v));
    attempt(`replayPiNativeEvents(${label})`, () => pkg.replayPiNativeEvents(v));
    attempt(`replayPiNativeEvents([], ${label})`, () => pkg.replayPiNativeEvents([], v));
    attempt(`new SseDecoder(${label})`, () => new pkg.SseDecoder(v).free());
    const d = new pkg.SseDecoder();
    attempt(`SseDecoder.push(${label})`, () => d.push(v));
    assert.deepEqual(d.push(enc.encode('\n\ndata: after\n\n')), ['after'], 'the decoder goes on');
    d.free();
  }
});

/** A store whose custom fetch gives `answer()` for the chat route. */
async function brokenTurn(answer) {
  const { fetch: ok } = okFetch();
  let broken = true;
  const fetch = async (url, init) => (String(url).endsWith('/chat') && broken ? answer() : ok(url, init));
  const errors = [];
  const store = new pkg.ChatStore({ sessionId: 's1', capabilities: CAPS, fetch, persistSeq: false, onError: (e) => errors.push(e) });
  store.send('hello');
  for (let i = 0; i < 200 && store.getSnapshot().status !== 'error'; i++) await sleep(5);
  const s = store.getSnapshot();
  broken = false;
  return { store, s, errors };
}

test('a broken custom fetch fails the turn with a typed error; nothing escapes; the composer works', async () => {
  const readerThrows = () => ({
    status: 200,
    headers: { get: () => 'text/event-stream' },
    body: { getReader: () => ({ read: () => { throw new Error('reader broke'); }, cancel() {} }) },
  });
  const chunksOfStrings = () => ({
    status: 200,
    headers: { get: () => 'text/event-stream' },
    body: new ReadableStream({ start(c) { c.enqueue('data: {"type":"start"}\n\n'); c.close(); } }),
  });
  const cases = {
    'an empty object': () => ({}),
    null: () => null,
    'a string': () => 'Response',
    'a number': () => 200,
    'a throwing headers getter': () => ({ status: 200, get headers() { throw new Error('h'); }, body: null }),
    'a body whose reader throws': readerThrows,
    'a body of strings': chunksOfStrings,
    'a rejected promise of a non-error': () => Promise.reject(42),
    'a throwing fetch': () => { throw new TypeError('fetch broke'); },
  };
  for (const [label, answer] of Object.entries(cases)) {
    const { store, s, errors } = await brokenTurn(answer);
    try {
      assert.equal(s.status, 'error', `${label}: ${s.status}`);
      // (A body that breaks after the head is resumed: the resume's answer then decides.)
      assert.ok(['Network', 'Protocol', 'Server'].includes(s.error?.code), `${label}: ${s.error?.code}`);
      assert.equal(s.error.name, 'ChatStoreError', label);
      assert.ok(errors.length > 0, `${label}: onError heard it`);
      assert.equal(s.composer.canSendText, true, `${label}: the composer is usable`);
      await turnWorks(store);
    } finally {
      store.dispose();
    }
  }
});

test('a timeout past setTimeout\'s 32-bit range is clamped: it neither fires at once nor loops', async () => {
  const { fetch: ok } = okFetch();
  let posts = 0;
  const fetch = (url, init) => {
    if (String(url).endsWith('/chat')) { posts++; return new Promise(() => {}); } // never answers
    return ok(url, init);
  };
  // The stream's idle timeout (3e9 ms) is the only timer.
  const store = new pkg.ChatStore({ sessionId: 's1', capabilities: CAPS, fetch, persistSeq: false, streamIdleTimeoutMs: 3e9 });
  const real = globalThis.setTimeout;
  const delays = [];
  globalThis.setTimeout = (f, ms, ...rest) => { delays.push(ms); return real(f, ms, ...rest); };
  try {
    store.send('hello');
    await sleep(100);
  } finally {
    globalThis.setTimeout = real;
  }
  const long = delays.filter((d) => d > 1e6);
  assert.ok(long.length >= 1 && long.length <= 2, `armed once, not re-fired: ${delays.length} timers`);
  assert.ok(long.every((d) => d <= 2 ** 31 - 1), `clamped: ${long}`);
  assert.equal(store.getSnapshot().status, 'submitted', 'nothing fired');
  assert.equal(posts, 1);
  store.dispose();
});

test('a store freed without dispose() while a resume waits on its timer: nothing fires into it', async () => {
  // The answer breaks after its first chunks: the store resumes after a backoff, on its timer,
  // with no request in flight, so nothing else holds the store when the page lets go of it.
  const fetch = async (url) => {
    if (!String(url).endsWith('/chat')) throw new TypeError('offline');
    const body = new ReadableStream({
      start(c) {
        c.enqueue(enc.encode('data: {"type":"start","messageId":"m"}\n\ndata: {"type":"text-start","id":"t"}\n\n'));
        c.error(new TypeError('cut'));
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  const real = globalThis.setTimeout;
  const armed = [];
  globalThis.setTimeout = (f, ms, ...rest) => { armed.push(ms); return real(f, ms, ...rest); };
  const store = new pkg.ChatStore({ sessionId: 's1', capabilities: CAPS, fetch, persistSeq: false });
  try {
    store.send('hello');
    await sleep(20);
  } finally {
    globalThis.setTimeout = real;
  }
  assert.equal(store.getSnapshot().status, 'streaming', 'the turn waits to resume');
  const backoff = Math.max(...armed.filter((ms) => ms < 10_000));
  assert.ok(backoff > 20, `a resume is due later: ${armed}`);
  store.free();
  await sleep(backoff + 100);
  // afterEach: nothing escaped (a dropped closure throws "closure invoked … after being dropped").
});

test('the waiting bubbles follow the session: another session shows its own queue, and back', async () => {
  let ctl;
  const fetch = async (url, init) => {
    const path = String(url).split('?')[0];
    if (path.endsWith('/chat')) {
      const body = new ReadableStream({ start(c) { ctl = c; } });
      ctl?.enqueue?.(enc.encode(''));
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (path.endsWith('/followup')) return new Response('{"queued":true}', { status: 202 });
    return new Response('', { status: 404 });
  };
  const store = new pkg.ChatStore({ sessionId: 'a', capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false }, hydrate: false, fetch, persistSeq: false });
  try {
    store.send('start');
    for (let i = 0; i < 100 && !ctl; i++) await sleep(5);
    ctl.enqueue(enc.encode('data: {"type":"data-turn-start","data":{"turnId":"t"}}\n\n'));
    for (let i = 0; i < 100 && store.getSnapshot().status !== 'streaming'; i++) await sleep(5);
    store.send('waiting in a');
    for (let i = 0; i < 100 && store.getSnapshot().queued[0]?.state !== 'accepted'; i++) await sleep(5);
    assert.equal(store.getSnapshot().queued.length, 1);
    store.switchSession('b');
    assert.deepEqual(store.getSnapshot().queued, [], 'b has no waiting bubbles');
    store.switchSession('a');
    assert.deepEqual(store.getSnapshot().queued.map((q) => q.text), ['waiting in a']);
  } finally {
    store.dispose();
  }
});
