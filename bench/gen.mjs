// The bench's inputs: deterministic SSE bodies (AI SDK UI message chunks and pi projection
// chunks, framed as the reference server frames them) and message histories. Generated once
// per scenario; every library then reads the very same bytes.
// No dependencies: runs in Node and in the browser page alike.

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which ' +
  'but have an they you were her she there been one all we their has would when if so no will ' +
  'more can out up about into than them some could time only other new these may then do first ' +
  'any my now such like our over man me even most made after also did many before must through ' +
  'naïve café — “quoted” données größe 東京 ✓'
).split(' ');

/** A deterministic PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` token-sized text deltas (a word and a space; now and then punctuation or a newline). */
export function words(n, seed = 1) {
  const r = rng(seed);
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const w = WORDS[Math.floor(r() * WORDS.length)];
    const x = r();
    out[i] = x < 0.04 ? `${w}.\n` : x < 0.1 ? `${w}, ` : `${w} `;
  }
  return out;
}

const enc = new TextEncoder();

function frame(chunks) {
  let s = '';
  for (const c of chunks) s += `data: ${JSON.stringify(c)}\n\n`;
  s += 'data: [DONE]\n\n';
  return enc.encode(s);
}

/** (a) One assistant message of `n` text deltas. */
export function textChunks(n, { seed = 1, messageId = 'msg-a' } = {}) {
  const chunks = [
    { type: 'start', messageId },
    { type: 'start-step' },
    { type: 'text-start', id: 'txt-0' },
  ];
  for (const d of words(n, seed)) chunks.push({ type: 'text-delta', id: 'txt-0', delta: d });
  chunks.push({ type: 'text-end', id: 'txt-0' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'stop' });
  return chunks;
}

/** A JSON value whose text is at least `bytes` long: a realistic tool input (a file list). */
export function toolInput(bytes, seed = 7) {
  const r = rng(seed);
  const files = [];
  const value = { query: 'find the callers of parse_chunk', root: 'src/', files };
  let len = JSON.stringify(value).length;
  for (let i = 0; len < bytes; i++) {
    const f = {
      path: `src/module_${i}/file_${Math.floor(r() * 1000)}.rs`,
      line: Math.floor(r() * 5000),
      score: Math.round(r() * 1000) / 1000,
      tags: [WORDS[i % 40], WORDS[(i * 7) % 40]],
      excerpt: words(4, seed + i).join('').trim(),
      open: r() < 0.5,
    };
    files.push(f);
    len += JSON.stringify(f).length + 1;
  }
  return value;
}

/** Splits `text` into exactly `n` pieces of (almost) equal length (UTF-16 units; ASCII here). */
export function split(text, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n)));
  }
  return out;
}

/** Tool calls: `calls` calls, each an input of `bytes` bytes streamed in `deltas` deltas. */
export function toolChunks(calls, deltas, bytes, { messageId = 'msg-t' } = {}) {
  const chunks = [{ type: 'start', messageId }, { type: 'start-step' }];
  for (let c = 0; c < calls; c++) {
    const toolCallId = `call-${c}`;
    const toolName = c % 2 ? 'searchCode' : 'readFiles';
    const input = toolInput(bytes, 7 + c);
    const text = JSON.stringify(input);
    chunks.push({ type: 'tool-input-start', toolCallId, toolName });
    for (const d of split(text, deltas)) chunks.push({ type: 'tool-input-delta', toolCallId, inputTextDelta: d });
    chunks.push({ type: 'tool-input-available', toolCallId, toolName, input });
  }
  chunks.push({ type: 'finish-step' }, { type: 'finish', finishReason: 'tool-calls' });
  return chunks;
}

/** (e) A pi-mode turn as the reference server frames it, with `n` `data-pi-text-delta`s. */
export function piChunks(n, { seed = 1, turnId = 'turn-1', userId = 'u-1', assistantId = 'a-1' } = {}) {
  let seq = 0;
  const pi = (type, data) => ({ type: `data-${type}`, data: { seq: ++seq, ...data } });
  const deltas = words(n, seed);
  const text = deltas.join('');
  const chunks = [
    { type: 'data-pi-mode', data: { enabled: true } },
    { type: 'data-turn-start', data: { turnId } },
    { type: 'start', messageId: turnId },
    pi('pi-agent-start', {}),
    pi('pi-message-start', { messageId: userId, role: 'user', text: 'go' }),
    pi('pi-message-end', { messageId: userId, role: 'user', text: 'go' }),
    pi('pi-message-start', { messageId: assistantId, role: 'assistant' }),
    pi('pi-text-start', { messageId: assistantId, partId: '0' }),
  ];
  for (const delta of deltas) chunks.push(pi('pi-text-delta', { messageId: assistantId, partId: '0', delta }));
  chunks.push(
    pi('pi-text-end', { messageId: assistantId, partId: '0', text }),
    pi('pi-message-end', { messageId: assistantId, role: 'assistant', text, stopReason: 'stop' }),
    pi('pi-agent-end', {}),
    { type: 'finish', finishReason: 'stop' },
  );
  return chunks;
}

/** A canonical history of `count` messages (user/assistant alternating) of `chars` chars each. */
export function history(count, chars = 160, seed = 3) {
  const r = rng(seed);
  const messages = [];
  for (let i = 0; i < count; i++) {
    let text = '';
    while (text.length < chars) text += WORDS[Math.floor(r() * 40)] + ' ';
    text = text.slice(0, chars);
    const user = i % 2 === 0;
    messages.push({
      id: `h-${i}`,
      role: user ? 'user' : 'assistant',
      parts: user ? [{ type: 'text', text }] : [{ type: 'text', text, state: 'done' }],
    });
  }
  return messages;
}

/** The messages-route answer for a history. */
export function historyBody(messages) {
  return enc.encode(JSON.stringify({ messages }));
}

export { frame };

/** One SSE event's bytes (for driving a stream by hand). */
export function event(chunk) {
  return enc.encode(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** Every scenario's bytes, as named files. `scale` shrinks the counts for a quick run. */
export function scenarios(scale = 1) {
  const n = (x) => Math.max(1, Math.round(x * scale));
  return {
    a: { file: 'a-text-100k.sse', deltas: n(100_000), bytes: () => frame(textChunks(n(100_000))) },
    a1k: { file: 'a-text-1k.sse', deltas: n(1_000), bytes: () => frame(textChunks(n(1_000))) },
    b: { file: 'b-tools-50x200.sse', deltas: 50 * n(200), bytes: () => frame(toolChunks(50, n(200), n(200) * 8)) },
    d2500: { file: 'd-tool-2500.sse', deltas: n(2_500), bytes: () => frame(toolChunks(1, n(2_500), n(2_500) * 4)) },
    d: { file: 'd-tool-5000.sse', deltas: n(5_000), bytes: () => frame(toolChunks(1, n(5_000), n(5_000) * 4)) },
    d10000: { file: 'd-tool-10000.sse', deltas: n(10_000), bytes: () => frame(toolChunks(1, n(10_000), n(10_000) * 4)) },
    e: { file: 'e-pi-100k.sse', deltas: n(100_000), bytes: () => frame(piChunks(n(100_000))) },
  };
}
