#!/usr/bin/env node
// The side-by-side benchmark of issue 6: agent-chat-store (the built npm package, pkg/) against
// the AI SDK (`ai` 7 + `@ai-sdk/react`'s `Chat`) on identical SSE bytes, in one Node process,
// alternating runs; then the core natively (`cargo bench --bench native`), the floor, the bundle
// sizes, memory, and the same scenarios once in headless Chromium. See bench/README.md.
//
//   node bench/run.mjs [--runs=N] [--quick] [--only=a,b,c,d,e,f,g,size,memory,browser]
//                      [--no-native] [--no-browser] [--only=gen]
//
// Writes bench/results.json, bench/results.md and docs/performance.md (bench/report.mjs) and
// prints the markdown.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as g from './gen.mjs';
import * as L from './lib.mjs';
import { writeReports } from './report.mjs';
import { loadEsbuild, measureSizes } from './size.mjs';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'target/bench');

// ----- options ------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const a = argv.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (!a) return dflt;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : true;
};
const quick = !!opt('quick', false);
const RUNS = Number(opt('runs', quick ? 3 : 5));
const SCALE = quick ? 0.1 : 1;
const only = opt('only', null)?.split(',');
const want = (x) => !only || only.includes(x);
const useNative = !opt('no-native', false) && want('g');
const useBrowser = !opt('no-browser', false) && want('browser');

// gc() between runs keeps one run's garbage out of the next; re-run ourselves with it.
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', ...process.execArgv, import.meta.filename, ...argv], {
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}

const started = Date.now();
const say = (s) => process.stderr.write(`${s}\n`);

// ----- the package under test: a private copy, so a rebuild meanwhile cannot mix builds ----

// The bench build (bash bench/build.sh: the `bench` feature adds benchFloor, BenchCore) from
// target/bench-pkg/, or BENCH_PKG=dir. The size figure is the shipped build's, which has no
// bench exports: pkg/ (bash scripts/build-pkg.sh), or SIZE_PKG=dir.
const pkgSrc = resolve(process.env.BENCH_PKG ?? join(root, 'target/bench-pkg'));
const sizePkg = resolve(process.env.SIZE_PKG ?? join(root, 'pkg'));
for (const f of ['react.js', 'agent_chat_store.js', 'web/agent_chat_store.js', 'web/agent_chat_store_bg.wasm']) {
  if (!existsSync(join(pkgSrc, f))) {
    console.error(`${pkgSrc}/${f} is missing: build the bench package first (bash bench/build.sh)`);
    process.exit(2);
  }
}
mkdirSync(out, { recursive: true });
const pkg = join(out, 'pkg');
rmSync(pkg, { recursive: true, force: true });
cpSync(pkgSrc, pkg, { recursive: true });
const ours = await import(pathToFileURL(join(pkg, 'agent_chat_store.js')).href);
if (typeof ours.benchFloor !== 'function' || typeof ours.BenchCore !== 'function') {
  console.error(`${pkgSrc} has no bench exports (the bench feature): build it with bash bench/build.sh`);
  process.exit(2);
}
const aiMod = await import('ai');
const { Chat } = await import('@ai-sdk/react');
const ai = { ...aiMod, Chat };

// ----- inputs, generated once -----------------------------------------------------------------

say(`generating inputs (scale ${SCALE}) into target/bench/`);
const specs = g.scenarios(SCALE);
const bytes = {};
const files = {};
for (const [k, s] of Object.entries(specs)) {
  bytes[k] = s.bytes();
  files[k] = s.file;
  writeFileSync(join(out, s.file), bytes[k]);
}
const HIST = [1_000, 10_000];
const histories = {};
const historyJson = {};
for (const n of HIST) {
  const msgs = g.history(n);
  historyJson[n] = JSON.stringify(msgs);
  histories[n] = g.historyBody(msgs);
  writeFileSync(join(out, `history-${n}.json`), histories[n]);
}
const countEvents = (b) => {
  let n = 0;
  for (let i = 0; i + 5 < b.length; i++) if (b[i] === 0x0a && b[i + 1] === 0x0a) n++;
  return n;
};
const CAPS = JSON.stringify(L.AI_SDK_CAPS);
const PI = JSON.stringify(L.PI_CAPS);
const manifest = {
  chunkSize: L.CHUNK_SIZE,
  nativeRuns: Math.max(RUNS, 5),
  files,
  histories: Object.fromEntries(HIST.map((n) => [n, `history-${n}.json`])),
  native: [
    { name: 'floor', kind: 'floor', file: files.a },
    { name: 'a', file: files.a, capabilities: L.AI_SDK_CAPS },
    { name: 'b', file: files.b, capabilities: L.AI_SDK_CAPS },
    { name: 'c1000', file: files.a, capabilities: L.AI_SDK_CAPS, history: 'history-1000.json' },
    { name: 'c10000', file: files.a, capabilities: L.AI_SDK_CAPS, history: 'history-10000.json' },
    { name: 'd2500', file: files.d2500, capabilities: L.AI_SDK_CAPS },
    { name: 'd', file: files.d, capabilities: L.AI_SDK_CAPS },
    { name: 'd10000', file: files.d10000, capabilities: L.AI_SDK_CAPS },
    { name: 'e', file: files.e, capabilities: L.PI_CAPS },
  ],
};
writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
if (only?.length === 1 && only[0] === 'gen') {
  say('inputs written');
  process.exit(0);
}

