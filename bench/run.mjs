#!/usr/bin/env node
// The side-by-side benchmark of issue 6: agent-chat-store (the built npm package, pkg/) against
// the AI SDK (`ai` 7 + `@ai-sdk/react`'s `Chat`) on identical SSE bytes, in one Node process,
// alternating runs; then the core natively (`cargo bench --bench native`), the floor, the bundle
// sizes, memory, and the same scenarios once in headless Chromium. See bench/README.md.
//
//   node bench/run.mjs [--runs=N] [--quick] [--only=a,b,c,d,e,f,g,size,memory,browser]
//                      [--no-native] [--no-browser] [--only=gen]
//
// Writes bench/results.json and bench/results.md and prints the markdown.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as g from './gen.mjs';
import * as L from './lib.mjs';
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
const events = Object.fromEntries(Object.entries(bytes).map(([k, b]) => [k, countEvents(b)]));
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
  results.size = await measureSizes({ root, pkg: sizePkg, esbuild, outputs });
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

// ----- figures and targets --------------------------------------------------------------------

results.meta.seconds = Math.round((Date.now() - started) / 1000);
const N = results.node;
const med = (id, r) => N[id]?.[r]?.median;
const ratio = (x, y) => (x && y ? x / y : null);
const fig = {};
const aiBest = (id) => Math.min(med(id, 'aiChat') ?? Infinity, med(id, 'aiRead') ?? Infinity);
if (N.a) {
  fig.aVsChat = ratio(med('a', 'aiChat'), med('a', 'ours'));
  fig.aVsRead = ratio(med('a', 'aiRead'), med('a', 'ours'));
  fig.aVsFloor = ratio(med('a', 'ours'), med('a', 'floor'));
  fig.aNoSubVsFloor = ratio(med('a', 'oursNoSubscriber'), med('a', 'floor'));
}
// Per-chunk cost with the per-turn costs taken out: (T(100k) − T(1k)) at a history over the same at none.
const marginal = (id, r) => (med(id, r) - med(id, `${r}1k`)) / (med('a', r) - med('a1k', r));
if (N.c1000 && N.a && N.a1k) {
  fig.c = {};
  for (const n of HIST) {
    fig.c[n] = {
      ours: ratio(med(`c${n}`, 'ours'), med('a', 'ours')),
      aiChat: ratio(med(`c${n}`, 'aiChat'), med('a', 'aiChat')),
      oursMarginal: marginal(`c${n}`, 'ours'),
      aiChatMarginal: marginal(`c${n}`, 'aiChat'),
      oursNoSubscriber: ratio(med(`c${n}`, 'oursNoSubscriber'), med('a', 'oursNoSubscriber')),
      oursNoSubscriberMarginal: marginal(`c${n}`, 'oursNoSubscriber'),
      wasmCore: ratio(med(`c${n}`, 'wasmCore'), med('a', 'wasmCore')),
      wasmCoreMarginal: marginal(`c${n}`, 'wasmCore'),
    };
  }
}
if (N.d) {
  fig.dVsChat = ratio(med('d', 'aiChat'), med('d', 'ours'));
  fig.dVsRead = ratio(med('d', 'aiRead'), med('d', 'ours'));
  // Growth exponent from 2,500 to 10,000 deltas: 1 is linear, 2 quadratic.
  const exp = (r) => Math.log(med('d10000', r) / med('d2500', r)) / Math.log(4);
  fig.dExponent = { ours: exp('ours'), aiChat: exp('aiChat'), aiRead: exp('aiRead'), wasmCore: exp('wasmCore') };
}
if (N.e && N.a) fig.eVsA = ratio(med('e', 'ours'), med('a', 'ours'));
if (results.native && !results.native.error) {
  const nat = results.native;
  fig.g = {};
  for (const [id, nid] of [['a', 'a'], ['b', 'b'], ['c10000', 'c10000'], ['d', 'd'], ['d10000', 'd10000'], ['e', 'e']]) {
    if (!nat[nid] || !N[id]) continue;
    const o3 = results.nativeO3?.[nid]?.medianMs;
    fig.g[id] = { native: nat[nid].medianMs, nativeO3: o3, wasmCore: med(id, 'wasmCore'), pkg: med(id, 'ours'), speed: ratio(nat[nid].medianMs, med(id, 'wasmCore')), speedO3: ratio(o3, med(id, 'wasmCore')) };
  }
  if (nat.floor && N.a) {
    const o3 = results.nativeO3?.floor?.medianMs;
    fig.g.floor = { native: nat.floor.medianMs, nativeO3: o3, wasmCore: med('a', 'floor'), speed: ratio(nat.floor.medianMs, med('a', 'floor')), speedO3: ratio(o3, med('a', 'floor')) };
  }
}
results.figures = fig;

