// The test command's size check: the package's bundles (bench/size.mjs, the same measure as the
// bench's size line) against their budgets in bench/size-budget.json. Exits 1 when a bundle is
// past its budget, printing every figure either way.
//   node bench/size-check.mjs [pkg-dir]   (default pkg/, scripts/build-pkg.sh's output)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadEsbuild, measureSizes } from './size.mjs';

const root = resolve(import.meta.dirname, '..');
const pkg = resolve(process.argv[2] ?? join(root, 'pkg'));
const budget = JSON.parse(readFileSync(join(import.meta.dirname, 'size-budget.json'), 'utf8'));
const size = await measureSizes({ root, pkg, esbuild: await loadEsbuild() });
if (size.error) {
  console.error(`size check: ${size.error}`);
  process.exit(1);
}
const rows = [['full: agent-chat-store/react (useChatStore), wasm in its JS', size.oursTotalGzip, budget.full]];
if (size.oursAiSdkBuildGzip === null) {
  console.error('size check: pkg/ai-sdk/ is missing (scripts/build-pkg.sh builds it)');
  process.exit(1);
}
rows.push(['AI SDK build: agent-chat-store/ai-sdk/react (useChat), wasm in its JS', size.oursAiSdkBuildGzip, budget.aiSdk]);
let over = false;
for (const [what, bytes, max] of rows) {
  const ok = bytes <= max;
  over ||= !ok;
  console.log(`${ok ? 'ok  ' : 'OVER'} ${what}: ${bytes} B gzip (budget ${max} B${ok ? '' : `, ${bytes - max} B over`})`);
}
console.log(`     for comparison, @ai-sdk/react useChat: ${size.aiSdkUseChatGzip} B gzip; our /web entry + .wasm: ${size.oursWebTotalGzip} B`);
process.exit(over ? 1 : 0);
