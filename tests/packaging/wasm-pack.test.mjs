// The card's build: `wasm-pack build crates/wasm --target web` on this checkout (wasm-pack from
// scripts/setup.sh, wasm-opt from the npm `binaryen` package through PATH, as docs/building.md says)
// gives a working module: the exports of the package's two modules (the store's and the replay
// helpers', which the package builds apart), and a real turn through
// `fetch` against an AI SDK route handler on 127.0.0.1. Its size beside the package's is printed:
// it lacks only build-pkg.sh's unstable std rebuild (docs/building.md, "With wasm-pack").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const out = mkdtempSync(join(tmpdir(), 'acs-wasm-pack-'));
let glue;

before(async () => {
  await run('wasm-pack', ['build', 'crates/wasm', '--release', '--target', 'web', '--out-dir', out, '--out-name', 'agent_chat_store'], {
    cwd: root,
    maxBuffer: 1 << 26,
    // Its own target dir: build-pkg.sh's release build (another std, other flags) is kept.
    env: { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}`, CARGO_TARGET_DIR: join(root, 'target/wasm-pack') },
  });
  glue = await import(pathToFileURL(join(out, 'agent_chat_store.js')).href);
  glue.initSync({ module: readFileSync(join(out, 'agent_chat_store_bg.wasm')) });
});

after(() => rmSync(out, { recursive: true, force: true }));

// The API's exports by name; the closure shims by count (their names carry hashes and are
// mangled differently with a rebuilt std).
const exportsOf = (bytes) => {
  const names = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
  const closure = (n) => n.includes('convert__closures');
  return { api: names.filter((n) => !closure(n)), closures: names.filter(closure).length };
};

test('wasm-pack gives the package wasm\'s exports, optimised by the same wasm-opt passes', async () => {
  const ours = join(root, 'pkg/web/agent_chat_store_bg.wasm');
  assert.ok(existsSync(ours), 'run scripts/build-pkg.sh first');
  const { fromBase64, inflateRaw } = await import(pathToFileURL(join(root, 'pkg/inflate.js')).href);
  const replay = await import(pathToFileURL(join(root, 'pkg/replay/agent_chat_store_wasm.js')).href);
  const store = exportsOf(readFileSync(ours));
  const helpers = exportsOf(inflateRaw(fromBase64(replay.default), replay.size));
  const packed = join(out, 'agent_chat_store_bg.wasm');
  const all = exportsOf(readFileSync(packed));
  // One module with everything: the store's exports and the replay module's (the runtime's
  // and `SseDecoder`'s are in both).
  assert.deepEqual(all.api.sort(), [...new Set([...store.api, ...helpers.api])].sort());
  assert.equal(all.closures, store.closures);
  const gz = (f) => gzipSync(readFileSync(f), { level: 9 }).length;
  // wasm-opt ran: an unoptimised release module is over twice the size.
  assert.ok(readFileSync(packed).length < 1.3 * readFileSync(ours).length, 'wasm-opt did not run');
  console.log(`wasm-pack, one module: ${gz(packed)} bytes gzip; scripts/build-pkg.sh, the store's module: ${gz(ours)} bytes gzip`);
});

test('the wasm-pack module runs a turn against an AI SDK route handler', async () => {
  const seen = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push(JSON.parse(body));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' });
    const chunks = [
      { type: 'start', messageId: 'a1' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hel' },
      { type: 'text-delta', id: 't', delta: 'lo' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'stop' },
    ];
    for (const c of chunks) {
      res.write(`data: ${JSON.stringify(c)}\n\n`);
      await new Promise((r) => setTimeout(r, 5));
    }
    res.end('data: [DONE]\n\n');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const store = new glue.ChatStore({
      baseUrl: `http://127.0.0.1:${server.address().port}`,
      sessionId: 'chat-1',
      routes: { chat: '/api/chat', stream: '/api/chat/{sessionId}/stream', catalog: '', turn: '' },
      capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true },
      hydrate: false,
      persist: false,
      attach: false,
      persistSeq: false,
    });
    store.send('hi');
    for (let i = 0; i < 400 && !(store.getSnapshot().status === 'ready' && seen.length === 1); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const { status, messages } = store.getSnapshot();
    assert.equal(status, 'ready');
    assert.deepEqual(messages.map((m) => [m.role, m.parts.map((p) => p.text).join('')]), [['user', 'hi'], ['assistant', 'Hello']]);
    assert.equal(seen[0].messages.at(-1).parts[0].text, 'hi');
    store.dispose();
  } finally {
    server.close();
  }
});
