// The pi runtime: one real `Agent` of @earendil-works/pi-agent-core per session, driven by the
// scripted `fauxProvider` of @earendil-works/pi-ai, with real tools. Its events are projected
// into `data-pi-*` chunks (SPEC §3) and its own transcript is the canonical history.
//
// pi behaviours this file works around, each where it happens:
// - pi messages have no ids: an id is assigned at `message_start` and kept (WeakMap on the
//   message object) until `message_end` and after; the assistant's start and end events carry
//   different objects (a copy of the partial, then the final message), so the id of the one
//   assistant message streaming at a time is also held in `currentAssistantId`.
// - a follow-up accepted while `agent_end` is being emitted stays in the agent's queue (the
//   loop polled it already): the turn drains it with `continue()` in the same stream.
// - `abort()` keeps the queues: after a stop, accepted follow-ups stay queued (the client sees
//   them as stalled) and run after the next prompt's answer, unless the client deletes them.
// - the follow-up queue cannot be edited: removing one item is clear + re-enqueue the others;
//   which items the agent still holds is told by `peekQueuedMessages()` (its head), since the
//   loop takes an item before it emits the item's `message_start`.
//
// Tool UI metadata: a tool's partial results (`onUpdate`, pi's `tool_execution_update` event)
// whose `details.uiKind` is set are projected as `data-tool-ui` chunks
// `{toolCallId, rendererId: details.uiKind, details}` (not history: the client keeps the latest
// for the tool's part); the final `details` ride on `data-pi-tool-result` and the canonical
// history. The catalog (`catalog()`) lists the tools the session's agent really has.
//
// Human in the loop (SPEC §13): a tool call can wait for the user. `deleteFile` is gated by
// pi's `beforeToolCall` hook, which awaits the user's approval (`POST …/approval`); `askUser`'s
// own `execute` awaits the user's answer (`POST …/tool-output`). While a call waits the stream
// says so (`data-pi-tool-approval-request`, `data-pi-tool-input-request`), the answer is
// streamed too (`data-pi-tool-approval-response`), and the history shows the waiting state
// (`waits`, laid over the transcript's tool parts). A stop ends the waits first (an error
// result `Stopped by the user`) and aborts the agent once pi finalized those calls: pi answers
// a hook that returns on an aborted signal with its own `Operation aborted` instead.
import { randomUUID } from 'node:crypto';
import { Agent } from '@earendil-works/pi-agent-core';
import {
  createModels,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxThinking,
  fauxToolCall,
} from '@earendil-works/pi-ai';
import { replyToToolResults, replyToUser, SUBAGENT_TOOL } from './script.mjs';
import { subagentTool } from './subagent.mjs';
import {
  askUserParameters, catalogEntry, deleteFileParameters, echoParameters, FIXTURE_FOLDERS, lsParameters,
  runDeleteFile, runEcho, runLs, TOOL_DESCRIPTIONS,
} from './tools.mjs';
import { Turn } from './turn.mjs';

const MODEL = { id: 'faux-scripted', name: 'Scripted faux model', reasoning: true };
const SYSTEM_PROMPT = 'You are the scripted agent of the agent-chat-store reference server.';
const SUBAGENT_PROMPT = 'You are a subagent: do the task you are given and answer with a summary.';

/** The result text of a call the user stopped while it waited, and the prefix of a denied one's. */
const STOPPED_TEXT = 'Stopped by the user';
const BLOCKED_PREFIX = 'Blocked by the user';
/** A wait the history still had when the server stopped: it cannot be answered any more. */
const EXPIRED_TEXT = 'Not answered: the server stopped while the call waited';

// One faux provider per pace (tokens per second, chunk size). The response queue holds only
// copies of the same pure factory, so sessions can share a provider: whichever request takes
// whichever queued step, the answer is a function of that request's transcript.
const providers = new Map();
function scriptedModels(tps, chunkTokens) {
  const key = `${tps}/${chunkTokens}`;
  let p = providers.get(key);
  if (!p) {
    const faux = fauxProvider({
      api: 'faux',
      provider: 'faux',
      models: [MODEL],
      tokensPerSecond: tps > 0 ? tps : undefined,
      tokenSize: { min: chunkTokens, max: chunkTokens },
    });
    const models = createModels();
    models.setProvider(faux.provider);
    p = { faux, models, model: faux.getModel() };
    providers.set(key, p);
  }
  return p;
}

function textOf(content) {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
}

/**
 * The faux response factory: the scripted reply to the request's real transcript.
 * `tools`: names of the tools the agent has; `folders`: a subagent's folder hints.
 */
