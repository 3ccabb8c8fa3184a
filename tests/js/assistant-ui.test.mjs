// The assistant-ui adapter of the built package (`agent-chat-store/assistant-ui`,
// pkg/assistant-ui.js): how the store's UIMessages look to assistant-ui, and that assistant-ui's
// own runtime (@assistant-ui/react 0.15.22, the root devDependency) reaches the store's actions.
//
// No DOM: the runtime is created by rendering a component once with react-dom/server (the
// runtime is built in the first render, with the adapter of that render), then driven through
// assistant-ui's public runtime API (`runtime.thread`, its messages, parts and composers), the
// way its primitives drive it. The store is a fake that records the calls and answers as the
// real one does (`SubmitResult`, booleans).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { fromThreadMessageLike } from '@assistant-ui/react';
import {
  convertUIMessage,
  createAttachmentAdapter,
  createToolAnswerCallbacks,
  makeToolUIs,
  nestedMessages,
  usePending,
  usePendingApprovals,
  usePendingQuestions,
  useChatStoreRuntime,
  waitsForUser,
} from '../../pkg/assistant-ui.js';

// ----- helpers ---------------------------------------------------------------------------------

const user = (id, parts) => ({ id, role: 'user', parts });
const assistant = (id, parts) => ({ id, role: 'assistant', parts });
const text = (t, state) => (state ? { type: 'text', text: t, state } : { type: 'text', text: t });

function snapshotOf(over = {}) {
  return {
    sessionId: 's1',
    status: 'ready',
    busy: false,
    error: null,
    hydrated: true,
    canRegenerate: true,
    canEdit: true,
    capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true, followUpAttachments: false },
    composer: { canSendText: true },
    queued: [],
    // A server without a session list, as the store shows it.
    sessions: { available: false, loaded: false, loading: false, hasMore: false, archivedLoaded: false, archivedHasMore: false, archivable: false, items: [], error: null },
    pending: { approvals: [], questions: [], held: [] },
    stopped: false,
    messages: [],
    ...over,
  };
}

// A fake ChatStore: records every action, answers like the real one.
function fakeStore(snapshot, answers = {}) {
  const calls = [];
  const answer = (name, fallback) => (name in answers ? answers[name] : fallback);
  return {
    calls,
    subscribe: () => () => {},
    getSnapshot: () => snapshot,
    send: (...args) => {
      calls.push(['send', ...args]);
      return answer('send', { kind: 'sent' });
    },
    stop: () => calls.push(['stop']),
    regenerate: (...args) => {
      calls.push(['regenerate', ...args]);
      return true;
    },
    addToolApprovalResponse: (args) => {
      calls.push(['addToolApprovalResponse', args]);
      return answer('addToolApprovalResponse', true);
    },
    addToolOutput: (args) => {
      calls.push(['addToolOutput', args]);
      return answer('addToolOutput', true);
    },
    loadSessions: () => true,
  };
}

// assistant-ui's runtime over `store`, as `useChatStoreRuntime` builds it in a first render.
function runtimeOf(snapshot, { answers, opts } = {}) {
  const store = fakeStore(snapshot, answers);
  let runtime;
  function Host() {
    runtime = useChatStoreRuntime(store, opts);
    return null;
  }
  renderToString(createElement(Host));
  return { store, runtime, thread: runtime.thread };
}

// What a hook returns in one render over `store`.
function hookOf(hook, store) {
  let value;
  function Host() {
    value = hook(store);
    return null;
  }
  renderToString(createElement(Host));
  return value;
}

// The converted message as assistant-ui itself reads it (throws where assistant-ui would).
const asThreadMessage = (message) =>
  fromThreadMessageLike(convertUIMessage(message), 'fallback', { type: 'complete', reason: 'unknown' });

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

const approvalPart = (extra = {}) => ({
  type: 'tool-deleteFile',
  toolCallId: 'call-del',
  state: 'approval-requested',
  input: { path: 'notes.txt' },
  approval: { id: 'ap-1', requestReason: 'Deleting a file' },
  ...extra,
});
const questionPart = (extra = {}) => ({
  type: 'dynamic-tool',
  toolName: 'askUser',
  toolCallId: 'call-ask',
  state: 'input-available',
  input: { question: 'which colour', options: ['red', 'green', 'blue'] },
  interrupt: { question: 'which colour', options: ['red', 'green', 'blue'] },
  ...extra,
});

// ----- part kinds --------------------------------------------------------------------------------

