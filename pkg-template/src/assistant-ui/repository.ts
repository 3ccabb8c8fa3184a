// The thread as assistant-ui's message repository: the store's tree (`snapshot.branches`, AI
// SDK mode) with its head, or the visible messages as one chain where the mode keeps no
// branches. The repository path (not `messages` + `convertMessage`) is used in every mode:
// on the `messages` path assistant-ui keeps a message the store dropped as a sibling of its
// replacement, a picker reading "2 / 2" the store cannot switch to.
import { useMemo, useRef } from "react";
import { bindExternalStoreMessage, fromThreadMessageLike } from "@assistant-ui/react";
import type { ExportedMessageRepository, ThreadMessage, ThreadMessageLike } from "@assistant-ui/react";
import type { ChatSnapshot, UIMessage } from "../agent_chat_store.js";

type Status = NonNullable<ThreadMessageLike["status"]>;
type Content = Exclude<ThreadMessageLike["content"], string>;
type Convert = (message: UIMessage) => ThreadMessageLike;

const RUNNING: Status = Object.freeze({ type: "running" });
const COMPLETE: Status = Object.freeze({ type: "complete", reason: "unknown" });
const TOOL_CALLS: Status = Object.freeze({ type: "requires-action", reason: "tool-calls" });

// The status assistant-ui's `messages` path gives a message without one of its own
// (getContentAutoStatus): the repository path ignores `isRunning`, so the streamed message's
// `running` is set here.
function autoStatus(content: ThreadMessageLike["content"], streamed: boolean): Status {
  if (streamed) return RUNNING;
  if (typeof content === "string") return COMPLETE;
  const calls = content.filter((c): c is Extract<Content[number], { type: "tool-call" }> => c.type === "tool-call");
  const open = calls.filter((c) => c.result === undefined);
  const nestedRunning = open.some((c) => {
    const last = (c as { messages?: readonly ThreadMessage[] }).messages?.at(-1);
    return last?.role === "assistant" && last.status.type === "running";
  });
  if (nestedRunning) return RUNNING;
  return open.length > 0 ? TOOL_CALLS : COMPLETE;
}

/**
 * `messageRepository` for `useExternalStoreRuntime`: every item converted once per message
 * object and status (assistant-ui's own cache is bypassed on this path), bound to its
 * UIMessage, with a stable `createdAt` per id; the error stand-in, if any, under the head.
 */
export function useMessageRepository(
  snapshot: ChatSnapshot,
  messages: readonly UIMessage[],
  errorStandIn: UIMessage | null,
  convert: Convert,
  isRunning: boolean,
): ExportedMessageRepository {
  const createdAt = useRef(new Map<string, Date>()).current;
  const cache = useRef(new WeakMap<UIMessage, { convert: Convert; streamed: boolean; message: ThreadMessage }>()).current;
  const branches = snapshot.branches ?? null;
  return useMemo(() => {
    const last = messages.length > 0 ? messages[messages.length - 1] : null;
    const streamedId = isRunning && !errorStandIn && last ? last.id : null;
    const threadMessage = (m: UIMessage): ThreadMessage => {
      const streamed = m.id === streamedId;
      const hit = cache.get(m);
      if (hit && hit.convert === convert && hit.streamed === streamed) return hit.message;
      let like = convert(m);
      if (like.createdAt == null) {
        const at = createdAt.get(m.id) ?? new Date();
        createdAt.set(m.id, at);
        like = { ...like, createdAt: at };
      }
      const message = fromThreadMessageLike(like, m.id, autoStatus(like.content, streamed));
      bindExternalStoreMessage(message, m);
      cache.set(m, { convert, streamed, message });
      return message;
    };
    const items: { message: ThreadMessage; parentId: string | null }[] = branches
      ? branches.items.map((it) => ({ parentId: it.parentId, message: threadMessage(it.message) }))
      : messages.map((m, i) => ({ parentId: i > 0 ? messages[i - 1]!.id : null, message: threadMessage(m) }));
    let headId = branches ? branches.headId : last ? last.id : null;
    if (errorStandIn) {
      items.push({ parentId: headId, message: threadMessage(errorStandIn) });
      headId = errorStandIn.id;
    }
    return { headId, messages: items };
  }, [branches, messages, errorStandIn, convert, isRunning, cache, createdAt]);
}

/**
 * assistant-ui's `setMessages` (a branch switch, a delete, a stop's take-back of an unanswered
 * message): the visible messages it wants, as the store's actions. A list that only cuts the
 * path short is the store's `setMessages` of that prefix (branches kept); any other names the
 * branch to show by its last message (`switchBranch`). The error stand-in is not the store's.
 */
export function applyThreadMessages(
  store: { setMessages(m: readonly UIMessage[]): void; switchBranch(id: string): string | null },
  path: readonly UIMessage[],
  wanted: readonly { id: string }[],
  standInId: string | null,
): void {
  const ids = wanted.map((m) => m.id).filter((id) => id !== standInId);
  const cut = ids.length < path.length && ids.every((id, i) => path[i]!.id === id);
  try {
    if (cut) store.setMessages(path.slice(0, ids.length));
    else if (ids.length > 0 && ids[ids.length - 1] !== path[path.length - 1]?.id) store.switchBranch(ids[ids.length - 1]!);
  } catch {
    // Refused while a turn runs: the next snapshot shows the store's thread again.
  }
}
