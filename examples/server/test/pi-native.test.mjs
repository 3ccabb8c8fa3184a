// The pi-native protocol (pi-native-protocol.md; README "The pi-native protocol") over the real
// pi agent: /state, the NDJSON event stream (seq, replay, range errors, faults), the commands
// and their receipts, follow-ups, idempotency, strict bodies, the session list.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { nativeRoutes, postJson, sid, sleep, startServer } from './helpers.mjs';

let s;
before(async () => {
  // 100 tokens/s: a `words:80` answer streams for about a second, long enough to queue behind.
  s = await startServer(['--tps', '100', '--words', '3', '--protocol', 'pi-native', '--heartbeat-ms', '200']);
});
after(async () => {
  await s?.stop();
});

const { base, at, state, post, follow } = nativeRoutes(() => s);
let n = 0;
const nonce = () => `nonce-${++n}`;
const prompt = (id, content, extra = {}) => {
  const clientNonce = nonce();
  return post(id, 'prompt', { requestId: clientNonce, clientNonce, content, ...extra });
};
const followUp = (id, content, clientSeq, extra = {}) => {
  const clientNonce = nonce();
  return post(id, 'followup', { requestId: `${clientNonce}:${clientSeq}`, clientNonce, content, clientSeq, ...extra });
};

const ended = (events) => events.some((e) => e.type === 'agent-end');
const endedN = (k) => (events) => events.filter((e) => e.type === 'agent-end').length >= k;
const userStarts = (events) => events.filter((e) => e.type === 'message-start' && e.role === 'user');

/** Polls `/state` until `pred(doc)` holds. */
async function waitState(id, pred, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const doc = await state(id);
    if (pred(doc)) return doc;
    if (Date.now() > until) throw new Error(`state never matched: ${JSON.stringify(doc.state).slice(0, 800)}`);
    await sleep(50);
  }
}
const idle = (doc) => doc.state.status === 'idle' && doc.state.queue.followUps.length === 0;

function assertConsecutive(events, from = 1) {
  events.forEach((e, i) => assert.equal(e.seq, from + i, `event ${i} (${e.type}) has seq ${e.seq}`));
}

test('a session that does not exist yet: an empty idle state with seq 0', async () => {
  const id = sid('new');
  const doc = await state(id);
  assert.deepEqual(doc.ref, { agentTypeId: 'pi', sessionId: id });
  assert.equal(doc.seq, 0);
  assert.equal(doc.summary.status, 'idle');
  assert.deepEqual(
    { ...doc.state },
    { protocolVersion: 1, sessionId: id, seq: 0, status: 'idle', messages: [], queue: { followUps: [] }, followUpMode: 'one-at-a-time' },
  );
  // and GET /api/v1/agents lists the one agent type
  const agents = await fetch(`${s.base}/api/v1/agents`).then((r) => r.json());
  assert.deepEqual(agents.map((a) => a.agentTypeId), ['pi']);
});

