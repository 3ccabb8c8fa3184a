// The bench's runners, shared by Node (`run.mjs`) and the Chromium page (`browser.mjs`).
// No imports: the libraries under test are passed in, so the same code measures the Node
// build and the web build, and the AI SDK from node_modules or from a browser bundle.

export const CHUNK_SIZE = 16 * 1024;
export const BASE = 'http://bench.invalid';
export const AI_SDK_CAPS = { nativeFollowUp: false, aiSdkOwnsHistory: true };
export const PI_CAPS = { nativeFollowUp: true, aiSdkOwnsHistory: false };

export const now = () => performance.now();

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** A macrotask boundary (lets a pending fetch chain run to its end). */
export function macrotask() {
  if (typeof setImmediate === 'function') return new Promise((r) => setImmediate(r));
  return new Promise((r) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => r();
    ch.port2.postMessage(0);
  });
}

/** A body that hands out `bytes` in network-sized chunks, one per read, as a socket would. */
export function streamOf(bytes, chunkSize = CHUNK_SIZE, onEnd) {
  let off = 0;
  return new ReadableStream(
    {
      pull(c) {
        if (off >= bytes.length) {
          c.close();
          onEnd?.();
          return;
        }
        const end = Math.min(off + chunkSize, bytes.length);
        c.enqueue(bytes.subarray(off, end));
        off = end;
      },
    },
    { highWaterMark: 0 },
  );
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' };
const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * A `fetch` for both libraries: the chat POST (any POST whose path ends in `/chat`) answers
 * `chat()` (bytes, or a ReadableStream), a GET of `…/messages` answers `history`, anything else
 * (the history PUT) `{}`.
 */
export function makeFetch({ chat, history, chunkSize = CHUNK_SIZE, onEnd }) {
  return async (url, init = {}) => {
    const path = new URL(String(url), BASE).pathname;
    const method = (init.method ?? 'GET').toUpperCase();
    if (method === 'POST' && path.endsWith('/chat')) {
      const body = chat();
      const stream = body instanceof ReadableStream ? body : streamOf(body, chunkSize, onEnd);
      return new Response(stream, { status: 200, headers: SSE_HEADERS });
    }
    // Opening a session with a history asks whether a turn runs (SPEC §12): none does.
    if (method === 'GET' && path.endsWith('/stream')) return new Response(null, { status: 204 });
    if (method === 'GET' && path.endsWith('/messages') && history) {
      return new Response(streamOf(history, chunkSize), { status: 200, headers: JSON_HEADERS });
    }
    return new Response('{}', { status: 200, headers: JSON_HEADERS });
  };
}

/** Waits until `pred(snapshot)` holds (checked on every notification). */
function until(store, pred) {
  const s = store.getSnapshot();
  if (pred(s)) return Promise.resolve(s);
  return new Promise((resolve, reject) => {
    const unsub = store.subscribe(() => {
      const s = store.getSnapshot();
      if (s.status === 'error') {
        unsub();
        reject(new Error(`store error: ${s.error?.code} ${s.error?.message}`));
      } else if (pred(s)) {
        unsub();
        resolve(s);
      }
    });
  });
}

/** A store on the scripted fetch, hydrated from `history` (bytes) when given. */
export async function oursStore(ChatStore, { chat, history, caps = AI_SDK_CAPS, chunkSize, onEnd }) {
  const store = new ChatStore({
    sessionId: 'bench',
    baseUrl: BASE,
    capabilities: caps,
    hydrate: !!history,
    fetch: makeFetch({ chat, history, chunkSize, onEnd }),
  });
  if (history) await until(store, (s) => s.hydrated);
  return store;
}

/**
 * agent-chat-store: from `send` to status `ready`, with one subscriber that reads
 * `getSnapshot()` on every notification (what `useSyncExternalStore` does). With
 * `subscriber: false` nobody reads a snapshot until the body has ended.
 */
export async function runOurs(ChatStore, { bytes, history, caps = AI_SDK_CAPS, chunkSize, subscriber = true }) {
  let bodyEnded;
  const ended = new Promise((r) => (bodyEnded = r));
  const store = await oursStore(ChatStore, { chat: () => bytes, history, caps, chunkSize, onEnd: bodyEnded });
  let notifications = 0;
  const t0 = now();
  let snap;
  if (subscriber) {
    store.send('go');
    let busy = false;
    const done = until(store, (s) => {
      notifications++;
      if (s.status === 'submitted' || s.status === 'streaming') busy = true;
      return busy && s.status === 'ready';
    });
    snap = await done;
  } else {
    store.send('go');
    await ended;
    for (;;) {
      snap = store.getSnapshot();
      if (snap.status !== 'submitted' && snap.status !== 'streaming') break;
      await macrotask();
    }
  }
  const ms = now() - t0;
  if (snap.status !== 'ready') throw new Error(`ours ended ${snap.status}: ${snap.error?.message}`);
  const result = { ms, notifications, messages: snap.messages.length, last: snap.messages[snap.messages.length - 1] };
  store.dispose();
  return result;
}

/** The AI SDK's `Chat` + `DefaultChatTransport` (`@ai-sdk/react`'s `Chat`, as `useChat` uses it). */
export async function runAiChat(ai, { bytes, historyJson, chunkSize }) {
  const { Chat, DefaultChatTransport } = ai;
  const messages = historyJson ? JSON.parse(historyJson) : [];
  const chat = new Chat({
    id: 'bench',
    messages,
    transport: new DefaultChatTransport({ api: `${BASE}/api/chat`, fetch: makeFetch({ chat: () => bytes, chunkSize }) }),
  });
  let notifications = 0;
  // What useChat's useSyncExternalStore reads on each notification.
  const unsub = chat['~registerMessagesCallback'](() => {
    notifications++;
    void chat.messages;
  });
  const t0 = now();
  await chat.sendMessage({ text: 'go' });
  const ms = now() - t0;
  unsub();
  if (chat.status !== 'ready' || chat.error) throw new Error(`AI SDK Chat ended ${chat.status}: ${chat.error}`);
  return { ms, notifications, messages: chat.messages.length, last: chat.messages[chat.messages.length - 1] };
}

/** The AI SDK's SSE path alone: `parseJsonEventStream` → `readUIMessageStream`. */
export async function runAiRead(ai, { bytes, chunkSize }) {
  const { readUIMessageStream, parseJsonEventStream, uiMessageChunkSchema } = ai;
  const fetch = makeFetch({ chat: () => bytes, chunkSize });
  const t0 = now();
  const res = await fetch(`${BASE}/api/chat`, { method: 'POST' });
  const chunks = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(c, ctl) {
        if (!c.success) throw c.error;
        ctl.enqueue(c.value);
      },
    }),
  );
  let last;
  let updates = 0;
  for await (const m of readUIMessageStream({ stream: chunks, terminateOnError: true })) {
    last = m;
    updates++;
  }
  const ms = now() - t0;
  return { ms, notifications: updates, messages: 1, last };
}

