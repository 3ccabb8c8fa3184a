// A scripted HTTP server on 127.0.0.1 for the hook tests: each test queues the answers it
// wants (per method and path, used in order), and reads back the requests it got. The hooks
// reach it through the environment's own `fetch`, as an app's requests go out.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON when it is JSON, else its text (`''` when none). */
  body: any;
}

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

// Lets a page at another origin (happy-dom checks CORS as a browser does) read every answer.
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-expose-headers': '*',
};

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-vercel-ai-ui-message-stream': 'v1',
};

/** One SSE event carrying `chunk` as JSON, as a UI message stream frames its chunks. */
export function sseEvent(chunk: unknown): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A whole UI message stream answer: the chunks, then `[DONE]`. */
export function sse(chunks: unknown[]): Answer {
  return (_req, res) => {
    res.writeHead(200, { ...CORS, ...SSE_HEADERS });
    for (const c of chunks) res.write(sseEvent(c));
    res.end('data: [DONE]\n\n');
  };
}

/** A plain answer: a status, a body, a content type. */
export function plain(status: number, body = '', contentType = 'text/plain; charset=utf-8'): Answer {
  return (_req, res) => {
    res.writeHead(status, body === '' ? { ...CORS } : { ...CORS, 'content-type': contentType });
    res.end(body);
  };
}

/**
 * An answer the test writes as it goes: `write(chunk)` sends one SSE event (or `writeRaw` any
 * text), `end()` finishes it. `opened` resolves once the request arrived and the head was sent;
 * `cancelled` once the client went away before `end()` (a stop aborts the fetch).
 */
export class ControlledStream {
  private res: ServerResponse | null = null;
  private ended = false;
  private openedResolve!: () => void;
  private cancelledResolve!: () => void;
  readonly opened = new Promise<void>((r) => (this.openedResolve = r));
  readonly cancelled = new Promise<void>((r) => (this.cancelledResolve = r));
  wasCancelled = false;

  constructor(private readonly headers: Record<string, string> = SSE_HEADERS) {}

  readonly answer: Answer = (_req, res) => {
    this.res = res;
    res.writeHead(200, { ...CORS, ...this.headers });
    res.flushHeaders();
    res.on('close', () => {
      if (!this.ended) {
        this.wasCancelled = true;
        this.cancelledResolve();
      }
    });
    this.openedResolve();
  };

  write(chunk: unknown): void {
    this.writeRaw(sseEvent(chunk));
  }

  /** Raw bytes, to cut an event (or a character's UTF-8 bytes) anywhere. */
  writeBytes(bytes: Uint8Array): void {
    if (!this.res) throw new Error('the stream was not requested yet');
    this.res.write(bytes);
  }

  writeRaw(text: string): void {
    if (!this.res) throw new Error('the stream was not requested yet');
    this.res.write(text);
  }

  /** Ends the answer; an SSE one with `[DONE]` first. */
  end(done = true): void {
    if (!this.res) throw new Error('the stream was not requested yet');
    if (this.ended) return;
    this.ended = true;
    this.res.end(done && this.headers['content-type'] === 'text/event-stream' ? 'data: [DONE]\n\n' : undefined);
  }
}

export class ScriptedServer {
  url = '';
  requests: RecordedRequest[] = [];
  private server: Server | null = null;
  private answers = new Map<string, Answer[]>();
  private open = new Set<ServerResponse>();
  // Each test's routes live under a prefix of their own (`/t3/api/chat`): a request a finished
  // test's chat sends late finds no answer of the next test's.
  private prefix = '/t0';
  private tests = 0;

  /** The full URL of `path` for the current test. */
  at(path: string): string {
    return `${this.url}${this.prefix}${path}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  /** Starts the next test: forgets the requests and the answers not used (between tests); ends open answers. */
  reset(): void {
    for (const res of this.open) res.destroy();
    this.open.clear();
    this.requests = [];
    this.answers.clear();
    this.tests += 1;
    this.prefix = `/t${this.tests}`;
  }

  /** Queues `answer` for the next `method` request to `path`. */
  on(method: string, path: string, answer: Answer): void {
    const key = `${method} ${this.prefix}${path}`;
    this.answers.set(key, [...(this.answers.get(key) ?? []), answer]);
  }

  /** Queues a controlled stream for the next `method` request to `path` and returns it. */
  stream(method: string, path: string, headers?: Record<string, string>): ControlledStream {
    const s = new ControlledStream(headers);
    this.on(method, path, s.answer);
    return s;
  }

  /** The current test's requests to `path` (by method), preflights left out. */
  requestsTo(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path === `${this.prefix}${path}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS);
      res.end();
      return;
    }
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    let body: any = text;
    try {
      body = text === '' ? '' : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    this.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const queue = this.answers.get(`${req.method} ${path}`);
    const answer = queue?.shift();
    if (!answer) {
      plain(599, `no scripted answer for ${req.method} ${path}`)(req, res);
      return;
    }
    answer(req, res);
  }
}

/** A server for the calling test file: started before its tests, reset after each, stopped. */
export function scriptedServer(): ScriptedServer {
  const server = new ScriptedServer();
  beforeAll(() => server.start());
  afterEach(() => server.reset());
  afterAll(() => server.stop());
  return server;
}

/** The chunks of a whole one-text answer, `deltas` streamed in order. */
export function textAnswer(deltas: string[], extra: { messageId?: string; metadata?: unknown } = {}): unknown[] {
  const start: Record<string, unknown> = { type: 'start' };
  if (extra.messageId !== undefined) start.messageId = extra.messageId;
  const finish: Record<string, unknown> = { type: 'finish', finishReason: 'stop' };
  if (extra.metadata !== undefined) finish.messageMetadata = extra.metadata;
  return [
    start,
    { type: 'start-step' },
    { type: 'text-start', id: 'txt' },
    ...deltas.map((delta) => ({ type: 'text-delta', id: 'txt', delta })),
    { type: 'text-end', id: 'txt' },
    { type: 'finish-step' },
    finish,
  ];
}
