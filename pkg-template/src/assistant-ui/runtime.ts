// The runtime: an ExternalStoreAdapter over a ChatStore, each user action forwarded to the one
// store action that does it (the table in ../assistant-ui.ts).
import { useCallback, useMemo, useRef } from "react";
import { MessageNotSentError, useExternalStoreRuntime } from "@assistant-ui/react";
import type { AppendMessage, AssistantRuntime, ExternalStoreAdapter, ThreadMessage, ThreadMessageLike } from "@assistant-ui/react";
import type { ChatStore, SubmitResult, UIMessage } from "../agent_chat_store.js";
import { useChatStore } from "../react.js";
import { defaultAttachmentAdapter } from "./attachments.js";
import { fromAppendMessage } from "./composer.js";
import { convertUIMessage } from "./convert.js";
import { EMPTY } from "./parts.js";
import { useQueue } from "./queue.js";
import { applyThreadMessages, useMessageRepository } from "./repository.js";
import { useThreadList, useThreadListPages } from "./thread-list.js";
import { useToolAnswers } from "./tool-answers.js";

/** assistant-ui options forwarded to `useExternalStoreRuntime`. */
export interface ChatStoreRuntimeOptions {
  /**
   * assistant-ui adapters: attachments, speech, dictation, voice, feedback, threadList. Yours
   * win over the defaults (the thread list, `createAttachmentAdapter()`).
   */
  adapters?: ExternalStoreAdapter["adapters"];
  suggestions?: ExternalStoreAdapter["suggestions"];
  unstable_capabilities?: ExternalStoreAdapter["unstable_capabilities"];
  /** Disables the thread (assistant-ui's `isDisabled`). */
  isDisabled?: boolean | undefined;
  /** OR-ed with the store's busy policy (busy without native follow-ups). */
  isSendDisabled?: boolean | undefined;
  /**
   * The session list as assistant-ui's thread list (`adapters.threadList`), while the server
   * has one (default true; an `adapters.threadList` of your own wins).
   */
  threadList?: boolean | undefined;
  /**
   * The default attachment adapter (`createAttachmentAdapter()`: images and text-like files as
   * `data:` URL attachments) when `adapters.attachments` is not given (default true).
   */
  attachments?: boolean | undefined;
}

type Adapters = NonNullable<ExternalStoreAdapter["adapters"]>;

/**
 * Returns an assistant-ui runtime bound to `store` (pass it to `<AssistantRuntimeProvider>`);
 * its subscription starts the store.
 *
 * `opts` forwards assistant-ui's own options: `adapters` (attachments, speech, dictation,
 * feedback, ...), `suggestions`, `unstable_capabilities`, and `isDisabled` / `isSendDisabled`,
 * which are OR-ed with the store's own gates. `opts.threadList: false` and
 * `opts.attachments: false` turn the default thread list and attachment adapters off.
 */
