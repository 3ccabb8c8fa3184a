// The root entry's API: the web build's, already initialised (no `init()` to call).
export * from "./web/agent_chat_store.js";
