// The HTTP side: routes of SPEC §2, the fault switches and request log of the control route,
// CORS, and an optional static web app. Binds 127.0.0.1 only.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { safeValidateUIMessages } from 'ai';
import { aiSdkCatalog, AiSdkSession } from './ai-sdk-runtime.mjs';
import { docsChatRoute, serveWebHandler } from './docs-chat.mjs';
import { createPiNative, NATIVE_PREFIX, NATIVE_ROUTES, NativeError, nativeRouteOf, UPSTREAM_QUIRKS } from './pi-native.mjs';
import { err, piCatalog, PiSession } from './pi-runtime.mjs';
import { cleanTitle, CursorError, SessionStore } from './session-store.mjs';
import { pipeTurn } from './turn.mjs';

export const RUNTIMES = ['pi', 'ai-sdk'];
/**
 * `sse`: SPEC §2–§3 (AI SDK SSE on /api/v1/agent/…); `pi-native`: pi-native-protocol.md
 * (/api/v1/agents/pi/…). Both are always served; the setting says which one this server
 * presents (startup line, `GET /__control`, `GET /api/v1/agent/capabilities`'s `protocol`).
 */
export const PROTOCOLS = ['sse', 'pi-native'];
/**
 * pi-native sessions: `lenient` creates a session on its first prompt or follow-up and answers
 * `/state` and `/events` of an unknown one with an empty session; `strict` is the real server
 * (only `POST …/sessions` creates; every session route of an unknown session is 404).
 */
export const NATIVE_SESSIONS = ['lenient', 'strict'];
export { UPSTREAM_QUIRKS };
export const ROUTES = [
  ...NATIVE_ROUTES,
  'capabilities',
  'catalog',
  'chat',
  'followup',
  'followup-delete',
  'messages',
  'messages-put',
  'stream',
  'turn',
  'sessions',
  'session-patch',
  'session-delete',
  'approval',
  'tool-output',
  'docs-chat',
  'docs-stream',
];

/**
 * @typedef {object} Knobs  what a turn reads when it starts
 * @property {number} tps tokens per second of the scripted model (0: as fast as possible)
 * @property {number} words filler words of a plain answer
 * @property {number} chunkTokens tokens per streamed delta (≈4 characters each)
 * @property {number} askDelayMs pi: `askUser` runs this long before it asks (the window in which
 *   the question's card shows and an answer can come before the server asks)
 * @property {number} agentEndDelayMs pi: a slow `agent_end` listener (the window in which a
 *   follow-up lands after the loop's last queue poll)
 *
 * @typedef {object} Options
 * @property {'pi'|'ai-sdk'} runtime runtime of new sessions
 * @property {number} tps
 * @property {number} words
 * @property {number} chunkTokens
 * @property {string} [staticDir]
 * @property {number} resumeTtlMs how long a finished turn's chunks stay resumable
 * @property {boolean} resume204 the resume route (`GET …/stream`) answers 204 while the turn
 *   runs, as a server that keeps no live stream to join (a finished turn still replays)
 * @property {number} failFollowups
 * @property {number} followupDelayMs
 * @property {number} failAnswers answer the next N answer POSTs (approval, tool-output) with
 *   503, applying nothing
 * @property {number} answerDelayMs hold each answer POST's reply MS after applying it
 * @property {number|null} cutStreamAfter
 * @property {number} cutStreams
 * @property {string[]} notFound
 * @property {boolean} interactiveTools ai-sdk: new sessions also get `getLocation` (a client
 *   tool) and `deleteFile` (needs approval)
 * @property {boolean} strandFollowUps pi: as the real server, a follow-up accepted after pi's
 *   last queue poll is not run in its turn: it stays in pi's queue and runs after the next
 *   prompt (off: the turn drains it)
 * @property {boolean} legacyHistory as the real server, the history answer has no
 *   `activeTurn`, and a running turn's messages are left out until its first assistant
 *   message ended (off: `activeTurn` says what runs, the history holds what ended)
 * @property {string} dataDir where sessions are kept (session-store.mjs), created if missing
 * @property {boolean} untitledSessions the list gives a `title` only to renamed sessions (off:
 *   the others get the first line of their first user message)
 * @property {number} failDocsChats answer the next N `POST /api/chat` (the AI SDK docs' route)
 *   with 500
 * @property {number} docsChatDelayMs hold every `POST /api/chat` MS before it answers
 * @property {number|null} cutDocsChatAfter destroy the socket of the next `POST /api/chat`
 *   answer after N chunks (SSE events), once
 * @property {'lenient'|'strict'} nativeSessions see NATIVE_SESSIONS
 * @property {boolean} nativeSelectorsDropped pi-native, as the real server: selectors of user
 *   messages and queue rows only as its reconciler recovers them by text (mostly none)
 * @property {boolean} nativeSelectiveClearNoop pi-native, as the real server: `queue/clear`
 *   with a selector removes nothing (`cleared: 0`)
 * @property {boolean} nativeNonceRequeue pi-native, as the real server: a follow-up whose
 *   clientNonce was seen (new requestId) is queued again
 * @property {boolean} nativeStateLagsStreaming pi-native, as the real server: a busy `/state`
 *   lacks the assistant message streaming now
 * @property {boolean} nativeStateIds pi-native, as the real server: `/state` message ids are pi
 *   entry ids (positional while busy), not the streamed ids, and carry no turnId
 */