test('a prompt streams agent-start … agent-end with consecutive seqs; /state matches', async () => {
  const id = sid('prompt');
  const f = follow(id, 0);
  const res = await prompt(id, 'think and list files words:3', { displayContent: 'shown text' });
  assert.equal(res.status, 202);
  const receipt = await res.json();
  assert.deepEqual(receipt, { accepted: true, cursor: 1, clientNonce: receipt.clientNonce, disposition: 'prompt' });
  const events = await f.until(ended);
  f.close();
  assert.equal(f.status, 200);
  assert.equal(f.contentType, 'application/x-ndjson');
  assert.deepEqual(Object.keys(f.lines[0]).sort(), ['now', 'type']);
  assert.equal(f.lines[0].type, 'heartbeat', 'a bare heartbeat first');
  for (const l of f.lines.filter((x) => x.event)) {
    assert.equal(l.seq, l.event.seq);
    assert.deepEqual(l.ref, { agentTypeId: 'pi', sessionId: id });
  }
  assertConsecutive(events);
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'agent-start');
  assert.equal(types.at(-1), 'agent-end');
  const turnId = events[0].turnId;
  assert.equal(events.at(-1).turnId, turnId);
  assert.equal(events.at(-1).status, 'ok');
  const user = events[1];
  assert.equal(user.type, 'message-start');
  assert.equal(user.role, 'user');
  assert.equal(user.clientNonce, receipt.clientNonce);
  assert.equal(user.text, 'shown text', 'the display text');
  for (const t of ['message-delta', 'message-part-end', 'tool-call', 'tool-result', 'message-end']) assert.ok(types.includes(t), t);
  const kinds = new Set(events.filter((e) => e.type === 'message-delta').map((e) => e.kind));
  assert.deepEqual([...kinds].sort(), ['reasoning', 'text']);
  const call = events.find((e) => e.type === 'tool-call');
  assert.equal(call.toolName, 'ls');
  const result = events.find((e) => e.type === 'tool-result');
  assert.equal(result.toolCallId, call.toolCallId);
  assert.ok(Array.isArray(result.output.content));

  const doc = await waitState(id, idle);
  assert.equal(doc.seq, events.at(-1).seq);
  const msgs = doc.state.messages;
  assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'assistant']);
  assert.equal(msgs[0].clientNonce, receipt.clientNonce);
  assert.equal(msgs[0].parts.find((p) => p.type === 'text').text, 'shown text');
  assert.ok(msgs.every((m) => m.status === 'done' && m.turnId === turnId));
  const tool = msgs[1].parts.find((p) => p.type === 'tool-call');
  assert.equal(tool.state, 'output-available', 'the result folded into the call');
  assert.equal(msgs[2].parts[0].text, events.filter((e) => e.type === 'message-part-end').at(-1).text);
  // the finals are the messages of /state
  const finals = events.filter((e) => e.type === 'message-end').map((e) => e.final.id);
  assert.deepEqual(finals, msgs.map((m) => m.id));
});

test('a prompt while a turn runs: 409 AGENT_COMMAND_INVALID_STATE with details.status', async () => {
  const id = sid('busy');
  const f = follow(id, 0);
  assert.equal((await prompt(id, 'long words:40')).status, 202);
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const res = await prompt(id, 'again');
  assert.equal(res.status, 409);
  const body = await res.json();
  assert.equal(body.error.code, 'AGENT_COMMAND_INVALID_STATE');
  assert.equal(body.error.details.status, 'streaming');
  assert.equal((await state(id)).state.status, 'streaming');
  await f.until(ended);
  f.close();
  // a prompt sent on agent-end is admitted (the turn winds down first)
  assert.equal((await prompt(id, 'next words:1')).status, 202);
  await waitState(id, idle);
});

test('cursor replay after a reconnect (cutEventsAfter), and the heartbeat', async () => {
  const id = sid('replay');
  await s.control({ cutEventsAfter: 4 });
  const first = follow(id, 0);
  await prompt(id, 'hello words:6');
  await first.done;
  assert.equal(first.events().length, 4, 'the connection was cut after 4 event lines');
  assert.ok(first.error || first.ended);
  const last = first.events().at(-1).seq;
  const second = follow(id, last);
  const rest = await second.until(ended);
  second.close();
  assert.equal(rest[0].seq, last + 1, 'replay starts after the cursor');
  assertConsecutive([...first.events(), ...rest]);
  // a third connection from 0 replays the whole turn, then heartbeats (every 200 ms here)
  const third = follow(id, 0);
  await third.until(ended);
  await sleep(450);
  third.close();
  assertConsecutive(third.events());
  assert.ok(third.lines.filter((l) => l.type === 'heartbeat').length >= 2, 'heartbeats repeat');
  // no cursor: live only
  const live = follow(id);
  await sleep(100);
  live.close();
  assert.equal(live.events().length, 0);
});

