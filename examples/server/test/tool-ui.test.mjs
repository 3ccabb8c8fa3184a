// The tool catalog route and the `pi.subagent` harness tool: typed tool UI metadata end to end
// (progress as `data-tool-ui` chunks, the result's `details` on the stream and in the canonical
// history), and a runtime without the tool showing no trace of it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { piChunks, readChunks, sid, startServer, textOf } from './helpers.mjs';

let pi;
let aiSdk;
before(async () => {
  [pi, aiSdk] = await Promise.all([startServer(['--tps', '0']), startServer(['--runtime', 'ai-sdk', '--tps', '0'])]);
});
after(async () => {
  await Promise.all([pi?.stop(), aiSdk?.stop()]);
});

const catalog = async (s, id) => {
  const res = await fetch(`${s.api}/catalog?sessionId=${encodeURIComponent(id)}`);
  assert.equal(res.status, 200);
  return res.json();
};

const SUBAGENT_UI = { rendererId: 'pi-subagent', displayGroup: 'agents', icon: 'bot' };

function checkEntries(tools) {
  for (const t of tools) {
    assert.equal(typeof t.name, 'string');
    assert.equal(typeof t.description, 'string');
    assert.equal(t.inputSchema.type, 'object', `${t.name} has a JSON schema`);
  }
}

test('catalog, pi runtime: ls, echo, the namespaced harness tool pi.subagent, deleteFile, askUser', async () => {
  // A session that does not exist yet gets the tools a new one would have…
  const fresh = await catalog(pi, sid('cat-new'));
  assert.deepEqual(fresh.tools.map((t) => t.name), ['ls', 'echo', 'pi.subagent', 'deleteFile', 'askUser']);
  checkEntries(fresh.tools);
  const sub = fresh.tools.find((t) => t.name === 'pi.subagent');
  assert.deepEqual(sub.ui, SUBAGENT_UI);
  assert.deepEqual(sub.inputSchema.required, ['task']);
  assert.equal(fresh.tools.find((t) => t.name === 'ls').ui.rendererId, undefined, 'hints only, no renderer for ls');
  // …and an existing one lists its agent's own tools: the same.
  const id = sid('cat-pi');
  await readChunks(await pi.chat({ sessionId: id, message: 'hi words:1' }));
  assert.deepEqual(await catalog(pi, id), fresh);
});

test('catalog, AI SDK runtime: its own tools only, no trace of pi.subagent', async () => {
  const id = sid('cat-ai');
  const before = await catalog(aiSdk, id);
  assert.deepEqual(before.tools.map((t) => t.name), ['ls', 'echo']);
  checkEntries(before.tools);
  await readChunks(await aiSdk.chat({ sessionId: id, message: 'hi words:1' }));
  const after = await catalog(aiSdk, id);
  assert.deepEqual(after, before);
  assert.ok(!/subagent/i.test(JSON.stringify(after)), JSON.stringify(after));
});

test('catalog follows the session\'s runtime; the notFound fault answers it with 404', async () => {
  const id = sid('cat-keep');
  await readChunks(await pi.chat({ sessionId: id, message: 'hello words:1' }));
  await pi.control({ runtime: 'ai-sdk' });
  try {
    assert.ok((await catalog(pi, id)).tools.some((t) => t.name === 'pi.subagent'), 'an existing pi session keeps its tools');
    assert.deepEqual((await catalog(pi, sid('cat-switched'))).tools.map((t) => t.name), ['ls', 'echo'], 'new sessions follow the switch');
  } finally {
    await pi.control({ runtime: 'pi' });
  }
  await pi.control({ notFound: ['catalog'] });
  try {
    const res = await fetch(`${pi.api}/catalog?sessionId=${id}`);
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error.code, 'not_found');
    const entry = (await pi.log()).filter((e) => e.route === 'catalog').at(-1);
    assert.equal(entry.fault, 'notFound');
    assert.equal(entry.sessionId, id);
  } finally {
    await pi.control({ notFound: [] });
  }
});