export const DEFAULTS = {
  runtime: 'pi',
  tps: 20,
  words: 12,
  chunkTokens: 1,
  staticDir: undefined,
  resumeTtlMs: 60_000,
  resume204: false,
  failFollowups: 0,
  followupDelayMs: 0,
  failAnswers: 0,
  answerDelayMs: 0,
  cutStreamAfter: null,
  cutStreams: 1,
  notFound: [],
  agentEndDelayMs: 0,
  askDelayMs: 0,
  interactiveTools: false,
  strandFollowUps: false,
  legacyHistory: false,
  dataDir: path.join(os.tmpdir(), 'agent-chat-store-demo'),
  untitledSessions: false,
  failDocsChats: 0,
  docsChatDelayMs: 0,
  cutDocsChatAfter: null,
  protocol: 'sse',
  heartbeatMs: 25_000,
  replayWindow: 1000,
  cutEventsAfter: null,
  skipSeq: 0,
  nativeSessions: 'lenient',
  // the real server's pi-native facts (UPSTREAM_QUIRKS; `upstreamQuirks` sets them all)
  nativeSelectorsDropped: false,
  nativeSelectiveClearNoop: false,
  nativeNonceRequeue: false,
  nativeStateLagsStreaming: false,
  nativeStateIds: false,
};

const MAX_BODY = 16 * 1024 * 1024;
const MAX_LOG = 5000;
const API = '/api/v1/agent';

class HttpError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.body = err(code, message, field);
  }
}

const validation = (message, field) => new HttpError(400, 'validation_error', message, field);