function respond(context, { words, tools, folders }) {
  const msgs = context.messages.filter((m) => m.role !== 'system');
  const last = msgs[msgs.length - 1];
  let reply;
  if (last?.role === 'toolResult') {
    // The calls' inputs, for results that name them (`Kept FILE.`).
    const inputs = new Map();
    for (const m of msgs) {
      if (m.role === 'assistant') for (const b of m.content) if (b.type === 'toolCall') inputs.set(b.id, b.arguments);
    }
    const results = [];
    let i = msgs.length - 1;
    for (; i >= 0 && msgs[i].role === 'toolResult'; i--) {
      const text = textOf(msgs[i].content);
      const isError = !!msgs[i].isError;
      results.unshift({
        name: msgs[i].toolName,
        text,
        isError,
        // a call `beforeToolCall` blocked on the user's denial (the transcript says so)
        denied: isError && text.startsWith(BLOCKED_PREFIX),
        input: inputs.get(msgs[i].toolCallId),
      });
    }
    const user = msgs.slice(0, i + 1).reverse().find((m) => m.role === 'user');
    reply = replyToToolResults(user ? textOf(user.content) : '', results);
  } else if (last?.role === 'user') {
    const earlier = msgs.slice(0, -1).filter((m) => m.role === 'user').map((m) => textOf(m.content));
    reply = replyToUser(textOf(last.content), { words, tools, folders, earlier });
  } else {
    reply = { blocks: [{ type: 'text', text: 'Nothing to answer.' }], stop: 'stop' };
  }
  if (reply.stop === 'error') {
    return fauxAssistantMessage([], { stopReason: 'error', errorMessage: reply.errorMessage });
  }
  const blocks = reply.blocks.map((b) => {
    if (b.type === 'thinking') return fauxThinking(b.text);
    if (b.type === 'text') return fauxText(b.text);
    return fauxToolCall(b.name, b.args, { id: `call_${randomUUID().slice(0, 8)}` });
  });
  return fauxAssistantMessage(blocks, { stopReason: reply.stop });
}

function agentTool(name, parameters, run) {
  return {
    name,
    label: name,
    description: TOOL_DESCRIPTIONS[name],
    parameters,
    execute: async (_toolCallId, params) => {
      const r = await run(params);
      return { content: [{ type: 'text', text: r.text }], details: r.details };
    },
  };
}

/** The catalog of a pi session not created yet: the tools a new session's agent gets. */
export function piCatalog() {
  return { tools: ['ls', 'echo', SUBAGENT_TOOL, 'deleteFile', 'askUser'].map((name) => catalogEntry(name)) };
}

/** The real tools every agent has (a subagent has only these). */
const BASE_TOOLS = [agentTool('ls', lsParameters, runLs), agentTool('echo', echoParameters, runEcho)];

/**
 * A pi `Agent` whose model is the scripted faux provider at the knobs' current pace.
 * `folders`: given to a subagent, so a task naming a fixture folder lists it.
 */
function scriptedAgent({ knobs, systemPrompt, tools, sessionId, folders, messages }) {
  const names = tools.map((t) => t.name);
  return new Agent({
    initialState: { systemPrompt, model: scriptedModels(0, 1).model, tools, ...(messages ? { messages } : {}) },
    sessionId,
    streamFn: (model, context, options) => {
      const { faux, models } = scriptedModels(knobs.tps, knobs.chunkTokens);
      const words = knobs.words;
      faux.appendResponses([(ctx) => respond(ctx, { words, tools: names, folders })]);
      return models.streamSimple(model, context, options);
    },
  });
}

function parseDataUrl(url) {
  const m = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url ?? '');
  if (!m) return undefined;
  return { mediaType: m[1], base64: m[2] ? m[3] : Buffer.from(decodeURIComponent(m[3])).toString('base64') };
}

/** A pi user message from the request's text and file attachments. */
function userMessage(text, attachments) {
  const content = [];
  const notes = [];
  for (const a of attachments ?? []) {
    const data = parseDataUrl(a.url);
    if (data && a.mediaType.startsWith('image/')) content.push({ type: 'image', data: data.base64, mimeType: a.mediaType });
    else notes.push(`[attached: ${a.filename ?? a.url.slice(0, 40)} (${a.mediaType})]`);
  }
  const full = [text, ...notes].filter(Boolean).join('\n');
  if (full !== '' || content.length === 0) content.unshift({ type: 'text', text: full });
  return { role: 'user', content, timestamp: Date.now() };
}

