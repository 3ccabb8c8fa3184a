// What the Chromium page needs from the AI SDK; run.mjs bundles it with esbuild into
// target/bench/aisdk-browser.js (React bundled in, production mode, minified).
export { DefaultChatTransport, readUIMessageStream, parseJsonEventStream, uiMessageChunkSchema } from 'ai';
export { Chat } from '@ai-sdk/react';
