// Acceptance tests of issue 38: the pi-native transport (SPEC §14) under bad input and bad
// networks, through the built package (pkg/, the release wasm). No stall: a read or a command
// that never answers ends in a typed error within a bounded time. No flood: whatever the server
// answers, the store asks at most a few times per second, backing off. No silent failure: what
// it cannot use is a typed error or a loss (`snapshot.losses`), and the rest still applies.
// After each attack the store is usable (a send is answered), keeps its history and draft,
// and no wasm trap reached JS.
//
// The server is tests/js/native-server.mjs: real HTTP on 127.0.0.1 where requests are counted
// on the real clock, its scripted fetch on node:test's mocked clock (setTimeout and Date) where
// a bound is tens of seconds (`onClock`). ACS_PKG=dir runs it against another build.
import { test, before, after, afterEach, mock } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NativeServer, line, heartbeat } from './native-server.mjs';

const root = resolve(import.meta.dirname, '../..');
const pkgDir = process.env.ACS_PKG || resolve(root, 'pkg');
let pkg;

const stray = [];
const onStray = (e) => stray.push(e);
const servers = [];
before(async () => {
  pkg = await import(pathToFileURL(resolve(pkgDir, 'agent_chat_store.js')).href);
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);
});
after(async () => {
  process.off('uncaughtException', onStray);
  process.off('unhandledRejection', onStray);
  for (const s of servers) await s.close();
});
// Every store a test made is disposed after it, failed or not: a store left following a
// flooding server would go on into the next tests.
const stores = [];
afterEach(async () => {
  for (const s of stores.splice(0)) s.dispose();
  await tick();
  assert.deepEqual(stray.splice(0).map(String), [], 'nothing escaped to the process (no wasm trap)');
});

const MiB = 1024 * 1024;
const realSleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));

/** The real clock: waits are real time. */
const realClock = { fake: false, wait: realSleep, now: () => Date.now() };

/** Runs `fn(clock)` on node:test's mocked setTimeout and Date; `clock.wait(ms)` moves it. */
async function onClock(fn) {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_700_000_000_000 });
  const clock = {
    fake: true,
    now: () => Date.now(),
    async wait(ms) {
      for (let left = ms; left > 0; left -= 50) {
        mock.timers.tick(Math.min(50, left));
        for (let i = 0; i < 8; i++) await tick();
      }
      for (let i = 0; i < 8; i++) await tick();
    },
  };
  try {
    return await fn(clock);
  } finally {
    mock.timers.reset();
  }
}

async function until(store, pred, what, clock = realClock, ms = 8000) {
  const end = clock.now() + ms;
  for (;;) {
    const s = store.getSnapshot();
    if (pred(s)) return s;
    if (clock.now() >= end) {
      assert.fail(`timed out (${ms} ms) waiting for ${what}: ${JSON.stringify({ status: s.status, error: s.error && { code: s.error.code, message: s.error.message }, losses: s.losses, messages: s.messages.length }).slice(0, 1500)}`);
    }
    await clock.wait(clock.fake ? 100 : 10);
  }
}

/**
 * A pi-native store on `server`: over HTTP when `http` (a base URL), else through its fetch.
 */
function nativeStore(server, { http, unstarted, ...options } = {}) {
  const errors = [];
  const store = new pkg.ChatStore({
    protocol: 'pi-native', agentType: 'pi', sessionId: 's1', persistSeq: false,
    ...(http ? { baseUrl: http } : { baseUrl: 'http://server.test', fetch: server.fetch() }),
    onError: (e) => errors.push(e),
    // TRACE=1: the store's events (diagnostics among them) on stderr, to read a failure.
    onEvent: process.env.TRACE ? (e) => console.error(JSON.stringify(e).slice(0, 300)) : undefined,
    ...options,
  });
  stores.push(store);
  // `new ChatStore` does no IO: the first subscribe starts it, as a UI's would.
  if (!unstarted) store.subscribe(() => {});
  return { store, errors };
}

/** A store opened on a healthy session with one turn done ("hello" → "pong") and a draft. */
async function opened(server, clock = realClock, options = {}) {
  const { store, errors } = nativeStore(server, options);
  await until(store, (s) => s.hydrated && server.session.streams.size === 1, 'the session open', clock);
  assert.equal(store.send('hello').kind, 'sent');
  await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.at(-1)?.text === 'pong', 'the first turn', clock);
  store.setDraft('kept draft');
  return { store, errors, ids: store.getSnapshot().messages.map((m) => m.id) };
}

