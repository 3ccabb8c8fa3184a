// Hand-written streams for the differential test: every chunk type of `ai` 7.0.173's
// `uiMessageChunkSchema`, and the behaviours of its stream processor that are easy to get
// wrong. Each case is `{name, chunks, options?}`; `options.lastMessage` may be a function of
// the oracle (an assistant message built by the `ai` package from other chunks).

const text = (id, ...deltas) => [
  { type: 'text-start', id },
  ...deltas.map((delta) => ({ type: 'text-delta', id, delta })),
  { type: 'text-end', id },
];
const pm = (v) => ({ p: { v } });

const toolCall = (toolCallId, toolName, extra = {}) => [
  { type: 'tool-input-start', toolCallId, toolName, ...extra },
  { type: 'tool-input-delta', toolCallId, inputTextDelta: '{"city":"Par' },
  { type: 'tool-input-delta', toolCallId, inputTextDelta: 'is","n":1' },
  { type: 'tool-input-available', toolCallId, toolName, input: { city: 'Paris', n: 1 }, ...extra },
];

export const cases = [
  // start
  { name: 'start with messageId and metadata', chunks: [{ type: 'start', messageId: 'm1', messageMetadata: { a: 1 } }] },
  { name: 'start without id keeps the given id', chunks: [{ type: 'start' }, ...text('t', 'x')], options: { messageId: 'given' } },
  { name: 'start with the same id does not reset', chunks: [...text('t', 'x'), { type: 'start', messageId: 'given' }], options: { messageId: 'given' } },
  { name: 'a second start with a new id renames the message (starts it over with the reset)', chunks: [{ type: 'start', messageId: 'm1', messageMetadata: { a: 1 } }, ...text('t', 'x'), { type: 'start', messageId: 'm2' }, ...text('u', 'y')] },
  { name: 'start with an empty id is an id', chunks: [...text('t', 'x'), { type: 'start', messageId: '' }], options: { messageId: 'given' } },
  { name: 'parts before the first start are kept when it names the message (dropped with the reset)', chunks: [...text('t', 'x'), { type: 'start', messageId: 'm1' }, { type: 'text-delta', id: 't', delta: 'y' }] },
  // steps
  { name: 'start-step adds a step-start part, also as the last chunk', chunks: [{ type: 'start-step' }, ...text('t', 'a'), { type: 'finish-step' }, { type: 'start-step' }] },
  { name: 'finish-step leaves active parts open', chunks: [{ type: 'start-step' }, { type: 'text-start', id: 't' }, { type: 'finish-step' }, { type: 'start-step' }, { type: 'text-delta', id: 't', delta: 'late' }, { type: 'text-end', id: 't' }] },
  { name: 'reset-step removes the current step and forgets active parts', chunks: [{ type: 'start-step' }, ...text('a', 'keep'), { type: 'start-step' }, { type: 'text-start', id: 'b' }, { type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, { type: 'reset-step' }, { type: 'text-delta', id: 'b', delta: 'x' }] },
  { name: 'reset-step without a step-start removes everything', chunks: [...text('a', 'x'), { type: 'reset-step' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{' }] },
  // finish, abort, error, metadata
  { name: 'finish with reason and metadata', chunks: [{ type: 'start', messageMetadata: { a: { b: 1, c: [1, 2] } } }, { type: 'finish', finishReason: 'stop', messageMetadata: { a: { c: [3] }, d: null } }] },
  { name: 'abort changes nothing', chunks: [...text('t', 'x'), { type: 'abort', reason: 'user' }, ...text('u', 'y')] },
  { name: 'an error chunk is not a violation: processing goes on', chunks: [...text('t', 'x'), { type: 'error', errorText: 'boom' }, ...text('u', 'y')] },
  { name: 'message-metadata merges deeply and replaces arrays', chunks: [{ type: 'message-metadata', messageMetadata: { a: { x: 1, y: [1, 2] }, s: 'k' } }, { type: 'message-metadata', messageMetadata: { a: { y: [3], z: { q: 1 } } } }, { type: 'message-metadata', messageMetadata: null }] },
  { name: 'message-metadata skips constructor, __proto__-like keys when merging', chunks: [{ type: 'message-metadata', messageMetadata: { a: 1, constructor: 1 } }, { type: 'message-metadata', messageMetadata: { constructor: 2, prototype: 3, toString: 4 } }] },
  { name: 'metadata: an array base is spread into an object', chunks: [{ type: 'message-metadata', messageMetadata: [1, { a: 1 }] }, { type: 'message-metadata', messageMetadata: { 1: { b: 2 }, length: 9 } }] },
  { name: 'metadata: a string patch spreads its characters', chunks: [{ type: 'message-metadata', messageMetadata: { a: 1 } }, { type: 'message-metadata', messageMetadata: 'xy' }] },
  { name: 'metadata: a number base merged with an empty object becomes {}', chunks: [{ type: 'message-metadata', messageMetadata: 5 }, { type: 'message-metadata', messageMetadata: {} }] },
  { name: 'metadata: a primitive base merged with keys is a TypeError that stops', chunks: [{ type: 'start', messageMetadata: 'ab' }, { type: 'finish', messageMetadata: { a: 1 } }, ...text('t', 'never')] },
  { name: 'metadata: a float base in the TypeError text', chunks: [{ type: 'message-metadata', messageMetadata: 1.5e-7 }, { type: 'message-metadata', messageMetadata: [1] }] },
  // text and reasoning
  { name: 'text with provider metadata on start, delta and end, and citations', chunks: [{ type: 'text-start', id: 't', providerMetadata: pm(1) }, { type: 'text-delta', id: 't', delta: 'a', providerMetadata: pm(2) }, { type: 'text-delta', id: 't', delta: 'b' }, { type: 'text-end', id: 't', citations: [{ source: { type: 'source', sourceType: 'url', id: 's', url: 'u', extra: 1 }, startIndex: 0, other: 2 }] }] },
  { name: 'reasoning keeps its id, text does not', chunks: [{ type: 'reasoning-start', id: 'r', providerMetadata: pm(1) }, { type: 'reasoning-delta', id: 'r', delta: 'why' }, { type: 'reasoning-end', id: 'r', providerMetadata: pm(3) }, ...text('t', 'x')] },
  { name: 'interleaved text parts by id', chunks: [{ type: 'text-start', id: 'a' }, { type: 'text-start', id: 'b' }, { type: 'text-delta', id: 'b', delta: 'B' }, { type: 'text-delta', id: 'a', delta: 'A' }, { type: 'text-end', id: 'a' }, { type: 'text-end', id: 'b' }] },
  { name: 'a reused text id starts a new part', chunks: [...text('t', 'one'), ...text('t', 'two')] },
  { name: 'text-delta for an unknown id stops processing', chunks: [...text('t', 'x'), { type: 'text-delta', id: 't', delta: 'after end' }, ...text('u', 'never')] },
  { name: 'text-end for an unknown id', chunks: [{ type: 'text-end', id: 'nope' }] },
  { name: 'reasoning-delta for an unknown id', chunks: [{ type: 'reasoning-delta', id: 'nope', delta: 'x' }] },
  { name: 'reasoning-end for an unknown id', chunks: [{ type: 'reasoning-start', id: 'a' }, { type: 'reasoning-end', id: 'b' }] },
  // sources, files, custom, steering
  { name: 'source-url and source-document', chunks: [{ type: 'source-url', sourceId: 's', url: 'https://x', title: 'X', providerMetadata: pm(1) }, { type: 'source-document', sourceId: 'd', mediaType: 'text/plain', title: 'D', filename: 'd.txt' }] },
  { name: 'file and reasoning-file keep only their fields', chunks: [{ type: 'file', url: 'data:,x', mediaType: 'text/plain', filename: 'dropped' }, { type: 'reasoning-file', url: 'u', mediaType: 'image/png', providerMetadata: pm(1) }] },
  { name: 'custom', chunks: [{ type: 'custom', kind: 'openai.compaction', providerMetadata: pm(1) }, { type: 'custom', kind: 'x' }] },
  { name: 'steering-message', chunks: [{ type: 'steering-message', id: 'u1', parts: [{ type: 'text', text: 'also', extra: 1 }, { type: 'file', mediaType: 'image/png', url: 'u', providerReference: { a: 'b' } }] }] },
  // data
  { name: 'data parts are the whole chunk, replaced by type and id anywhere', chunks: [{ type: 'data-w', id: 'd', data: 1, transient: false, extra: 'kept' }, { type: 'start-step' }, ...text('t', 'x'), { type: 'data-w', id: 'd', data: 2 }, { type: 'data-v', id: 'd', data: 3 }, { type: 'data-w', data: 4 }, { type: 'data-w', data: 5 }] },
  { name: 'transient data is not stored', chunks: [{ type: 'data-status', id: 's', data: { busy: true }, transient: true }, { type: 'data-status', id: 's', data: null }, { type: 'data-status', id: 's', data: 'new', transient: true }] },
  { name: 'pi projection chunks are data parts to the ai package', chunks: [{ type: 'data-pi-text-delta', data: { seq: 1, messageId: 'm', partId: '0', delta: 'x' } }, { type: 'data-pi-mode', data: { enabled: true } }] },
  // tools
  { name: 'static tool call: streaming input, available, output', chunks: [{ type: 'start-step' }, ...toolCall('c1', 'weather', { title: 'Weather', toolMetadata: { ui: 'card' }, providerMetadata: pm(1) }), { type: 'tool-output-available', toolCallId: 'c1', output: { t: 20 }, providerMetadata: pm(2) }] },
  { name: 'dynamic tool call with provider execution', chunks: toolCall('c1', 'mcp', { dynamic: true, providerExecuted: true }).concat([{ type: 'tool-output-available', toolCallId: 'c1', output: null, dynamic: true }]) },
  { name: 'preliminary outputs, then the final one', chunks: [...toolCall('c', 't'), { type: 'tool-output-available', toolCallId: 'c', output: 1, preliminary: true }, { type: 'tool-output-available', toolCallId: 'c', output: 2, preliminary: true }, { type: 'tool-output-available', toolCallId: 'c', output: 3 }] },
  { name: 'partial JSON input: repaired at every delta', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, ...['{"qu', 'ery": "we', 'ather', '", "n": 12.', '5, "ok": tr', 'ue, "l": [1, ', '{"a": nu', 'll}]}'].map((inputTextDelta) => ({ type: 'tool-input-delta', toolCallId: 'c', inputTextDelta }))] },
  { name: 'partial JSON input: a repaired prefix that stops mid-literal', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"a": [1, 2], "b": fa' }] },
  { name: 'partial JSON input that cannot be repaired', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: 'not json' }] },
  { name: 'tool input with a __proto__ key is refused by the secure parse', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"__proto__": {"x": 1}}' }] },
  { name: 'text-encoded tool input', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 'sh', inputEncoding: 'text' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: 'ls ' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '-la' }, { type: 'tool-input-available', toolCallId: 'c', toolName: 'sh', input: 'ls -la' }] },
  { name: 'tool-input-delta after available reopens the input', chunks: [...toolCall('c', 't'), { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: ',"m":2}' }] },
  { name: 'tool-input-delta in a later step makes a second part', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't' }, { type: 'start-step' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{}' }] },
  { name: 'dynamic tool-input-delta in a later step: the new part has no rawInput', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't', dynamic: true }, { type: 'start-step' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"a":1' }] },
  { name: 'tool-input-delta for an unknown call', chunks: [{ type: 'tool-input-delta', toolCallId: 'nope', inputTextDelta: '{' }] },
  { name: 'tool-input-available renames a static tool part', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 'a', title: 'A' }, { type: 'tool-input-available', toolCallId: 'c', toolName: 'b', input: {} }] },
  { name: 'a dynamic and a static part of one call', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 'a', dynamic: true }, { type: 'tool-input-available', toolCallId: 'c', toolName: 'a', input: 1 }, { type: 'tool-input-error', toolCallId: 'c', toolName: 'a', input: 2, errorText: 'e' }] },
  { name: 'tool-input-error on a streaming part keeps its kind, metadata to result', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't', dynamic: true, title: 'T' }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"x' }, { type: 'tool-input-error', toolCallId: 'c', toolName: 't', input: '{"x', errorText: 'bad json', providerMetadata: pm(1) }] },
  { name: 'tool-input-error without a prior part', chunks: [{ type: 'tool-input-error', toolCallId: 'c', toolName: 't', input: null, errorText: 'no such tool', dynamic: true }, { type: 'tool-input-error', toolCallId: 'd', toolName: 't', input: null, errorText: 'e' }] },
  { name: 'tool-output-error keeps a static rawInput, not a dynamic one', chunks: [{ type: 'tool-input-start', toolCallId: 's', toolName: 't' }, { type: 'tool-input-delta', toolCallId: 's', inputTextDelta: '{"a":' }, { type: 'tool-output-error', toolCallId: 's', errorText: 'e1' }, { type: 'tool-input-start', toolCallId: 'd', toolName: 't', dynamic: true }, { type: 'tool-input-delta', toolCallId: 'd', inputTextDelta: '{"b":' }, { type: 'tool-output-error', toolCallId: 'd', errorText: 'e2', toolMetadata: { k: 1 } }] },
  { name: 'tool-output-denied', chunks: [...toolCall('c', 't'), { type: 'tool-output-denied', toolCallId: 'c' }] },
  { name: 'an output for an unknown call stops processing', chunks: [...toolCall('c', 't'), { type: 'tool-output-available', toolCallId: 'x', output: 1 }, ...text('t', 'never')] },
  { name: 'tool-output-error for an unknown call', chunks: [{ type: 'tool-output-error', toolCallId: 'x', errorText: 'e' }] },
  { name: 'tool-output-denied for an unknown call', chunks: [{ type: 'tool-output-denied', toolCallId: 'x' }] },
  { name: 'an output finds its call in an earlier step', chunks: [{ type: 'start-step' }, ...toolCall('c', 't'), { type: 'start-step' }, ...text('t', 'x'), { type: 'tool-output-available', toolCallId: 'c', output: 'late' }] },
  // approvals
  { name: 'approval request with every field, then an approval', chunks: [...toolCall('c', 't'), { type: 'tool-approval-request', approvalId: 'a', toolCallId: 'c', approvalDescriptor: { d: 1 }, inputSchemaInput: null, reason: 'risky', isAutomatic: true, signature: 'sig' }, { type: 'tool-approval-response', approvalId: 'a', approved: true, reason: 'ok', providerExecuted: true, providerMetadata: pm(1) }, { type: 'tool-output-available', toolCallId: 'c', output: 'done' }] },
  { name: 'approval request with null and false fields', chunks: [...toolCall('c', 't'), { type: 'tool-approval-request', approvalId: 'a', toolCallId: 'c', approvalDescriptor: null, isAutomatic: false }, { type: 'tool-approval-response', approvalId: 'a', approved: false }, { type: 'tool-output-denied', toolCallId: 'c' }] },
  { name: 'a second approval response keeps the first reason', chunks: [...toolCall('c', 't'), { type: 'tool-approval-request', approvalId: 'a', toolCallId: 'c' }, { type: 'tool-approval-response', approvalId: 'a', approved: false, reason: 'r1' }, { type: 'tool-approval-response', approvalId: 'a', approved: true }] },
  { name: 'an approval response for an unknown approval', chunks: [...toolCall('c', 't'), { type: 'tool-approval-response', approvalId: 'nope', approved: true }] },
  { name: 'an approval request for an unknown call', chunks: [{ type: 'tool-approval-request', approvalId: 'a', toolCallId: 'nope' }] },
  // continuing a message
  {
    name: 'continuing a message: streaming tool input goes on from rawInput',
    chunks: [{ type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: 'is"}' }, { type: 'tool-output-available', toolCallId: 'c', output: 1 }],
    lastFrom: [{ type: 'start', messageId: 'm1' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'c', toolName: 't', title: 'T', toolMetadata: { k: 1 } }, { type: 'tool-input-delta', toolCallId: 'c', inputTextDelta: '{"city":"Par' }],
  },
  {
    name: 'continuing a message: only the current step rebuilds partial calls',
    chunks: [{ type: 'tool-input-delta', toolCallId: 'old', inputTextDelta: '}' }],
    lastFrom: [{ type: 'start', messageId: 'm1' }, { type: 'tool-input-start', toolCallId: 'old', toolName: 't' }, { type: 'start-step' }],
  },
  {
    name: 'continuing a message: an approval response after a round trip',
    chunks: [{ type: 'start', messageId: 'm1' }, { type: 'tool-approval-response', approvalId: 'a', approved: true }, { type: 'tool-output-available', toolCallId: 'c', output: 'ran' }, { type: 'start-step' }, ...text('t', 'done')],
    lastFrom: [{ type: 'start', messageId: 'm1', messageMetadata: { a: 1 } }, { type: 'start-step' }, ...toolCall('c', 't'), { type: 'tool-approval-request', approvalId: 'a', toolCallId: 'c' }],
  },
  {
    name: 'continuing a message: a start with another id starts it over',
    chunks: [{ type: 'start', messageId: 'm2' }, ...text('t', 'fresh')],
    lastFrom: [{ type: 'start', messageId: 'm1', messageMetadata: { a: 1 } }, ...text('t', 'old')],
  },
  {
    name: 'continuing a message: text ids are not carried over',
    chunks: [{ type: 'text-delta', id: 't', delta: 'x' }],
    lastFrom: [{ type: 'start', messageId: 'm1' }, { type: 'text-start', id: 't' }],
  },
  { name: 'a user lastMessage lends its id', chunks: [...text('t', 'x')], options: { lastMessage: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] } } },
  {
    name: 'unknown part kinds and keys of a continued message round-trip',
    chunks: [{ type: 'tool-output-available', toolCallId: 'c', output: 2 }, { type: 'data-x', id: 'd', data: 2 }],
    options: {
      lastMessage: {
        id: 'm', role: 'assistant', metadata: null,
        parts: [
          { type: 'future-kind', anything: [1, { a: null }] },
          { type: 'tool-t', toolCallId: 'c', state: 'input-available', input: null, futureKey: { k: 1 } },
          { type: 'data-x', id: 'd', data: 1, transient: false, other: 'kept' },
        ],
      },
    },
  },
  // chunks the schema rejects
  { name: 'an unknown chunk type stops the stream', chunks: [...text('t', 'x'), { type: 'text-stream', id: 't' }, ...text('u', 'never')] },
  { name: 'a missing required field', chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't' }] },
  { name: 'null for an optional field', chunks: [{ type: 'start', messageId: null }] },
  { name: 'a finish reason outside the enum', chunks: [{ type: 'finish', finishReason: 'done' }] },
  { name: 'provider metadata that is not a record of records', chunks: [{ type: 'text-start', id: 't', providerMetadata: { p: 1 } }] },
  { name: 'a data chunk without data', chunks: [{ type: 'data-x', id: 'd' }] },
  { name: 'message-metadata without messageMetadata', chunks: [{ type: 'message-metadata' }] },
  { name: 'tool-input-available without input', chunks: [{ type: 'tool-input-available', toolCallId: 'c', toolName: 't' }] },
  { name: 'an approval response without approved', chunks: [{ type: 'tool-approval-response', approvalId: 'a' }] },
  { name: 'a bad input encoding', chunks: [{ type: 'tool-input-start', toolCallId: 'c', toolName: 't', inputEncoding: 'xml' }] },
  { name: 'a citation with a fractional index', chunks: [{ type: 'text-start', id: 't' }, { type: 'text-end', id: 't', citations: [{ source: { type: 'source', sourceType: 'url', id: 's', url: 'u' }, startIndex: 0.5 }] }] },
  { name: 'a steering part of another kind', chunks: [{ type: 'steering-message', id: 's', parts: [{ type: 'reasoning', text: 'x' }] }] },
  { name: 'a chunk that is not an object', chunks: [...text('t', 'x'), 5] },
  { name: 'a chunk with a __proto__ key (the secure JSON parse)', chunks: [...text('t', 'x'), JSON.parse('{"type":"data-x","data":{"__proto__":{"polluted":1}}}')] },
  { name: 'a chunk with constructor.prototype', chunks: [JSON.parse('{"type":"data-x","data":{"constructor":{"prototype":1}}}')] },
  { name: 'extra keys are allowed (loose objects)', chunks: [{ type: 'start', future: 1 }, { type: 'text-start', id: 't', x: [1] }, { type: 'text-end', id: 't', y: null }] },
];
