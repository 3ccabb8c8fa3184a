// The switches that make the pi-native surface behave as the real server (boring-ui 31361f15)
// does where it differs from its written protocol (README "The pi-native protocol", "As the
// real server"): nativeSelectorsDropped, nativeSelectiveClearNoop, nativeNonceRequeue,
// nativeStateLagsStreaming, nativeStateIds, and upstreamQuirks (all of them). The expected
// values are what the live server answered to the same requests.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { nativeRoutes, postJson, sid, sleep, startServer } from './helpers.mjs';

let s;
before(async () => {
  // 100 tokens/s: a `words:80` answer streams for about a second, long enough to queue behind.
  s = await startServer(['--tps', '100', '--words', '3', '--protocol', 'pi-native']);
});
after(async () => {
  await s?.stop();
});
// Each test sets the switches it needs; none leaks into the next.
afterEach(async () => {
  await s.control({ upstreamQuirks: false });
});

const { at, state, post, follow } = nativeRoutes(() => s);
const QUIRKS = ['nativeSelectorsDropped', 'nativeSelectiveClearNoop', 'nativeNonceRequeue', 'nativeStateLagsStreaming', 'nativeStateIds'];

/** A follow-up as the upstream client sends it: requestId `<clientNonce>:<clientSeq>`. */
const followUp = (id, clientNonce, content, clientSeq, extra = {}) =>
  post(id, 'followup', { requestId: `${clientNonce}:${clientSeq}`, clientNonce, content, clientSeq, ...extra });
const prompt = (id, clientNonce, content, extra = {}) => post(id, 'prompt', { requestId: clientNonce, clientNonce, content, ...extra });

const ended = (events) => events.some((e) => e.type === 'agent-end');
const streaming = (events) => events.some((e) => e.type === 'message-delta');
const userStarts = (events) => events.filter((e) => e.type === 'message-start' && e.role === 'user');
const userEnds = (events) => events.filter((e) => e.type === 'message-end' && e.final.role === 'user');
/** `[displayText, clientNonce, clientSeq]` of each row (`undefined` where a row has none). */
const rows = (followUps) => followUps.map((q) => [q.displayText, q.clientNonce, q.clientSeq]);
const selectorsOf = (x) => [x.clientNonce, x.clientSeq];

async function waitState(id, pred, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const doc = await state(id);
    if (pred(doc)) return doc;
    if (Date.now() > until) throw new Error(`state never matched: ${JSON.stringify(doc.state).slice(0, 800)}`);
    await sleep(50);
  }
}
const idle = (doc) => doc.state.status === 'idle';
const queueOf = async (id) => (await state(id)).state.queue.followUps;

test('control: each switch, upstreamQuirks for all of them, off by default; reset', async () => {
  const read = () => fetch(`${s.base}/__control`).then((r) => r.json());
  const st = await read();
  for (const k of QUIRKS) assert.equal(st[k], false, k);
  assert.equal(st.upstreamQuirks, false);
  const on = await s.control({ upstreamQuirks: true });
  for (const k of QUIRKS) assert.equal(on[k], true, k);
  assert.equal(on.upstreamQuirks, true);
  // one taken back: no longer all of them
  const most = await s.control({ nativeStateIds: false });
  assert.equal(most.nativeStateIds, false);
  assert.equal(most.upstreamQuirks, false);
  // all, then one taken back, in one body
  const mixed = await s.control({ upstreamQuirks: true, nativeSelectiveClearNoop: false });
  assert.deepEqual(QUIRKS.filter((k) => mixed[k]), QUIRKS.filter((k) => k !== 'nativeSelectiveClearNoop'));
  for (const bad of [{ upstreamQuirks: 'yes' }, { nativeStateIds: 1 }]) {
    const res = await postJson(`${s.base}/__control`, bad);
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.equal((await res.json()).error.field, Object.keys(bad)[0]);
  }
  const reset = await s.reset();
  for (const k of QUIRKS) assert.equal(reset[k], false, `reset: ${k}`);
});

