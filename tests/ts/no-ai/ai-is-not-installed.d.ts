// Stands in for `ai` and `@ai-sdk/*` in this project (tsconfig `paths`): it exports nothing, so
// any import of them, from a test or from the package's .d.ts, fails as it would for an app
// without them. (A `paths` entry to a missing file would fall back to node_modules.)
export {};