/** @param {Partial<Options>} options */
export function createApp(options = {}) {
  const { upstreamQuirks, ...given } = options;
  const initial = { ...DEFAULTS, ...given, notFound: [...(options.notFound ?? DEFAULTS.notFound)] };
  // `upstreamQuirks: true` turns on every UPSTREAM_QUIRKS switch not given on its own
  for (const k of UPSTREAM_QUIRKS) initial[k] = given[k] ?? (upstreamQuirks === true || DEFAULTS[k]);
  /** Live settings (the control route changes them). */
  const state = structuredClone(initial);
  state.cutStreamsLeft = state.cutStreamAfter === null ? 0 : state.cutStreams;
  /** @type {Map<string, PiSession|AiSdkSession>} the sessions in memory (opened or created) */
  const sessions = new Map();
  /** Every session, on disk: a session not in memory is re-created from it when opened. */
  const store = new SessionStore(initial.dataDir);
  const log = [];
  let logId = 0;

  /** @type {Knobs} shared by reference: sessions read the current values when a turn starts */
  const knobs = {
    get tps() {
      return state.tps;
    },
    get words() {
      return state.words;
    },
    get chunkTokens() {
      return state.chunkTokens;
    },
    get agentEndDelayMs() {
      return state.agentEndDelayMs;
    },
    get askDelayMs() {
      return state.askDelayMs;
    },
    get strandFollowUps() {
      return state.strandFollowUps;
    },
  };

  /**
   * The session `id`: in memory, else re-created from the store, else (`create`) a new one of
   * `runtime` (default: the current runtime setting; the pi-native routes ask for `pi`).
   */
  function session(id, create, runtime = state.runtime) {
    let s = sessions.get(id);
    if (s) return s;
    const kept = store.get(id);
    if (kept) {
      const journal = store.journal(id);
      s = kept.runtime === 'ai-sdk' ? new AiSdkSession(id, knobs, { journal }) : new PiSession(id, knobs, { journal });
    } else if (create) {
      s = runtime === 'ai-sdk'
        ? new AiSdkSession(id, knobs, { interactiveTools: state.interactiveTools, journal: store.createAiSdk(id, { interactiveTools: state.interactiveTools }) })
        : new PiSession(id, knobs, { journal: store.createPi(id) });
    }
    if (s) {
      sessions.set(id, s);
      // Every pi session speaks both protocols: a turn started on either shows on both.
      if (s instanceof PiSession) piNative.attach(s);
    }
    return s;
  }

  /** Stops a running turn of the session, forgets it, removes its files; false: no such session. */
  async function removeSession(sid) {
    const s = sessions.get(sid);
    if (!s && !store.get(sid)) return false;
    const turn = s?.activeTurn;
    store.remove(sid); // first: what the stopped turn still ends is written nowhere
    if (s) {
      s.dispose();
      sessions.delete(sid);
    }
    if (turn) await woundDown(turn);
    return true;
  }

  const piNative = createPiNative({ session, store, settings: state, removeSession });

  function controlState() {
    const { cutStreamsLeft, ...rest } = state;
    const upstreamQuirks = UPSTREAM_QUIRKS.every((k) => state[k]);
    return { ...rest, upstreamQuirks, cutStreamsLeft, sessions: [...sessions.values()].map((s) => ({ id: s.id, runtime: s.runtime, turnActive: !!s.activeTurn })) };
  }

  function applyControl(body) {
    const num = (k, min = 0) => {
      if (body[k] === undefined) return;
      const v = Number(body[k]);
      if (!Number.isFinite(v) || v < min) throw validation(`${k} must be a number >= ${min}`, k);
      state[k] = v;
    };
    num('failFollowups');
    num('followupDelayMs');
    num('failAnswers');
    num('answerDelayMs');
    num('tps');
    num('words');
    num('chunkTokens', 1);
    num('agentEndDelayMs');
    num('askDelayMs');
    num('failDocsChats');
    num('docsChatDelayMs');
    if (body.cutDocsChatAfter !== undefined) {
      const v = body.cutDocsChatAfter;
      if (v !== null && (!Number.isInteger(v) || v < 0)) throw validation('cutDocsChatAfter must be an integer >= 0 or null', 'cutDocsChatAfter');
      state.cutDocsChatAfter = v;
    }
    if (body.cutStreamAfter !== undefined) {
      if (body.cutStreamAfter === null) {
        state.cutStreamAfter = null;
        state.cutStreamsLeft = 0;
      } else {
        const v = Number(body.cutStreamAfter);
        if (!Number.isInteger(v) || v < 0) throw validation('cutStreamAfter must be an integer >= 0 or null', 'cutStreamAfter');
        state.cutStreamAfter = v;
        state.cutStreams = body.cutStreams === undefined ? 1 : Number(body.cutStreams);
        state.cutStreamsLeft = state.cutStreams;
      }
    } else if (body.cutStreams !== undefined) {
      state.cutStreams = Number(body.cutStreams);
      state.cutStreamsLeft = state.cutStreams;
    }
    if (body.notFound !== undefined) {
      const list = Array.isArray(body.notFound) ? body.notFound : Object.keys(body.notFound).filter((k) => body.notFound[k]);
      for (const r of list) if (!ROUTES.includes(r)) throw validation(`unknown route ${r}; one of ${ROUTES.join(', ')}`, 'notFound');
      state.notFound = list;
    }
    // `upstreamQuirks` first: a body may set all, then take one back (`{upstreamQuirks: true,
    // nativeStateIds: false}`).
    if (body.upstreamQuirks !== undefined) {
      if (typeof body.upstreamQuirks !== 'boolean') throw validation('upstreamQuirks must be a boolean', 'upstreamQuirks');
      for (const k of UPSTREAM_QUIRKS) state[k] = body.upstreamQuirks;
    }
    for (const k of ['strandFollowUps', 'legacyHistory', 'untitledSessions', 'resume204', ...UPSTREAM_QUIRKS]) {
      if (body[k] === undefined) continue;
      if (typeof body[k] !== 'boolean') throw validation(`${k} must be a boolean`, k);
      state[k] = body[k];
    }
    if (body.interactiveTools !== undefined) {
      if (typeof body.interactiveTools !== 'boolean') throw validation('interactiveTools must be a boolean', 'interactiveTools');
      state.interactiveTools = body.interactiveTools;
    }
    if (body.heartbeatMs !== undefined) num('heartbeatMs', 10);
    for (const k of ['replayWindow', 'skipSeq']) {
      if (body[k] === undefined) continue;
      // skipSeq: true is one skip
      const v = k === 'skipSeq' && body[k] === true ? 1 : body[k];
      if (!Number.isInteger(v) || v < 0) throw validation(`${k} must be an integer >= 0`, k);
      state[k] = v;
    }
    if (body.cutEventsAfter !== undefined) {
      const v = body.cutEventsAfter;
      if (v !== null && (!Number.isInteger(v) || v < 0)) throw validation('cutEventsAfter must be an integer >= 0 or null', 'cutEventsAfter');
      state.cutEventsAfter = v;
    }
    if (body.nativeSessions !== undefined) {
      if (!NATIVE_SESSIONS.includes(body.nativeSessions)) throw validation(`nativeSessions must be one of ${NATIVE_SESSIONS.join(', ')}`, 'nativeSessions');
      state.nativeSessions = body.nativeSessions;
    }
    if (body.protocol !== undefined) {
      if (!PROTOCOLS.includes(body.protocol)) throw validation(`protocol must be one of ${PROTOCOLS.join(', ')}`, 'protocol');
      state.protocol = body.protocol;
    }
    if (body.runtime !== undefined) {
      if (!RUNTIMES.includes(body.runtime)) throw validation(`runtime must be one of ${RUNTIMES.join(', ')}`, 'runtime');
      state.runtime = body.runtime;
    }
  }

  function reset() {
    for (const s of sessions.values()) s.dispose();
    sessions.clear();
    store.clear(); // "sessions dropped" means the kept ones too: a reset server starts empty
    piNative.reset();
    log.length = 0;
    Object.assign(state, structuredClone(initial));
    state.cutStreamsLeft = state.cutStreamAfter === null ? 0 : state.cutStreams;
  }

  // ----- the routes -------------------------------------------------------------------------

  async function capabilities(req, res, url) {
    const id = url.searchParams.get('sessionId');
    const s = id ? session(id, false) : undefined;
    const caps = s
      ? s.capabilities()
      : state.runtime === 'ai-sdk'
        ? { nativeFollowUp: false, aiSdkOwnsHistory: true, runtime: 'ai-sdk' }
        : { nativeFollowUp: true, aiSdkOwnsHistory: false, runtime: 'pi', followUpMode: 'one-at-a-time' };
    // `heartbeatMs`: the interval of the `: heartbeat` comments of the chat and stream routes,
    // so a client watches the beats from the first one (it would learn it from two).
    json(res, 200, { ...caps, resume: true, stop: true, protocol: state.protocol, heartbeatMs: state.heartbeatMs });
  }

  /** The session's tools (unknown session: those a new one of the default runtime gets). */
  async function catalog(req, res, url) {
    const id = url.searchParams.get('sessionId');
    const s = id ? session(id, false) : undefined;
    json(res, 200, s ? s.catalog() : state.runtime === 'ai-sdk' ? aiSdkCatalog({ interactiveTools: state.interactiveTools }) : piCatalog());
  }

  async function chat(req, res, body, entry) {
    if (!isObject(body)) throw validation('body must be a JSON object');
    const sid = body.sessionId ?? body.id;
    if (typeof sid !== 'string' || sid.length === 0) throw validation('String must contain at least 1 character(s)', 'sessionId');
    if (body.id !== undefined && body.sessionId !== undefined && body.id !== body.sessionId) throw validation('id and sessionId differ', 'id');
    entry.sessionId = sid;
    const trigger = body.trigger ?? 'submit-message';
    if (trigger !== 'submit-message' && trigger !== 'regenerate-message') throw validation('trigger must be submit-message or regenerate-message', 'trigger');
    for (const k of ['messageId', 'clientTurnId']) {
      if (body[k] !== undefined && typeof body[k] !== 'string') throw validation(`${k} must be a string`, k);
    }
    const attachments = checkAttachments(body.attachments);
    const message = body.message ?? '';
    if (typeof message !== 'string') throw validation('message must be a string', 'message');
    const busy = (sess) => {
      if (!sess?.activeTurn) return;
      const e = new HttpError(409, 'turn_already_active', 'a turn is already running for this session');
      e.body.error.turnId = sess.activeTurn.id;
      throw e;
    };
    const existing = session(sid, false);
    busy(existing);
    const runtime = existing?.runtime ?? state.runtime;
    let turn;
    if (runtime === 'pi') {
      if (trigger === 'regenerate-message') throw validation('regenerate-message needs the ai-sdk runtime', 'trigger');
      if (message.trim() === '' && attachments.length === 0) throw validation('message is required', 'message');
      const s = session(sid, true); // only now: a refused chat creates no agent
      turn = s.startTurn({ message, attachments, messageId: body.messageId, clientTurnId: body.clientTurnId });
    } else {
      let messages;
      if (body.messages !== undefined) {
        // The client's history, as `useChat` sends it: ending with the user message to answer
        // (a new one, an edited one, the one before a regenerated answer), or with the
        // assistant message to continue after tool outputs or approvals (then `message` is
        // empty). The model answers exactly these.
        if (!Array.isArray(body.messages)) throw validation('messages must be an array', 'messages');
        messages = await validMessages(body.messages);
      } else if (trigger === 'submit-message' && message.trim() === '' && attachments.length === 0 && !continuesStored(session(sid, false), body.messageId)) {
        throw validation('message is required', 'message');
      }
      const s = session(sid, true);
      busy(s); // again: another chat may have started one during the validation above
      if (messages === undefined) messages = fromStoredHistory(s.history, { trigger, messageId: body.messageId, message, attachments });
      if (messages.length === 0) throw validation('nothing to answer: messages is empty', 'messages');
      turn = s.startTurn({ messages, clientTurnId: body.clientTurnId, regenerate: trigger === 'regenerate-message' });
    }
    entry.turnId = turn.id;
    await streamTurn(res, turn, -1, entry);
  }

  async function streamTurn(res, turn, cursor, entry) {
    let cutAfter;
    if (state.cutStreamsLeft > 0 && state.cutStreamAfter !== null) {
      state.cutStreamsLeft -= 1;
      cutAfter = state.cutStreamAfter;
      entry.cutAfter = cutAfter;
    }
    await pipeTurn(res, turn, { cursor, cutAfter, heartbeatMs: state.heartbeatMs, headers: corsHeaders(res.req) });
  }

  async function followUp(req, res, sid, body, entry) {
    if (state.failFollowups > 0) {
      state.failFollowups -= 1;
      entry.fault = 'fail';
      throw new HttpError(503, 'unavailable', 'scripted failure (failFollowups)');
    }
    const [status, answer] = acceptFollowUp(sid, body);
    // The delay fault holds the answer, not the work: the follow-up is already queued (as on
    // a slow network), so a client that gives up and retries gets `duplicate`.
    if (state.followupDelayMs > 0) {
      entry.delayedMs = state.followupDelayMs;
      await sleep(state.followupDelayMs);
    }
    json(res, status, answer);
  }

  /** The follow-up rules; returns `[status, body]`. */
  function acceptFollowUp(sid, body) {
    const s = session(sid, false);
    const runtime = s?.runtime ?? state.runtime;
    if (runtime === 'ai-sdk') {
      return [409, err('FOLLOWUP_UNSUPPORTED', 'this runtime has no native follow-up: wait for the turn to end')];
    }
    try {
      if (!isObject(body)) throw validation('body must be a JSON object');
      if (typeof body.message !== 'string') throw validation('message is required', 'message');
      const attachments = checkAttachments(body.attachments);
      if (body.message.trim() === '' && attachments.length === 0) throw validation('message is required', 'message');
      const clientSeq = body.clientSeq ?? undefined;
      if (clientSeq !== undefined && (!Number.isSafeInteger(clientSeq) || clientSeq < 0)) throw validation('clientSeq must be an integer >= 0', 'clientSeq');
      const clientNonce = body.clientNonce ?? undefined;
      if (clientNonce !== undefined && (typeof clientNonce !== 'string' || clientNonce === '')) throw validation('clientNonce must be a non-empty string', 'clientNonce');
      if (!s) return [409, err('followup_session_not_ready', 'no agent for this session yet: send a message first')];
      return s.followUp({ message: body.message, attachments, clientSeq, clientNonce });
    } catch (e) {
      if (e instanceof HttpError) return [e.status, e.body];
      throw e;
    }
  }

  // ----- the AI SDK docs' route (`POST /api/chat`, docs-chat.mjs) ------------------------------

  const docsChatPost = docsChatRoute({ knobs });

  /**
   * `POST /api/chat` `{id, messages, trigger, messageId, …}`: what a plain `useChat` app talks
   * to. The `failDocsChats` fault answers 500 (before anything runs), `docsChatDelayMs` holds
   * the answer (status `submitted` stays that long), `cutDocsChatAfter` cuts the next answer's
   * connection after N chunks.
   */
  async function docsChat(req, res, body, entry) {
    if (isObject(body) && typeof body.id === 'string') entry.sessionId = body.id;
    if (state.docsChatDelayMs > 0) {
      entry.delayedMs = state.docsChatDelayMs;
      await sleep(state.docsChatDelayMs);
    }
    if (state.failDocsChats > 0) {
      state.failDocsChats -= 1;
      entry.fault = 'fail';
      throw new HttpError(500, 'internal', 'scripted failure (failDocsChats)');
    }
    if (!isObject(body) || !Array.isArray(body.messages)) throw validation('messages must be an array', 'messages');
    const r = await safeValidateUIMessages({ messages: body.messages });
    if (!r.success) throw validation(`messages: ${r.error.message}`.slice(0, 500), 'messages');
    let cutAfter;
    if (state.cutDocsChatAfter !== null) {
      cutAfter = state.cutDocsChatAfter;
      state.cutDocsChatAfter = null;
      entry.cutAfter = cutAfter;
    }
    await serveWebHandler(docsChatPost, req, res, body, { cutAfter });
  }

  // ----- human in the loop (SPEC §13, pi) ---------------------------------------------------

  /**
   * `POST …/approval` and `POST …/tool-output`: the user's answer to a tool call the pi agent
   * holds open. Checked in this order: the `failAnswers` fault (503, nothing applied), the
   * body (400), then the session's wait (202 applied; 409 `already_answered`; 404 unknown or
   * no longer waiting). The `answerDelayMs` fault holds the reply after the answer was applied.
   */
  async function answer(req, res, sid, body, entry, kind) {
    if (state.failAnswers > 0) {
      state.failAnswers -= 1;
      entry.fault = 'fail';
      throw new HttpError(503, 'unavailable', 'scripted failure (failAnswers)');
    }
    if (!isObject(body)) throw validation('body must be a JSON object');
    let status;
    let answerBody;
    const s = session(sid, false);
    const pi = s instanceof PiSession ? s : undefined;
    if (kind === 'approval') {
      const { approvalId, approved, reason } = body;
      if (typeof approvalId !== 'string' || approvalId === '') throw validation('approvalId must be a non-empty string', 'approvalId');
      if (typeof approved !== 'boolean') throw validation('approved must be a boolean', 'approved');
      if (reason !== undefined && reason !== null && typeof reason !== 'string') throw validation('reason must be a string', 'reason');
      [status, answerBody] = pi
        ? pi.answerApproval({ approvalId, approved, reason: reason || undefined })
        : [404, err('approval_not_found', `no approval ${approvalId} waits in this session`)];
    } else {
      const { toolCallId, output, errorText } = body;
      if (typeof toolCallId !== 'string' || toolCallId === '') throw validation('toolCallId must be a non-empty string', 'toolCallId');
      if (errorText !== undefined && errorText !== null && typeof errorText !== 'string') throw validation('errorText must be a string', 'errorText');
      const hasError = typeof errorText === 'string';
      const text = hasError ? undefined : outputText(output);
      if (!hasError && text === undefined) throw validation('output (a string, or {answer} / {text}) or errorText is required', 'output');
      [status, answerBody] = pi
        ? pi.answerToolOutput({ toolCallId, ...(hasError ? { errorText } : { text }) })
        : [404, err('tool_call_not_found', `no tool call ${toolCallId} waits in this session`)];
    }
    if (state.answerDelayMs > 0) {
      entry.delayedMs = state.answerDelayMs;
      await sleep(state.answerDelayMs);
    }
    json(res, status, answerBody);
  }

  async function followUpDelete(req, res, sid, url) {
    const nonce = url.searchParams.get('clientNonce') || undefined;
    const seqText = url.searchParams.get('clientSeq');
    let seq;
    if (seqText !== null && seqText !== '') {
      if (!/^\d+$/.test(seqText)) throw validation('clientSeq must be an integer >= 0', 'clientSeq');
      seq = Number(seqText);
    }
    if (nonce === undefined && seq === undefined) throw validation('clientNonce or clientSeq is required', 'clientNonce');
    const s = session(sid, false);
    const outcome = s instanceof PiSession ? s.deleteFollowUp({ clientSeq: seq, clientNonce: nonce }) : 'unknown';
    // SPEC §6's race: pi took it already, so it runs; the client must not send it again. The
    // real server answers 204 whatever happened (the `legacyHistory` switch keeps that).
    if (!state.legacyHistory && (outcome === 'taken' || outcome === 'consumed')) {
      throw new HttpError(409, 'conflict', 'followup_already_started');
    }
    empty(res, 204);
  }

  async function messagesGet(req, res, sid) {
    const s = session(sid, false);
    const messages = s ? s.uiMessages({ omitUnfinishedTurn: state.legacyHistory }) : [];
    if (state.legacyHistory) return json(res, 200, { messages });
    // SPEC §12: what runs, so a reloaded client attaches to it at once.
    const turn = s?.activeTurn;
    // The client's branches (AI SDK mode), as it stored them.
    const tree = s?.tree ? { tree: s.tree } : {};
    json(res, 200, { messages, ...tree, activeTurn: turn ? { turnId: turn.id } : null });
  }

  async function messagesPut(req, res, sid, body) {
    if (!isObject(body) || !Array.isArray(body.messages)) throw validation('messages must be an array', 'messages');
    const runtime = session(sid, false)?.runtime ?? state.runtime;
    if (runtime !== 'ai-sdk') {
      throw new HttpError(409, 'history_owned_by_server', 'the pi agent owns this session\'s history; it is not stored from the client');
    }
    const messages = await validMessages(body.messages);
    const tree = await validTree(body.tree);
    const s = session(sid, true);
    s.setHistory(messages);
    // A PUT without a tree: the client keeps no branches (any more).
    s.setTree(tree);
    empty(res, 204);
  }

  async function resume(req, res, sid, url, entry) {
    const raw = url.searchParams.get('cursor');
    let cursor = -1;
    if (raw !== null) {
      if (!/^-?\d+$/.test(raw) || Number(raw) < -1) throw validation('cursor must be an integer >= -1', 'cursor');
      cursor = Number(raw);
    }
    const s = session(sid, false);
    const turnId = url.searchParams.get('turnId');
    let turn = s?.activeTurn ?? s?.lastTurn ?? null;
    if (turn && turnId && !turn.matches(turnId)) turn = s.lastTurn?.matches(turnId) ? s.lastTurn : null;
    if (turn && turn.done && Date.now() - turn.endedAt > state.resumeTtlMs) turn = null;
    if (!turn) return empty(res, 204);
    if (state.resume204 && !turn.done) {
      entry.fault = 'resume204';
      return empty(res, 204);
    }
    if (cursor >= turn.chunks.length) {
      throw new HttpError(416, 'range_not_satisfiable', `cursor ${cursor} is outside the buffer (0..${turn.chunks.length - 1})`);
    }
    entry.turnId = turn.id;
    await streamTurn(res, turn, cursor, entry);
  }

  async function turnDelete(req, res, sid, url) {
    const s = session(sid, false);
    const turn = s?.activeTurn;
    const stopped = s?.stop(url.searchParams.get('turnId') || undefined);
    // Answered once the turn wound down (its history written: what the client reads next is
    // what was kept), bounded.
    if (stopped && turn) await woundDown(turn);
    empty(res, 204);
  }

  // ----- the session list (SPEC §11) --------------------------------------------------------

  /** A list item: `title` is the rename's, else (unless `untitledSessions`) the first line. */
  function listItem(rec) {
    const title = rec.name ?? (state.untitledSessions ? undefined : rec.firstLine);
    return {
      id: rec.id,
      ...(title ? { title } : {}),
      createdAt: new Date(rec.createdAt).toISOString(),
      updatedAt: new Date(rec.updatedAt).toISOString(),
      running: !!sessions.get(rec.id)?.activeTurn,
      archived: rec.archived,
    };
  }

  async function sessionsList(req, res, url) {
    const q = url.searchParams;
    const archivedText = q.get('archived') || null; // (an empty parameter is an absent one)
    if (archivedText !== null && archivedText !== 'true' && archivedText !== 'false') throw validation('archived must be true or false', 'archived');
    const limitText = q.get('limit') || null;
    if (limitText !== null && !/^-?\d+$/.test(limitText)) throw validation('limit must be an integer', 'limit');
    const limit = limitText === null ? 20 : Math.min(100, Math.max(1, Number(limitText)));
    let page;
    try {
      page = store.list({ archived: archivedText === 'true', limit, cursor: q.get('cursor') || undefined });
    } catch (e) {
      if (e instanceof CursorError) throw validation(e.message, 'cursor');
      throw e;
    }
    json(res, 200, { sessions: page.records.map(listItem), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  }

  async function sessionPatch(req, res, sid, body) {
    if (!isObject(body)) throw validation('body must be a JSON object');
    const { title, archived } = body;
    if (title !== undefined && typeof title !== 'string') throw validation('title must be a string', 'title');
    if (typeof title === 'string' && title.length > 500) throw validation('title is longer than 500 characters', 'title');
    if (archived !== undefined && typeof archived !== 'boolean') throw validation('archived must be a boolean', 'archived');
    if (title === undefined && archived === undefined) throw validation('title or archived is required', 'title');
    if (!store.get(sid)) throw sessionNotFound(sid);
    json(res, 200, { session: listItem(store.update(sid, { title: title === undefined ? undefined : cleanTitle(title), archived })) });
  }

  /** Stops a running turn of the session, forgets it, removes its files. */
  async function sessionDelete(req, res, sid) {
    if (!(await removeSession(sid))) throw sessionNotFound(sid);
    empty(res, 204);
  }

  function sessionNotFound(sid) {
    return new HttpError(404, 'session_not_found', `no session ${sid}`);
  }

  async function control(req, res, url, body) {
    if (url.pathname === '/__control' && req.method === 'GET') return json(res, 200, controlState());
    if (url.pathname === '/__control' && req.method === 'POST') {
      applyControl(isObject(body) ? body : {});
      return json(res, 200, controlState());
    }
    if (url.pathname === '/__control/reset' && req.method === 'POST') {
      reset();
      return json(res, 200, controlState());
    }
    if (url.pathname === '/__control/log' && req.method === 'GET') {
      const since = Number(url.searchParams.get('since') ?? 0);
      return json(res, 200, { entries: log.filter((e) => e.id > since) });
    }
    throw new HttpError(404, 'not_found', `no control route ${req.method} ${url.pathname}`);
  }

  // ----- dispatch ---------------------------------------------------------------------------

  /** `[route name, session id]` of an API path. */
  function routeOf(method, pathname) {
    const native = nativeRouteOf(method, pathname);
    if (native) return native;
    if (pathname === `${API}/capabilities` && method === 'GET') return ['capabilities'];
    if (pathname === `${API}/catalog` && method === 'GET') return ['catalog'];
    if (pathname === `${API}/chat` && method === 'POST') return ['chat'];
    if (pathname === `${API}/sessions` && method === 'GET') return ['sessions'];
    if (pathname === '/api/chat' && method === 'POST') return ['docs-chat'];
    const docsStream = /^\/api\/chat\/([^/]+)\/stream$/.exec(pathname);
    if (docsStream && method === 'GET') return ['docs-stream', safeDecode(docsStream[1])];
    const byId = /^\/api\/v1\/agent\/sessions\/([^/]+)$/.exec(pathname);
    if (byId) return [{ PATCH: 'session-patch', DELETE: 'session-delete' }[method], safeDecode(byId[1])];
    const m = /^\/api\/v1\/agent\/chat\/([^/]+)(?:\/(followup|messages|stream|turn|approval|tool-output))?$/.exec(pathname);
    if (!m) return [undefined];
    const sid = safeDecode(m[1]);
    const key = `${method} ${m[2] ?? ''}`;
    const name = {
      'POST followup': 'followup',
      'DELETE followup': 'followup-delete',
      'GET messages': 'messages',
      'PUT messages': 'messages-put',
      'GET stream': 'stream',
      'DELETE turn': 'turn',
      'POST approval': 'approval',
      'POST tool-output': 'tool-output',
      'DELETE ': 'session-delete', // the older path of `DELETE …/sessions/S`
    }[key];
    return [name, sid];
  }

  async function handle(req, res) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    for (const [k, v] of Object.entries(corsHeaders(req))) res.setHeader(k, v);
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-max-age', '600');
      return empty(res, 204);
    }
    const isControl = url.pathname === '/__control' || url.pathname.startsWith('/__control/');
    const isApi = url.pathname.startsWith('/api/');
    if (!isControl && !isApi && state.staticDir && (req.method === 'GET' || req.method === 'HEAD')) {
      return serveStatic(req, res, url, state.staticDir);
    }
    let entry;
    try {
      const body = await readBody(req);
      if (isControl) return await control(req, res, url, body);
      const [route, sid, agentTypeId] = routeOf(req.method, url.pathname);
      entry = record(req, url, route, sid, body);
      res.once('close', () => {
        entry.status = res.headersSent ? res.statusCode : null;
        entry.aborted = !res.writableFinished;
        entry.durationMs = Date.now() - entry.t;
      });
      if (!route) throw new HttpError(404, 'not_found', `no route ${req.method} ${url.pathname}`);
      if (state.notFound.includes(route)) {
        entry.fault = 'notFound';
        throw new HttpError(404, 'not_found', `route ${route} answers 404 (notFound fault)`);
      }
      switch (route) {
        case 'capabilities':
          return await capabilities(req, res, url);
        case 'catalog':
          return await catalog(req, res, url);
        case 'chat':
          return await chat(req, res, body, entry);
        case 'followup':
          return await followUp(req, res, sid, body, entry);
        case 'followup-delete':
          return await followUpDelete(req, res, sid, url);
        case 'messages':
          return await messagesGet(req, res, sid);
        case 'messages-put':
          return await messagesPut(req, res, sid, body);
        case 'stream':
          return await resume(req, res, sid, url, entry);
        case 'turn':
          return await turnDelete(req, res, sid, url);
        case 'sessions':
          return await sessionsList(req, res, url);
        case 'session-patch':
          return await sessionPatch(req, res, sid, body);
        case 'session-delete':
          return await sessionDelete(req, res, sid);
        case 'approval':
        case 'tool-output':
          return await answer(req, res, sid, body, entry, route);
        case 'docs-chat':
          return await docsChat(req, res, body, entry);
        case 'docs-stream':
          // The docs' server keeps no stream: nothing to resume.
          return empty(res, 204);
        default:
          if (route.startsWith('pi-')) return await piNative.handle(route, { req, res, url, body, sid, agentTypeId, json });
          throw new HttpError(404, 'not_found', 'no such route');
      }
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) return json(res, e.status, e.body);
      if (e instanceof NativeError) return json(res, e.status, e.body);
      const native = url.pathname === NATIVE_PREFIX || url.pathname.startsWith(`${NATIVE_PREFIX}/`);
      if (e?.code === 'bad_json' && native) {
        return json(res, 400, { error: { code: 'AGENT_COMMAND_INVALID_STATE', message: 'body is not valid JSON', details: { field: 'body' } } });
      }
      if (e?.code === 'bad_json') return json(res, 400, err('validation_error', 'body is not valid JSON'));
      if (e?.code === 'too_large') return json(res, 413, err('payload_too_large', 'body too large'));
      console.error(e);
      return json(res, 500, err('internal', e instanceof Error ? e.message : String(e)));
    }
  }

  function record(req, url, route, sessionId, body) {
    const now = Date.now();
    const entry = {
      id: ++logId,
      time: new Date(now).toISOString(),
      t: now,
      method: req.method,
      path: url.pathname + url.search,
      route: route ?? null,
      sessionId: sessionId ?? (isObject(body) && typeof body.sessionId === 'string' ? body.sessionId : url.searchParams.get('sessionId') ?? undefined),
      body,
      status: undefined,
      aborted: undefined,
    };
    log.push(entry);
    if (log.length > MAX_LOG) log.splice(0, log.length - MAX_LOG);
    return entry;
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      console.error(e);
      if (!res.headersSent) json(res, 500, err('internal', String(e)));
      else res.destroy();
    });
  });

  return {
    server,
    state,
    sessions,
    store,
    log,
    /** Listens on 127.0.0.1; resolves with the port (0 picks a free one). */
    listen(port = 8787) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve(server.address().port);
        });
      });
    },
    close() {
      for (const s of sessions.values()) s.dispose();
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ----- helpers ----------------------------------------------------------------------------

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves once `turn` ended (at most 2 s). */
function woundDown(turn) {
  if (turn.done) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(done, 2000);
    turn.listeners.add(() => {
      if (turn.done) {
        clearTimeout(timer);
        done();
      }
    });
  });
}

