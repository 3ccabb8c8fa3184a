// replayPiNativeEvents (SPEC §14) through the installed package: the pi-native frames a host
// with its own transport holds, reduced as the store reduces them.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { installedPackage } from './installed.mjs';

let pkg;

before(async () => {
  pkg = await installedPackage('pi-native');
});

const envelope = (event) => ({ ref: { agentTypeId: 'pi', sessionId: 's1' }, seq: event.seq, event });
const state = {
  ref: { agentTypeId: 'pi', sessionId: 's1' },
  seq: 2,
  state: {
    protocolVersion: 1, sessionId: 's1', seq: 2, status: 'idle', followUpMode: 'one-at-a-time',
    messages: [
      { id: 'u0', role: 'user', status: 'done', parts: [{ type: 'text', text: 'earlier' }] },
      { id: 'a0', role: 'assistant', status: 'done', parts: [{ type: 'text', text: 'answer' }] },
    ],
    queue: { followUps: [] },
  },
};

test('a /state document, then a turn as envelopes, lines and bare events', () => {
  const frames = [
    envelope({ type: 'agent-start', seq: 3, turnId: 't1' }),
    JSON.stringify(envelope({ type: 'message-start', seq: 4, messageId: 'u1', role: 'user', clientNonce: 'n1', text: 'hi' })),
    { type: 'heartbeat', now: '2026-12-04T00:00:00Z' },
    { type: 'message-start', seq: 5, messageId: 'a1', role: 'assistant' },
    { type: 'message-delta', seq: 5, messageId: 'a1', partId: '0', kind: 'text', delta: 'stale' },
    { type: 'message-delta', seq: 6, messageId: 'a1', partId: '0', kind: 'text', delta: 'Hel' },
    { type: 'message-delta', seq: 7, messageId: 'a1', partId: '0', kind: 'text', delta: 'lo' },
    { type: 'queue-updated', seq: 8, queue: { followUps: [{ id: 'q0', kind: 'followup', displayText: 'more', clientNonce: 'f1', clientSeq: 1 }] } },
  ];
  const r = pkg.replayPiNativeEvents(frames, { state });
  assert.deepEqual(r.messages.map((m) => m.id), ['u0', 'a0', 'u1', 'a1']);
  assert.equal(r.messages[3].parts[0].text, 'Hello', 'the stale delta was not applied');
  assert.equal(r.status, 'streaming');
  assert.equal(r.seq, 8);
  assert.deepEqual(r.queued, [{ id: 'q0', text: 'more', clientNonce: 'f1', clientSeq: 1 }]);
  assert.deepEqual(r.diagnostics, []);
  const done = pkg.replayPiNativeEvents([...frames, { type: 'agent-end', seq: 9, turnId: 't1', status: 'ok' }], { state });
  assert.equal(done.status, 'ready');
  assert.equal(done.messages[3].parts[0].state, 'done');
});

test('bad frames are diagnostics, a bad state is a typed error, nothing throws a trap', () => {
  const r = pkg.replayPiNativeEvents(['{nope', { type: 'agent-start', seq: 2, turnId: 't' }, 42]);
  assert.equal(r.seq, 0);
  assert.equal(r.diagnostics.length, 3, r.diagnostics.join('\n'));
  assert.match(r.diagnostics[1], /seq gap: expected 1, got 2/);
  assert.throws(() => pkg.replayPiNativeEvents([], { state: { state: { protocolVersion: 2, seq: 1 } } }), (e) => e.code === 'Validation' && /protocolVersion/.test(e.message));
  assert.throws(() => pkg.replayPiNativeEvents('frames'), (e) => e.code === 'Validation');
});
