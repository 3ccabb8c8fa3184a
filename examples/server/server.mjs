#!/usr/bin/env node
// Reference server for agent-chat-store. See README.md for the flags and the control route.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp, DEFAULTS, NATIVE_SESSIONS, PROTOCOLS, ROUTES, RUNTIMES } from './lib/app.mjs';

const HELP = `Usage: node server.mjs [options]

  --port N               port on 127.0.0.1 (default 8787, 0 = a free one)        env PORT
  --runtime pi|ai-sdk    runtime of new sessions (default pi)                      env RUNTIME
  --tps N                tokens per second of the scripted model (0 = unpaced)     env TPS (default ${DEFAULTS.tps})
  --words N              filler words of a plain answer                            env WORDS (default ${DEFAULTS.words})
  --chunk-tokens N       tokens per streamed delta, ≈4 characters each             env CHUNK_TOKENS (default ${DEFAULTS.chunkTokens})
  --static DIR           also serve a built web app from DIR (SPA fallback)        env STATIC_DIR
  --resume-ttl S         seconds a finished turn stays resumable (default 60)
  --resume-204           GET …/stream answers 204 while the turn runs (nothing to join live)
  --fail-followups N     answer the next N follow-up POSTs with 503
  --followup-delay MS    delay every follow-up POST answer by MS
  --fail-answers N       answer the next N approval / tool-output POSTs with 503 (nothing applied)
  --answer-delay MS      hold every approval / tool-output POST answer MS (after applying it)
  --fail-docs-chats N    answer the next N POST /api/chat (the AI SDK docs' route) with 500
  --docs-chat-delay MS   hold every POST /api/chat answer MS (status submitted that long)
  --cut-docs-chat-after N  destroy the socket of the next POST /api/chat answer after N chunks
  --cut-stream-after N   destroy the socket of the next stream response after N chunks
  --cut-streams K        … of the next K stream responses (default 1)
  --not-found R[,R…]     answer these routes with 404: ${ROUTES.join(', ')}
  --agent-end-delay MS   pi: hold each agent_end MS (a follow-up then lands after pi's last queue poll)
  --ask-delay MS         pi: askUser runs MS before it asks the user (an early answer's window)
  --interactive-tools    ai-sdk: also the client tool getLocation and deleteFile (needs approval)   env INTERACTIVE_TOOLS=1
  --data-dir DIR         where sessions are kept across restarts, created if missing  env DATA_DIR
                         (default ${DEFAULTS.dataDir})
  --untitled-sessions    the session list gives a title only to renamed sessions
  --protocol sse|pi-native  the protocol this server presents (default sse); both are always
                         served: SSE on /api/v1/agent/…, pi-native on /api/v1/agents/pi/…  env PROTOCOL
  --heartbeat-ms MS      heartbeat interval: pi-native GET …/events frames, SSE chat and
                         stream routes' ': heartbeat' comments (default ${DEFAULTS.heartbeatMs})
  --replay-window N      pi-native: events kept replayable per session (default ${DEFAULTS.replayWindow})
  --cut-events-after N   pi-native: destroy the next GET …/events connection after N event lines
  --skip-seq N           pi-native: the next N events are published one seq too high (a gap)
  --native-sessions lenient|strict  pi-native (default lenient): lenient creates a session on
                         its first prompt and answers /state, /events of an unknown one empty;
                         strict, as the real server, only POST …/sessions creates, and every
                         session route of an unknown or deleted session is 404
  pi-native, as the real server (31361f15) behaves where it differs from its protocol:
  --native-selectors-dropped   selectors only as its reconciler recovers them by text: a
                         consumed follow-up's user message-start, user finals, /state's user
                         messages and a stop's clearedQueue mostly have none
  --native-selective-clear-noop  queue/clear with a selector removes nothing (cleared: 0)
  --native-nonce-requeue a follow-up with a clientNonce seen before (new requestId) is queued again
  --native-state-lags-streaming  a busy /state lacks the assistant message streaming now
  --native-state-ids     /state message ids are pi entry ids (positional while busy), no turnId
  --upstream-quirks      all five above
  -h, --help`;

function fail(message) {
  console.error(`${message}\n\n${HELP}`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: 'string' },
      runtime: { type: 'string' },
      tps: { type: 'string' },
      words: { type: 'string' },
      'chunk-tokens': { type: 'string' },
      static: { type: 'string' },
      'resume-ttl': { type: 'string' },
      'resume-204': { type: 'boolean' },
      'fail-followups': { type: 'string' },
      'followup-delay': { type: 'string' },
      'fail-answers': { type: 'string' },
      'answer-delay': { type: 'string' },
      'fail-docs-chats': { type: 'string' },
      'docs-chat-delay': { type: 'string' },
      'cut-docs-chat-after': { type: 'string' },
      'cut-stream-after': { type: 'string' },
      'cut-streams': { type: 'string' },
      'not-found': { type: 'string', multiple: true },
      'agent-end-delay': { type: 'string' },
      'ask-delay': { type: 'string' },
      'interactive-tools': { type: 'boolean' },
      'data-dir': { type: 'string' },
      'untitled-sessions': { type: 'boolean' },
      protocol: { type: 'string' },
      'heartbeat-ms': { type: 'string' },
      'replay-window': { type: 'string' },
      'cut-events-after': { type: 'string' },
      'skip-seq': { type: 'string' },
      'native-sessions': { type: 'string' },
      'native-selectors-dropped': { type: 'boolean' },
      'native-selective-clear-noop': { type: 'boolean' },
      'native-nonce-requeue': { type: 'boolean' },
      'native-state-lags-streaming': { type: 'boolean' },
      'native-state-ids': { type: 'boolean' },
      'upstream-quirks': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }).values;
} catch (e) {
  fail(e.message);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}

