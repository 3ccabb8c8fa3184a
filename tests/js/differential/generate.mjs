// A seeded generator of UI message streams for the differential test: mostly valid chunks of
// every type in `ai`'s `uiMessageChunkSchema`, drawn from small id pools so that deltas, ends,
// outputs and approvals meet their starts (or, sometimes, do not), plus a few chunks the
// schema rejects.

/** mulberry32: a small, fast, seedable PRNG. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
  };
  return r;
}

const WORDS = ['a', 'hé', 'x y', '', '"q"', '\\', 'line\n', 'ü', '😀', '{', '}', '0'];
const KEYS = ['a', 'b', 'c', 'nested', 'list', 'constructor', 'toString', '0', '1'];

function text(r) {
  let s = '';
  for (let i = r.int(4); i >= 0; i--) s += r.pick(WORDS);
  return s;
}

/** A JSON value, nested up to `depth`. */
export function json(r, depth = 2) {
  const k = r.int(depth > 0 ? 8 : 5);
  switch (k) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, 1, -1, 12, 1.5, -0.25, 1e21, 1e-7, 123456789]);
    case 3:
    case 4:
      return text(r);
    case 5:
      return Array.from({ length: r.int(3) }, () => json(r, depth - 1));
    default: {
      const o = {};
      for (let i = r.int(4); i > 0; i--) o[r.pick(KEYS)] = json(r, depth - 1);
      return o;
    }
  }
}

/** A JSON object whose keys avoid the ones the `ai` package's secure JSON parse refuses. */
function object(r, depth = 2) {
  const o = {};
  for (let i = r.int(3); i > 0; i--) o[r.pick(['a', 'b', 'nested', 'list'])] = json(r, depth - 1);
  return o;
}

const providerMetadata = (r) => {
  const o = {};
  for (let i = r.int(3); i > 0; i--) o[r.pick(['openai', 'anthropic', 'p'])] = object(r, 2);
  return o;
};

/** Sets `key` to `make(r)` with probability `p`. */
function maybe(r, o, key, make, p = 0.3) {
  if (r.chance(p)) o[key] = make(r);
  return o;
}

// No astral characters in metadata: merging into a string metadata spreads it by UTF-16 code
// units, and half a surrogate pair is not a Rust string (ours becomes U+FFFD).
const metadata = (r) => JSON.parse(JSON.stringify(r.chance(0.7) ? json(r, 3) : object(r, 3)).replaceAll('😀', 'ö'));

const FINISH = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'interrupted', 'other'];
const citation = (r) => {
  const source = r.chance(0.5)
    ? { type: 'source', sourceType: 'url', id: 's1', url: 'https://x', ...(r.chance(0.5) ? { title: 'T' } : {}) }
    : { type: 'source', sourceType: 'document', id: 's2', mediaType: 'text/plain', title: 'D', ...(r.chance(0.5) ? { filename: 'f' } : {}) };
  if (r.chance(0.3)) source.extra = 1; // stripped by the schema's output
  const c = { source };
  maybe(r, c, 'startIndex', (r) => r.int(10));
  maybe(r, c, 'endIndex', (r) => r.int(10));
  maybe(r, c, 'citedText', text);
  if (r.chance(0.2)) c.unknown = true;
  return c;
};

/**
 * One stream: `{chunks, options}`. `options` may name a `messageId`; a caller may add a
 * `lastMessage`.
 */