/**
 * The text of an answer's `output`: a string (primarily), or an object with a string `answer`
 * or `text`; a number or boolean as text; any other object as JSON. Undefined: none given.
 */
function outputText(output) {
  if (output === undefined || output === null) return undefined;
  if (typeof output === 'string') return output;
  if (typeof output === 'number' || typeof output === 'boolean') return String(output);
  if (isObject(output)) {
    if (typeof output.answer === 'string') return output.answer;
    if (typeof output.text === 'string') return output.text;
  }
  return JSON.stringify(output);
}

function checkAttachments(list) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw validation('attachments must be an array', 'attachments');
  return list.map((a, i) => {
    if (!isObject(a) || typeof a.url !== 'string' || typeof a.mediaType !== 'string') {
      throw validation(`attachments[${i}] needs url and mediaType strings`, 'attachments');
    }
    return { mediaType: a.mediaType, url: a.url, ...(typeof a.filename === 'string' ? { filename: a.filename } : {}) };
  });
}

/** Does an empty submit naming `messageId` continue the stored history (its last message, an assistant's)? */
function continuesStored(s, messageId) {
  const last = s?.history?.at(-1);
  return messageId !== undefined && last?.role === 'assistant' && last.id === messageId;
}

/**
 * The messages to answer when the client sent none: the stored history, with
 * - `regenerate-message`: the assistant message to regenerate (`messageId`, else the last)
 *   and everything after it dropped, as `useChat` does;
 * - `submit-message` naming a stored user message (an edit): that message replaced by the new
 *   text (same id) and everything after it dropped;
 * - `submit-message` with no text naming the last message, an assistant's: the history as it is
 *   (a continuation after tool outputs or approvals);
 * - otherwise: the new user message appended (id `messageId`, else a fresh one).
 */
