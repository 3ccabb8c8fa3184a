// A scriptable pi-native server (SPEC §14, reference/pi-native-protocol.md) for the Node
// tests: one session model (its events numbered by seq, its `/state`, prompts that run a turn
// answering "pong") served either over real HTTP on 127.0.0.1 (requests per second can be
// counted on a real clock) or through a scripted `fetch` (for tests on node:test's mocked
// clock). A test scripts the hostile part with `override(ctx)`; answering `undefined` leaves
// the request to the healthy session. Every request is logged with the time it arrived.
import http from 'node:http';

const enc = new TextEncoder();
const bytes = (b) => (typeof b === 'string' ? enc.encode(b) : b);

/** An NDJSON line: the event in its `{ref, seq, event}` envelope. */
export const line = (event, sessionId = 's1') =>
  JSON.stringify({ ref: { agentTypeId: 'pi', sessionId }, seq: event.seq, event }) + '\n';
export const heartbeat = () => JSON.stringify({ type: 'heartbeat', now: '2026-12-06T00:00:00Z' }) + '\n';

/** What a route asks, from a request path under `/api/v1/agents/pi/sessions/…`. */
function routeOf(pathname) {
  const m = pathname.match(/^\/api\/v1\/agents\/[^/]+\/sessions(?:\/([^/]+)(?:\/(.+))?)?$/);
  if (!m) return { route: 'other' };
  return { route: m[2] ?? (m[1] ? 'session' : 'sessions'), sessionId: m[1] && decodeURIComponent(m[1]) };
}

/**
 * The healthy session: `/state` is its document, `/events?cursor=N` a heartbeat, the events
 * after N, then the live ones (kept open); `/prompt` takes the message and runs a turn
 * answering `reply`; `/followup`, `/stop`, `/queue/clear`, `/rename` answer 202/200.
 */
export class NativeSession {
  constructor(sessionId = 's1') {
    this.sessionId = sessionId;
    this.seq = 0;
    this.events = [];
    this.messages = [];
    this.status = 'idle';
    this.turns = 0;
    this.reply = 'pong';
    /** Open events streams (pipes). */
    this.streams = new Set();
  }

  stateDoc() {
    return {
      ref: { agentTypeId: 'pi', sessionId: this.sessionId }, seq: this.seq,
      state: {
        protocolVersion: 1, sessionId: this.sessionId, seq: this.seq, status: this.status,
        messages: this.messages, queue: { followUps: [] }, followUpMode: 'one-at-a-time',
      },
    };
  }

  /** Numbers `event` and sends it to every open stream. */
  emit(event) {
    const e = { ...event, seq: ++this.seq };
    this.events.push(e);
    for (const s of this.streams) s.write(line(e, this.sessionId));
    return e;
  }

  /** A whole turn for the prompt `nonce` with `text`, answered `reply` (or `parts`). */
  runTurn(nonce, text, { reply = this.reply } = {}) {
    const k = ++this.turns;
    const turnId = `t${k}`;
    const user = { id: `u${k}`, role: 'user', status: 'done', clientNonce: nonce, parts: [{ type: 'text', text }] };
    const answer = { id: `a${k}`, role: 'assistant', status: 'done', parts: [{ type: 'text', text: reply }] };
    this.status = 'streaming';
    this.emit({ type: 'agent-start', turnId });
    this.emit({ type: 'message-start', messageId: user.id, role: 'user', clientNonce: nonce, text });
    this.emit({ type: 'message-end', messageId: user.id, final: user });
    this.emit({ type: 'message-start', messageId: answer.id, role: 'assistant' });
    this.emit({ type: 'message-delta', messageId: answer.id, partId: '0', kind: 'text', delta: reply });
    this.emit({ type: 'message-end', messageId: answer.id, final: answer });
    this.messages.push(user, answer);
    this.status = 'idle';
    this.emit({ type: 'agent-end', turnId, status: 'ok' });
  }

  /** The healthy answer to a request. */
  answer(ctx) {
    const json = (status, body) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    switch (ctx.route) {
      case 'state':
        return json(200, this.stateDoc());
      case 'events': {
        const cursor = Number(ctx.cursor ?? 0);
        if (cursor > this.seq) {
          return json(409, { error: { code: 'AGENT_SESSION_CURSOR_AHEAD', message: 'cursor ahead', details: { latestSeq: this.seq, minReplaySeq: 0 } } });
        }
        return {
          status: 200, headers: { 'content-type': 'application/x-ndjson' },
          stream: (pipe) => {
            pipe.write(heartbeat());
            for (const e of this.events) if (e.seq > cursor) pipe.write(line(e, this.sessionId));
            this.streams.add(pipe);
            pipe.onclose = () => this.streams.delete(pipe);
          },
        };
      }
      case 'prompt': {
        const b = ctx.body ?? {};
        if (this.status !== 'idle') {
          return json(409, { error: { code: 'AGENT_COMMAND_INVALID_STATE', message: 'prompt is invalid in current state', details: { status: this.status } } });
        }
        // The run's events follow the receipt, as a real server's often do.
        setImmediate(() => this.runTurn(b.clientNonce, b.content));
        return { ...json(202, { accepted: true, cursor: this.seq + 1, clientNonce: b.clientNonce, disposition: 'prompt' }) };
      }
      case 'followup':
        return json(202, { accepted: true, queued: true, cursor: this.seq, clientNonce: ctx.body?.clientNonce, clientSeq: ctx.body?.clientSeq, disposition: 'followup' });
      case 'stop':
      case 'interrupt':
      case 'queue/clear':
        return json(202, { accepted: true, cursor: this.seq });
      case 'rename':
        return json(200, { sessionId: this.sessionId, agentTypeId: 'pi', title: ctx.body?.title, status: 'idle' });
      case 'sessions':
        return json(200, { sessions: [], nextCursor: null });
      default:
        return json(404, { error: { code: 'AGENT_SESSION_NOT_FOUND', message: 'not found' } });
    }
  }
}

