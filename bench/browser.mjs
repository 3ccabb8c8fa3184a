// The bench page for headless Chromium (run.mjs serves it from 127.0.0.1): the web build of
// agent-chat-store and a browser bundle of the AI SDK, on the very bytes the Node run used
// (fetched from target/bench/), each scenario once after a warm-up on the (a) input.
import init, * as ours from '/pkg/web/agent_chat_store.js';
import * as ai from '/target/bench/aisdk-browser.js';
import * as L from '/bench/lib.mjs';
import * as g from '/bench/gen.mjs';

const log = (s) => {
  document.getElementById('log').textContent += `\n${s}`;
};

async function main() {
  const wasm = await init();
  const manifest = await (await fetch('/target/bench/manifest.json')).json();
  const get = async (f) => new Uint8Array(await (await fetch(`/target/bench/${f}`)).arrayBuffer());
  const files = manifest.files;
  const out = { userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated, scenarios: {} };
  const put = (scenario, runner, value) => {
    (out.scenarios[scenario] ??= {})[runner] = value;
    log(`${scenario} ${runner} ${JSON.stringify(value)}`);
  };
  const only = new URLSearchParams(location.search).get('only')?.split(',');
  const want = (s) => !only || only.includes(s);
  const caps = L.AI_SDK_CAPS;

  // Warm-up: every runner once on the (a) input. Chromium compiles wasm with its baseline
  // compiler first and tiers hot functions up as they run: a small warm-up leaves the first
  // measured run (ours) on baseline code, which made it look up to twice as slow as the second.
  const warm = await get(files.a);
  await L.runOurs(ours.ChatStore, { bytes: warm });
  await L.runOurs(ours.ChatStore, { bytes: warm, subscriber: false });
  await L.runAiChat(ai, { bytes: warm });
  await L.runAiRead(ai, { bytes: warm });
  ours.benchFloor(warm);
  new ours.BenchCore(JSON.stringify(caps)).run(warm);

  const ms = (r) => Math.round(r.ms * 10) / 10;
  if (want('a')) {
    const bytes = await get(files.a);
    put('a', 'ours', ms(await L.runOurs(ours.ChatStore, { bytes })));
    put('a', 'oursNoSubscriber', ms(await L.runOurs(ours.ChatStore, { bytes, subscriber: false })));
    put('a', 'aiChat', ms(await L.runAiChat(ai, { bytes })));
    put('a', 'aiRead', ms(await L.runAiRead(ai, { bytes })));
    let t0 = performance.now();
    ours.benchFloor(bytes);
    put('a', 'floor', Math.round((performance.now() - t0) * 10) / 10);
    const core = new ours.BenchCore(JSON.stringify(caps));
    t0 = performance.now();
    core.run(bytes);
    put('a', 'wasmCore', Math.round((performance.now() - t0) * 10) / 10);
  }
  if (want('b')) {
    const bytes = await get(files.b);
    put('b', 'ours', ms(await L.runOurs(ours.ChatStore, { bytes })));
    put('b', 'aiChat', ms(await L.runAiChat(ai, { bytes })));
    put('b', 'aiRead', ms(await L.runAiRead(ai, { bytes })));
  }
  if (want('c')) {
    const bytes = await get(files.a);
    const hist = await get(manifest.histories['10000']);
    const historyJson = JSON.stringify(JSON.parse(new TextDecoder().decode(hist)).messages);
    put('c10000', 'ours', ms(await L.runOurs(ours.ChatStore, { bytes, history: hist })));
    put('c10000', 'aiChat', ms(await L.runAiChat(ai, { bytes, historyJson })));
  }
  if (want('d')) {
    const bytes = await get(files.d);
    put('d', 'ours', ms(await L.runOurs(ours.ChatStore, { bytes })));
    put('d', 'aiChat', ms(await L.runAiChat(ai, { bytes })));
    put('d', 'aiRead', ms(await L.runAiRead(ai, { bytes })));
  }
  if (want('e')) {
    const bytes = await get(files.e);
    put('e', 'ours', ms(await L.runOurs(ours.ChatStore, { bytes, caps: L.PI_CAPS })));
  }
  if (want('f')) {
    const hist = await get(manifest.histories['10000']);
    put('f', 'ours', await L.snapshotCost(ours.ChatStore, { history: hist, event: g.event, words: g.words, samples: 200 }));
  }
  out.wasmMemoryBytes = wasm.memory.buffer.byteLength;
  return out;
}

main().then(
  (r) => {
    window.__bench = { done: true, result: r };
    log('done');
  },
  (e) => {
    window.__bench = { done: true, error: String(e?.stack ?? e) };
    log(`error: ${e?.stack ?? e}`);
  },
);
