// Human in the loop in the pi runtime (SPEC §13): `deleteFile` gated by pi's `beforeToolCall`
// (an approval), `askUser` whose `execute` awaits the user's answer; the two answer routes,
// their faults, the waiting states in the history, a stop while a call waits, and a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chatBody, piChunks, readChunks, sid, sleep, startServer, textOf } from './helpers.mjs';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixture-files');

let s;
before(async () => {
  s = await startServer(['--tps', '0']);
});
after(() => s?.stop());

const errorOf = async (res) => (await res.json()).error;
const toolPart = (messages, name) => messages.flatMap((m) => m.parts).find((p) => p.type === `tool-${name}`);
const ofType = (chunks, type) => chunks.filter((c) => c.type === type);
const lastText = (messages) => textOf(messages.at(-1));

/**
 * Runs a turn; `onWait(chunk)` is called (not awaited by the reader) at the first approval or
 * input request. Resolves with the turn's chunks and what `onWait` returned.
 */
async function turnWithWait(server, sessionId, message, onWait) {
  let waited;
  const { chunks, error } = await readChunks(await server.chat({ sessionId, message }), (c) => {
    if (!waited && (c.type === 'data-pi-tool-approval-request' || c.type === 'data-pi-tool-input-request')) waited = onWait(c);
  });
  assert.equal(error, undefined);
  assert.ok(waited, 'the call waited for the user');
  return { chunks, answer: await waited };
}

