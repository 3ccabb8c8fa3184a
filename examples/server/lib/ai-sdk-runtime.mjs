// The AI SDK runtime: the client owns history (it sends `messages` with each chat POST and
// PUTs the result), the server answers one assistant message per request with the `ai`
// package's `streamText` over a scripted mock model (`MockLanguageModelV4` from `ai/test`)
// that answers from the request's messages. Standard UI message chunks only; no follow-ups.
//
// With `--interactive-tools` its sessions also have the tools of the human-in-the-loop flows
// of `useChat`: `getLocation`, a client tool (no `execute`: the step ends at
// `tool-input-available` and the client supplies the output with `addToolOutput`), and
// `deleteFile`, which needs approval (`needsApproval: true`: the step ends at
// `tool-approval-request`; the next request, carrying the answer, runs it or reports it denied).
import { randomUUID } from 'node:crypto';
import { convertToModelMessages, isStepCount, jsonSchema, streamText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { replyToToolResults, replyToUser } from './script.mjs';
import {
  catalogEntry, deleteFileParameters, echoParameters, getLocationParameters, lsParameters,
  runDeleteFile, runEcho, runLs, TOOL_DESCRIPTIONS,
} from './tools.mjs';
import { Turn } from './turn.mjs';

const BASE_TOOLS = {
  ls: tool({
    description: TOOL_DESCRIPTIONS.ls,
    inputSchema: jsonSchema(lsParameters),
    execute: async (args) => (await runLs(args)).text,
  }),
  echo: tool({
    description: TOOL_DESCRIPTIONS.echo,
    inputSchema: jsonSchema(echoParameters),
    execute: async (args) => (await runEcho(args)).text,
  }),
};

const INTERACTIVE_TOOL_SET = {
  ...BASE_TOOLS,
  // A client tool: declared without `execute`, so `streamText` ends the step with the call
  // (`tool-input-available`) and the client runs it.
  getLocation: tool({
    description: TOOL_DESCRIPTIONS.getLocation,
    inputSchema: jsonSchema(getLocationParameters),
  }),
  // A server tool that asks first: `tool-approval-request`, then runs (approved) or not.
  deleteFile: tool({
    description: TOOL_DESCRIPTIONS.deleteFile,
    inputSchema: jsonSchema(deleteFileParameters),
    needsApproval: true,
    execute: async (args) => (await runDeleteFile(args)).text,
  }),
};

/** The tools of an AI SDK session (no harness tool such as `pi.subagent`). */
export function aiSdkTools({ interactiveTools = false } = {}) {
  if (!interactiveTools) return BASE_TOOLS;
  return INTERACTIVE_TOOL_SET;
}

/** This runtime's default tools (without `--interactive-tools`). */
export const AI_SDK_TOOL_NAMES = Object.keys(BASE_TOOLS);

/** `GET …/catalog` of an AI SDK session. */
export function aiSdkCatalog(opts) {
  const tools = aiSdkTools(opts);
  return { tools: Object.keys(tools).map((name) => catalogEntry(name, tools[name].description)) };
}

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function promptText(content) {
  if (typeof content === 'string') return content;
  return content.filter((p) => p.type === 'text').map((p) => p.text).join('');
}

function toolOutputText(output) {
  if (!output) return '';
  if (typeof output.value === 'string') return output.value;
  if (output.type === 'execution-denied') return output.reason ?? '';
  return JSON.stringify(output.value ?? output);
}

/** The scripted reply to a LanguageModelV4 prompt. */
function replyTo(prompt, { words, tools, attempt }) {
  const msgs = prompt.filter((m) => m.role !== 'system');
  const last = msgs[msgs.length - 1];
  if (last?.role === 'tool') {
    // The inputs of the calls, for results that name them (`Kept FILE.`).
    const inputs = new Map();
    for (const m of msgs) {
      if (m.role !== 'assistant' || typeof m.content === 'string') continue;
      for (const p of m.content) if (p.type === 'tool-call') inputs.set(p.toolCallId, p.input);
    }
    const results = last.content
      .filter((p) => p.type === 'tool-result')
      .map((p) => ({
        name: p.toolName,
        text: toolOutputText(p.output),
        isError: /error/.test(p.output?.type ?? ''),
        denied: p.output?.type === 'execution-denied',
        input: parseInput(inputs.get(p.toolCallId)),
        value: p.output?.value,
      }));
    const user = [...msgs].reverse().find((m) => m.role === 'user');
    return replyToToolResults(user ? promptText(user.content) : '', results);
  }
  if (last?.role === 'user') {
    const earlier = msgs.slice(0, -1).filter((m) => m.role === 'user').map((m) => promptText(m.content));
    return replyToUser(promptText(last.content), { words, tools, attempt, earlier });
  }
  return { blocks: [{ type: 'text', text: 'Nothing to answer.' }], stop: 'stop' };
}

function parseInput(input) {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch {
    return undefined;
  }
}

function split(text, size) {
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

/** The reply as LanguageModelV4 stream parts, paced like the faux provider (≈4 chars a token). */
function scriptedStream(reply, { tps, chunkTokens, signal }) {
  const parts = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: `resp-${randomUUID()}`, modelId: 'scripted' }];
  const size = 4 * chunkTokens;
  const paced = []; // indexes of parts that cost time
  reply.blocks.forEach((b, i) => {
    const id = `${b.type}-${i}`;
    if (b.type === 'thinking' || b.type === 'text') {
      const kind = b.type === 'thinking' ? 'reasoning' : 'text';
      parts.push({ type: `${kind}-start`, id });
      for (const d of split(b.text, size)) {
        paced.push(parts.length);
        parts.push({ type: `${kind}-delta`, id, delta: d });
      }
      parts.push({ type: `${kind}-end`, id });
    } else {
      const toolCallId = `call_${randomUUID().slice(0, 8)}`;
      const input = JSON.stringify(b.args);
      parts.push({ type: 'tool-input-start', id: toolCallId, toolName: b.name });
      for (const d of split(input, size)) {
        paced.push(parts.length);
        parts.push({ type: 'tool-input-delta', id: toolCallId, delta: d });
      }
      parts.push({ type: 'tool-input-end', id: toolCallId });
      parts.push({ type: 'tool-call', toolCallId, toolName: b.name, input });
    }
  });
  if (reply.stop === 'error') parts.push({ type: 'error', error: new Error(reply.errorMessage) });
  const unified = reply.stop === 'toolUse' ? 'tool-calls' : reply.stop === 'error' ? 'error' : 'stop';
  parts.push({ type: 'finish', usage: USAGE, finishReason: { unified, raw: unified } });
  const pacedSet = new Set(paced);
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (signal?.aborted) {
        controller.error(signal.reason ?? new DOMException('aborted', 'AbortError'));
        return;
      }
      if (i >= parts.length) {
        controller.close();
        return;
      }
      const part = parts[i];
      if (pacedSet.has(i) && tps > 0) {
        const tokens = Math.ceil(part.delta.length / 4);
        await new Promise((r) => setTimeout(r, (tokens / tps) * 1000));
        if (signal?.aborted) {
          controller.error(signal.reason ?? new DOMException('aborted', 'AbortError'));
          return;
        }
      }
      i += 1;
      controller.enqueue(part);
    },
  });
}

