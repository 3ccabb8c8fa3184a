#!/usr/bin/env node
// Where our time goes: one scenario of the bench under V8's sampling profiler, on a web build
// that keeps the wasm function names (the package's wasm-opt -Oz build strips them).
//
//   bash bench/build.sh                  # (once) the release wasm with the bench feature
//   node bench/run.mjs --only=gen        # (once) the inputs in target/bench/
//   node bench/profile.mjs a [--no-subscriber] [--runs=3]
//
// Scenarios: a, b, c1000, c10000, d, d10000, e, f (snapshot at 10,000 messages), floor, and the
// wasm core alone (no JS shell): core-a, core-b, core-d, core-d10000, core-e.
// Writes target/bench/profile-<scenario>.cpuprofile (open it in Chrome DevTools) and prints the
// functions with the most self time.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as g from './gen.mjs';
import * as L from './lib.mjs';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'target/bench');
const args = process.argv.slice(2);
const scenario = args.find((a) => !a.startsWith('--')) ?? 'a';
const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 3);
const subscriber = !args.includes('--no-subscriber');

// bench/build.sh's release wasm (the `bench` feature, for the floor and core scenarios).
const wasmIn = join(root, 'target/bench-wasm/wasm32-unknown-unknown/release/agent_chat_store_wasm.wasm');
const prof = join(out, 'prof');
if (!existsSync(wasmIn)) throw new Error('no release wasm: run bash bench/build.sh first');
if (!existsSync(join(prof, 'agent_chat_store_bg.wasm')) || statSync(wasmIn).mtimeMs > statSync(join(prof, 'agent_chat_store_bg.wasm')).mtimeMs) {
  const r = spawnSync('wasm-bindgen', ['--target', 'web', '--out-name', 'agent_chat_store', '--out-dir', prof, wasmIn], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('wasm-bindgen failed');
}
const ours = await import(pathToFileURL(join(prof, 'agent_chat_store.js')).href);
ours.initSync({ module: readFileSync(join(prof, 'agent_chat_store_bg.wasm')) });

const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
const file = (k) => readFileSync(join(out, manifest.files[k]));
const hist = (n) => readFileSync(join(out, manifest.histories[n]));
const caps = JSON.stringify(L.AI_SDK_CAPS);

const jobs = {
  a: () => L.runOurs(ours.ChatStore, { bytes: file('a'), subscriber }),
  b: () => L.runOurs(ours.ChatStore, { bytes: file('b'), subscriber }),
  c1000: () => L.runOurs(ours.ChatStore, { bytes: file('a'), history: hist(1000), subscriber }),
  c10000: () => L.runOurs(ours.ChatStore, { bytes: file('a'), history: hist(10000), subscriber }),
  d: () => L.runOurs(ours.ChatStore, { bytes: file('d'), subscriber }),
  d10000: () => L.runOurs(ours.ChatStore, { bytes: file('d10000'), subscriber }),
  e: () => L.runOurs(ours.ChatStore, { bytes: file('e'), caps: L.PI_CAPS, subscriber }),
  f: () => L.snapshotCost(ours.ChatStore, { history: hist(10000), event: g.event, words: g.words, samples: 500 }),
  floor: async () => ours.benchFloor(file('a')),
  'core-a': async () => new ours.BenchCore(caps).run(file('a')),
  'core-b': async () => new ours.BenchCore(caps).run(file('b')),
  'core-d': async () => new ours.BenchCore(caps).run(file('d')),
  'core-d10000': async () => new ours.BenchCore(caps).run(file('d10000')),
  'core-e': async () => new ours.BenchCore(JSON.stringify(L.PI_CAPS)).run(file('e')),
};
const job = jobs[scenario];
if (!job) throw new Error(`unknown scenario ${scenario}: ${Object.keys(jobs).join(', ')}`);

await job(); // warm-up
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const t0 = performance.now();
for (let i = 0; i < runs; i++) await job();
const wall = performance.now() - t0;
const { profile } = await session.post('Profiler.stop');
const path = join(out, `profile-${scenario}${subscriber ? '' : '-nosub'}.cpuprofile`);
writeFileSync(path, JSON.stringify(profile));

// Self time per function.
const dt = new Map();
for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const self = new Map();
let total = 0;
for (const node of profile.nodes) {
  const us = dt.get(node.id) ?? 0;
  total += us;
  const f = node.callFrame;
  const where = f.url.endsWith('.wasm') || f.url.startsWith('wasm') ? 'wasm' : f.url ? f.url.split('/').pop() : '';
  const name = `${f.functionName || '(anonymous)'}${where ? `  [${where}]` : ''}`;
  self.set(name, (self.get(name) ?? 0) + us);
}
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30);
console.log(`${scenario}${subscriber ? '' : ' (no subscriber)'}: ${runs} runs, ${wall.toFixed(0)} ms wall; profile in ${path}`);
for (const [name, us] of top) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000 / runs).toFixed(1).padStart(8)} ms/run  ${name.slice(0, 140)}`);
