// Hand-written stream scenarios for the differential test: the chunk sequences a UI message
// stream carries for text, reasoning, metadata, data parts, tool calls (client, server,
// provider-executed, dynamic, approvals, preliminary outputs, text-encoded input), steps that
// are reset or continued, and cut-off streams. Each is fed to the `ai` package's reader (the
// oracle) and to ours; they must build the same message. Many cover situations the `ai`
// package's own tests cover too.
// Format as tests/js/differential/cases.mjs: {topic, name, chunks, options?, lastFrom?}.
// `createStreamingUIMessageState({messageId, lastMessage: undefined})` ≙ options {messageId};
// an assistant lastMessage ≙ options {lastMessage} (its own id is the one that counts, as in
// createStreamingUIMessageState; readUIMessageStream then resets on a `start` with another id).
const P = 'parts of one message';
const mid = { messageId: 'msg-123' };
const s = (...chunks) => [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, ...chunks, { type: 'finish-step' }, { type: 'finish' }];
const toolRoundtrip = [
  { type: 'start', messageId: 'msg-123' },
  { type: 'start-step' },
  { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } },
  { type: 'tool-output-available', toolCallId: 'tool-call-id', output: { weather: 'sunny' } },
  { type: 'finish-step' },
  { type: 'start-step' },
  { type: 'text-start', id: 'text-1' },
  { type: 'text-delta', id: 'text-1', delta: 'The weather in London is sunny.' },
  { type: 'text-end', id: 'text-1' },
  { type: 'finish-step' },
  { type: 'finish' },
];
const originalToolPart = { type: 'tool-tool-name-original', toolCallId: 'tool-call-id-original', state: 'output-available', input: {}, output: { location: 'Berlin' } };

const R = 'reading a stream';
const T = 'where tool results go';
const O = 'text-encoded tool input';
const C = 'chat turns';
const I = 'replayed starts';
const call = (id, dynamic = false) => ({ type: 'tool-input-available', toolCallId: id, toolName: 'search', input: {}, providerExecuted: true, dynamic, providerMetadata: { test: { call: id } } });
const output = (id, error = false) => error
  ? { type: 'tool-output-error', toolCallId: id, errorText: 'failed', providerMetadata: { test: { result: id } } }
  : { type: 'tool-output-available', toolCallId: id, output: id, providerMetadata: { test: { result: id } } };
const text = (id) => [{ type: 'text-start', id }, { type: 'text-delta', id, delta: id }, { type: 'text-end', id }];
const rec = { messageId: 'message' };
const openaiDeltas = [
  ['HTML', ['<main>', '<h1>Streaming</h1></main>']], ['SQL', ['SELECT * ', 'FROM users']], ['null', ['nu', 'll']], ['boolean', ['fa', 'lse']],
  ['number', ['12', '3']], ['object', ['{"x":', '1}']], ['array', ['[1,', '2]']], ['quoted string', ['"hello', ' world"']],
  ['null prefix', ['null', ' byte']], ['number prefix', ['123', ' apples']], ['escapes', ['quote: "', '\\path\n\t\r\u0000']],
  ['split surrogate pair', ['\ud83d', '\ude00']], ['whitespace', [' ', '\n\t']], ['empty input', ['', '']], ['no deltas', []],
];

