// Packaging tests: the package as a registry installs it. `npm pack pkg/` gives the tarball; each
// app folder here is copied to a fresh temporary folder, `npm install`s it from its lockfile and
// the tarball, and is used as its users use it, against the reference server (a real pi agent
// with the scripted model) in Debian's headless Chromium:
//   vite     the README quick starts, written into what `npm create vite -- --template react`
//            gives: `vite` dev (pre-bundling on) and `vite build` + `vite preview`
//   webpack  webpack 5 with no WebAssembly configuration
//   next     Next.js (app router, its default bundler): a server component and a client one,
//            rendered on the server, then used in the browser
//   node     plain Node ESM: every entry, server rendering, a turn; tsc --strict on the .d.ts
// Run after scripts/build-pkg.sh and the examples' npm installs (the reference server and
// playwright-core). Model: automerge's javascript/packaging_tests/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { eventually, launch, screenshot } from '../../examples/e2e/lib.mjs';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const here = import.meta.dirname;
const work = mkdtempSync(join(tmpdir(), 'acs-packaging-'));
const children = new Set();
let tarball;
let browser;

before(async () => {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work, resolve(root, 'pkg')]);
  tarball = join(work, JSON.parse(stdout)[0].filename);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await Promise.all([...children].map(stop));
  rmSync(work, { recursive: true, force: true });
});

// A runner killed mid-test (a cancelled CI run, Ctrl-C) takes the servers it started with it:
// each runs in a process group of its own.
const killAll = () => {
  for (const child of children) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
  }
};
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => { killAll(); process.exit(1); });

/** Copies app folder `name` to a fresh folder and installs it with the tarball, as a user would. */
async function install(name) {
  const dir = join(work, name);
  cpSync(join(here, name), dir, { recursive: true, filter: (src) => !src.includes('node_modules') });
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: dir, maxBuffer: 1 << 26 });
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules/agent-chat-store/package.json'), 'utf8'));
  assert.equal(installed.name, 'agent-chat-store');
  return dir;
}

