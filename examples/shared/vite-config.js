// The example apps' Vite config, one piece for all three (each app's vite.config.js calls it).
// Vite 8 compiles JSX by itself, and the package needs no WebAssembly set-up.
// `AGENT_SERVER=http://127.0.0.1:PORT vite` (or `vite preview`) proxies `/api` to that server, so
// an app can use its default same-origin server URL during development too.
export function exampleViteConfig({ assistantUi = false } = {}) {
  const agentServer = process.env.AGENT_SERVER;
  const proxy = agentServer ? { "/api": { target: agentServer, changeOrigin: true } } : undefined;
  const config = {
    // `agent-chat-store` is a `file:` dependency (a symlink to ../../pkg): its imports of `react`
    // (and `@assistant-ui/react`) must resolve to the app's copies, not to whatever sits above
    // pkg/. The same holds for the modules in ../shared, which import `react` and
    // `agent-chat-store` from outside the app's folder.
    resolve: {
      dedupe: ["react", "react-dom", ...(assistantUi ? ["@assistant-ui/react"] : []), "agent-chat-store"],
    },
    server: { fs: { allow: ["..", "../.."] }, proxy },
    preview: { proxy },
  };
  if (assistantUi) {
    config.build = {
      // assistant-ui is one big chunk in a single-page example; that is fine here.
      chunkSizeWarningLimit: 2000,
      rolldownOptions: {
        onwarn(warning, warn) {
          // assistant-ui's modules start with "use client" (a React Server Components marker that
          // means nothing in a client-only bundle).
          if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
          warn(warning);
        },
      },
    };
  }
  return config;
}
