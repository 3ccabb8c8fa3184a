#!/usr/bin/env node
// Two or more builds of the wasm core, timed against each other in one Node process: each
// build's `BenchCore` runs one scenario in turn, the order rotating every round, `gc()` between
// runs. This tells a change's cost apart from the machine's mood, which moves `run.mjs`'s
// figures by tens of percent from one run to the next; it found the fast path's slowdown of
// issue 22 (b72e2b0) where three bench runs had not.
//
//   BENCH_PKG=/tmp/pkg-old bash bench/build.sh     # each build with the `bench` feature
//   BENCH_PKG=/tmp/pkg-new bash bench/build.sh
//   node --expose-gc bench/compare.mjs [--scenario=a|a1k|b|d2500|d|d10000|e] [--history=1000|10000] \
//        [--rounds=10] [--warm=3] /tmp/pkg-old /tmp/pkg-new
//
// `--history=N` hydrates each core from target/bench/history-N.json first (`node bench/run.mjs
// --only=gen` writes it); the hydration is not timed. Prints, per build, the wasm's gzip bytes
// and the median, min and quartiles in ms, and whether it built the same last message as the
// first build.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import * as g from './gen.mjs';
import * as L from './lib.mjs';

const args = process.argv.slice(2);
const opt = (k, d) => args.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? d;
const rounds = Number(opt('rounds', 10));
const warm = Number(opt('warm', 3));
const scenario = opt('scenario', 'a');
const historyOf = opt('history', '');
const dirs = args.filter((a) => !a.startsWith('--'));
if (typeof gc !== 'function' || dirs.length === 0) {
  console.error('usage: node --expose-gc bench/compare.mjs [--scenario=a] [--history=N] PKG_DIR…');
  process.exit(2);
}

const history = historyOf
  ? readFileSync(resolve(import.meta.dirname, `../target/bench/history-${historyOf}.json`))
  : undefined;
const builds = [];
for (const dir of dirs) {
  const wasmPath = resolve(dir, 'web/agent_chat_store_bg.wasm');
  if (!existsSync(wasmPath)) {
    console.error(`${wasmPath} is missing: build it with BENCH_PKG=${dir} bash bench/build.sh`);
    process.exit(2);
  }
  // Each build's web glue, a module instance of its own.
  const m = await import(pathToFileURL(resolve(dir, 'web/agent_chat_store.js')).href);
  const wasm = readFileSync(wasmPath);
  m.initSync({ module: wasm });
  if (typeof m.BenchCore !== 'function') {
    console.error(`${dir} has no BenchCore: build it with bench/build.sh (the bench feature)`);
    process.exit(2);
  }
  builds.push({ dir, m, gzip: gzipSync(wasm, { level: 9 }).length, times: [] });
}

const input = g.scenarios(1)[scenario];
if (!input) {
  console.error(`no scenario ${scenario} in bench/gen.mjs`);
  process.exit(2);
}
const bytes = input.bytes();
const caps = JSON.stringify(scenario === 'e' ? L.PI_CAPS : L.AI_SDK_CAPS);
const once = (b) => {
  const core = history ? new b.m.BenchCore(caps, history) : new b.m.BenchCore(caps);
  const t0 = performance.now();
  core.run(bytes);
  const ms = performance.now() - t0;
  const last = core.lastMessageJson();
  core.free();
  return { ms, last };
};

let first;
for (let w = 0; w < warm; w++) {
  for (const b of builds) {
    gc();
    const { last } = once(b);
    first ??= last;
    b.same = last === first;
  }
}
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < builds.length; i++) {
    const b = builds[(i + r) % builds.length];
    gc();
    b.times.push(once(b).ms);
  }
}

const at = (xs, p) => [...xs].sort((x, y) => x - y)[Math.round(p * (xs.length - 1))];
const ms = (x) => x.toFixed(1).padStart(8);
console.log(`scenario ${scenario}${history ? `, after history-${historyOf}` : ''}: ${bytes.length} bytes, ` +
  `${rounds} rounds after ${warm} warm-up, Node ${process.version}`);
console.log(`${'build'.padEnd(30)}${'gzip B'.padStart(9)}${'median'.padStart(8)}${'min'.padStart(8)}` +
  `${'p25'.padStart(8)}${'p75'.padStart(8)}  same message`);
for (const b of builds) {
  console.log(`${b.dir.slice(-30).padEnd(30)}${String(b.gzip).padStart(9)}${ms(at(b.times, 0.5))}` +
    `${ms(Math.min(...b.times))}${ms(at(b.times, 0.25))}${ms(at(b.times, 0.75))}  ${b.same}`);
}
if (builds.some((b) => !b.same)) process.exitCode = 1;
