// The AI SDK runtime: the client owns history (it sends `messages` with each chat POST and
// PUTs the result), the server answers one assistant message per request with the `ai`
// package's `streamText` over a scripted mock model (`MockLanguageModelV4` from `ai/test`)
// that answers from the request's messages. Standard UI message chunks only; no follow-ups.
import { randomUUID } from 'node:crypto';
import { convertToModelMessages, isStepCount, jsonSchema, streamText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { replyToToolResults, replyToUser } from './script.mjs';
import { catalogEntry, echoParameters, lsParameters, runEcho, runLs, TOOL_DESCRIPTIONS } from './tools.mjs';
import { Turn } from './turn.mjs';

const TOOLS = {
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

/** This runtime's tools: its own only (no harness tool such as `pi.subagent`). */
export const AI_SDK_TOOL_NAMES = Object.keys(TOOLS);

/** `GET …/catalog` of an AI SDK session. */
export function aiSdkCatalog() {
  return { tools: AI_SDK_TOOL_NAMES.map((name) => catalogEntry(name, TOOLS[name].description)) };
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
  return JSON.stringify(output.value ?? output);
}

/** The scripted reply to a LanguageModelV4 prompt. */
function replyTo(prompt, words) {
  const msgs = prompt.filter((m) => m.role !== 'system');
  const last = msgs[msgs.length - 1];
  if (last?.role === 'tool') {
    const results = last.content
      .filter((p) => p.type === 'tool-result')
      .map((p) => ({ name: p.toolName, text: toolOutputText(p.output), isError: /error/.test(p.output?.type ?? '') }));
    const user = [...msgs].reverse().find((m) => m.role === 'user');
    return replyToToolResults(user ? promptText(user.content) : '', results);
  }
  if (last?.role === 'user') return replyToUser(promptText(last.content), { words, tools: AI_SDK_TOOL_NAMES });
  return { blocks: [{ type: 'text', text: 'Nothing to answer.' }], stop: 'stop' };
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

export class AiSdkSession {
  /** @param {string} id @param {import('./app.mjs').Knobs} knobs */
  constructor(id, knobs) {
    this.id = id;
    this.runtime = 'ai-sdk';
    this.knobs = knobs;
    /** @type {object[]} UIMessage[] as the client last stored it (or as the last turn ended) */
    this.history = [];
    /** @type {Turn | null} */
    this.activeTurn = null;
    /** @type {Turn | null} */
    this.lastTurn = null;
  }

  capabilities() {
    return { nativeFollowUp: false, aiSdkOwnsHistory: true, runtime: 'ai-sdk' };
  }

  catalog() {
    return aiSdkCatalog();
  }

  uiMessages() {
    return this.history;
  }

  setHistory(messages) {
    this.history = messages;
  }

  /** Starts a turn over `messages` (validated UIMessages ending with the new user message). */
  startTurn({ messages, clientTurnId }) {
    const turn = new Turn({ sessionId: this.id, clientTurnId, runtime: 'ai-sdk' });
    this.activeTurn = turn;
    this.lastTurn = turn;
    void this.run(turn, messages);
    return turn;
  }

  async run(turn, messages) {
    const { tps, chunkTokens, words } = this.knobs;
    const signal = turn.abortController.signal;
    const model = new MockLanguageModelV4({
      provider: 'scripted',
      modelId: 'scripted-mock',
      doStream: async (options) => ({
        stream: scriptedStream(replyTo(options.prompt, words), { tps, chunkTokens, signal: options.abortSignal ?? signal }),
      }),
    });
    try {
      const result = streamText({
        model,
        messages: await convertToModelMessages(messages, { tools: TOOLS, ignoreIncompleteToolCalls: true }),
        tools: TOOLS,
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
          this.history = all;
        },
      });
      for await (const chunk of ui) turn.push(chunk);
    } catch (e) {
      turn.push({ type: 'error', errorText: e instanceof Error ? e.message : String(e) });
    } finally {
      if (turn.stopped && turn.chunks.at(-1)?.type !== 'abort') turn.push({ type: 'abort', reason: 'stopped' });
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
