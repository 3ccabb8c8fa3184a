// Node tests of the built npm package (pkg/, release build through wasm-opt): installed into an
// empty folder the way a user installs it, then used through its public entry points.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { installedPackage } from './installed.mjs';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const fixtures = resolve(root, 'tests/fixtures/legacy-server');
let pkg; // the installed package's module

before(async () => {
  pkg = await installedPackage('install');
});

const sseChunks = (bytes) => {
  const d = new pkg.SseDecoder();
  const out = [...d.push(bytes), ...d.finish()];
  return out.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
};
const withoutIds = (ms) => ms.map(({ id, ...rest }) => rest);

test('npm install ./pkg into an empty folder, then replayPiStream from an ESM script', () => {
  assert.equal(typeof pkg.replayPiStream, 'function');
  assert.equal(typeof pkg.ChatStore, 'function');
});

test('replayPiStream gives every legacy trace its canonical history', () => {
  const traces = readdirSync(fixtures).filter((f) => f.endsWith('.sse'));
  assert.equal(traces.length, 3);
  const canonical = {
    'trace-prompt-followup.sse': JSON.parse(readFileSync(join(fixtures, 'trace-prompt-followup.messages.json'), 'utf8')).messages,
    'trace-stop.sse': JSON.parse(readFileSync(join(fixtures, 'trace-stop.http.txt'), 'utf8').split('\n').find((l) => l.startsWith('{"messages"'))).messages,
  };
  for (const t of traces) {
    const { messages } = pkg.replayPiStream(sseChunks(readFileSync(join(fixtures, t))));
    if (canonical[t]) assert.deepEqual(withoutIds(messages), withoutIds(canonical[t]), t);
    else {
      assert.equal(messages.length, 2, t);
      assert.equal(messages[0].parts[0].text, '[ERR] trigger provider error');
    }
  }
});

test('SseDecoder gives the same events for every split point', () => {
  const body = readFileSync(join(fixtures, 'trace-stop.sse'));
  const whole = new pkg.SseDecoder().push(body);
  for (let cut = 0; cut <= body.length; cut += 7) {
    const d = new pkg.SseDecoder();
    assert.deepEqual([...d.push(body.subarray(0, cut)), ...d.push(body.subarray(cut)), ...d.finish()], [...whole]);
  }
});

test('replayUiMessageStream builds the message and reports a protocol violation', () => {
  const ok = pkg.replayUiMessageStream([
    { type: 'start', messageId: 'm1' },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Hel' },
    { type: 'text-delta', id: 't', delta: 'lo' },
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: 'stop' },
  ]);
  assert.deepEqual(ok, { message: { id: 'm1', role: 'assistant', parts: [{ type: 'text', text: 'Hello', state: 'done' }] }, finishReason: 'stop' });
  const bad = pkg.replayUiMessageStream([{ type: 'text-start', id: 'a' }, { type: 'text-delta', id: 'b', delta: 'x' }], { messageId: 'n' });
  assert.match(bad.error.message, /missing text part with ID "b"/);
  assert.equal(bad.message.parts.length, 1, 'the message keeps what it had');
});

/** A fetch that answers from a script, streaming bodies chunk by chunk. */
function scriptedFetch(routes) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, method: init.method, body: init.body && JSON.parse(init.body) });
    const path = new URL(url).pathname;
    const r = routes(path, init) || { status: 404, body: '' };
    const chunks = Array.isArray(r.body) ? r.body : [r.body];
    const stream = new ReadableStream({
      async pull(c) {
        const next = chunks.shift();
        if (next === undefined) return c.close();
        await new Promise((res) => setTimeout(res, 2));
        c.enqueue(new TextEncoder().encode(next));
      },
    });
    return new Response(r.status === 204 ? null : stream, { status: r.status, headers: r.headers || {} });
  };
  return { fetch, calls };
}

const pick = (o, ...keys) => Object.fromEntries(keys.map((k) => [k, o[k]]));