/** The `data-tool-ui` chunks of a tool call, checked against the shape of a subagent's progress. */
function progressOf(chunks, toolCallId, task) {
  const ui = chunks.filter((c) => c.type === 'data-tool-ui');
  assert.ok(ui.length >= 3, `progress chunks: ${ui.length}`);
  let prev;
  for (const c of ui) {
    assert.deepEqual(Object.keys(c).sort(), ['data', 'type'], 'no id, not transient');
    assert.deepEqual(Object.keys(c.data).sort(), ['details', 'rendererId', 'toolCallId']);
    assert.equal(c.data.toolCallId, toolCallId);
    assert.equal(c.data.rendererId, 'pi-subagent');
    assert.equal(c.data.seq, undefined, 'not a pi projection chunk');
    const d = c.data.details;
    assert.equal(d.uiKind, 'pi-subagent');
    assert.equal(d.task, task);
    assert.equal(d.status, 'running');
    assert.ok(Array.isArray(d.steps) && Array.isArray(d.transcript));
    if (prev) {
      assert.deepEqual(d.transcript.slice(0, prev.transcript.length), prev.transcript, 'the transcript only grows');
      assert.ok(d.steps.length >= prev.steps.length);
      assert.notDeepEqual(d, prev, 'one chunk per change');
    }
    prev = d;
  }
  return ui.map((c) => c.data.details);
}

test('pi.subagent: a nested pi agent run, progress as data-tool-ui, details on the result and in canonical history', async () => {
  const id = sid('sub');
  const { chunks } = await readChunks(await pi.chat({ sessionId: id, message: 'please subagent summarize the notes' }));
  const pc = piChunks(chunks).filter((c) => c.type !== 'data-pi-mode');
  assert.deepEqual(pc.map((c) => c.data.seq), pc.map((_, i) => i + 1), 'progress chunks leave the pi seq alone');
  const end = chunks.find((c) => c.type === 'data-pi-tool-call-end');
  assert.equal(end.data.toolName, 'pi.subagent');
  assert.deepEqual(end.data.input, { task: 'summarize the notes' });
  const { toolCallId } = end.data;
  const resultAt = chunks.findIndex((c) => c.type === 'data-pi-tool-result');
  const result = chunks[resultAt].data;
  // Progress comes after the call was complete and before its result.
  const uiAt = chunks.map((c, i) => (c.type === 'data-tool-ui' ? i : -1)).filter((i) => i >= 0);
  assert.ok(uiAt[0] > chunks.indexOf(end) && uiAt.at(-1) < resultAt, 'between tool-call-end and tool-result');
  const progress = progressOf(chunks, toolCallId, 'summarize the notes');
  assert.deepEqual(progress[0], { uiKind: 'pi-subagent', task: 'summarize the notes', status: 'running', steps: [], transcript: [] });
  assert.ok(progress.some((d) => d.steps.some((s) => s.kind === 'tool' && s.status === 'running')), 'a running nested tool is reported');

  assert.equal(result.toolCallId, toolCallId);
  assert.equal(result.isError, false);
  assert.deepEqual(result.output, { content: [{ type: 'text', text: 'Result for summarize the notes: ls → todo.txt.' }] });
  const d = result.details;
  assert.equal(d.uiKind, 'pi-subagent');
  assert.equal(d.status, 'done');
  assert.deepEqual(d.transcript, [
    { role: 'user', text: 'summarize the notes' },
    { role: 'assistant', text: 'Answer summarize the notes: calling ls.' },
    { role: 'tool', toolName: 'ls', text: 'todo.txt' },
    { role: 'assistant', text: 'Result for summarize the notes: ls → todo.txt.' },
  ]);
  assert.deepEqual(
    d.steps.map((s) => [s.kind, s.label, s.status]),
    [
      ['model', 'plan: call ls', 'done'],
      ['tool', 'ls {"path":"notes"}', 'done'],
      ['model', 'answer: Result for summarize the notes: ls → todo.txt.', 'done'],
    ],
  );
  assert.deepEqual(progress.at(-1).transcript, d.transcript, 'the last progress had the whole transcript');

  const messages = await pi.messages(id);
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'assistant']);
  const part = messages[1].parts.find((p) => p.type.startsWith('tool-'));
  assert.deepEqual(part, {
    type: 'tool-pi.subagent',
    toolName: 'pi.subagent',
    toolCallId,
    state: 'output-available',
    input: { task: 'summarize the notes' },
    output: result.output.content,
    details: d,
  });
  assert.equal(textOf(messages[2]), 'Result for please subagent summarize: pi.subagent → Result for summarize the notes: ls → todo.txt.');
});

