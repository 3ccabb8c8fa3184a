import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readChunks, sid, sleep, startServer, textOf } from './helpers.mjs';

let s;
before(async () => {
  // 200 tokens/s, 4 characters a chunk: a `words:120` answer streams for about 0.8 s.
  s = await startServer(['--tps', '200']);
});
after(() => s?.stop());

/** Starts a slow turn and runs `during` once its first text delta arrived. */
async function slowTurn(id, during, message = 'first message words:120') {
  const res = await s.chat({ sessionId: id, message });
  assert.equal(res.status, 200);
  let ran = false;
  let duringResult;
  const { chunks, error } = await readChunks(res, async (c) => {
    if (!ran && c.type === 'data-pi-text-delta') {
      ran = true;
      duringResult = await during();
    }
  });
  assert.equal(error, undefined);
  assert.ok(ran, 'the turn streamed text');
  return { chunks, duringResult };
}

test('follow-ups posted during a slow turn are consumed in the same stream, in order, with their nonce', async () => {
  const id = sid('fifo');
  const { chunks, duringResult } = await slowTurn(id, async () => {
    const answers = [];
    // Two follow-ups with the same text: identity is the nonce, never the text.
    for (const [i, text] of ['F1 first follow-up', 'F2 same text', 'F2 same text'].entries()) {
      const r = await s.followUp(id, { message: text, clientSeq: 1000 + i, clientNonce: `nonce-${id}-${i}` });
      answers.push([r.status, await r.json()]);
    }
    return answers;
  });
  assert.deepEqual(duringResult, [
    [202, { queued: true }],
    [202, { queued: true }],
    [202, { queued: true }],
  ]);

  const consumed = chunks.filter((c) => c.type === 'data-followup-consumed');
  assert.deepEqual(
    consumed.map((c) => [c.data.clientNonce, c.data.clientSeq, c.data.text]),
    [
      [`nonce-${id}-0`, 1000, 'F1 first follow-up'],
      [`nonce-${id}-1`, 1001, 'F2 same text'],
      [`nonce-${id}-2`, 1002, 'F2 same text'],
    ],
  );
  const userStarts = chunks.filter((c) => c.type === 'data-pi-message-start' && c.data.role === 'user');
  assert.equal(userStarts.length, 4);
  assert.equal(userStarts[0].data.clientNonce, undefined, 'the prompt itself carries no nonce');
  for (let i = 1; i < 4; i++) {
    assert.equal(userStarts[i].data.clientNonce, `nonce-${id}-${i - 1}`);
    const consumedAt = chunks.indexOf(consumed[i - 1]);
    assert.equal(chunks[consumedAt + 1], userStarts[i], 'consumed comes right before the user message-start');
    assert.equal(consumed[i - 1].data.messageId, userStarts[i].data.messageId);
  }
  const seqs = chunks.filter((c) => c.type.startsWith('data-pi-') && c.data.seq !== undefined).map((c) => c.data.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'one seq run for the whole turn, follow-ups included');
  assert.equal(chunks.at(-1).type, 'finish');

  const messages = await s.messages(id);
  assert.deepEqual(
    messages.map((m) => `${m.role}: ${textOf(m).split(':')[0]}`),
    [
      'user: first message words',
      'assistant: Answer first message',
      'user: F1 first follow-up',
      'assistant: Answer F1 first follow-up',
      'user: F2 same text',
      'assistant: Answer F2 same text',
      'user: F2 same text',
      'assistant: Answer F2 same text',
    ],
  );
  // The canonical ids are the streamed ids.
  assert.deepEqual(
    messages.filter((m) => m.role === 'user').map((m) => m.id),
    userStarts.map((c) => c.data.messageId),
  );
});