export function useChatStoreRuntime(
  store: ChatStore,
  opts: ChatStoreRuntimeOptions = {},
): AssistantRuntime {
  const snapshot = useChatStore(store);
  const { messages, status } = snapshot;
  // `isRunning` is given explicitly (not left to assistant-ui's last-message heuristic), so a
  // turn sent but not answered yet already shows the running state and the optimistic assistant
  // placeholder.
  const isRunning = snapshot.busy;

  // assistant-ui's composer keeps its own draft, so the store's `composer.canSend` (about the
  // store's draft) does not apply; `composer.canSendText` is the same policy for a text message.
  // A refusal that depends on the draft's files is given at send time (see `send`), where it
  // hands the draft back.
  const isSendDisabled = !snapshot.composer.canSendText || !!opts.isSendDisabled;

  // The messages with a call that waits for the user: the store decides which calls wait
  // (`snapshot.pending`, kept the same object while they do not change), assistant-ui shows
  // their messages as `requires-action`.
  const { pending } = snapshot;
  const waiting = useMemo(
    () => new Set([...pending.approvals, ...pending.questions].map((call) => call.messageId)),
    [pending],
  );

  // How the last turn ended, on its last assistant message (assistant-ui's ErrorPrimitive reads
  // the message's `status.error`): a stop (`snapshot.stopped`: the store says a stop is not a
  // failure) as `cancelled`, a failure with its error. When the turn failed before any
  // assistant part (the last message is the user's), a synthetic empty assistant message
  // carries the error, so the error and the Reload button (which regenerates after that user
  // message) show all the same; a stop gets no message of its own.
  const stopped = snapshot.stopped;
  const error = status === "error" && !stopped ? snapshot.error : null;
  const last = messages.length > 0 ? messages[messages.length - 1] : null;
  const failedBeforeAnswer = !!error && (!last || last.role !== "assistant");
  const errorStandInId = failedBeforeAnswer ? errorMessageIdFor(last, snapshot.sessionId) : null;
  // One object per id, so assistant-ui's conversion cache (keyed by message object) holds it.
  const errorStandIn = useMemo(
    (): UIMessage | null =>
      errorStandInId ? Object.freeze({ id: errorStandInId, role: "assistant" as const, parts: EMPTY as never[] }) : null,
    [errorStandInId],
  );
  const endedMessageId =
    !error && !stopped ? null : errorStandIn ? errorStandIn.id : last && last.role === "assistant" ? last.id : null;
  // assistant-ui caches conversions per message object and keeps a cached explicit status
  // forever, so the converter's identity changes exactly when the ending (or the message it
  // belongs to) or the waiting messages change, which makes assistant-ui re-convert.
  const convertMessage = useCallback(
    (message: UIMessage): ThreadMessageLike => {
      const like = convertUIMessage(message, waiting.has(message.id));
      if (message.id !== endedMessageId) return like;
      return { ...like, status: error ? { type: "incomplete", reason: "error", error: error.message } : CANCELLED };
    },
    [waiting, error, endedMessageId],
  );
  const messageRepository = useMessageRepository(snapshot, messages, errorStandIn, convertMessage, isRunning);

  // Branches (AI SDK mode, `snapshot.branches`): assistant-ui's branch picker switches through
  // `setMessages` (its presence is the switch capability), with the visible messages it wants.
  // Where the mode keeps no branches there is none: one branch each, no picker.
  const hasBranches = !!snapshot.branches;
  const path = useRef(messages);
  path.current = messages;
  const setMessages = useCallback(
    (wanted: readonly ThreadMessage[]) => applyThreadMessages(store, path.current, wanted, errorStandInId),
    [store, errorStandInId],
  );

  // One door for every new user message, whether it arrives through `onNew` or the queue: the
  // store decides (SPEC §5, §6) whether it is sent as a turn, queued as a follow-up, or refused.
  const send = useCallback(
    (message: AppendMessage) => {
      const { text, files } = fromAppendMessage(message);
      submit(store, (s) => s.send(text, files));
    },
    [store],
  );

  // assistant-ui's edit composer sends an AppendMessage whose `sourceId` is the edited message:
  // with branches it is a new user message beside it, the old one kept with its answers (as
  // assistant-ui's own AI SDK runtime does); else the store replaces that user message and
  // drops what follows (AI SDK mode, SPEC §9). Offered
  // only while `snapshot.canEdit` (assistant-ui enables its Edit button from `onEdit`'s
  // presence); a refusal hands the edit back like a refused send.
  const onEdit = useCallback(
    async (message: AppendMessage) => {
      const sourceId = message.sourceId;
      if (message.role !== "user" || typeof sourceId !== "string") {
        throw new MessageNotSentError("Only a user message can be edited.");
      }
      const { text, files } = fromAppendMessage(message);
      submit(store, (s) =>
        hasBranches ? s.editMessage(sourceId, text, files) : s.send(text, files, { messageId: sourceId }),
      );
    },
    [store, hasBranches],
  );

  // Waiting follow-ups as assistant-ui's queue (ComposerPrimitive.Queue / QueueItemPrimitive),
  // not as fake user messages: each item with the store's state, Run Now and Remove wired to
  // the store (./queue.ts).
  const queue = useQueue(store, snapshot, send);

  const onNew = useCallback(async (message: AppendMessage) => send(message), [send]);
  const onCancel = useCallback(async () => store.stop(), [store]);
  // assistant-ui passes the parent of the assistant message to regenerate (a user message id,
  // or null for the first). `regenerate(messageId)` follows AI SDK `regenerate({messageId})`:
  // a user message id regenerates the answer after it (a user message a failed turn left
  // without an answer included); none regenerates the last answer.
  // After a failed turn where regenerating cannot run (pi modes: the server owns the history),
  // Reload is the store's Retry, which decides per mode what asking again means
  // (`snapshot.canRetry`, `store.retry()`).
  const canRegenerate = snapshot.canRegenerate;
  const onReload = useCallback(
    async (parentId: string | null) => {
      if (canRegenerate) store.regenerate(parentId ?? undefined);
      else store.retry();
    },
    [store, canRegenerate],
  );

  // Human in the loop (SPEC §13): the same two store actions in both modes. In pi mode the store
  // posts the answer itself (exactly once); in AI SDK mode it goes with the next chat POST, as
  // `useChat`'s (create the store with `sendAutomaticallyWhen` to continue at once).
  const toolAnswers = useToolAnswers(store);

  const given = opts.adapters;
  const threadList = useThreadList(store, snapshot, opts.threadList !== false && !given?.threadList);
  const withAttachments = opts.attachments !== false && !given?.attachments;
  const adapters = useMemo(() => {
    if (!threadList && !withAttachments) return given;
    const out: Adapters = { ...given };
    if (threadList) out.threadList = threadList;
    if (withAttachments) out.attachments = defaultAttachmentAdapter();
    return out;
  }, [threadList, withAttachments, given]);

  const runtime = useExternalStoreRuntime<ThreadMessage>({
    messageRepository,
    setMessages: hasBranches ? setMessages : undefined,
    isRunning,
    // Until the canonical history arrived (SPEC §8), so a thread does not flash "empty".
    isLoading: !snapshot.hydrated,
    isDisabled: !!opts.isDisabled,
    isSendDisabled,
    onNew,
    // Only while a user message can be edited (AI SDK-owned history, nothing running): without
    // `onEdit` assistant-ui disables its Edit button instead of offering an edit the store
    // would refuse.
    onEdit: snapshot.canEdit ? onEdit : undefined,
    onCancel,
    // Only where regenerating or a retry can happen (AI SDK-owned history, nothing running; a
    // failed turn in any mode): without `onReload` assistant-ui's Reload button shows disabled
    // (`ActionBarPrimitive.Reload`; `hideWhenRunning` and the like hide it), never a no-op.
    onReload: snapshot.canRegenerate || snapshot.canRetry ? onReload : undefined,
    onRespondToToolApproval: toolAnswers.onRespondToToolApproval,
    onAddToolResult: toolAnswers.onAddToolResult,
    onResumeToolCall: toolAnswers.onResumeToolCall,
    queue,
    adapters,
    suggestions: opts.suggestions,
    unstable_capabilities: opts.unstable_capabilities,
  });
  // The pages (`ThreadListPrimitive.LoadMore`) and running flags the external-store thread list
  // leaves out, while the thread list is the binding's.
  useThreadListPages(runtime, store, snapshot, !!threadList);
  return runtime;
}

