import { defineConfig } from "vite";

// Vite 8 compiles JSX by itself, and the package needs no WebAssembly set-up.
// `AGENT_SERVER=http://127.0.0.1:PORT vite` (or `vite preview`) proxies `/api` to that server, so
// the app can use its default same-origin server URL during development too.
const agentServer = process.env.AGENT_SERVER;
const proxy = agentServer ? { "/api": { target: agentServer, changeOrigin: true } } : undefined;

export default defineConfig({
  // `agent-chat-store` is a `file:` dependency (a symlink to ../../pkg): its `react` import must
  // resolve to this app's copy, not to whatever sits above pkg/. The same holds for the modules
  // in ../shared, which import `react` and `agent-chat-store` from outside this app's folder.
  resolve: { dedupe: ["react", "react-dom", "agent-chat-store"] },
  server: { fs: { allow: ["..", "../.."] }, proxy },
  preview: { proxy },
});
