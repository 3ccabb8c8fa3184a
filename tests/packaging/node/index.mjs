// Plain Node ESM, no flags and no bundler: every entry of the installed package, a component
// rendered on the server, a real turn against the agent server at AGENT_SERVER, and the web
// entry initialised by hand. Prints one JSON line for tests/packaging/packaging.test.mjs.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createElement as h } from "react";
import { renderToString } from "react-dom/server";
import { ChatStore, replayUiMessageStream } from "agent-chat-store";
import { useChatStore } from "agent-chat-store/react";
import { convertUIMessage, useChatStoreRuntime } from "agent-chat-store/assistant-ui";
import { resolveToolRenderer } from "agent-chat-store/tool-ui";
import init, { replayUiMessageStream as webReplay } from "agent-chat-store/web";
import { ChatStore as AiSdkChatStore } from "agent-chat-store/ai-sdk";
import { useChat as aiSdkUseChat } from "agent-chat-store/ai-sdk/react";

const out = { entries: {} };
out.entries.root = typeof ChatStore;
out.entries.react = typeof useChatStore;
out.entries.assistantUi = [typeof useChatStoreRuntime, typeof convertUIMessage];
out.entries.toolUi = typeof resolveToolRenderer;
out.entries.aiSdk = [typeof AiSdkChatStore, typeof aiSdkUseChat];

const chunks = [
  { type: "start", messageId: "m" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "ok" },
  { type: "text-end", id: "t" },
];
out.replay = replayUiMessageStream(chunks).message.parts[0].text;

// The web entry: the same API after `init()`, here given the .wasm bytes from disk.
const require = createRequire(import.meta.url);
const pkgDir = require.resolve("agent-chat-store/package.json").replace(/package\.json$/, "");
await init({ module_or_path: readFileSync(pkgDir + "web/agent_chat_store_bg.wasm") });
out.web = webReplay(chunks).message.parts[0].text;

// Server rendering of a component that reads a store.
const store = new ChatStore({ baseUrl: process.env.AGENT_SERVER, sessionId: `node-${process.pid}` });
function View({ store }) {
  const s = useChatStore(store);
  return h("p", { "data-status": s.status }, `${s.messages.length} messages`);
}
out.ssr = renderToString(h(View, { store }));

// A real turn: send, wait for the answer, compare with the server's history.
const snapshot = () => store.getSnapshot();
const until = (pred, what) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`timed out: ${what}: ${JSON.stringify(snapshot())}`)), 30_000);
  const check = () => { if (pred(snapshot())) { clearTimeout(timer); unsubscribe(); resolve(snapshot()); } };
  const unsubscribe = store.subscribe(check);
  check();
});
await until((s) => s.capabilitiesLoaded && s.hydrated, "session open");
out.submit = store.send("hello from node").kind;
await until((s) => s.busy, "the turn starts");
const done = await until((s) => !s.busy && s.messages.length === 2, "the answer");
out.answer = done.messages[1].parts.filter((p) => p.type === "text").map((p) => p.text).join("");
const history = await (await fetch(`${process.env.AGENT_SERVER}/api/v1/agent/chat/${encodeURIComponent(done.sessionId)}/messages`)).json();
out.canonicalAnswer = history.messages[1].parts.filter((p) => p.type === "text").map((p) => p.text).join("");
out.status = done.status;
store.dispose();
console.log(JSON.stringify(out));
