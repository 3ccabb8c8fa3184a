import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { piChunks, readChunks, sid, startServer, textOf, textsFromDeltas } from './helpers.mjs';

let s;
before(async () => {
  s = await startServer(['--tps', '0']);
});
after(() => s?.stop());

/** Checks the projection rules every pi turn's stream follows; returns its pi chunks. */
function checkTurn(chunks, turnId) {
  assert.equal(chunks[0].type, 'data-pi-mode', 'data-pi-mode comes first');
  assert.deepEqual(chunks[0].data, { enabled: true });
  assert.equal(chunks[1].type, 'data-turn-start');
  assert.equal(chunks[1].data.turnId, turnId, 'data-turn-start names the x-turn-id turn');
  const pi = piChunks(chunks).filter((c) => c.type !== 'data-pi-mode');
  assert.deepEqual(
    pi.map((c) => c.data.seq),
    pi.map((_, i) => i + 1),
    'seq runs 1, 2, 3, … within the turn',
  );
  for (const c of chunks) {
    assert.ok(!/^(text|reasoning|tool)-/.test(c.type), `no standard content chunk in pi mode (${c.type})`);
    assert.notEqual(c.type, 'data-pi-message-update', 'only deltas: no whole partial message');
    assert.ok(!('partial' in (c.data ?? {})) && !('message' in (c.data ?? {})), 'no partial message on the wire');
  }
  // Every -end's full text equals what its deltas built.
  const built = new Map();
  for (const c of pi) {
    const kind = /^data-pi-(text|reasoning)-(delta|end)$/.exec(c.type);
    if (!kind) continue;
    const key = `${c.data.messageId}/${c.data.partId}`;
    if (kind[2] === 'delta') built.set(key, (built.get(key) ?? '') + c.data.delta);
    else assert.equal(c.data.text, built.get(key) ?? '', `${c.type} text = its deltas`);
  }
  return pi;
}

