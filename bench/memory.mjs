// Deliverable 4 of issue 6: memory for a 10 MB-of-text history. Run in a fresh process by
// run.mjs (`node --expose-gc bench/memory.mjs [textMB]`), since wasm linear memory only ever
// grows: its byteLength after hydration is the peak of everything the module did so far.
// Prints one JSON line.
import { pathToFileURL } from 'node:url';
import * as aiMod from 'ai';
import { Chat } from '@ai-sdk/react';
import { history, historyBody } from './gen.mjs';
import { oursStore } from './lib.mjs';

if (typeof gc !== 'function') throw new Error('run with node --expose-gc');
// The package: pkg/ by default, or the copy run.mjs took (BENCH_PKG).
const pkgDir = pathToFileURL((process.env.BENCH_PKG ?? new URL('../pkg', import.meta.url).pathname) + '/');
const ours = await import(new URL('agent_chat_store.js', pkgDir));
const textMB = Number(process.argv[2] ?? 10);
const CHARS = 5_000;
const count = Math.round((textMB * 1e6) / CHARS);
const messages = history(count, CHARS, 11);
const textBytes = messages.reduce((n, m) => n + Buffer.byteLength(m.parts[0].text), 0);
const body = historyBody(messages); // the server's bytes: alive before and after, not counted
const bodyText = new TextDecoder().decode(body);
messages.length = 0;

// Already initialised by the root entry: initSync hands back the same instance's exports.
const wasm = ours.initSync();
const memory = wasm.memory;

function settle() {
  gc();
  gc();
  return process.memoryUsage();
}

const m0 = settle();
const wasm0 = memory.buffer.byteLength;
const store = await oursStore(ours.ChatStore, { chat: () => new Uint8Array(), history: body });
const snap = store.getSnapshot(); // the JS copy a UI holds
if (snap.messages.length !== count) throw new Error(`hydrated ${snap.messages.length} of ${count}`);
const m1 = settle();
const wasm1 = memory.buffer.byteLength;

// The AI SDK holds the same history as plain JS objects (`new Chat({messages})`).
const a0 = settle();
const chat = new Chat({ id: 'mem', messages: JSON.parse(bodyText).messages, transport: new aiMod.DefaultChatTransport({ api: '/x' }) });
const a1 = settle();
if (chat.messages.length !== count) throw new Error('AI SDK history');

const out = {
  messages: count,
  textBytes,
  bodyBytes: body.length,
  wasmBefore: wasm0,
  wasmPeak: wasm1,
  wasmGrowth: wasm1 - wasm0,
  jsHeapDelta: m1.heapUsed - m0.heapUsed,
  jsExternalDelta: m1.external - m0.external,
  oursTotal: wasm1 + (m1.heapUsed - m0.heapUsed),
  ratio: (wasm1 + (m1.heapUsed - m0.heapUsed)) / textBytes,
  aiSdkJsHeapDelta: a1.heapUsed - a0.heapUsed,
  aiSdkRatio: (a1.heapUsed - a0.heapUsed) / textBytes,
};
console.log(JSON.stringify({ memory: out }));
store.dispose();
void snap;
void chat;
