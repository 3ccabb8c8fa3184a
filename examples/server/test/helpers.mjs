// Test helpers: start the real server (a child process, port 0), talk to it, read its SSE with
// the `ai` package's own parser and chunk schema (so every chunk is checked against the AI SDK
// protocol).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonEventStream, uiMessageChunkSchema } from 'ai';

const SERVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'server.mjs');

/**
 * Starts `server.mjs --port 0 …args`; resolves once it printed its address. Its sessions are
 * kept in `dataDir` (`--data-dir`): a fresh temporary folder, removed by `stop()`, unless the
 * test gives its own (then it stays, so a second server can start on it).
 */
export async function startServer(args = [], { dataDir } = {}) {
  const own = dataDir === undefined && !args.includes('--data-dir');
  if (own) dataDir = mkdtempSync(path.join(os.tmpdir(), 'acs-test-'));
  const dirArgs = args.includes('--data-dir') ? [] : ['--data-dir', dataDir];
  const proc = spawn(process.execPath, [SERVER, '--port', '0', ...dirArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const cleanUp = () => {
    if (own) rmSync(dataDir, { recursive: true, force: true });
  };
  let out = '';
  let errText = '';
  proc.stderr.on('data', (d) => {
    errText += d;
  });
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}${errText}`)), 15_000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}${errText}`));
    });
  }).catch((e) => {
    cleanUp();
    throw e;
  });
  const api = `${base}/api/v1/agent`;
  return {
    base,
    api,
    proc,
    dataDir,
    stderr: () => errText,
    async stop() {
      // A process ended by a signal (a test's SIGKILL) has no exit code but has ended.
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      cleanUp();
    },
    control: (body) => postJson(`${base}/__control`, body).then((r) => r.json()),
    reset: () => postJson(`${base}/__control/reset`, {}).then((r) => r.json()),
    log: () => fetch(`${base}/__control/log`).then((r) => r.json()).then((j) => j.entries),
    chat: (body) => postJson(`${api}/chat`, chatBody(body)),
    followUp: (sid, body) => postJson(`${api}/chat/${encodeURIComponent(sid)}/followup`, body),
    deleteFollowUp: (sid, q) => fetch(`${api}/chat/${encodeURIComponent(sid)}/followup?${new URLSearchParams(q)}`, { method: 'DELETE' }),
    messages: (sid) => fetch(`${api}/chat/${encodeURIComponent(sid)}/messages`).then((r) => r.json()).then((j) => j.messages),
    resume: (sid, cursor, extra = {}) => fetch(`${api}/chat/${encodeURIComponent(sid)}/stream?${new URLSearchParams({ ...(cursor === undefined ? {} : { cursor: String(cursor) }), ...extra })}`),
    sessions: (q = {}) => fetch(`${api}/sessions?${new URLSearchParams(q)}`),
    patchSession: (sid, body) => postJson(`${api}/sessions/${encodeURIComponent(sid)}`, body, 'PATCH'),
    deleteSession: (sid) => fetch(`${api}/sessions/${encodeURIComponent(sid)}`, { method: 'DELETE' }),
    /** SPEC §13: `POST …/approval` `{approvalId, approved, reason?}` */
    approval: (sid, body) => postJson(`${api}/chat/${encodeURIComponent(sid)}/approval`, body),
    /** SPEC §13: `POST …/tool-output` `{toolCallId, output?, errorText?}` */
    toolOutput: (sid, body) => postJson(`${api}/chat/${encodeURIComponent(sid)}/tool-output`, body),
    history: (sid) => fetch(`${api}/chat/${encodeURIComponent(sid)}/messages`).then((r) => r.json()),
    stopTurn: (sid, turnId) => fetch(`${api}/chat/${encodeURIComponent(sid)}/turn?${new URLSearchParams(turnId ? { turnId } : {})}`, { method: 'DELETE' }),
  };
}