export const cases = [
  { topic: P, name: 'text: two deltas make one text part', options: mid, chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }) },
  { topic: P, name: 'an error chunk alone: the stream fails', options: mid, chunks: [{ type: 'error', errorText: 'test error' }] },
  { topic: P, name: 'a text-delta with id __proto__ and no start pollutes nothing', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'text-delta', id: '__proto__', delta: 'Hello' }] },
  { topic: P, name: 'a reasoning-delta with id __proto__ and no start pollutes nothing', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'reasoning-delta', id: '__proto__', delta: 'Thinking...' }] },
  { topic: P, name: 'a tool-input-delta with toolCallId __proto__ and no start pollutes nothing', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-delta', toolCallId: '__proto__', inputTextDelta: '{"key":' }] },
  { topic: P, name: 'server tool: call, output, then a text in the next step', options: mid, chunks: toolRoundtrip },
  { topic: P, name: 'server tool round trip continuing an assistant message of another id (replaced)', options: { lastMessage: { role: 'assistant', id: 'original-id', metadata: undefined, parts: [originalToolPart] } }, chunks: toolRoundtrip },
  { topic: P, name: 'server tool round trip continuing an assistant message of the same id (appended)', options: { lastMessage: { role: 'assistant', id: 'msg-123', metadata: undefined, parts: [originalToolPart] } }, chunks: toolRoundtrip },
  {
    topic: P, name: 'server tool round trip between two texts', options: mid,
    chunks: [
      { type: 'start', messageId: 'msg-123' }, { type: 'start-step' },
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'I will ' }, { type: 'text-delta', id: 'text-1', delta: 'use a tool to get the weather in London.' }, { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } },
      { type: 'tool-output-available', toolCallId: 'tool-call-id', output: { weather: 'sunny' } },
      { type: 'finish-step' }, { type: 'start-step' },
      { type: 'text-start', id: 'text-2' }, { type: 'text-delta', id: 'text-2', delta: 'The weather in London ' }, { type: 'text-delta', id: 'text-2', delta: 'is sunny.' }, { type: 'text-end', id: 'text-2' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  {
    topic: P, name: 'server tool round trip between two reasoning blocks', options: mid,
    chunks: [
      { type: 'start', messageId: 'msg-123' }, { type: 'start-step' },
      { type: 'reasoning-start', id: 'reasoning-1' },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'I will ', providerMetadata: { testProvider: { signature: '1234567890' } } },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'use a tool to get the weather in London.' },
      { type: 'reasoning-end', id: 'reasoning-1' },
      { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } },
      { type: 'tool-output-available', toolCallId: 'tool-call-id', output: { weather: 'sunny' } },
      { type: 'finish-step' }, { type: 'start-step' },
      { type: 'reasoning-start', id: 'reasoning-2' },
      { type: 'reasoning-delta', id: 'reasoning-2', delta: 'I now know the weather in London.', providerMetadata: { testProvider: { signature: 'abc123' } } },
      { type: 'reasoning-end', id: 'reasoning-2' },
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'The weather in London is sunny.' }, { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  {
    topic: P, name: 'server tool round trip whose output is an error', options: mid,
    chunks: [
      { type: 'start', messageId: 'msg-123' }, { type: 'start-step' },
      { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } },
      { type: 'tool-output-error', toolCallId: 'tool-call-id', errorText: 'error-text' },
      { type: 'finish-step' }, { type: 'start-step' },
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'The weather in London is sunny.' }, { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  {
    topic: P, name: 'metadata on start, message-metadata and finish merges', options: mid,
    chunks: [
      { type: 'start', messageId: 'msg-123', messageMetadata: { start: 'start-1', shared: { key1: 'value-1a', key2: 'value-2a' } } },
      { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' },
      { type: 'message-metadata', messageMetadata: { metadata: 'metadata-1' } },
      { type: 'text-delta', id: 'text-1', delta: 't2' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' },
      { type: 'finish', messageMetadata: { finish: 'finish-1', shared: { key1: 'value-1e', key6: 'value-6e' } } },
    ],
  },
  {
    topic: P, name: 'message-metadata after finish still applies', options: mid,
    chunks: [...s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }), { type: 'message-metadata', messageMetadata: { key1: 'value-1' } }],
  },
  {
    topic: P, name: 'metadata continuing an assistant message of another id (replaced)',
    options: { lastMessage: { role: 'assistant', id: 'original-id', metadata: { key1: 'value-1a', key3: 'value-3a' }, parts: [] } },
    chunks: [{ type: 'start', messageId: 'msg-123', messageMetadata: { key1: 'value-1b', key2: 'value-2b' } }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    topic: P, name: 'metadata continuing an assistant message of the same id (merged)',
    options: { lastMessage: { role: 'assistant', id: 'msg-123', metadata: { key1: 'value-1a', key3: 'value-3a' }, parts: [] } },
    chunks: [{ type: 'start', messageId: 'msg-123', messageMetadata: { key1: 'value-1b', key2: 'value-2b' } }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    topic: P, name: 'streamed tool input with a stray closing brace: the partial parse and the final input', options: mid,
    chunks: s(
      { type: 'tool-input-start', toolCallId: 'tool-call-0', toolName: 'test-tool' },
      { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: '{"testArg":"t' },
      { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: 'est-value"}}' },
      { type: 'tool-input-available', toolCallId: 'tool-call-0', toolName: 'test-tool', input: { testArg: 'test-value' } },
      { type: 'tool-output-available', toolCallId: 'tool-call-0', output: 'test-result' },
    ),
  },
  { topic: P, name: 'streamed tool input cut off after its deltas', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'tool-call-0', toolName: 'test-tool' }, { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: '{"testArg":"t' }, { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: 'est-value"}}' }] },
  {
    topic: P, name: 'reasoning blocks with provider metadata on their deltas', options: mid,
    chunks: s(
      { type: 'reasoning-start', id: 'reasoning-1' },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'I will open the conversation' },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: ' with witty banter. ', providerMetadata: { testProvider: { signature: '1234567890' } } },
      { type: 'reasoning-end', id: 'reasoning-1' },
      { type: 'reasoning-start', id: 'reasoning-2' },
      { type: 'reasoning-delta', id: 'reasoning-2', delta: 'redacted-data', providerMetadata: { testProvider: { isRedacted: true } } },
      { type: 'reasoning-end', id: 'reasoning-2' },
      { type: 'reasoning-start', id: 'reasoning-3' },
      { type: 'reasoning-delta', id: 'reasoning-3', delta: 'Once the user has relaxed,' },
      { type: 'reasoning-delta', id: 'reasoning-3', delta: ' I will pry for valuable information.', providerMetadata: { testProvider: { signature: 'abc123' } } },
      { type: 'reasoning-end', id: 'reasoning-3' },
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hi there!' }, { type: 'text-end', id: 'text-1' },
    ),
  },
  { topic: P, name: 'client tool call: input-available with no output', options: mid, chunks: s({ type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } }) },
  { topic: P, name: 'a source-url part after a text', options: mid, chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'The weather in London is sunny.' }, { type: 'text-end', id: 'text-1' }, { type: 'source-url', sourceId: 'source-id', url: 'https://example.com', title: 'Example' }) },
  {
    topic: P, name: 'file parts', options: mid,
    chunks: s(
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Here is a file:' }, { type: 'text-end', id: 'text-1' },
      { type: 'file', url: 'data:text/plain;base64,SGVsbG8gV29ybGQ=', mediaType: 'text/plain' },
      { type: 'text-start', id: 'text-2' }, { type: 'text-delta', id: 'text-2', delta: 'And another one:' }, { type: 'text-end', id: 'text-2' },
      { type: 'file', url: 'data:application/json;base64,eyJrZXkiOiJ2YWx1ZSJ9', mediaType: 'application/json' },
    ),
  },
  { topic: P, name: 'a data part', options: mid, chunks: s({ type: 'data-test', data: 'example-data-can-be-anything' }) },
  { topic: P, name: 'a transient data part is not kept', options: mid, chunks: s({ type: 'data-test', data: 'example-data-can-be-anything', transient: true }) },
  { topic: P, name: 'a data part with an id is replaced by the next of that id', options: mid, chunks: s({ type: 'data-test', id: 'data-part-id', data: 'example-data-can-be-anything' }, { type: 'data-test', id: 'data-part-id', data: 'or-something-else' }) },
  { topic: P, name: 'a data part update with an id replaces the object, never merges it', options: mid, chunks: s({ type: 'data-test', id: 'data-part-id', data: { a: 'a1', b: 'b1' } }, { type: 'data-test', id: 'data-part-id', data: { b: 'b2', c: 'c2' } }) },
  {
    topic: P, name: 'provider-executed tool calls and results', options: mid,
    chunks: s(
      { type: 'tool-input-start', toolCallId: 'tool-call-1', toolName: 'tool-name', providerExecuted: true },
      { type: 'tool-input-delta', toolCallId: 'tool-call-1', inputTextDelta: '{ "query": "test" }' },
      { type: 'tool-input-available', toolCallId: 'tool-call-1', toolName: 'tool-name', input: { query: 'test' }, providerExecuted: true },
      { type: 'tool-output-available', toolCallId: 'tool-call-1', output: { result: 'provider-result' }, providerExecuted: true },
      { type: 'tool-input-available', toolCallId: 'tool-call-2', toolName: 'tool-name', input: { query: 'test' }, providerExecuted: true },
      { type: 'tool-output-error', toolCallId: 'tool-call-2', errorText: 'error-text', providerExecuted: true },
    ),
  },
  {
    topic: P, name: 'dynamic tool calls: dynamic-tool parts', options: mid,
    chunks: s(
      { type: 'tool-input-start', toolCallId: 'tool-call-1', toolName: 't1', dynamic: true },
      { type: 'tool-input-delta', toolCallId: 'tool-call-1', inputTextDelta: '{ "query": "test" }' },
      { type: 'tool-input-available', toolCallId: 'tool-call-1', toolName: 't1', input: { query: 'test' }, dynamic: true },
      { type: 'tool-input-available', toolCallId: 'tool-call-2', toolName: 't1', input: { query: 'test' }, dynamic: true },
      { type: 'tool-output-available', toolCallId: 'tool-call-1', output: { result: 'provider-result' }, dynamic: true },
      { type: 'tool-output-error', toolCallId: 'tool-call-2', errorText: 'error-text', dynamic: true },
    ),
  },
  { topic: P, name: 'a dynamic tool call cut off mid-input', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'tool-call-1', toolName: 't1', dynamic: true }, { type: 'tool-input-delta', toolCallId: 'tool-call-1', inputTextDelta: '{ "query": "test" }' }] },
  {
    topic: P, name: 'provider metadata of text-start and of a call (callProviderMetadata)', options: mid,
    chunks: s(
      { type: 'text-start', id: '1', providerMetadata: { testProvider: { signature: '1' } } },
      { type: 'text-delta', id: '1', delta: 'Hello' }, { type: 'text-delta', id: '1', delta: ', ' }, { type: 'text-delta', id: '1', delta: 'world!' },
      { type: 'text-end', id: '1' },
      { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { query: 'test' }, providerMetadata: { testProvider: { signature: '2' } } },
    ),
  },
  {
    topic: P, name: 'a tool input error followed by an output error', options: mid,
    chunks: [
      { type: 'start' }, { type: 'start-step' },
      { toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-start' },
      { inputTextDelta: '{ "cities": "San Francisco" }', toolCallId: 'call-1', type: 'tool-input-delta' },
      { errorText: 'Invalid input for tool cityAttractions', input: '{ "cities": "San Francisco" }', toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-error' },
      { errorText: 'Invalid input for tool cityAttractions', toolCallId: 'call-1', type: 'tool-output-error' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  ...[
    ['tool input error', { type: 'tool-input-error', toolCallId: 'call-1', toolName: 'cityAttractions', input: { cities: ['San Francisco'] }, errorText: 'Invalid input for tool cityAttractions', dynamic: true }],
    ['tool output error', { type: 'tool-output-error', toolCallId: 'call-1', errorText: 'Tool execution failed', dynamic: true }],
  ].map(([n, terminal]) => ({
    topic: P, name: `a streamed dynamic call ending in a ${n} drops its raw input`, options: mid,
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'call-1', toolName: 'cityAttractions', dynamic: true }, { type: 'tool-input-delta', toolCallId: 'call-1', inputTextDelta: '{ "cities": ["San Francisco"] }' }, terminal, { type: 'finish-step' }, { type: 'finish' }],
  })),
  {
    topic: P, name: 'preliminary tool outputs, then the final one', options: mid,
    chunks: [
      { type: 'start' }, { type: 'start-step' },
      { input: { city: 'San Francisco' }, toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-available' },
      { output: { status: 'loading', text: 'Getting weather for San Francisco' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' },
      { output: { status: 'success', temperature: 72, text: 'The weather in San Francisco is 72°F' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' },
      { output: { status: 'success', temperature: 72, text: 'The weather in San Francisco is 72°F' }, toolCallId: 'call-1', type: 'tool-output-available' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  { topic: P, name: 'a stream cut off at a preliminary tool output', options: mid, chunks: [{ type: 'start' }, { type: 'start-step' }, { input: { city: 'SF' }, toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-available' }, { output: { status: 'loading' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' }] },
  // reading a stream (readUIMessageStream's options)
  { topic: R, name: 'reading a plain text stream with no options', chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }) },
  {
    topic: R, name: 'a tool call id repeated in a later step keeps both parts',
    chunks: [
      { type: 'start', messageId: 'msg-123' }, { type: 'start-step' },
      { type: 'tool-input-available', toolCallId: 'call-0', toolName: 'recordStep', input: { step: 1 }, providerMetadata: { openai: { itemId: 'fc-step-1' } } },
      { type: 'tool-output-available', toolCallId: 'call-0', output: { recorded: 1 } },
      { type: 'finish-step' }, { type: 'start-step' },
      { type: 'tool-input-available', toolCallId: 'call-0', toolName: 'recordStep', input: { step: 2 }, providerMetadata: { openai: { itemId: 'fc-step-2' } } },
      { type: 'tool-output-available', toolCallId: 'call-0', output: { recorded: 2 } },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  {
    topic: R, name: 'continuing a message with metadata and a data part',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: { nested: { value: 'metadata' } }, parts: [{ type: 'data-test', data: { value: 'data' } }] } },
    chunks: [{ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }, { type: 'text-end', id: 'text-1' }],
  },
  { topic: R, name: 'an error chunk after some text: the text kept, the stream fails', chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }, { type: 'error', errorText: 'Test error message' }] },
  // a start chunk replayed onto a continued message (the 7.0.173 processor duplicates the part; the oracle decides)
  {
    topic: I, name: 'a text-start replayed onto a continued message whose text is streaming',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'text', text: 'Hello, world!', state: 'streaming', providerMetadata: undefined }] } },
    chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }),
  },
  {
    topic: I, name: 'a reasoning-start replayed onto a continued message whose reasoning is streaming',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'reasoning', text: 'thinking...', state: 'streaming', providerMetadata: undefined }] } },
    chunks: s({ type: 'reasoning-start', id: 'r-1' }, { type: 'reasoning-delta', id: 'r-1', delta: 'thinking...' }, { type: 'reasoning-end', id: 'r-1' }),
  },
  // where tool results go among the parts (options `rec`: createStreamingUIMessageState({messageId: 'message', lastMessage}))
  ...[false, true].flatMap((dynamic) => [false, true].map((error) => ({
    topic: T, name: `results arriving in a later step stay after their calls (dynamic=${dynamic}, error=${error})`, options: rec,
    chunks: [{ type: 'start-step' }, call('a', dynamic), call('b', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('before'), output('b', error), ...text('between'), output('a'), ...text('after')],
  }))),
  { topic: T, name: 'a result stays after its call while another call still streams its input', options: rec, chunks: [{ type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'x', toolName: 'search' }, call('b'), output('b'), call('x')] },
  { topic: T, name: 'results keep their order around a data part', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, { type: 'data-note', data: 'DATA' }, ...text('before'), output('a'), ...text('after')] },
  { topic: T, name: 'results keep their order around a call that never completes', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, call('pending'), ...text('before'), output('a'), ...text('after')] },
  { topic: T, name: 'results of one step keep their place after text and other calls', options: rec, chunks: [{ type: 'start-step' }, call('a'), ...text('before'), call('b'), output('b'), output('a')] },
  { topic: T, name: 'a continuation bringing only a result keeps the earlier steps', lastFrom: [{ type: 'start-step' }, call('a'), { type: 'finish-step' }, { type: 'start-step' }, ...text('waiting'), { type: 'finish-step' }], chunks: [{ type: 'start-step' }, output('a'), { type: 'finish-step' }] },
  {
    topic: T, name: 'results placed among sources, client outputs and preliminary outputs', options: rec,
    chunks: [{ type: 'start-step' }, call('a'), { type: 'tool-input-available', toolCallId: 'local', toolName: 'local', input: {} }, { type: 'tool-output-available', toolCallId: 'local', output: 'local' }, { type: 'source-url', sourceId: 'source', url: 'https://example.com' }, { type: 'tool-output-available', toolCallId: 'a', output: 'partial', preliminary: true }, ...text('before'), output('a')],
  },
  { topic: T, name: 'a preliminary output of a provider-executed call', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'tool-output-available', toolCallId: 'a', output: 'partial', preliminary: true }] },
  ...[false, true].flatMap((dynamic) => [
    { topic: T, name: `a reset-step drops the results that arrived in it (dynamic=${dynamic})`, options: rec, chunks: [{ type: 'start-step' }, call('a', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('discarded'), output('a'), { type: 'reset-step' }] },
    { topic: T, name: `a reset-step, then the result again in a continuation (dynamic=${dynamic})`, lastFrom: [{ type: 'start-step' }, call('a', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('discarded'), output('a'), { type: 'reset-step' }], chunks: [...text('retry'), output('a')] },
    { topic: T, name: `a call's input sent again clears its result (dynamic=${dynamic})`, options: rec, chunks: [{ type: 'start-step' }, call('a', dynamic), output('a'), call('a', dynamic)] },
  ]),
  { topic: T, name: 'results keep their arrival order after an earlier one was cleared', options: rec, chunks: [{ type: 'start-step' }, call('a'), call('b'), output('a'), output('b'), call('a'), output('a')] },
  {
    topic: T, name: 'an approval response and a result arriving in a later stream',
    lastFrom: [{ type: 'start-step' }, call('a'), { type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' }],
    chunks: [{ type: 'tool-approval-response', approvalId: 'approval', approved: true, providerExecuted: true }, { type: 'start-step' }, ...text('before'), output('a'), ...text('after')],
  },
  { topic: T, name: 'an approval request pending while an earlier call\'s result arrives', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, call('pending'), { type: 'tool-approval-request', approvalId: 'pending-approval', toolCallId: 'pending' }, ...text('before'), output('a'), ...text('after')] },
  ...['input-available', 'approval-requested', 'approval-responded'].flatMap((st) => [true, false].map((preliminary) => {
    const initial = [{ type: 'start-step' }, call('a')];
    if (st !== 'input-available') initial.push({ type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' });
    if (st === 'approval-responded') initial.push({ type: 'tool-approval-response', approvalId: 'approval', approved: true });
    return { topic: T, name: `a reset-step restores ${st} after a ${preliminary ? 'preliminary' : 'final'} result`, lastFrom: initial, chunks: [{ type: 'start-step' }, { type: 'tool-output-available', toolCallId: 'a', output: 'attempt', preliminary }, { type: 'reset-step' }] };
  })),
  {
    topic: T, name: 'a reset-step keeps the approval of a continued call',
    lastFrom: [{ type: 'start-step' }, call('a'), { type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' }, { type: 'tool-approval-response', approvalId: 'approval', approved: true }, { type: 'start-step' }, output('a')],
    chunks: [{ type: 'reset-step' }],
  },
  {
    topic: T, name: 'continuing a message whose parts have no step-start',
    options: { lastMessage: { id: 'message', role: 'assistant', parts: [{ type: 'tool-search', toolCallId: 'a', state: 'input-available', input: {}, providerExecuted: true, callProviderMetadata: { test: { call: 'a' } } }] } },
    chunks: [{ type: 'start-step' }, ...text('before'), output('a')],
  },
  // the chunks streamText emits for a text-encoded custom tool (input that is text, not JSON)
  ...openaiDeltas.map(([n, deltas]) => ({
    topic: O, name: `text-encoded tool input: ${n} stays a string`, options: rec,
    chunks: [
      { type: 'start' }, { type: 'start-step' },
      { type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText', inputEncoding: 'text' },
      ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d })),
      { type: 'tool-input-available', toolCallId: 'call_test', toolName: 'setText', input: deltas.join('') },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  })),
  ...openaiDeltas.map(([n, deltas]) => ({
    topic: O, name: `text-encoded tool input: ${n} stays a string when cut off`, options: rec,
    chunks: [{ type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText', inputEncoding: 'text' }, ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d }))],
  })),
  ...openaiDeltas.map(([n, deltas]) => ({
    topic: O, name: `variant: json-encoded tool input ${n} (stopped while streaming)`, options: rec,
    chunks: [{ type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText' }, ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d }))],
  })),
  { topic: O, name: 'variant: split surrogate pair across text deltas', options: rec, chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: '\ud83d' }, { type: 'text-delta', id: 't', delta: '\ude00' }] },
  { topic: O, name: 'variant: a lone surrogate in a text delta', options: rec, chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a\ud83d' }] },
  // chat turns (plain answers, a cut-off one, continuations after addToolOutput)
  { topic: C, name: 'chat: a plain answer in four deltas', options: { messageId: 'id-1' }, chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, ...['Hello', ',', ' world', '.'].map((delta) => ({ type: 'text-delta', id: 'text-1', delta })), { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'stop' }] },
  { topic: C, name: 'chat: an answer cut off after its first delta', options: { messageId: 'id-1' }, chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }] },
  {
    topic: C, name: 'chat: a continuation after a tool error output',
    options: { lastMessage: { id: 'id-1', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'tool-test-tool', toolCallId: 'tool-call-0', state: 'output-error', input: { testArg: 'test-value' }, errorText: 'test-error' }] } },
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    topic: C, name: 'chat: a continuation after a dynamic tool output',
    options: { lastMessage: { id: 'id-1', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'dynamic-tool', toolName: 'test-tool', toolCallId: 'tool-call-0', state: 'output-available', input: { testArg: 'test-value' }, output: 'test-output' }] } },
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'id-1' }, { type: 'text-delta', id: 'id-1', delta: 'test-delta' }, { type: 'text-end', id: 'id-1' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'stop' }],
  },
//MORE
];
