// A turn's chunk buffer, and the SSE responses that read it.
//
// A turn runs independently of any HTTP connection: its chunks go into `Turn.chunks` (index 0
// is the first chunk of the turn's stream) and every response — the chat POST that started
// the turn, or a later `GET …/stream?cursor=C` — is a reader that replays the chunks after its
// starting index and then follows the live ones until the turn ends. A dropped connection
// therefore loses nothing: the client resumes with the index of the last chunk it received.
// The framing (UI message chunks → `data: …` events → `[DONE]`, the
// `x-vercel-ai-ui-message-stream: v1` header) is the `ai` package's own.
import { randomUUID } from 'node:crypto';
import { createUIMessageStream, pipeUIMessageStreamToResponse } from 'ai';

export class Turn {
  /** @param {{sessionId:string, clientTurnId?:string, runtime:string}} init */
  constructor({ sessionId, clientTurnId, runtime }) {
    this.id = `turn-${randomUUID()}`;
    this.sessionId = sessionId;
    this.clientTurnId = clientTurnId;
    this.runtime = runtime;
    /** @type {object[]} */
    this.chunks = [];
    this.done = false;
    this.stopped = false;
    this.startedAt = Date.now();
    this.endedAt = undefined;
    this.abortController = new AbortController();
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** Projection seq: restarts at 1 with every turn. */
    this.seq = 0;
  }

  nextSeq() {
    this.seq += 1;
    return this.seq;
  }

  /** Appends a chunk and wakes the readers. */
  push(chunk) {
    if (this.done) return;
    this.chunks.push(chunk);
    for (const l of this.listeners) l();
  }

  /** Ends the stream: readers drain what is left and close with `[DONE]`. */
  end() {
    if (this.done) return;
    this.done = true;
    this.endedAt = Date.now();
    for (const l of this.listeners) l();
  }

  matches(turnId) {
    return turnId === this.id || (this.clientTurnId !== undefined && turnId === this.clientTurnId);
  }
}

/**
 * Streams the chunks of `turn` with index > `cursor` (then the live ones) to `res`, framed by
 * the `ai` package. `cut` (optional) destroys the socket after that many chunks went out.
 */
export function pipeTurn(res, turn, { cursor = -1, headers = {}, cutAfter, heartbeatMs } = {}) {
  let closed = false;
  res.once('close', () => {
    closed = true;
  });
  const stream = createUIMessageStream({
    execute: ({ writer }) =>
      new Promise((resolve) => {
        let next = cursor + 1;
        const pump = () => {
          while (!closed && next < turn.chunks.length) writer.write(turn.chunks[next++]);
          if (turn.done || closed) {
            turn.listeners.delete(pump);
            resolve();
          }
        };
        turn.listeners.add(pump);
        res.once('close', pump);
        pump();
      }),
  });
  if (cutAfter !== undefined && cutAfter >= 0) installCut(res, cutAfter);
  const piped = pipeUIMessageStreamToResponse({
    response: res,
    headers: { 'x-turn-id': turn.id, ...headers },
    stream,
  });
  if (heartbeatMs > 0) beat(res, heartbeatMs);
  return piped;
}

/**
 * Writes a `: heartbeat` SSE comment at once (the head is out) and every `ms` until the
 * response ends: a client tells a dead server from a quiet one by the missing beats (a proxy
 * in front of a dead server may keep the socket open). The `ai` package writes each event
 * in one `write`, so a comment never lands inside one.
 */
function beat(res, ms) {
  const write = () => {
    if (!res.writableEnded && !res.destroyed) res.write(': heartbeat\n\n');
  };
  write();
  const timer = setInterval(write, Math.max(10, ms));
  const stop = () => clearInterval(timer);
  res.once('close', stop);
  res.once('finish', stop);
}

/** Destroys the response's socket once `n` SSE data events were written (fault injection). */
function installCut(res, n) {
  const write = res.write.bind(res);
  let events = 0;
  let cutting = false;
  const cut = () => {
    res.socket?.destroy();
    res.destroy();
  };
  const end = res.end.bind(res);
  // Once cutting, the body must not end cleanly (no last chunk of the chunked encoding).
  res.end = (...args) => (cutting ? res : end(...args));
  res.write = (chunk, ...rest) => {
    if (cutting) return true;
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const isEvent = text.startsWith('data: ') && !text.startsWith('data: [DONE]');
    if (!isEvent) return write(chunk, ...rest);
    if (events >= n) {
      // n = 0: only the head goes out, then the connection dies.
      cutting = true;
      res.flushHeaders();
      setImmediate(cut);
      return true;
    }
    events += 1;
    if (events < n) return write(chunk, ...rest);
    cutting = true;
    return write(chunk, () => setImmediate(cut));
  };
}
