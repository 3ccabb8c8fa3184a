// The package's size as a page loads it, measured the same way for us and for the AI SDK:
// esbuild bundles (minified ESM, React external), gzip -9 by zlib. Used by bench/run.mjs (the
// results' size line) and bench/size-check.mjs (the test command's budget check).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const gz = (buf) => gzipSync(buf, { level: 9 }).length;

/** esbuild, or null when `npm ci` has not run at the repo root. */
export async function loadEsbuild() {
  try {
    return await import('esbuild');
  } catch {
    return null;
  }
}

/**
 * Sizes of the package built in `pkg` (scripts/build-pkg.sh's output) and of `@ai-sdk/react`'s
 * `useChat` from `root`'s node_modules: `{ error }` when something is missing. `outputs` gets
 * the bundles' bytes (for a look at them) when given.
 */
export async function measureSizes({ root, pkg, esbuild, outputs }) {
  if (!esbuild) return { error: 'esbuild is not installed (npm ci at the repo root)' };
  if (!existsSync(join(pkg, 'agent_chat_store_wasm.js'))) {
    return { error: `${pkg} is missing: build the shipped package (bash scripts/build-pkg.sh)` };
  }
  const common = {
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    external: ['react', 'react-dom', 'react/jsx-runtime', '*.wasm'],
  };
  const bundle = async (contents, alias = { 'agent-chat-store': pkg }) =>
    (await esbuild.build({ ...common, stdin: { contents, resolveDir: root, loader: 'js' }, alias })).outputFiles[0].contents;
  // The root entry carries the module bytes in its JS (deflated, base64): the bundle of
  // `/react` is everything a page loads. The web entry (glue + a separate .wasm) beside it.
  const js = await bundle("export { useChatStore, useCreateChatStore } from 'agent-chat-store/react';\n");
  const aiBytes = await bundle("export { useChat } from '@ai-sdk/react';\n", {});
  const webJs = await bundle("export { default, ChatStore } from 'agent-chat-store/web/agent_chat_store.js';\n");
  const wasmBytes = readFileSync(join(pkg, 'web/agent_chat_store_bg.wasm'));
  const inlined = readFileSync(join(pkg, 'agent_chat_store_wasm.js'));
  // The AI SDK build (scripts/build-pkg.sh's pkg/ai-sdk/): what a drop-in `useChat` app loads.
  const aiSdkBuild = existsSync(join(pkg, 'ai-sdk/index.js'))
    ? await bundle("export { useChat } from 'agent-chat-store/ai-sdk/react';\n")
    : null;
  if (outputs) {
    if (aiSdkBuild) outputs['size-ours-ai-sdk.js'] = aiSdkBuild;
    outputs['size-ours.js'] = js;
    outputs['size-aisdk-usechat.js'] = aiBytes;
  }
  return {
    oursWasmRaw: wasmBytes.length,
    oursWasmGzip: gz(wasmBytes),
    oursInlinedWasmGzip: gz(inlined),
    oursJsRaw: js.length,
    oursJsGzip: gz(js) - gz(inlined),
    oursTotalGzip: gz(js),
    oursWebTotalGzip: gz(webJs) + gz(wasmBytes),
    oursAiSdkBuildGzip: aiSdkBuild ? gz(aiSdkBuild) : null,
    oursAiSdkBuildWasmGzip: aiSdkBuild ? gz(readFileSync(join(pkg, 'ai-sdk/agent_chat_store_wasm.js'))) : null,
    aiSdkUseChatRaw: aiBytes.length,
    aiSdkUseChatGzip: gz(aiBytes),
  };
}