/**
 * The scripted model as a LanguageModelV4 (`MockLanguageModelV4`): it answers the prompt it is
 * given by the rules of script.mjs, paced by the knobs read when a call starts (`tps`,
 * `chunkTokens`, `words`). `toolNames`: the tools it may call; `attempt` (> 1) is named in the
 * answer; `signal` also ends its stream (besides the call's own `abortSignal`).
 * @param {{knobs: {tps: number, chunkTokens: number, words: number}, toolNames: string[], attempt?: number, signal?: AbortSignal}} opts
 */
export function scriptedModel({ knobs, toolNames, attempt = 1, signal }) {
  return new MockLanguageModelV4({
    provider: 'scripted',
    modelId: 'scripted-mock',
    doStream: async (options) => {
      const { tps, chunkTokens, words } = knobs;
      return {
        stream: scriptedStream(replyTo(options.prompt, { words, tools: toolNames, attempt }), { tps, chunkTokens, signal: options.abortSignal ?? signal }),
      };
    },
  });
}

export class AiSdkSession {
  /**
   * @param {string} id @param {import('./app.mjs').Knobs} knobs
   * @param {{interactiveTools?: boolean, journal?: {restore(): {history: object[], interactiveTools: boolean},
   *   history(messages: object[]): void, turnEnded(turn: Turn): void}}} [opts] the session's tool
   *   set, fixed at creation; `journal`: where the session is kept (session-store.mjs), which
   *   also gives the stored history and tool set of a session created before
   */
  constructor(id, knobs, { interactiveTools = false, journal } = {}) {
    const restored = journal?.restore();
    if (restored) interactiveTools = restored.interactiveTools;
    this.id = id;
    this.runtime = 'ai-sdk';
    this.knobs = knobs;
    this.interactiveTools = interactiveTools;
    this.tools = aiSdkTools({ interactiveTools });
    /** @type {Map<string, number>} answers given per user message id (regenerate counts up) */
    this.attempts = new Map();
    this.journal = journal;
    /** @type {object[]} UIMessage[] as the client last stored it (or as the last turn ended) */
    this.history = restored?.history ?? [];
    /**
     * @type {{parentId: string | null, message: object}[] | null} the client's branches (every
     * message it keeps, `history` its visible path), as its last PUT gave them; kept and given
     * back, never read: a turn's own history writes leave it as it was.
     */
    this.tree = restored?.tree ?? null;
    /** @type {Turn | null} */
    this.activeTurn = null;
    /** @type {Turn | null} */
    this.lastTurn = null;
  }

