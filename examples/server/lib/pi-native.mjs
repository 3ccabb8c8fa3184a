// The pi-native protocol (/work/shared/reference/pi-native-protocol.md, "addressed HTTP +
// NDJSON") over the same pi sessions as the SSE protocol of app.mjs: commands are small JSON
// POSTs answered with receipts, everything that changes history arrives on one NDJSON event
// stream per session (ndjson-events.mjs).
//
// The events are not read from pi again: PiSession's own projection (its `data-pi-*` chunks,
// `data-followup-consumed`, and `queue-changed`) is observed and re-worded (`project`), so the
// ids, part ids, tool owners and finals are the ones the SSE protocol streams.
//
// Choices where the document leaves room (README "The pi-native protocol" lists them too):
// - `POST …/sessions` creates a session (§3.6, a UUID; `resumeSessionId` of a session without a
//   turn yet gives that one back; a `title` is its title, also on a resume). Besides, with
//   `nativeSessions: 'lenient'` (the default, `--native-sessions`), a session is also created by
//   its first prompt (or follow-up), and `/state` and `/events` of a session that does not exist
//   yet answer an empty idle session with seq 0 (no 404). `'strict'` is the real server: every
//   session route of a session never created (or deleted) is 404 AGENT_SESSION_NOT_FOUND;
// - turnId is per pi run, `turn:<sessionId>:<seq of its agent-start>` (§7's fallback form): a
//   follow-up drained after `agent_end` starts a new run with its own turnId;
// - no `error {code: ABORTED}` before an aborted `agent-end` (§14.16): a stop ends as `aborted`;
//   a provider failure is `error {INTERNAL_ERROR}` then `agent-end {status: error}`;
// - the request ledger is in memory, records successful commands only (a refused command can be
//   retried with the same requestId), and is emptied by `POST /__control/reset`;
// - `stopped` in the stop receipt is always true, as the harness service answers (§14.7);
// - a follow-up whose `clientNonce` was seen is not queued again (the request still answers a
//   normal receipt), as pi's adapter (§3.13), until a clear-all or a stop forgets every nonce
//   seen; unlike that adapter, a nonce whose item a selective clear removed may come again.
//
// The real server (31361f15, probed live) differs from its written protocol in ways a client
// meets; each difference is a switch here (off by default, `upstreamQuirks` turns all on; the
// settings object is app.mjs's live one, so a switch acts from the next event or request):
// - `nativeSelectorsDropped`: its pi messages and queue carry no selectors; they are recovered
//   by text (pi-native-reconciler.mjs, our own model of its reconciler), which loses most of them;
// - `nativeSelectiveClearNoop`: `queue/clear` with a selector removes nothing (`cleared: 0`;
//   the 409 check of two selectors still runs on the rows `/state` shows);
// - `nativeNonceRequeue`: no nonce dedupe at all (its pi adapter, nonce memory included, is
//   made anew for every request), only the requestId ledger;
// - `nativeStateLagsStreaming`: a busy `/state` lacks the assistant message streaming now;
// - `nativeStateIds`: `/state` ids are pi entry ids (idle) or positional (busy), not the
//   streamed ids, and its messages carry no turnId.
// The reconciler runs on every session whatever the switch says (it only remembers), so
// turning the switch on mid-session gives what the real server would give at that point.
import { createHash, randomUUID } from 'node:crypto';
import { EventChannel, pipeEvents } from './ndjson-events.mjs';
import { CHECK, invalid, NativeError, strictBody, strictQuery } from './pi-native-body.mjs';
import { assistantStatus, boringMessage } from './pi-native-messages.mjs';
import { MetadataReconciler } from './pi-native-reconciler.mjs';
import { assistantParts, PiSession } from './pi-runtime.mjs';
import { cleanTitle, CursorError } from './session-store.mjs';

export { NativeError } from './pi-native-body.mjs';

export const AGENT_TYPE = 'pi';
export const NATIVE_ROUTES = ['pi-agents', 'pi-sessions', 'pi-create', 'pi-state', 'pi-events', 'pi-prompt', 'pi-followup', 'pi-interrupt', 'pi-stop', 'pi-queue-clear', 'pi-rename', 'pi-delete'];
export const NATIVE_PREFIX = '/api/v1/agents';
/** The switches `upstreamQuirks` (`--upstream-quirks`) turns on together (see the header). */
export const UPSTREAM_QUIRKS = ['nativeSelectorsDropped', 'nativeSelectiveClearNoop', 'nativeNonceRequeue', 'nativeStateLagsStreaming', 'nativeStateIds'];

