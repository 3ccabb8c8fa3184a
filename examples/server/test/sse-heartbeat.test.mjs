// The SSE routes' heartbeats: `: heartbeat` comments at the head and every `--heartbeat-ms` on
// the chat POST's answer and the stream route's, between whole events (the `ai` parser reads
// the body the same); the capabilities answer says the interval. The pi-native events route
// beats with frames, at open and on the same clock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readChunks, sid, startServer } from './helpers.mjs';

const BEAT_MS = 100;
let s;
before(async () => {
  // Slow enough that a turn lasts several beats.
  s = await startServer(['--tps', '20', '--heartbeat-ms', String(BEAT_MS)]);
});
after(() => s?.stop());

/** Reads a body to its end: its raw text and when each comment came (ms since the start). */
async function beats(res) {
  const start = Date.now();
  const decoder = new TextDecoder();
  let text = '';
  const at = [];
  for await (const bytes of res.body) {
    const part = decoder.decode(bytes, { stream: true });
    for (const m of part.matchAll(/^: heartbeat$/gm)) at.push(Date.now() - start);
    text += part;
  }
  return { text, at };
}

test('the capabilities say the beat interval', async () => {
  const caps = await (await fetch(`${s.api}/capabilities?sessionId=${sid('caps')}`)).json();
  assert.equal(caps.heartbeatMs, BEAT_MS);
});

test('a chat answer beats at its head and every interval, between whole events', async () => {
  const res = await s.chat({ sessionId: sid('beat'), message: 'beat words:12' });
  assert.equal(res.status, 200);
  const { text, at } = await beats(res);
  assert.ok(text.startsWith(': heartbeat\n\n'), JSON.stringify(text.slice(0, 40)));
  assert.ok(at.length >= 3, `beats at ${at}`);
  // Each comment is a line of its own after a blank line: never inside an event.
  const blocks = text.split('\n\n').filter(Boolean);
  for (const b of blocks) assert.ok(b === ': heartbeat' || b.startsWith('data: '), JSON.stringify(b));
  assert.ok(blocks.at(-1) === 'data: [DONE]' || blocks.at(-2) === 'data: [DONE]', 'ends with [DONE]');
});

test('the stream route beats too, and the ai parser reads past the beats', async () => {
  const id = sid('resume');
  const chat = await s.chat({ sessionId: id, message: 'resume words:10' });
  const resumed = await s.resume(id, -1);
  assert.equal(resumed.status, 200);
  const [a, b] = await Promise.all([beats(chat), beats(resumed)]);
  for (const { text, at } of [a, b]) {
    assert.ok(text.startsWith(': heartbeat\n\n'));
    assert.ok(at.length >= 2, `beats at ${at}`);
  }
  // The `ai` package's parser reads past them; a finished turn's replay beats once at its
  // head and ends.
  const replay = await s.resume(id, -1);
  const parsed = await readChunks(replay);
  assert.equal(parsed.error, undefined);
  assert.equal(parsed.chunks.at(-1).type, 'finish');
});

test('the pi-native events route beats at open and on the same clock', async () => {
  const id = sid('native');
  const ac = new AbortController();
  const res = await fetch(`${s.base}/api/v1/agents/pi/sessions/${id}/events`, { signal: ac.signal });
  assert.equal(res.status, 200);
  const decoder = new TextDecoder();
  const start = Date.now();
  const at = [];
  let text = '';
  for await (const bytes of res.body) {
    text += decoder.decode(bytes, { stream: true });
    const lines = text.split('\n');
    text = lines.pop();
    for (const l of lines) if (JSON.parse(l).type === 'heartbeat') at.push(Date.now() - start);
    if (at.length >= 3) break;
  }
  ac.abort();
  assert.ok(at[0] < BEAT_MS, `the first at open: ${at}`);
  assert.ok(at[2] - at[0] >= BEAT_MS * 1.5, `then every interval: ${at}`);
});