/** A server on real HTTP (closed after the file). */
async function httpServer() {
  const server = new NativeServer();
  servers.push(server);
  return { server, http: await server.listen() };
}

/** A typed error the store shows: a ChatStoreError with a stable code. */
function assertTyped(error, what) {
  assert.ok(error, `${what}: an error in snapshot.error`);
  assert.ok(error instanceof Error, `${what}: an Error`);
  assert.equal(error.name, 'ChatStoreError', what);
  assert.match(error.code, /^[A-Z][A-Za-z]+$/, `${what}: a code`);
}

/**
 * After an attack: the server healthy again, the store settles, keeps its history and draft,
 * and a send is answered.
 */
async function stillUsable(store, server, ids, clock = realClock) {
  server.heal();
  // A store that stopped following (an error) follows again on the next send, or on its own.
  const patience = clock.fake ? 70_000 : 10_000;
  await until(store, (s) => !s.busy, 'the store to settle', clock, patience);
  const s0 = store.getSnapshot();
  const shown = s0.messages.map((m) => m.id);
  assert.deepEqual(shown.slice(0, ids.length), ids, 'the history before the attack is kept');
  assert.equal(s0.composer.draft, 'kept draft', 'the draft is kept');
  const n = s0.messages.length;
  const r = store.send('ping');
  assert.equal(r.kind, 'sent', JSON.stringify(r));
  const s = await until(store, (s) => s.status === 'ready' && s.messages.length >= n + 2 && s.messages.at(-1).parts.at(-1)?.text === 'pong', 'a send after the attack', clock, patience);
  assert.equal(s.messages.at(-2).parts.at(-1).text, 'ping');
  assert.equal(s.error, null);
}

/** The events of a run another client started, from the server's next seq. */
function otherRun(session, text, turnId = 'tx') {
  session.emit({ type: 'agent-start', turnId });
  session.emit({ type: 'message-start', messageId: `m-${turnId}`, role: 'assistant' });
  session.emit({ type: 'message-delta', messageId: `m-${turnId}`, partId: '0', kind: 'text', delta: text });
  session.emit({ type: 'message-end', messageId: `m-${turnId}`, final: { id: `m-${turnId}`, role: 'assistant', status: 'done', parts: [{ type: 'text', text }] } });
  session.emit({ type: 'agent-end', turnId, status: 'ok' });
}

/** A prompt whose run the test writes: `run(session, nonce)` instead of the "pong" turn. */
function scriptPrompt(server, run) {
  server.override = (ctx) => {
    if (ctx.route !== 'prompt') return undefined;
    setImmediate(() => run(ctx.session, ctx.body.clientNonce, ctx.body.content));
    return { status: 202, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ accepted: true, clientNonce: ctx.body.clientNonce }) };
  };
}

// ---- 1. An event line over 16 MiB ----------------------------------------------------------

/** A turn whose tool result is `size` bytes, then text "after". */
function bigToolResultTurn(size) {
  return (session, nonce, text) => {
    session.emit({ type: 'agent-start', turnId: 'tb' });
    session.emit({ type: 'message-start', messageId: 'ub', role: 'user', clientNonce: nonce, text });
    session.emit({ type: 'message-start', messageId: 'ab', role: 'assistant' });
    session.emit({ type: 'tool-call', messageId: 'ab', toolCallId: 'c1', toolName: 'read', input: { path: '/big' } });
    session.emit({ type: 'tool-result', messageId: 'ab', toolCallId: 'c1', output: { content: [{ type: 'text', text: 'y'.repeat(size) }] } });
    session.emit({ type: 'message-delta', messageId: 'ab', partId: '1', kind: 'text', delta: 'after' });
    session.emit({ type: 'message-end', messageId: 'ab', final: { id: 'ab', role: 'assistant', status: 'done', parts: [
      { type: 'tool-call', id: 'c1', toolName: 'read', state: 'input-available', input: { path: '/big' } },
      { type: 'text', text: 'after' },
    ] } });
    session.emit({ type: 'agent-end', turnId: 'tb', status: 'ok' });
  };
}

