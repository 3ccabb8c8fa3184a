// The history's `activeTurn` (SPEC §12), and the switches that make the reference server behave
// as the real server of the family does where a client can tell: `legacyHistory` (no
// `activeTurn`, a running turn left out until its first assistant message ended) and
// `strandFollowUps` (a follow-up accepted after pi's last queue poll waits for the next prompt).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readChunks, sid, sleep, startServer, textOf } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--tps', '200']);
});
after(() => s?.stop());

const historyOf = (id) => fetch(`${s.api}/chat/${encodeURIComponent(id)}/messages`).then((r) => r.json());

test('the history says which turn runs, and null once none does', async () => {
  const id = sid('active');
  const res = await s.chat({ sessionId: id, message: 'first words:60' });
  let during;
  const { chunks } = await readChunks(res, async (c) => {
    if (!during && c.type === 'data-pi-text-delta') during = await historyOf(id);
  });
  const turnId = chunks.find((c) => c.type === 'data-turn-start').data.turnId;
  assert.deepEqual(during.activeTurn, { turnId });
  assert.deepEqual(during.messages.map((m) => m.role), ['user'], 'what ended: the prompt');
  const done = await historyOf(id);
  assert.equal(done.activeTurn, null);
  assert.deepEqual(done.messages.map((m) => m.role), ['user', 'assistant']);
});

test('legacyHistory: no activeTurn, and the running turn is left out until an answer ended', async () => {
  await s.control({ legacyHistory: true });
  try {
    const id = sid('legacy');
    await readChunks(await s.chat({ sessionId: id, message: 'one words:2' }));
    const res = await s.chat({ sessionId: id, message: 'two words:60' });
    let during;
    await readChunks(res, async (c) => {
      if (!during && c.type === 'data-pi-text-delta') during = await historyOf(id);
    });
    assert.equal('activeTurn' in during, false);
    assert.deepEqual(during.messages.map(textOf), ['one words:2', 'Answer one: w1 w2']);
    const done = await historyOf(id);
    assert.equal('activeTurn' in done, false);
    assert.equal(done.messages.length, 4);
  } finally {
    await s.control({ legacyHistory: false });
  }
});

test('strandFollowUps: one accepted at the turn end runs after the next prompt, not in its turn', async () => {
  await s.control({ strandFollowUps: true, agentEndDelayMs: 300 });
  try {
    const id = sid('strand');
    let answer;
    const first = await readChunks(await s.chat({ sessionId: id, message: 'short words:2' }), async (c) => {
      if (c.type === 'data-pi-agent-end' && !answer) {
        const r = await s.followUp(id, { message: 'late follow-up', clientSeq: 1, clientNonce: 'late' });
        answer = [r.status, await r.json()];
      }
    });
    assert.deepEqual(answer, [202, { queued: true }], 'accepted');
    assert.equal(first.chunks.find((c) => c.type === 'data-followup-consumed'), undefined, 'not run in its turn');
    await sleep(50);
    // The next prompt runs first; the stranded follow-up runs after it, unasked.
    const second = await readChunks(await s.chat({ sessionId: id, message: 'next prompt words:2' }));
    const users = second.chunks.filter((c) => c.type === 'data-pi-message-start' && c.data.role === 'user').map((c) => c.data.text);
    assert.deepEqual(users, ['next prompt words:2', 'late follow-up']);
  } finally {
    await s.control({ strandFollowUps: false, agentEndDelayMs: 0 });
  }
});

test('a stop keeps pi\'s queue: an accepted follow-up runs after the next prompt', async () => {
  const id = sid('stop-queue');
  const res = await s.chat({ sessionId: id, message: 'long words:200' });
  let turnId;
  await readChunks(res, async (c) => {
    if (c.type === 'data-turn-start') turnId = c.data.turnId;
    if (c.type === 'data-pi-text-delta' && turnId) {
      const id2 = turnId;
      turnId = undefined;
      const r = await s.followUp(id, { message: 'queued before the stop', clientSeq: 1, clientNonce: 'q1' });
      assert.equal(r.status, 202);
      await s.stopTurn(id, id2);
    }
  });
  const next = await readChunks(await s.chat({ sessionId: id, message: 'after the stop words:2' }));
  const users = next.chunks.filter((c) => c.type === 'data-pi-message-start' && c.data.role === 'user').map((c) => c.data.text);
  assert.deepEqual(users, ['after the stop words:2', 'queued before the stop']);
});
