// Limits and losses (issue 17), through the built package (pkg/, release wasm): a runaway
// answer stops at `limits.maxMessageChars` with a `LimitExceeded` error, what it showed kept
// and the store usable; an event over `maxEventBytes` is in `snapshot.losses`, and a lost
// tool result fails its tool part instead of leaving it waiting; characters of plane 16's
// last 2,048 code points (private use) come back as they went. ACS_PKG=dir: another build.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
const pkgDir = process.env.ACS_PKG || resolve(root, 'pkg');
let pkg;
before(async () => {
  pkg = await import(pathToFileURL(resolve(pkgDir, 'agent_chat_store.js')).href);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();
const sse = (o) => enc.encode(`data: ${typeof o === 'string' ? o : JSON.stringify(o)}\n\n`);

/** A store whose chat POST answers with a stream the test writes; other routes 404. */
function storeWithStream(options = {}) {
  let ctl;
  const requests = [];
  const body = new ReadableStream({ start(c) { ctl = c; } });
  const fetch = async (url, init = {}) => {
    requests.push(`${init.method ?? 'GET'} ${String(url).split('?')[0]}`);
    if (String(url).split('?')[0].endsWith('/chat')) {
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    return new Response('', { status: 404 });
  };
  const store = new pkg.ChatStore({
    sessionId: 's', capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true },
    hydrate: false, persistSeq: false, fetch, ...options,
  });
  return { store, requests, push: (o) => ctl.enqueue(sse(o)), end: () => { try { ctl.close(); } catch {} } };
}

async function until(store, pred, what) {
  for (let i = 0; i < 400; i++) {
    if (pred(store.getSnapshot())) return store.getSnapshot();
    await sleep(5);
  }
  assert.fail(`timed out waiting for ${what}: ${JSON.stringify(store.getSnapshot().status)}`);
}

test('a runaway answer stops at maxMessageChars with a typed error, what it showed kept', async () => {
  const { store, requests, push, end } = storeWithStream({ limits: { maxMessageChars: 10_000 } });
  store.send('go');
  push({ type: 'start', messageId: 'a' });
  push({ type: 'text-start', id: 't' });
  const piece = 'x'.repeat(1_000);
  for (let i = 0; i < 30; i++) push({ type: 'text-delta', id: 't', delta: piece });
  const snap = await until(store, (s) => s.status === 'error', 'the limit');
  assert.equal(snap.error.code, 'LimitExceeded');
  assert.equal(snap.error.field, 'limits.maxMessageChars');
  const text = snap.messages.at(-1).parts.at(-1);
  // (Its `state` stays as a stop leaves it in useChat; the status and error say it ended.)
  assert.ok(text.text.length > 10_000 && text.text.length <= 11_000, `kept ${text.text.length}`);
  assert.ok(requests.some((r) => r.startsWith('DELETE') && r.endsWith('/turn')), 'the server was told to stop');
  // Usable: the composer takes a new message.
  store.setDraft('next');
  assert.equal(store.getSnapshot().composer.canSend, true);
  end();
  store.dispose();
});

test('an oversized tool result fails its part and is in snapshot.losses', async () => {
  const { store, push, end } = storeWithStream({ limits: { maxEventBytes: 4_096 } });
  store.send('go');
  push({ type: 'start', messageId: 'a' });
  push({ type: 'tool-input-available', toolCallId: 'c1', toolName: 'ls', input: { path: '/' } });
  push({ type: 'tool-output-available', toolCallId: 'c1', output: { content: 'y'.repeat(10_000) } });
  push('not json at all');
  push({ type: 'text-start', id: 't' });
  push({ type: 'text-delta', id: 't', delta: 'after' });
  push({ type: 'text-end', id: 't' });
  push({ type: 'finish' });
  end();
  const snap = await until(store, (s) => s.status === 'ready' && s.messages.at(-1)?.parts.length >= 2, 'the turn');
  const tool = snap.messages.at(-1).parts.find((p) => p.toolCallId === 'c1');
  assert.equal(tool.state, 'output-error', 'never left waiting for an output that was dropped');
  assert.match(tool.errorText, /maxEventBytes/);
  assert.deepEqual(snap.losses.map((l) => [l.code, l.messageId, l.toolCallId]), [
    ['EventTooLarge', 'a', 'c1'],
    ['BadChunk', 'a', undefined],
  ]);
  assert.equal(snap.messages.at(-1).parts.at(-1).text, 'after', 'the stream went on');
  assert.ok(Object.isFrozen(snap.losses));
  store.dispose();
});

test('private-use characters of the marker range round-trip', async () => {
  const pua = '\u{10F800}\u{10FABC}\u{10FFFF}';
  const { store, push, end } = storeWithStream();
  store.send(`me ${pua}`);
  push({ type: 'start', messageId: 'a' });
  push({ type: 'text-start', id: 't' });
  push({ type: 'text-delta', id: 't', delta: `you ${pua}` });
  // A lone surrogate split from its pair over two deltas still joins, beside them.
  push(String.raw`{"type":"text-delta","id":"t","delta":" \ud83d"}`);
  push(String.raw`{"type":"text-delta","id":"t","delta":"\ude00"}`);
  push({ type: 'text-end', id: 't' });
  push({ type: 'finish' });
  end();
  const snap = await until(store, (s) => s.status === 'ready' && s.messages.length === 2, 'the answer');
  assert.equal(snap.messages[0].parts.at(-1).text, `me ${pua}`);
  assert.equal(snap.messages[1].parts.at(-1).text, `you ${pua} 😀`);
  store.dispose();
});