const PROMPT = {
  requestId: [CHECK.requestId, true],
  clientNonce: [CHECK.nonce, true],
  content: [CHECK.content, true],
  displayContent: [CHECK.content, false],
  requireIdle: [CHECK.literalTrue, false],
  model: [CHECK.model, false], // accepted and ignored: the scripted model is the only one
  thinkingLevel: [CHECK.thinkingLevel, false], // idem
  attachments: [CHECK.attachments, false],
};
const FOLLOWUP = {
  requestId: [CHECK.requestId, true],
  clientNonce: [CHECK.nonce, true],
  content: [CHECK.content, true],
  displayContent: [CHECK.content, false],
  clientSeq: [CHECK.clientSeq, true],
};
const OPTIONAL_REQUEST = { requestId: [CHECK.requestId, false] };
const QUEUE_CLEAR = { requestId: [CHECK.requestId, false], clientNonce: [CHECK.nonce, false], clientSeq: [CHECK.clientSeq, false] };
const RENAME = { requestId: [CHECK.requestId, true], title: [CHECK.title, true] };
const CREATE = { requestId: [CHECK.requestId, false], title: [CHECK.title, false], resumeSessionId: [CHECK.sessionId, false] };
const COMMAND_BODIES = {
  'pi-prompt': PROMPT,
  'pi-followup': FOLLOWUP,
  'pi-stop': OPTIONAL_REQUEST,
  'pi-interrupt': OPTIONAL_REQUEST,
  'pi-queue-clear': QUEUE_CLEAR,
  'pi-rename': RENAME,
  'pi-delete': {},
};

/** `[route, sessionId?, agentTypeId?]` of a pi-native path, or undefined (not one of ours). */
export function nativeRouteOf(method, pathname) {
  if (pathname === NATIVE_PREFIX) return [method === 'GET' ? 'pi-agents' : undefined];
  const m = /^\/api\/v1\/agents\/([^/]+)\/sessions(?:\/([^/]+)(?:\/(state|events|prompt|followup|interrupt|stop|rename|queue\/clear))?)?$/.exec(pathname);
  if (!m) return undefined;
  const agentTypeId = decode(m[1]);
  if (m[2] === undefined) return [{ GET: 'pi-sessions', POST: 'pi-create' }[method], undefined, agentTypeId];
  const key = `${method} ${m[3] ?? ''}`;
  const name = {
    'GET state': 'pi-state',
    'GET events': 'pi-events',
    'POST prompt': 'pi-prompt',
    'POST followup': 'pi-followup',
    'POST interrupt': 'pi-interrupt',
    'POST stop': 'pi-stop',
    'POST queue/clear': 'pi-queue-clear',
    'POST rename': 'pi-rename',
    'DELETE ': 'pi-delete',
  }[key];
  return [name, decode(m[2]), agentTypeId];
}

/**
 * @param {object} deps
 * @param {(id: string, create: boolean, runtime?: string) => object|undefined} deps.session
 *   app.mjs's session lookup (in memory, else from the store, else created)
 * @param {import('./session-store.mjs').SessionStore} deps.store
 * @param {object} deps.settings the live settings: heartbeatMs, replayWindow, cutEventsAfter, skipSeq,
 *   nativeSessions, and the UPSTREAM_QUIRKS switches
 * @param {(id: string) => Promise<boolean>} deps.removeSession stops, forgets, removes the file
 */