test('a 17 MB tool result (an event over 16 MiB) is skipped once: a loss, its tool part fails, no re-download', async () => {
  const { server, http } = await httpServer();
  const { store, ids } = await opened(server, realClock, { http });
  scriptPrompt(server, bigToolResultTurn(17_000_000));
  const since = Date.now();
  store.send('read the big file');
  const s = await until(store, (s) => s.status !== 'submitted' && s.messages.at(-1)?.parts.some((p) => p.type === 'text' && p.text === 'after'), 'the text after the big result', realClock, 10_000);
  await realSleep(3000);
  assert.equal(server.count('events', since), 0, 'the events stream was not opened again (the 17 MB line is not downloaded again)');
  const loss = s.losses.find((l) => l.code === 'EventTooLarge');
  assert.ok(loss, `an EventTooLarge loss: ${JSON.stringify(s.losses)}`);
  assert.equal(loss.toolCallId, 'c1');
  const tool = s.messages.at(-1).parts.find((p) => p.toolCallId === 'c1');
  assert.equal(tool.state, 'output-error', 'the tool part fails rather than waiting forever');
  assert.ok(tool.errorText, 'with an error text');
  assert.equal(store.getSnapshot().status, 'ready');
  await stillUsable(store, server, ids);
  store.dispose();
});

test('raising limits.maxEventBytes lets a 17 MB tool result through', async () => {
  const { server, http } = await httpServer();
  const { store, ids } = await opened(server, realClock, { http, limits: { maxEventBytes: 32 * MiB } });
  scriptPrompt(server, bigToolResultTurn(17_000_000));
  store.send('read the big file');
  const s = await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.some((p) => p.type === 'text' && p.text === 'after'), 'the turn', realClock, 10_000);
  const tool = s.messages.at(-1).parts.find((p) => p.toolCallId === 'c1');
  assert.equal(tool.state, 'output-available', JSON.stringify({ state: tool.state, errorText: tool.errorText }));
  assert.equal(JSON.stringify(tool.output).length > 17_000_000, true, 'the whole result');
  assert.equal(s.losses.filter((l) => l.code === 'EventTooLarge').length, 0);
  assert.equal(server.count('events'), 1, 'one events connection');
  await stillUsable(store, server, ids);
  store.dispose();
});

test('an answer over 16 MiB in its closing message-end ends as LimitExceeded, the cursor moves past it', async () => {
  const { server, http } = await httpServer();
  const { store, ids } = await opened(server, realClock, { http });
  scriptPrompt(server, (session, nonce, text) => {
    session.emit({ type: 'agent-start', turnId: 'tf' });
    session.emit({ type: 'message-start', messageId: 'uf', role: 'user', clientNonce: nonce, text });
    session.emit({ type: 'message-start', messageId: 'af', role: 'assistant' });
    session.emit({ type: 'message-delta', messageId: 'af', partId: '0', kind: 'text', delta: 'partial' });
    session.emit({ type: 'message-end', messageId: 'af', final: { id: 'af', role: 'assistant', status: 'done', parts: [{ type: 'text', text: 'z'.repeat(17 * MiB) }] } });
    session.emit({ type: 'agent-end', turnId: 'tf', status: 'ok' });
  });
  const since = Date.now();
  store.send('a huge answer');
  const s = await until(store, (s) => s.status === 'error' || (s.status === 'ready' && s.messages.length > ids.length + 1), 'the end of the turn', realClock, 10_000);
  await realSleep(3000);
  assert.equal(server.count('events', since), 0, 'no re-download of the line');
  assert.ok(s.losses.some((l) => l.code === 'EventTooLarge'), `an EventTooLarge loss: ${JSON.stringify(s.losses)}`);
  assert.equal(s.status, 'error');
  assertTyped(s.error, 'the lost final');
  assert.equal(s.error.code, 'LimitExceeded');
  assert.equal(s.messages.at(-1).parts.at(-1).text, 'partial', 'what streamed is kept');
  await stillUsable(store, server, ids);
  store.dispose();
});

// ---- 2. Reads and commands that fail or never answer -------------------------------------

test('/state answering 500: a typed error within 60 s, retries backed off', () => onClock(async (clock) => {
  const server = new NativeServer();
  server.override = (ctx) => ctx.route === 'state' ? { status: 500, headers: { 'content-type': 'text/html' }, body: '<html>oops</html>' } : undefined;
  const { store } = nativeStore(server);
  const s = await until(store, (s) => s.error !== null, 'a typed error', clock, 60_000);
  assertTyped(s.error, '/state 500');
  await clock.wait(60_000);
  assert.ok(server.count('state') <= 10, `${server.count('state')} state reads in 2 minutes`);
  assert.ok(server.peakRate(['state']) <= 2, `peak ${server.peakRate(['state'])} state reads in a second`);
  server.heal();
  // The error does not trap the store: a send opens the session and is answered.
  const r = store.send('hello');
  assert.equal(r.kind, 'sent', JSON.stringify(r));
  await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.at(-1)?.text === 'pong', 'a send after the error', clock, 70_000);
  store.dispose();
}));

