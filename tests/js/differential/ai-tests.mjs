// Scenarios ported from the `ai` package's own tests (vercel/ai,
// packages/ai/src/ui/process-ui-message-stream.test.ts and others, see `src` on each case).
// Format as tests/js/differential/cases.mjs: {name, chunks, options?, lastFrom?}.
// `createStreamingUIMessageState({messageId, lastMessage: undefined})` ≙ options {messageId};
// an assistant lastMessage ≙ options {lastMessage} (its own id is the one that counts, as in
// createStreamingUIMessageState; readUIMessageStream then resets on a `start` with another id).
const P = 'packages/ai/src/ui/process-ui-message-stream.test.ts';
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

const R = 'packages/ai/src/ui-message-stream/read-ui-message-stream.test.ts';
const T = 'packages/ai/src/ui/tool-result-position.test.ts';
const O = 'packages/ai/src/ui/openai-custom-tool-stream.test.ts';
const C = 'packages/ai/src/ui/chat.test.ts';
const I = 'packages/ai/src/ui/process-ui-message-stream.issue-14688.test.ts';
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
  { src: P, name: 'ai: text', options: mid, chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }) },
  { src: P, name: 'ai: errors', options: mid, chunks: [{ type: 'error', errorText: 'test error' }] },
  { src: P, name: 'ai: prototype pollution: text-delta id __proto__', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'text-delta', id: '__proto__', delta: 'Hello' }] },
  { src: P, name: 'ai: prototype pollution: reasoning-delta id __proto__', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'reasoning-delta', id: '__proto__', delta: 'Thinking...' }] },
  { src: P, name: 'ai: prototype pollution: tool-input-delta toolCallId __proto__', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-delta', toolCallId: '__proto__', inputTextDelta: '{"key":' }] },
  { src: P, name: 'ai: server-side tool roundtrip', options: mid, chunks: toolRoundtrip },
  { src: P, name: 'ai: server-side tool roundtrip with existing assistant message (other id: reset)', options: { lastMessage: { role: 'assistant', id: 'original-id', metadata: undefined, parts: [originalToolPart] } }, chunks: toolRoundtrip },
  { src: P, name: 'ai: server-side tool roundtrip with existing assistant message (same id: continued)', options: { lastMessage: { role: 'assistant', id: 'msg-123', metadata: undefined, parts: [originalToolPart] } }, chunks: toolRoundtrip },
  {
    src: P, name: 'ai: server-side tool roundtrip with multiple assistant texts', options: mid,
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
    src: P, name: 'ai: server-side tool roundtrip with multiple assistant reasoning', options: mid,
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
    src: P, name: 'ai: server-side tool roundtrip with output-error', options: mid,
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
    src: P, name: 'ai: message metadata', options: mid,
    chunks: [
      { type: 'start', messageId: 'msg-123', messageMetadata: { start: 'start-1', shared: { key1: 'value-1a', key2: 'value-2a' } } },
      { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' },
      { type: 'message-metadata', messageMetadata: { metadata: 'metadata-1' } },
      { type: 'text-delta', id: 'text-1', delta: 't2' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' },
      { type: 'finish', messageMetadata: { finish: 'finish-1', shared: { key1: 'value-1e', key6: 'value-6e' } } },
    ],
  },
  {
    src: P, name: 'ai: message metadata delayed after finish', options: mid,
    chunks: [...s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }), { type: 'message-metadata', messageMetadata: { key1: 'value-1' } }],
  },
  {
    src: P, name: 'ai: message metadata with existing assistant lastMessage (other id: reset)',
    options: { lastMessage: { role: 'assistant', id: 'original-id', metadata: { key1: 'value-1a', key3: 'value-3a' }, parts: [] } },
    chunks: [{ type: 'start', messageId: 'msg-123', messageMetadata: { key1: 'value-1b', key2: 'value-2b' } }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    src: P, name: 'ai: message metadata with existing assistant lastMessage (same id: merged)',
    options: { lastMessage: { role: 'assistant', id: 'msg-123', metadata: { key1: 'value-1a', key3: 'value-3a' }, parts: [] } },
    chunks: [{ type: 'start', messageId: 'msg-123', messageMetadata: { key1: 'value-1b', key2: 'value-2b' } }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 't1' }, { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    src: P, name: 'ai: tool call streaming (extra closing brace in raw input)', options: mid,
    chunks: s(
      { type: 'tool-input-start', toolCallId: 'tool-call-0', toolName: 'test-tool' },
      { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: '{"testArg":"t' },
      { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: 'est-value"}}' },
      { type: 'tool-input-available', toolCallId: 'tool-call-0', toolName: 'test-tool', input: { testArg: 'test-value' } },
      { type: 'tool-output-available', toolCallId: 'tool-call-0', output: 'test-result' },
    ),
  },
  { src: P, name: 'ai: tool call streaming, stopped after the deltas', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'tool-call-0', toolName: 'test-tool' }, { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: '{"testArg":"t' }, { type: 'tool-input-delta', toolCallId: 'tool-call-0', inputTextDelta: 'est-value"}}' }] },
  {
    src: P, name: 'ai: reasoning (three parts with metadata on deltas)', options: mid,
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
  { src: P, name: 'ai: onToolCall is executed (client tool input-available only)', options: mid, chunks: s({ type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { city: 'London' } }) },
  { src: P, name: 'ai: sources', options: mid, chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'The weather in London is sunny.' }, { type: 'text-end', id: 'text-1' }, { type: 'source-url', sourceId: 'source-id', url: 'https://example.com', title: 'Example' }) },
  {
    src: P, name: 'ai: file parts', options: mid,
    chunks: s(
      { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Here is a file:' }, { type: 'text-end', id: 'text-1' },
      { type: 'file', url: 'data:text/plain;base64,SGVsbG8gV29ybGQ=', mediaType: 'text/plain' },
      { type: 'text-start', id: 'text-2' }, { type: 'text-delta', id: 'text-2', delta: 'And another one:' }, { type: 'text-end', id: 'text-2' },
      { type: 'file', url: 'data:application/json;base64,eyJrZXkiOiJ2YWx1ZSJ9', mediaType: 'application/json' },
    ),
  },
  { src: P, name: 'ai: data ui parts (single part)', options: mid, chunks: s({ type: 'data-test', data: 'example-data-can-be-anything' }) },
  { src: P, name: 'ai: data ui parts (transient part)', options: mid, chunks: s({ type: 'data-test', data: 'example-data-can-be-anything', transient: true }) },
  { src: P, name: 'ai: data ui parts (id, replacement update)', options: mid, chunks: s({ type: 'data-test', id: 'data-part-id', data: 'example-data-can-be-anything' }, { type: 'data-test', id: 'data-part-id', data: 'or-something-else' }) },
  { src: P, name: 'ai: data ui parts (id, "merge" update replaces)', options: mid, chunks: s({ type: 'data-test', id: 'data-part-id', data: { a: 'a1', b: 'b1' } }, { type: 'data-test', id: 'data-part-id', data: { b: 'b2', c: 'c2' } }) },
  {
    src: P, name: 'ai: provider-executed tools', options: mid,
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
    src: P, name: 'ai: dynamic tools', options: mid,
    chunks: s(
      { type: 'tool-input-start', toolCallId: 'tool-call-1', toolName: 't1', dynamic: true },
      { type: 'tool-input-delta', toolCallId: 'tool-call-1', inputTextDelta: '{ "query": "test" }' },
      { type: 'tool-input-available', toolCallId: 'tool-call-1', toolName: 't1', input: { query: 'test' }, dynamic: true },
      { type: 'tool-input-available', toolCallId: 'tool-call-2', toolName: 't1', input: { query: 'test' }, dynamic: true },
      { type: 'tool-output-available', toolCallId: 'tool-call-1', output: { result: 'provider-result' }, dynamic: true },
      { type: 'tool-output-error', toolCallId: 'tool-call-2', errorText: 'error-text', dynamic: true },
    ),
  },
  { src: P, name: 'ai: dynamic tools, stopped mid-input', options: mid, chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'tool-call-1', toolName: 't1', dynamic: true }, { type: 'tool-input-delta', toolCallId: 'tool-call-1', inputTextDelta: '{ "query": "test" }' }] },
  {
    src: P, name: 'ai: provider metadata (text-start, tool-input-available -> callProviderMetadata)', options: mid,
    chunks: s(
      { type: 'text-start', id: '1', providerMetadata: { testProvider: { signature: '1' } } },
      { type: 'text-delta', id: '1', delta: 'Hello' }, { type: 'text-delta', id: '1', delta: ', ' }, { type: 'text-delta', id: '1', delta: 'world!' },
      { type: 'text-end', id: '1' },
      { type: 'tool-input-available', toolCallId: 'tool-call-id', toolName: 'tool-name', input: { query: 'test' }, providerMetadata: { testProvider: { signature: '2' } } },
    ),
  },
  {
    src: P, name: 'ai: tool input error then output error', options: mid,
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
    src: P, name: `ai: dynamic tool errors after input streaming clear raw input on ${n}`, options: mid,
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'call-1', toolName: 'cityAttractions', dynamic: true }, { type: 'tool-input-delta', toolCallId: 'call-1', inputTextDelta: '{ "cities": ["San Francisco"] }' }, terminal, { type: 'finish-step' }, { type: 'finish' }],
  })),
  {
    src: P, name: 'ai: preliminary tool results', options: mid,
    chunks: [
      { type: 'start' }, { type: 'start-step' },
      { input: { city: 'San Francisco' }, toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-available' },
      { output: { status: 'loading', text: 'Getting weather for San Francisco' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' },
      { output: { status: 'success', temperature: 72, text: 'The weather in San Francisco is 72°F' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' },
      { output: { status: 'success', temperature: 72, text: 'The weather in San Francisco is 72°F' }, toolCallId: 'call-1', type: 'tool-output-available' },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  },
  { src: P, name: 'ai: preliminary tool results, stopped at a preliminary one', options: mid, chunks: [{ type: 'start' }, { type: 'start-step' }, { input: { city: 'SF' }, toolCallId: 'call-1', toolName: 'cityAttractions', type: 'tool-input-available' }, { output: { status: 'loading' }, preliminary: true, toolCallId: 'call-1', type: 'tool-output-available' }] },
  // read-ui-message-stream.test.ts
  { src: R, name: 'ai: readUIMessageStream basic input stream (no options)', chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }) },
  {
    src: R, name: 'ai: tool parts preserved when tool call ids repeat across steps',
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
    src: R, name: 'ai: structural-sharing snapshots (continue a message with metadata and a data part)',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: { nested: { value: 'metadata' } }, parts: [{ type: 'data-test', data: { value: 'data' } }] } },
    chunks: [{ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }, { type: 'text-end', id: 'text-1' }],
  },
  { src: R, name: 'ai: error UI stream part (terminateOnError in the ai test)', chunks: [{ type: 'start', messageId: 'msg-123' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }, { type: 'error', errorText: 'Test error message' }] },
  // process-ui-message-stream.issue-14688.test.ts (the 7.0.173 processor duplicates; the oracle decides)
  {
    src: I, name: 'ai: issue 14688: text-start replayed against an existing assistant message',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'text', text: 'Hello, world!', state: 'streaming', providerMetadata: undefined }] } },
    chunks: s({ type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello, ' }, { type: 'text-delta', id: 'text-1', delta: 'world!' }, { type: 'text-end', id: 'text-1' }),
  },
  {
    src: I, name: 'ai: issue 14688: reasoning-start replayed against an existing assistant message',
    options: { lastMessage: { id: 'msg-123', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'reasoning', text: 'thinking...', state: 'streaming', providerMetadata: undefined }] } },
    chunks: s({ type: 'reasoning-start', id: 'r-1' }, { type: 'reasoning-delta', id: 'r-1', delta: 'thinking...' }, { type: 'reasoning-end', id: 'r-1' }),
  },
  // tool-result-position.test.ts (record(): createStreamingUIMessageState({messageId: 'message', lastMessage}))
  ...[false, true].flatMap((dynamic) => [false, true].map((error) => ({
    src: T, name: `ai: preserves deferred order (dynamic=${dynamic}, error=${error})`, options: rec,
    chunks: [{ type: 'start-step' }, call('a', dynamic), call('b', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('before'), output('b', error), ...text('between'), output('a'), ...text('after')],
  }))),
  { src: T, name: 'ai: keeps a result after its call when a sibling is still streaming input', options: rec, chunks: [{ type: 'start-step' }, { type: 'tool-input-start', toolCallId: 'x', toolName: 'search' }, call('b'), output('b'), call('x')] },
  { src: T, name: 'ai: preserves result order when data parts become model content', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, { type: 'data-note', data: 'DATA' }, ...text('before'), output('a'), ...text('after')] },
  { src: T, name: 'ai: preserves result order when incomplete calls are ignored', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, call('pending'), ...text('before'), output('a'), ...text('after')] },
  { src: T, name: 'ai: preserves same-step results after intervening text and calls', options: rec, chunks: [{ type: 'start-step' }, call('a'), ...text('before'), call('b'), output('b'), output('a')] },
  { src: T, name: 'ai: retains result-only steps across continuation', lastFrom: [{ type: 'start-step' }, call('a'), { type: 'finish-step' }, { type: 'start-step' }, ...text('waiting'), { type: 'finish-step' }], chunks: [{ type: 'start-step' }, output('a'), { type: 'finish-step' }] },
  {
    src: T, name: 'ai: anchors results across sources, local results, and preliminary outputs', options: rec,
    chunks: [{ type: 'start-step' }, call('a'), { type: 'tool-input-available', toolCallId: 'local', toolName: 'local', input: {} }, { type: 'tool-output-available', toolCallId: 'local', output: 'local' }, { type: 'source-url', sourceId: 'source', url: 'https://example.com' }, { type: 'tool-output-available', toolCallId: 'a', output: 'partial', preliminary: true }, ...text('before'), output('a')],
  },
  { src: T, name: 'ai: preliminary provider output', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'tool-output-available', toolCallId: 'a', output: 'partial', preliminary: true }] },
  ...[false, true].flatMap((dynamic) => [
    { src: T, name: `ai: discards deferred results from reset steps (dynamic=${dynamic})`, options: rec, chunks: [{ type: 'start-step' }, call('a', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('discarded'), output('a'), { type: 'reset-step' }] },
    { src: T, name: `ai: discards deferred results from reset steps, then retry (dynamic=${dynamic})`, lastFrom: [{ type: 'start-step' }, call('a', dynamic), { type: 'finish-step' }, { type: 'start-step' }, ...text('discarded'), output('a'), { type: 'reset-step' }], chunks: [...text('retry'), output('a')] },
    { src: T, name: `ai: clears positions on a later input update (dynamic=${dynamic})`, options: rec, chunks: [{ type: 'start-step' }, call('a', dynamic), output('a'), call('a', dynamic)] },
  ]),
  { src: T, name: 'ai: keeps arrival order at a shared boundary after clearing an earlier result', options: rec, chunks: [{ type: 'start-step' }, call('a'), call('b'), output('a'), output('b'), call('a'), output('a')] },
  {
    src: T, name: 'ai: replays a provider approval and a result arriving in a later stream',
    lastFrom: [{ type: 'start-step' }, call('a'), { type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' }],
    chunks: [{ type: 'tool-approval-response', approvalId: 'approval', approved: true, providerExecuted: true }, { type: 'start-step' }, ...text('before'), output('a'), ...text('after')],
  },
  { src: T, name: 'ai: superseded approval requests', options: rec, chunks: [{ type: 'start-step' }, call('a'), { type: 'start-step' }, call('pending'), { type: 'tool-approval-request', approvalId: 'pending-approval', toolCallId: 'pending' }, ...text('before'), output('a'), ...text('after')] },
  ...['input-available', 'approval-requested', 'approval-responded'].flatMap((st) => [true, false].map((preliminary) => {
    const initial = [{ type: 'start-step' }, call('a')];
    if (st !== 'input-available') initial.push({ type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' });
    if (st === 'approval-responded') initial.push({ type: 'tool-approval-response', approvalId: 'approval', approved: true });
    return { src: T, name: `ai: restores ${st} after resetting a deferred ${preliminary ? 'preliminary' : 'final'} result`, lastFrom: initial, chunks: [{ type: 'start-step' }, { type: 'tool-output-available', toolCallId: 'a', output: 'attempt', preliminary }, { type: 'reset-step' }] };
  })),
  {
    src: T, name: 'ai: retains approval state when resetting a persisted deferred result',
    lastFrom: [{ type: 'start-step' }, call('a'), { type: 'tool-approval-request', approvalId: 'approval', toolCallId: 'a' }, { type: 'tool-approval-response', approvalId: 'approval', approved: true }, { type: 'start-step' }, output('a')],
    chunks: [{ type: 'reset-step' }],
  },
  {
    src: T, name: 'ai: continues messages that have no initial step boundary',
    options: { lastMessage: { id: 'message', role: 'assistant', parts: [{ type: 'tool-search', toolCallId: 'a', state: 'input-available', input: {}, providerExecuted: true, callProviderMetadata: { test: { call: 'a' } } }] } },
    chunks: [{ type: 'start-step' }, ...text('before'), output('a')],
  },
  // openai-custom-tool-stream.test.ts: the chunks streamText emits for a text-encoded custom tool
  ...openaiDeltas.map(([n, deltas]) => ({
    src: O, name: `ai: text-encoded tool input keeps ${n} a string`, options: rec,
    chunks: [
      { type: 'start' }, { type: 'start-step' },
      { type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText', inputEncoding: 'text' },
      ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d })),
      { type: 'tool-input-available', toolCallId: 'call_test', toolName: 'setText', input: deltas.join('') },
      { type: 'finish-step' }, { type: 'finish' },
    ],
  })),
  ...openaiDeltas.map(([n, deltas]) => ({
    src: O, name: `ai: text-encoded tool input keeps ${n} a string (stopped while streaming)`, options: rec,
    chunks: [{ type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText', inputEncoding: 'text' }, ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d }))],
  })),
  ...openaiDeltas.map(([n, deltas]) => ({
    src: O, name: `variant: json-encoded tool input ${n} (stopped while streaming)`, options: rec,
    chunks: [{ type: 'tool-input-start', toolCallId: 'call_test', toolName: 'setText' }, ...deltas.map((d) => ({ type: 'tool-input-delta', toolCallId: 'call_test', inputTextDelta: d }))],
  })),
  { src: O, name: 'variant: split surrogate pair across text deltas', options: rec, chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: '\ud83d' }, { type: 'text-delta', id: 't', delta: '\ude00' }] },
  { src: O, name: 'variant: a lone surrogate in a text delta', options: rec, chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a\ud83d' }] },
  // chat.test.ts (the streams the test server sends; continuation after addToolOutput)
  { src: C, name: 'ai chat: send a simple message', options: { messageId: 'id-1' }, chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, ...['Hello', ',', ' world', '.'].map((delta) => ({ type: 'text-delta', id: 'text-1', delta })), { type: 'text-end', id: 'text-1' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'stop' }] },
  { src: C, name: 'ai chat: disconnected response stream', options: { messageId: 'id-1' }, chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'text-1' }, { type: 'text-delta', id: 'text-1', delta: 'Hello' }] },
  {
    src: C, name: 'ai chat: continuation after a tool error result is submitted',
    options: { lastMessage: { id: 'id-1', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'tool-test-tool', toolCallId: 'tool-call-0', state: 'output-error', input: { testArg: 'test-value' }, errorText: 'test-error' }] } },
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'finish-step' }, { type: 'finish' }],
  },
  {
    src: C, name: 'ai chat: continuation after a dynamic tool output is submitted',
    options: { lastMessage: { id: 'id-1', role: 'assistant', metadata: undefined, parts: [{ type: 'step-start' }, { type: 'dynamic-tool', toolName: 'test-tool', toolCallId: 'tool-call-0', state: 'output-available', input: { testArg: 'test-value' }, output: 'test-output' }] } },
    chunks: [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 'id-1' }, { type: 'text-delta', id: 'id-1', delta: 'test-delta' }, { type: 'text-end', id: 'id-1' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'stop' }],
  },
//MORE
];