test('CURSOR_AHEAD and REPLAY_GAP (replayWindow), and skipSeq', async () => {
  const id = sid('range');
  const f = follow(id, 0);
  await prompt(id, 'hello words:4');
  const events = await f.until(ended);
  f.close();
  const latest = events.at(-1).seq;
  await waitState(id, idle);

  const ahead = await fetch(at(id, `/events?cursor=${latest + 5}`));
  assert.equal(ahead.status, 409);
  const aheadBody = await ahead.json();
  assert.equal(aheadBody.error.code, 'AGENT_SESSION_CURSOR_AHEAD');
  assert.deepEqual(aheadBody.error.details, { latestSeq: latest, minReplaySeq: 1 });

  await s.control({ replayWindow: 5 });
  try {
    const gap = await fetch(at(id, '/events?cursor=0'));
    assert.equal(gap.status, 409);
    const gapBody = await gap.json();
    assert.equal(gapBody.error.code, 'AGENT_SESSION_REPLAY_GAP');
    assert.deepEqual(gapBody.error.details, { latestSeq: latest, minReplaySeq: latest - 4 });
    // the oldest cursor the window still serves
    const ok = follow(id, latest - 5);
    await ok.until((ev) => ev.length >= 5);
    ok.close();
    assert.deepEqual(ok.events().map((e) => e.seq), [latest - 4, latest - 3, latest - 2, latest - 1, latest]);
  } finally {
    await s.control({ replayWindow: 1000 });
  }

  // skipSeq: the next event comes one seq too high (a client sees a gap and re-reads /state)
  await s.control({ skipSeq: 1 });
  const g = follow(id, latest);
  await prompt(id, 'again words:1');
  const next = await g.until(ended);
  g.close();
  assert.equal(next[0].seq, latest + 2);
  assertConsecutive(next, latest + 2);
  const doc = await waitState(id, idle);
  assert.equal(doc.seq, next.at(-1).seq);
});

test('three follow-ups during an answer (two with the same text) each run once, in order', async () => {
  const id = sid('three');
  const f = follow(id, 0);
  await prompt(id, 'long answer words:80');
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const receipts = [];
  for (const [text, seq] of [['same text words:2', 1], ['other words:2', 2], ['same text words:2', 3]]) {
    const r = await followUp(id, text, seq);
    assert.equal(r.status, 202);
    receipts.push(await r.json());
  }
  assert.deepEqual(receipts.map((r) => [r.accepted, r.queued, r.clientSeq, r.disposition]), [
    [true, true, 1, 'followup'],
    [true, true, 2, 'followup'],
    [true, true, 3, 'followup'],
  ]);
  const queued = (await state(id)).state.queue.followUps;
  assert.deepEqual(queued.map((q) => [q.kind, q.displayText, q.clientSeq]), [
    ['followup', 'same text words:2', 1],
    ['followup', 'other words:2', 2],
    ['followup', 'same text words:2', 3],
  ]);
  assert.deepEqual(queued.map((q) => q.clientNonce), receipts.map((r) => r.clientNonce));
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.filter((m) => m.role === 'user').length === 4);
  f.close();
  const users = userStarts(f.events()).slice(1);
  assert.deepEqual(users.map((u) => [u.clientSeq, u.clientNonce, u.text]), receipts.map((r, i) => [r.clientSeq, r.clientNonce, ['same text words:2', 'other words:2', 'same text words:2'][i]]));
  // each answered once: user, assistant, user, assistant, …
  const roles = doc.state.messages.map((m) => m.role);
  assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(doc.state.messages.filter((m) => m.role === 'user').map((m) => m.clientSeq), [undefined, 1, 2, 3]);
  // queue-updated carried the whole queue each time, ending empty
  const updates = f.events().filter((e) => e.type === 'queue-updated');
  assert.deepEqual(updates.map((u) => u.queue.followUps.length), [1, 2, 3, 2, 1, 0]);
  assertConsecutive(f.events());
});

