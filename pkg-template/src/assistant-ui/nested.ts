// A sub-agent's transcript (a tool's `details.transcript`) as the nested messages of its
// tool-call part.
import { fromThreadMessageLike } from "@assistant-ui/react";
import type { ThreadMessage, ThreadMessageLike } from "@assistant-ui/react";
import type { UIMessage } from "../agent_chat_store.js";
import { convertUIMessage, likePart } from "./convert.js";
import type { LikePart } from "./convert.js";
import { isPlainObject } from "./parts.js";

type Status = NonNullable<ThreadMessageLike["status"]>;
/** A message being made: assistant messages of transcript entries take the tool entries after them. */
type Draft = { -readonly [K in keyof ThreadMessageLike]: ThreadMessageLike[K] } & {
  id: string;
  content: LikePart[];
  fromTranscript?: boolean;
};

// ----- nested messages (a sub-agent's transcript) --------------------------------------------------

const nestedCache = new WeakMap<object, readonly ThreadMessage[]>();
const NESTED_COMPLETE: Status = Object.freeze({ type: "complete", reason: "unknown" });
const NESTED_RUNNING: Status = Object.freeze({ type: "running" });

/**
 * A tool's `details.transcript` as assistant-ui `ThreadMessage`s (what a tool-call part's
 * `messages` holds), or undefined when the details have none. Entries are the reference
 * server's `{role: 'user' | 'assistant' | 'tool', text, toolName?, isError?}` (a `tool` entry
 * becomes a tool-call part with its text as result, on the assistant message before it), or
 * UIMessages (`{id?, role, parts}`), converted as the thread's own. The last assistant message
 * is `running` while `details.status` is `running`, and carries `details.error` when it is
 * `error`. Cached per details object, so an unchanged part keeps its nested messages.
 */
export function nestedMessages(toolCallId: string, details: unknown): readonly ThreadMessage[] | undefined {
  if (!isPlainObject(details) || !Array.isArray(details.transcript)) return undefined;
  const cached = nestedCache.get(details);
  if (cached) return cached;
  const likes: Draft[] = [];
  (details.transcript as unknown[]).forEach((entry, i) => {
    if (!isPlainObject(entry)) return;
    const id = `${toolCallId}:${i}`;
    if (Array.isArray(entry.parts)) {
      // A UIMessage as far as it goes: converted as the thread's own (which tolerates any parts).
      const message = { ...entry, id: typeof entry.id === "string" ? entry.id : id } as unknown as UIMessage;
      const like = convertUIMessage(message);
      likes.push({ ...like, id: message.id, content: like.content as LikePart[] });
      return;
    }
    const text = typeof entry.text === "string" ? entry.text : "";
    switch (entry.role) {
      case "user":
        likes.push({ role: "user", id, content: [{ type: "text", text }] });
        break;
      case "system":
        likes.push({ role: "system", id, content: [{ type: "text", text }] });
        break;
      case "tool": {
        const call = likePart({
          type: "tool-call",
          toolCallId: id,
          toolName: typeof entry.toolName === "string" ? entry.toolName : "tool",
          args: {},
          argsText: "",
          result: entry.isError === true ? { error: text } : text,
          isError: entry.isError === true,
          state: entry.isError === true ? "output-error" : "output-available",
        });
        const prev = likes[likes.length - 1];
        if (prev && prev.role === "assistant" && prev.fromTranscript) prev.content.push(call);
        else likes.push({ role: "assistant", id, content: [call], fromTranscript: true });
        break;
      }
      default:
        likes.push({ role: "assistant", id, content: text ? [{ type: "text", text }] : [], fromTranscript: true });
        break;
    }
  });
  // The run's state goes on its last assistant message (an empty one when the transcript does
  // not end with one yet, e.g. only the task so far): a running nested thread shows as running,
  // and keeps the outer message running too (assistant-ui's `isBackgroundToolCall`).
  const ending = details.status === "running" || details.status === "error";
  if (ending && likes[likes.length - 1]?.role !== "assistant") {
    likes.push({ role: "assistant", id: `${toolCallId}:end`, content: [] });
  }
  const messages = likes.map(({ fromTranscript, ...like }, i) => {
    if (ending && i === likes.length - 1) {
      like.status =
        details.status === "running"
          ? NESTED_RUNNING
          : { type: "incomplete", reason: "error", error: typeof details.error === "string" ? details.error : "failed" };
    }
    return fromThreadMessageLike(like, like.id, NESTED_COMPLETE);
  });
  const frozen = Object.freeze(messages);
  nestedCache.set(details, frozen);
  return frozen;
}

