// The useChat / Chat hook suite (issue 39). `agent-chat-store/react` is the built package
// (pkg/react.js), imported as an app imports it. USECHAT_IMPL=ai-sdk points the same import at
// `@ai-sdk/react` instead: the suite's oracle, to check that a test asks what `useChat` does.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('../..', import.meta.url));
const target = process.env.USECHAT_IMPL === 'ai-sdk' ? '@ai-sdk/react' : `${root}pkg/react.js`;

export default defineConfig({
  root,
  resolve: {
    alias: [{ find: /^agent-chat-store\/react$/, replacement: target }],
  },
  oxc: { jsx: { runtime: 'automatic' } },
  test: {
    include: ['tests/vitest/**/*.test.tsx'],
    environment: 'jsdom',
    setupFiles: ['tests/vitest/setup.ts'],
    // Each file's server and React roots are its own; files run one at a time on 2 cores.
    fileParallelism: false,
    testTimeout: 15000,
  },
});