test('text and reasoning keep their streaming state as part status', () => {
  const like = convertUIMessage(
    assistant('a1', [{ type: 'reasoning', text: 'thinking', state: 'streaming' }, text('Hello', 'done'), text('plain')]),
  );
  assert.deepEqual(like.content, [
    { type: 'reasoning', text: 'thinking', status: { type: 'running' } },
    { type: 'text', text: 'Hello', status: { type: 'complete' } },
    { type: 'text', text: 'plain' },
  ]);
});

test('files: inline file parts in an answer, attachment chips in a user message', () => {
  const answer = convertUIMessage(
    assistant('a1', [{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AA', filename: 'chart.png' }]),
  );
  assert.deepEqual(answer.content, [{ type: 'file', data: 'data:image/png;base64,AA', mimeType: 'image/png', filename: 'chart.png' }]);

  const question = asThreadMessage(
    user('u1', [
      { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AA', filename: 'cat.png' },
      { type: 'file', mediaType: 'text/plain', url: 'data:text/plain;base64,aGk=', filename: 'notes.txt' },
      text('look'),
    ]),
  );
  assert.deepEqual(question.content, [{ type: 'text', text: 'look' }]);
  assert.deepEqual(
    question.attachments.map((a) => [a.type, a.name, a.contentType, a.content[0].type]),
    [
      ['image', 'cat.png', 'image/png', 'image'],
      ['file', 'notes.txt', 'text/plain', 'file'],
    ],
  );
  assert.equal(question.attachments[0].content[0].image, 'data:image/png;base64,AA');
});

test('sources: source-url and source-document become source parts', () => {
  const like = convertUIMessage(
    assistant('a1', [
      { type: 'source-url', sourceId: 's1', url: 'https://example.com', title: 'Example' },
      { type: 'source-document', sourceId: 's2', mediaType: 'application/pdf', title: 'Spec', filename: 'spec.pdf' },
    ]),
  );
  assert.deepEqual(like.content, [
    { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com', title: 'Example' },
    { type: 'source', sourceType: 'document', id: 's2', title: 'Spec', mediaType: 'application/pdf', filename: 'spec.pdf' },
  ]);
});

test('data-NAME parts become named data parts, in answers and user messages', () => {
  const like = convertUIMessage(assistant('a1', [{ type: 'data-weather', id: 'w1', data: { temp: 21 } }]));
  assert.deepEqual(like.content, [{ type: 'data', name: 'weather', data: { temp: 21 }, id: 'w1' }]);
  const mine = convertUIMessage(user('u1', [text('hi'), { type: 'data-context', data: { page: 2 } }]));
  assert.deepEqual(mine.content[1], { type: 'data', name: 'context', data: { page: 2 } });
});

test('ai 7 steering-message: a data part with the steering text and parts', () => {
  const steering = { type: 'steering-message', id: 'st-1', parts: [text('also check the tests'), { type: 'file', mediaType: 'text/plain', url: 'data:,x' }] };
  const like = convertUIMessage(assistant('a1', [text('Working', 'done'), steering, text('Checked.', 'done')]));
  assert.equal(like.content.length, 3);
  assert.deepEqual(like.content[1], {
    type: 'data',
    name: 'steering-message',
    data: { id: 'st-1', text: 'also check the tests', parts: steering.parts },
  });
});

test('ai 7 reasoning-file: a file part marked as reasoning', () => {
  const like = convertUIMessage(assistant('a1', [{ type: 'reasoning-file', mediaType: 'image/png', url: 'data:image/png;base64,AA' }]));
  assert.deepEqual(like.content, [{ type: 'file', data: 'data:image/png;base64,AA', mimeType: 'image/png', reasoning: true }]);
});

test('ai 7 custom: a data part `custom` with its kind and provider metadata', () => {
  const like = convertUIMessage(
    assistant('a1', [{ type: 'custom', kind: 'openai.compaction', providerMetadata: { openai: { id: 'x' } } }]),
  );
  assert.deepEqual(like.content, [
    { type: 'data', name: 'custom', data: { kind: 'openai.compaction', providerMetadata: { openai: { id: 'x' } } } },
  ]);
});

test('step-start is the only part dropped; an unknown kind stays as a data part', () => {
  const like = convertUIMessage(assistant('a1', [text('one', 'done'), { type: 'step-start' }, text('two', 'done'), { type: 'future-kind', value: 1 }]));
  assert.deepEqual(
    like.content.map((p) => p.type),
    ['text', 'text', 'data'],
  );
  assert.deepEqual(like.content[2], { type: 'data', name: 'future-kind', data: { value: 1 } });
  // In a user bubble, a part assistant-ui forbids there (reasoning) does not take the thread down.
  const odd = asThreadMessage(user('u1', [text('hi'), { type: 'reasoning', text: 'hmm' }, { type: 'step-start' }]));
  assert.deepEqual(odd.content[1], { type: 'data', name: 'reasoning', data: { text: 'hmm' } });
  assert.equal(odd.content.length, 2);
});

test('a system message is one text part', () => {
  const like = convertUIMessage({ id: 'sys', role: 'system', parts: [text('Be brief.'), text('Be kind.')] });
  assert.deepEqual(like.content, [{ type: 'text', text: 'Be brief.\n\nBe kind.' }]);
});

test('every part kind in one message passes assistant-ui`s own conversion', () => {
  const message = assistant('a1', [
    { type: 'step-start' },
    { type: 'reasoning', text: 'r', state: 'done' },
    { type: 'reasoning-file', mediaType: 'image/png', url: 'data:image/png;base64,AA' },
    text('t', 'done'),
    { type: 'file', mediaType: 'text/plain', url: 'data:,x' },
    { type: 'source-url', sourceId: 's', url: 'https://example.com' },
    { type: 'source-document', sourceId: 'd', mediaType: 'text/plain', title: 'D' },
    { type: 'data-x', data: 1 },
    { type: 'custom', kind: 'a.b' },
    { type: 'steering-message', id: 'st', parts: [text('more')] },
    { type: 'tool-ls', toolCallId: 'c1', state: 'output-available', input: { path: '.' }, output: 'a\nb' },
    { type: 'dynamic-tool', toolName: 'echo', toolCallId: 'c2', state: 'input-streaming' },
  ]);
  const converted = asThreadMessage(message);
  assert.deepEqual(
    converted.content.map((p) => p.type),
    ['reasoning', 'file', 'text', 'file', 'source', 'source', 'data', 'data', 'data', 'tool-call', 'tool-call'],
  );
});

// ----- tool parts and waiting states ----------------------------------------------------------------

test('tool states: result, error, denial, preliminary output, input still streaming', () => {
  const [done, failed, denied, interim, streaming] = convertUIMessage(
    assistant('a1', [
      { type: 'tool-ls', toolCallId: 'c1', state: 'output-available', input: { path: '.' }, output: ['a'] },
      { type: 'tool-ls', toolCallId: 'c2', state: 'output-error', input: { path: '/' }, errorText: 'outside the root' },
      { type: 'tool-rm', toolCallId: 'c3', state: 'output-denied', input: {}, approval: { id: 'ap', approved: false, reason: 'no' } },
      { type: 'tool-ls', toolCallId: 'c4', state: 'output-available', input: {}, output: 'partial', preliminary: true },
      { type: 'dynamic-tool', toolName: 'echo', toolCallId: 'c5', state: 'input-streaming', input: 'he' },
    ]),
  ).content;
  assert.deepEqual([done.toolName, done.args, done.result, done.isError], ['ls', { path: '.' }, ['a'], false]);
  assert.deepEqual([failed.result, failed.isError], [{ error: 'outside the root' }, true]);
  assert.deepEqual([denied.result, denied.isError, denied.approval], [{ error: 'no' }, true, { id: 'ap', approved: false, reason: 'no' }]);
  assert.equal(interim.isPreliminary, true);
  assert.deepEqual([streaming.toolName, streaming.args, streaming.argsText, streaming.result], ['echo', {}, '"he"', undefined]);
});

test('an approval asked: the part carries `approval` and the message requires action', () => {
  const message = assistant('a1', [text('Deleting.', 'done'), approvalPart()]);
  const like = convertUIMessage(message, true);
  assert.deepEqual(like.status, { type: 'requires-action', reason: 'interrupt' });
  // Whether it waits is the store's word (`snapshot.pending`), not read from the parts here.
  assert.equal(convertUIMessage(message).status, undefined);
  const call = like.content[1];
  assert.deepEqual(call.approval, { id: 'ap-1', prompt: 'Deleting a file' });
  assert.equal(call.result, undefined);
  assert.equal(call.interrupt, undefined);
  assert.equal(waitsForUser(approvalPart()), true);
});

test('an approval answered (approval-responded) no longer requires action', () => {
  const part = approvalPart({ state: 'approval-responded', approval: { id: 'ap-1', approved: true } });
  const like = convertUIMessage(assistant('a1', [part]));
  assert.equal(like.status, undefined);
  assert.deepEqual(like.content[0].approval, { id: 'ap-1', approved: true });
  assert.equal(waitsForUser(part), false);
});

test('an ask-user question: the part carries a human interrupt and the message requires action', () => {
  const like = convertUIMessage(assistant('a1', [questionPart()]), true);
  assert.deepEqual(like.status, { type: 'requires-action', reason: 'interrupt' });
  assert.deepEqual(like.content[0].interrupt, {
    type: 'human',
    payload: { question: 'which colour', options: ['red', 'green', 'blue'] },
  });
  // A plain running call (no interrupt) is not waiting for the user.
  const running = questionPart({ interrupt: undefined });
  assert.equal(waitsForUser(running), false);
  assert.equal(convertUIMessage(assistant('a2', [running])).status, undefined);
  // Once answered, the interrupt is gone with the state.
  const answered = convertUIMessage(assistant('a3', [questionPart({ state: 'output-available', output: 'red' })]));
  assert.equal(answered.content[0].interrupt, undefined);
  assert.equal(answered.status, undefined);
});

test('makeToolUIs hands a renderer the store`s state of the call, not one guessed from assistant-ui`s fields', () => {
  const { Fallback } = makeToolUIs({ fallback: () => null });
  const partOf = (part) => Fallback(convertUIMessage(assistant('a1', [part])).content[0]).props.part;
  // Its input still streams, though what came so far parses as JSON.
  const streaming = { type: 'dynamic-tool', toolName: 'echo', toolCallId: 'c5', state: 'input-streaming', input: 'he' };
  assert.equal(partOf(streaming).state, 'input-streaming');
  const answered = approvalPart({ state: 'approval-responded', approval: { id: 'ap-1', approved: false } });
  assert.equal(partOf(answered).state, 'approval-responded');
  const denied = approvalPart({ state: 'output-denied', approval: { id: 'ap-1', approved: false, reason: 'no' } });
  assert.deepEqual([partOf(denied).state, partOf(denied).errorText], ['output-denied', 'no']);
  assert.equal(partOf(questionPart()).state, 'input-available');
  // A tool-call part made elsewhere (no `state`): what its result says.
  const bare = (call) => Fallback({ type: 'tool-call', toolCallId: 'x', toolName: 'ls', args: {}, argsText: '{}', ...call }).props.part.state;
  assert.deepEqual([bare({}), bare({ result: 1 }), bare({ result: 'x', isError: true })], ['input-available', 'output-available', 'output-error']);
});

// ----- nested sub-agent transcript ------------------------------------------------------------------

const transcript = [
  { role: 'user', text: 'list the docs folder' },
  { role: 'assistant', text: '' },
  { role: 'tool', toolName: 'ls', text: 'a.md\nb.md' },
  { role: 'tool', toolName: 'echo', text: 'boom', isError: true },
  { role: 'assistant', text: 'Two files.' },
];
const subagentPart = (details, extra = {}) => ({
  type: 'dynamic-tool',
  toolName: 'pi.subagent',
  toolCallId: 'sub-1',
  state: 'output-available',
  input: { task: 'list the docs folder' },
  output: 'Two files.',
  details,
  ...extra,
});

test('a sub-agent transcript becomes the tool part`s nested messages', () => {
  const details = { uiKind: 'pi-subagent', task: 'list the docs folder', status: 'done', steps: [], transcript };
  const call = convertUIMessage(assistant('a1', [subagentPart(details)])).content[0];
  assert.equal(call.artifact, details);
  const nested = call.messages;
  assert.deepEqual(
    nested.map((m) => [m.role, m.id, m.content.map((p) => p.type)]),
    [
      ['user', 'sub-1:0', ['text']],
      // The planning message (no text) holds the tool results that followed it.
      ['assistant', 'sub-1:1', ['tool-call', 'tool-call']],
      ['assistant', 'sub-1:4', ['text']],
    ],
  );
  const [ls, echo] = nested[1].content;
  assert.deepEqual([ls.toolName, ls.result, ls.isError], ['ls', 'a.md\nb.md', false]);
  assert.deepEqual([echo.toolName, echo.result, echo.isError], ['echo', { error: 'boom' }, true]);
  assert.equal(nested[2].content[0].text, 'Two files.');
  assert.deepEqual(nested[2].status, { type: 'complete', reason: 'unknown' });
  // The same details object gives the same nested messages (no re-render of the nested thread).
  assert.equal(convertUIMessage(assistant('a1', [subagentPart(details)])).content[0].messages, nested);
});

test('a running sub-agent shows as running; a failed one carries its error', () => {
  const running = nestedMessages('sub-1', { status: 'running', transcript: [{ role: 'user', text: 'go' }] });
  assert.deepEqual(running.map((m) => m.role), ['user', 'assistant']);
  assert.deepEqual(running[1].status, { type: 'running' });
  const failed = nestedMessages('sub-2', {
    status: 'error',
    error: 'the subagent was stopped',
    transcript: [{ role: 'user', text: 'go' }, { role: 'assistant', text: 'Starting' }],
  });
  assert.equal(failed.length, 2);
  assert.deepEqual(failed[1].status, { type: 'incomplete', reason: 'error', error: 'the subagent was stopped' });
  // Transcript entries may be UIMessages too.
  const ui = nestedMessages('sub-3', { transcript: [user('n1', [text('q')]), assistant('n2', [text('a', 'done')])] });
  assert.deepEqual(ui.map((m) => [m.id, m.role, m.content[0].text]), [['n1', 'user', 'q'], ['n2', 'assistant', 'a']]);
  // No transcript, no nested messages.
  assert.equal(nestedMessages('x', { uiKind: 'other' }), undefined);
  assert.equal(convertUIMessage(assistant('a1', [subagentPart(undefined)])).content[0].messages, undefined);
});

test('assistant-ui exposes the nested messages on the tool part (what MessagePartPrimitive.Messages reads)', () => {
  const details = { status: 'done', transcript };
  const { thread } = runtimeOf(snapshotOf({ messages: [user('u1', [text('go')]), assistant('a1', [subagentPart(details)])] }));
  const part = thread.getMessageById('a1').getMessagePartByToolCallId('sub-1').getState();
  assert.equal(part.type, 'tool-call');
  assert.deepEqual(part.messages.map((m) => m.id), ['sub-1:0', 'sub-1:1', 'sub-1:4']);
});

// ----- the runtime: what assistant-ui offers, and where its actions go ------------------------------

test('capabilities: edit and reload only where the store can, tool answers and attachments always', () => {
  const idle = runtimeOf(snapshotOf()).thread.getState().capabilities;
  assert.deepEqual(
    [idle.edit, idle.reload, idle.cancel, idle.answerToolCall, idle.attachments],
    [true, true, true, true, true],
  );
  const busy = runtimeOf(snapshotOf({ busy: true, status: 'streaming', canEdit: false, canRegenerate: false })).thread.getState().capabilities;
  assert.deepEqual([busy.edit, busy.reload, busy.answerToolCall], [false, false, true]);
  // pi mode: the server owns the history, nothing to edit or regenerate, answers still go.
  const pi = runtimeOf(
    snapshotOf({ canEdit: false, canRegenerate: false, capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false, followUpAttachments: true } }),
  ).thread.getState().capabilities;
  assert.deepEqual([pi.edit, pi.reload, pi.answerToolCall, pi.queue], [false, false, true, true]);
  // The default attachment adapter can be turned off, or replaced by the host's.
  assert.equal(runtimeOf(snapshotOf(), { opts: { attachments: false } }).thread.getState().capabilities.attachments, false);
});

test('respondToApproval on a tool part answers the store`s approval', async () => {
  const { thread, store } = runtimeOf(
    snapshotOf({ messages: [user('u1', [text('delete notes.txt')]), assistant('a1', [approvalPart()])], pending: waitingApproval('a1') }),
  );
  const part = thread.getMessageById('a1').getMessagePartByToolCallId('call-del');
  assert.deepEqual(part.getState().status, { type: 'requires-action', reason: 'interrupt' });
  await part.respondToToolApproval({ approved: false, reason: 'keep it' });
  assert.deepEqual(store.calls, [['addToolApprovalResponse', { id: 'ap-1', approved: false, reason: 'keep it' }]]);
});

// `snapshot.pending` as the store shows `approvalPart()` waiting in message `messageId`.
const waitingApproval = (messageId) => ({
  approvals: [{ approvalId: 'ap-1', toolCallId: 'call-del', toolName: 'deleteFile', messageId }],
  questions: [],
});

test('a message requires action while `snapshot.pending` names it, also while the turn runs', () => {
  // A running thread: assistant-ui's own status rule would show its last message running.
  const running = { busy: true, status: 'streaming', canEdit: false, canRegenerate: false };
  const messages = [user('u1', [text('delete notes.txt')]), assistant('a1', [approvalPart()])];
  const waits = runtimeOf(snapshotOf({ ...running, messages, pending: waitingApproval('a1') })).thread;
  assert.deepEqual(waits.getMessageById('a1').getState().status, { type: 'requires-action', reason: 'interrupt' });
  // The parts alone decide nothing here: the store's `pending` names no call of a1.
  const other = runtimeOf(snapshotOf({ ...running, messages, pending: waitingApproval('a0') })).thread;
  assert.equal(other.getMessageById('a1').getState().status.type, 'running');
});

test('a refused approval answer rejects, so the tool UI can offer it again', async () => {
  const { thread } = runtimeOf(snapshotOf({ messages: [assistant('a1', [approvalPart()])] }), {
    answers: { addToolApprovalResponse: false },
  });
  const part = thread.getMessageById('a1').getMessagePartByToolCallId('call-del');
  await assert.rejects(part.respondToToolApproval({ approved: true }), /No tool call waits for the approval ap-1/);
});

test('resume on an ask-user part answers it with the payload, also while the turn runs (pi)', () => {
  const { thread, store } = runtimeOf(
    snapshotOf({
      busy: true,
      status: 'streaming',
      canEdit: false,
      canRegenerate: false,
      messages: [user('u1', [text('ask which colour')]), assistant('a1', [questionPart()])],
      pending: { approvals: [], questions: [{ toolCallId: 'call-ask', toolName: 'askUser', messageId: 'a1', question: 'which colour' }] },
    }),
  );
  const message = thread.getMessageById('a1');
  // The thread runs, yet the message and its part show that they wait for the user.
  assert.equal(thread.getState().isRunning, true);
  assert.deepEqual(message.getState().status, { type: 'requires-action', reason: 'interrupt' });
  const part = message.getMessagePartByToolCallId('call-ask');
  assert.deepEqual(part.getState().interrupt, { type: 'human', payload: { question: 'which colour', options: ['red', 'green', 'blue'] } });
  part.resumeToolCall('green');
  assert.deepEqual(store.calls, [['addToolOutput', { toolCallId: 'call-ask', output: 'green' }]]);
});

test('a refused resume throws assistant-ui`s own words', () => {
  const { thread } = runtimeOf(snapshotOf({ messages: [assistant('a1', [questionPart()])] }), { answers: { addToolOutput: false } });
  const part = thread.getMessageById('a1').getMessagePartByToolCallId('call-ask');
  assert.throws(() => part.resumeToolCall('red'), /Tool call call-ask is not waiting for resume/);
});

test('addResult on a client tool sends its output; an error result becomes errorText', async () => {
  const clientTool = { type: 'tool-getLocation', toolCallId: 'call-loc', state: 'input-available', input: {} };
  const { thread, store } = runtimeOf(snapshotOf({ messages: [assistant('a1', [clientTool])] }));
  thread.getMessageById('a1').getMessagePartByToolCallId('call-loc').addToolResult({ city: 'Berlin' });
  assert.deepEqual(store.calls, [['addToolOutput', { toolCallId: 'call-loc', output: { city: 'Berlin' } }]]);

  const callbacks = createToolAnswerCallbacks(store);
  await callbacks.onAddToolResult({ messageId: 'a1', toolName: 'getLocation', toolCallId: 'call-loc', result: { error: 'denied' }, isError: true });
  await callbacks.onAddToolResult({ messageId: 'a1', toolName: 'getLocation', toolCallId: 'call-loc', result: 'no GPS', isError: true });
  assert.deepEqual(store.calls.slice(1), [
    ['addToolOutput', { toolCallId: 'call-loc', errorText: 'denied' }],
    ['addToolOutput', { toolCallId: 'call-loc', errorText: 'no GPS' }],
  ]);
  const refused = createToolAnswerCallbacks(fakeStore(snapshotOf(), { addToolOutput: false }));
  await assert.rejects(refused.onAddToolResult({ toolCallId: 'gone', result: 1, isError: false }), /does not wait for a result/);
});

test('Edit: the edit composer`s send edits that user message in the store', async () => {
  const messages = [user('u1', [text('hello')]), assistant('a1', [text('Hi!', 'done')]), user('u2', [text('second')]), assistant('a2', [text('Ok', 'done')])];
  const { thread, store } = runtimeOf(snapshotOf({ messages }));
  const edited = thread.getMessageById('u1');
  edited.composer.beginEdit();
  edited.composer.setText('hello again');
  await edited.composer.send();
  await settle();
  assert.deepEqual(store.calls, [['send', 'hello again', [], { messageId: 'u1' }]]);
});

test('Edit: a refused edit opens the edit again with the user`s text', async () => {
  const { thread, store } = runtimeOf(snapshotOf({ messages: [user('u1', [text('hello')]), assistant('a1', [text('Hi!')])] }), {
    answers: { send: { kind: 'blocked', reason: 'busy', hint: 'Wait for the answer' } },
  });
  const edited = thread.getMessageById('u1');
  edited.composer.beginEdit();
  edited.composer.setText('changed');
  edited.composer.send();
  await settle();
  assert.deepEqual(store.calls, [['send', 'changed', [], { messageId: 'u1' }]]);
  // assistant-ui reopens the edit only for a MessageNotSentError.
  const state = edited.composer.getState();
  assert.equal(state.isEditing, true);
  assert.equal(state.text, 'changed');
});

test('Edit: an assistant message cannot be edited; the store is not asked', async () => {
  const { thread, store } = runtimeOf(snapshotOf({ messages: [user('u1', [text('hello')]), assistant('a1', [text('Hi!', 'done')])] }));
  const answer = thread.getMessageById('a1');
  answer.composer.beginEdit();
  answer.composer.setText('Hello!');
  answer.composer.send();
  await settle();
  assert.deepEqual(store.calls, []);
  // Refused with MessageNotSentError: assistant-ui hands the edit back.
  assert.equal(answer.composer.getState().isEditing, true);
  assert.equal(answer.composer.getState().text, 'Hello!');
});

test('Reload regenerates after the assistant message`s parent; Cancel stops', async () => {
  const { thread, store } = runtimeOf(snapshotOf({ messages: [user('u1', [text('hi')]), assistant('a1', [text('Hi!', 'done')])] }));
  await thread.getMessageById('a1').reload();
  thread.cancelRun();
  await settle();
  assert.deepEqual(store.calls, [['regenerate', 'u1'], ['stop']]);
});

// ----- errors ---------------------------------------------------------------------------------------

const failure = (message, code = 'Server') => Object.assign(new Error(message), { name: 'ChatStoreError', code });

test('a turn that failed before any answer shows its error on a synthetic assistant message, with Retry', async () => {
  const { thread, store } = runtimeOf(
    snapshotOf({ status: 'error', error: failure('502 Bad Gateway'), messages: [user('u1', [text('hi')]), assistant('a1', [text('Hi!', 'done')]), user('u2', [text('again')])] }),
  );
  const messages = thread.getState().messages;
  assert.deepEqual(messages.map((m) => m.id), ['u1', 'a1', 'u2', 'u2:error']);
  const standIn = messages[3];
  assert.equal(standIn.role, 'assistant');
  assert.deepEqual(standIn.content, []);
  assert.deepEqual(standIn.status, { type: 'incomplete', reason: 'error', error: '502 Bad Gateway' });
  // The earlier answer keeps its own status.
  assert.notEqual(messages[1].status.type, 'incomplete');
  // Retry (ActionBarPrimitive.Reload on it) answers the user message again.
  assert.equal(thread.getState().capabilities.reload, true);
  await thread.getMessageById('u2:error').reload();
  assert.deepEqual(store.calls, [['regenerate', 'u2']]);
});

test('a failed turn with an answer marks that answer; a stop is shown as cancelled, with no stand-in', () => {
  const failed = runtimeOf(snapshotOf({ status: 'error', error: failure('stream cut', 'Network'), messages: [user('u1', [text('hi')]), assistant('a1', [text('Hal', 'streaming')])] }));
  assert.deepEqual(failed.thread.getState().messages.map((m) => [m.id, m.status?.type, m.status?.reason]), [
    ['u1', undefined, undefined],
    ['a1', 'incomplete', 'error'],
  ]);
  // A stop is the store's word (`snapshot.stopped`): an aborted request (an `Aborted` error)…
  const stopped = runtimeOf(snapshotOf({ status: 'error', stopped: true, error: failure('stopped', 'Aborted'), messages: [user('u1', [text('hi')])] }));
  assert.deepEqual(stopped.thread.getState().messages.map((m) => m.id), ['u1']);
  const stoppedLate = runtimeOf(snapshotOf({ status: 'error', stopped: true, error: failure('stopped', 'Aborted'), messages: [user('u1', [text('hi')]), assistant('a1', [text('Hal')])] }));
  assert.deepEqual(stoppedLate.thread.getState().messages[1].status, { type: 'incomplete', reason: 'cancelled' });
  // …or the user's stop, which leaves no error at all.
  const stoppedByUser = runtimeOf(snapshotOf({ stopped: true, messages: [user('u1', [text('hi')]), assistant('a1', [text('Hal')])] }));
  assert.deepEqual(stoppedByUser.thread.getState().messages[1].status, { type: 'incomplete', reason: 'cancelled' });
  // No error, no stand-in.
  const ok = runtimeOf(snapshotOf({ messages: [user('u1', [text('hi')])] }));
  assert.deepEqual(ok.thread.getState().messages.map((m) => m.id), ['u1']);
});

test('the stand-in`s id is derived from the user message, so it is the same on every render', () => {
  const snap = snapshotOf({ status: 'error', error: failure('boom'), messages: [user('u9', [text('hi')])] });
  const ids = [runtimeOf(snap), runtimeOf(snap)].map(({ thread }) => thread.getState().messages.at(-1).id);
  assert.deepEqual(ids, ['u9:error', 'u9:error']);
  // A thread with no message at all (the first turn failed before the store kept it).
  const empty = runtimeOf(snapshotOf({ status: 'error', error: failure('boom'), messages: [] }));
  assert.deepEqual(empty.thread.getState().messages.map((m) => [m.id, m.status.reason]), [['s1:error', 'error']]);
});

// ----- attachments ------------------------------------------------------------------------------------

test('attachments: images and text files reach store.send as data: URLs', async () => {
  const { thread, store } = runtimeOf(snapshotOf());
  await thread.composer.addAttachment(new File(['hello'], 'notes.txt', { type: 'text/plain' }));
  await thread.composer.addAttachment(new File([new Uint8Array([137, 80, 78, 71])], 'cat.png', { type: 'image/png' }));
  thread.composer.setText('two files');
  await thread.composer.send();
  await settle();
  assert.deepEqual(store.calls, [
    [
      'send',
      'two files',
      [
        { mediaType: 'text/plain', url: 'data:text/plain;base64,aGVsbG8=', filename: 'notes.txt' },
        { mediaType: 'image/png', url: 'data:image/png;base64,iVBORw==', filename: 'cat.png' },
      ],
    ],
  ]);
});

test('attachments: a send the store refuses (files while busy) leaves text and files in the composer', async () => {
  const { thread, store } = runtimeOf(snapshotOf(), {
    answers: { send: { kind: 'blocked', reason: 'filesWhileBusy', hint: 'Files can be sent once the answer is done' } },
  });
  await thread.composer.addAttachment(new File(['x'], 'a.txt', { type: 'text/plain' }));
  thread.composer.setText('with a file');
  thread.composer.send();
  await settle();
  assert.equal(store.calls.length, 1);
  const draft = thread.composer.getState();
  assert.equal(draft.text, 'with a file');
  assert.deepEqual(draft.attachments.map((a) => a.name), ['a.txt']);
});

test('attachments: the default adapter accepts images and text files, not everything', () => {
  const adapter = createAttachmentAdapter();
  for (const type of ['image/*', 'text/plain', 'text/markdown', 'application/json', 'application/pdf']) {
    assert.ok(adapter.accept.split(',').includes(type), type);
  }
  assert.equal(adapter.accept.includes('*/*'), false);
  assert.equal(createAttachmentAdapter({ fileTypes: 'text/csv' }).accept, 'image/*,text/csv');
});

// ----- thread-level hooks ------------------------------------------------------------------------------

const pending = {
  approvals: [{ approvalId: 'ap-1', toolCallId: 'call-del', toolName: 'deleteFile', input: { path: 'notes.txt' }, messageId: 'a1' }],
  questions: [{ toolCallId: 'call-ask', toolName: 'askUser', question: 'which colour', options: ['red', 'green', 'blue'], input: {}, messageId: 'a1' }],
  held: [{ toolCallId: 'call-early', toolName: 'askUser', messageId: 'a1', output: 'red' }],
};

test('usePending: what waits, and approve / deny / answer go to the store', () => {
  const store = fakeStore(snapshotOf({ pending }));
  const p = hookOf(usePending, store);
  assert.equal(p.approvals, pending.approvals);
  assert.equal(p.questions, pending.questions);
  assert.equal(p.held, pending.held);
  assert.equal(p.approve('ap-1'), true);
  p.deny('ap-1', 'not that one');
  p.answer('call-ask', 'blue');
  assert.deepEqual(store.calls, [
    ['addToolApprovalResponse', { id: 'ap-1', approved: true }],
    ['addToolApprovalResponse', { id: 'ap-1', approved: false, reason: 'not that one' }],
    ['addToolOutput', { toolCallId: 'call-ask', output: 'blue' }],
  ]);
});

test('usePendingApprovals / usePendingQuestions: the two lists alone', () => {
  const store = fakeStore(snapshotOf({ pending }));
  const approvals = hookOf(usePendingApprovals, store);
  assert.equal(approvals.pending, pending.approvals);
  approvals.approve('ap-1', 'fine');
  const questions = hookOf(usePendingQuestions, store);
  assert.equal(questions.pending, pending.questions);
  questions.answer('call-ask', 'red');
  assert.deepEqual(store.calls, [
    ['addToolApprovalResponse', { id: 'ap-1', approved: true, reason: 'fine' }],
    ['addToolOutput', { toolCallId: 'call-ask', output: 'red' }],
  ]);
});