export class PiSession {
  /**
   * @param {string} id @param {import('./app.mjs').Knobs} knobs
   * @param {{journal?: {restore(): {messages: object[], meta: Map<object, {id: string, files?: object[]}>, waits?: object[]},
   *   message(m: object, ui?: {id?: string, files?: object[]}): void, wait(w: object): void, turnEnded(turn: Turn): void}}} [opts]
   *   `journal`: where the session is kept (session-store.mjs); the agent starts from its transcript
   *   (and the history keeps the final states of the calls that waited for the user)
   */
  constructor(id, knobs, { journal } = {}) {
    this.id = id;
    this.runtime = 'pi';
    this.knobs = knobs;
    this.journal = journal;
    /** @type {WeakMap<object, string>} pi message → UI message id */
    this.ids = new WeakMap();
    /** @type {WeakMap<object, object[]>} pi user message → its file attachments (for the UI) */
    this.files = new WeakMap();
    this.usedIds = new Set();
    this.currentAssistantId = undefined;
    /** content index → open part of the streaming assistant message */
    this.openParts = new Map();
    /** toolCallId → id of the assistant message owning the call (latest wins) */
    this.toolOwner = new Map();
    this.followUps = {
      lastSeq: undefined,
      /** @type {Map<string, FollowUp>} */
      byNonce: new Map(),
      /** accepted, not consumed yet, oldest first (some may already be taken by the loop) */
      /** @type {FollowUp[]} */
      pending: [],
      deletedSeqs: new Set(),
      deletedNonces: new Set(),
    };
    /** @type {Turn | null} */
    this.activeTurn = null;
    /** @type {Turn | null} */
    this.lastTurn = null;
    /** @type {Map<string, Wait>} toolCallId → a call that waited for the user (kept for the history) */
    this.waits = new Map();
    /** @type {Map<string, Wait>} approvalId → the approval's wait */
    this.approvals = new Map();
    /**
     * Who else reads the projection (pi-native.mjs): each chunk pushed to the turn, plus
     * `{type: 'queue-changed'}` when the follow-up queue changed outside the agent's loop. One
     * projection, two wire formats: the other protocol maps these chunks instead of re-reading
     * pi's events.
     * @type {Set<(chunk: object, turn: Turn | null) => void>}
     */
    this.observers = new Set();
    // The harness-only tool: a nested agent with the base tools (no recursion).
    const subagent = subagentTool(() =>
      scriptedAgent({ knobs, systemPrompt: SUBAGENT_PROMPT, tools: BASE_TOOLS, sessionId: `${id}/subagent`, folders: FIXTURE_FOLDERS }),
    );
    // A session kept on disk goes on from its transcript, with the UI ids it had.
    const restored = journal?.restore();
    for (const [m, ui] of restored?.meta ?? []) {
      this.ids.set(m, ui.id);
      this.usedIds.add(ui.id);
      if (ui.files) this.files.set(m, ui.files);
    }
    // A wait does not survive a restart (nothing holds the call open any more): one still
    // waiting in the file is expired; the answered and stopped ones keep their final states.
    for (const w of restored?.waits ?? []) {
      const wait = { ...w, state: w.state === 'waiting' ? 'expired' : w.state, restored: true };
      this.waits.set(wait.toolCallId, wait);
      if (wait.approvalId) this.approvals.set(wait.approvalId, wait);
    }
    const tools = [...BASE_TOOLS, subagent, agentTool('deleteFile', deleteFileParameters, runDeleteFile), this.askUserTool()];
    this.agent = scriptedAgent({ knobs, systemPrompt: SYSTEM_PROMPT, tools, sessionId: id, messages: restored?.messages });
    // `deleteFile` asks first: pi's hook awaits the user's approval before the tool runs.
    this.agent.beforeToolCall = (context, signal) => this.beforeToolCall(context, signal);
    this.agent.subscribe((event) => this.onEvent(event));
    // Fault switch: a slow awaited `agent_end` listener, as a real app has when it persists the
    // session. pi's loop polled the follow-up queue before `agent_end`, so a follow-up posted
    // now stays queued; `run()` drains it.
    this.agent.subscribe(async (event) => {
      if (event.type === 'agent_end' && this.knobs.agentEndDelayMs > 0) {
        await new Promise((r) => setTimeout(r, this.knobs.agentEndDelayMs));
      }
    });
  }

  capabilities() {
    return { nativeFollowUp: true, aiSdkOwnsHistory: false, runtime: 'pi', followUpMode: this.agent.followUpMode };
  }

  /** `GET …/catalog`: the tools this session's agent has, with their UI hints. */
  catalog() {
    return { tools: this.agent.state.tools.map((t) => catalogEntry(t.name, t.description, t.parameters)) };
  }

  newId(role, wanted) {
    let id = wanted && !this.usedIds.has(wanted) ? wanted : `${role}-${randomUUID()}`;
    this.usedIds.add(id);
    return id;
  }

  idOf(message, role) {
    let id = this.ids.get(message);
    if (!id) {
      id = this.newId(role);
      this.ids.set(message, id);
    }
    return id;
  }

  // ----- turns ------------------------------------------------------------------------------

  /** Starts a turn with a user message; the caller has checked that none is active. */
  startTurn({ message, attachments, messageId, clientTurnId }) {
    const turn = new Turn({ sessionId: this.id, clientTurnId, runtime: 'pi' });
    this.activeTurn = turn;
    this.lastTurn = turn;
    turn.push({ type: 'data-pi-mode', data: { enabled: true } });
    turn.push({ type: 'data-turn-start', data: { turnId: turn.id } });
    turn.push({ type: 'start', messageId: turn.id });
    const msg = userMessage(message, attachments);
    if (attachments?.length) this.files.set(msg, attachments);
    this.ids.set(msg, this.newId('user', messageId));
    // Where the turn's messages begin in the transcript, and whether one of its assistant
    // messages ended (the `legacyHistory` switch hides the turn until then).
    turn.historyStart = this.agent.state.messages.length;
    turn.assistantEnded = false;
    void this.run(turn, msg);
    return turn;
  }