const T = [];
const target = (name, figure, met, by) => T.push({ name, figure, met, by });
const x = (v, d = 1) => (v == null || !Number.isFinite(v) ? 'n/a' : `${v.toFixed(d)}×`);
const B = results.browser?.scenarios;
const browserVs = (id) => (B?.[id]?.ours ? ` (Chromium ${x(Math.min(B[id].aiChat ?? Infinity, B[id].aiRead ?? Infinity) / B[id].ours)})` : '');
if (N.a) {
  const vs = Math.min(fig.aVsChat, fig.aVsRead);
  target('(a) ≥ 50× the AI SDK (the faster of Chat and readUIMessageStream)', `${x(vs)}${browserVs('a')}`, vs >= 50, vs >= 50 ? '' : `${x(50 / vs)} short`);
  target('(a) full ingest ≤ 2× the floor (h)', x(fig.aVsFloor), fig.aVsFloor <= 2, fig.aVsFloor <= 2 ? '' : `${x(fig.aVsFloor / 2, 2)} over (no subscriber: ${x(fig.aNoSubVsFloor, 2)} the floor)`);
}
if (fig.c) {
  const c = fig.c[10_000];
  target('(c) per-chunk cost at 10,000 messages ≤ 1.1× that at none', `${x(c.ours, 2)} (marginal ${x(c.oursMarginal, 2)}); AI SDK ${x(c.aiChat, 2)}`, c.ours <= 1.1, c.ours <= 1.1 ? '' : `${x(c.ours / 1.1, 2)} over`);
}
if (N.d) {
  const vs = Math.min(fig.dVsChat, fig.dVsRead);
  target('(d) ≥ 100× faster than the AI SDK', `${x(vs)}${browserVs('d')}`, vs >= 100, vs >= 100 ? '' : `${x(100 / vs)} short`);
  const e = fig.dExponent.ours;
  target('(d) linear (time exponent 2,500 → 10,000 deltas)', `${e.toFixed(2)} (AI SDK Chat ${fig.dExponent.aiChat.toFixed(2)})`, e <= 1.15, e <= 1.15 ? '' : 'super-linear');
}
if (results.snapshot) {
  const s = results.snapshot.at10k;
  target('(f) getSnapshot() after one delta at 10,000 messages ≤ 20 µs', `${rnd(s.medianUs)} µs`, s.medianUs <= 20, s.medianUs <= 20 ? '' : `${x(s.medianUs / 20)} over`);
  target('(f) exactly one changed message object', `${s.changedMin}..${s.changedMax}`, s.changedMin === 1 && s.changedMax === 1, '');
}
if (results.size && !results.size.error) {
  const kb = results.size.oursTotalGzip / 1000;
  target('size ≤ 40 KB gzip (wasm + JS glue for useChatStore)', `${kb.toFixed(1)} KB`, kb <= 40, kb <= 40 ? '' : `${(kb - 40).toFixed(1)} KB over (${x(kb / 40)})`);
  target('issue 22: the full package ≤ 80 KB gzip', `${kb.toFixed(1)} KB`, kb <= 80, kb <= 80 ? '' : `${(kb - 80).toFixed(1)} KB over (${x(kb / 80)})`);
  const ai = results.size.oursAiSdkBuildGzip / 1000;
  const theirs = results.size.aiSdkUseChatGzip / 1000;
  if (ai) target(`issue 22: the AI SDK build's useChat < 56 KB gzip and under @ai-sdk/react's (${theirs.toFixed(1)} KB)`, `${ai.toFixed(1)} KB`, ai < 56 && ai < theirs, ai < 56 ? '' : `${(ai - 56).toFixed(1)} KB over (${x(ai / 56)})`);
}
if (fig.g?.a) {
  const s = fig.g.a.speed;
  target('(g) wasm ≥ 0.7× native speed (core, scenario a; native with the same release profile)', `${x(s, 2)} (against native opt-level 3: ${x(fig.g.a.speedO3, 2)})`, s >= 0.7, s >= 0.7 ? '' : `${x(0.7 / s, 2)} short`);
}
if (results.memory && !results.memory.error) {
  const r = results.memory.ratio;
  target('memory ≤ 3× the history text (wasm peak + JS heap, 10 MB)', x(r, 2), r <= 3, r <= 3 ? '' : `${x(r / 3, 2)} over`);
}
results.targets = T;

