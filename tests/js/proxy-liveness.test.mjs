// Issue 41, point 3: a dead server behind a dev proxy. Vite's dev proxy keeps the browser's
// socket open when the server behind it dies mid-answer (it only answers 500 to requests it
// could not connect at all), so no byte and no end ever reach the store: before heartbeats
// the turn streamed until `streamIdleTimeoutMs` (300 s). Here the built package's `ChatStore`
// talks to the reference server through such a proxy; the server is killed mid-answer and
// the time until the store reports `StreamStalled` is measured and printed.
//
// Expected: SSE, the server beating every B ms: at most B + heartbeatGraceMs (5 s) after the
// last byte, plus the resume's backoff (resumeDelayMs, 500 ms). pi-native: the protocol's 25 s
// + 5 s after the last byte, plus two reconnects from the cursor (backoff 1 s, 2 s, ±25 %).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { startServer, sid, sleep } from '../../examples/server/test/helpers.mjs';

const PKG = new URL('../../pkg/agent_chat_store.js', import.meta.url);
assert.ok(existsSync(PKG), 'pkg/ is built (bash scripts/build-pkg.sh)');
const { ChatStore } = await import(PKG.href);

/**
 * A proxy to `target` as Vite's dev proxy behaves: a request it cannot connect answers 500;
 * an answer whose upstream dies mid-body is left open towards the client (no end, no reset).
 */
async function startProxy(target) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.on('data', (d) => res.write(d));
        answer.on('end', () => res.end());
        // 'aborted' / 'error' mid-body: nothing is written, the client's socket stays open.
        answer.on('error', () => {});
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end();
    });
    req.pipe(out);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Polls the store until `pred(snapshot)`; the time it took. */
async function until(store, pred, what, ms) {
  const start = Date.now();
  while (!pred(store.getSnapshot())) {
    const snap = store.getSnapshot();
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}; status ${snap.status}, error ${JSON.stringify(snap.error)}`);
    await sleep(20);
  }
  return Date.now() - start;
}

async function killMidAnswer({ serverArgs, storeOptions, limitMs }) {
  const server = await startServer(['--tps', '20', ...serverArgs]);
  cleanups.push(() => server.stop());
  const proxy = await startProxy(server.base);
  cleanups.push(() => proxy.close());
  const store = new ChatStore({ baseUrl: proxy.base, sessionId: sid('proxy'), ...storeOptions });
  store.start();
  cleanups.push(() => store.dispose());
  await until(store, (s) => s.capabilities && s.hydrated !== false, 'opened', 15_000);
  assert.equal(store.send('a long answer words:400').kind, 'sent');
  const text = (s) => s.messages.at(-1)?.parts?.map((p) => p.text ?? '').join('') ?? '';
  await until(store, (s) => s.status === 'streaming' && text(s).length > 20, 'streaming', 30_000);
  server.proc.kill('SIGKILL');
  const tookMs = await until(store, (s) => s.status === 'error', 'the typed error', limitMs);
  const snap = store.getSnapshot();
  assert.equal(snap.error?.code, 'StreamStalled', JSON.stringify(snap.error));
  assert.ok(text(snap).length > 20, 'what was shown is kept');
  return { tookMs, error: snap.error };
}

test('SSE behind a proxy: a server killed mid-answer fails the turn as StreamStalled within beat + grace', async () => {
  const beat = 1_000;
  const { tookMs, error } = await killMidAnswer({ serverArgs: ['--heartbeat-ms', String(beat)], storeOptions: {}, limitMs: 20_000 });
  console.log(`SSE behind a proxy, --heartbeat-ms ${beat}, heartbeatGraceMs 5000: killed → StreamStalled in ${tookMs} ms (${error.message})`);
  // The last byte came at most one beat before the kill; then the window and the resume.
  assert.ok(tookMs <= beat + 5_000 + 500 + 1_500, `${tookMs} ms`);
  assert.ok(tookMs >= 5_000, `${tookMs} ms: not before the grace`);
});

test('pi-native behind a proxy: killed mid-answer, reconnects fail, StreamStalled', async () => {
  const { tookMs, error } = await killMidAnswer({
    serverArgs: ['--protocol', 'pi-native'],
    storeOptions: { protocol: 'pi-native', agentType: 'pi', persistSeq: false },
    limitMs: 45_000,
  });
  console.log(`pi-native behind a proxy, heartbeatGraceMs 5000: killed → StreamStalled in ${tookMs} ms (${error.message})`);
  assert.ok(tookMs >= 30_000 && tookMs <= 30_000 + 5_000 + 1_500, `${tookMs} ms`);
});
