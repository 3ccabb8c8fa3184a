// The package's root entry. The module bytes come with the JS (agent_chat_store_wasm.js, made by
// scripts/build-pkg.sh) and are compiled synchronously on import, so the package is a plain ES
// module everywhere: any bundler and dev server (a pre-bundler that copies this file cannot split
// it from its wasm), server rendering, Node, Deno, a jsdom test. `agent-chat-store/web` is the
// same API with the .wasm as a separate file, fetched by `await init()`.
import { initSync } from "./agent_chat_store_bg.js";
import { fromBase64, inflateRaw } from "./inflate.js";
import wasm, { size } from "./agent_chat_store_wasm.js";

initSync({ module: inflateRaw(fromBase64(wasm), size) });

export * from "./agent_chat_store_bg.js";
// The replay helpers are a module of their own, compiled on their first call: a page that
// uses none of them loads none of their code (package.json's `sideEffects` lets a bundler
// leave it out).
export { replayUiMessageStream, replayPiStream, replayPiNativeEvents } from "./replay/index.js";