test('the flags: --upstream-quirks turns on all five, --native-state-ids only its own', async () => {
  for (const [args, expected] of [
    [['--upstream-quirks'], QUIRKS],
    [['--native-state-ids'], ['nativeStateIds']],
    [['--native-selectors-dropped', '--native-nonce-requeue'], ['nativeSelectorsDropped', 'nativeNonceRequeue']],
  ]) {
    const other = await startServer(args);
    try {
      const st = await fetch(`${other.base}/__control`).then((r) => r.json());
      assert.deepEqual(QUIRKS.filter((k) => st[k]), expected, args.join(' '));
      // a reset goes back to the flags, not to off
      const reset = await other.reset();
      assert.deepEqual(QUIRKS.filter((k) => reset[k]), expected, `reset: ${args.join(' ')}`);
    } finally {
      await other.stop();
    }
  }
});

test('nativeSelectorsDropped: first, same, same, third as the live server gave them', async () => {
  await s.control({ nativeSelectorsDropped: true });
  const id = sid('dropped');
  const f = follow(id, 0);
  assert.equal((await prompt(id, 'p1', 'long answer words:80')).status, 202);
  await f.until(streaming);
  let n = 0;
  for (const text of ['first words:2', 'same words:2', 'same words:2', 'third words:2']) {
    n += 1;
    assert.equal((await followUp(id, `f${n}`, text, n)).status, 202);
  }
  // While queued, each row's remembered entry sits at its index: all have their selectors.
  assert.deepEqual(rows(await queueOf(id)), [
    ['first words:2', 'f1', 1],
    ['same words:2', 'f2', 2],
    ['same words:2', 'f3', 3],
    ['third words:2', 'f4', 4],
  ]);
  await f.until((ev) => userStarts(ev).length === 5 && ended(ev), 20_000);
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.length === 10);
  f.close();
  const events = f.events();
  // One run: the follow-ups were taken inside it, each after a queue-updated without it.
  assert.equal(events.filter((e) => e.type === 'agent-start').length, 1);
  assert.equal(events.filter((e) => e.type === 'followup-consumed').length, 0, 'no followup-consumed');
  const users = userStarts(events);
  assert.deepEqual(users.map((u) => u.text), ['long answer words:80', 'first words:2', 'same words:2', 'same words:2', 'third words:2']);
  assert.deepEqual(users.map(selectorsOf), [['p1', undefined], [undefined, undefined], ['f2', 2], [undefined, undefined], [undefined, undefined]]);
  const consumed = users.slice(1).map((u) => events[events.indexOf(u) - 1]);
  assert.ok(consumed.every((e) => e.type === 'queue-updated'), 'a queue-updated right before each follow-up');
  assert.deepEqual(consumed.map((e) => rows(e.queue.followUps)), [
    [['same words:2', undefined, undefined], ['same words:2', 'f2', 2], ['third words:2', 'f4', 4]],
    [['same words:2', 'f2', 2], ['third words:2', 'f4', 4]],
    [['third words:2', 'f4', 4]],
    [],
  ]);
  // The user finals and /state have none (the prompt's too).
  assert.deepEqual(userEnds(events).map((e) => selectorsOf(e.final)), Array(5).fill([undefined, undefined]));
  const stored = doc.state.messages.filter((m) => m.role === 'user');
  assert.deepEqual(stored.map(selectorsOf), Array(5).fill([undefined, undefined]));
  assert.deepEqual(doc.state.messages.map((m) => m.role), Array(5).fill(['user', 'assistant']).flat());
});

test('nativeSelectorsDropped: a lone follow-up has none; of two identical texts the rest gets the first one\'s', async () => {
  await s.control({ nativeSelectorsDropped: true });
  const lone = sid('lone');
  const f = follow(lone, 0);
  await prompt(lone, 'p-lone', 'long answer words:60');
  await f.until(streaming);
  await followUp(lone, 'lone-1', 'only one words:1', 1);
  await f.until((ev) => userStarts(ev).length === 2 && ended(ev));
  f.close();
  assert.deepEqual(selectorsOf(userStarts(f.events())[1]), [undefined, undefined]);

  const twins = sid('twins');
  const g = follow(twins, 0);
  await prompt(twins, 'p-twins', 'long answer words:60');
  await g.until(streaming);
  await followUp(twins, 't1', 'twin words:1', 1);
  await followUp(twins, 't2', 'twin words:1', 2);
  await g.until((ev) => userStarts(ev).length === 3 && ended(ev));
  g.close();
  const updates = g.events().filter((e) => e.type === 'queue-updated').map((e) => rows(e.queue.followUps));
  // accepted, accepted, the first taken: the row left (t2's) is labelled with t1's selectors
  assert.deepEqual(updates, [[['twin words:1', 't1', 1]], [['twin words:1', 't1', 1], ['twin words:1', 't2', 2]], [['twin words:1', 't1', 1]], []]);
});