test('stop drops the whole queue first, then aborts', async () => {
  const id = sid('stop');
  const f = follow(id, 0);
  await prompt(id, 'long answer words:80');
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const a = await (await followUp(id, 'first words:1', 1)).json();
  const b = await (await followUp(id, 'second words:1', 2)).json();
  const res = await post(id, 'stop', {});
  assert.equal(res.status, 202);
  const receipt = await res.json();
  assert.equal(receipt.accepted, true);
  assert.equal(receipt.stopped, true);
  assert.deepEqual(receipt.clearedQueue.map((q) => q.clientNonce), [a.clientNonce, b.clientNonce]);
  const events = await f.until(ended);
  assert.equal(events.find((e) => e.type === 'agent-end').status, 'aborted');
  assert.ok(receipt.cursor >= events.find((e) => e.type === 'agent-end').seq, 'answered once the turn wound down');
  await sleep(300);
  f.close();
  const doc = await state(id);
  assert.equal(doc.state.status, 'idle');
  assert.deepEqual(doc.state.queue.followUps, []);
  assert.deepEqual(doc.state.messages.map((m) => [m.role, m.status]), [['user', 'done'], ['assistant', 'aborted']]);
  assert.equal(userStarts(f.events()).length, 1, 'no follow-up ran');
  const cleared = f.events().filter((e) => e.type === 'queue-updated').at(-1);
  assert.deepEqual(cleared.queue.followUps, []);
});

test('queue/clear of one item; disagreeing selectors are a conflict', async () => {
  const id = sid('clear');
  const f = follow(id, 0);
  await prompt(id, 'long answer words:80');
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const a = await (await followUp(id, 'drop me words:1', 1)).json();
  const b = await (await followUp(id, 'keep me words:1', 2)).json();
  const res = await post(id, 'queue/clear', { clientNonce: a.clientNonce, clientSeq: 1 });
  assert.equal(res.status, 202);
  const receipt = await res.json();
  assert.equal(receipt.cleared, 1);
  assert.deepEqual((await state(id)).state.queue.followUps.map((q) => q.clientNonce), [b.clientNonce]);
  // the item is gone: both selectors naming it now disagree
  const again = await post(id, 'queue/clear', { clientNonce: a.clientNonce, clientSeq: 1 });
  assert.equal(again.status, 409);
  assert.equal((await again.json()).error.code, 'AGENT_REQUEST_CONFLICT');
  const mixed = await post(id, 'queue/clear', { clientNonce: b.clientNonce, clientSeq: 1 });
  assert.equal(mixed.status, 409);
  // one selector naming nothing: cleared 0
  assert.equal((await (await post(id, 'queue/clear', { clientNonce: 'nobody' })).json()).cleared, 0);
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.filter((m) => m.role === 'user').length === 2);
  f.close();
  assert.deepEqual(userStarts(f.events()).map((u) => u.clientNonce).slice(1), [b.clientNonce]);
  assert.equal(doc.state.messages.filter((m) => m.role === 'user')[1].clientNonce, b.clientNonce);
});

test('interrupt aborts the turn and runs the first queued follow-up as the next turn', async () => {
  const id = sid('interrupt');
  const f = follow(id, 0);
  await prompt(id, 'long answer words:80');
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const a = await (await followUp(id, 'next up words:1', 1)).json();
  const res = await post(id, 'interrupt', { requestId: 'int-1' });
  assert.equal(res.status, 202);
  assert.equal((await res.json()).accepted, true);
  const events = await f.until(endedN(2));
  f.close();
  const ends = events.filter((e) => e.type === 'agent-end');
  assert.deepEqual(ends.map((e) => e.status), ['aborted', 'ok']);
  const starts = events.filter((e) => e.type === 'agent-start');
  assert.notEqual(starts[0].turnId, starts[1].turnId);
  const users = userStarts(events);
  assert.equal(users[1].clientNonce, a.clientNonce);
  assert.equal(users[1].clientSeq, 1);
});

