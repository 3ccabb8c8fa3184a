// The AI SDK runtime's scripted behaviours for the `useChat` actions: a client tool answered
// with a tool output (`where am I` → getLocation), a tool that needs approval (`delete FILE` →
// deleteFile, approved or denied), regenerate (`(attempt N)`), and edit (a submit naming an
// existing user message). Each continuation is a request the way `useChat` (and the store)
// makes it: trigger `submit-message`, an empty `message`, the answered `messages`. The chunks
// are reduced by the `ai` package's own `readUIMessageStream`, and its built-in
// `sendAutomaticallyWhen` predicates are asked about the results.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  lastAssistantMessageIsCompleteWithApprovalResponses as approvalsAnswered,
  lastAssistantMessageIsCompleteWithToolCalls as toolCallsComplete,
  readUIMessageStream,
} from 'ai';
import { replyToUser, toolCallsFor } from '../lib/script.mjs';
import { postJson, readChunks, sid, startServer, textOf } from './helpers.mjs';

let s; // --interactive-tools
let plain; // without: the default tool set
before(async () => {
  [s, plain] = await Promise.all([
    startServer(['--runtime', 'ai-sdk', '--tps', '0', '--interactive-tools']),
    startServer(['--runtime', 'ai-sdk', '--tps', '0']),
  ]);
});
after(() => Promise.all([s?.stop(), plain?.stop()]));

const user = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const clone = (v) => structuredClone(v);

/** The assistant message the `ai` package builds from the chunks (continuing `message`). */
async function reduce(chunks, message) {
  let last;
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  for await (const m of readUIMessageStream({ stream, message: message && clone(message) })) last = m;
  return last;
}

/** One turn: POST, read, reduce. */
async function turn(server, body, continuing) {
  const res = await server.chat(body);
  assert.equal(res.status, 200, await res.clone().text());
  const { chunks, error } = await readChunks(res);
  assert.equal(error, undefined);
  return { chunks, message: await reduce(chunks, continuing) };
}

const toolPart = (m, name) => m.parts.find((p) => p.type === `tool-${name}`);

test('catalog: getLocation and deleteFile only with --interactive-tools; only the AI SDK runtime calls them', async () => {
  const names = async (server) => (await (await fetch(`${server.api}/catalog?sessionId=${sid('cat')}`)).json()).tools.map((t) => t.name);
  assert.deepEqual(await names(s), ['ls', 'echo', 'getLocation', 'deleteFile']);
  assert.deepEqual(await names(plain), ['ls', 'echo']);
  // A runtime without the tools never calls them: the same words get a plain answer.
  assert.deepEqual(toolCallsFor('where am I', { tools: ['ls', 'echo', 'pi.subagent'] }), []);
  assert.deepEqual(toolCallsFor('delete notes.txt', { tools: ['ls', 'echo'] }), []);
  assert.deepEqual(toolCallsFor('please delete notes.txt.', { tools: ['deleteFile'] }), [{ name: 'deleteFile', args: { path: 'notes.txt' } }]);
  assert.equal(replyToUser('where am I words:1', { words: 3, tools: ['ls', 'echo'] }).blocks[0].text, 'Answer where am I: w1');
  const id = sid('plain-where');
  const { message } = await turn(plain, { sessionId: id, message: 'where am I words:1', messages: [user('u1', 'where am I words:1')] });
  assert.equal(textOf(message), 'Answer where am I: w1');
});