function int(name, value, fallback, min = 0) {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) fail(`--${name} must be a number >= ${min}`);
  return n;
}

const env = process.env;
const runtime = args.runtime ?? env.RUNTIME ?? DEFAULTS.runtime;
if (!RUNTIMES.includes(runtime)) fail(`--runtime must be one of ${RUNTIMES.join(', ')}`);
const notFound = (args['not-found'] ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
for (const r of notFound) if (!ROUTES.includes(r)) fail(`--not-found: unknown route ${r}`);
const staticDir = args.static ?? env.STATIC_DIR;
const cutStreamAfter = args['cut-stream-after'] === undefined ? null : int('cut-stream-after', args['cut-stream-after'], null);

const protocol = args.protocol ?? env.PROTOCOL ?? DEFAULTS.protocol;
if (!PROTOCOLS.includes(protocol)) fail(`--protocol must be one of ${PROTOCOLS.join(', ')}`);

const nativeSessions = args['native-sessions'] ?? DEFAULTS.nativeSessions;
if (!NATIVE_SESSIONS.includes(nativeSessions)) fail(`--native-sessions must be one of ${NATIVE_SESSIONS.join(', ')}`);

const dataDir = path.resolve(args['data-dir'] || env.DATA_DIR || DEFAULTS.dataDir);

const app = createApp({
  runtime,
  tps: int('tps', args.tps ?? env.TPS, DEFAULTS.tps),
  words: int('words', args.words ?? env.WORDS, DEFAULTS.words),
  chunkTokens: int('chunk-tokens', args['chunk-tokens'] ?? env.CHUNK_TOKENS, DEFAULTS.chunkTokens, 1),
  staticDir: staticDir ? path.resolve(staticDir) : undefined,
  resumeTtlMs: int('resume-ttl', args['resume-ttl'], DEFAULTS.resumeTtlMs / 1000) * 1000,
  resume204: args['resume-204'] ?? false,
  failFollowups: int('fail-followups', args['fail-followups'], 0),
  followupDelayMs: int('followup-delay', args['followup-delay'], 0),
  failAnswers: int('fail-answers', args['fail-answers'], 0),
  answerDelayMs: int('answer-delay', args['answer-delay'], 0),
  failDocsChats: int('fail-docs-chats', args['fail-docs-chats'], 0),
  docsChatDelayMs: int('docs-chat-delay', args['docs-chat-delay'], 0),
  cutDocsChatAfter: args['cut-docs-chat-after'] === undefined ? null : int('cut-docs-chat-after', args['cut-docs-chat-after'], null),
  cutStreamAfter,
  cutStreams: int('cut-streams', args['cut-streams'], 1),
  notFound,
  agentEndDelayMs: int('agent-end-delay', args['agent-end-delay'], 0),
  askDelayMs: int('ask-delay', args['ask-delay'], 0),
  interactiveTools: args['interactive-tools'] ?? ['1', 'true', 'yes'].includes(String(env.INTERACTIVE_TOOLS ?? '').toLowerCase()),
  dataDir,
  untitledSessions: args['untitled-sessions'] ?? false,
  protocol,
  heartbeatMs: int('heartbeat-ms', args['heartbeat-ms'], DEFAULTS.heartbeatMs, 10),
  replayWindow: int('replay-window', args['replay-window'], DEFAULTS.replayWindow),
  cutEventsAfter: args['cut-events-after'] === undefined ? null : int('cut-events-after', args['cut-events-after'], null),
  skipSeq: int('skip-seq', args['skip-seq'], 0),
  nativeSessions,
  // (undefined: off, unless --upstream-quirks)
  nativeSelectorsDropped: args['native-selectors-dropped'],
  nativeSelectiveClearNoop: args['native-selective-clear-noop'],
  nativeNonceRequeue: args['native-nonce-requeue'],
  nativeStateLagsStreaming: args['native-state-lags-streaming'],
  nativeStateIds: args['native-state-ids'],
  upstreamQuirks: args['upstream-quirks'] ?? false,
});

const port = int('port', args.port ?? env.PORT, 8787);
try {
  const actual = await app.listen(port);
  console.log(`listening on http://127.0.0.1:${actual}`);
  console.log(`runtime ${runtime}, ${app.state.tps} tokens/s${staticDir ? `, serving ${path.resolve(staticDir)}` : ''}`);
  console.log(
    protocol === 'pi-native'
      ? `protocol pi-native: ${'/api/v1/agents/pi/sessions/{sessionId}/…'} (the SSE routes of /api/v1/agent/… are served too)`
      : 'protocol sse: /api/v1/agent/… (pi-native on /api/v1/agents/pi/… too)',
  );
  console.log(`sessions in ${dataDir} (${app.store.records.size} kept)`);
} catch (e) {
  console.error(`cannot listen on 127.0.0.1:${port}: ${e.message}`);
  process.exit(1);
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) process.exit(1);
    stopping = true;
    await app.close();
    process.exit(0);
  });
}