const until = async (store, pred) => {
  for (let i = 0; i < 500; i++) {
    const s = store.getSnapshot();
    if (pred(s)) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('timed out: ' + JSON.stringify(store.getSnapshot()));
};

test('ChatStore in Node: a streamed turn, frozen identity-stable snapshots, no prototype pollution', async () => {
  const sse = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const { fetch, calls } = scriptedFetch((path) => {
    if (path.endsWith('/capabilities')) return { status: 200, body: '{"nativeFollowUp":false,"aiSdkOwnsHistory":true}' };
    if (path.endsWith('/messages')) return { status: 200, body: '{"messages":[]}' };
    if (path.endsWith('/chat')) {
      return {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: [
          sse({ type: 'start', messageId: 'a1' }),
          sse({ type: 'text-start', id: 't' }) + sse({ type: 'text-delta', id: 't', delta: 'Hi' }),
          sse({ type: 'data-weather', id: 'w', data: { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } }, temp: 3 } }).replace('"temp"', '"__proto__":{"polluted":true},"temp"'),
          sse({ type: 'tool-input-available', toolCallId: 'c', toolName: 'x', input: {} }),
          sse({ type: 'tool-output-available', toolCallId: 'c', output: JSON.parse('{"__proto__":{"polluted":true},"ok":1}') }),
          'data: {"type":"text-delta","id":"t","delta":" there"}\n\n',
          sse({ type: 'text-end', id: 't' }) + sse({ type: 'finish' }) + 'data: [DONE]\n\n',
        ],
      };
    }
    if (path.endsWith('/messages')) return { status: 204, body: '' };
  });
  const data = [];
  const store = new pkg.ChatStore({ baseUrl: 'http://server.test', sessionId: 's1', fetch, onData: (d) => data.push(d) });
  let notes = 0;
  const unsubscribe = store.subscribe(() => { notes++; store.getSnapshot(); });
  const loaded = await until(store, (s) => s.capabilitiesLoaded && s.hydrated);
  assert.equal(store.getSnapshot(), loaded, 'same object while nothing changes');
  assert.ok(Object.isFrozen(loaded) && Object.isFrozen(loaded.composer));
  // The policy is the store's: idle, a text message may go, as a turn; the empty draft may not.
  assert.equal(loaded.busy, false);
  assert.deepEqual(pick(loaded.composer, 'canSend', 'canSendText', 'followUp', 'textHint'), { canSend: false, canSendText: true, followUp: false, textHint: null });
  assert.deepEqual({ ...store.submit() }, { kind: 'blocked', reason: 'empty', hint: 'Nothing to send.' });
  store.setDraft('hello');
  assert.deepEqual({ ...store.submit() }, { kind: 'sent' });
  assert.equal(store.getSnapshot().composer.draft, '', 'draft cleared once accepted');
  // `busy` is the store's word for "a turn is on its way" (Stop applies), in both busy states;
  // until the answer shows, `awaitingAnswer`. Without native follow-ups a busy send is refused.
  const sent = store.getSnapshot();
  assert.deepEqual(pick(sent, 'status', 'busy', 'awaitingAnswer', 'canEdit', 'canRegenerate'), { status: 'submitted', busy: true, awaitingAnswer: true, canEdit: false, canRegenerate: false });
  assert.deepEqual(pick(sent.composer, 'canSendText', 'followUp', 'textHint'), { canSendText: false, followUp: false, textHint: 'Wait for the current response to finish.' });
  assert.deepEqual({ ...store.send('more') }, { kind: 'blocked', reason: 'busy', hint: 'Wait for the current response to finish.' });
  const streaming = await until(store, (s) => s.status === 'streaming');
  assert.deepEqual(pick(streaming, 'busy', 'awaitingAnswer'), { busy: true, awaitingAnswer: false });
  const done = await until(store, (s) => s.status === 'ready' && s.messages.length === 2);
  assert.deepEqual(pick(done, 'busy', 'awaitingAnswer', 'canEdit', 'canRegenerate'), { busy: false, awaitingAnswer: false, canEdit: true, canRegenerate: true });
  assert.equal(done.messages[1].parts[0].text, 'Hi there');
  // Identity: the user message object is reused across snapshots.
  const before = store.getSnapshot().messages[0];
  store.setDraft('x');
  assert.equal(store.getSnapshot().messages[0], before);
  assert.ok(notes >= 1);
  // Server JSON never reaches a prototype.
  const dataPart = done.messages[1].parts.find((p) => p.type === 'data-weather');
  assert.equal(Object.getPrototypeOf(dataPart.data), Object.prototype);
  assert.equal({}.polluted, undefined);
  assert.equal(Object.prototype.polluted, undefined);
  const tool = done.messages[1].parts.find((p) => p.type === 'tool-x');
  assert.equal(Object.getPrototypeOf(tool.output), Object.prototype);
  assert.ok(Object.hasOwn(tool.output, '__proto__'), '__proto__ stays plain data');
  assert.equal(data.length, 1);
  // The completed turn was stored (AI SDK mode).
  assert.ok(calls.some((c) => c.method === 'PUT' && c.url.endsWith('/api/v1/agent/chat/s1/messages')));
  const chatCall = calls.find((c) => c.url.endsWith('/api/v1/agent/chat'));
  assert.equal(chatCall.body.sessionId, 's1');
  assert.equal(chatCall.body.trigger, 'submit-message');
  assert.equal(chatCall.body.messages.length, 1);
  unsubscribe();
  store.dispose();
});

test('ChatStore errors are Errors with a stable code; bad input does not break the store', async () => {
  assert.throws(() => new pkg.ChatStore({}), (e) => e instanceof Error && e.code === 'Validation');
  const { fetch } = scriptedFetch((path) => {
    // (A 409 turn_already_active is no failure since SPEC §6's amendment: it attaches.)
    if (path.endsWith('/chat')) return { status: 503, body: '{"error":{"code":"overloaded","message":"try again later"}}' };
    return { status: 404, body: '' };
  });
  const errors = [];
  const store = new pkg.ChatStore({ baseUrl: 'http://server.test', sessionId: 's2', fetch, onError: (e) => errors.push(e) });
  store.subscribe(() => {}); // `new ChatStore` does no IO: the first subscribe starts it, as a UI's would.
  await until(store, (s) => s.capabilitiesLoaded);
  store.send('hi');
  const s = await until(store, (s) => s.status === 'error');
  assert.ok(s.error instanceof Error);
  assert.equal(s.error.code, 'Server');
  assert.equal(s.error.serverCode, 'overloaded');
  assert.equal(s.error.status, 503);
  assert.equal(s.error.message, 'try again later');
  assert.equal(errors[0].code, 'Server');
  assert.equal(s.messages.length, 1, 'the user message is kept');
  assert.deepEqual({ ...store.send('') }, { kind: 'blocked', reason: 'empty', hint: 'Nothing to send.' });
  store.dispose();
});