  async run(turn, msg) {
    let failed;
    try {
      await this.agent.prompt(msg);
      // A follow-up accepted while `agent_end` was emitted stays queued: run it in this turn
      // (unless the `strandFollowUps` switch makes this the real server, which does not).
      let guard = 0;
      while (!this.knobs.strandFollowUps && !turn.stopped && this.agent.hasQueuedMessages() && guard++ < 1000) {
        const before = this.agent.state.messages.length;
        await this.agent.continue();
        if (this.agent.state.messages.length === before) break;
      }
    } catch (e) {
      failed = e instanceof Error ? e.message : String(e);
    } finally {
      // No await from the last queue check to here: a follow-up accepted from now on finds
      // no active turn and waits for the next one.
      // The turn's outcome is its last message's: an `error` chunk when the provider failed
      // (the failure of an earlier message stays on its message-end), `abort` after a stop.
      const last = this.agent.state.messages.at(-1);
      const providerError = last?.role === 'assistant' && last.stopReason === 'error' ? last.errorMessage ?? 'provider error' : undefined;
      if (failed !== undefined || (providerError !== undefined && !turn.stopped)) {
        turn.push({ type: 'error', errorText: failed ?? providerError });
      }
      if (turn.stopped) turn.push({ type: 'abort', reason: 'stopped' });
      else if (failed === undefined && providerError === undefined) turn.push({ type: 'finish', finishReason: 'stop' });
      this.journal?.turnEnded(turn);
      this.activeTurn = null;
      turn.end();
    }
  }

  /**
   * Stops the active turn (if `turnId` names it, or is absent). A call waiting for the user is
   * answered as stopped first (`Stopped by the user`); the agent is aborted once pi finalized
   * those calls (`tool_execution_end`), so pi does not answer them `Operation aborted`
   * instead, and its next model call, if any, is the aborted one.
   */
  stop(turnId) {
    const turn = this.activeTurn;
    if (!turn || (turnId && !turn.matches(turnId))) return false;
    turn.stopped = true;
    const waiting = [...this.waits.values()].filter((w) => w.state === 'waiting');
    if (waiting.length === 0) {
      this.agent.abort();
      return true;
    }
    turn.abortAfter = new Set(waiting.map((w) => w.toolCallId));
    // (a bound, should pi never finalize them)
    turn.abortTimer = setTimeout(() => this.abortStopped(turn), 1000);
    for (const w of waiting) this.settle(w, 'stopped', { stopped: true });
    return true;
  }

  abortStopped(turn) {
    clearTimeout(turn.abortTimer);
    turn.abortAfter = undefined;
    if (this.activeTurn === turn) this.agent.abort();
  }

  // ----- the projection ---------------------------------------------------------------------

  emit(type, data) {
    const turn = this.activeTurn;
    if (!turn) return;
    this.out(turn, { type: `data-${type}`, data: { seq: turn.nextSeq(), ...data } });
  }

  /** A chunk of the turn's stream, also shown to the observers. */
  out(turn, chunk) {
    turn.push(chunk);
    this.tell(chunk, turn);
  }

  tell(chunk, turn) {
    for (const o of this.observers) {
      try {
        o(chunk, turn);
      } catch (e) {
        console.error(e); // an observer's bug must not break the turn
      }
    }
  }