test('idempotency: duplicate, out of order, gaps, deleted, delete before post', async () => {
  const id = sid('idem');
  const post = async (body) => {
    const r = await s.followUp(id, { message: body.message ?? `msg ${body.clientSeq}`, ...body });
    return [r.status, await r.json()];
  };
  const { chunks, duringResult } = await slowTurn(id, async () => {
    const out = {};
    out.first = await post({ clientSeq: 5, clientNonce: 'a' });
    out.duplicate = await post({ clientSeq: 5, clientNonce: 'a' });
    out.stale = await post({ clientSeq: 5, clientNonce: 'b' });
    out.lower = await post({ clientSeq: 3, clientNonce: 'c' });
    out.gap = await post({ clientSeq: 9, clientNonce: 'd' });
    out.toDelete = await post({ clientSeq: 12, clientNonce: 'e', message: 'deleted before it ran' });
    out.deleteStatus = (await s.deleteFollowUp(id, { clientNonce: 'e', clientSeq: '12' })).status;
    out.repost = await post({ clientSeq: 12, clientNonce: 'e', message: 'deleted before it ran' });
    // A DELETE that overtook its POST: the POST then answers `deleted` (matched by seq alone).
    out.earlyDeleteStatus = (await s.deleteFollowUp(id, { clientNonce: 'f', clientSeq: '20' })).status;
    out.afterEarlyDelete = await post({ clientSeq: 20, clientNonce: 'g' });
    out.noKeys = await post({ message: 'no seq, no nonce' });
    return out;
  }, 'first message words:200');
  const d = duringResult;
  assert.deepEqual(d.first, [202, { queued: true }]);
  assert.deepEqual(d.duplicate, [202, { queued: true, duplicate: true }]);
  assert.equal(d.stale[0], 409);
  assert.equal(d.stale[1].error.code, 'followup_out_of_order');
  assert.equal(d.lower[0], 409);
  assert.equal(d.lower[1].error.code, 'followup_out_of_order');
  assert.deepEqual(d.gap, [202, { queued: true }]);
  assert.deepEqual(d.toDelete, [202, { queued: true }]);
  assert.equal(d.deleteStatus, 204);
  assert.deepEqual(d.repost, [202, { queued: false, deleted: true }]);
  assert.equal(d.earlyDeleteStatus, 204);
  assert.deepEqual(d.afterEarlyDelete, [202, { queued: false, deleted: true }]);
  assert.deepEqual(d.noKeys, [202, { queued: true }]);

  const users = chunks.filter((c) => c.type === 'data-pi-message-start' && c.data.role === 'user').map((c) => c.data.text);
  assert.deepEqual(users, ['first message words:200', 'msg 5', 'msg 9', 'no seq, no nonce'], 'each accepted follow-up ran once; the deleted one never');
});

test('a follow-up accepted while agent_end is emitted stays queued and is drained in the same stream', async () => {
  const id = sid('agent-end');
  await s.control({ agentEndDelayMs: 300 });
  try {
    const res = await s.chat({ sessionId: id, message: 'short words:2' });
    let answer;
    const { chunks } = await readChunks(res, async (c) => {
      if (c.type === 'data-pi-agent-end' && !answer) {
        const r = await s.followUp(id, { message: 'late follow-up', clientSeq: 1, clientNonce: 'late' });
        answer = [r.status, await r.json()];
      }
    });
    assert.deepEqual(answer, [202, { queued: true }]);
    const types = chunks.map((c) => c.type);
    assert.equal(types.filter((t) => t === 'data-pi-agent-start').length, 2, 'a second agent run in the same stream');
    const consumed = chunks.find((c) => c.type === 'data-followup-consumed');
    assert.equal(consumed.data.clientNonce, 'late');
    assert.equal(chunks.at(-1).type, 'finish');
  } finally {
    await s.control({ agentEndDelayMs: 0 });
  }
  assert.deepEqual((await s.messages(id)).map(textOf), ['short words:2', 'Answer short: w1 w2', 'late follow-up', 'Answer late follow-up: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12']);
});