test('interrupt sent again under its requestId interrupts once (the real server keeps a ledger too)', async () => {
  // Run Now's retry after a lost answer: the same command again must not abort the follow-up
  // the first one started (which would start the next one too: a run the user never asked).
  const id = sid('interrupt-again');
  const f = follow(id, 0);
  await prompt(id, 'long answer words:80');
  await f.until((ev) => ev.some((e) => e.type === 'message-delta'));
  const a = await (await followUp(id, 'next up words:20', 1)).json();
  const b = await (await followUp(id, 'then words:1', 2)).json();
  const body = { requestId: `interrupt:${a.clientNonce}:1` };
  const first = await post(id, 'interrupt', body);
  assert.equal(first.status, 202);
  const receipt = await first.json();
  const again = await post(id, 'interrupt', body);
  assert.equal(again.status, 202);
  assert.deepEqual(await again.json(), receipt);
  await f.until(endedN(2));
  await waitState(id, idle);
  f.close();
  const all = f.events();
  assert.deepEqual(all.filter((e) => e.type === 'agent-end').map((e) => e.status), ['aborted', 'ok']);
  const users = userStarts(all).map((u) => u.clientNonce);
  assert.deepEqual(users.slice(1), [a.clientNonce, b.clientNonce], 'each once, in order');
});

test('interrupt with no run on starts nothing', async () => {
  const id = sid('interrupt-idle');
  const f = follow(id, 0);
  await prompt(id, 'short words:1');
  await f.until(ended);
  const r = await followUp(id, 'stranded words:1', 1);
  assert.equal(r.status, 202);
  const res = await post(id, 'interrupt', {});
  assert.equal(res.status, 202);
  await sleep(300);
  f.close();
  assert.equal(f.events().filter((e) => e.type === 'agent-start').length, 1, 'no run started');
  const doc = await state(id);
  assert.equal(doc.state.status, 'idle');
  assert.deepEqual(doc.state.queue.followUps.map((q) => q.displayText), ['stranded words:1']);
});

test('requestId idempotency: a duplicate receipt, a conflicting payload', async () => {
  const id = sid('idem');
  const body = { requestId: 'req-1', clientNonce: 'n-1', content: 'long answer words:40' };
  const first = await (await post(id, 'prompt', body)).json();
  const again = await post(id, 'prompt', body); // while its own turn runs: the receipt, not a 409
  assert.equal(again.status, 202);
  assert.deepEqual(await again.json(), { ...first, duplicate: true });
  const other = await post(id, 'prompt', { ...body, content: 'something else' });
  assert.equal(other.status, 409);
  assert.equal((await other.json()).error.code, 'AGENT_REQUEST_CONFLICT');

  const fu = { requestId: 'fu-1', clientNonce: 'fn-1', content: 'later words:1', clientSeq: 1 };
  const r1 = await (await post(id, 'followup', fu)).json();
  const r2 = await post(id, 'followup', fu);
  assert.equal(r2.status, 202);
  assert.deepEqual(await r2.json(), { ...r1, duplicate: true });
  const r3 = await post(id, 'followup', { ...fu, clientSeq: 2 });
  assert.equal(r3.status, 409);
  assert.equal((await r3.json()).error.code, 'AGENT_REQUEST_CONFLICT');
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.filter((m) => m.role === 'user').length === 2);
  assert.equal(doc.state.messages.filter((m) => m.role === 'user').length, 2, 'the prompt and the follow-up ran once each');
});