/** Starts a long-running command; resolves once its output matches `ready`. */
function start(cmd, args, { cwd, env = {}, ready, timeout = 120_000 }) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.output = '';
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${cmd} ${args.join(' ')} did not start: ${child.output}`)), timeout);
    const onData = (d) => {
      child.output += d;
      // Colours or not (tools colour their output when CI is set, or a terminal is there).
      const m = child.output.replace(/\x1b\[[0-9;]*m/g, '').match(ready);
      if (m) { clearTimeout(timer); res({ child, match: m }); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); rej(new Error(`${cmd} exited ${code}: ${child.output}`)); });
  });
}

/** Stops a child started by `start`, with everything it spawned (its process group). */
function stop(child) {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((res) => child.once('exit', res));
  try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
  const force = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5_000);
  return exited.finally(() => clearTimeout(force));
}

function freePort() {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
  });
}

/** The reference server: a real pi agent, scripted model, sessions of its own. */
async function agentServer() {
  // Its own data folder: the demo's default would keep every run's sessions.
  const dataDir = mkdtempSync(join(tmpdir(), 'acs-packaging-data-'));
  const { child, match } = await start(process.execPath, [resolve(root, 'examples/server/server.mjs'), '--port', '0', '--tps', '60', '--data-dir', dataDir], {
    cwd: root, ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/, timeout: 20_000,
  });
  const url = match[1];
  return {
    url,
    child,
    history: async (session) => (await (await fetch(`${url}/api/v1/agent/chat/${encodeURIComponent(session)}/messages`)).json()).messages,
  };
}

/** The quick starts of a README: fenced blocks whose info string is `LANG PROGRAM/PATH`. */
function quickStarts(readme) {
  const programs = new Map();
  for (const m of readFileSync(readme, 'utf8').matchAll(/^```\w+ (quick-start[\w-]*)\/(\S+)\n([\s\S]*?)^```$/gm)) {
    const [, program, path, text] = m;
    if (!programs.has(program)) programs.set(program, {});
    programs.get(program)[path] = text;
  }
  return programs;
}

const readmes = ['README.md', 'pkg-template/README.md'];
const programs = readmes.map((f) => ({ readme: f, programs: quickStarts(resolve(root, f)) }));
const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('').trim();

test('both READMEs have the React and the assistant-ui quick start, each a complete program', () => {
  for (const { readme, programs: p } of programs) {
    assert.deepEqual([...p.keys()].sort(), ['quick-start', 'quick-start-assistant-ui'], readme);
    assert.deepEqual(Object.keys(p.get('quick-start')).sort(), ['src/App.jsx', 'vite.config.js'], readme);
    assert.deepEqual(Object.keys(p.get('quick-start-assistant-ui')), ['src/App.jsx'], readme);
  }
});

/** Writes a quick start's files into the Vite app (the assistant-ui one keeps the React one's config). */
function paste(dir, readme, program) {
  const files = { ...programs.find((p) => p.readme === readme).programs.get('quick-start') };
  if (program !== 'quick-start') Object.assign(files, programs.find((p) => p.readme === readme).programs.get(program));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Opens `url`; fails the test on any page error (a blank page is one). */
async function open(url, name) {
  const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  // Console errors too (a failed wasm instantiation logs one); a failed load is told by its
  // response instead, which names the URL (a browser asks for /favicon.ico on its own).
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(new Error(m.text())); });
  page.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(new Error(`${r.status()} ${r.url()}`)); });
  await page.goto(url);
  await page.getByRole('textbox').waitFor({ timeout: 30_000 });
  return { page, context, errors, name };
}

const pageView = (page) => page.$$eval('.message:not(.waiting)', (els) => els.map((e) => ({
  role: e.classList.contains('user') ? 'user' : 'assistant',
  text: e.textContent.replace(/^(You|Agent):\s*/, '').trim(),
})));
// Not examples/e2e/lib.mjs's `canonicalView`: a quick start shows a message's text parts side by
// side (no separator) and no tool parts, so this one is what `pageView` reads.
const canonicalView = (messages) => messages.map((m) => ({ role: m.role, text: textOf(m) }));

async function say(page, text) {
  await page.getByRole('textbox').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

const stopButton = (page) => page.getByRole('button', { name: 'Stop' });

/** A message sent, its answer streamed in and shown as the server's history has it. */
async function checkTurn({ page }, server, session, text) {
  const before = (await server.history(session)).length;
  await say(page, text);
  const history = await eventually(async () => {
    const h = await server.history(session);
    return h.length >= before + 2 && h.at(-1).role === 'assistant' && textOf(h.at(-1)) && h;
  }, { what: 'the answer in the server history' });
  await eventually(async () => (await stopButton(page).count()) === 0, { what: 'the turn to end' });
  await eventually(async () => JSON.stringify(await pageView(page)) === JSON.stringify(canonicalView(history)), { what: 'the page to show the history' });
  assert.equal(textOf(history.at(-2)), text);
}

/** The full quick start: a turn, a follow-up while it streams, Stop, and a failed turn's error. */
async function checkQuickStart(opened, server, session) {
  const { page } = opened;
  await checkTurn(opened, server, session, 'hello');
  // A follow-up typed while the answer streams waits as a bubble, then runs in order. The
  // answer is long (300 words at the server's 60 tokens/s: seconds), so a loaded machine still
  // types it before the answer ends; the scripted model reads `words:N`, not a pace.
  const before = (await server.history(session)).length;
  await say(page, 'words:300 tell me more');
  await stopButton(page).waitFor();
  await say(page, 'and one more thing');
  await page.locator('.waiting').first().waitFor();
  const history = await eventually(async () => {
    const h = await server.history(session);
    return h.length >= before + 4 && (await page.locator('.waiting').count()) === 0 && (await stopButton(page).count()) === 0 && h;
  }, { what: 'the follow-up to be answered', timeout: 60_000 });
  assert.deepEqual(history.slice(-4).map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  assert.equal(textOf(history.at(-2)), 'and one more thing');
  await eventually(async () => JSON.stringify(await pageView(page)) === JSON.stringify(canonicalView(history)), { what: 'the page to show the follow-up in order' });
  // Stop ends a long answer.
  const beforeStop = (await server.history(session)).length;
  await say(page, 'words:400 a long answer');
  await stopButton(page).click({ timeout: 10_000 });
  await eventually(async () => (await stopButton(page).count()) === 0, { what: 'Stop to end the turn' });
  // The server's turn stopped: its history of it no longer changes. (The page is not compared
  // with it word for word: the cut answer's last words may not have reached the page before the
  // abort, and assistant-ui reveals streamed text smoothly, a little after it arrived.)
  await eventually(async () => (await server.history(session)).length > beforeStop, { what: 'the stopped turn in the server history' });
  await new Promise((r) => setTimeout(r, 1_500));
  const stopped = await server.history(session);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.deepEqual(await server.history(session), stopped, 'the stopped turn does not go on');
  const shownAnswer = (await pageView(page)).at(-1);
  assert.ok(shownAnswer.role === 'user' || shownAnswer.text.split(/\s+/).length < 400, 'the page shows a cut answer');
  assert.equal(textOf(stopped[beforeStop]), 'words:400 a long answer');
  const answer = stopped[beforeStop + 1];
  assert.ok(!answer || textOf(answer).split(/\s+/).length < 400, 'the answer was cut by Stop');
  // A failed turn shows its error.
  await say(page, 'fail provider');
  const alert = page.getByRole('alert');
  await alert.waitFor({ timeout: 30_000 });
  assert.match(await alert.textContent(), /scripted provider error/);
}

async function finish(opened) {
  await screenshot(opened.page, `packaging-${opened.name}`);
  assert.deepEqual(opened.errors.map(String), [], 'no page errors');
  await opened.context.close();
}

for (const readme of readmes) {
  test(`${readme}: the quick starts in vite dev (pre-bundled) and vite build + preview`, { timeout: 600_000 }, async () => {
    const dir = await install('vite');
    const vite = join(dir, 'node_modules/.bin/vite');
    for (const program of ['quick-start', 'quick-start-assistant-ui']) {
      paste(dir, readme, program);
      const server = await agentServer();
      const env = { AGENT_SERVER: server.url };
      const label = `${readme.replace(/\W+/g, '-')}-${program}`;
      // Dev: a fresh dependency cache each time, so the pre-bundler runs on the package.
      rmSync(join(dir, 'node_modules/.vite'), { recursive: true, force: true });
      let port = await freePort();
      const dev = await start(vite, ['--host', '127.0.0.1', '--port', String(port), '--strictPort'], { cwd: dir, env, ready: /Local:\s+http/ });
      const opened = await open(`http://127.0.0.1:${port}/`, `${label}-dev`);
      await checkQuickStart(opened, server, 'my-first-chat').catch(async (e) => {
        // What the page showed when it went wrong, beside the server's history of the session.
        await screenshot(opened.page, `packaging-${label}-dev-failed`);
        const shown = await opened.page.locator('body').innerText().catch(() => '?');
        const history = await server.history('my-first-chat').catch(() => '?');
        throw new Error(`${e.message}\npage:\n${shown}\nserver history: ${JSON.stringify(history)}`, { cause: e });
      });
      await finish(opened);
      assert.match(readFileSync(join(dir, 'node_modules/.vite/deps/_metadata.json'), 'utf8'), /"agent-chat-store(\/[\w-]+)?": {/, 'the pre-bundler took the package');
      await stop(dev.child);
      // Production build, served by vite preview.
      await run(vite, ['build', '--logLevel', 'warn'], { cwd: dir, env: { ...process.env, ...env } });
      port = await freePort();
      const preview = await start(vite, ['preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], { cwd: dir, env, ready: /Local:\s+http/ });
      const built = await open(`http://127.0.0.1:${port}/`, `${label}-build`);
      await checkTurn(built, server, 'my-first-chat', 'hello again');
      await finish(built);
      await stop(preview.child);
      await stop(server.child);
    }
  });
}