test('nativeSelectorsDropped: a displayContent is kept to the prompt\'s final, then /state shows pi\'s text', async () => {
  await s.control({ nativeSelectorsDropped: true });
  const id = sid('display');
  const f = follow(id, 0);
  await prompt(id, 'p-shown', 'raw prompt words:2', { displayContent: 'shown prompt' });
  await f.until(ended);
  f.close();
  const [start] = userStarts(f.events());
  assert.deepEqual([start.text, start.clientNonce], ['shown prompt', 'p-shown']);
  const [end] = userEnds(f.events());
  assert.deepEqual([end.final.parts.find((p) => p.type === 'text').text, end.final.clientNonce], ['shown prompt', 'p-shown']);
  const doc = await waitState(id, idle);
  const user = doc.state.messages[0];
  assert.deepEqual([user.parts.find((p) => p.type === 'text').text, user.clientNonce], ['raw prompt words:2', undefined]);
  // Without the switch this server keeps both: its own choice, the protocol's intent.
  await s.control({ nativeSelectorsDropped: false });
  const again = (await state(id)).state.messages[0];
  assert.deepEqual([again.parts.find((p) => p.type === 'text').text, again.clientNonce], ['shown prompt', 'p-shown']);
});

test('nativeSelectorsDropped: the follow-up an interrupt starts has none either', async () => {
  await s.control({ nativeSelectorsDropped: true });
  const id = sid('interrupt');
  const f = follow(id, 0);
  await prompt(id, 'p-int', 'long answer words:80');
  await f.until(streaming);
  await followUp(id, 'i1', 'interrupting words:2', 1);
  await followUp(id, 'i2', 'later words:2', 2);
  assert.equal((await post(id, 'interrupt', {})).status, 202);
  await f.until((ev) => userStarts(ev).length === 3 && ev.filter((e) => e.type === 'agent-end').length === 2, 20_000);
  f.close();
  const users = userStarts(f.events());
  assert.deepEqual(users.map((u) => u.text), ['long answer words:80', 'interrupting words:2', 'later words:2']);
  assert.deepEqual(users.slice(1).map(selectorsOf), [[undefined, undefined], [undefined, undefined]]);
});

test('stop: no error ABORTED before the aborted agent-end; upstreamQuirks: clearedQueue without selectors', async () => {
  for (const quirks of [false, true]) {
    await s.control({ upstreamQuirks: quirks });
    const id = sid(`stop-${quirks}`);
    const f = follow(id, 0);
    await prompt(id, `p-stop-${quirks}`, 'long answer words:80');
    await f.until(streaming);
    await followUp(id, `a-${quirks}`, 'dropped one words:1', 1);
    await followUp(id, `b-${quirks}`, 'dropped two words:1', 2);
    const res = await post(id, 'stop', {});
    assert.equal(res.status, 202);
    const receipt = await res.json();
    assert.equal(receipt.stopped, true);
    assert.deepEqual(receipt.clearedQueue.map((q) => q.displayText), ['dropped one words:1', 'dropped two words:1']);
    if (quirks) {
      for (const q of receipt.clearedQueue) assert.deepEqual(Object.keys(q).sort(), ['displayText', 'id', 'kind'], 'no selectors');
    } else {
      assert.deepEqual(receipt.clearedQueue.map(selectorsOf), [[`a-${quirks}`, 1], [`b-${quirks}`, 2]]);
    }
    const events = await f.until(ended);
    await sleep(200);
    f.close();
    assert.equal(f.events().filter((e) => e.type === 'error').length, 0, `no error event (quirks ${quirks})`);
    const end = f.events().at(-1);
    assert.deepEqual([end.type, end.status], ['agent-end', 'aborted']);
    const before = events[events.indexOf(events.find((e) => e.type === 'agent-end')) - 1];
    assert.deepEqual([before.type, before.final?.status], ['message-end', 'aborted'], 'the aborted final right before');
    assert.equal(userStarts(f.events()).length, 1, 'the dropped follow-ups never ran');
  }
});