test('a pi turn: headers, data-pi-mode first, seq from 1, only deltas, canonical history', async () => {
  const id = sid('turn');
  const res = await s.chat({ sessionId: id, message: 'hello agent words:5', messageId: 'client-user-1' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const turnId = res.headers.get('x-turn-id');
  assert.ok(turnId);
  const { chunks, error } = await readChunks(res);
  assert.equal(error, undefined);
  const pi = checkTurn(chunks, turnId);
  assert.deepEqual(
    pi.filter((c) => !/delta/.test(c.type)).map((c) => `${c.type.slice(8)}${c.data.role ? `:${c.data.role}` : ''}`),
    ['agent-start', 'message-start:user', 'message-end:user', 'message-start:assistant', 'text-start', 'text-end', 'message-end:assistant', 'agent-end'],
  );
  const userStart = pi.find((c) => c.type === 'data-pi-message-start');
  assert.equal(userStart.data.messageId, 'client-user-1', 'the client messageId names the user message');
  const assistantId = pi.find((c) => c.type === 'data-pi-message-start' && c.data.role === 'assistant').data.messageId;
  assert.equal(textsFromDeltas(chunks).get(assistantId), 'Answer hello agent: w1 w2 w3 w4 w5');
  assert.equal(chunks.at(-1).type, 'finish');

  const messages = await s.messages(id);
  assert.deepEqual(messages, [
    { id: 'client-user-1', role: 'user', parts: [{ type: 'text', text: 'hello agent words:5' }] },
    { id: assistantId, role: 'assistant', parts: [{ type: 'text', text: 'Answer hello agent: w1 w2 w3 w4 w5', state: 'done' }] },
  ]);
});

test('seq restarts at 1 with every turn; a busy session answers 409 turn_already_active', async () => {
  const id = sid('seq');
  await s.control({ tps: 200 });
  try {
    const first = await s.chat({ sessionId: id, message: 'one words:20' });
    const busy = await s.chat({ sessionId: id, message: 'two' });
    assert.equal(busy.status, 409);
    assert.equal((await busy.json()).error.code, 'turn_already_active');
    const a = await readChunks(first);
    const b = await readChunks(await s.chat({ sessionId: id, message: 'two words:3' }));
    checkTurn(a.chunks, a.chunks[1].data.turnId);
    const pb = checkTurn(b.chunks, b.chunks[1].data.turnId);
    assert.equal(pb[0].data.seq, 1);
    assert.notEqual(a.chunks[1].data.turnId, b.chunks[1].data.turnId);
  } finally {
    await s.control({ tps: 0 });
  }
  const texts = (await s.messages(id)).map(textOf);
  assert.deepEqual(texts.slice(2), ['two words:3', 'Answer two: w1 w2 w3']);
});

test('thinking, tools (ls, echo) and a tool result owned by its assistant message', async () => {
  const id = sid('tools');
  const res = await s.chat({ sessionId: id, message: 'please think, list files and echo hi there' });
  const { chunks } = await readChunks(res);
  const pi = checkTurn(chunks, res.headers.get('x-turn-id'));
  const types = pi.map((c) => c.type);
  assert.ok(types.includes('data-pi-reasoning-start') && types.includes('data-pi-reasoning-end'));
  const ends = pi.filter((c) => c.type === 'data-pi-tool-call-end');
  assert.deepEqual(
    ends.map((c) => [c.data.toolName, c.data.input]),
    [
      ['ls', { path: '.' }],
      ['echo', { text: 'hi there' }],
    ],
  );
  const owner = ends[0].data.messageId;
  const results = pi.filter((c) => c.type === 'data-pi-tool-result');
  assert.equal(results.length, 2);
  for (const r of results) {
    assert.equal(r.data.messageId, owner, 'the result names the assistant message owning the call');
    assert.equal(r.data.isError, false);
  }
  const ls = results.find((r) => r.data.toolCallId === ends[0].data.toolCallId);
  // The whole result, as the server family streams it (SPEC §7).
  assert.deepEqual(ls.data.output, { content: [{ type: 'text', text: 'README.md\ndata.json\nhello.txt\nnotes/' }] });
  assert.deepEqual(ls.data.details.entries, ['README.md', 'data.json', 'hello.txt', 'notes/']);
  // Tool-call deltas are the JSON text of the input, piece by piece.
  const deltas = pi.filter((c) => c.type === 'data-pi-tool-call-delta' && c.data.toolCallId === ends[1].data.toolCallId);
  assert.deepEqual(JSON.parse(deltas.map((c) => c.data.delta).join('')), { text: 'hi there' });

  const messages = await s.messages(id);
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'assistant'],
  );
  const [reasoning, text, lsPart, echoPart] = messages[1].parts;
  assert.equal(reasoning.type, 'reasoning');
  assert.equal(reasoning.state, 'done');
  assert.equal(text.text, 'Answer please think, list: calling ls and echo.');
  assert.deepEqual(lsPart, {
    type: 'tool-ls',
    toolName: 'ls',
    toolCallId: ends[0].data.toolCallId,
    state: 'output-available',
    input: { path: '.' },
    output: [{ type: 'text', text: 'README.md\ndata.json\nhello.txt\nnotes/' }],
    details: { path: '.', entries: ['README.md', 'data.json', 'hello.txt', 'notes/'] },
  });
  assert.equal(echoPart.state, 'output-available');
  assert.deepEqual(echoPart.output, [{ type: 'text', text: 'hi there' }]);
  assert.equal(textOf(messages[2]), 'Result for please think, list: ls → README.md, data.json, hello.txt, notes/; echo → hi there.');
});

test('a failing tool gives output-error; a failing provider gives an error chunk', async () => {
  const id = sid('errors');
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'list files in nowhere' }));
  const result = chunks.find((c) => c.type === 'data-pi-tool-result');
  assert.equal(result.data.isError, true);
  assert.match(result.data.output.content[0].text, /no such folder: nowhere/);
  const messages = await s.messages(id);
  const part = messages[1].parts.find((p) => p.type.startsWith('tool-'));
  assert.equal(part.state, 'output-error');
  assert.match(part.errorText, /no such folder/);

  const bad = await readChunks(await s.chat({ sessionId: id, message: 'fail provider please' }));
  const end = bad.chunks.find((c) => c.type === 'data-pi-message-end' && c.data.role === 'assistant');
  assert.equal(end.data.stopReason, 'error');
  assert.deepEqual(bad.chunks.at(-1), { type: 'error', errorText: 'scripted provider error' });
  assert.ok(!bad.chunks.some((c) => c.type === 'finish'));
});

test('chat validation answers 400 validation_error with the field', async () => {
  const post = (body) => fetch(`${s.api}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  let res = await post(JSON.stringify({ message: 'hi' }));
  assert.equal(res.status, 400);
  assert.deepEqual((await res.json()).error.field, 'sessionId');
  res = await post(JSON.stringify({ sessionId: sid('v'), message: '' }));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.field, 'message');
  res = await post('{not json');
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'validation_error');
});
