// The AI SDK docs' route (`POST /api/chat`, lib/docs-chat.mjs), driven by the `ai` package's own
// chat client (`AbstractChat` over a `DefaultChatTransport`, with a plain in-memory state: what
// `useChat` of `@ai-sdk/react` runs) as the docs' pages use it: a streamed answer, Stop,
// regenerate, the client tools of "Chatbot Tool Usage" (`getLocation` answered by `onToolCall`,
// `askForConfirmation` answered by the user, both continued by `sendAutomaticallyWhen:
// lastAssistantMessageIsCompleteWithToolCalls`), the server tool `getWeatherInformation`, the
// `failDocsChats` fault, `deleteFile` approved and denied (`addToolApprovalResponse`, continued by
// `lastAssistantMessageIsCompleteWithApprovalResponses`), and `GET /api/chat/:id/stream` (204).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { postJson, readChunks, sid, sleep, startServer, textOf } from './helpers.mjs';

let s; // unpaced
let paced; // 20 tokens/s: an answer takes long enough to stop it
before(async () => {
  [s, paced] = await Promise.all([startServer(['--tps', '0']), startServer(['--tps', '20'])]);
});
after(() => Promise.all([s?.stop(), paced?.stop()]));

/** `AbstractChat` with the simplest state (what `@ai-sdk/react`'s `Chat` keeps in React). */
class NodeChat extends AbstractChat {
  constructor({ messages = [], ...init }) {
    const state = {
      status: 'ready',
      error: undefined,
      messages,
      pushMessage(m) {
        state.messages = state.messages.concat(m);
      },
      popMessage() {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage(i, m) {
        state.messages = [...state.messages.slice(0, i), m, ...state.messages.slice(i + 1)];
      },
      snapshot: (v) => structuredClone(v),
    };
    super({ ...init, state });
  }
}

function chat(server, init = {}) {
  const errors = [];
  const c = new NodeChat({
    id: sid('docs'),
    transport: new DefaultChatTransport({ api: `${server.base}/api/chat` }),
    onError: (e) => errors.push(e),
    ...init,
  });
  c.errors = errors;
  return c;
}

const view = (c) => c.messages.map((m) => `${m.role}: ${textOf(m)}`);

async function until(what, fn, timeout = 10_000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (fn()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a message gets the scripted answer, streamed as a UI message stream', async () => {
  const c = chat(s);
  await c.sendMessage({ text: 'hello there friend words:3' });
  assert.equal(c.status, 'ready');
  assert.deepEqual(view(c), ['user: hello there friend words:3', 'assistant: Answer hello there friend: w1 w2 w3']);
  assert.deepEqual(c.errors, []);

  // On the wire: the docs' body (`{id, messages, trigger, messageId}`), the stream framed by `ai`.
  const res = await postJson(`${s.base}/api/chat`, {
    id: 'raw', trigger: 'submit-message', messageId: undefined,
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'raw words:2' }] }],
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const { chunks, error } = await readChunks(res);
  assert.equal(error, undefined);
  assert.equal(chunks.filter((k) => k.type === 'text-delta').map((k) => k.delta).join(''), 'Answer raw: w1 w2');
  assert.equal(chunks.at(-1).type, 'finish');
  const entry = (await s.log()).findLast((e) => e.route === 'docs-chat');
  assert.equal(entry.sessionId, 'raw');
  assert.equal(entry.status, 200);
});

test('paced: the answer comes in many chunks over time, and Stop keeps what came', async () => {
  const c = chat(paced);
  const sent = c.sendMessage({ text: 'stop me soon words:40' });
  // Waits on the words themselves, not on a time: at 20 tokens a second a loaded machine may
  // take longer than any fixed sleep to pass the answer's prefix.
  await until('the first word', () => c.status === 'streaming' && / w1/.test(textOf(c.messages.at(-1))));
  const first = textOf(c.messages.at(-1));
  await until('more words', () => textOf(c.messages.at(-1)).length > first.length);
  await c.stop();
  await sent;
  assert.equal(c.status, 'ready');
  const partial = textOf(c.messages.at(-1));
  assert.match(partial, /^Answer stop me soon: w1/);
  assert.ok(!partial.endsWith('w40'), `stopped before the end: ${partial}`);
  await sleep(300);
  assert.equal(textOf(c.messages.at(-1)), partial, 'nothing arrives after Stop');
  const entry = (await paced.log()).findLast((e) => e.route === 'docs-chat');
  assert.equal(entry.aborted, true, 'the request was aborted');

  // Usable again: the next message is answered.
  await paced.control({ tps: 0 });
  try {
    await c.sendMessage({ text: 'next one words:2' });
  } finally {
    await paced.control({ tps: 20 });
  }
  assert.deepEqual(view(c).slice(2), ['user: next one words:2', 'assistant: Answer next one: w1 w2']);
});