// ----- measuring ------------------------------------------------------------------------------

const results = {
  meta: {
    date: new Date().toISOString(),
    node: process.version,
    cpu: `${cpus()[0]?.model ?? '?'} × ${cpus().length}`,
    commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim(),
    dirty: spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).stdout.trim() !== '',
    runs: RUNS,
    scale: SCALE,
    chunkSize: L.CHUNK_SIZE,
    events: Object.fromEntries(Object.entries(bytes).map(([k, b]) => [k, countEvents(b)])),
    bodyBytes: Object.fromEntries(Object.entries(bytes).map(([k, b]) => [k, b.length])),
  },
  node: {},
  checks: {},
};
const rnd = (x, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

/** Times a synchronous call. */
const timed = (f) => {
  const t0 = L.now();
  const v = f();
  return { ms: L.now() - t0, value: v };
};

/** Runs each runner `runs` times, alternating (the order rotates every round). */
async function measure(id, runners, runs = RUNS) {
  const names = Object.keys(runners);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  const last = {};
  for (let r = 0; r < runs; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const n of order) {
      gc();
      const res = await runners[n]();
      times[n].push(res.ms);
      last[n] = res;
    }
  }
  const entry = {};
  for (const n of names) {
    entry[n] = { median: rnd(L.median(times[n]), 2), runs: times[n].map((x) => rnd(x, 2)), notifications: last[n].notifications };
  }
  results.node[id] = { ...(results.node[id] ?? {}), ...entry };
  say(`  ${id}: ${names.map((n) => `${n} ${entry[n].median} ms`).join(', ')}`);
  return last;
}

const canon = (v) =>
  JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
function check(id, last, pick, expected) {
  const got = Object.fromEntries(Object.entries(last).filter(([, r]) => r.last !== undefined).map(([n, r]) => [n, canon(pick(r.last))]));
  const want = expected === undefined ? Object.values(got)[0] : canon(expected);
  const bad = Object.entries(got).filter(([, v]) => v !== want).map(([n]) => n);
  results.checks[id] = bad.length ? `MISMATCH: ${bad.join(', ')}` : `same result from ${Object.keys(got).join(', ')}`;
  if (bad.length) say(`  !! ${id}: ${results.checks[id]}`);
}

const oursRun = (b, extra = {}) => () => L.runOurs(ours.ChatStore, { bytes: b, ...extra });
const chatRun = (b, extra = {}) => () => L.runAiChat(ai, { bytes: b, ...extra });
const readRun = (b) => () => L.runAiRead(ai, { bytes: b });
const coreBytes = {}; // scenario → length of the wasm core's last message JSON (checked against native)
const coreRun = (b, caps = CAPS, history, id) => () => {
  const core = new ours.BenchCore(caps, history);
  const r = timed(() => core.run(b));
  if (id) coreBytes[id] = new TextEncoder().encode(core.lastMessageJson()).length;
  core.free();
  return { ms: r.ms };
};
const floorRun = (b) => () => ({ ms: timed(() => ours.benchFloor(b)).ms });

say(`warming up`);
for (let i = 0; i < 2; i++) {
  const s = g.frame(g.textChunks(2000, { seed: 9 }));
  const t = g.frame(g.toolChunks(2, 100, 800));
  const p = g.frame(g.piChunks(2000, { seed: 9 }));
  for (const f of [oursRun(s), oursRun(s, { subscriber: false }), chatRun(s), readRun(s), oursRun(t), chatRun(t), readRun(t), oursRun(p, { caps: L.PI_CAPS }), coreRun(s), floorRun(s)]) await f();
}

