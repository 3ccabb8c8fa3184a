// `agent-chat-store/web`: the root entry's API with the store's module as a .wasm file, fetched
// and compiled by `await init()` (wasm-bindgen's web glue, ./agent_chat_store.js). The replay
// helpers come from their own module, which carries its bytes and needs no `init()`.
export * from "./agent_chat_store.js";
export { default } from "./agent_chat_store.js";
export { replayUiMessageStream, replayPiStream, replayPiNativeEvents } from "../replay/index.js";