const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

/** A static server of `files` (path → file) that forwards /api to `target`, streaming. */
function staticWithProxy(files, target) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    if (req.url.startsWith('/api/')) {
      const fwd = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      fwd.on('error', () => { res.writeHead(502); res.end(); });
      req.pipe(fwd);
      return;
    }
    const file = files[new URL(req.url, 'http://x').pathname];
    if (!file) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((res) => server.listen(0, '127.0.0.1', () => res(server)));
}

test('webpack 5, no WebAssembly configuration: a turn in the browser', { timeout: 300_000 }, async () => {
  const dir = await install('webpack');
  await run(join(dir, 'node_modules/.bin/webpack'), [], { cwd: dir });
  const server = await agentServer();
  const web = await staticWithProxy({ '/': join(dir, 'index.html'), '/main.js': join(dir, 'dist/main.js') }, server.url);
  try {
    const opened = await open(`http://127.0.0.1:${web.address().port}/`, 'webpack');
    await checkTurn(opened, server, 'webpack-app', 'hello webpack');
    await finish(opened);
  } finally {
    web.close();
    await stop(server.child);
  }
});

test('Next.js: rendered on the server, then a turn in the browser', { timeout: 600_000 }, async () => {
  const dir = await install('next');
  const server = await agentServer();
  const env = { AGENT_SERVER: server.url, NEXT_TELEMETRY_DISABLED: '1' };
  try {
    await run(join(dir, 'node_modules/.bin/next'), ['build'], { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
    const port = await freePort();
    const next = await start(join(dir, 'node_modules/.bin/next'), ['start', '-H', '127.0.0.1', '-p', String(port)], { cwd: dir, env, ready: /Ready|started server/i });
    const html = await (await fetch(`http://127.0.0.1:${port}/`)).text();
    assert.match(html, /data-testid="server-rendered">Rendered on the server\.</, 'the server component ran the package');
    assert.match(html, /<textarea[^>]*><\/textarea><button type="submit" disabled="">Send<\/button>/, 'the client component rendered on the server, its store idle');
    const opened = await open(`http://127.0.0.1:${port}/`, 'next');
    await checkTurn(opened, server, 'next-app', 'hello next');
    await finish(opened);
    await stop(next.child);
  } finally {
    await stop(server.child);
  }
});

test('Node ESM: every entry, server rendering, a turn; the .d.ts under tsc --strict', { timeout: 300_000 }, async () => {
  const dir = await install('node');
  const server = await agentServer();
  try {
    const { stdout } = await run(process.execPath, ['index.mjs'], { cwd: dir, env: { ...process.env, AGENT_SERVER: server.url } });
    const out = JSON.parse(stdout.trim().split('\n').at(-1));
    assert.deepEqual(out.entries, { root: 'function', react: 'function', assistantUi: ['function', 'function'], toolUi: 'function', aiSdk: ['function', 'function'] });
    assert.equal(out.replay, 'ok');
    assert.equal(out.web, 'ok');
    assert.match(out.ssr, /<p data-status="ready">0 messages<\/p>/);
    assert.equal(out.submit, 'sent');
    assert.equal(out.status, 'ready');
    assert.ok(out.answer.length > 0);
    assert.equal(out.answer, out.canonicalAnswer);
  } finally {
    await stop(server.child);
  }
  // The consumer of every public type, against the installed package's own .d.ts and exports
  // map, under both module resolutions a TypeScript app uses.
  cpSync(resolve(root, 'tests/ts/consumer.tsx'), join(dir, 'consumer.tsx'));
  // The drop-in useChat's types where `ai` is not installed (this consumer has none).
  cpSync(resolve(root, 'tests/ts/no-ai/use-chat.tsx'), join(dir, 'use-chat.tsx'));
  for (const [module, moduleResolution] of [['ESNext', 'Bundler'], ['NodeNext', 'NodeNext']]) {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module, moduleResolution, jsx: 'react-jsx', skipLibCheck: false, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: ['node'] },
      files: ['consumer.tsx', 'use-chat.tsx'],
    }));
    await run(join(dir, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: dir }).catch((e) => {
      throw new Error(`tsc (${moduleResolution}) failed:\n${e.stdout}${e.stderr}`);
    });
  }
});