test('nativeSelectiveClearNoop: a selector clears nothing (the item runs later), clear-all works', async () => {
  await s.control({ nativeSelectiveClearNoop: true });
  const id = sid('noop');
  const f = follow(id, 0);
  await prompt(id, 'p-noop', 'long answer words:80');
  await f.until(streaming);
  await followUp(id, 'n1', 'one words:1', 1);
  await followUp(id, 'n2', 'two words:1', 2);
  for (const body of [{ clientNonce: 'n1', clientSeq: 1 }, { clientNonce: 'n2' }, { clientSeq: 1 }, { requestId: 'clr-1', clientNonce: 'n1' }]) {
    const res = await post(id, 'queue/clear', body);
    assert.equal(res.status, 202, JSON.stringify(body));
    const receipt = await res.json();
    assert.deepEqual(Object.keys(receipt).sort(), ['accepted', 'cleared', 'cursor']);
    assert.equal(receipt.cleared, 0, JSON.stringify(body));
  }
  assert.deepEqual(rows(await queueOf(id)), [['one words:1', 'n1', 1], ['two words:1', 'n2', 2]], 'both still queued');
  // Two selectors that do not name one queued row: 409, as without the switch.
  const mixed = await post(id, 'queue/clear', { clientNonce: 'n1', clientSeq: 2 });
  assert.equal(mixed.status, 409);
  assert.deepEqual((await mixed.json()).error.message, 'queue selectors disagree');
  await f.until((ev) => userStarts(ev).length === 3 && ended(ev), 20_000);
  f.close();
  assert.deepEqual(userStarts(f.events()).slice(1).map((u) => u.clientNonce), ['n1', 'n2'], 'both ran');
  // Both selectors of an item no longer queued: 409.
  const gone = await post(id, 'queue/clear', { clientNonce: 'n1', clientSeq: 1 });
  assert.equal(gone.status, 409);
  assert.equal((await gone.json()).error.code, 'AGENT_REQUEST_CONFLICT');
  // Clear-all (`{}` or no body) still clears: two stranded follow-ups (accepted while idle).
  await waitState(id, idle);
  await followUp(id, 'n3', 'three words:1', 3);
  await followUp(id, 'n4', 'four words:1', 4);
  const all = await post(id, 'queue/clear', {});
  assert.equal((await all.json()).cleared, 2);
  assert.deepEqual(await queueOf(id), []);
  await followUp(id, 'n5', 'five words:1', 5);
  const bare = await fetch(at(id, '/queue/clear'), { method: 'POST' });
  assert.equal((await bare.json()).cleared, 1);
  assert.deepEqual(await queueOf(id), []);
});

test('upstreamQuirks: of identical texts a queued row may lack selectors, and its own clear is a 409', async () => {
  await s.control({ upstreamQuirks: true });
  const id = sid('noop-twins');
  const f = follow(id, 0);
  await prompt(id, 'p-nt', 'long answer words:60');
  await f.until(streaming);
  await followUp(id, 'q1', 'first words:150', 1);
  await followUp(id, 'q2', 'same words:1', 2);
  await followUp(id, 'q3', 'same words:1', 3);
  // `first` runs (a long answer): the queue-updated says [same (none), same (q2, 2)] ...
  const during = await f.until((ev) => userStarts(ev).length === 2 && ev.at(-1).type === 'message-delta');
  const taken = during[during.indexOf(userStarts(during)[1]) - 1];
  assert.deepEqual(rows(taken.queue.followUps), [['same words:1', undefined, undefined], ['same words:1', 'q2', 2]]);
  // ... and every reading re-syncs what is remembered, so /state then says [same (q2, 2), same]
  // (the live server gave both, in this order).
  for (let i = 0; i < 2; i++) assert.deepEqual(rows(await queueOf(id)), [['same words:1', 'q2', 2], ['same words:1', undefined, undefined]]);
  // q3 is queued, but no row says so: 409. q2's row passes the check, and nothing goes.
  const q3 = await post(id, 'queue/clear', { clientNonce: 'q3', clientSeq: 3 });
  assert.equal(q3.status, 409);
  const q2 = await post(id, 'queue/clear', { clientNonce: 'q2', clientSeq: 2 });
  assert.equal(q2.status, 202);
  assert.equal((await q2.json()).cleared, 0);
  await f.until((ev) => userStarts(ev).length === 4 && ended(ev), 20_000);
  f.close();
  assert.deepEqual(userStarts(f.events()).map(selectorsOf), [['p-nt', undefined], [undefined, undefined], ['q2', 2], [undefined, undefined]]);
});