  capabilities() {
    return { nativeFollowUp: false, aiSdkOwnsHistory: true, runtime: 'ai-sdk' };
  }

  catalog() {
    return aiSdkCatalog({ interactiveTools: this.interactiveTools });
  }

  uiMessages() {
    return this.history;
  }

  setHistory(messages) {
    this.history = messages;
    this.journal?.history(messages);
  }

  /** @param {{parentId: string | null, message: object}[] | null} tree */
  setTree(tree) {
    this.tree = tree;
    this.journal?.branches(tree);
  }

  /**
   * Starts a turn over `messages` (validated UIMessages ending with the user message to answer,
   * or with the assistant message to continue after tool outputs or approvals).
   * `regenerate`: the answer to the last user message is asked for again; the answer then
   * names its attempt (`(attempt 2)`), counted per user message id.
   */
  startTurn({ messages, clientTurnId, regenerate = false }) {
    const turn = new Turn({ sessionId: this.id, clientTurnId, runtime: 'ai-sdk' });
    this.activeTurn = turn;
    this.lastTurn = turn;
    // What the turn answers is kept at once: a reload mid-turn finds the user's message, and
    // attaches to the answer (SPEC §12).
    this.setHistory(messages);
    let attempt = 1;
    const lastUser = messages.findLast((m) => m.role === 'user');
    if (lastUser && messages.at(-1) === lastUser) {
      // A fresh answer to a user message (a new one, an edited one, or a regenerated one).
      attempt = regenerate ? (this.attempts.get(lastUser.id) ?? 1) + 1 : 1;
      this.attempts.set(lastUser.id, attempt);
    }
    void this.run(turn, messages, attempt);
    return turn;
  }

  async run(turn, messages, attempt = 1) {
    const tools = this.tools;
    const signal = turn.abortController.signal;
    const model = scriptedModel({ knobs: this.knobs, toolNames: Object.keys(tools), attempt, signal });
    try {
      const result = streamText({
        model,
        messages: await convertToModelMessages(messages, { tools, ignoreIncompleteToolCalls: true }),
        tools,
        stopWhen: isStepCount(5),
        abortSignal: signal,
      });
      const ui = result.toUIMessageStream({
        originalMessages: messages,
        generateMessageId: () => `assistant-${randomUUID()}`,
        sendReasoning: true,
        onError: (e) => (e instanceof Error ? e.message : String(e)),
        onEnd: ({ messages: all }) => {
          // The client PUTs its copy after the turn; keeping ours too lets a reload mid-way
          // (before that PUT) still find the answer.
          this.setHistory(all);
        },
      });
      for await (const chunk of ui) turn.push(chunk);
    } catch (e) {
      turn.push({ type: 'error', errorText: e instanceof Error ? e.message : String(e) });
    } finally {
      if (turn.stopped && turn.chunks.at(-1)?.type !== 'abort') turn.push({ type: 'abort', reason: 'stopped' });
      this.journal?.turnEnded(turn);
      this.activeTurn = null;
      turn.end();
    }
  }

  stop(turnId) {
    const turn = this.activeTurn;
    if (!turn || (turnId && !turn.matches(turnId))) return false;
    turn.stopped = true;
    turn.abortController.abort();
    return true;
  }

  dispose() {
    this.stop();
  }
}
