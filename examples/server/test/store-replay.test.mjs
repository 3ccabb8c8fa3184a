// Cross-check with the store itself: the built package's `replayPiStream` (SPEC §9), fed the
// chunks of one of this server's turns, must give exactly the rows the store reads from the
// server's canonical history (one row per answer, pi tool outputs as a tool UI expects them:
// the store's rules, applied alike to the stream and to a history read).
// Skipped when the package is not built (`pkg/agent_chat_store.js` missing).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readChunks, sid, startServer } from './helpers.mjs';

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'pkg', 'agent_chat_store.js');
const built = existsSync(PKG);

let s;
before(async () => {
  if (built) s = await startServer(['--tps', '300']);
});
after(() => s?.stop());

// `ui` on tool parts is the store's own resolution (result details, data-tool-ui chunks, the
// catalog), not part of the server's canonical history: compared separately.
const withoutUi = (messages) =>
  messages.map((m) => ({
    ...m,
    parts: m.parts.map((p) => {
      if (p.type !== 'dynamic-tool' && !p.type.startsWith('tool-')) return p;
      const { ui, ...rest } = p;
      return rest;
    }),
  }));

// The rows a fresh store shows for session `id` once it has read the server's history.
async function readRows(ChatStore, id) {
  const store = new ChatStore({ baseUrl: s.base, sessionId: id, persistSeq: false });
  store.start();
  try {
    const end = Date.now() + 15_000;
    while (!(store.getSnapshot().hydrated && store.getSnapshot().capabilitiesLoaded)) {
      if (Date.now() > end) throw new Error('timed out reading the history');
      await new Promise((r) => setTimeout(r, 10));
    }
    return store.getSnapshot().messages;
  } finally {
    store.dispose();
  }
}

const sorted = (v) =>
  Array.isArray(v) ? v.map(sorted) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;

test('replayPiStream(stream of a turn with follow-ups, tools, thinking, a provider error) = GET messages', { skip: !built && 'pkg/ is not built' }, async () => {
  const { ChatStore, replayPiStream } = await import(pathToFileURL(PKG).href);
  const id = sid('replay');
  let posted = false;
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'first, think words:60' }), async (c) => {
    if (c.type === 'data-pi-text-delta' && !posted) {
      posted = true;
      await s.followUp(id, { message: 'F1 list files', clientSeq: 1, clientNonce: 'a' });
      await s.followUp(id, { message: 'F2 echo yo', clientSeq: 2, clientNonce: 'b' });
      await s.followUp(id, { message: 'F3 fail provider', clientSeq: 3, clientNonce: 'c' });
    }
  });
  const replay = replayPiStream(chunks);
  assert.deepEqual(replay.diagnostics ?? [], []);
  const canonical = await s.messages(id);
  assert.equal(canonical.length, 10);
  assert.ok(replay.messages.length < canonical.length, 'a tool round trip is one row, not two');
  assert.deepEqual(sorted(withoutUi(replay.messages)), sorted(withoutUi(await readRows(ChatStore, id))));
});

test('replayPiStream of a pi.subagent follow-up (data-tool-ui progress, details) = GET messages', { skip: !built && 'pkg/ is not built' }, async () => {
  const { ChatStore, replayPiStream } = await import(pathToFileURL(PKG).href);
  const id = sid('replay-sub');
  let posted = false;
  const { chunks } = await readChunks(await s.chat({ sessionId: id, message: 'first words:40' }), async (c) => {
    if (c.type === 'data-pi-text-delta' && !posted) {
      posted = true;
      await s.followUp(id, { message: 'subagent summarize the notes', clientSeq: 1, clientNonce: 'sub' });
    }
  });
  assert.ok(chunks.some((c) => c.type === 'data-tool-ui'));
  const replay = replayPiStream(chunks);
  assert.deepEqual(replay.diagnostics ?? [], []);
  const canonical = await s.messages(id);
  assert.equal(canonical.length, 5);
  assert.deepEqual(sorted(withoutUi(replay.messages)), sorted(withoutUi(await readRows(ChatStore, id))));
  const part = replay.messages[3].parts.find((p) => p.type === 'dynamic-tool' || p.type.startsWith('tool-'));
  assert.equal(part.details.uiKind, 'pi-subagent', 'details stay structured through the reducer');
  // The store's tool UI metadata: the result's details win.
  assert.equal(part.ui.rendererId, 'pi-subagent');
  assert.deepEqual(part.ui.details, part.details);
});