test('/state never answering: a typed error within 60 s, the hung read given up', () => onClock(async (clock) => {
  const server = new NativeServer();
  server.override = (ctx) => ctx.route === 'state' ? { hang: true } : undefined;
  const { store } = nativeStore(server);
  const s = await until(store, (s) => s.error !== null, 'a typed error', clock, 60_000);
  assertTyped(s.error, '/state hangs');
  assert.ok(server.count('state') <= 6, `${server.count('state')} state reads`);
  server.heal();
  store.send('hello');
  await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.at(-1)?.text === 'pong', 'a send after the error', clock, 70_000);
  store.dispose();
}));

test('a store started late: its first /state read is bounded from the start, not from new ChatStore()', () => onClock(async (clock) => {
  const server = new NativeServer();
  server.override = (ctx) => ctx.route === 'state' ? { hang: true } : undefined;
  const { store } = nativeStore(server, { unstarted: true });
  await clock.wait(20_000); // past the read's 15 s bound, counted from construction
  assert.equal(server.count('state'), 0, 'nothing asked before the start');
  store.subscribe(() => {});
  await clock.wait(14_000);
  assert.equal(server.count('state'), 1, 'the first read is still waited for 14 s after the start');
  assert.equal(store.getSnapshot().error, null);
  await until(store, () => server.count('state') >= 2, 'the hung read given up and asked again', clock, 30_000);
  store.dispose();
}));

test('/state over limits.maxBodyBytes: a typed error, not read again in a loop', () => onClock(async (clock) => {
  const server = new NativeServer();
  const big = server.session.stateDoc();
  big.state.messages = [{ id: 'm0', role: 'assistant', status: 'done', parts: [{ type: 'text', text: 'x'.repeat(2 * MiB) }] }];
  server.override = (ctx) => ctx.route === 'state' ? { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(big) } : undefined;
  const { store } = nativeStore(server, { limits: { maxBodyBytes: MiB } });
  const s = await until(store, (s) => s.error !== null, 'a typed error', clock, 60_000);
  assertTyped(s.error, 'a state over maxBodyBytes');
  assert.ok(['LimitExceeded', 'Protocol'].includes(s.error.code), s.error.code);
  assert.equal(s.messages.length, 0, 'nothing of it is shown');
  await clock.wait(30_000);
  assert.ok(server.count('state') <= 6, `${server.count('state')} state reads`);
  store.dispose();
}));

test('/state over the default 64 MiB body limit (real HTTP): a typed error, the store not stuck', async () => {
  const { server, http } = await httpServer();
  const big = server.session.stateDoc();
  big.state.messages = [{ id: 'm0', role: 'assistant', status: 'done', parts: [{ type: 'text', text: 'x'.repeat(65 * MiB) }] }];
  const body = JSON.stringify(big);
  big.state.messages = [];
  server.override = (ctx) => ctx.route === 'state' ? { status: 200, headers: { 'content-type': 'application/json' }, body } : undefined;
  const { store } = nativeStore(server, { http });
  const s = await until(store, (s) => s.error !== null, 'a typed error', realClock, 8_000);
  assertTyped(s.error, 'a state over 64 MiB');
  assert.equal(s.messages.length, 0);
  await realSleep(2000);
  assert.ok(server.count('state') <= 3, `${server.count('state')} reads of a 65 MiB state`);
});

test('a prompt POST never answering: a typed error within 60 s, the message not lost', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  server.override = (ctx) => ctx.route === 'prompt' ? { hang: true } : undefined;
  store.send('lost?');
  const s = await until(store, (s) => s.status === 'error', 'the prompt to fail', clock, 61_000);
  assertTyped(s.error, 'a prompt without an answer');
  assert.ok(server.count('prompt') <= 2 + 5, `${server.count('prompt')} prompt POSTs`);
  const text = s.messages.flatMap((m) => m.parts.map((p) => p.text)).includes('lost?') || s.composer.draft.includes('lost?');
  assert.ok(text, 'the message is in the history or back in the composer');
  await stillUsable(store, server, ids, clock).catch((e) => {
    // The draft may hold the message given back: what was typed is kept either way.
    if (!/the draft is kept/.test(e.message)) throw e;
    assert.ok(store.getSnapshot().composer.draft.includes('lost?'));
  });
  store.dispose();
}));