test('where am I: a client tool call ends the step; the tool output continues the same assistant message', async () => {
  const id = sid('where');
  const u1 = user('u1', 'where am I');
  const first = await turn(s, { sessionId: id, message: 'where am I', messageId: 'u1', messages: [u1] });
  const types = first.chunks.map((c) => c.type);
  assert.ok(types.includes('tool-input-available'), types.join());
  assert.ok(!types.some((t) => t.startsWith('tool-output') || t === 'tool-approval-request'), types.join());
  assert.equal(types.at(-1), 'finish');
  const a1 = first.message;
  const call = toolPart(a1, 'getLocation');
  assert.equal(call.state, 'input-available');
  assert.deepEqual(call.input, {});
  assert.equal(textOf(a1), 'Answer where am I: calling getLocation.');
  assert.equal(toolCallsComplete({ messages: [u1, a1] }), false, 'no output yet: useChat would not continue');

  // The client runs the tool (addToolOutput) …
  const answered = clone(a1);
  Object.assign(toolPart(answered, 'getLocation'), { state: 'output-available', output: { city: 'Paris' } });
  assert.equal(toolCallsComplete({ messages: [u1, answered] }), true, 'useChat would continue now');
  // … and continues: an empty message, the answered history.
  const second = await turn(s, { sessionId: id, message: '', messageId: a1.id, messages: [u1, answered] }, answered);
  assert.equal(second.chunks[0].type, 'start');
  assert.equal(second.chunks[0].messageId, a1.id, 'the same assistant message goes on');
  const a1b = second.message;
  assert.equal(a1b.id, a1.id);
  assert.equal(textOf(a1b), 'Answer where am I: calling getLocation.You are in Paris.');
  assert.equal(a1b.parts.filter((p) => p.type === 'text').at(-1).text, 'You are in Paris.');
  assert.deepEqual(toolPart(a1b, 'getLocation').output, { city: 'Paris' });
  assert.equal(toolCallsComplete({ messages: [u1, a1b] }), false, 'answered: no second continuation');
  const stored = await s.messages(id);
  assert.deepEqual(stored.map((m) => m.id), ['u1', a1.id]);

  // A plain string output works too, and so does a continuation of the stored history
  // (no `messages`: the last stored message is the assistant message named by `messageId`).
  const viaStore = clone(a1);
  Object.assign(toolPart(viaStore, 'getLocation'), { state: 'output-available', output: 'Lyon' });
  const id2 = sid('where-stored');
  assert.equal((await postJson(`${s.api}/chat/${id2}/messages`, { messages: [u1, viaStore] }, 'PUT')).status, 204);
  const third = await turn(s, { sessionId: id2, message: '', messageId: a1.id }, viaStore);
  assert.equal(third.message.parts.filter((p) => p.type === 'text').at(-1).text, 'You are in Lyon.');
  // An empty message naming no stored assistant message is still refused.
  const refused = await s.chat({ sessionId: id2, message: '', messageId: 'nope' });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).error.field, 'message');
});

async function askDelete(id) {
  const u1 = user('u1', 'delete notes.txt');
  const first = await turn(s, { sessionId: id, message: 'delete notes.txt', messageId: 'u1', messages: [u1] });
  return { u1, first };
}

test('delete FILE: the tool asks for approval; approved, it runs and the answer says so', async () => {
  const id = sid('delete-yes');
  const { u1, first } = await askDelete(id);
  const request = first.chunks.find((c) => c.type === 'tool-approval-request');
  assert.ok(request, first.chunks.map((c) => c.type).join());
  assert.ok(!first.chunks.some((c) => c.type.startsWith('tool-output')), 'not run before the answer');
  const a1 = first.message;
  const call = toolPart(a1, 'deleteFile');
  assert.equal(call.state, 'approval-requested');
  assert.deepEqual(call.input, { path: 'notes.txt' });
  assert.equal(call.approval.id, request.approvalId);
  assert.equal(approvalsAnswered({ messages: [u1, a1] }), false);

  const answered = clone(a1);
  Object.assign(toolPart(answered, 'deleteFile'), { state: 'approval-responded', approval: { id: request.approvalId, approved: true } });
  assert.equal(approvalsAnswered({ messages: [u1, answered] }), true);
  const second = await turn(s, { sessionId: id, message: '', messageId: a1.id, messages: [u1, answered] }, answered);
  const out = second.chunks.find((c) => c.type === 'tool-output-available');
  assert.deepEqual([out?.toolCallId, out?.output], [call.toolCallId, 'deleted notes.txt']);
  const a1b = second.message;
  assert.equal(a1b.id, a1.id);
  assert.equal(toolPart(a1b, 'deleteFile').state, 'output-available');
  assert.equal(toolPart(a1b, 'deleteFile').output, 'deleted notes.txt');
  assert.equal(a1b.parts.filter((p) => p.type === 'text').at(-1).text, 'Deleted notes.txt.');
  assert.equal(approvalsAnswered({ messages: [u1, a1b] }), false, 'no second continuation');
  assert.equal(toolCallsComplete({ messages: [u1, a1b] }), false);
});

