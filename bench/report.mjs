#!/usr/bin/env node
// The bench's report: figures and targets computed from bench/results.json, rendered as markdown
// into bench/results.md (the raw report; the hand-kept attack figures below its marker stay) and
// docs/performance.md (the documentation's one place for figures). `bench/run.mjs` calls
// `writeReports` after a run; run alone it renders the stored results again:
//
//   node bench/report.mjs            # bench/results.json → bench/results.md, docs/performance.md
//   node bench/report.mjs --check    # fails if docs/performance.md is not what results.json renders
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const HIST = [1_000, 10_000];
const rnd = (x, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

/** Sets `results.figures` and `results.targets` from the measured medians. */
export function figures(results) {
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
}

/** The report's body (no title): the tables of `results`, figures and targets computed. */
export function render(results, { sizeSteps = true } = {}) {
  figures(results);
  const N = results.node;
  const fig = results.figures;
  const T = results.targets;
  const med = (id, r) => N[id]?.[r]?.median;
  const ratio = (x, y) => (x && y ? x / y : null);
  const aiBest = (id) => Math.min(med(id, 'aiChat') ?? Infinity, med(id, 'aiRead') ?? Infinity);
  const x = (v, d = 1) => (v == null || !Number.isFinite(v) ? 'n/a' : `${v.toFixed(d)}×`);
  const events = results.meta.events;
  const bodyBytes = results.meta.bodyBytes;

  const n0 = (v) => (v == null || !Number.isFinite(v) ? '—' : v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));
  const lines = [];
  const md = (s = '') => lines.push(s);
  const M = results.meta;
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
  row('(a) 100,000 text deltas', 'a', events?.a);
  row('(b) 50 tool calls × 200 input deltas', 'b', events?.b);
  for (const n of HIST) row(`(c) (a) after ${n.toLocaleString('en-US')} hydrated messages`, `c${n}`, events?.a);
  row('(d) one tool call, 20 KB input in 5,000 deltas', 'd', events?.d);
  row('(d) … 10 KB in 2,500 deltas', 'd2500', events?.d2500);
  row('(d) … 40 KB in 10,000 deltas', 'd10000', events?.d10000);
  row('(e) pi mode, 100,000 `data-pi-text-delta`', 'e', events?.e);
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
  if (fig.eVsA && bodyBytes) md(`**(e)** pi mode against (a): ${x(fig.eVsA, 2)} the time (its body is ${(bodyBytes.e / bodyBytes.a).toFixed(2)}× the bytes: ${(bodyBytes.e / 1e6).toFixed(1)} MB vs ${(bodyBytes.a / 1e6).toFixed(1)} MB).`), md();
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
    md(`**Size** of the shipped build (\`scripts/build-pkg.sh\`, no bench exports; esbuild ${s.esbuild ?? '?'}, minified, React external, gzip -9 by zlib): agent-chat-store ${(s.oursTotalGzip / 1000).toFixed(1)} KB, one JS bundle for \`useChatStore\` (${(s.oursJsRaw / 1000).toFixed(0)} KB raw) holding the wasm (${(s.oursWasmRaw / 1000).toFixed(0)} KB raw, ${(s.oursWasmGzip / 1000).toFixed(1)} KB gzip as a file, ${(s.oursInlinedWasmGzip / 1000).toFixed(1)} KB as the package carries it) and ~${(s.oursJsGzip / 1000).toFixed(1)} KB of JS; the \`/web\` entry, glue + separate .wasm: ${(s.oursWebTotalGzip / 1000).toFixed(1)} KB; ` +
      (s.oursAiSdkBuildGzip ? `the AI SDK build's \`useChat\` (\`agent-chat-store/ai-sdk/react\`, its own wasm without the pi modes and the replay helpers) ${(s.oursAiSdkBuildGzip / 1000).toFixed(1)} KB (its wasm ${(s.oursAiSdkBuildWasmGzip / 1000).toFixed(1)} KB as the package carries it); ` : '') +
      `AI SDK \`useChat\` ${(s.aiSdkUseChatGzip / 1000).toFixed(1)} KB (${(s.aiSdkUseChatRaw / 1000).toFixed(0)} KB raw).`);
    md();
  }
  if (sizeSteps && results.size && existsSync(join(root, 'bench/size-steps.md'))) {
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
  md('**Targets**');
  md();
  md('| target | figure | met | by how much |');
  md('|---|---|---|---|');
  for (const t of T) md(`| ${t.name} | ${t.figure} | ${t.met ? 'yes' : '**no**'} | ${t.by} |`);
  md();
  md(`Checks (every runner built the same message): ${Object.entries(results.checks).map(([k, v]) => `${k}: ${v}`).join('; ')}.`);
  return lines.join('\n') + '\n';
}

const GENERATED = (cmd) => `<!-- Generated by \`${cmd}\` from bench/results.json: do not edit by hand. -->`;

/** docs/performance.md: what is measured and how to read it, then the report. */
export function renderDocs(results) {
  return [
    GENERATED('node bench/report.mjs'),
    '',
    '# Performance',
    '',
    'Every figure of the documentation lives on this page, written by the bench: `node bench/run.mjs`',
    'measures and rewrites it (with `bench/results.json` and `bench/results.md`); `node bench/report.mjs`',
    'renders it again from the stored `bench/results.json` without measuring. How to run the bench, its',
    'inputs and its runners: [bench/README.md](../bench/README.md). The attack figures',
    '(`node bench/attacks.mjs`: long queues, wide messages, large hydrations) are kept by hand at the',
    'end of [bench/results.md](../bench/results.md).',
    '',
    'agent-chat-store and the AI SDK (`ai`\'s `Chat` + `DefaultChatTransport`, and',
    '`readUIMessageStream` alone) read the very same SSE bytes in one Node process, in alternating runs.',
    'The machine\'s speed moves by tens of percent between runs and within a day: compare the ratios of',
    'one run, not times across runs. The size figures are the bundle a page loads (esbuild, minified,',
    'gzip -9); `node bench/size-check.mjs` measures the same thing and the test command holds it to',
    '[bench/size-budget.json](../bench/size-budget.json); what each size step cost is in',
    '[bench/size-steps.md](../bench/size-steps.md).',
    '',
    render(results, { sizeSteps: false }).trimEnd(),
    '',
  ].join('\n');
}

const ATTACKS = '\n<!-- attacks: bench/attacks.mjs -->\n';

/** Writes bench/results.json, bench/results.md (keeping its hand-kept tail) and docs/performance.md. */
export function writeReports(results, { json = true } = {}) {
  const report = `# Bench results\n\n${render(results)}`;
  if (json) writeFileSync(join(root, 'bench/results.json'), JSON.stringify(results, null, 2) + '\n');
  const resultsPath = join(root, 'bench/results.md');
  const previous = existsSync(resultsPath) ? readFileSync(resultsPath, 'utf8') : '';
  const kept = previous.includes(ATTACKS) ? previous.slice(previous.indexOf(ATTACKS)) : '';
  writeFileSync(resultsPath, report + kept);
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(root, 'docs/performance.md'), renderDocs(results));
  return report;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const results = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8'));
  if (process.argv.includes('--check')) {
    const path = join(root, 'docs/performance.md');
    if (!existsSync(path) || readFileSync(path, 'utf8') !== renderDocs(results)) {
      console.error('docs/performance.md is not what bench/results.json renders: node bench/report.mjs');
      process.exit(1);
    }
  } else {
    writeReports(results, { json: false });
    console.log('wrote bench/results.md and docs/performance.md from bench/results.json');
  }
}
