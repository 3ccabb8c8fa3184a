// The built package (pkg/) installed into an empty consumer folder, the way a user installs it
// (`npm install`, a copy, not a link), then imported through its public entry.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');

/** The module `import * from entry` gives a consumer; `prefix` names its folder. */
export async function installedPackage(prefix, entry = 'agent-chat-store') {
  const dir = mkdtempSync(join(tmpdir(), `acs-${prefix}-`));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', resolve(root, 'pkg')], { cwd: dir, stdio: 'pipe' });
  writeFileSync(join(dir, 'probe.mjs'), `export * from '${entry}';\n`);
  return import(pathToFileURL(join(dir, 'probe.mjs')).href);
}