test('delete FILE: denied, the tool does not run and the answer keeps the file', async () => {
  const id = sid('delete-no');
  const { u1, first } = await askDelete(id);
  const a1 = first.message;
  const call = toolPart(a1, 'deleteFile');
  const answered = clone(a1);
  Object.assign(toolPart(answered, 'deleteFile'), { state: 'approval-responded', approval: { id: call.approval.id, approved: false, reason: 'not now' } });
  const second = await turn(s, { sessionId: id, message: '', messageId: a1.id, messages: [u1, answered] }, answered);
  const types = second.chunks.map((c) => c.type);
  assert.ok(types.includes('tool-output-denied'), types.join());
  assert.ok(!types.includes('tool-output-available'), 'never run');
  const a1b = second.message;
  assert.equal(toolPart(a1b, 'deleteFile').state, 'output-denied');
  assert.equal(a1b.parts.filter((p) => p.type === 'text').at(-1).text, 'Kept notes.txt.');
  const stored = await s.messages(id);
  assert.equal(toolPart(stored[1], 'deleteFile').state, 'output-denied');
});

test('regenerate-message with messages: each new answer names its attempt; a new submit starts again', async () => {
  const id = sid('regen');
  const u1 = user('u1', 'tell me words:2');
  const first = await turn(s, { sessionId: id, message: 'tell me words:2', messageId: 'u1', messages: [u1] });
  assert.equal(textOf(first.message), 'Answer tell me: w1 w2');
  const again = await turn(s, { sessionId: id, message: '', trigger: 'regenerate-message', messageId: first.message.id, messages: [u1] });
  assert.equal(textOf(again.message), 'Answer tell me (attempt 2): w1 w2');
  assert.notEqual(again.message.id, first.message.id, 'a new assistant message');
  const third = await turn(s, { sessionId: id, message: '', trigger: 'regenerate-message', messageId: again.message.id, messages: [u1] });
  assert.equal(textOf(third.message), 'Answer tell me (attempt 3): w1 w2');
  const stored = await s.messages(id);
  assert.deepEqual(stored.map((m) => [m.role, textOf(m)]), [['user', 'tell me words:2'], ['assistant', 'Answer tell me (attempt 3): w1 w2']]);
  // The same user message submitted again (an edit to the same words) is a first answer again.
  const edited = await turn(s, { sessionId: id, message: 'tell me words:2', messageId: 'u1', messages: [u1] });
  assert.equal(textOf(edited.message), 'Answer tell me: w1 w2');
});

test('edit: a submit naming an existing user message answers the edited text; what followed is gone', async () => {
  // With messages (as useChat and the store send them): the client already replaced it.
  const id = sid('edit');
  const history = [
    user('u1', 'first words:1'),
    { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Answer first: w1', state: 'done' }] },
    user('u2', 'second words:1'),
    { id: 'a2', role: 'assistant', parts: [{ type: 'text', text: 'Answer second: w1', state: 'done' }] },
  ];
  assert.equal((await postJson(`${s.api}/chat/${id}/messages`, { messages: history }, 'PUT')).status, 204);
  const edited = await turn(s, { sessionId: id, message: 'edited words:2', messageId: 'u1', messages: [user('u1', 'edited words:2')] });
  assert.equal(textOf(edited.message), 'Answer edited: w1 w2');
  assert.deepEqual((await s.messages(id)).map((m) => [m.id, m.role]), [['u1', 'user'], [edited.message.id, 'assistant']]);

  // Without messages: the server edits its stored copy the same way.
  const id2 = sid('edit-stored');
  assert.equal((await postJson(`${s.api}/chat/${id2}/messages`, { messages: history }, 'PUT')).status, 204);
  const viaStore = await turn(s, { sessionId: id2, message: 'changed words:1', messageId: 'u1' });
  assert.equal(textOf(viaStore.message), 'Answer changed: w1');
  const stored = await s.messages(id2);
  assert.deepEqual(stored.map((m) => [m.id, m.role, textOf(m)]), [['u1', 'user', 'changed words:1'], [viaStore.message.id, 'assistant', 'Answer changed: w1']]);
});