test('nonces: seen ones are not queued again until a clear-all; the same requestId replays', async () => {
  const id = sid('nonces');
  const f = follow(id, 0);
  await prompt(id, 'p-nonce', 'long answer words:40');
  await f.until(streaming);
  const first = await (await followUp(id, 'x', 'again words:1', 1)).json();
  await f.until((ev) => userStarts(ev).length === 2 && ended(ev));
  await waitState(id, idle);
  f.close();
  // consumed: a new requestId with the same nonce gets a normal receipt, and nothing is queued
  const ignored = await post(id, 'followup', { requestId: 'x:1:b', clientNonce: 'x', content: 'again words:1', clientSeq: 1 });
  assert.equal(ignored.status, 202);
  const ignoredReceipt = await ignored.json();
  assert.equal(ignoredReceipt.duplicate, undefined);
  assert.equal(ignoredReceipt.queued, true);
  assert.deepEqual(await queueOf(id), []);
  // a clear-all (even of an empty queue) forgets every nonce seen
  assert.equal((await (await post(id, 'queue/clear', {})).json()).cleared, 0);
  const body = { requestId: 'x:1:c', clientNonce: 'x', content: 'again words:1', clientSeq: 1 };
  const requeued = await (await post(id, 'followup', body)).json();
  assert.equal(requeued.duplicate, undefined);
  assert.deepEqual(rows(await queueOf(id)), [['again words:1', 'x', 1]]);
  // the same requestId: the first receipt again, `duplicate: true`, nothing more queued
  assert.deepEqual(await (await post(id, 'followup', body)).json(), { ...requeued, duplicate: true });
  assert.equal((await queueOf(id)).length, 1);
  assert.equal((await (await post(id, 'queue/clear', {})).json()).cleared, 1);
  // after that clear-all the first requestId still replays its receipt, queueing nothing
  const replay = await post(id, 'followup', { requestId: 'x:1', clientNonce: 'x', content: 'again words:1', clientSeq: 1 });
  assert.deepEqual(await replay.json(), { ...first, duplicate: true });
  assert.deepEqual(await queueOf(id), []);
  // a stop is a clear-all too
  await followUp(id, 'y', 'why words:1', 2);
  await post(id, 'followup', { requestId: 'y:2:b', clientNonce: 'y', content: 'why words:1', clientSeq: 2 });
  assert.equal((await queueOf(id)).length, 1, 'y not twice');
  assert.equal((await (await post(id, 'stop', {})).json()).clearedQueue.length, 1);
  await post(id, 'followup', { requestId: 'y:2:c', clientNonce: 'y', content: 'why words:1', clientSeq: 2 });
  assert.deepEqual(rows(await queueOf(id)), [['why words:1', 'y', 2]]);
  await post(id, 'queue/clear', {});
});