test('an events connection never answering: given up and retried, bounded, said', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  server.override = (ctx) => ctx.route === 'events' ? { hang: true } : undefined;
  // The open stream ends: the store reconnects into a server that never answers.
  for (const p of [...server.pipes]) p.end();
  const since = clock.now();
  await clock.wait(60_000);
  const asked = server.count('events', since);
  assert.ok(asked >= 2, `the hung connection is given up and tried again (${asked} asks in 60 s)`);
  assert.ok(asked <= 10, `${asked} asks in 60 s`);
  const s = store.getSnapshot();
  assert.ok(s.error !== null || s.losses.length > 0, 'a typed error or a loss says the session is not followed');
  if (s.error) assertTyped(s.error, 'events never answering');
  await stillUsable(store, server, ids, clock);
  store.dispose();
}));

// ---- 3. Floods ---------------------------------------------------------------------------

const json409 = (code, latestSeq) => ({ status: 409, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { code, message: code, details: { latestSeq, minReplaySeq: 0 } } }) });

/** Floods: the override makes every reconnect fail the same way. */
const floods = {
  'a 409 cursor-ahead on every reconnect': (ctx) => ctx.route === 'events' ? json409('AGENT_SESSION_CURSOR_AHEAD', ctx.session.seq) : undefined,
  'a 409 replay gap on every reconnect': (ctx) => ctx.route === 'events' ? json409('AGENT_SESSION_REPLAY_GAP', ctx.session.seq) : undefined,
  'a seq gap /state never fills': (ctx) => ctx.route === 'events' ? {
    status: 200, headers: { 'content-type': 'application/x-ndjson' },
    stream: (pipe) => pipe.write(heartbeat() + line({ type: 'usage', seq: ctx.session.seq + 5, usage: {} })),
  } : undefined,
};

for (const [name, override] of Object.entries(floods)) {
  test(`${name}, on a real clock: at most a few reads per second`, async () => {
    const { server, http } = await httpServer();
    const { store, ids } = await opened(server, realClock, { http });
    server.override = override;
    const since = Date.now();
    for (const p of [...server.pipes]) p.end();
    await realSleep(3000);
    const n = server.count('events', since) + server.count('state', since);
    assert.ok(n <= 10, `${n} reads in 3 s`);
    await stillUsable(store, server, ids);
    store.dispose();
  });

  test(`${name}: backed off, then a typed error within 60 s`, () => onClock(async (clock) => {
    const server = new NativeServer();
    const { store, ids } = await opened(server, clock);
    server.override = (ctx) => (server.log.length > 100 ? { hang: true } : override(ctx));
    const since = clock.now();
    for (const p of [...server.pipes]) p.end();
    const s = await until(store, (s) => s.error !== null, 'a typed error', clock, 60_000);
    assertTyped(s.error, name);
    const n = server.count('events', since) + server.count('state', since);
    assert.ok(n <= 20, `${n} reads before the error`);
    assert.ok(server.peakRate(['events', 'state']) <= 4, `peak ${server.peakRate(['events', 'state'])} reads in one second`);
    await stillUsable(store, server, ids, clock);
    store.dispose();
  }));
}

test('a prompt refused as busy while /state says idle: backed off, then a typed error, the text kept', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  server.override = (ctx) => {
    if (server.log.length > 100) return { hang: true };
    if (ctx.route === 'prompt') return { status: 409, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { code: 'AGENT_COMMAND_INVALID_STATE', message: 'prompt is invalid in current state', details: { status: 'streaming' } } }) };
    return undefined;
  };
  const since = clock.now();
  store.send('are you busy?');
  const s = await until(store, (s) => s.error !== null && !s.busy, 'a typed error', clock, 60_000);
  assertTyped(s.error, 'a prompt always refused');
  const routes = ['prompt', 'followup', 'state', 'queue/clear'];
  const n = routes.reduce((a, r) => a + server.count(r, since), 0);
  assert.ok(n <= 20, `${n} requests before the error: ${JSON.stringify(server.log.slice(-20).map((r) => r.route))}`);
  assert.ok(server.peakRate(routes) <= 4, `peak ${server.peakRate(routes)} requests in one second`);
  const kept = s.messages.some((m) => m.parts.some((p) => p.text === 'are you busy?'))
    || s.queued.some((q) => q.text === 'are you busy?') || s.composer.draft.includes('are you busy?');
  assert.ok(kept, 'the text is in the history, the queue or the composer');
  server.heal();
  store.clearError();
  await until(store, (s) => !s.busy, 'settled', clock, 70_000);
  const r = store.send('ping');
  assert.equal(r.kind, 'sent', JSON.stringify(r));
  await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.at(-1)?.text === 'pong', 'a send after', clock, 70_000);
  assert.deepEqual(store.getSnapshot().messages.map((m) => m.id).slice(0, ids.length), ids);
  store.dispose();
}));