export function createPiNative({ session, store, settings, removeSession }) {
  /** @type {Map<string, Native>} per session id, for the life of the process (seq never restarts) */
  const natives = new Map();
  /** @type {Map<string, {digest: string, receipt: object}>} the request ledger (§4) */
  const ledger = new Map();

  const channelSettings = {
    get replayWindow() {
      return settings.replayWindow;
    },
    takeSkipSeq() {
      if (!(settings.skipSeq > 0)) return false;
      settings.skipSeq -= 1;
      return true;
    },
  };

  /** @returns {Native} */
  function native(sid) {
    let n = natives.get(sid);
    if (!n) {
      n = {
        sid,
        channel: new EventChannel({ agentTypeId: AGENT_TYPE, sessionId: sid }, channelSettings),
        meta: new Map(),
        displayByNonce: new Map(),
        run: null,
        lastTurnId: undefined,
        error: undefined,
        attached: new WeakSet(),
        rec: new MetadataReconciler(),
        seenNonces: new Set(),
      };
      natives.set(sid, n);
    }
    return n;
  }

  /** Called by app.mjs for every PiSession it creates or re-opens: observe its projection. */
  function attach(s) {
    const n = native(s.id);
    if (n.attached.has(s)) return;
    n.attached.add(s);
    s.observe((chunk, turn) => project(n, s, chunk, turn));
  }

  // ----- the projection: PiSession chunks → pi-native events ----------------------------------

  function project(n, s, chunk, turn) {
    const publish = (event) => n.channel.publish(event);
    const d = chunk.data ?? {};
    switch (chunk.type) {
      case 'queue-changed':
        publish({ type: 'queue-updated', queue: { followUps: publishedRows(n, s) } });
        break;
      case 'data-followup-consumed': {
        // The loop took a follow-up: its selectors go on its user message (§9), and the queue
        // shrank. (Not `followup-consumed`: the real server does not send it, §14.1.)
        const m = metaOf(n, d.messageId);
        if (d.clientNonce !== undefined) m.clientNonce = d.clientNonce;
        if (d.clientSeq !== undefined) m.clientSeq = d.clientSeq;
        const display = d.clientNonce !== undefined ? n.displayByNonce.get(d.clientNonce) : undefined;
        if (display !== undefined) m.displayText = display;
        publish({ type: 'queue-updated', queue: { followUps: publishedRows(n, s) } });
        break;
      }
      case 'data-pi-agent-start': {
        const turnId = `turn:${n.sid}:${n.channel.seq + 1}`;
        n.run = { turnId };
        n.error = undefined;
        publish({ type: 'agent-start', turnId });
        break;
      }
      case 'data-pi-agent-end': {
        const turnId = n.run?.turnId ?? n.lastTurnId ?? `turn:${n.sid}:${n.channel.seq + 1}`;
        const last = s.agent.state.messages.at(-1);
        const stop = last?.role === 'assistant' ? last.stopReason : undefined;
        const status = turn?.stopped || stop === 'aborted' ? 'aborted' : stop === 'error' ? 'error' : 'ok';
        if (status === 'error') {
          n.error = { code: 'INTERNAL_ERROR', message: last.errorMessage ?? 'provider error' };
          publish({ type: 'error', turnId, error: n.error });
        }
        publish({ type: 'agent-end', turnId, status });
        n.lastTurnId = turnId;
        n.run = null;
        break;
      }
      case 'data-pi-message-start': {
        const m = metaOf(n, d.messageId);
        if (n.run) m.turnId = n.run.turnId;
        if (d.role === 'user') {
          const exact = { type: 'message-start', messageId: d.messageId, role: 'user', ...selectors(m), text: m.displayText ?? d.text };
          // What the real server maps from pi (pi's text, no selectors), then recovers.
          const recovered = n.rec.enrichEvent({ type: 'message-start', messageId: d.messageId, role: 'user', text: d.text });
          n.rec.consumeEvent(recovered);
          publish(settings.nativeSelectorsDropped ? recovered : exact);
        } else {
          publish({ type: 'message-start', messageId: d.messageId, role: d.role });
        }
        break;
      }
      case 'data-pi-text-delta':
      case 'data-pi-reasoning-delta':
        publish({ type: 'message-delta', messageId: d.messageId, partId: d.partId, kind: kindOf(chunk.type), delta: d.delta });
        break;
      case 'data-pi-text-end':
      case 'data-pi-reasoning-end':
        publish({ type: 'message-part-end', messageId: d.messageId, partId: d.partId, kind: kindOf(chunk.type), text: d.text });
        break;
      case 'data-pi-tool-call-end':
        publish({ type: 'tool-call', messageId: d.messageId, toolCallId: d.toolCallId, toolName: d.toolName, input: d.input });
        break;
      case 'data-pi-tool-result': {
        // Live output is pi's whole result (§8): `{content, details?}`.
        const output = { content: d.output?.content ?? [], ...(d.details !== undefined ? { details: d.details } : {}) };
        const errorText = d.isError ? (d.output?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('') : undefined;
        publish({ type: 'tool-result', messageId: d.messageId, toolCallId: d.toolCallId, output, ...(d.isError ? { isError: true, errorText } : {}) });
        break;
      }
      case 'data-pi-message-end': {
        const last = s.agent.state.messages.at(-1); // pi pushed the message before its listeners ran
        const createdAt = last && s.ids.get(last) === d.messageId ? last.timestamp : undefined;
        const status = d.role === 'assistant' ? assistantStatus(d.stopReason) : 'done';
        const meta = n.meta.get(d.messageId);
        const exact = { type: 'message-end', messageId: d.messageId, final: boringMessage(d.final, { status, createdAt, meta }) };
        if (d.role !== 'user') {
          publish(exact);
          break;
        }
        const raw = boringMessage(d.final, { status, createdAt, meta: turnOnly(meta) });
        const recovered = n.rec.enrichEvent({ type: 'message-end', messageId: d.messageId, final: raw });
        n.rec.consumeEvent(recovered);
        publish(settings.nativeSelectorsDropped ? recovered : exact);
        break;
      }
      default:
        break; // part starts, tool-input deltas, tool UI, human-in-the-loop: no pi-native event
    }
  }

  function metaOf(n, messageId) {
    let m = n.meta.get(messageId);
    if (!m) {
      m = {};
      n.meta.set(messageId, m);
    }
    return m;
  }

  /** The follow-ups the agent still holds, as §5's QueuedUserMessage rows (ids positional). */
  function queueRows(n, s) {
    if (!s) return [];
    return s.heldByAgent().map((e, i) => ({
      id: queueRowId(n.sid, i, e.text),
      kind: 'followup',
      displayText: (e.nonce !== undefined ? n.displayByNonce.get(e.nonce) : undefined) ?? e.text,
      ...selectors({ clientNonce: e.nonce, clientSeq: e.seq }),
    }));
  }

  /** The rows as the real server reads pi's queue: pi's texts, no selectors. */
  function rawRows(n, s) {
    if (!s) return [];
    return s.heldByAgent().map((e, i) => ({ id: queueRowId(n.sid, i, e.text), kind: 'followup', displayText: e.text }));
  }

  /**
   * The rows a `queue-updated` or `/state` shows. The reconciler sees every such reading, as
   * the real one does (each re-syncs its memory), whether or not its rows are the ones shown.
   */
  function publishedRows(n, s) {
    const recovered = n.rec.enrichQueue(rawRows(n, s));
    return settings.nativeSelectorsDropped ? recovered : queueRows(n, s);
  }

  // ----- reads --------------------------------------------------------------------------------

  /**
   * The pi session `sid` if it exists (in memory or on disk); 404 when it is an AI SDK one, or
   * (strict) when there is none.
   */
  function piSession(sid) {
    const s = session(sid, false);
    if (s && !(s instanceof PiSession)) throw notFound(sid);
    if (!s && settings.nativeSessions === 'strict') throw notFound(sid);
    return s;
  }

  function statusOf(n, s) {
    if (s?.activeTurn) return 'streaming';
    return n.error ? 'error' : 'idle';
  }

  function summaryOf(sid, rec, status) {
    const now = Date.now();
    return {
      ref: { agentTypeId: AGENT_TYPE, sessionId: sid },
      title: rec?.name ?? rec?.firstLine ?? '',
      status: status === 'streaming' ? 'running' : status,
      createdAt: rec?.createdAt ?? now,
      updatedAt: rec?.updatedAt ?? now,
    };
  }

  /** §5. Built synchronously: the messages reflect exactly the events up to `seq`. */
  function stateDoc(sid) {
    const s = piSession(sid);
    const n = native(sid);
    const status = statusOf(n, s);
    let messages = [];
    if (s) {
      const dropped = settings.nativeSelectorsDropped;
      const all = s.agent.state.messages;
      // pi's entries, as the real server's pi session lists them (its system prompt is none)
      const entries = all.filter((m) => m.role !== 'system');
      const busy = !!s.activeTurn;
      const message = (ui, m, status) => {
        const meta = n.meta.get(ui.id);
        if (!settings.nativeStateIds) return boringMessage(ui, { status, createdAt: m?.timestamp, meta: dropped ? turnOnly(meta) : meta });
        // The real /state describes pi's entries: their ids, and no run (it knows no turns).
        const index = m && entries.includes(m) ? entries.indexOf(m) : entries.length;
        const id = busy ? `pi:${sid}:message:${index}:${ui.role}:${m?.timestamp ? new Date(m.timestamp).toISOString() : 'no-ts'}` : entryId(sid, ui.id);
        const { turnId: _t, ...rest } = (dropped ? turnOnly(meta) : meta) ?? {};
        return { ...boringMessage({ ...ui, id }, { status, createdAt: m?.timestamp, meta: rest }), ...(busy ? {} : { piEntryId: id }) };
      };
      // uiMessages() yields one message per user/assistant message of the transcript, in order.
      const raw = all.filter((m) => m.role === 'user' || m.role === 'assistant');
      s.uiMessages().forEach((ui, i) => {
        const m = raw[i];
        messages.push(message(ui, m, ui.role === 'assistant' ? assistantStatus(m?.stopReason) : 'done'));
      });
      // The assistant message streaming now: its start and deltas are behind `seq` already. (The
      // real server builds a busy /state from pi's messages, which do not hold it yet.)
      const live = s.agent.state.streamingMessage;
      if (busy && live?.role === 'assistant' && s.currentAssistantId && !settings.nativeStateLagsStreaming) {
        messages.push(message({ id: s.currentAssistantId, role: 'assistant', parts: assistantParts(live) }, live, 'streaming'));
      }
      if (dropped) messages = n.rec.enrichMessages(messages);
    }
    const followUps = publishedRows(n, s);
    const activeTurnId = s?.activeTurn ? (n.run?.turnId ?? n.lastTurnId) : undefined;
    const seq = n.channel.seq;
    return {
      ref: { agentTypeId: AGENT_TYPE, sessionId: sid },
      seq,
      summary: summaryOf(sid, store.get(sid), status),
      state: {
        protocolVersion: 1,
        sessionId: sid,
        seq,
        status,
        ...(activeTurnId ? { activeTurnId } : {}),
        messages,
        queue: { followUps },
        followUpMode: 'one-at-a-time',
        ...(status === 'error' && n.error ? { error: n.error } : {}),
      },
    };
  }

  // ----- the request ledger (§4) --------------------------------------------------------------

  /** The earlier receipt of this request, or undefined; 409 when the payload differs. */
  function prior(op, sid, body) {
    if (body.requestId === undefined) return undefined;
    const rec = ledger.get(ledgerKey(op, sid, body.requestId));
    if (!rec) return undefined;
    if (rec.digest !== digest(body)) {
      throw new NativeError(409, 'AGENT_REQUEST_CONFLICT', 'requestId was already used with a different payload', { operation: op, requestId: body.requestId });
    }
    return rec.receipt;
  }

  function remember(op, sid, body, receipt) {
    if (body.requestId === undefined) return;
    ledger.set(ledgerKey(op, sid, body.requestId), { digest: digest(body), receipt });
    // (bounded: the oldest go first; a real server keeps them durably)
    if (ledger.size > 10_000) ledger.delete(ledger.keys().next().value);
  }

  // ----- commands -----------------------------------------------------------------------------

  async function prompt(sid, rawBody) {
    const body = strictBody(rawBody, PROMPT);
    const existing = piSession(sid);
    if (existing) await betweenRuns(existing, native(sid));
    // From here on no await: the ledger check, the admission and the start are one step.
    const first = prior('prompt', sid, body);
    if (first) return [202, { ...first, duplicate: true }];
    const n = native(sid);
    if (existing?.activeTurn) {
      throw new NativeError(409, 'AGENT_COMMAND_INVALID_STATE', 'prompt is invalid in current state', { status: 'streaming' });
    }
    if (body.requireIdle && n.error) throw new NativeError(409, 'AGENT_COMMAND_INVALID_STATE', 'session is not idle', { status: 'error' });
    const s = session(sid, true, 'pi');
    const messageId = `user-${randomUUID()}`;
    n.meta.set(messageId, { clientNonce: body.clientNonce, ...(body.displayContent !== undefined ? { displayText: body.displayContent } : {}) });
    n.rec.recordPrompt(body);
    const cursor = n.channel.seq + 1;
    const attachments = (body.attachments ?? []).map((a) => ({
      url: a.url,
      mediaType: a.mediaType ?? 'application/octet-stream',
      ...(a.filename ? { filename: a.filename } : {}),
    }));
    s.startTurn({ message: body.content, attachments, messageId });
    const receipt = { accepted: true, cursor, clientNonce: body.clientNonce, disposition: 'prompt' };
    remember('prompt', sid, body, receipt);
    return [202, receipt];
  }

  /**
   * A turn whose pi run ended (`agent-end` published) winds down a moment later (pi-runtime's
   * `run()` may still drain a follow-up): wait for that, so a prompt sent on `agent-end` is not
   * refused. Bounded; returns at once inside a run.
   */
  async function betweenRuns(s, n) {
    const turn = s.activeTurn;
    if (!turn || n.run) return;
    await new Promise((resolve) => {
      const done = () => {
        if (!turn.done && !n.run) return;
        clearTimeout(timer);
        turn.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        turn.listeners.delete(done);
        resolve();
      }, 2000);
      turn.listeners.add(done);
    });
  }

  function followUp(sid, rawBody) {
    const body = strictBody(rawBody, FOLLOWUP);
    piSession(sid);
    const first = prior('followup', sid, body);
    if (first) return [202, { ...first, duplicate: true }];
    // Accepted in any state (§3.13): while idle it waits in pi's queue for the next prompt (§9).
    const s = session(sid, true, 'pi');
    const n = native(sid);
    n.rec.recordFollowUp(body);
    // As pi's adapter: a nonce already queued or consumed is not queued twice (§3.13), until a
    // clear-all forgets them. (`nativeNonceRequeue`: the live server queues it again.)
    const again = n.seenNonces.has(body.clientNonce) && s.followUps.byNonce.get(body.clientNonce)?.state !== 'deleted';
    if (!again || settings.nativeNonceRequeue) {
      if (body.displayContent !== undefined) n.displayByNonce.set(body.clientNonce, body.displayContent);
      s.enqueueFollowUp({ message: body.content, clientSeq: body.clientSeq, clientNonce: body.clientNonce });
      n.seenNonces.add(body.clientNonce);
    }
    const receipt = { accepted: true, queued: true, cursor: n.channel.seq, clientNonce: body.clientNonce, clientSeq: body.clientSeq, disposition: 'followup' };
    remember('followup', sid, body, receipt);
    return [202, receipt];
  }

  async function stop(sid, rawBody) {
    const body = strictBody(rawBody, OPTIONAL_REQUEST);
    const first = prior('stop', sid, body);
    if (first) return [202, first];
    const s = existingSession(sid);
    const n = native(sid);
    // The whole queue first (§3.15), so nothing queued runs after the abort. The real server
    // lists pi's texts as they are, without recovering their selectors.
    const clearedQueue = settings.nativeSelectorsDropped ? rawRows(n, s) : queueRows(n, s);
    s.dropFollowUps(s.heldByAgent());
    n.seenNonces.clear(); // a clear-all
    const turn = s.activeTurn;
    if (turn) {
      s.stop();
      await untilDone(turn);
    }
    const receipt = { accepted: true, cursor: n.channel.seq, stopped: true, clearedQueue };
    remember('stop', sid, body, receipt);
    return [202, receipt];
  }

  async function interrupt(sid, rawBody) {
    const body = strictBody(rawBody, OPTIONAL_REQUEST);
    const first = prior('interrupt', sid, body);
    if (first) return [202, first];
    const s = existingSession(sid);
    const n = native(sid);
    const turn = s.activeTurn;
    if (turn) {
      // §3.14: the first queued follow-up becomes the next turn; the rest stay queued.
      const [next] = s.heldByAgent();
      if (next) s.dropFollowUps([next]);
      s.stop();
      await untilDone(turn);
      if (next && !s.activeTurn) {
        const messageId = `user-${randomUUID()}`;
        const display = next.nonce !== undefined ? n.displayByNonce.get(next.nonce) : undefined;
        n.meta.set(messageId, { ...selectors({ clientNonce: next.nonce, clientSeq: next.seq }), ...(display !== undefined ? { displayText: display } : {}) });
        s.startTurn({ message: next.text, attachments: [], messageId });
      }
    }
    const receipt = { accepted: true, cursor: n.channel.seq };
    remember('interrupt', sid, body, receipt);
    return [202, receipt];
  }

  function queueClear(sid, rawBody) {
    const body = strictBody(rawBody, QUEUE_CLEAR);
    const first = prior('queue-clear', sid, body);
    if (first) return [202, first];
    const s = existingSession(sid);
    const n = native(sid);
    const held = s.heldByAgent();
    const { clientNonce, clientSeq } = body;
    const selective = clientNonce !== undefined || clientSeq !== undefined;
    if (settings.nativeSelectiveClearNoop && selective) {
      // The real gateway checks two selectors against the rows its /state shows (with
      // `nativeSelectorsDropped`, the recovered ones: a row may have none), then its pi adapter
      // removes nothing: it is made anew per request and does not know the queue.
      if (clientNonce !== undefined && clientSeq !== undefined) {
        const rows = publishedRows(n, s);
        const byNonce = rows.find((r) => r.clientNonce === clientNonce);
        if (!byNonce || byNonce !== rows.find((r) => r.clientSeq === clientSeq)) {
          throw new NativeError(409, 'AGENT_REQUEST_CONFLICT', 'queue selectors disagree', { clientNonce, clientSeq });
        }
      }
      const receipt = { accepted: true, cursor: n.channel.seq, cleared: 0 };
      remember('queue-clear', sid, body, receipt);
      return [202, receipt];
    }
    const byNonce = clientNonce !== undefined ? held.find((e) => e.nonce === clientNonce) : undefined;
    const bySeq = clientSeq !== undefined ? held.find((e) => e.seq === clientSeq) : undefined;
    // §3.16: both selectors must name the same queued item (gone counts as disagreeing).
    if (clientNonce !== undefined && clientSeq !== undefined && (!byNonce || byNonce !== bySeq)) {
      throw new NativeError(409, 'AGENT_REQUEST_CONFLICT', 'queue selectors disagree', { clientNonce, clientSeq });
    }
    let targets = held;
    if (clientNonce !== undefined) targets = byNonce ? [byNonce] : [];
    else if (clientSeq !== undefined) targets = bySeq ? [bySeq] : [];
    const cleared = s.dropFollowUps(targets).length;
    // pi's adapter forgets the nonces it saw when a clear empties the queue (§3.13).
    if (!selective || (cleared > 0 && s.heldByAgent().length === 0)) n.seenNonces.clear();
    const receipt = { accepted: true, cursor: n.channel.seq, cleared };
    remember('queue-clear', sid, body, receipt);
    return [202, receipt];
  }

  function rename(sid, rawBody) {
    const body = strictBody(rawBody, RENAME);
    const first = prior('rename', sid, body);
    if (first) return [200, first];
    const rec = store.get(sid);
    if (!rec || rec.runtime !== 'pi') throw notFound(sid);
    store.update(sid, { title: cleanTitle(body.title) });
    const receipt = summaryOf(sid, store.get(sid), statusOf(native(sid), session(sid, false)));
    remember('rename', sid, body, receipt);
    return [200, receipt];
  }

  async function remove(sid, url, rawBody) {
    const q = strictQuery(url, ['requestId']);
    if (q.requestId !== undefined && CHECK.requestId(q.requestId)) throw invalid('query.requestId', `requestId ${CHECK.requestId(q.requestId)}`);
    strictBody(rawBody, {});
    const key = { requestId: q.requestId };
    if (prior('delete', sid, key)) return [204];
    const rec = store.get(sid);
    if (!rec || rec.runtime !== 'pi') throw notFound(sid);
    await removeSession(sid);
    remember('delete', sid, key, {});
    return [204];
  }

  /** §3.6. A new session (a UUID), or `resumeSessionId` when it exists and had no turn yet. */
  function create(url, agentTypeId, rawBody) {
    strictQuery(url, []);
    const body = strictBody(rawBody, CREATE);
    if (agentTypeId !== AGENT_TYPE) throw new NativeError(404, 'AGENT_TYPE_UNKNOWN', `unknown agent type ${agentTypeId}`);
    const first = prior('create', agentTypeId, body);
    if (first) return [201, first];
    const resumed = body.resumeSessionId === undefined ? undefined : session(body.resumeSessionId, false);
    // (pi's transcript starts with the system message: no turn means no user message yet)
    const empty = resumed instanceof PiSession && !resumed.activeTurn && !resumed.agent.state.messages.some((m) => m.role === 'user');
    const sid = empty ? resumed.id : randomUUID();
    if (!empty) session(sid, true, 'pi');
    if (body.title !== undefined) store.update(sid, { title: cleanTitle(body.title) });
    const receipt = { agentTypeId: AGENT_TYPE, sessionId: sid };
    remember('create', agentTypeId, body, receipt);
    return [201, receipt];
  }

  function list(url, agentTypeId) {
    const q = strictQuery(url, ['cursor', 'limit']);
    if (agentTypeId !== AGENT_TYPE) throw new NativeError(404, 'AGENT_TYPE_UNKNOWN', `unknown agent type ${agentTypeId}`);
    let limit = 50;
    if (q.limit !== undefined) {
      if (!/^\d+$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > 100) throw invalid('query.limit', 'limit must be an integer 1–100');
      limit = Number(q.limit);
    }
    if (q.cursor !== undefined && q.cursor.length > 8192) throw invalid('query.cursor', 'cursor is longer than 8192 characters');
    let page;
    try {
      page = store.list({ archived: 'any', runtime: 'pi', limit, cursor: q.cursor || undefined });
    } catch (e) {
      if (e instanceof CursorError) throw new NativeError(409, 'AGENT_SESSION_CURSOR_INVALID', e.message);
      throw e;
    }
    const sessions = page.records.map((rec) => summaryOf(rec.id, rec, statusOf(native(rec.id), session(rec.id, false))));
    return [200, { sessions, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }];
  }

  function existingSession(sid) {
    const s = piSession(sid);
    if (!s) throw notFound(sid);
    return s;
  }

  // ----- dispatch -----------------------------------------------------------------------------

  /** Serves a pi-native route (app.mjs matched it with `nativeRouteOf`). */
  async function handle(route, { req, res, url, body, sid, agentTypeId, json }) {
    if (route === 'pi-agents') {
      strictQuery(url, []);
      return json(res, 200, [{ agentTypeId: AGENT_TYPE, label: 'pi', description: 'a real pi agent with a scripted model (the reference server)' }]);
    }
    if (route === 'pi-sessions' || route === 'pi-create') {
      const [status, answer] = route === 'pi-sessions' ? list(url, agentTypeId) : create(url, agentTypeId, body);
      return json(res, status, answer);
    }
    if (route === 'pi-events') return events(req, res, url, sid, agentTypeId);
    if (route === 'pi-state') {
      strictQuery(url, []);
      if (agentTypeId !== AGENT_TYPE) throw notFound(sid);
      return json(res, 200, stateDoc(sid));
    }
    if (route !== 'pi-delete') strictQuery(url, []);
    // Validation comes before the session is looked at (§2): an unknown agent type is a 404
    // only for a well-formed command.
    strictBody(body, COMMAND_BODIES[route] ?? {});
    if (agentTypeId !== AGENT_TYPE) throw notFound(sid);
    let answer;
    switch (route) {
      case 'pi-prompt':
        answer = await prompt(sid, body);
        break;
      case 'pi-followup':
        answer = followUp(sid, body);
        break;
      case 'pi-stop':
        answer = await stop(sid, body);
        break;
      case 'pi-interrupt':
        answer = await interrupt(sid, body);
        break;
      case 'pi-queue-clear':
        answer = queueClear(sid, body);
        break;
      case 'pi-rename':
        answer = rename(sid, body);
        break;
      case 'pi-delete':
        answer = await remove(sid, url, body);
        break;
      default:
        throw new NativeError(404, 'AGENT_SESSION_NOT_FOUND', 'no such route');
    }
    const [status, payload] = answer;
    if (payload === undefined) {
      res.writeHead(status);
      return res.end();
    }
    return json(res, status, payload);
  }

  async function events(req, res, url, sid, agentTypeId) {
    const q = strictQuery(url, ['cursor']);
    let cursor;
    if (q.cursor !== undefined) {
      if (!/^\d+$/.test(q.cursor)) throw invalid('query.cursor', 'cursor must be a non-negative integer');
      cursor = Number(q.cursor);
    }
    if (agentTypeId !== AGENT_TYPE) throw notFound(sid);
    piSession(sid);
    const n = native(sid);
    if (cursor !== undefined) {
      const refusal = n.channel.refuse(cursor);
      if (refusal) throw new NativeError(409, refusal.code, refusal.message, refusal.details);
    }
    let cutAfter;
    if (settings.cutEventsAfter !== null && settings.cutEventsAfter !== undefined) {
      cutAfter = settings.cutEventsAfter; // once: the next events connection
      settings.cutEventsAfter = null;
    }
    await pipeEvents(res, n.channel, { cursor, heartbeatMs: settings.heartbeatMs, cutAfter });
  }

  return {
    attach,
    handle,
    /** `POST /__control/reset`: the event logs and the ledger go too. */
    reset() {
      natives.clear();
      ledger.clear();
    },
  };
}