// Runs one store send and turns a refusal into MessageNotSentError, which makes assistant-ui
// put the text and attachments back into its composer (or the edit back into its edit
// composer): the draft survives a refused send, as SPEC §5 requires.
function submit(store: ChatStore, call: (store: ChatStore) => SubmitResult): void {
  let result: SubmitResult;
  try {
    result = call(store);
  } catch (cause) {
    // Nothing was accepted, so the draft goes back too; the store's typed error stays
    // reachable as `cause` (and through the store's `onError`).
    const notSent = new MessageNotSentError(cause instanceof Error ? cause.message : String(cause));
    (notSent as { cause?: unknown }).cause = cause;
    throw notSent;
  }
  if (result && result.kind === "blocked") {
    throw new MessageNotSentError(result.hint || "The message was not sent.");
  }
}

// The synthetic error message's id: derived from the user message the failed turn answered
// (or the session, for a thread with no message), so it is the same on every render.
function errorMessageIdFor(last: UIMessage | null, sessionId: string): string {
  return last ? `${last.id}:error` : `${sessionId}:error`;
}

// A stop is not a failure: assistant-ui shows `cancelled` without an error banner.
const CANCELLED: NonNullable<ThreadMessageLike["status"]> = Object.freeze({ type: "incomplete", reason: "cancelled" });