// ---- 4. Malformed lines -------------------------------------------------------------------

test('malformed event lines are losses, not reconnects; the good events after them apply', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  const before = store.getSnapshot().losses.length;
  const since = clock.now();
  const n = server.session.seq + 1; // the seq of the next good event
  const ref = '"ref":{"agentTypeId":"pi","sessionId":"s1"}';
  const bad = [
    `{${ref},"seq":"${n}","event":{"type":"usage","seq":"${n}","usage":{}}}\n`,
    `{${ref},"seq":null,"event":{"type":"usage","seq":null,"usage":{}}}\n`,
    `{${ref},"seq":${n}.5,"event":{"type":"usage","seq":${n}.5,"usage":{}}}\n`,
    `{${ref},"seq":18446744073709551617,"event":{"type":"usage","seq":18446744073709551617,"usage":{}}}\n`,
    // 2^53 + 1: past what a JS number holds exactly, so no seq at all.
    `{${ref},"seq":9007199254740993,"event":{"type":"usage","seq":9007199254740993,"usage":{}}}\n`,
    `{${ref},"seq":${n},"event":{"type":"agent-start","seq":${n + 1},"turnId":"bad"}}\n`,
    `{${ref},"seq":${n},"event":{"type":"usage","seq":${n},"usage":{}}} trailing garbage\n`,
  ];
  // The lines that carry a readable seq take their slot, as a real event would: n, then n + 1.
  const utf8 = Buffer.concat([Buffer.from(`{${ref},"seq":${n + 1},"event":{"type":"message-delta","seq":${n + 1},"messageId":"x","partId":"0","kind":"text","delta":"`), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from('"}}\n')]);
  for (const p of [...server.pipes]) {
    for (const b of bad) p.write(b);
    p.write(utf8);
  }
  server.session.seq = n + 1; // the server's own events go on after the bad lines' seqs
  otherRun(server.session, 'the good events');
  await clock.wait(10_000);
  const s = store.getSnapshot();
  assert.equal(s.messages.at(-1).parts.at(-1).text, 'the good events', 'the events after the bad lines applied');
  assert.equal(server.count('events', since), 0, 'no reconnect');
  assert.equal(server.count('state', since), 0, 'no state read');
  const losses = s.losses.slice(before);
  assert.ok(losses.length >= bad.length + 1, `a loss per bad line: ${JSON.stringify(losses)}`);
  assert.equal(s.status, 'ready');
  await stillUsable(store, server, ids, clock);
  store.dispose();
}));

test('a byte-order mark before the first line does not cost the line or a reconnect', () => onClock(async (clock) => {
  const server = new NativeServer();
  server.session.runTurn('n0', 'earlier');
  server.override = (ctx) => ctx.route === 'events' && ctx.n === 1 ? {
    status: 200, headers: { 'content-type': 'application/x-ndjson' },
    stream: (pipe) => {
      pipe.write('\uFEFF' + heartbeat());
      server.session.streams.add(pipe);
      pipe.onclose = () => server.session.streams.delete(pipe);
    },
  } : undefined;
  const { store } = nativeStore(server);
  await until(store, (s) => s.hydrated && server.count('events') >= 1, 'open', clock);
  otherRun(server.session, 'after the mark');
  await clock.wait(5_000);
  const s = store.getSnapshot();
  assert.equal(s.messages.at(-1).parts.at(-1).text, 'after the mark');
  assert.equal(server.count('events'), 1, 'no reconnect');
  store.dispose();
}));

// ---- 5. An event of another session -------------------------------------------------------

