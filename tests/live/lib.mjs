// The live suite's pieces: the real upstream servers of ../shared/upstream/ (set up by its
// setup.sh, started by its start.sh, stopped by PID), what each server itself says a session
// holds (pi-native's `GET …/state`, legacy's `GET …/messages`), stores of the installed package
// whose every request goes through a recording fetch that can cut a streamed body, and a proxy
// that serves the built React example and passes `/api/*` on to a server (the real servers send
// no CORS headers, so the page must come from the same origin).
import { execFile, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { eventually } from '../../examples/e2e/lib.mjs';

export { eventually };
export const root = resolve(import.meta.dirname, '../..');
export const upstreamDir = resolve(root, '../shared/upstream');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ----- the servers ----------------------------------------------------------------------------

let setUp = false;
/** Runs setup.sh once per process: it installs what is missing and skips the rest (< 1 s). */
export function ensureUpstream() {
  if (setUp) return;
  const r = spawnSync('bash', [join(upstreamDir, 'setup.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`../shared/upstream/setup.sh failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  setUp = true;
}

// Servers still running when this process ends (a crash, a test runner's timeout) are killed
// by their PID: start.sh detaches them, so nothing else would.
const running = new Map(); // pid → its state folder
process.on('exit', () => {
  for (const [pid, state] of running) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    try { rmSync(state, { recursive: true, force: true }); } catch { /* still being written */ }
  }
});
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) process.once(signal, () => process.exit(code));

function gone(pid) {
  try { process.kill(pid, 0); } catch { return true; }
  // A zombie answers signal 0 until its parent reaps it.
  try { return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return true; }
}

/**
 * Starts a real upstream server (`pi-native` or `legacy`) with the scripted model at `tps`
 * tokens per second, on a free port of 127.0.0.1, with a fresh state folder of its own.
 */
export async function startUpstream(kind, { tps = 40 } = {}) {
  ensureUpstream();
  const state = mkdtempSync(join(tmpdir(), `acs-upstream-${kind}-`));
  const r = await new Promise((res) => execFile('bash', [join(upstreamDir, 'start.sh'), kind, '--tps', String(tps), '--state', state], { timeout: 180_000 },
    (error, stdout, stderr) => res({ error, stdout, stderr })));
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  const fields = Object.fromEntries(line.split(' ').map((kv) => kv.split('=')));
  if (r.error || !fields.url || !fields.pid) {
    rmSync(state, { recursive: true, force: true });
    throw new Error(`start.sh ${kind} failed (${r.error?.message}):\n${r.stdout}\n${r.stderr}`);
  }
  const pid = Number(fields.pid);
  running.set(pid, state);
  const server = kind === 'pi-native' ? piNative(fields.url, fields.agentType) : legacy(fields.url);
  server.pid = pid;
  server.stop = async () => {
    try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
    const end = Date.now() + 10_000;
    while (!gone(pid) && Date.now() < end) await sleep(100);
    if (!gone(pid)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    running.delete(pid);
    rmSync(state, { recursive: true, force: true });
  };
  return server;
}

async function json(method, url, body) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * What every server object has: `kind`, `url`, `createSession()`, `storeOptions(id)` (how a user
 * creates the store for it), `history(id)` (the server's own rows as `view` rows), `idle(id)`.
 */
function piNative(url, agentType) {
  const sessions = `${url}api/v1/agents/${agentType}/sessions`;
  const state = async (id) => (await json('GET', `${sessions}/${id}/state`)).state;
  return {
    kind: 'pi-native',
    url,
    agentType,
    createSession: async () => (await json('POST', sessions, { requestId: crypto.randomUUID() })).sessionId,
    storeOptions: (sessionId) => ({ protocol: 'pi-native', agentType, baseUrl: url, sessionId }),
    history: async (id) => view((await state(id)).messages),
    idle: async (id) => {
      const s = await state(id);
      return s.status === 'idle' && s.queue.followUps.length === 0;
    },
    /** The query a page of the React example needs for this server. */
    pageQuery: `&protocol=pi-native&agentType=${agentType}`,
  };
}

function legacy(url) {
  const chat = `${url}api/v1/agent/chat`;
  return {
    kind: 'legacy',
    url,
    // The legacy server runs a chat POST for an unknown session id in a new session of its own
    // id, so a session the store opens must exist first.
    createSession: async () => (await json('POST', `${url}api/v1/agent/sessions`, { title: 'live' })).id,
    storeOptions: (sessionId) => ({ baseUrl: url, sessionId, capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false } }),
    history: async (id) => view((await json('GET', `${chat}/${id}/messages`)).messages),
    // The stream route answers 204 before a session's first turn, a replay that ends at once
    // after a turn ended, and a body that stays open while one runs.
    idle: async (id) => {
      const ctl = new AbortController();
      const res = await fetch(`${chat}/${id}/stream?cursor=-1`, { signal: ctl.signal });
      if (res.status === 204) return true;
      const timer = setTimeout(() => ctl.abort(), 1_000);
      try { await res.text(); return true; } catch { return false; } finally { clearTimeout(timer); }
    },
    pageQuery: '&capabilities=native',
  };
}

// ----- messages as the user reads them ----------------------------------------------------------

function toolOf(p) {
  const name = p.type === 'tool-call' || p.type === 'dynamic-tool' ? p.toolName
    : p.type.startsWith('tool-') ? p.type.slice(5) : null;
  return name === null ? null : { name, state: p.state, input: p.input, output: shownOutput(p.output) };
}

/**
 * A tool's output as the store shows it (docs/assistant-ui.md, "A tool round trip"): pi's
 * content of text parts only is its text (a JSON object or array text as that value); anything
 * else as it is. The server keeps pi's content, so both sides are read through this.
 */
function shownOutput(output) {
  if (!Array.isArray(output) || output.length === 0 || !output.every((c) => c?.type === 'text' && typeof c.text === 'string')) return output;
  if (output.length === 1) {
    const text = output[0].text;
    if (/^\s*[[{]/.test(text)) {
      try { return JSON.parse(text); } catch { /* not JSON: the text */ }
    }
    return text;
  }
  return output.map((c) => c.text).join('\n');
}

/**
 * Rows of UIMessages (the store's, legacy's history) or of pi-native BoringChatMessages
 * (`/state`): role, the text parts joined, and the tool calls.
 */
export function view(messages) {
  return messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => ({
    role: m.role,
    text: m.parts.filter((p) => p.type === 'text').map((p) => p.text.trim()).filter(Boolean).join(' '),
    tools: m.parts.map(toolOf).filter(Boolean),
  }));
}

/**
 * The conversation as exchanges: each user message with everything the assistant answered to
 * it. How many assistant rows an answer takes (one per step, or one per turn) is the client's
 * choice; the text and tools are not.
 */
export function exchanges(rows) {
  const out = [];
  for (const m of rows) {
    if (m.role === 'user' || out.length === 0) out.push({ user: m.role === 'user' ? m.text : null, answer: [], tools: [] });
    if (m.role === 'assistant') {
      if (m.text) out.at(-1).answer.push(m.text);
      out.at(-1).tools.push(...m.tools);
    }
  }
  return out.map((x) => ({ ...x, answer: x.answer.join(' ') }));
}

export const userTexts = (rows) => rows.filter((m) => m.role === 'user').map((m) => m.text);
export const answerText = (rows) => rows.filter((m) => m.role === 'assistant').map((m) => m.text).join(' ');

// ----- stores of the installed package ----------------------------------------------------------

/** `METHOD path` with the session id as `:s` and no query: the route a request took. */
export function routeOf(method, url, sessionId) {
  const path = new URL(url).pathname.replace(/^\/api\/v1\//, '');
  return `${method} ${sessionId ? path.split(sessionId).join(':s') : path}`;
}

/**
 * A `fetch` that records each request (`requests`: {route, at, status}) and can cut a streamed
 * body: `cut(pattern, bytes)` makes the next `bytes` bytes of a body whose route matches
 * `pattern` (already open or opened later) the last ones, then its reader errors as a dropped
 * connection does. `cuts` lists where it cut.
 */
export function recordingFetch(sessionId) {
  const requests = [];
  const cuts = [];
  let armed = null;
  const wrap = (res, route) => {
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        if (armed && armed.pattern.test(route)) {
          if (value.byteLength >= armed.left) {
            controller.enqueue(value.subarray(0, armed.left));
            cuts.push({ route, at: Date.now() });
            armed = null;
            reader.cancel().catch(() => {});
            return controller.error(new TypeError('network error (cut by the test)'));
          }
          armed.left -= value.byteLength;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const recording = async (input, init = {}) => {
    const entry = { route: routeOf((init.method ?? 'GET').toUpperCase(), String(input), sessionId), at: Date.now() };
    requests.push(entry);
    const res = await fetch(input, init);
    entry.status = res.status;
    return res.body && ![101, 204, 205, 304].includes(res.status) ? wrap(res, entry.route) : res;
  };
  return {
    fetch: recording,
    requests,
    cuts,
    cut: (pattern, bytes) => { armed = { pattern, left: bytes }; },
  };
}

/**
 * A store of the installed package (`pkg`) on `sessionId`, created as a user creates it for
 * `server`, with its requests recorded (`net`) and what `onError` told collected (`errors`).
 */
export function openStore(pkg, server, sessionId) {
  const net = recordingFetch(sessionId);
  const errors = [];
  const store = new pkg.ChatStore({
    ...server.storeOptions(sessionId),
    fetch: net.fetch,
    onError: (e) => errors.push(`${e.code ?? e.kind}: ${e.message}`),
  });
  // As a page's first render subscribes: the store opens its session now (the tests poll).
  store.start();
  return {
    store,
    net,
    errors,
    snap: () => store.getSnapshot(),
    rows: () => view(store.getSnapshot().messages),
    /** How many requests took a route matching `pattern`. */
    count: (pattern) => net.requests.filter((r) => pattern.test(r.route)).length,
    dispose: () => store.dispose(),
  };
}

/** Route patterns, by what a request does, for both servers. */
export const ROUTES = {
  send: /^POST (agents\/[^/]+\/sessions\/:s\/prompt|agent\/chat)$/,
  followUp: /^POST (agents\/[^/]+\/sessions\/:s|agent\/chat\/:s)\/followup$/,
  takeBack: /^(POST agents\/[^/]+\/sessions\/:s\/queue\/clear|DELETE agent\/chat\/:s\/followup)$/,
  read: /^GET (agents\/[^/]+\/sessions\/:s\/(state|events)|agent\/chat\/:s\/(messages|stream))$/,
  events: /^GET agents\/[^/]+\/sessions\/:s\/events$/,
  chatStream: /^POST agent\/chat$/,
};

/** Counts of `requests` per route and answer status (where known), for a failure message. */
export function byRoute(requests) {
  const counts = {};
  for (const r of requests) {
    const key = r.status === undefined ? r.route : `${r.route} ${r.status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * Waits until each of `tabs` is `ready` with nothing queued (stalled items allowed when
 * `stalledOk`) and the server runs nothing for `sessionId`; then watches `quietMs` more and
 * reports what still changed. Never throws: a scenario asserts on what it returns, so a
 * failure says what the server ran rather than that something timed out.
 */
export async function settle(server, sessionId, tabs, { timeout = 60_000, quietMs = 1_500, stalledOk = false } = {}) {
  const calm = (t) => {
    const s = t.snap();
    return s.status === 'ready' && s.queued.every((q) => stalledOk && q.state === 'stalled');
  };
  let why = null;
  try {
    await eventually(async () => tabs.every(calm) && await server.idle(sessionId), { timeout, what: 'the tabs and the server to settle' });
  } catch {
    why = tabs.map((t, i) => `tab ${i}: status ${t.snap().status}, queued ${JSON.stringify(t.snap().queued.map((q) => [q.text, q.state]))}`).join('; ');
  }
  const before = await server.history(sessionId);
  const seen = tabs.map((t) => t.net.requests.length);
  await sleep(quietMs);
  const history = await server.history(sessionId);
  return {
    settled: why === null,
    why,
    history,
    grewWhileQuiet: JSON.stringify(before) !== JSON.stringify(history),
    quietRequests: tabs.map((t, i) => t.net.requests.slice(seen[i]).map((r) => r.route)),
  };
}

// ----- the React example through a same-origin proxy ---------------------------------------------

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.wasm': 'application/wasm' };

/**
 * Serves `dist` (the built example; unknown paths get index.html) and passes `/api/*` on to
 * `upstreamUrl` as it streams, on a free port of 127.0.0.1. Resolves `{url, close}`.
 */
export async function startProxy(upstreamUrl, dist = resolve(root, 'examples/react-chat/dist')) {
  const built = existsSync(join(dist, 'index.html')) ? statSync(join(dist, 'index.html')).mtimeMs : 0;
  const sources = ['examples/shared', 'examples/react-chat/src', 'pkg']
    .flatMap((d) => readdirSync(resolve(root, d), { recursive: true }).map((f) => resolve(root, d, f)));
  const newer = sources.find((f) => statSync(f).mtimeMs > built);
  if (newer) throw new Error(`${dist} is missing or older than ${newer}: bash scripts/build-examples.sh`);
  const target = new URL(upstreamUrl);
  const server = createServer((req, res) => {
    if (req.url.startsWith('/api/')) {
      const up = httpRequest({
        host: target.hostname, port: target.port, method: req.method, path: req.url,
        headers: { ...req.headers, host: target.host },
      }, (upRes) => {
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
      return;
    }
    let file = resolve(dist, '.' + decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!file.startsWith(dist + sep) || !existsSync(file) || statSync(file).isDirectory()) file = join(dist, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