export function generateStream(r) {
  const ids = { text: ['t1', 't2'], reasoning: ['r1', 'r2'], call: ['c1', 'c2', 'c3'], approval: ['a1', 'a2'] };
  const tools = ['search', 'weather', 'a-b'];
  // The JSON text each tool call's input deltas spell out, and how far they got.
  const plans = new Map();
  // What is open so far, so that most chunks meet their starts (and a few do not).
  const open = { text: new Set(), reasoning: new Set(), call: new Set(), approval: new Set() };
  const idFor = (pool) => (open[pool].size > 0 && r.chance(0.92) ? r.pick([...open[pool]]) : r.pick(ids[pool]));
  const opened = (pool, id) => (open[pool].add(id), id);
  const chunks = [];
  const length = 1 + r.int(28);
  const pm = (o) => maybe(r, o, 'providerMetadata', providerMetadata, 0.25);
  const toolFields = (o) => {
    maybe(r, o, 'providerExecuted', (r) => r.chance(0.5), 0.2);
    pm(o);
    maybe(r, o, 'toolMetadata', object, 0.2);
    maybe(r, o, 'dynamic', (r) => r.chance(0.5), 0.3);
    return o;
  };
  const make = {
    start: () => maybe(r, maybe(r, { type: 'start' }, 'messageId', (r) => r.pick(['m1', 'm2', ''])), 'messageMetadata', metadata),
    'start-step': () => ({ type: 'start-step' }),
    'finish-step': () => ({ type: 'finish-step' }),
    'reset-step': () => ({ type: 'reset-step' }),
    finish: () => maybe(r, maybe(r, { type: 'finish' }, 'finishReason', (r) => r.pick(FINISH), 0.6), 'messageMetadata', metadata),
    abort: () => maybe(r, { type: 'abort' }, 'reason', text),
    error: () => ({ type: 'error', errorText: text(r) }),
    'message-metadata': () => ({ type: 'message-metadata', messageMetadata: metadata(r) }),
    'text-start': () => pm({ type: 'text-start', id: opened('text', r.pick(ids.text)) }),
    'text-delta': () => pm({ type: 'text-delta', id: idFor('text'), delta: text(r) }),
    'text-end': () => pm(maybe(r, { type: 'text-end', id: idFor('text') }, 'citations', (r) => Array.from({ length: 1 + r.int(2) }, () => citation(r)))),
    'reasoning-start': () => pm({ type: 'reasoning-start', id: opened('reasoning', r.pick(ids.reasoning)) }),
    'reasoning-delta': () => pm({ type: 'reasoning-delta', id: idFor('reasoning'), delta: text(r) }),
    'reasoning-end': () => pm({ type: 'reasoning-end', id: idFor('reasoning') }),
    custom: () => pm({ type: 'custom', kind: r.pick(['openai.thing', 'p.k']) }),
    'tool-input-start': () => {
      const toolCallId = opened('call', r.pick(ids.call));
      const c = toolFields({ type: 'tool-input-start', toolCallId, toolName: r.pick(tools) });
      maybe(r, c, 'inputEncoding', (r) => r.pick(['json', 'text']), 0.3);
      maybe(r, c, 'title', text, 0.3);
      const source = c.inputEncoding === 'text' ? text(r) + text(r) : JSON.stringify(json(r, 3), null, r.chance(0.3) ? 1 : 0);
      // By code points: a delta never splits a surrogate pair (Rust strings cannot hold half).
      plans.set(toolCallId, { text: Array.from(r.chance(0.1) ? '{"a": tru' : source), at: 0 });
      return c;
    },
    'tool-input-delta': () => {
      const toolCallId = idFor('call');
      const plan = plans.get(toolCallId);
      let inputTextDelta;
      if (plan && plan.at < plan.text.length) {
        const end = Math.min(plan.text.length, plan.at + 1 + r.int(8));
        inputTextDelta = plan.text.slice(plan.at, end).join('');
        plan.at = end;
      } else inputTextDelta = r.pick(['', '}', ' ', 'x', ',"z":']);
      return { type: 'tool-input-delta', toolCallId, inputTextDelta };
    },
    'tool-input-available': () =>
      maybe(r, toolFields({ type: 'tool-input-available', toolCallId: opened('call', idFor('call')), toolName: r.pick(tools), input: json(r, 2) }), 'title', text, 0.3),
    'tool-input-error': () =>
      maybe(r, toolFields({ type: 'tool-input-error', toolCallId: opened('call', idFor('call')), toolName: r.pick(tools), input: json(r, 1), errorText: text(r) }), 'title', text, 0.3),
    'tool-approval-request': () => {
      const c = { type: 'tool-approval-request', approvalId: opened('approval', r.pick(ids.approval)), toolCallId: idFor('call') };
      maybe(r, c, 'approvalDescriptor', (r) => json(r, 1));
      maybe(r, c, 'inputSchemaInput', (r) => json(r, 1));
      maybe(r, c, 'reason', text);
      maybe(r, c, 'isAutomatic', (r) => r.chance(0.5));
      maybe(r, c, 'signature', text);
      return c;
    },
    'tool-approval-response': () => {
      const c = { type: 'tool-approval-response', approvalId: idFor('approval'), approved: r.chance(0.5) };
      maybe(r, c, 'reason', text);
      maybe(r, c, 'providerExecuted', (r) => r.chance(0.5), 0.2);
      return pm(c);
    },
    'tool-output-available': () =>
      maybe(r, toolFields({ type: 'tool-output-available', toolCallId: idFor('call'), output: json(r, 2) }), 'preliminary', (r) => r.chance(0.5), 0.3),
    'tool-output-error': () => toolFields({ type: 'tool-output-error', toolCallId: idFor('call'), errorText: text(r) }),
    'tool-output-denied': () => ({ type: 'tool-output-denied', toolCallId: idFor('call') }),
    'source-url': () => pm(maybe(r, { type: 'source-url', sourceId: 's', url: 'https://example.invalid/' }, 'title', text)),
    'source-document': () => pm(maybe(r, { type: 'source-document', sourceId: 'd', mediaType: 'text/plain', title: text(r) }, 'filename', text)),
    file: () => pm({ type: 'file', url: 'data:text/plain;base64,eA==', mediaType: 'text/plain' }),
    'reasoning-file': () => pm({ type: 'reasoning-file', url: 'https://example.invalid/r.png', mediaType: 'image/png' }),
    'steering-message': () => ({
      type: 'steering-message',
      id: r.pick(['u1', 'u2']),
      parts: Array.from({ length: r.int(3) }, () =>
        r.chance(0.6) ? { type: 'text', text: text(r) } : maybe(r, { type: 'file', mediaType: 'image/png', url: 'u' }, 'filename', text),
      ),
    }),
    data: () => {
      const c = { type: r.pick(['data-weather', 'data-status', 'data-pi-text-delta']), data: json(r, 2) };
      maybe(r, c, 'id', (r) => r.pick(['d1', 'd2']), 0.6);
      maybe(r, c, 'transient', (r) => r.chance(0.5), 0.3);
      return c;
    },
  };
  // Weights: the streaming chunks come often, so that deltas meet their starts.
  const weighted = Object.entries({
    start: 3, 'start-step': 4, 'finish-step': 2, 'reset-step': 1, finish: 2, abort: 1, error: 1, 'message-metadata': 3,
    'text-start': 5, 'text-delta': 8, 'text-end': 4, 'reasoning-start': 3, 'reasoning-delta': 4, 'reasoning-end': 2,
    custom: 1, 'tool-input-start': 5, 'tool-input-delta': 10, 'tool-input-available': 4, 'tool-input-error': 2,
    'tool-approval-request': 3, 'tool-approval-response': 3, 'tool-output-available': 4, 'tool-output-error': 2,
    'tool-output-denied': 1, 'source-url': 1, 'source-document': 1, file: 1, 'reasoning-file': 1, 'steering-message': 1, data: 5,
  }).flatMap(([k, w]) => Array(w).fill(k));
  const needs = {
    'text-delta': 'text', 'text-end': 'text', 'reasoning-delta': 'reasoning', 'reasoning-end': 'reasoning',
    'tool-input-delta': 'call', 'tool-output-available': 'call', 'tool-output-error': 'call', 'tool-output-denied': 'call',
    'tool-approval-request': 'call', 'tool-approval-response': 'approval',
  };
  const starter = { text: 'text-start', reasoning: 'reasoning-start', call: 'tool-input-start', approval: 'tool-approval-request' };
  for (let i = 0; i < length; i++) {
    let kind = r.pick(weighted);
    // Mostly start what a chunk needs first.
    while (needs[kind] && open[needs[kind]].size === 0 && r.chance(0.9)) kind = starter[needs[kind]];
    const c = make[kind]();
    if (kind === 'text-end' || kind === 'reasoning-end') open[kind.split('-')[0]].delete(c.id);
    if (kind === 'reset-step') (open.text.clear(), open.reasoning.clear());
    if (r.chance(0.1)) c.unknownKey = json(r, 1); // the schema's objects are loose
    chunks.push(r.chance(0.012) ? invalid(r, c) : c);
  }
  const options = r.chance(0.3) ? { messageId: r.pick(['m1', 'n1']) } : {};
  return { chunks, options };
}

/** A chunk the schema rejects, made from a valid one. */
function invalid(r, c) {
  const keys = Object.keys(c).filter((k) => k !== 'type');
  switch (r.int(6)) {
    case 0:
      return { ...c, type: r.pick(['text-stream', 'tool-call', 'data', 'finish-message']) };
    case 1: {
      if (keys.length === 0) return { type: 'message-metadata' };
      const d = { ...c };
      delete d[r.pick(keys)];
      return d;
    }
    case 2:
      return keys.length ? { ...c, [r.pick(keys)]: r.pick([7, null, [], 'x', {}]) } : { ...c, type: 7 };
    case 3:
      return { ...c, providerMetadata: r.pick([{ p: 1 }, { p: [] }, [], 'x', null]) };
    case 4:
      return r.pick([{ type: 'finish', finishReason: 'done' }, { type: 'tool-input-start', toolCallId: 'c1', toolName: 't', inputEncoding: 'xml' }, { type: 'start', messageId: 5 }]);
    default:
      return r.pick([null, 5, 'text-start', [], {}]);
  }
}