const expectedText = (n, seed = 1) => g.words(n, seed).join('');
say(`Node, ${RUNS} runs per runner, alternating`);
if (want('a') || want('h') || want('c')) {
  const last = await measure('a', {
    ours: oursRun(bytes.a),
    oursNoSubscriber: oursRun(bytes.a, { subscriber: false }),
    aiChat: chatRun(bytes.a),
    aiRead: readRun(bytes.a),
    floor: floorRun(bytes.a),
    wasmCore: coreRun(bytes.a, CAPS, undefined, 'a'),
  });
  check('a', last, L.textOf, expectedText(specs.a.deltas));
}
if (want('c')) {
  await measure('a1k', {
    ours: oursRun(bytes.a1k),
    oursNoSubscriber: oursRun(bytes.a1k, { subscriber: false }),
    aiChat: chatRun(bytes.a1k),
    wasmCore: coreRun(bytes.a1k),
  });
  for (const n of HIST) {
    const last = await measure(`c${n}`, {
      ours: oursRun(bytes.a, { history: histories[n] }),
      aiChat: chatRun(bytes.a, { historyJson: historyJson[n] }),
      oursNoSubscriber: oursRun(bytes.a, { history: histories[n], subscriber: false }),
      wasmCore: coreRun(bytes.a, CAPS, histories[n], `c${n}`),
      ours1k: oursRun(bytes.a1k, { history: histories[n] }),
      aiChat1k: chatRun(bytes.a1k, { historyJson: historyJson[n] }),
      oursNoSubscriber1k: oursRun(bytes.a1k, { history: histories[n], subscriber: false }),
      wasmCore1k: coreRun(bytes.a1k, CAPS, histories[n]),
    });
    check(`c${n}`, { ours: last.ours, aiChat: last.aiChat }, (m) => [L.textOf(m)], [expectedText(specs.a.deltas)]);
    if (last.ours.messages !== n + 2 || last.aiChat.messages !== n + 2) results.checks[`c${n}`] += ` (message counts ${last.ours.messages}/${last.aiChat.messages})`;
  }
}
if (want('b')) {
  const last = await measure('b', { ours: oursRun(bytes.b), aiChat: chatRun(bytes.b), aiRead: readRun(bytes.b), wasmCore: coreRun(bytes.b, CAPS, undefined, 'b') });
  check('b', last, L.toolsOf);
}
if (want('d')) {
  for (const k of ['d2500', 'd', 'd10000']) {
    const last = await measure(k, { ours: oursRun(bytes[k]), aiChat: chatRun(bytes[k]), aiRead: readRun(bytes[k]), wasmCore: coreRun(bytes[k], CAPS, undefined, k) });
    check(k, last, L.toolsOf);
  }
}
if (want('e')) {
  const last = await measure('e', {
    ours: oursRun(bytes.e, { caps: L.PI_CAPS }),
    oursNoSubscriber: oursRun(bytes.e, { caps: L.PI_CAPS, subscriber: false }),
    wasmCore: coreRun(bytes.e, PI, undefined, 'e'),
  });
  check('e', last, L.textOf, expectedText(specs.e.deltas));
}
if (want('f')) {
  say('(f) snapshot cost');
  const snap = {};
  gc();
  snap.at10k = await L.snapshotCost(ours.ChatStore, { history: histories[10_000], event: g.event, words: g.words, samples: 500 });
  gc();
  snap.at0 = await L.snapshotCost(ours.ChatStore, { history: null, event: g.event, words: g.words, samples: 500 });
  gc();
  snap.at10kLongMessage = await L.snapshotCost(ours.ChatStore, {
    history: histories[10_000],
    event: g.event,
    words: g.words,
    warmDeltas: specs.a.deltas,
    samples: 100,
  });
  results.snapshot = snap;
  for (const [k, v] of Object.entries(snap)) say(`  ${k}: median ${rnd(v.medianUs)} µs, changed ${v.changedMin}..${v.changedMax} of ${v.messages}`);
}

// ----- (g) the core natively ------------------------------------------------------------------