test('an event of another session is a loss and does not take its seq from this one', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  const before = store.getSnapshot().losses.length;
  const since = clock.now();
  const n = server.session.seq + 1;
  for (const p of [...server.pipes]) {
    p.write(line({ type: 'agent-start', seq: n, turnId: 'intruder' }, 'other'));
    p.write(line({ type: 'message-start', seq: n + 1, messageId: 'wrong', role: 'assistant' }, 'other'));
  }
  otherRun(server.session, 'mine');
  await clock.wait(5_000);
  const s = store.getSnapshot();
  assert.equal(s.messages.at(-1).parts.at(-1).text, 'mine', "this session's events with those seqs applied");
  assert.ok(!s.messages.some((m) => m.id === 'wrong'), 'nothing of the other session is shown');
  assert.ok(s.losses.length - before >= 2, `a loss per foreign line: ${JSON.stringify(s.losses.slice(before))}`);
  assert.equal(server.count('state', since), 0, 'no state read');
  await stillUsable(store, server, ids, clock);
  store.dispose();
}));

// ---- 6. A 48 MiB answer -------------------------------------------------------------------

test('a 48 MiB answer ends in LimitExceeded (maxMessageChars), memory bounded, the store goes on', async () => {
  const { server, http } = await httpServer();
  const { store, ids } = await opened(server, realClock, { http });
  const piece = 'w'.repeat(MiB);
  scriptPrompt(server, (session, nonce, text) => {
    session.emit({ type: 'agent-start', turnId: 'th' });
    session.emit({ type: 'message-start', messageId: 'uh', role: 'user', clientNonce: nonce, text });
    session.emit({ type: 'message-start', messageId: 'ah', role: 'assistant' });
    for (let i = 0; i < 48; i++) session.emit({ type: 'message-delta', messageId: 'ah', partId: '0', kind: 'text', delta: piece });
    session.emit({ type: 'message-end', messageId: 'ah', final: { id: 'ah', role: 'assistant', status: 'done', parts: [{ type: 'text', text: 'short final' }] } });
    session.emit({ type: 'agent-end', turnId: 'th', status: 'ok' });
  });
  const rss = process.memoryUsage().rss;
  // The text shown when the store first says `error`: the bound is passed by one read's bytes
  // at most. (The snapshot the loop below reads can be later: a run that goes on after its
  // stop is followed for one more answer's worth, so the text may grow after the error.)
  const textChars = (x) => x.messages.at(-1).parts.filter((p) => p.type === 'text').reduce((a, p) => a + p.text.length, 0);
  let keptAtError = null;
  const off = store.subscribe(() => {
    const x = store.getSnapshot();
    if (keptAtError === null && x.status === 'error') keptAtError = textChars(x);
  });
  store.send('write forever');
  let s;
  for (let i = 0; i < 3000; i++) {
    s = store.getSnapshot(); // never throws, however far the answer got
    if (s.status === 'error' || (s.status === 'ready' && s.messages.length > ids.length + 1)) break;
    await realSleep(10);
  }
  assert.equal(s.status, 'error', `ended in error (status ${s.status})`);
  assertTyped(s.error, 'a 48 MiB answer');
  assert.equal(s.error.code, 'LimitExceeded');
  assert.equal(s.error.field, 'limits.maxMessageChars');
  off();
  assert.ok(keptAtError !== null && keptAtError <= 33 * MiB, `kept ${keptAtError} characters at the error`);
  assert.ok(textChars(s) <= 48 * MiB, `${textChars(s)} characters shown`);
  const grew = process.memoryUsage().rss - rss;
  assert.ok(grew < 1024 * MiB, `rss grew ${Math.round(grew / MiB)} MiB`);
  await stillUsable(store, server, ids);
  assert.equal(store.getSnapshot().error, null);
  store.dispose();
});

// ---- 7. Smaller ones ----------------------------------------------------------------------

test('heartbeats notify no subscriber and keep the same snapshot', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store } = await opened(server, clock);
  const snap = store.getSnapshot();
  let told = 0;
  const off = store.subscribe(() => { told++; });
  for (let i = 0; i < 20; i++) {
    for (const p of server.pipes) p.write(heartbeat());
    await clock.wait(100);
  }
  assert.equal(told, 0, `${told} notifications for 20 heartbeats`);
  assert.equal(store.getSnapshot(), snap, 'the same snapshot object');
  off();
  store.dispose();
}));

