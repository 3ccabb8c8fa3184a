import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readUIMessageStream } from 'ai';
import { postJson, readChunks, sid, startServer, textOf } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--runtime', 'ai-sdk', '--tps', '0']);
});
after(() => s?.stop());

const user = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** The assistant message the `ai` package builds from the chunks. */
async function reduce(chunks) {
  let last;
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  for await (const m of readUIMessageStream({ stream })) last = m;
  return last;
}

test('a turn streams standard UI message chunks only, answered from the request messages', async () => {
  const id = sid('ai');
  const messages = [user('u1', 'hello there words:3')];
  const res = await s.chat({ sessionId: id, message: 'hello there words:3', messageId: 'u1', messages });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.ok(res.headers.get('x-turn-id'));
  const { chunks, error } = await readChunks(res);
  assert.equal(error, undefined);
  assert.ok(chunks.every((c) => !c.type.startsWith('data-')), 'no data chunks in AI SDK mode');
  assert.deepEqual(
    chunks.filter((c) => !c.type.endsWith('-delta')).map((c) => c.type),
    ['start', 'start-step', 'text-start', 'text-end', 'finish-step', 'finish'],
  );
  const message = await reduce(chunks);
  assert.equal(message.id, chunks[0].messageId);
  assert.equal(textOf(message), 'Answer hello there: w1 w2 w3');

  // The server's copy (kept until the client PUTs its own).
  const stored = await s.messages(id);
  assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant']);
  assert.equal(textOf(stored[1]), 'Answer hello there: w1 w2 w3');
});

test('the model answers the last user message of the history the client sends', async () => {
  const id = sid('history');
  const messages = [
    user('u1', 'first'),
    { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Answer first: w1', state: 'done' }] },
    user('u2', 'second question words:2'),
  ];
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'second question words:2', messages }));
  assert.equal(textOf(await reduce(chunks)), 'Answer second question: w1 w2');
});

test('tools and reasoning as standard chunks, reduced by the ai package', async () => {
  const id = sid('tools');
  const messages = [user('u1', 'think, then list files and echo ok')];
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'x', messages }));
  const types = new Set(chunks.map((c) => c.type));
  for (const t of ['reasoning-start', 'reasoning-end', 'tool-input-start', 'tool-input-available', 'tool-output-available']) assert.ok(types.has(t), t);
  const m = await reduce(chunks);
  const tools = m.parts.filter((p) => p.type.startsWith('tool-'));
  assert.deepEqual(
    tools.map((p) => [p.type, p.state, p.output]),
    [
      ['tool-ls', 'output-available', 'README.md\ndata.json\nhello.txt\nnotes/'],
      ['tool-echo', 'output-available', 'ok'],
    ],
  );
  assert.match(textOf(m), /Result for think, then list: ls → README\.md, data\.json, hello\.txt, notes\/; echo → ok\./);
});

test('follow-up POST answers 409 FOLLOWUP_UNSUPPORTED', async () => {
  const id = sid('fu');
  await readChunks(await s.chat({ sessionId: id, message: 'hi words:1', messages: [user('u1', 'hi words:1')] }));
  for (const target of [id, sid('never-seen')]) {
    const r = await s.followUp(target, { message: 'more', clientSeq: 1, clientNonce: 'n1' });
    assert.equal(r.status, 409);
    assert.equal((await r.json()).error.code, 'FOLLOWUP_UNSUPPORTED');
  }
});

test('PUT messages stores the history; GET returns it; a POST without messages continues it', async () => {
  const id = sid('put');
  const history = [user('u1', 'stored question'), { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'stored answer', state: 'done' }] }];
  const put = await postJson(`${s.api}/chat/${id}/messages`, { messages: history }, 'PUT');
  assert.equal(put.status, 204);
  assert.deepEqual(await s.messages(id), history);
  const bad = await postJson(`${s.api}/chat/${id}/messages`, { messages: 'nope' }, 'PUT');
  assert.equal(bad.status, 400);

  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'next words:1', messageId: 'u2' }));
  assert.equal(textOf(await reduce(chunks)), 'Answer next: w1');
  const after = await s.messages(id);
  assert.deepEqual(after.map((m) => m.id).slice(0, 3), ['u1', 'a1', 'u2']);
});

test('stop aborts streamText; resume replays the buffer', async () => {
  const id = sid('stop');
  await s.control({ tps: 200 });
  try {
    const res = await s.chat({ sessionId: id, message: 'x', messages: [user('u1', 'long words:200')] });
    const turnId = res.headers.get('x-turn-id');
    let stopped = false;
    const { chunks } = await readChunks(res, async (c) => {
      if (c.type === 'text-delta' && !stopped) {
        stopped = true;
        assert.equal((await s.stopTurn(id, turnId)).status, 204);
      }
    });
    assert.equal(chunks.at(-1).type, 'abort');
    assert.ok(!chunks.some((c) => c.type === 'finish'));
    const replay = await readChunks(await s.resume(id, 2));
    assert.deepEqual(replay.chunks, chunks.slice(3));
  } finally {
    await s.control({ tps: 0 });
  }
});

test('regenerate-message without messages answers the stored history again', async () => {
  const id = sid('regen');
  const history = [user('u1', 'again words:2'), { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'old answer', state: 'done' }] }];
  assert.equal((await postJson(`${s.api}/chat/${id}/messages`, { messages: history }, 'PUT')).status, 204);
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: '', trigger: 'regenerate-message', messageId: 'a1' }));
  assert.equal(textOf(await reduce(chunks)), 'Answer again (attempt 2): w1 w2', 'a regenerated answer names its attempt');
  const after = await s.messages(id);
  assert.deepEqual(after.map((m) => m.role), ['user', 'assistant']);
  assert.equal(textOf(after[1]), 'Answer again (attempt 2): w1 w2');
});