test('not ready, validation, scripted 503s and delays', async () => {
  let r = await s.followUp(sid('unknown'), { message: 'hi', clientSeq: 1, clientNonce: 'x' });
  assert.equal(r.status, 409);
  assert.equal((await r.json()).error.code, 'followup_session_not_ready');
  const refused = sid('refused');
  assert.equal((await s.chat({ sessionId: refused, message: '  ' })).status, 400);
  r = await s.followUp(refused, { message: 'hi', clientSeq: 1, clientNonce: 'x' });
  assert.equal((await r.json()).error.code, 'followup_session_not_ready', 'a refused chat creates no agent');

  const id = sid('faults');
  await readChunks(await s.chat({ sessionId: id, message: 'hello words:1' }));
  r = await s.followUp(id, { clientSeq: 1, clientNonce: 'x' });
  assert.equal(r.status, 400);
  assert.deepEqual((await r.json()).error, { code: 'validation_error', message: 'message is required', field: 'message' });
  r = await s.followUp(id, { message: 'hi', clientSeq: -1, clientNonce: 'x' });
  assert.equal(r.status, 400);

  await s.control({ failFollowups: 2, followupDelayMs: 150 });
  try {
    const t0 = Date.now();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await s.followUp(id, { message: 'retry me', clientSeq: 7, clientNonce: 'retry' })).status);
    assert.deepEqual(statuses, [503, 503, 202], 'the same seq and nonce land once the failures are spent');
    assert.ok(Date.now() - t0 >= 150, 'the accepted answer was delayed');
    const dup = await s.followUp(id, { message: 'retry me', clientSeq: 7, clientNonce: 'retry' });
    assert.deepEqual(await dup.json(), { queued: true, duplicate: true });
  } finally {
    await s.control({ failFollowups: 0, followupDelayMs: 0 });
  }
});

test('a follow-up accepted while idle waits for the next turn and runs after its prompt', async () => {
  const id = sid('idle');
  await readChunks(await s.chat({ sessionId: id, message: 'one words:1' }));
  const r = await s.followUp(id, { message: 'posted while idle', clientSeq: 1, clientNonce: 'idle' });
  assert.deepEqual(await r.json(), { queued: true });
  await sleep(50);
  assert.equal((await s.messages(id)).length, 2, 'nothing runs without a turn');
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'two words:1' }));
  assert.equal(chunks.find((c) => c.type === 'data-followup-consumed').data.clientNonce, 'idle');
  assert.deepEqual((await s.messages(id)).map(textOf).slice(2), ['two words:1', 'Answer two: w1', 'posted while idle', 'Answer posted while idle: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12']);
});

test('a delayed answer the client gave up on: the follow-up landed, the retry is a duplicate, the log says aborted', async () => {
  const id = sid('delay-abort');
  await s.control({ followupDelayMs: 400 });
  try {
    const { chunks, duringResult } = await slowTurn(id, async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      const gaveUp = await fetch(`${s.api}/chat/${id}/followup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'given up on', clientSeq: 1, clientNonce: 'gu' }),
        signal: ac.signal,
      }).catch((e) => e.name);
      const retry = await s.followUp(id, { message: 'given up on', clientSeq: 1, clientNonce: 'gu' });
      return [gaveUp, await retry.json()];
    });
    assert.deepEqual(duringResult, ['AbortError', { queued: true, duplicate: true }]);
    assert.equal(chunks.filter((c) => c.type === 'data-followup-consumed').length, 1, 'ran once');
    const entries = (await s.log()).filter((e) => e.route === 'followup' && e.sessionId === id);
    assert.deepEqual(entries.map((e) => e.aborted), [true, false]);
  } finally {
    await s.control({ followupDelayMs: 0 });
  }
});

test('a DELETE of a follow-up that already ran answers 409 followup_already_started (204 under legacyHistory)', async () => {
  const id = sid('started');
  const { chunks } = await slowTurn(id, async () => {
    const r = await s.followUp(id, { message: 'runs before the DELETE', clientSeq: 1, clientNonce: 'ran' });
    assert.equal(r.status, 202);
  });
  assert.ok(chunks.some((c) => c.type === 'data-followup-consumed' && c.data.clientNonce === 'ran'));
  const r = await s.deleteFollowUp(id, { clientNonce: 'ran', clientSeq: '1' });
  assert.equal(r.status, 409);
  assert.equal((await r.json()).error.message, 'followup_already_started');
  // The real server answers every DELETE with 204.
  await s.control({ legacyHistory: true });
  try {
    assert.equal((await s.deleteFollowUp(id, { clientNonce: 'ran', clientSeq: '1' })).status, 204);
  } finally {
    await s.control({ legacyHistory: false });
  }
  // Never posted: nothing ran, so nothing to refuse.
  assert.equal((await s.deleteFollowUp(id, { clientNonce: 'never', clientSeq: '2' })).status, 204);
});
