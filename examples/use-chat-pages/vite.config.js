import { defineConfig } from "vite";

// Vite 8 compiles TSX by itself. `AGENT_SERVER=http://127.0.0.1:PORT vite` proxies `/api` to the
// reference server (its `POST /api/chat` is a plain AI SDK route over the scripted model).
const agentServer = process.env.AGENT_SERVER;
const proxy = agentServer ? { "/api": { target: agentServer, changeOrigin: true } } : undefined;

export default defineConfig({
  server: { proxy },
  preview: { proxy },
  build: {
    // (agent-chat-store carries its wasm in its JS, ~0.4 MB: ours/ is one chunk of ~0.65 MB)
    chunkSizeWarningLimit: 1000,
    rollupOptions: {
      // `'use client'` (swr's, inside @ai-sdk/react) means nothing to a client bundle; Rolldown
      // warns about each.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
});