function fromStoredHistory(history, { trigger, messageId, message, attachments }) {
  let messages = [...history];
  const userMessage = (id) => ({
    id,
    role: 'user',
    parts: [...attachments.map((a) => ({ type: 'file', ...a })), ...(message ? [{ type: 'text', text: message }] : [])],
  });
  if (trigger === 'regenerate-message') {
    let at = messageId ? messages.findIndex((m) => m.id === messageId) : messages.findLastIndex((m) => m.role === 'assistant');
    if (at >= 0 && messages[at].role === 'user') at += 1;
    if (at >= 0) messages = messages.slice(0, at);
    return messages;
  }
  const named = messageId === undefined ? -1 : messages.findIndex((m) => m.id === messageId);
  if (named >= 0 && messages[named].role === 'user' && (message !== '' || attachments.length > 0)) {
    return [...messages.slice(0, named), userMessage(messageId)];
  }
  if (named === messages.length - 1 && named >= 0 && messages[named].role === 'assistant' && message === '' && attachments.length === 0) {
    return messages;
  }
  // (a `messageId` of a stored message that is none of the above names no new message)
  messages.push(userMessage(messageId !== undefined && named < 0 ? messageId : `user-${randomUUID()}`));
  return messages;
}

/**
 * `tree` of a history PUT (AI SDK mode's branches, beside `messages`): `[{parentId, message}]`,
 * every message the client keeps, a parent before its children; `null` when absent.
 */