/** Runs `cargo bench --bench native`; `env` may override the bench profile. */
function nativeBench(label, env = {}) {
  const r = spawnSync('cargo', ['bench', '--bench', 'native', '--features', '_internal_bench', '--', `--dir=${out}`], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) {
    const error = (r.stderr || '').split('\n').slice(-15).join('\n');
    say(`  cargo bench (${label}) failed:\n${error}`);
    return { error };
  }
  const res = {};
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{"native"')) continue;
    const n = JSON.parse(line).native;
    res[n.name] = n;
  }
  say(`  native (${label}): ${Object.values(res).map((n) => `${n.name} ${rnd(n.medianMs, 1)}`).join(', ')} ms`);
  return res;
}
if (useNative) {
  say('(g) cargo bench --bench native on the same bytes');
  // The profile the wasm is built with (release: opt-level "z", LTO, one codegen unit)…
  results.native = nativeBench('release profile, as the wasm');
  // …and native at its best (opt-level 3), in its own target dir so neither build evicts the other.
  results.nativeO3 = nativeBench('opt-level 3', { CARGO_PROFILE_BENCH_OPT_LEVEL: '3', CARGO_TARGET_DIR: join(out, 'cargo-o3') });
  // The wasm core and the native core must have built the same message.
  const bad = Object.entries(coreBytes).filter(([id, len]) => results.native[id] && results.native[id].lastMessageBytes !== len);
  results.checks.nativeVsWasm = bad.length ? `MISMATCH: ${bad.map(([id]) => id).join(', ')}` : `same last message in ${Object.keys(coreBytes).filter((id) => results.native[id]).join(', ')}`;
}

// ----- memory (deliverable 4), in a fresh process ---------------------------------------------

if (want('memory')) {
  say('memory: a 10 MB-of-text history, fresh process');
  const r = spawnSync(process.execPath, ['--expose-gc', join(root, 'bench/memory.mjs'), String(10 * SCALE)], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, BENCH_PKG: pkg },
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('{"memory"'));
  results.memory = line ? JSON.parse(line).memory : { error: r.stderr.slice(-2000) };
  say(`  ${JSON.stringify(results.memory)}`);
}

// ----- size -----------------------------------------------------------------------------------

const esbuild = await loadEsbuild();
if (want('size')) {
  say('size: esbuild bundles, minified, React external; gzip -9');
  const outputs = {};
  results.size = { ...(await measureSizes({ root, pkg: sizePkg, esbuild, outputs })), esbuild: esbuild?.version };
  for (const [name, bytes] of Object.entries(outputs)) writeFileSync(join(out, name), bytes);
  say(`  ${JSON.stringify(results.size)}`);
}

// ----- Chromium -------------------------------------------------------------------------------

const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };
function staticServer() {
  // Only these trees are served: the web build (from the private copy), the bench page and the
  // generated inputs.
  const mounts = [
    ['/pkg/web/', join(pkg, 'web')],
    ['/bench/', join(root, 'bench')],
    ['/target/bench/', out],
  ];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const m = mounts.find(([p]) => path.startsWith(p));
    const file = m && resolve(m[1], `.${path.slice(m[0].length - 1)}`);
    if (!file || !file.startsWith(m[1]) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': MIME[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      // Cross-origin isolated: performance.now() then has 5 µs resolution instead of 100 µs.
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    res.end(readFileSync(file));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

if (useBrowser) {
  say('Chromium (headless, playwright-core): each scenario once');
  let chromium;
  try {
    const req = createRequire(join(root, 'examples/e2e/package.json'));
    ({ chromium } = req('playwright-core'));
  } catch {
    results.browser = { error: 'playwright-core missing: bash scripts/install-js.sh examples/e2e' };
  }
  if (chromium && !esbuild) results.browser = { error: 'esbuild missing (npm ci at the repo root)' };
  if (chromium && esbuild) {
    await esbuild.build({
      entryPoints: [join(root, 'bench/aisdk-entry.mjs')],
      outfile: join(out, 'aisdk-browser.js'),
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const server = await staticServer();
    const url = `http://127.0.0.1:${server.address().port}/bench/browser.html`;
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic',
        '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      page.on('pageerror', (e) => say(`  page error: ${e}`));
      await page.goto(url);
      await page.waitForFunction(() => window.__bench?.done, null, { timeout: 480_000, polling: 500 });
      const r = await page.evaluate(() => window.__bench);
      results.browser = r.error ? { error: r.error } : { version: browser.version(), ...r.result };
    } catch (e) {
      results.browser = { error: String(e) };
    } finally {
      await browser.close();
      server.close();
    }
    say(`  ${results.browser.error ? `error: ${results.browser.error}` : 'done'}`);
  }
}

// ----- figures, targets and the report (bench/report.mjs) ---------------------------------------

results.meta.seconds = Math.round((Date.now() - started) / 1000);
console.log(writeReports(results));