/**
 * (f) `getSnapshot()` after one delta, with `history` hydrated: a turn is started, its stream
 * driven by hand, `warmDeltas` deltas fed first; then, `samples` times, one more delta is fed,
 * the notification awaited, and the next `getSnapshot()` timed. Counts the messages whose
 * object changed against the previous snapshot.
 */
export async function snapshotCost(ChatStore, { history, warmDeltas = 10, samples = 200, event, words }) {
  let ctl;
  const body = new ReadableStream({ start: (c) => (ctl = c) }, { highWaterMark: 0 });
  const store = await oursStore(ChatStore, { chat: () => body, history });
  let notified;
  let wait = new Promise((r) => (notified = r));
  const unsub = store.subscribe(() => {
    const r = notified;
    wait = new Promise((res) => (notified = res));
    r();
  });
  const ws = words(warmDeltas + samples);
  const head = [
    event({ type: 'start', messageId: 'snap-a' }),
    event({ type: 'start-step' }),
    event({ type: 'text-start', id: 't' }),
  ];
  store.send('go');
  for (const h of head) ctl.enqueue(h);
  // Bigger warm-ups go in network-sized batches.
  const enc = new TextEncoder();
  let batch = '';
  for (let i = 0; i < warmDeltas; i++) {
    batch += `data: ${JSON.stringify({ type: 'text-delta', id: 't', delta: ws[i] })}\n\n`;
    if (batch.length > CHUNK_SIZE || i === warmDeltas - 1) {
      ctl.enqueue(enc.encode(batch));
      batch = '';
    }
  }
  // Let everything so far be read and delivered.
  for (let i = 0; i < 20; i++) await macrotask();
  let prev = store.getSnapshot();
  const times = [];
  let minChanged = Infinity;
  let maxChanged = 0;
  const count = prev.messages.length;
  for (let i = 0; i < samples; i++) {
    const w = wait;
    ctl.enqueue(event({ type: 'text-delta', id: 't', delta: ws[warmDeltas + i] }));
    await w;
    const t0 = now();
    const snap = store.getSnapshot();
    times.push(now() - t0);
    let changed = 0;
    const a = prev.messages;
    const b = snap.messages;
    for (let j = 0; j < b.length; j++) if (a[j] !== b[j]) changed++;
    if (a.length !== b.length) changed += Math.abs(a.length - b.length);
    minChanged = Math.min(minChanged, changed);
    maxChanged = Math.max(maxChanged, changed);
    prev = snap;
  }
  unsub();
  ctl.close();
  store.dispose();
  return {
    medianUs: median(times) * 1000,
    p90Us: [...times].sort((x, y) => x - y)[Math.floor(times.length * 0.9)] * 1000,
    messages: count,
    changedMin: minChanged,
    changedMax: maxChanged,
    lastTextLength: prev.messages[prev.messages.length - 1]?.parts?.find((p) => p.type === 'text')?.text.length ?? 0,
  };
}

/** The text of a message's text parts (for checking that both libraries built the same). */
export function textOf(m) {
  return (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
}

/** The tool parts of a message, as `[type, toolCallId, state, input]` (for checking). */
export function toolsOf(m) {
  return (m?.parts ?? [])
    .filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool')
    .map((p) => [p.type, p.toolCallId, p.state, p.input]);
}