test('pi.subagent from a follow-up: the call belongs to the follow-up\'s answer', async () => {
  const id = sid('sub-fu');
  await pi.control({ tps: 200 });
  try {
    let posted = false;
    const { chunks } = await readChunks(await pi.chat({ sessionId: id, message: 'first answer words:30' }), async (c) => {
      if (c.type === 'data-pi-text-delta' && !posted) {
        posted = true;
        assert.equal((await pi.followUp(id, { message: 'subagent summarize the notes', clientSeq: 1, clientNonce: 'fu-1' })).status, 202);
      }
    });
    const followStart = chunks.find((c) => c.type === 'data-pi-message-start' && c.data.clientNonce === 'fu-1');
    assert.ok(followStart);
    const callEnd = chunks.find((c) => c.type === 'data-pi-tool-call-end');
    assert.ok(chunks.indexOf(callEnd) > chunks.indexOf(followStart), 'the call comes after the follow-up started');
    assert.ok(chunks.filter((c) => c.type === 'data-tool-ui').every((c) => c.data.toolCallId === callEnd.data.toolCallId));
  } finally {
    await pi.control({ tps: 0 });
  }
  const messages = await pi.messages(id);
  assert.deepEqual(messages.map((m) => `${m.role}:${m.parts.filter((p) => p.type.startsWith('tool-')).map((p) => p.toolName).join(',')}`), [
    'user:',
    'assistant:',
    'user:',
    'assistant:pi.subagent',
    'assistant:',
  ]);
  assert.equal(textOf(messages[2]), 'subagent summarize the notes');
  assert.equal(messages[3].parts.find((p) => p.type.startsWith('tool-')).details.status, 'done');
});

test('pi.subagent whose nested model fails: an error result that keeps its details', async () => {
  const id = sid('sub-fail');
  const { chunks } = await readChunks(await pi.chat({ sessionId: id, message: 'subagent fail provider now' }));
  const result = chunks.find((c) => c.type === 'data-pi-tool-result').data;
  assert.equal(result.isError, true);
  assert.equal(result.output.content[0].text, 'subagent failed: scripted provider error');
  assert.equal(result.details.status, 'error');
  assert.equal(result.details.error, 'scripted provider error');
  assert.deepEqual(result.details.steps.map((s) => [s.kind, s.status]), [['model', 'error']]);
  const part = (await pi.messages(id))[1].parts.find((p) => p.type.startsWith('tool-'));
  assert.equal(part.state, 'output-error');
  assert.equal(part.errorText, 'subagent failed: scripted provider error');
  assert.deepEqual(part.details, result.details);
});

test('stopping the turn while the subagent runs stops the nested agent too', async () => {
  const id = sid('sub-stop');
  await pi.control({ tps: 40 });
  try {
    let stopped = false;
    const { chunks } = await readChunks(await pi.chat({ sessionId: id, message: 'subagent summarize the notes words:200' }), async (c) => {
      if (c.type === 'data-tool-ui' && c.data.details.transcript.length >= 1 && !stopped) {
        stopped = true;
        assert.equal((await pi.stopTurn(id)).status, 204);
      }
    });
    assert.ok(stopped);
    assert.deepEqual(chunks.at(-1), { type: 'abort', reason: 'stopped' });
  } finally {
    await pi.control({ tps: 0 });
  }
  const part = (await pi.messages(id))[1].parts.find((p) => p.type.startsWith('tool-'));
  assert.equal(part.toolName, 'pi.subagent');
  assert.equal(part.state, 'output-error');
  if (part.details !== undefined) assert.equal(part.details.status, 'error');
  // The session is usable afterwards.
  const next = await readChunks(await pi.chat({ sessionId: id, message: 'after words:2' }));
  assert.equal(next.chunks.at(-1).type, 'finish');
});

test('the AI SDK runtime has no pi.subagent: the same words get a plain answer', async () => {
  const id = sid('sub-ai');
  const { chunks } = await readChunks(await aiSdk.chat({ sessionId: id, message: 'subagent summarize the notes' }));
  assert.ok(!chunks.some((c) => /^tool-/.test(c.type) || c.type === 'data-tool-ui'), chunks.map((c) => c.type).join());
  const text = chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('');
  assert.match(text, /^Answer subagent summarize the: w1/);
});