test('getLocation: onToolCall + addToolOutput + sendAutomaticallyWhen continue the answer', async () => {
  const calls = [];
  const c = chat(s, {
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    async onToolCall({ toolCall }) {
      if (toolCall.dynamic) return;
      calls.push(toolCall);
      if (toolCall.toolName === 'getLocation') {
        c.addToolOutput({ tool: 'getLocation', toolCallId: toolCall.toolCallId, output: 'Chicago' });
      }
    },
  });
  await c.sendMessage({ text: 'where am I' });
  await until('the continuation', () => c.status === 'ready' && /You are in/.test(textOf(c.messages.at(-1))));
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].input, {});
  assert.equal(c.messages.length, 2, 'one assistant message, continued');
  const part = c.messages[1].parts.find((p) => p.type === 'tool-getLocation');
  assert.equal(part.state, 'output-available');
  assert.equal(part.output, 'Chicago');
  assert.equal(textOf(c.messages[1]), 'Answer where am I: calling getLocation.You are in Chicago.');
  const posts = (await s.log()).filter((e) => e.route === 'docs-chat' && e.sessionId === c.id);
  assert.equal(posts.length, 2, 'the call, then the automatic continuation');
  assert.equal(posts[1].body.trigger, 'submit-message');
  assert.deepEqual(c.errors, []);
});

test('askForConfirmation waits for the user; the answer continues the turn', async () => {
  const c = chat(s, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls });
  await c.sendMessage({ text: 'please confirm the move' });
  const part = c.messages[1].parts.find((p) => p.type === 'tool-askForConfirmation');
  assert.equal(part.state, 'input-available');
  assert.deepEqual(part.input, { message: 'Confirm the move?' });
  assert.equal(c.status, 'ready', 'nothing is sent until the user answers');
  c.addToolOutput({ tool: 'askForConfirmation', toolCallId: part.toolCallId, output: 'Yes, confirmed.' });
  await until('the continuation', () => c.status === 'ready' && /You answered/.test(textOf(c.messages.at(-1))));
  assert.match(textOf(c.messages[1]), /You answered: Yes, confirmed\.$/);
});

test('getWeatherInformation runs on the server; the automatic continuation answers with it', async () => {
  const c = chat(s, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls });
  await c.sendMessage({ text: 'the weather in New York please' });
  await until('the continuation', () => c.status === 'ready' && /The weather in/.test(textOf(c.messages.at(-1))));
  const part = c.messages[1].parts.find((p) => p.type === 'tool-getWeatherInformation');
  assert.equal(part.state, 'output-available');
  assert.deepEqual(part.input, { city: 'New York' });
  assert.match(textOf(c.messages[1]), new RegExp(`The weather in New York is ${part.output}\\.$`));
});

for (const approved of [true, false]) {
  test(`deleteFile waits for approval; ${approved ? 'approved, it runs' : 'denied, it does not run'} and the answer says so`, async () => {
    const c = chat(s, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: 'please delete notes.txt now' });
    assert.equal(c.status, 'ready', 'nothing is sent until the user answers');
    const asked = c.messages[1].parts.find((p) => p.type === 'tool-deleteFile');
    assert.equal(asked.state, 'approval-requested');
    assert.deepEqual(asked.input, { path: 'notes.txt' });
    assert.equal(typeof asked.approval.id, 'string');
    assert.equal(textOf(c.messages[1]), 'Answer please delete notes.txt: calling deleteFile.');

    await c.addToolApprovalResponse({ id: asked.approval.id, approved, ...(approved ? {} : { reason: 'not today' }) });
    await until('the continuation', () => c.status === 'ready' && /(Deleted|Kept) notes\.txt\.$/.test(textOf(c.messages.at(-1))));
    assert.equal(c.messages.length, 2, 'one assistant message, continued');
    const part = c.messages[1].parts.find((p) => p.type === 'tool-deleteFile');
    if (approved) {
      assert.equal(part.state, 'output-available');
      assert.equal(part.output, 'deleted notes.txt');
    } else {
      assert.equal(part.state, 'output-denied');
      assert.equal(part.approval.reason, 'not today');
    }
    assert.equal(textOf(c.messages[1]), `Answer please delete notes.txt: calling deleteFile.${approved ? 'Deleted' : 'Kept'} notes.txt.`);
    const posts = (await s.log()).filter((e) => e.route === 'docs-chat' && e.sessionId === c.id);
    assert.equal(posts.length, 2, 'the call, then the automatic continuation carrying the answer');
    const sent = posts[1].body.messages[1].parts.find((p) => p.type === 'tool-deleteFile');
    assert.equal(sent.state, 'approval-responded');
    assert.equal(sent.approval.approved, approved);
    assert.deepEqual(c.errors, []);
  });
}

