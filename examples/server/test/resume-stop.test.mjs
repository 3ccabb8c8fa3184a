import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chatBody, readChunks, sid, startServer, textOf } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--tps', '200']);
});
after(() => s?.stop());

test('a cut stream resumes from its cursor: replay after the cursor, then live, nothing lost or doubled', async () => {
  const id = sid('resume');
  await s.control({ cutStreamAfter: 8 });
  const res = await s.chat({ sessionId: id, message: 'resume me words:30' });
  const turnId = res.headers.get('x-turn-id');
  const first = await readChunks(res);
  assert.equal(first.chunks.length, 8, 'the socket died after 8 chunks');
  assert.ok(first.error, 'the body broke off');

  const again = await s.resume(id, 7);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('x-turn-id'), turnId);
  assert.equal(again.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  const rest = await readChunks(again);
  assert.equal(rest.error, undefined);
  assert.equal(rest.chunks.at(-1).type, 'finish');

  const full = await readChunks(await s.resume(id, -1));
  assert.deepEqual([...first.chunks, ...rest.chunks], full.chunks, 'cut + resumed = the whole turn');
  const seqs = full.chunks.filter((c) => c.data?.seq !== undefined).map((c) => c.data.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  assert.equal((await s.log()).find((e) => e.route === 'chat' && e.sessionId === id).aborted, true);
});

test('a second reader joins a live turn at its cursor', async () => {
  const id = sid('live');
  const res = await s.chat({ sessionId: id, message: 'live words:30' });
  let joined;
  const main = await readChunks(res, async (c, i) => {
    if (i === 10) joined = readChunks(await s.resume(id, 10));
  });
  const side = await joined;
  assert.deepEqual(side.chunks, main.chunks.slice(11));
});

test('resume answers 204 without a turn, 416 outside the buffer, 400 for a bad cursor', async () => {
  assert.equal((await s.resume(sid('none'), -1)).status, 204);
  const id = sid('range');
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'x words:1' }));
  const last = chunks.length - 1;
  const atEnd = await s.resume(id, last);
  assert.equal(atEnd.status, 200);
  assert.deepEqual((await readChunks(atEnd)).chunks, []);
  const out = await s.resume(id, last + 1);
  assert.equal(out.status, 416);
  assert.equal((await out.json()).error.code, 'range_not_satisfiable');
  const bad = await s.resume(id, 'abc');
  assert.equal(bad.status, 400);
  assert.deepEqual((await bad.json()).error, { code: 'validation_error', message: 'cursor must be an integer >= -1', field: 'cursor' });
  assert.equal((await s.resume(id, -1, { turnId: 'turn-unknown' })).status, 204);
});

test('DELETE turn stops the agent: abort chunk, no finish, the partial answer stays in history', async () => {
  const id = sid('stop');
  const res = await s.chat({ sessionId: id, message: 'stop me words:200' });
  const turnId = res.headers.get('x-turn-id');
  let stopStatus;
  const { chunks } = await readChunks(res, async (c) => {
    if (c.type === 'data-pi-text-delta' && stopStatus === undefined) {
      assert.equal((await s.stopTurn(id, 'turn-of-someone-else')).status, 204, 'another turn id stops nothing');
      stopStatus = (await s.stopTurn(id, turnId)).status;
    }
  });
  assert.equal(stopStatus, 204);
  assert.deepEqual(chunks.at(-1), { type: 'abort', reason: 'stopped' });
  assert.ok(!chunks.some((c) => c.type === 'finish'));
  const end = chunks.find((c) => c.type === 'data-pi-message-end' && c.data.role === 'assistant');
  assert.equal(end.data.stopReason, 'aborted');
  const textEnd = chunks.find((c) => c.type === 'data-pi-text-end');
  assert.ok(textEnd, 'the open text part is closed with the text it has');
  const messages = await s.messages(id);
  assert.equal(messages.length, 2);
  assert.equal(textOf(messages[1]), textEnd.data.text);
  assert.ok(textOf(messages[1]).length < 'Answer stop me: '.length + 200 * 4, 'the answer was cut short');
  // The session takes a new turn right away.
  const next = await readChunks(await s.chat({ sessionId: id, message: 'after words:1' }));
  assert.equal(next.chunks.at(-1).type, 'finish');
});

test('stop by clientTurnId; follow-ups accepted before a stop stay queued and run after the next prompt', async () => {
  const id = sid('stop-queue');
  const body = chatBody({ sessionId: id, message: 'long words:200' });
  const res = await fetch(`${s.api}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let done = false;
  const { chunks } = await readChunks(res, async (c) => {
    if (c.type === 'data-pi-text-delta' && !done) {
      done = true;
      assert.equal((await s.followUp(id, { message: 'queued before stop', clientSeq: 1, clientNonce: 'q1' })).status, 202);
      assert.equal((await s.stopTurn(id, body.clientTurnId)).status, 204);
    }
  });
  assert.equal(chunks.at(-1).type, 'abort');
  assert.ok(!chunks.some((c) => c.type === 'data-followup-consumed'), 'a stop does not run the queue');
  const next = await readChunks(await s.chat({ sessionId: id, message: 'new prompt words:1' }));
  const consumed = next.chunks.find((c) => c.type === 'data-followup-consumed');
  assert.equal(consumed?.data.clientNonce, 'q1');
  assert.deepEqual((await s.messages(id)).map(textOf).slice(2), ['new prompt words:1', 'Answer new prompt: w1', 'queued before stop', 'Answer queued before stop: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12']);
});