/**
 * The server: `session` (a NativeSession), `override(ctx)` (a test's script, `ctx` =
 * `{route, method, cursor, body, n, session}`; `n` counts that route), and the log of
 * requests `{route, method, cursor, at}`. `count(route, since)`: requests of that route since
 * a time (the clock `Date.now()` reads: real, or node:test's mocked one).
 */
export class NativeServer {
  constructor() {
    this.session = new NativeSession();
    this.override = () => undefined;
    this.log = [];
    this.counts = new Map();
    this.pipes = new Set();
  }

  /** Back to healthy: the override goes. */
  heal() {
    this.override = () => undefined;
  }

  count(route, since = 0) {
    return this.log.filter((r) => (route === undefined || r.route === route) && r.at >= since).length;
  }

  /** The most requests of `routes` within any `windowMs` (the log's times). */
  peakRate(routes, windowMs = 1000) {
    const at = this.log.filter((r) => routes.includes(r.route)).map((r) => r.at);
    let peak = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[i] - at[j] >= windowMs) j++;
      peak = Math.max(peak, i - j + 1);
    }
    return peak;
  }

  respond(url, method, bodyText) {
    const u = new URL(url);
    const { route } = routeOf(u.pathname);
    const n = (this.counts.get(route) ?? 0) + 1;
    this.counts.set(route, n);
    let body;
    try { body = bodyText ? JSON.parse(bodyText) : undefined; } catch { body = undefined; }
    const ctx = { route, method, cursor: u.searchParams.get('cursor'), body, n, session: this.session };
    this.log.push({ route, method, cursor: ctx.cursor, body, at: Date.now() });
    return this.override(ctx) ?? this.session.answer(ctx);
  }

  /** A pipe of an events body: `write(bytes|string)`, `end()`; `onclose` when the reader left. */
  pipe(write, end) {
    const p = {
      closed: false, onclose: undefined,
      write: (b) => { if (!p.closed) write(bytes(b)); },
      end: () => { if (!p.closed) { p.closed = true; this.pipes.delete(p); p.onclose?.(); end(); } },
      gone: () => { if (!p.closed) { p.closed = true; this.pipes.delete(p); p.onclose?.(); } },
    };
    this.pipes.add(p);
    return p;
  }

  /** A `fetch` serving this server (no network, no timers: usable on a mocked clock). */
  fetch() {
    return async (url, init = {}) => {
      const r = this.respond(String(url), init.method ?? 'GET', init.body);
      const signal = init.signal;
      if (r.hang) {
        // No answer at all, until the request is aborted.
        return new Promise((_, reject) => {
          signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        });
      }
      let stream = null;
      if (r.stream || r.body !== undefined) {
        let pipe;
        stream = new ReadableStream({
          cancel: () => pipe?.gone(),
          start: (c) => {
            if (r.stream) {
              const p = this.pipe((b) => c.enqueue(b), () => c.close());
              pipe = p;
              signal?.addEventListener('abort', () => {
                p.gone();
                try { c.error(new DOMException('aborted', 'AbortError')); } catch {}
              });
              r.stream(p);
            } else {
              for (const chunk of [].concat(r.body)) c.enqueue(bytes(chunk));
              c.close();
            }
          },
        });
      }
      return new Response(r.status === 204 ? null : stream, { status: r.status, headers: r.headers ?? {} });
    };
  }

  /** Serves this server over HTTP on 127.0.0.1 (port 0); resolves to its base URL. */
  async listen() {
    this.http = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d) => { text += d; });
      req.on('end', () => {
        const r = this.respond(`http://127.0.0.1${req.url}`, req.method, text);
        if (r.hang) return; // headers never come
        res.writeHead(r.status, r.headers ?? {});
        if (r.stream) {
          res.flushHeaders();
          const p = this.pipe((b) => res.write(b), () => res.end());
          res.on('close', () => p.gone());
          r.stream(p);
        } else {
          for (const chunk of [].concat(r.body ?? [])) res.write(bytes(chunk));
          res.end();
        }
      });
    });
    await new Promise((ok) => this.http.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${this.http.address().port}`;
  }

  /** Stops: every stream ended, every connection closed. */
  async close() {
    for (const p of [...this.pipes]) p.end();
    if (this.http) {
      this.http.closeAllConnections();
      await new Promise((ok) => this.http.close(ok));
    }
  }
}