  /** Registers a projection observer; returns its removal. */
  observe(fn) {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /** The follow-up queue changed by a command (not by the loop taking an item). */
  queueChanged() {
    this.tell({ type: 'queue-changed' }, this.activeTurn);
  }

  onEvent(e) {
    switch (e.type) {
      case 'agent_start':
        this.emit('pi-agent-start', {});
        break;
      case 'agent_end':
        this.emit('pi-agent-end', {});
        break;
      case 'message_start':
        this.onMessageStart(e.message);
        break;
      case 'message_update':
        if (e.message.role === 'assistant') this.onAssistantUpdate(e.assistantMessageEvent);
        break;
      case 'message_end':
        if (e.message.role === 'assistant' && this.activeTurn) this.activeTurn.assistantEnded = true;
        this.onMessageEnd(e.message);
        // Kept as the agent keeps it (pi pushed it to `state.messages` before this listener),
        // so the file and the history route hold the same transcript.
        this.journal?.message(e.message, { id: this.ids.get(e.message), files: this.files.get(e.message) });
        break;
      case 'tool_execution_update':
        this.onToolUpdate(e);
        break;
      case 'tool_execution_end': {
        // A stop waited for its waiting calls to be finalized: abort now.
        const turn = this.activeTurn;
        if (turn?.abortAfter?.delete(e.toolCallId) && turn.abortAfter.size === 0) this.abortStopped(turn);
        break;
      }
      default:
        break; // turn_start/turn_end (one model call), tool_execution_start/end: not history
    }
  }

  /**
   * A tool's progress with typed UI details (`details.uiKind`): a `data-tool-ui` chunk. Not a
   * `data-pi-*` chunk (no seq, not history): the client shows the latest for the tool's part
   * until the result's own `details` arrive.
   */
  onToolUpdate(e) {
    const details = e.partialResult?.details;
    if (!details || typeof details.uiKind !== 'string') return;
    if (!this.activeTurn) return;
    this.out(this.activeTurn, {
      type: 'data-tool-ui',
      data: { toolCallId: e.toolCallId, rendererId: details.uiKind, details },
    });
  }

  onMessageStart(m) {
    if (m.role === 'user') {
      const id = this.idOf(m, 'user');
      const entry = this.takeFollowUp(m);
      const text = textOf(m.content);
      if (entry && this.activeTurn) {
        this.out(this.activeTurn, {
          type: 'data-followup-consumed',
          data: { ...keys(entry), messageId: id, text },
        });
      }
      this.emit('pi-message-start', {
        messageId: id,
        role: 'user',
        ...(entry?.nonce !== undefined ? { clientNonce: entry.nonce } : {}),
        text,
      });
    } else if (m.role === 'assistant') {
      this.currentAssistantId = this.newId('assistant');
      this.openParts = new Map();
      this.emit('pi-message-start', { messageId: this.currentAssistantId, role: 'assistant' });
    }
  }

  onAssistantUpdate(ev) {
    const messageId = this.currentAssistantId;
    const partId = String(ev.contentIndex);
    switch (ev.type) {
      case 'text_start':
        this.openParts.set(ev.contentIndex, { kind: 'text' });
        this.emit('pi-text-start', { messageId, partId });
        break;
      case 'text_delta':
        this.emit('pi-text-delta', { messageId, partId, delta: ev.delta });
        break;
      case 'text_end':
        this.openParts.delete(ev.contentIndex);
        this.emit('pi-text-end', { messageId, partId, text: ev.content });
        break;
      case 'thinking_start':
        this.openParts.set(ev.contentIndex, { kind: 'reasoning' });
        this.emit('pi-reasoning-start', { messageId, partId });
        break;
      case 'thinking_delta':
        this.emit('pi-reasoning-delta', { messageId, partId, delta: ev.delta });
        break;
      case 'thinking_end':
        this.openParts.delete(ev.contentIndex);
        this.emit('pi-reasoning-end', { messageId, partId, text: ev.content });
        break;
      case 'toolcall_start': {
        const block = ev.partial.content[ev.contentIndex];
        this.openParts.set(ev.contentIndex, { kind: 'tool', toolCallId: block.id, toolName: block.name });
        this.toolOwner.set(block.id, messageId);
        this.emit('pi-tool-call-start', { messageId, toolCallId: block.id, toolName: block.name });
        break;
      }
      case 'toolcall_delta': {
        const open = this.openParts.get(ev.contentIndex);
        const toolCallId = open?.toolCallId ?? ev.partial.content[ev.contentIndex]?.id;
        this.emit('pi-tool-call-delta', { messageId, toolCallId, delta: ev.delta });
        break;
      }
      case 'toolcall_end':
        this.openParts.delete(ev.contentIndex);
        this.toolOwner.set(ev.toolCall.id, messageId);
        this.emit('pi-tool-call-end', {
          messageId,
          toolCallId: ev.toolCall.id,
          toolName: ev.toolCall.name,
          input: ev.toolCall.arguments,
        });
        break;
      default:
        break;
    }
  }

  onMessageEnd(m) {
    if (m.role === 'user') {
      const id = this.idOf(m, 'user');
      this.emit('pi-message-end', { messageId: id, role: 'user', text: textOf(m.content), final: this.userUi(m, id) });
    } else if (m.role === 'assistant') {
      const id = this.currentAssistantId ?? this.newId('assistant');
      this.ids.set(m, id);
      // A stopped or failed message leaves parts open: close them with what the message has.
      for (const [index, open] of this.openParts) {
        const block = m.content[index];
        const partId = String(index);
        if (open.kind === 'text') this.emit('pi-text-end', { messageId: id, partId, text: block?.text ?? '' });
        else if (open.kind === 'reasoning') this.emit('pi-reasoning-end', { messageId: id, partId, text: block?.thinking ?? '' });
        else this.emit('pi-tool-call-end', { messageId: id, toolCallId: open.toolCallId, toolName: open.toolName, input: block?.arguments ?? {} });
      }
      this.openParts = new Map();
      for (const b of m.content) if (b.type === 'toolCall') this.toolOwner.set(b.id, id);
      this.emit('pi-message-end', {
        messageId: id,
        role: 'assistant',
        text: textOf(m.content),
        final: { id, role: 'assistant', parts: assistantParts(m) },
        stopReason: m.stopReason,
        ...(m.errorMessage ? { errorMessage: m.errorMessage } : {}),
      });
      this.currentAssistantId = undefined;
    } else if (m.role === 'toolResult') {
      const owner = this.toolOwner.get(m.toolCallId);
      this.emit('pi-tool-result', {
        messageId: owner,
        toolCallId: m.toolCallId,
        toolName: m.toolName,
        // The whole result, as the server family streams it: `{content}` (SPEC §7).
        output: { content: m.content },
        isError: !!m.isError,
        details: m.details,
      });
    }
  }

  // ----- human in the loop ------------------------------------------------------------------

  /** pi's hook before each tool call: `deleteFile` waits for the user's approval. */
  async beforeToolCall({ toolCall, args }, signal) {
    if (toolCall.name !== 'deleteFile') return undefined;
    const file = typeof args?.path === 'string' ? args.path : '';
    const answer = await this.waitFor(
      { kind: 'approval', toolCallId: toolCall.id, toolName: toolCall.name, approvalId: `approval-${randomUUID()}`, requestReason: `deletes ${file}` },
      signal,
    );
    if (answer.stopped) return { block: true, reason: STOPPED_TEXT };
    if (!answer.approved) return { block: true, reason: `${BLOCKED_PREFIX}: ${answer.reason || 'denied'}` };
    return undefined; // approved: the tool runs
  }

  /** `askUser`: its `execute` waits for the user's answer, which is its result. */
  askUserTool() {
    return {
      name: 'askUser',
      label: 'askUser',
      description: TOOL_DESCRIPTIONS.askUser,
      parameters: askUserParameters,
      execute: async (toolCallId, params, signal) => {
        const question = typeof params?.question === 'string' ? params.question : '';
        const options = Array.isArray(params?.options) ? params.options.filter((o) => typeof o === 'string') : [];
        // The `askDelayMs` knob: a tool that works a while before it asks (the client already
        // shows the call, so a user may answer before the question is put).
        if (this.knobs.askDelayMs > 0 && !signal?.aborted) {
          await new Promise((r) => {
            const timer = setTimeout(r, this.knobs.askDelayMs);
            signal?.addEventListener('abort', () => { clearTimeout(timer); r(); }, { once: true });
          });
        }
        const answer = await this.waitFor({ kind: 'input', toolCallId, toolName: 'askUser', question, options }, signal);
        if (answer.stopped) return { content: [{ type: 'text', text: STOPPED_TEXT }], details: {}, isError: true };
        if (answer.errorText !== undefined) return { content: [{ type: 'text', text: answer.errorText }], details: {}, isError: true };
        return { content: [{ type: 'text', text: answer.text }], details: { answer: answer.text } };
      },
    };
  }

  /**
   * Holds the call open until the user answers (or a stop): streams the request, keeps the
   * wait for the history and the answer routes. Resolves with the answer.
   * @param {Omit<Wait, 'state'|'messageId'|'resolve'>} init
   */
  waitFor(init, signal) {
    /** @type {Wait} */
    const w = { ...init, messageId: this.toolOwner.get(init.toolCallId), state: 'waiting' };
    const answered = new Promise((resolve) => {
      w.resolve = resolve;
    });
    this.waits.set(w.toolCallId, w);
    if (w.approvalId) this.approvals.set(w.approvalId, w);
    if (w.kind === 'approval') {
      this.emit('pi-tool-approval-request', {
        messageId: w.messageId,
        toolCallId: w.toolCallId,
        approvalId: w.approvalId,
        ...(w.requestReason ? { reason: w.requestReason } : {}),
      });
    } else {
      this.emit('pi-tool-input-request', { messageId: w.messageId, toolCallId: w.toolCallId, question: w.question, options: w.options });
    }
    this.journal?.wait(waitRecord(w));
    // An abort that did not come through `stop()` (which settles first) ends the wait too.
    if (signal?.aborted) this.settle(w, 'stopped', { stopped: true });
    else signal?.addEventListener('abort', () => this.settle(w, 'stopped', { stopped: true }), { once: true });
    return answered;
  }

  /** Ends a wait: `answered` (the user's answer) or `stopped`. */
  settle(w, state, answer) {
    if (w.state !== 'waiting') return;
    w.state = state;
    this.journal?.wait(waitRecord(w));
    const resolve = w.resolve;
    w.resolve = undefined;
    resolve?.(answer);
  }

  /** `POST …/approval` (validated). Returns `[status, body]`. */
  answerApproval({ approvalId, approved, reason }) {
    const w = this.approvals.get(approvalId);
    if (!w || w.state === 'stopped' || w.state === 'expired') {
      return [404, err('approval_not_found', w ? `approval ${approvalId} no longer waits (${w.state})` : `no approval ${approvalId}`)];
    }
    if (w.state === 'answered') return [409, alreadyAnswered(`approval ${approvalId}`, w.approved === approved && (w.reason ?? '') === (reason ?? ''))];
    w.approved = approved;
    if (reason) w.reason = reason;
    // Streamed before the call goes on: the answer, then the result.
    this.emit('pi-tool-approval-response', {
      messageId: w.messageId,
      toolCallId: w.toolCallId,
      approvalId,
      approved,
      ...(reason ? { reason } : {}),
    });
    this.settle(w, 'answered', { approved, reason });
    return [202, { ok: true }];
  }

  /** `POST …/tool-output` (validated: `text` or `errorText`). Returns `[status, body]`. */
  answerToolOutput({ toolCallId, text, errorText }) {
    const w = this.waits.get(toolCallId);
    if (!w || w.kind !== 'input' || w.state === 'stopped' || w.state === 'expired') {
      const why = !w ? 'waits for no output' : w.kind !== 'input' ? 'waits for an approval, not an output' : `no longer waits (${w.state})`;
      return [404, err('tool_call_not_found', `tool call ${toolCallId} ${why}`)];
    }
    if (w.state === 'answered') {
      return [409, alreadyAnswered(`tool call ${toolCallId}`, errorText !== undefined ? w.errorText === errorText : w.answer === text)];
    }
    if (errorText !== undefined) w.errorText = errorText;
    else w.answer = text;
    this.settle(w, 'answered', errorText !== undefined ? { errorText } : { text });
    return [202, { ok: true }];
  }

  // ----- follow-ups -------------------------------------------------------------------------

  /**
   * A follow-up POST (validated). Returns `[status, body]`.
   * Identity is `clientNonce`; order is `clientSeq` (strictly increasing, gaps allowed).
   */
  followUp({ message, attachments, clientSeq, clientNonce }) {
    const f = this.followUps;
    if ((clientSeq !== undefined && f.deletedSeqs.has(clientSeq)) || (clientNonce !== undefined && f.deletedNonces.has(clientNonce))) {
      return [202, { queued: false, deleted: true }];
    }
    if (clientNonce !== undefined && f.byNonce.has(clientNonce)) {
      return [202, { queued: true, duplicate: true }];
    }
    if (clientSeq !== undefined && f.lastSeq !== undefined && clientSeq <= f.lastSeq) {
      return [409, err('followup_out_of_order', `clientSeq ${clientSeq} is not above the last accepted ${f.lastSeq}`)];
    }
    this.enqueueFollowUp({ message, attachments, clientSeq, clientNonce });
    return [202, { queued: true }];
  }

  /**
   * Appends a follow-up to the agent's own queue, with no checks (the callers' protocols
   * differ on ordering and dedupe). Returns its entry.
   */
  enqueueFollowUp({ message, attachments, clientSeq, clientNonce }) {
    const f = this.followUps;
    const msg = userMessage(message, attachments);
    if (attachments?.length) this.files.set(msg, attachments);
    /** @type {FollowUp} */
    const entry = { seq: clientSeq, nonce: clientNonce, text: message, msg, state: 'queued' };
    if (clientSeq !== undefined) f.lastSeq = clientSeq;
    if (clientNonce !== undefined) f.byNonce.set(clientNonce, entry);
    f.pending.push(entry);
    this.agent.followUp(msg);
    this.queueChanged();
    return entry;
  }

  /**
   * Removes these entries from the agent's queue (those it still holds; the queue cannot be
   * edited, so: clear, then re-enqueue the others in order). Returns the removed entries.
   */
  dropFollowUps(entries) {
    const held = this.heldByAgent();
    const drop = held.filter((e) => entries.includes(e));
    if (drop.length === 0) return [];
    this.agent.clearFollowUpQueue();
    for (const e of held) if (!drop.includes(e)) this.agent.followUp(e.msg);
    const f = this.followUps;
    for (const e of drop) {
      f.pending.splice(f.pending.indexOf(e), 1);
      e.state = 'deleted';
    }
    this.queueChanged();
    return drop;
  }

  /** The pending entries the agent still holds (the loop may have taken the head already). */
  heldByAgent() {
    const head = this.agent.peekQueuedMessages()[0];
    const i = this.followUps.pending.findIndex((e) => e.msg === head);
    return i < 0 ? [] : this.followUps.pending.slice(i);
  }

  takeFollowUp(m) {
    const pending = this.followUps.pending;
    const i = pending.findIndex((e) => e.msg === m);
    if (i < 0) return undefined;
    const [entry] = pending.splice(i, 1);
    entry.state = 'consumed';
    return entry;
  }

  /** DELETE of a follow-up: removed from the agent's queue unless the agent took it already. */
  deleteFollowUp({ clientSeq, clientNonce }) {
    const f = this.followUps;
    const entry =
      (clientNonce !== undefined ? f.byNonce.get(clientNonce) : undefined) ??
      (clientSeq !== undefined ? f.pending.find((e) => e.seq === clientSeq) : undefined);
    const tombstone = () => {
      if (clientSeq !== undefined) f.deletedSeqs.add(clientSeq);
      if (clientNonce !== undefined) f.deletedNonces.add(clientNonce);
      if (entry?.seq !== undefined) f.deletedSeqs.add(entry.seq);
      if (entry?.nonce !== undefined) f.deletedNonces.add(entry.nonce);
    };
    if (!entry) {
      tombstone(); // a DELETE that overtook its POST: the POST will answer `deleted`
      return 'unknown';
    }
    if (entry.state !== 'queued') return entry.state;
    if (!this.heldByAgent().includes(entry)) return 'taken';
    this.dropFollowUps([entry]);
    tombstone();
    return 'deleted';
  }

  // ----- canonical history ------------------------------------------------------------------

  userUi(m, id) {
    const parts = [];
    for (const a of this.files.get(m) ?? []) {
      parts.push({ type: 'file', mediaType: a.mediaType, ...(a.filename ? { filename: a.filename } : {}), url: a.url });
    }
    const text = textOf(m.content);
    if (text !== '' || parts.length === 0) parts.push({ type: 'text', text });
    return { id, role: 'user', parts };
  }

  /**
   * `GET …/messages`: the agent's own transcript as AI SDK UIMessages. `omitUnfinishedTurn`:
   * a running turn none of whose assistant messages ended yet is left out (the real server's
   * persistence).
   */
  uiMessages({ omitUnfinishedTurn = false } = {}) {
    const out = [];
    const turn = this.activeTurn;
    const all = this.agent.state.messages;
    const upto = omitUnfinishedTurn && turn && !turn.assistantEnded ? turn.historyStart : all.length;
    for (const m of all.slice(0, upto)) {
      if (m.role === 'user') out.push(this.userUi(m, this.idOf(m, 'user')));
      else if (m.role === 'assistant') out.push({ id: this.idOf(m, 'assistant'), role: 'assistant', parts: assistantParts(m) });
      else if (m.role === 'toolResult') {
        for (let i = out.length - 1; i >= 0; i--) {
          const part = out[i].role === 'assistant' && out[i].parts.find((p) => p.type.startsWith('tool-') && p.toolCallId === m.toolCallId);
          if (part) {
            applyToolResult(part, m);
            break;
          }
        }
      }
    }
    // The calls that waited for the user: their waiting states, and their answers.
    if (this.waits.size > 0) {
      for (const m of out) {
        if (m.role !== 'assistant') continue;
        for (const part of m.parts) {
          const w = part.toolCallId !== undefined ? this.waits.get(part.toolCallId) : undefined;
          if (w) applyWait(part, w);
        }
      }
    }
    return out;
  }

  dispose() {
    this.stop();
    this.agent.clearAllQueues();
  }
}

function keys(entry) {
  return {
    ...(entry.nonce !== undefined ? { clientNonce: entry.nonce } : {}),
    ...(entry.seq !== undefined ? { clientSeq: entry.seq } : {}),
  };
}

export function err(code, message, field) {
  return { error: { code, message, ...(field ? { field } : {}) } };
}

/** The UI parts of a pi assistant message (tool results are applied by the caller). */
export function assistantParts(m) {
  const parts = [];
  const unfinished = m.stopReason === 'aborted' || m.stopReason === 'error';
  for (const b of m.content) {
    if (b.type === 'thinking') parts.push({ type: 'reasoning', text: b.thinking, state: 'done' });
    else if (b.type === 'text') {
      if (b.text !== '') parts.push({ type: 'text', text: b.text, state: 'done' });
    } else if (b.type === 'toolCall') {
      parts.push(
        unfinished
          ? { type: `tool-${b.name}`, toolName: b.name, toolCallId: b.id, state: 'output-error', input: b.arguments, errorText: `not executed: the response was ${m.stopReason}` }
          : { type: `tool-${b.name}`, toolName: b.name, toolCallId: b.id, state: 'input-available', input: b.arguments },
      );
    }
  }
  return parts;
}

function applyToolResult(part, m) {
  const text = textOf(m.content);
  if (m.isError) {
    part.state = 'output-error';
    part.errorText = text;
    delete part.output;
  } else {
    part.state = 'output-available';
    // The result's content, as the server family stores it (SPEC §7).
    part.output = m.content;
  }
  // The tool's structured details, as the stream's `data-pi-tool-result` carried them (not an
  // AI SDK field: the `ai` package's validation strips it; the pi reducer keeps it).
  if (m.details !== undefined) part.details = m.details;
}

/**
 * A tool call's wait as the history keeps it, over the transcript's tool part:
 * - approval: waiting → `approval-requested`, `approval: {id, requestReason}`; answered →
 *   `approval-responded` (`approval.approved`, `reason`) until the result, then
 *   `output-available` (approved) or `output-denied` (denied: the blocked result is the
 *   denial, no `errorText`); stopped → the result `output-error` `Stopped by the user`;
 * - input: waiting → `input-available` with `interrupt: {question, options}`; answered or
 *   stopped → the result (the interrupt is gone);
 * - no result in the transcript and none to come (stopped; kept from before a restart, where
 *   a waiting one is `expired`) → `output-error` (`Stopped by the user`, or
 *   `Not answered: the server stopped while the call waited`).
 */
function applyWait(part, w) {
  const open = part.state === 'input-available';
  if (w.kind === 'approval') {
    const approval = { id: w.approvalId, ...(w.requestReason ? { requestReason: w.requestReason } : {}) };
    if (w.state === 'answered') {
      approval.approved = w.approved;
      if (w.reason) approval.reason = w.reason;
    }
    part.approval = approval;
    if (open && w.state === 'waiting') part.state = 'approval-requested';
    else if (open && w.state === 'answered') part.state = 'approval-responded';
    else if (w.state === 'answered' && !w.approved && part.state === 'output-error') {
      part.state = 'output-denied';
      delete part.errorText;
      delete part.output;
    }
  } else if (open && w.state === 'waiting') {
    part.interrupt = { question: w.question, options: w.options };
  }
  // No result, and none will come: stopped (its result is on its way), or kept from before a
  // restart (the call was cut off with the server).
  if (open && (w.state === 'stopped' || w.state === 'expired' || w.restored)) {
    part.state = 'output-error';
    part.errorText = w.state === 'stopped' ? STOPPED_TEXT : EXPIRED_TEXT;
  }
}

function alreadyAnswered(what, sameAnswer) {
  const e = err('already_answered', `${what} was answered already${sameAnswer ? ' (the same answer)' : ' (another answer)'}`);
  e.error.sameAnswer = sameAnswer;
  return e;
}

/** What the journal keeps of a wait (no resolver, no turn). */
function waitRecord(w) {
  const { resolve: _r, ...rest } = w;
  return rest;
}

/**
 * @typedef {object} Wait  a tool call held open for the user
 * @property {'approval'|'input'} kind
 * @property {string} toolCallId
 * @property {string} toolName
 * @property {string} [messageId] the assistant message owning the call
 * @property {'waiting'|'answered'|'stopped'|'expired'} state
 * @property {string} [approvalId] approval: the id its answer names
 * @property {string} [requestReason] approval: why (`deletes FILE`)
 * @property {boolean} [approved] approval: the answer
 * @property {string} [reason] approval: the answer's reason
 * @property {string} [question] input: the question
 * @property {string[]} [options] input: the answers offered
 * @property {string} [answer] input: the answer's text
 * @property {string} [errorText] input: an error answer
 * @property {boolean} [restored] kept from before a restart (nothing holds the call open)
 * @property {(answer: object) => void} [resolve] while waiting
 */

/** @typedef {{seq?: number, nonce?: string, text: string, msg: object, state: 'queued'|'consumed'|'deleted'}} FollowUp */
