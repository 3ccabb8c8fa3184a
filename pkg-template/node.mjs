// Node entry: Node (20) cannot import a .wasm file as an ES module without a flag, so it
// loads the web build's module from disk synchronously instead. Same exports as the bundler
// entry.
import { readFileSync } from 'node:fs';
import { initSync } from './web/agent_chat_store.js';

initSync({ module: readFileSync(new URL('./web/agent_chat_store_bg.wasm', import.meta.url)) });

export * from './web/agent_chat_store.js';