test('strict bodies and queries: 400 AGENT_COMMAND_INVALID_STATE with details.field', async () => {
  const id = sid('strict');
  const cases = [
    [post(id, 'prompt', { requestId: 'x', clientNonce: 'n', content: 'hi', foo: 1 }), 'body.foo'],
    [post(id, 'prompt', { requestId: 'x', clientNonce: 'n' }), 'body.content'],
    [post(id, 'prompt', { requestId: 'bad id!', clientNonce: 'n', content: 'hi' }), 'body.requestId'],
    [post(id, 'followup', { requestId: 'x', clientNonce: 'n', content: 'hi' }), 'body.clientSeq'],
    [post(id, 'followup', { requestId: 'x', clientNonce: 'n', content: 'hi', clientSeq: 1, attachments: [] }), 'body.attachments'],
    [post(id, 'stop', { why: 'no' }), 'body.why'],
    [post(id, 'queue/clear', { clientSeq: -1 }), 'body.clientSeq'],
    [fetch(at(id, '/prompt'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' }), 'body'],
    [fetch(at(id, '/events?cursor=abc')), 'query.cursor'],
    [fetch(at(id, '/state?x=1')), 'query.x'],
  ];
  for (const [pending, field] of cases) {
    const res = await pending;
    assert.equal(res.status, 400, field);
    const body = await res.json();
    assert.equal(body.error.code, 'AGENT_COMMAND_INVALID_STATE', field);
    assert.equal(body.error.details.field, field);
  }
  // nothing was created
  assert.equal((await state(id)).seq, 0);
  // commands on a session that does not exist: 404
  const stop = await post(sid('nobody'), 'stop', {});
  assert.equal(stop.status, 404);
  assert.equal((await stop.json()).error.code, 'AGENT_SESSION_NOT_FOUND');
});

test('a follow-up accepted while idle waits, then runs after the next prompt', async () => {
  const id = sid('stranded');
  await prompt(id, 'hello words:1');
  await waitState(id, idle);
  const f = follow(id, (await state(id)).seq);
  const r = await followUp(id, 'stranded words:1', 1);
  assert.equal(r.status, 202);
  const fr = await r.json();
  await sleep(300);
  const waiting = await state(id);
  assert.equal(waiting.state.status, 'idle');
  assert.deepEqual(waiting.state.queue.followUps.map((q) => q.clientNonce), [fr.clientNonce]);
  assert.ok(!f.events().some((e) => e.type === 'agent-start'), 'nothing runs it');
  const p = await (await prompt(id, 'the next prompt words:1')).json();
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.length === 6);
  f.close();
  const users = doc.state.messages.filter((m) => m.role === 'user');
  assert.deepEqual(users.map((u) => u.clientNonce).slice(1), [p.clientNonce, fr.clientNonce]);
  assert.deepEqual(doc.state.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
});

test('the session list, rename and delete', async () => {
  await s.reset();
  const a = sid('list-a');
  const b = sid('list-b');
  await prompt(a, 'first session words:1');
  await waitState(a, idle);
  await prompt(b, 'second session words:1');
  await waitState(b, idle);
  // an AI SDK session is not listed here
  await s.control({ runtime: 'ai-sdk' });
  await s.chat({ sessionId: sid('aisdk'), message: 'hi words:1' }).then((r) => r.text());
  await s.control({ runtime: 'pi' });

  const page = await fetch(base()).then((r) => r.json());
  assert.deepEqual(page.sessions.map((x) => x.ref.sessionId), [b, a], 'most recently updated first');
  assert.deepEqual(page.sessions.map((x) => x.title), ['second session words:1', 'first session words:1']);
  const item = page.sessions[0];
  assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'ref', 'status', 'title', 'updatedAt']);
  assert.equal(item.status, 'idle');
  assert.equal(typeof item.createdAt, 'number');

  const p1 = await fetch(`${base()}?limit=1`).then((r) => r.json());
  assert.equal(p1.sessions.length, 1);
  assert.ok(p1.nextCursor);
  const p2 = await fetch(`${base()}?limit=1&cursor=${encodeURIComponent(p1.nextCursor)}`).then((r) => r.json());
  assert.deepEqual(p2.sessions.map((x) => x.ref.sessionId), [a]);
  assert.equal(p2.nextCursor, undefined);
  const badCursor = await fetch(`${base()}?cursor=nonsense`);
  assert.equal(badCursor.status, 409);
  assert.equal((await badCursor.json()).error.code, 'AGENT_SESSION_CURSOR_INVALID');
  assert.equal((await fetch(`${s.base}/api/v1/agents/other/sessions`)).status, 404);

  const renamed = await post(a, 'rename', { requestId: 'ren-1', title: 'Renamed' });
  assert.equal(renamed.status, 200);
  const summary = await renamed.json();
  assert.equal(summary.title, 'Renamed');
  assert.deepEqual(summary.ref, { agentTypeId: 'pi', sessionId: a });
  assert.equal((await post(a, 'rename', { requestId: 'ren-1', title: 'Renamed' })).status, 200, 'a replay');
  assert.equal((await post(a, 'rename', { requestId: 'ren-1', title: 'Other' })).status, 409);
  assert.equal((await post(a, 'rename', { requestId: 'ren-2' })).status, 400);
  assert.equal((await state(a)).summary.title, 'Renamed');

  const del = await fetch(`${at(b)}?requestId=del-1`, { method: 'DELETE' });
  assert.equal(del.status, 204);
  assert.equal((await fetch(`${at(b)}?requestId=del-1`, { method: 'DELETE' })).status, 204, 'a replay');
  const gone = await fetch(`${at(b)}?requestId=del-2`, { method: 'DELETE' });
  assert.equal(gone.status, 404);
  assert.equal((await gone.json()).error.code, 'AGENT_SESSION_NOT_FOUND');
  const after = await fetch(base()).then((r) => r.json());
  assert.deepEqual(after.sessions.map((x) => [x.ref.sessionId, x.title]), [[a, 'Renamed']]);
});

test('the control route reports the pi-native settings', async () => {
  const st = await fetch(`${s.base}/__control`).then((r) => r.json());
  assert.equal(st.protocol, 'pi-native');
  assert.equal(st.heartbeatMs, 200);
  assert.equal(st.replayWindow, 1000);
  assert.equal(st.cutEventsAfter, null);
  assert.equal(st.skipSeq, 0);
  const bad = await postJson(`${s.base}/__control`, { replayWindow: -1 });
  assert.equal(bad.status, 400);
});

test('a turn started on the SSE protocol shows on the pi-native stream too', async () => {
  const id = sid('both');
  await s.chat({ sessionId: id, message: 'hello words:2' }).then((r) => r.text());
  const f = follow(id, 0);
  const events = await f.until(ended);
  f.close();
  assertConsecutive(events);
  assert.deepEqual([events[0].type, events.at(-1).type, events.at(-1).status], ['agent-start', 'agent-end', 'ok']);
  const doc = await state(id);
  assert.deepEqual(doc.state.messages.map((m) => m.role), ['user', 'assistant']);
});

// Cross-check with the store's own reducer (the built package's `replayPiNativeEvents`, SPEC
// §14): the event stream of a turn with thinking, a tool and a follow-up, replayed, gives the
// messages this server's /state gives. Skipped when the package is not built.
const PKG = new URL('../../../pkg/agent_chat_store.js', import.meta.url);
const built = existsSync(PKG);

test('replayPiNativeEvents(the events of a turn) = replayPiNativeEvents([], {state: /state})', { skip: !built && 'pkg/ is not built' }, async () => {
  const { replayPiNativeEvents } = await import(PKG.href);
  const id = sid('cross');
  const f = follow(id, 0);
  assert.equal((await prompt(id, 'think and list files words:30')).status, 202);
  await f.until((events) => events.some((e) => e.type === 'message-delta' && e.kind === 'text'));
  assert.equal((await followUp(id, 'and then echo hi', 1)).status, 202);
  await f.until(endedN(2)).catch(() => f.until(ended));
  const doc = await waitState(id, idle);
  f.close();
  const live = replayPiNativeEvents(f.lines);
  const stored = replayPiNativeEvents([], { state: doc });
  assert.deepEqual(live.diagnostics, []);
  assert.equal(live.seq, doc.seq);
  assert.equal(live.status, 'ready');
  assert.deepEqual(live.queued, []);
  assert.ok(live.messages.length >= 4, `${live.messages.length} messages`);
  assert.deepEqual(live.messages, stored.messages);
});

// The store itself over this protocol: the built package's `ChatStore` with `protocol:
// 'pi-native'` and Node's real `fetch` (streamed bodies) against this server. A prompt, two
// follow-ups sent while it answers, then a stop of a later turn: what the store shows is what
// /state says, and every follow-up ran once, in order.
test('ChatStore({protocol: "pi-native"}) against this server: prompt, follow-ups, stop', { skip: !built && 'pkg/ is not built' }, async () => {
  const { ChatStore, replayPiNativeEvents } = await import(PKG.href);
  const id = sid('store');
  const store = new ChatStore({ protocol: 'pi-native', agentType: 'pi', baseUrl: s.base, sessionId: id, persistSeq: false });
  store.start(); // polled below, never subscribed: a store starts on its first subscribe or action
  const until = async (pred, what, ms = 15_000) => {
    const end = Date.now() + ms;
    while (!pred(store.getSnapshot())) {
      if (Date.now() > end) throw new Error(`timed out: ${what}; status ${store.getSnapshot().status}`);
      await sleep(10);
    }
  };
  try {
    await until((snap) => snap.capabilities.nativeFollowUp && snap.hydrated !== false, 'opened');
    assert.equal(store.send('answer me words:60').kind, 'sent');
    await until((snap) => snap.status === 'streaming', 'the run started');
    assert.equal(store.send('first follow-up').kind, 'queued');
    assert.equal(store.send('second follow-up').kind, 'queued');
    await until((snap) => snap.status === 'ready' && snap.queued.length === 0, 'all answered', 30_000);
    const shown = store.getSnapshot().messages;
    const users = shown.filter((m) => m.role === 'user').map((m) => m.parts.find((p) => p.type === 'text')?.text);
    assert.deepEqual(users, ['answer me words:60', 'first follow-up', 'second follow-up']);
    const doc = await waitState(id, idle);
    const stored = replayPiNativeEvents([], { state: doc }).messages;
    assert.deepEqual(shown.map((m) => [m.id, m.role]), stored.map((m) => [m.id, m.role]));
    // A stop: the run ends aborted, the store is usable again.
    assert.equal(store.send('long words:400').kind, 'sent');
    await until((snap) => snap.status === 'streaming', 'the second run');
    store.stop();
    assert.equal(store.getSnapshot().status, 'ready');
    await waitState(id, (d) => d.state.status === 'idle');
    assert.equal(store.getSnapshot().error, null);
  } finally {
    store.dispose();
  }
});

test('ChatStore Run Now against this server: the interrupt runs the follow-up now, once', { skip: !built && 'pkg/ is not built' }, async () => {
  const { ChatStore } = await import(PKG.href);
  const id = sid('store-run-now');
  const store = new ChatStore({ protocol: 'pi-native', agentType: 'pi', baseUrl: s.base, sessionId: id, persistSeq: false });
  store.start();
  const until = async (pred, what, ms = 15_000) => {
    const end = Date.now() + ms;
    while (!pred(store.getSnapshot())) {
      if (Date.now() > end) throw new Error(`timed out: ${what}; status ${store.getSnapshot().status}`);
      await sleep(10);
    }
  };
  const f = follow(id, 0);
  try {
    await until((snap) => snap.capabilities.nativeFollowUp && snap.hydrated !== false, 'opened');
    assert.equal(store.send('long answer words:400').kind, 'sent');
    await until((snap) => snap.status === 'streaming', 'the run started');
    assert.equal(store.send('now please words:2').kind, 'queued');
    assert.equal(store.send('after that words:2').kind, 'queued');
    await until((snap) => snap.queued.length === 2 && snap.queued.every((q) => q.state === 'accepted'), 'both accepted');
    await until((snap) => snap.queued[0]?.runNow === 'interrupt', 'the first can run now');
    assert.equal(store.getSnapshot().queued[1].runNow, 'after-current');
    assert.equal(store.runQueuedNow(store.getSnapshot().queued[0].id), 'interrupting');
    await until((snap) => snap.status === 'ready' && snap.queued.length === 0, 'all answered', 30_000);
    const users = store.getSnapshot().messages.filter((m) => m.role === 'user').map((m) => m.parts.find((p) => p.type === 'text')?.text);
    assert.deepEqual(users, ['long answer words:400', 'now please words:2', 'after that words:2']);
    await waitState(id, idle);
    f.close();
    // The long answer was cut, not run to its end: one abort, then the rest ran once each.
    assert.deepEqual(f.events().filter((e) => e.type === 'agent-end').map((e) => e.status), ['aborted', 'ok']);
    assert.equal(userStarts(f.events()).length, 3);
  } finally {
    f.close();
    store.dispose();
  }
});