async function validTree(tree) {
  if (tree === undefined || tree === null) return null;
  if (!Array.isArray(tree)) throw validation('tree must be an array', 'tree');
  const seen = new Set();
  for (const item of tree) {
    const parentId = isObject(item) ? item.parentId : undefined;
    if (!(parentId === null || (typeof parentId === 'string' && seen.has(parentId)))) {
      throw validation('tree: each parentId must be null or an earlier message id', 'tree');
    }
    if (!isObject(item.message) || typeof item.message.id !== 'string') throw validation('tree: each item needs a message', 'tree');
    seen.add(item.message.id);
  }
  const messages = await validMessages(tree.map((item) => item.message));
  return tree.map((item, i) => ({ parentId: item.parentId, message: messages[i] }));
}

async function validMessages(messages) {
  if (messages.length === 0) return [];
  const r = await safeValidateUIMessages({ messages });
  if (!r.success) throw validation(`messages: ${r.error.message}`.slice(0, 500), 'messages');
  return r.data;
}

function corsHeaders(req) {
  const origin = req?.headers.origin;
  return {
    'access-control-allow-origin': origin ?? '*',
    ...(origin ? { 'access-control-allow-credentials': 'true', vary: 'Origin' } : {}),
    'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
    'access-control-allow-headers': req?.headers['access-control-request-headers'] ?? 'content-type',
    'access-control-expose-headers': 'x-turn-id, x-vercel-ai-ui-message-stream',
  };
}

function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function empty(res, status) {
  res.writeHead(status);
  res.end();
}

async function readBody(req) {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
    req.resume();
    return undefined;
  }
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) throw Object.assign(new Error('too large'), { code: 'too_large' });
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw Object.assign(new Error('bad json'), { code: 'bad_json' });
  }
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

async function serveStatic(req, res, url, dir) {
  const root = path.resolve(dir);
  let rel = safeDecode(url.pathname);
  let file = path.resolve(root, '.' + rel);
  if (file !== root && !file.startsWith(root + path.sep)) return json(res, 404, err('not_found', 'not found'));
  let info = await stat(file).catch(() => undefined);
  if (info?.isDirectory()) {
    file = path.join(file, 'index.html');
    info = await stat(file).catch(() => undefined);
  }
  if (!info?.isFile()) {
    // SPA fallback: routes of the app (no file extension) get index.html.
    if (path.extname(rel) !== '') return json(res, 404, err('not_found', 'not found'));
    file = path.join(root, 'index.html');
    info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return json(res, 404, err('not_found', 'no index.html in the static folder'));
  }
  res.writeHead(200, {
    'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': info.size,
    'cache-control': path.basename(file) === 'index.html' ? 'no-cache' : 'public, max-age=300',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
}