export function chatBody({ sessionId, message, ...rest }) {
  return { id: sessionId, sessionId, message, trigger: 'submit-message', clientTurnId: randomUUID(), ...rest };
}

export function postJson(url, body, method = 'POST') {
  return fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

export const sid = (name) => `${name}-${randomUUID().slice(0, 8)}`;

/**
 * Reads an SSE response chunk by chunk, each parsed and validated by the `ai` package.
 * `onChunk(chunk, index, chunks)` may be async (the reading waits for it).
 * Resolves with `{chunks, error}` (`error`: the body broke off).
 */
export async function readChunks(res, onChunk) {
  const chunks = [];
  const stream = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema });
  const reader = stream.getReader();
  let error;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!value.success) throw new Error(`chunk fails the AI SDK schema: ${JSON.stringify(value.rawValue)}: ${value.error}`);
      chunks.push(value.value);
      if (onChunk) await onChunk(value.value, chunks.length - 1, chunks);
    }
  } catch (e) {
    if (String(e?.message).startsWith('chunk fails')) throw e;
    error = e;
  }
  return { chunks, error };
}

/** Raw SSE text of a response (to check the framing itself). */
export async function readText(res) {
  return await res.text();
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const piChunks = (chunks) => chunks.filter((c) => c.type.startsWith('data-pi-'));

/** The text of each message the pi chunks stream, keyed by messageId, from deltas only. */
export function textsFromDeltas(chunks) {
  const texts = new Map();
  for (const c of chunks) {
    if (c.type === 'data-pi-text-delta') texts.set(c.data.messageId, (texts.get(c.data.messageId) ?? '') + c.data.delta);
  }
  return texts;
}

/** Text of a UIMessage's text parts. */
export const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

/**
 * The pi-native routes of the server `server()` returns (read when called, so a `before` may
 * start it): `base()` the session list and create route, `at(id, route)` a session's,
 * `state(id)` its document, `post(id, route, body)` a command, `follow(id, cursor)` its event
 * stream.
 */
export function nativeRoutes(server) {
  const base = () => `${server().base}/api/v1/agents/pi/sessions`;
  const at = (id, route = '') => `${base()}/${encodeURIComponent(id)}${route}`;
  const state = (id) => fetch(at(id, '/state')).then((r) => r.json());
  const post = (id, route, body) => postJson(at(id, `/${route}`), body);
  /** Follows `GET …/events?cursor=C`: parsed lines as they come. */
  function follow(id, cursor) {
    const ctl = new AbortController();
    const lines = [];
    const waiters = new Set();
    const notify = () => {
      for (const w of waiters) w();
    };
    const f = {
      lines,
      ended: false,
      error: undefined,
      status: undefined,
      events: () => lines.filter((l) => l.event).map((l) => l.event),
      /** Resolves with the events once `pred(events)` holds (or the stream ended). */
      until(pred, ms = 10_000) {
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            waiters.delete(check);
            reject(new Error(`timed out; events: ${f.events().map((e) => `${e.seq}:${e.type}`).join(' ')}`));
          }, ms);
          function check() {
            if (pred(f.events()) || f.ended) {
              clearTimeout(timer);
              waiters.delete(check);
              resolve(f.events());
            }
          }
          waiters.add(check);
          check();
        });
      },
      close: () => ctl.abort(),
    };
    const q = cursor === undefined ? '' : `?cursor=${cursor}`;
    f.done = (async () => {
      const res = await fetch(at(id, `/events${q}`), { signal: ctl.signal });
      f.status = res.status;
      f.contentType = res.headers.get('content-type');
      if (!res.ok) {
        f.body = await res.json();
        return;
      }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (line) {
            lines.push(JSON.parse(line));
            notify();
          }
        }
      }
    })()
      .catch((e) => {
        f.error = e;
      })
      .finally(() => {
        f.ended = true;
        notify();
      });
    return f;
  }
  return { base, at, state, post, follow };
}