// ----- helpers ------------------------------------------------------------------------------

function notFound(sid) {
  return new NativeError(404, 'AGENT_SESSION_NOT_FOUND', `no session ${sid}`);
}

function kindOf(chunkType) {
  return chunkType.includes('reasoning') ? 'reasoning' : 'text';
}

/** A message's meta without what the real server's pi messages lack (selectors, display text). */
function turnOnly(meta) {
  return meta?.turnId !== undefined ? { turnId: meta.turnId } : undefined;
}

/** §5's positional queue row id: the same message gets a new id when one ahead of it leaves. */
function queueRowId(sid, index, text) {
  return `queue:${sid}:followup:${index}:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
}

/** `nativeStateIds`: an id of the form of pi's entry ids (8 hex digits), fixed per message. */
function entryId(sid, messageId) {
  return createHash('sha256').update(`${sid}\n${messageId}`).digest('hex').slice(0, 8);
}

function selectors(m) {
  return {
    ...(m.clientNonce !== undefined ? { clientNonce: m.clientNonce } : {}),
    ...(m.clientSeq !== undefined ? { clientSeq: m.clientSeq } : {}),
  };
}

function ledgerKey(op, sid, requestId) {
  return `${op}\u0000${sid}\u0000${requestId.trim()}`;
}

/** SHA-256 of the canonical JSON (keys sorted) of the whole command. */
function digest(body) {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Resolves once `turn` ended (at most 2 s), as app.mjs's delete does. */
function untilDone(turn) {
  if (turn.done) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, 2000);
    function done() {
      clearTimeout(timer);
      turn.listeners.delete(check);
      resolve();
    }
    function check() {
      if (turn.done) done();
    }
    turn.listeners.add(check);
  });
}

/**
 * @typedef {object} Native  a session's pi-native side, kept for the life of the process
 * @property {string} sid
 * @property {EventChannel} channel
 * @property {Map<string, import('./pi-native-messages.mjs').MessageMeta>} meta by message id
 * @property {Map<string, string>} displayByNonce a follow-up's `displayContent`
 * @property {{turnId: string} | null} run the pi run in progress (between agent-start and agent-end)
 * @property {string} [lastTurnId]
 * @property {{code: string, message: string}} [error] the last run failed
 * @property {WeakSet<object>} attached the PiSession objects observed
 * @property {MetadataReconciler} rec what the real server would recover of selectors (always kept)
 * @property {Set<string>} seenNonces follow-up nonces queued since the last clear-all (§3.13)
 */