// ----- report ---------------------------------------------------------------------------------

const n0 = (v) => (v == null || !Number.isFinite(v) ? '—' : v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));
const lines = [];
const md = (s = '') => lines.push(s);
const M = results.meta;
md('# Bench results');
md();
md(`\`node bench/run.mjs\` on ${M.date.slice(0, 16).replace('T', ' ')} UTC — ${M.cpu}, Node ${M.node}, commit ${M.commit}${M.dirty ? ' (+ uncommitted changes)' : ''}; ` +
  `median of ${M.runs} alternating runs per runner${M.scale !== 1 ? `, inputs scaled ×${M.scale}` : ''}; bodies streamed in ${M.chunkSize / 1024} KB network chunks; ${M.seconds} s in all.`);
md();
md('Times in ms from send to status `ready`. **ours** = agent-chat-store (the bench build, `bench/build.sh`: the shipped code plus the bench exports; Node wasm) with one subscriber that calls `getSnapshot()` on every notification (as `useSyncExternalStore` does); ' +
  '**Chat** = `@ai-sdk/react` `Chat` + `DefaultChatTransport` with one messages callback; **read** = `parseJsonEventStream` → `readUIMessageStream`. Ratio = AI SDK time / ours.');
md();
if (['a', 'b', 'c1000', 'c10000', 'd', 'd2500', 'd10000', 'e'].some((id) => N[id])) {
  md('| scenario | SSE events | ours | ours, no subscriber | wasm core (no shell) | Chat | read | Chat / ours | read / ours |');
  md('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
}
const row = (label, id, ev) => {
  if (!N[id]) return;
  const o = med(id, 'ours');
  md(`| ${label} | ${ev != null ? ev.toLocaleString('en-US') : '—'} | ${n0(o)} | ${n0(med(id, 'oursNoSubscriber'))} | ${n0(med(id, 'wasmCore'))} | ${n0(med(id, 'aiChat'))} | ${n0(med(id, 'aiRead'))} | ${x(ratio(med(id, 'aiChat'), o))} | ${x(ratio(med(id, 'aiRead'), o))} |`);
};
row('(a) 100,000 text deltas', 'a', events.a);
row('(b) 50 tool calls × 200 input deltas', 'b', events.b);
for (const n of HIST) row(`(c) (a) after ${n.toLocaleString('en-US')} hydrated messages`, `c${n}`, events.a);
row('(d) one tool call, 20 KB input in 5,000 deltas', 'd', events.d);
row('(d) … 10 KB in 2,500 deltas', 'd2500', events.d2500);
row('(d) … 40 KB in 10,000 deltas', 'd10000', events.d10000);
row('(e) pi mode, 100,000 `data-pi-text-delta`', 'e', events.e);
md();
if (fig.c) {
  md('**(c) per-chunk cost against (a)** (time at the history / time at none, same 100,000 deltas; "marginal" = (T(100k deltas) − T(1k deltas)) at the history over the same at none, which takes out per-turn costs such as serialising the history into the POST):');
  md();
  md('| history | ours | ours, marginal | ours, no subscriber | … marginal | wasm core | … marginal | AI SDK Chat | … marginal |');
  md('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const n of HIST) {
    const c = fig.c[n];
    md(`| ${n.toLocaleString('en-US')} messages | ${x(c.ours, 2)} | ${x(c.oursMarginal, 2)} | ${x(c.oursNoSubscriber, 2)} | ${x(c.oursNoSubscriberMarginal, 2)} | ${x(c.wasmCore, 2)} | ${x(c.wasmCoreMarginal, 2)} | ${x(c.aiChat, 2)} | ${x(c.aiChatMarginal, 2)} |`);
  }
  md();
}
if (fig.dExponent) {
  const e = fig.dExponent;
  md(`**(d) growth** 2,500 → 5,000 → 10,000 deltas (4 bytes each): ours ${['d2500', 'd', 'd10000'].map((k) => n0(med(k, 'ours'))).join(' → ')} ms, ` +
    `wasm core ${['d2500', 'd', 'd10000'].map((k) => n0(med(k, 'wasmCore'))).join(' → ')} ms, ` +
    `Chat ${['d2500', 'd', 'd10000'].map((k) => n0(med(k, 'aiChat'))).join(' → ')} ms, read ${['d2500', 'd', 'd10000'].map((k) => n0(med(k, 'aiRead'))).join(' → ')} ms. ` +
    `Exponent (log₄ of the 4× step; 1 = linear, 2 = quadratic): ours ${e.ours.toFixed(2)}, wasm core ${e.wasmCore.toFixed(2)}, Chat ${e.aiChat.toFixed(2)}, read ${e.aiRead.toFixed(2)}.`);
  md();
}
if (fig.eVsA) md(`**(e)** pi mode against (a): ${x(fig.eVsA, 2)} the time (its body is ${(bytes.e.length / bytes.a.length).toFixed(2)}× the bytes: ${(bytes.e.length / 1e6).toFixed(1)} MB vs ${(bytes.a.length / 1e6).toFixed(1)} MB).`), md();
if (results.snapshot) {
  const s = results.snapshot;
  md('**(f) snapshot cost**: `getSnapshot()` right after the notification for one more text delta (median of the samples; changed = message objects not `===` the previous snapshot\'s):');
  md();
  md('| history | messages | median | p90 | changed objects | streamed text so far |');
  md('|---|---:|---:|---:|---:|---:|');
  const fr = (label, v) => md(`| ${label} | ${v.messages.toLocaleString('en-US')} | ${rnd(v.medianUs)} µs | ${rnd(v.p90Us)} µs | ${v.changedMin === v.changedMax ? v.changedMin : `${v.changedMin}..${v.changedMax}`} | ${v.lastTextLength.toLocaleString('en-US')} chars |`);
  fr('none', s.at0);
  fr('10,000 messages', s.at10k);
  fr('10,000 messages, after 100,000 deltas', s.at10kLongMessage);
  md();
}
if (fig.g) {
  md(`**(g) the core natively** (\`cargo bench --bench native\`, the release profile the wasm uses: opt-level "z", LTO, one codegen unit) against the same core in the same wasm module driven from Rust (\`BenchCore\`, no JS shell), and against the whole package (ours):`);
  md();
  md('| scenario | native | native, opt-level 3 | wasm core | wasm speed (native / wasm) | … against opt-level 3 | whole package / native |');
  md('|---|---:|---:|---:|---:|---:|---:|');
  for (const [id, v] of Object.entries(fig.g)) md(`| ${id === 'floor' ? 'floor (a bytes)' : id} | ${n0(v.native)} | ${n0(v.nativeO3)} | ${n0(v.wasmCore)} | ${x(v.speed, 2)} | ${x(v.speedO3, 2)} | ${v.pkg ? x(v.pkg / v.native) : '—'} |`);
  md();
} else if (results.native?.error) {
  md(`(g) native: cargo bench failed: \`${results.native.error.split('\n').pop()}\``), md();
}
if (N.a) {
  md(`**(h) the floor** (\`benchFloor\`: SSE split + serde_json \`Value\` per event + text appended, in the same wasm module, on the (a) bytes): ${n0(med('a', 'floor'))} ms in Node` +
    `${results.native?.floor ? `, ${n0(results.native.floor.medianMs)} ms natively (${n0(results.nativeO3?.floor?.medianMs)} ms at opt-level 3)` : ''}. Ours = ${x(fig.aVsFloor)} the floor (${x(fig.aNoSubVsFloor)} with no subscriber); the AI SDK = ${x(aiBest('a') / med('a', 'floor'))}.`);
  md();
}
if (results.size && !results.size.error) {
  const s = results.size;
  md(`**Size** of the shipped build (\`scripts/build-pkg.sh\`, no bench exports; esbuild ${esbuild?.version ?? ''}, minified, React external, gzip -9 by zlib): agent-chat-store ${(s.oursTotalGzip / 1000).toFixed(1)} KB, one JS bundle for \`useChatStore\` (${(s.oursJsRaw / 1000).toFixed(0)} KB raw) holding the wasm (${(s.oursWasmRaw / 1000).toFixed(0)} KB raw, ${(s.oursWasmGzip / 1000).toFixed(1)} KB gzip as a file, ${(s.oursInlinedWasmGzip / 1000).toFixed(1)} KB as the package carries it) and ~${(s.oursJsGzip / 1000).toFixed(1)} KB of JS; the \`/web\` entry, glue + separate .wasm: ${(s.oursWebTotalGzip / 1000).toFixed(1)} KB; ` +
    (s.oursAiSdkBuildGzip ? `the AI SDK build's \`useChat\` (\`agent-chat-store/ai-sdk/react\`, its own wasm without the pi modes and the replay helpers) ${(s.oursAiSdkBuildGzip / 1000).toFixed(1)} KB (its wasm ${(s.oursAiSdkBuildWasmGzip / 1000).toFixed(1)} KB as the package carries it); ` : '') +
    `AI SDK \`useChat\` ${(s.aiSdkUseChatGzip / 1000).toFixed(1)} KB (${(s.aiSdkUseChatRaw / 1000).toFixed(0)} KB raw).`);
  md();
}
if (results.size && existsSync(join(root, 'bench/size-steps.md'))) {
  // Kept by hand in bench/size-steps.md (a step's figure is taken when it lands), shown here so
  // the results carry them.
  md('**Size, step by step** (from `bench/size-steps.md`):');
  md();
  md(readFileSync(join(root, 'bench/size-steps.md'), 'utf8').trimEnd());
  md();
}
if (results.memory && !results.memory.error) {
  const m = results.memory;
  const mb = (b) => (b / 1e6).toFixed(1);
  md(`**Memory** (fresh process, history of ${m.messages.toLocaleString('en-US')} messages with ${mb(m.textBytes)} MB of text hydrated and one snapshot held): wasm linear memory ${mb(m.wasmPeak)} MB (peak; ${mb(m.wasmBefore)} MB before) + JS heap +${mb(m.jsHeapDelta)} MB = ${mb(m.oursTotal)} MB = ${x(m.ratio, 2)} the text. The AI SDK holding the same history: JS heap +${mb(m.aiSdkJsHeapDelta)} MB (${x(m.aiSdkRatio, 2)}).`);
  md();
}
if (results.browser) {
  if (results.browser.error) md(`**Chromium**: not run: ${results.browser.error.split('\n')[0]}`);
  else {
    const b = results.browser.scenarios;
    md(`**Chromium** (${results.browser.version}, headless, web build${results.browser.crossOriginIsolated ? ', cross-origin isolated (5 µs timer)' : ', 100 µs timer'}; one run each after a warm-up; ms):`);
    md();
    md('| scenario | ours | ours, no subscriber | wasm core | floor | Chat | read | Chat / ours | read / ours |');
    md('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [id, v] of Object.entries(b)) {
      if (id === 'f') continue;
      md(`| ${id} | ${n0(v.ours)} | ${n0(v.oursNoSubscriber)} | ${n0(v.wasmCore)} | ${n0(v.floor)} | ${n0(v.aiChat)} | ${n0(v.aiRead)} | ${x(ratio(v.aiChat, v.ours))} | ${x(ratio(v.aiRead, v.ours))} |`);
    }
    if (b.f) md(`| (f) getSnapshot() at 10,000 messages | ${rnd(b.f.ours.medianUs)} µs (p90 ${rnd(b.f.ours.p90Us)} µs), changed ${b.f.ours.changedMin}..${b.f.ours.changedMax} | | | | | | | |`);
    md();
  }
}
md('**Targets of issue 6**');
md();
md('| target | figure | met | by how much |');
md('|---|---|---|---|');
for (const t of T) md(`| ${t.name} | ${t.figure} | ${t.met ? 'yes' : '**no**'} | ${t.by} |`);
md();
md(`Checks (every runner built the same message): ${Object.entries(results.checks).map(([k, v]) => `${k}: ${v}`).join('; ')}.`);

const report = lines.join('\n') + '\n';
writeFileSync(join(root, 'bench/results.json'), JSON.stringify(results, null, 2) + '\n');
// The attack figures (bench/attacks.mjs) are kept by hand below a marker: a rerun keeps them.
const resultsPath = join(root, 'bench/results.md');
const MARK = '\n<!-- attacks: bench/attacks.mjs -->\n';
const previous = existsSync(resultsPath) ? readFileSync(resultsPath, 'utf8') : '';
const kept = previous.includes(MARK) ? previous.slice(previous.indexOf(MARK)) : '';
writeFileSync(resultsPath, report + kept);
console.log(report);