test('an unknown event type is a loss; its seq is the server\'s, the next event applies', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store, ids } = await opened(server, clock);
  const before = store.getSnapshot().losses.length;
  const since = clock.now();
  server.session.emit({ type: 'future-event', payload: { x: 1 } });
  otherRun(server.session, 'after the unknown');
  await clock.wait(5_000);
  const s = store.getSnapshot();
  assert.equal(s.messages.at(-1).parts.at(-1).text, 'after the unknown');
  const losses = s.losses.slice(before);
  assert.equal(losses.length, 1, JSON.stringify(losses));
  assert.match(losses[0].message, /future-event/);
  assert.equal(server.count('state', since) + server.count('events', since), 0, 'no re-read');
  await stillUsable(store, server, ids, clock);
  store.dispose();
}));

test('a 1 MB session title is capped or refused with a typed error', () => onClock(async (clock) => {
  const server = new NativeServer();
  const { store } = await opened(server, clock);
  store.loadSessions();
  await clock.wait(1_000);
  let threw;
  let ok;
  try {
    ok = store.renameSession('s1', 't'.repeat(1_000_000));
  } catch (e) {
    threw = e;
  }
  await clock.wait(1_000);
  const renames = server.log.filter((r) => r.route === 'rename');
  if (threw) {
    assert.equal(threw.name, 'ChatStoreError');
    assert.equal(renames.length, 0);
  } else {
    for (const r of renames) assert.ok(r.body.title.length <= 200, `a title of ${r.body.title.length} characters sent`);
    const title = store.getSnapshot().sessions.items.find((i) => i.id === 's1')?.title ?? '';
    const refused = ok === false || store.getSnapshot().sessions.error !== null;
    assert.ok(refused || title.length <= 200, `the title shown is ${title.length} characters, and nothing said it was refused`);
  }
  store.dispose();
}));

test('addToolOutput on a call waiting for approval does not block its addToolApprovalResponse (pi mode)', async () => {
  // Approvals come over the pi projection's SSE routes (pi-native carries none): a turn whose
  // call `c1` waits for approval `ap1`, kept open.
  const posts = [];
  let ctl;
  const enc = new TextEncoder();
  const chunk = (type, seq, data) => enc.encode(`data: ${JSON.stringify({ type: `data-pi-${type}`, data: { ...data, seq } })}\n\n`);
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    posts.push({ path, method: init.method, body: init.body && JSON.parse(init.body) });
    if (path.endsWith('/chat')) {
      const body = new ReadableStream({ start(c) { ctl = c; } });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const store = new pkg.ChatStore({
    sessionId: 's', baseUrl: 'http://server.test', fetch, hydrate: false, persistSeq: false,
    capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false },
  });
  stores.push(store);
  store.send('delete notes.txt');
  await until(store, () => ctl !== undefined, 'the chat POST');
  ctl.enqueue(enc.encode(`data: ${JSON.stringify({ type: 'data-turn-start', data: { turnId: 'turn-1' } })}\n\n`));
  ctl.enqueue(chunk('message-start', 2, { messageId: 'a1', role: 'assistant' }));
  ctl.enqueue(chunk('tool-call-start', 3, { messageId: 'a1', toolCallId: 'c1', toolName: 'deleteFile' }));
  ctl.enqueue(chunk('tool-call-end', 4, { messageId: 'a1', toolCallId: 'c1', input: { path: 'notes.txt' } }));
  ctl.enqueue(chunk('tool-approval-request', 5, { messageId: 'a1', toolCallId: 'c1', approvalId: 'ap1', reason: 'deletes notes.txt' }));
  await until(store, (s) => s.pending.approvals.some((a) => a.approvalId === 'ap1'), 'the approval request');
  try {
    store.addToolOutput({ toolCallId: 'c1', output: { done: true } });
  } catch (e) {
    assert.equal(e.name, 'ChatStoreError', 'refused, if at all, with a typed error');
  }
  assert.equal(store.addToolApprovalResponse({ id: 'ap1', approved: true }), true, 'the approval is still taken');
  await realSleep(20);
  const approval = posts.find((p) => p.path.endsWith('/approval'));
  assert.ok(approval, `an approval POST: ${JSON.stringify(posts.map((p) => p.path))}`);
  assert.equal(approval.body.approvalId, 'ap1');
  assert.equal(approval.body.approved, true);
  assert.equal(store.getSnapshot().pending.approvals.length, 0);
  ctl.close();
});