test('failDocsChats: the next POST answers 500; regenerate then answers (attempt 2)', async () => {
  const c = chat(s);
  await s.control({ failDocsChats: 1 });
  await c.sendMessage({ text: 'fails first words:2' });
  assert.equal(c.status, 'error');
  assert.ok(c.error instanceof Error);
  assert.match(c.error.message, /failDocsChats/);
  assert.equal(c.errors.length, 1);
  assert.deepEqual(view(c), ['user: fails first words:2']);
  const failed = (await s.log()).findLast((e) => e.route === 'docs-chat');
  assert.equal(failed.status, 500);
  assert.equal(failed.fault, 'fail');

  await c.regenerate();
  assert.equal(c.status, 'ready');
  assert.equal(c.error, undefined);
  assert.deepEqual(view(c), ['user: fails first words:2', 'assistant: Answer fails first (attempt 2): w1 w2']);
  // …and regenerating that answer counts up.
  await c.regenerate();
  assert.deepEqual(view(c), ['user: fails first words:2', 'assistant: Answer fails first (attempt 3): w1 w2']);
});

test('cutDocsChatAfter: the next answer breaks off after N chunks, once; regenerate answers', async () => {
  const c = chat(s);
  await s.control({ cutDocsChatAfter: 6 });
  await c.sendMessage({ text: 'cut short words:20' });
  assert.equal(c.status, 'error');
  const partial = textOf(c.messages.at(-1));
  assert.ok(partial.length > 0 && !partial.endsWith('w20'), `a partial answer: ${partial}`);
  const cut = (await s.log()).findLast((e) => e.route === 'docs-chat');
  assert.equal(cut.cutAfter, 6);
  assert.equal((await (await fetch(`${s.base}/__control`)).json()).cutDocsChatAfter, null, 'once');
  await c.regenerate();
  assert.equal(c.status, 'ready');
  assert.deepEqual(view(c), ['user: cut short words:20', `assistant: Answer cut short (attempt 2): ${Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(' ')}`]);
});

test('a provider error streams an error chunk (masked, as the docs route leaves it): the chat is in error', async () => {
  const c = chat(s);
  await c.sendMessage({ text: 'fail provider now' });
  assert.equal(c.status, 'error');
  assert.equal(c.error.message, 'An error occurred.');
});

test('docsChatDelayMs holds the answer (status submitted); bad bodies are 400', async () => {
  await s.control({ docsChatDelayMs: 300 });
  try {
    const c = chat(s);
    const t0 = Date.now();
    const sent = c.sendMessage({ text: 'slow words:1' });
    await sleep(150);
    assert.equal(c.status, 'submitted');
    await sent;
    assert.ok(Date.now() - t0 >= 300);
    assert.equal(textOf(c.messages.at(-1)), 'Answer slow: w1');
  } finally {
    await s.control({ docsChatDelayMs: 0 });
  }
  assert.equal((await postJson(`${s.base}/api/chat`, { id: 'x' })).status, 400);
  assert.equal((await postJson(`${s.base}/api/chat`, { id: 'x', messages: [{ role: 'user' }] })).status, 400);
});

test('GET /api/chat/:id/stream: 204, nothing to resume; the chat resumes to nothing', async () => {
  const res = await fetch(`${s.base}/api/chat/some-chat/stream`);
  assert.equal(res.status, 204);
  const c = chat(s);
  await c.resumeStream();
  assert.equal(c.status, 'ready');
  assert.deepEqual(c.messages, []);
  const entry = (await s.log()).findLast((e) => e.route === 'docs-stream');
  assert.equal(entry.sessionId, c.id);
});

test('--not-found docs-chat and the control reset', async () => {
  await s.control({ notFound: ['docs-chat'] });
  const res = await postJson(`${s.base}/api/chat`, { id: 'x', messages: [] });
  assert.equal(res.status, 404);
  const state = await s.reset();
  assert.deepEqual(state.notFound, []);
  assert.equal(state.failDocsChats, 0);
});