test('nativeNonceRequeue: a seen nonce with a new requestId is queued again, queued or consumed', async () => {
  await s.control({ nativeNonceRequeue: true });
  const id = sid('requeue');
  await prompt(id, 'p-rq', 'hello words:1');
  await waitState(id, idle);
  // stranded (idle), twice under one nonce: two rows, both labelled with it
  await followUp(id, 'z', 'twice words:1', 1);
  const second = await (await post(id, 'followup', { requestId: 'z:1:b', clientNonce: 'z', content: 'twice words:1', clientSeq: 1 })).json();
  assert.equal(second.duplicate, undefined);
  assert.deepEqual(rows(await queueOf(id)), [['twice words:1', 'z', 1], ['twice words:1', 'z', 1]]);
  // the next prompt runs them both, then a re-post of the consumed nonce is queued once more
  await prompt(id, 'p-rq-2', 'next words:1');
  const doc = await waitState(id, (d) => idle(d) && d.state.messages.length === 8);
  assert.deepEqual(doc.state.messages.filter((m) => m.role === 'user').map((m) => m.parts[0].text), ['hello words:1', 'next words:1', 'twice words:1', 'twice words:1']);
  await post(id, 'followup', { requestId: 'z:1:c', clientNonce: 'z', content: 'twice words:1', clientSeq: 1 });
  assert.equal((await queueOf(id)).length, 1);
  await post(id, 'queue/clear', {});
});

test('nativeStateLagsStreaming: a busy /state covers the assistant start in seq, not in messages', async () => {
  for (const lags of [false, true]) {
    await s.control({ nativeStateLagsStreaming: lags });
    const id = sid(`lag-${lags}`);
    const f = follow(id, 0);
    await prompt(id, `p-lag-${lags}`, 'long answer words:80');
    const seen = await f.until((ev) => ev.filter((e) => e.type === 'message-delta').length >= 3);
    const doc = await state(id);
    const start = seen.find((e) => e.type === 'message-start' && e.role === 'assistant');
    assert.equal(doc.state.status, 'streaming');
    assert.ok(doc.seq >= seen.at(-1).seq, 'seq covers what was streamed');
    assert.ok(doc.seq > start.seq);
    if (lags) {
      assert.deepEqual(doc.state.messages.map((m) => m.role), ['user'], 'the answer streaming now is missing');
    } else {
      assert.deepEqual(doc.state.messages.map((m) => [m.role, m.status]), [['user', 'done'], ['assistant', 'streaming']]);
    }
    await f.until(ended);
    f.close();
    const done = await waitState(id, idle);
    assert.deepEqual(done.state.messages.map((m) => m.role), ['user', 'assistant'], 'there once it ended');
  }
});

test('nativeStateIds: /state has pi entry ids (positional while busy), not the streamed ones', async () => {
  await s.control({ nativeStateIds: true });
  const id = sid('ids');
  const f = follow(id, 0);
  await prompt(id, 'p-ids', 'think and list files words:40');
  await f.until((ev) => ev.filter((e) => e.type === 'message-delta').length >= 3);
  const busy = await state(id);
  const positional = new RegExp(`^pi:${id}:message:(\\d+):(user|assistant):\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`);
  for (const m of busy.state.messages) {
    const match = positional.exec(m.id);
    assert.ok(match, m.id);
    assert.equal(match[2], m.role);
    assert.equal(m.piEntryId, undefined);
    assert.equal(m.turnId, undefined);
  }
  assert.equal(positional.exec(busy.state.messages[0].id)[1], '0');
  await f.until(ended);
  f.close();
  const doc = await waitState(id, idle);
  const finals = f.events().filter((e) => e.type === 'message-end').map((e) => e.final);
  const msgs = doc.state.messages;
  assert.equal(msgs.length, finals.length);
  msgs.forEach((m, i) => {
    assert.match(m.id, /^[0-9a-f]{8}$/);
    assert.equal(m.piEntryId, m.id);
    assert.equal(m.turnId, undefined);
    assert.notEqual(m.id, finals[i].id, 'not the streamed id');
    assert.equal(m.role, finals[i].role);
    for (const p of m.parts.filter((x) => x.type !== 'tool-call')) assert.ok(p.id.startsWith(`${m.id}:`), p.id);
  });
  assert.equal(new Set(msgs.map((m) => m.id)).size, msgs.length, 'one id per message');
  assert.deepEqual((await state(id)).state.messages.map((m) => m.id), msgs.map((m) => m.id), 'the same on every read');
  // off: the streamed ids again
  await s.control({ nativeStateIds: false });
  assert.deepEqual((await state(id)).state.messages.map((m) => m.id), finals.map((m) => m.id));
});