/** The seqs of the turn's pi chunks are 1, 2, 3, … (`data-pi-mode` has none) */
function assertSeqs(chunks) {
  const seqs = piChunks(chunks).filter((c) => c.data.seq !== undefined).map((c) => c.data.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
}

test('catalog: the pi runtime always has deleteFile and askUser', async () => {
  const res = await fetch(`${s.api}/catalog?sessionId=${sid('cat')}`);
  const tools = (await res.json()).tools;
  assert.deepEqual(tools.map((t) => t.name), ['ls', 'echo', 'pi.subagent', 'deleteFile', 'askUser']);
  assert.deepEqual(tools.find((t) => t.name === 'askUser').inputSchema.required, ['question']);
  assert.deepEqual(tools.find((t) => t.name === 'deleteFile').ui, { displayGroup: 'workspace', icon: 'trash' });
});

test('delete notes.txt approved: approval request, response, the tool runs (pretend), Deleted notes.txt.', async () => {
  const id = sid('approve');
  const before = readdirSync(FIXTURES, { recursive: true }).sort();
  const { chunks, answer } = await turnWithWait(s, id, 'delete notes.txt', async (c) => {
    const res = await s.approval(id, { approvalId: c.data.approvalId, approved: true });
    return { status: res.status, body: await res.json() };
  });
  assert.deepEqual(answer, { status: 202, body: { ok: true } });
  assertSeqs(chunks);
  const callEnd = ofType(chunks, 'data-pi-tool-call-end')[0].data;
  assert.equal(callEnd.toolName, 'deleteFile');
  assert.deepEqual(callEnd.input, { path: 'notes.txt' });
  const [request] = ofType(chunks, 'data-pi-tool-approval-request');
  assert.deepEqual(Object.keys(request.data).sort(), ['approvalId', 'messageId', 'reason', 'seq', 'toolCallId']);
  assert.equal(request.data.messageId, callEnd.messageId, 'the message owning the call');
  assert.equal(request.data.toolCallId, callEnd.toolCallId);
  assert.equal(request.data.reason, 'deletes notes.txt');
  const [response] = ofType(chunks, 'data-pi-tool-approval-response');
  assert.deepEqual(response.data, { seq: request.data.seq + 1, messageId: callEnd.messageId, toolCallId: callEnd.toolCallId, approvalId: request.data.approvalId, approved: true });
  const [result] = ofType(chunks, 'data-pi-tool-result');
  assert.ok(result.data.seq > response.data.seq);
  assert.equal(result.data.isError, false);
  assert.deepEqual(result.data.output, { content: [{ type: 'text', text: 'deleted notes.txt' }] });
  assert.equal(chunks.at(-1).type, 'finish');
  assert.deepEqual(readdirSync(FIXTURES, { recursive: true }).sort(), before, 'nothing on disk changed');

  const history = await s.messages(id);
  assert.equal(lastText(history), 'Deleted notes.txt.');
  const part = toolPart(history, 'deleteFile');
  assert.equal(part.state, 'output-available');
  assert.deepEqual(part.output, [{ type: 'text', text: 'deleted notes.txt' }]);
  assert.deepEqual(part.approval, { id: request.data.approvalId, requestReason: 'deletes notes.txt', approved: true });
});

test('delete denied with a reason: the blocked result reaches the model, Kept notes.txt., output-denied', async () => {
  const id = sid('deny');
  const { chunks } = await turnWithWait(s, id, 'please delete notes.txt', (c) => s.approval(id, { approvalId: c.data.approvalId, approved: false, reason: 'not now' }));
  assertSeqs(chunks);
  const [response] = ofType(chunks, 'data-pi-tool-approval-response');
  assert.equal(response.data.approved, false);
  assert.equal(response.data.reason, 'not now');
  const [result] = ofType(chunks, 'data-pi-tool-result');
  assert.equal(result.data.isError, true);
  assert.deepEqual(result.data.output.content, [{ type: 'text', text: 'Blocked by the user: not now' }]);
  const history = await s.messages(id);
  assert.equal(lastText(history), 'Kept notes.txt.');
  const part = toolPart(history, 'deleteFile');
  assert.equal(part.state, 'output-denied');
  assert.equal(part.errorText, undefined);
  assert.equal(part.output, undefined);
  assert.deepEqual(part.approval, { id: response.data.approvalId, requestReason: 'deletes notes.txt', approved: false, reason: 'not now' });

  // Without a reason: `denied`.
  const id2 = sid('deny-bare');
  const second = await turnWithWait(s, id2, 'delete hello.txt', (c) => s.approval(id2, { approvalId: c.data.approvalId, approved: false }));
  assert.deepEqual(ofType(second.chunks, 'data-pi-tool-result')[0].data.output.content, [{ type: 'text', text: 'Blocked by the user: denied' }]);
  assert.equal(lastText(await s.messages(id2)), 'Kept hello.txt.');
});

test('answers: twice → 409 already_answered; unknown → 404; bad bodies → 400', async () => {
  const id = sid('twice');
  const { answer } = await turnWithWait(s, id, 'delete notes.txt', async (c) => {
    const first = await s.approval(id, { approvalId: c.data.approvalId, approved: true });
    const same = await s.approval(id, { approvalId: c.data.approvalId, approved: true });
    const other = await s.approval(id, { approvalId: c.data.approvalId, approved: false, reason: 'changed my mind' });
    return { first: first.status, same: [same.status, await errorOf(same)], other: [other.status, await errorOf(other)] };
  });
  assert.equal(answer.first, 202);
  assert.equal(answer.same[0], 409);
  assert.equal(answer.same[1].code, 'already_answered');
  assert.equal(answer.same[1].sameAnswer, true);
  assert.equal(answer.other[0], 409);
  assert.equal(answer.other[1].code, 'already_answered');
  assert.equal(answer.other[1].sameAnswer, false);
  assert.equal(lastText(await s.messages(id)), 'Deleted notes.txt.', 'the first answer holds');
  const toolCallId = toolPart(await s.messages(id), 'deleteFile').toolCallId;

  const unknown = await s.approval(id, { approvalId: 'approval-nope', approved: true });
  assert.equal(unknown.status, 404);
  assert.equal((await errorOf(unknown)).code, 'approval_not_found');
  const noSession = await s.approval(sid('never'), { approvalId: 'approval-nope', approved: true });
  assert.equal(noSession.status, 404);
  assert.equal((await errorOf(noSession)).code, 'approval_not_found');
  const noCall = await s.toolOutput(id, { toolCallId: 'call_nope', output: 'green' });
  assert.equal(noCall.status, 404);
  assert.equal((await errorOf(noCall)).code, 'tool_call_not_found');
  const approvalCall = await s.toolOutput(id, { toolCallId, output: 'green' });
  assert.equal(approvalCall.status, 404, 'deleteFile waits for an approval, never an output');

  for (const [body, field] of [
    [{ approved: true }, 'approvalId'],
    [{ approvalId: '', approved: true }, 'approvalId'],
    [{ approvalId: 'a' }, 'approved'],
    [{ approvalId: 'a', approved: 'yes' }, 'approved'],
    [{ approvalId: 'a', approved: false, reason: 3 }, 'reason'],
  ]) {
    const res = await s.approval(id, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual([(await errorOf(res)).code, field], ['validation_error', field]);
  }
  for (const [body, field] of [
    [{ output: 'x' }, 'toolCallId'],
    [{ toolCallId: 'c' }, 'output'],
    [{ toolCallId: 'c', errorText: 5 }, 'errorText'],
  ]) {
    const res = await s.toolOutput(id, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal((await errorOf(res)).field, field);
  }
  const notJson = await fetch(`${s.api}/chat/${id}/approval`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' });
  assert.equal(notJson.status, 400);
});

test('askDelayMs: askUser asks that long after its call ended; an answer before that finds no wait', async () => {
  await s.control({ askDelayMs: 400 });
  try {
    const id = sid('ask-delay');
    const at = {};
    let early;
    const { chunks, error } = await readChunks(await s.chat({ sessionId: id, message: 'ask which colour' }), (c) => {
      if (c.type === 'data-pi-tool-call-end') {
        at.callEnd = Date.now();
        early = s.toolOutput(id, { toolCallId: c.data.toolCallId, output: 'red' }).then(async (r) => [r.status, (await errorOf(r)).code]);
      }
      if (c.type === 'data-pi-tool-input-request') {
        at.asked = Date.now();
        s.toolOutput(id, { toolCallId: c.data.toolCallId, output: 'green' });
      }
    });
    assert.equal(error, undefined);
    assert.deepEqual(await early, [404, 'tool_call_not_found'], 'nothing waits before the ask');
    assert.ok(at.asked - at.callEnd >= 350, `asked ${at.asked - at.callEnd} ms after the call ended`);
    assert.equal(ofType(chunks, 'data-pi-tool-input-request').length, 1);
    assert.equal(lastText(await s.messages(id)), 'You chose green.');
  } finally {
    await s.control({ askDelayMs: 0 });
  }
});

test('ask which colour: an input request; the answer green is the result; You chose green.', async () => {
  const id = sid('ask');
  const { chunks, answer } = await turnWithWait(s, id, 'ask which colour', async (c) => {
    const first = await s.toolOutput(id, { toolCallId: c.data.toolCallId, output: 'green' });
    const again = await s.toolOutput(id, { toolCallId: c.data.toolCallId, output: 'red' });
    return { first: first.status, again: [again.status, await errorOf(again)] };
  });
  assert.equal(answer.first, 202);
  assert.equal(answer.again[0], 409);
  assert.equal(answer.again[1].code, 'already_answered');
  assertSeqs(chunks);
  const callEnd = ofType(chunks, 'data-pi-tool-call-end')[0].data;
  assert.equal(callEnd.toolName, 'askUser');
  const [request] = ofType(chunks, 'data-pi-tool-input-request');
  assert.deepEqual(request.data, {
    seq: request.data.seq,
    messageId: callEnd.messageId,
    toolCallId: callEnd.toolCallId,
    question: 'which colour',
    options: ['red', 'green', 'blue'],
  });
  const [result] = ofType(chunks, 'data-pi-tool-result');
  assert.equal(result.data.isError, false);
  assert.deepEqual(result.data.output.content, [{ type: 'text', text: 'green' }]);
  const history = await s.messages(id);
  assert.equal(lastText(history), 'You chose green.');
  const part = toolPart(history, 'askUser');
  assert.equal(part.state, 'output-available');
  assert.deepEqual(part.output, [{ type: 'text', text: 'green' }]);
  assert.equal(part.interrupt, undefined, 'answered: it waits no more');

  // `{answer}` as the output, and `errorText` (an error result).
  const id2 = sid('ask-obj');
  await turnWithWait(s, id2, 'ask which color', (c) => s.toolOutput(id2, { toolCallId: c.data.toolCallId, output: { answer: 'blue' } }));
  assert.equal(lastText(await s.messages(id2)), 'You chose blue.');
  const id3 = sid('ask-err');
  const third = await turnWithWait(s, id3, 'ask which colour', (c) => s.toolOutput(id3, { toolCallId: c.data.toolCallId, errorText: 'no colours today' }));
  const errResult = ofType(third.chunks, 'data-pi-tool-result')[0].data;
  assert.equal(errResult.isError, true);
  assert.deepEqual(errResult.output.content, [{ type: 'text', text: 'no colours today' }]);
  const errPart = toolPart(await s.messages(id3), 'askUser');
  assert.equal(errPart.state, 'output-error');
  assert.equal(errPart.errorText, 'no colours today');
});

test('the history shows a waiting call waiting; after a reload (re-read, resume) the answer still works', async () => {
  // An approval: the chat stream stays open.
  const id = sid('wait-hist');
  const { answer } = await turnWithWait(s, id, 'delete notes.txt', async (c) => {
    const doc = await s.history(id);
    assert.ok(doc.activeTurn, 'the turn runs');
    const part = toolPart(doc.messages, 'deleteFile');
    assert.equal(part.state, 'approval-requested');
    assert.deepEqual(part.approval, { id: c.data.approvalId, requestReason: 'deletes notes.txt' });
    assert.equal(part.toolCallId, c.data.toolCallId);
    // Answered with what the history says, not the chunk.
    return (await s.approval(id, { approvalId: part.approval.id, approved: true })).status;
  });
  assert.equal(answer, 202);
  assert.equal(lastText(await s.messages(id)), 'Deleted notes.txt.');

  // A question: the client goes away while it waits, re-reads the history, answers, resumes.
  const id2 = sid('wait-reload');
  const ac = new AbortController();
  const res = await fetch(`${s.api}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody({ sessionId: id2, message: 'ask which colour' })),
    signal: ac.signal,
  });
  const reader = res.body.getReader();
  let text = '';
  while (!text.includes('data-pi-tool-input-request')) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream waits');
    text += new TextDecoder().decode(value);
  }
  ac.abort();
  await sleep(50);
  const doc = await s.history(id2);
  assert.ok(doc.activeTurn);
  const part = toolPart(doc.messages, 'askUser');
  assert.equal(part.state, 'input-available');
  assert.deepEqual(part.interrupt, { question: 'which colour', options: ['red', 'green', 'blue'] });
  assert.equal((await s.toolOutput(id2, { toolCallId: part.toolCallId, output: 'red' })).status, 202);
  const resumed = await readChunks(await s.resume(id2, -1));
  assert.equal(resumed.chunks.at(-1).type, 'finish');
  assert.equal(ofType(resumed.chunks, 'data-pi-tool-input-request').length, 1);
  assert.equal(lastText(await s.messages(id2)), 'You chose red.');
});

test('a stop while a call waits ends the wait (Stopped by the user); a later answer gets 404', async () => {
  for (const [message, name] of [['delete notes.txt', 'deleteFile'], ['ask which colour', 'askUser']]) {
    const id = sid(`stop-${name}`);
    let waiting;
    const { chunks } = await turnWithWait(s, id, message, async (c) => {
      waiting = c.data;
      assert.equal((await s.stopTurn(id)).status, 204);
    });
    assert.deepEqual(chunks.at(-1), { type: 'abort', reason: 'stopped' });
    assert.equal(ofType(chunks, 'data-pi-tool-approval-response').length, 0, 'nobody answered');
    const [result] = ofType(chunks, 'data-pi-tool-result');
    assert.equal(result.data.toolCallId, waiting.toolCallId);
    assert.equal(result.data.isError, true);
    assert.deepEqual(result.data.output.content, [{ type: 'text', text: 'Stopped by the user' }]);
    const late = name === 'deleteFile'
      ? await s.approval(id, { approvalId: waiting.approvalId, approved: true })
      : await s.toolOutput(id, { toolCallId: waiting.toolCallId, output: 'green' });
    assert.equal(late.status, 404, `${name}: expired`);
    assert.equal((await errorOf(late)).code, name === 'deleteFile' ? 'approval_not_found' : 'tool_call_not_found');
    const doc = await s.history(id);
    assert.equal(doc.activeTurn, null);
    const part = toolPart(doc.messages, name);
    assert.equal(part.state, 'output-error');
    assert.equal(part.errorText, 'Stopped by the user');
    assert.equal(part.interrupt, undefined);
    // The session goes on.
    const next = await readChunks(await s.chat({ sessionId: id, message: 'after the stop words:2' }));
    assert.equal(next.chunks.at(-1).type, 'finish');
    assert.equal(lastText(await s.messages(id)), 'Answer after the stop: w1 w2');
  }
});

test('--not-found approval answers the route 404; the call still waits, the answer works once it is back', async () => {
  const id = sid('nf');
  await s.control({ notFound: ['approval'] });
  try {
    const { answer } = await turnWithWait(s, id, 'delete notes.txt', async (c) => {
      const res = await s.approval(id, { approvalId: c.data.approvalId, approved: true });
      const error = await errorOf(res);
      assert.equal(toolPart(await s.messages(id), 'deleteFile').state, 'approval-requested', 'nothing applied');
      await s.control({ notFound: [] });
      const again = await s.approval(id, { approvalId: c.data.approvalId, approved: true });
      return { first: [res.status, error.code], again: again.status };
    });
    assert.deepEqual(answer, { first: [404, 'not_found'], again: 202 });
    const entry = (await s.log()).find((e) => e.route === 'approval' && e.sessionId === id);
    assert.equal(entry.fault, 'notFound');
    assert.equal(lastText(await s.messages(id)), 'Deleted notes.txt.');
  } finally {
    await s.control({ notFound: [] });
  }
});

test('--fail-answers 1: the first answer POST is 503, nothing applied; the retry with the same ids works; --answer-delay', async () => {
  const f = await startServer(['--tps', '0', '--fail-answers', '1', '--answer-delay', '300']);
  try {
    const id = sid('fail');
    const { chunks, answer } = await turnWithWait(f, id, 'delete notes.txt', async (c) => {
      const body = { approvalId: c.data.approvalId, approved: false, reason: 'retry me' };
      const first = await f.approval(id, body);
      const failed = [first.status, (await errorOf(first)).code];
      const part = toolPart(await f.messages(id), 'deleteFile');
      const t0 = Date.now();
      const retry = await f.approval(id, body);
      return { failed, stateAfterFail: part.state, retry: retry.status, took: Date.now() - t0 };
    });
    assert.deepEqual(answer.failed, [503, 'unavailable']);
    assert.equal(answer.stateAfterFail, 'approval-requested', 'the 503 applied nothing');
    assert.equal(answer.retry, 202);
    assert.ok(answer.took >= 290, `the answer was held (${answer.took} ms)`);
    assert.equal(ofType(chunks, 'data-pi-tool-approval-response').length, 1);
    assert.equal(lastText(await f.messages(id)), 'Kept notes.txt.');
    const entries = (await f.log()).filter((e) => e.route === 'approval');
    assert.deepEqual(entries.map((e) => [e.status, e.fault, e.delayedMs]), [[503, 'fail', undefined], [202, undefined, 300]]);
    // The switches are on the control route too.
    const settings = await f.control({ failAnswers: 1, answerDelayMs: 0 });
    assert.equal(settings.failAnswers, 1);
    assert.equal(settings.answerDelayMs, 0);
    const id2 = sid('fail2');
    const second = await turnWithWait(f, id2, 'ask which colour', async (c) => {
      const a = await f.toolOutput(id2, { toolCallId: c.data.toolCallId, output: 'blue' });
      const b = await f.toolOutput(id2, { toolCallId: c.data.toolCallId, output: 'blue' });
      return [a.status, b.status];
    });
    assert.deepEqual(second.answer, [503, 202]);
    assert.equal(lastText(await f.messages(id2)), 'You chose blue.');
  } finally {
    await f.stop();
  }
});

test('a restart keeps the final states; a wait does not survive it', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'acs-hitl-'));
  let first;
  let second;
  try {
    first = await startServer(['--tps', '0'], { dataDir });
    const approved = sid('r-approved');
    const denied = sid('r-denied');
    const waiting = sid('r-waiting');
    await turnWithWait(first, approved, 'delete notes.txt', (c) => first.approval(approved, { approvalId: c.data.approvalId, approved: true }));
    await turnWithWait(first, denied, 'delete notes.txt', (c) => first.approval(denied, { approvalId: c.data.approvalId, approved: false, reason: 'no' }));
    const before = { approved: await first.messages(approved), denied: await first.messages(denied) };
    // A call left waiting when the server goes.
    const res = await first.chat({ sessionId: waiting, message: 'ask which colour' });
    let request;
    await readChunks(res, async (c) => {
      if (c.type === 'data-pi-tool-input-request') {
        request = c.data;
        await first.stop();
      }
    });
    assert.ok(request);

    second = await startServer(['--tps', '0'], { dataDir });
    assert.deepEqual(await second.messages(approved), before.approved, 'approved: the same history');
    assert.deepEqual(await second.messages(denied), before.denied, 'denied: the same history');
    assert.equal(toolPart(await second.messages(approved), 'deleteFile').state, 'output-available');
    assert.equal(toolPart(await second.messages(denied), 'deleteFile').state, 'output-denied');
    const part = toolPart(await second.messages(waiting), 'askUser');
    assert.equal(part.state, 'output-error', 'no longer waiting');
    assert.equal(part.interrupt, undefined);
    const late = await second.toolOutput(waiting, { toolCallId: request.toolCallId, output: 'green' });
    assert.equal(late.status, 404);
    const again = await second.approval(approved, { approvalId: toolPart(before.approved, 'deleteFile').approval.id, approved: true });
    assert.equal(again.status, 409, 'an answered approval stays answered');
    // The session goes on.
    await readChunks(await second.chat({ sessionId: waiting, message: 'recall' }));
    assert.equal(lastText(await second.messages(waiting)), 'Answer recall: before this you said "ask which colour".');
  } finally {
    await first?.stop();
    await second?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
