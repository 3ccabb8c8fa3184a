// Shared pieces of the end-to-end tests: the reference server as a child process, Debian's
// Chromium through playwright-core, and page helpers that read what the user sees.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const root = resolve(import.meta.dirname, '../..');
export const artifacts = resolve(root, 'target/e2e');
mkdirSync(artifacts, { recursive: true });

const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * Starts the reference server on a free port; resolves once it listens. Its sessions are kept
 * in `dataDir`: a fresh temporary folder (removed by `stop()`) unless given (then kept, so a
 * second server can start on it and find the same sessions).
 */
export async function startServer({ app = 'react-chat', runtime = 'pi', args = [], dataDir } = {}) {
  const ownDir = dataDir === undefined;
  if (ownDir) dataDir = mkdtempSync(join(tmpdir(), 'acs-e2e-'));
  const child = spawn(process.execPath, [
    resolve(root, 'examples/server/server.mjs'), '--port', '0', '--runtime', runtime,
    '--static', resolve(root, `examples/${app}/dist`), '--data-dir', dataDir, ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('server did not start: ' + output)), 20_000);
    child.stdout.on('data', (d) => {
      output += d;
      const m = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); res(m[1]); }
    });
    child.stderr.on('data', (d) => { output += d; });
    child.on('exit', (code) => rej(new Error(`server exited ${code}: ${output}`)));
  });
  const api = async (path, body) => {
    const r = await fetch(url + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  return {
    url,
    dataDir,
    control: (body) => api('/__control', body),
    reset: () => api('/__control/reset', {}),
    log: async () => (await api('/__control/log')).entries,
    messages: async (session) => (await api(`/api/v1/agent/chat/${encodeURIComponent(session)}/messages`)).messages,
    /** Kills the server at once (SIGKILL: no wind-down, its sockets just close); resolves when gone. */
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) await new Promise((res) => { child.once('exit', res); child.kill('SIGKILL'); });
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) await new Promise((res) => { child.once('exit', res); child.kill(); });
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The browser and the three servers most tests use: the React example on the pi runtime and on
 * the AI SDK runtime, and the assistant-ui example on pi. `stopAll` ends them.
 */
export async function startAll() {
  const [browser, pi, aiSdk, aui] = await Promise.all([
    launch(),
    startServer({ runtime: 'pi' }),
    startServer({ runtime: 'ai-sdk' }),
    startServer({ runtime: 'pi', app: 'assistant-ui' }),
  ]);
  return { browser, pi, aiSdk, aui };
}

export async function stopAll(env) {
  await Promise.all([env?.browser?.close(), env?.pi?.stop(), env?.aiSdk?.stop(), env?.aui?.stop()]);
}

/** The user messages' texts, in order. */
export const users = (msgs) => msgs.filter((m) => m.role === 'user').map((m) => m.text);

/** Waits until the page is `ready` with no waiting bubble. */
export async function settled(page) {
  await eventually(async () => (await status(page)) === 'ready' && (await queuedCount(page)) === 0, { what: 'ready with no waiting bubble', timeout: 45_000 });
}

export async function launch() {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

let sessionCounter = 0;
export function sessionId(prefix) {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${sessionCounter++}`;
}

/** Opens the app for `session`; records every request the page makes. */
export async function openChat(browser, server, session, { query = '' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => requests.push({ method: r.method(), url: r.url() }));
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${server.url}/?session=${encodeURIComponent(session)}${query}`);
  await page.getByTestId('composer-input').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=capabilities]')?.dataset.loaded === 'true');
  return { page, context, requests, errors };
}

/** Types `text` into the composer and presses Enter, as a user does. */
export async function typeAndEnter(page, text) {
  const input = page.getByTestId('composer-input');
  await input.fill(text);
  await input.press('Enter');
}

export async function status(page) {
  return page.getByTestId('status').getAttribute('data-status');
}

/**
 * Waits until the page shows at least `count` messages and is `ready`: a short answer's turn
 * is over. (Waiting for `streaming` first races a few-word answer, which can be over between
 * two looks of the page.)
 */
export async function answered(page, count, timeout = 30_000) {
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=message]').length >= n &&
    document.querySelector('[data-testid=status]')?.dataset.status === 'ready', count, { timeout });
}

export async function waitStatus(page, value, timeout = 30_000) {
  await page.waitForFunction((v) => document.querySelector('[data-testid=status]')?.dataset.status === v, value, { timeout });
}

/** The messages as the user sees them: role and text, in page order. */
export async function pageMessages(page) {
  return page.$$eval('[data-testid=message]', (els) => els.map((el) => ({
    role: el.dataset.role,
    text: Array.from(el.querySelectorAll('[data-testid=part-text]')).map((p) => p.textContent.trim()).join(' '),
    tools: Array.from(el.querySelectorAll('[data-testid=part-tool]')).map((p) => p.dataset.toolName),
  })));
}

/** The canonical history reduced to what the page shows. */
export function canonicalView(messages) {
  const rows = [];
  for (const m of messages) {
    const text = m.parts.filter((p) => p.type === 'text').map((p) => p.text.trim()).join(' ');
    const tools = m.parts.filter((p) => p.type === 'dynamic-tool' || p.type.startsWith('tool-')).map((p) => p.toolName ?? p.type.slice(5));
    const last = rows.at(-1);
    // The store shows one assistant row per answer (SPEC §14: a tool round trip's model calls
    // are its steps), where pi's history keeps a message per model call.
    if (m.role === 'assistant' && last?.role === 'assistant') {
      last.text = [last.text, text].filter(Boolean).join(' ');
      last.tools.push(...tools);
    } else {
      rows.push({ role: m.role, text, tools });
    }
  }
  return rows;
}

export async function queuedCount(page) {
  return page.getByTestId('queued').count();
}

export async function screenshot(page, name) {
  await page.screenshot({ path: resolve(artifacts, `${name}.png`), fullPage: true });
}

/**
 * Polls `fn` every `interval` ms until it returns something truthy, and returns that; a throw
 * counts as "not yet". After `timeout` ms it fails, naming `what` and the last value or error.
 * (The e2e tests and tests/packaging/ share it.)
 */
export async function eventually(fn, { timeout = 30_000, interval = 100, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, interval));
  }
  throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.stack : JSON.stringify(last)}`);
}

/** The names in the header's tool list (`snapshot.tools`), in page order. */
export async function toolCatalog(page) {
  return page.$$eval('[data-testid=tool-catalog] [data-tool]', (els) => els.map((el) => el.dataset.tool));
}

/** What a rich `pi-subagent` tool UI shows: status, task, steps and the nested transcript. */
export async function subagentView(locator) {
  return locator.evaluate((el) => ({
    renderer: el.dataset.renderer,
    toolName: el.dataset.toolName,
    state: el.dataset.state,
    open: el.open,
    status: el.querySelector('[data-testid=subagent-status]')?.dataset.status,
    task: el.querySelector('[data-testid=subagent-task]')?.textContent.trim(),
    steps: Array.from(el.querySelectorAll('[data-testid=subagent-step]')).map((s) => `${s.dataset.kind}:${s.dataset.status}`),
    transcript: Array.from(el.querySelectorAll('[data-testid=subagent-entry]')).map((e) => ({
      role: e.dataset.role,
      text: e.querySelector('.subagent-text')?.textContent.trim(),
    })),
  }));
}
