// assistant-ui binding for agent-chat-store: an ExternalStoreAdapter over a ChatStore.
//
// Written against @assistant-ui/react 0.15.22 (its @assistant-ui/core 0.3.35), read from the
// published .d.ts and runtime sources: `useExternalStoreRuntime(adapter)`, `ExternalStoreAdapter`
// (runtimes/external-store/external-store-adapter.ts), the thread core that calls it
// (external-store-thread-runtime-core.ts), `ThreadMessageLike` and `fromThreadMessageLike`
// (runtime/utils/thread-message-like.ts), the part and status types (types/message.ts), the
// attachment adapters (adapters/attachment.ts) and `MessageNotSentError`. The part mapping
// follows assistant-ui's own AI SDK converter (@assistant-ui/ai-sdk `convertMessage`), so tool
// UIs written for that runtime work unchanged.
//
// The store stays the single authority: assistant-ui gets no `setMessages` and no branch
// repository. It renders the store's snapshot and forwards the user's actions, each to the one
// store action that does it:
//
//   onNew / queue.enqueue / queue.steer   store.send(text, files)
//   onEdit                                store.send(text, files, {messageId})   (canEdit)
//   onReload(parentId)                    store.regenerate(parentId)             (canRegenerate)
//   onCancel                              store.stop()
//   onRespondToToolApproval               store.addToolApprovalResponse({id, approved, reason})
//   onAddToolResult                       store.addToolOutput({toolCallId, output | errorText})
//   onResumeToolCall                      store.addToolOutput({toolCallId, output: payload})
//   adapters.threadList                   the session list (SPEC §11)
//   adapters.attachments                  files as data: URLs (a default when the host has none)
//
// Tool UI: `makeToolUIs(renderers)` maps the package's renderer registry (`./tool-ui.js`) onto
// assistant-ui's tool UI slot of `MessagePrimitive.Parts` (`components.tools` =
// `{by_name, Fallback}`), keyed by tool name as assistant-ui does. assistant-ui 0.15.22 also
// has `makeAssistantToolUI` / `useAssistantToolUI` (registered into `aui.tools.toolUIs`, which
// win over `by_name`), but they are deprecated there and match by tool name only, so a
// `rendererId` or an un-namespaced alias could not be honoured; the `tools` slot can.
import { createElement, useCallback, useEffect, useMemo, useSyncExternalStore } from "react";
import {
  CompositeAttachmentAdapter,
  MessageNotSentError,
  SimpleImageAttachmentAdapter,
  fromThreadMessageLike,
  useExternalStoreRuntime,
} from "@assistant-ui/react";
import { DefaultToolUI, useChatStore } from "./react.js";
import { resolveToolRenderer, toolDetailsOf } from "./tool-ui.js";

const EMPTY = Object.freeze([]);
const noop = () => {};
const noopUnsubscribe = () => {};

/**
 * Returns an assistant-ui runtime bound to `store` (pass it to `<AssistantRuntimeProvider>`).
 * `store` may be `null` (as `useCreateChatStore` returns on its first render): the thread is
 * then empty and disabled.
 *
 * `opts` forwards assistant-ui's own options: `adapters` (attachments, speech, dictation,
 * feedback, ...), `suggestions`, `unstable_capabilities`, and `isDisabled` / `isSendDisabled`,
 * which are OR-ed with the store's own gates. `opts.threadList: false` and
 * `opts.attachments: false` turn the default thread list and attachment adapters off.
 */
export function useChatStoreRuntime(store, opts = {}) {
  const snapshot = useChatStore(store);
  const messages = snapshot ? snapshot.messages : EMPTY;
  const queued = snapshot ? snapshot.queued : EMPTY;
  const status = snapshot ? snapshot.status : "ready";
  // `isRunning` is given explicitly (not left to assistant-ui's last-message heuristic), so a
  // turn sent but not answered yet already shows the running state and the optimistic assistant
  // placeholder.
  const isRunning = snapshot ? snapshot.busy : false;
  const nativeFollowUp = snapshot ? snapshot.capabilities.nativeFollowUp : false;

  // assistant-ui's composer keeps its own draft, so the store's `composer.canSend` (about the
  // store's draft) does not apply; `composer.canSendText` is the same policy for a text message.
  // A refusal that depends on the draft's files is given at send time (see `send`), where it
  // hands the draft back.
  const isSendDisabled = (snapshot ? !snapshot.composer.canSendText : false) || !!opts.isSendDisabled;

  // A failed turn's error (assistant-ui's ErrorPrimitive reads the message's `status.error`).
  // It goes on the last assistant message; when the turn failed before any assistant part (the
  // last message is the user's), a synthetic empty assistant message carries it, so the error
  // and the Reload button (which regenerates after that user message) show all the same. A stop
  // is not a failure: it gets no message of its own.
  const error = snapshot && status === "error" ? snapshot.error : null;
  const last = messages.length > 0 ? messages[messages.length - 1] : null;
  const failedBeforeAnswer = !!error && error.code !== "Aborted" && (!last || last.role !== "assistant");
  const errorStandInId = failedBeforeAnswer ? errorMessageIdFor(last, snapshot.sessionId) : null;
  // One object per id, so assistant-ui's conversion cache (keyed by message object) holds it.
  const errorStandIn = useMemo(
    () => (errorStandInId ? Object.freeze({ id: errorStandInId, role: "assistant", parts: EMPTY }) : null),
    [errorStandInId],
  );
  const threadMessages = useMemo(
    () => (errorStandIn ? [...messages, errorStandIn] : messages),
    [messages, errorStandIn],
  );
  const errorMessageId = !error ? null : errorStandIn ? errorStandIn.id : last && last.role === "assistant" ? last.id : null;
  // assistant-ui caches conversions per message object and keeps a cached explicit status
  // forever, so the converter's identity changes exactly when the error (or the message it
  // belongs to) changes, which makes assistant-ui re-convert.
  const convertMessage = useCallback(
    (message) => {
      const like = convertUIMessage(message);
      return error && message.id === errorMessageId ? { ...like, status: errorStatus(error) } : like;
    },
    [error, errorMessageId],
  );

  // One door for every new user message, whether it arrives through `onNew` or the queue: the
  // store decides (SPEC §5, §6) whether it is sent as a turn, queued as a follow-up, or refused.
  const send = useCallback(
    (message) => {
      const { text, files } = fromAppendMessage(message);
      submit(store, (s) => s.send(text, files));
    },
    [store],
  );

  // assistant-ui's edit composer sends an AppendMessage whose `sourceId` is the edited message:
  // the store replaces that user message and drops what follows (AI SDK mode, SPEC §9). Offered
  // only while `snapshot.canEdit` (assistant-ui enables its Edit button from `onEdit`'s
  // presence); a refusal hands the edit back like a refused send.
  const onEdit = useCallback(
    async (message) => {
      if (message.role !== "user" || typeof message.sourceId !== "string") {
        throw new MessageNotSentError("Only a user message can be edited.");
      }
      const { text, files } = fromAppendMessage(message);
      submit(store, (s) => s.send(text, files, { messageId: message.sourceId }));
    },
    [store],
  );

  // assistant-ui's queue items need stable identities; they are derived from the snapshot's
  // frozen queued items (kept identical while unchanged), so a WeakMap per item and a memo on
  // the array are enough.
  const items = useMemo(() => queued.map(toQueueItem), [queued]);

  // assistant-ui has a first-class queue (`ExternalThreadQueueAdapter`), so waiting follow-ups
  // are shown as its queue items (ComposerPrimitive.Queue / QueueItemPrimitive), not as fake
  // user messages. It is offered while the session has native follow-ups; without them a busy
  // send is refused anyway. It also stays while items are left over (e.g. `failed` after the
  // server answered FollowUpUnsupported), so they remain visible and removable: an item is never
  // dropped silently (SPEC §6).
  const queueEnabled = !!store && (nativeFollowUp || queued.length > 0);
  const queue = useMemo(
    () =>
      queueEnabled
        ? {
            items,
            // No steer lane: the server runs follow-ups strictly in arrival order (SPEC §6).
            steerItems: EMPTY,
            enqueue: send,
            // assistant-ui routes every send made while running to `steer` (and idle sends to
            // `enqueue`). Steering ("run this next / interrupt") cannot be honoured, so it
            // degrades to appending to the FIFO, like assistant-ui's own queue does without a
            // cancel driver.
            steer: send,
            // Reordering or rewriting would break the order the server relies on: a posted item
            // cannot be moved, and re-posting an edit lands it at the tail. Both are no-ops;
            // remove + send again is the honest equivalent.
            move: noop,
            edit: noop,
            // Local when the item was never posted, the follow-up DELETE when it was (SPEC §6).
            remove: (id) => store.removeQueued(id),
          }
        : undefined,
    [queueEnabled, items, send, store],
  );

  const onNew = useCallback(async (message) => send(message), [send]);
  const onCancel = useCallback(async () => {
    if (store) store.stop();
  }, [store]);
  // assistant-ui passes the parent of the assistant message to regenerate (a user message id,
  // or null for the first). `regenerate(messageId)` follows AI SDK `regenerate({messageId})`:
  // a user message id regenerates the answer after it (a user message a failed turn left
  // without an answer included); none regenerates the last answer.
  const onReload = useCallback(
    async (parentId) => {
      if (store) store.regenerate(parentId ?? undefined);
    },
    [store],
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
    const out = { ...given };
    if (threadList) out.threadList = threadList;
    if (withAttachments) out.attachments = defaultAttachmentAdapter();
    return out;
  }, [threadList, withAttachments, given]);

  return useExternalStoreRuntime({
    messages: threadMessages,
    convertMessage,
    isRunning,
    // Until the canonical history arrived (SPEC §8), so a thread does not flash "empty".
    isLoading: snapshot ? !snapshot.hydrated : true,
    isDisabled: !store || !!opts.isDisabled,
    isSendDisabled,
    onNew,
    // Only while a user message can be edited (AI SDK-owned history, nothing running): without
    // `onEdit` assistant-ui disables its Edit button instead of offering an edit the store
    // would refuse.
    onEdit: snapshot && snapshot.canEdit ? onEdit : undefined,
    onCancel,
    // Only where regenerating can happen (AI SDK-owned history, nothing running): without
    // `onReload` assistant-ui hides its reload button instead of offering a no-op.
    onReload: snapshot && snapshot.canRegenerate ? onReload : undefined,
    onRespondToToolApproval: toolAnswers.onRespondToToolApproval,
    onAddToolResult: toolAnswers.onAddToolResult,
    onResumeToolCall: toolAnswers.onResumeToolCall,
    queue,
    adapters,
    suggestions: opts.suggestions,
    unstable_capabilities: opts.unstable_capabilities,
  });
}

// Runs one store send and turns a refusal into MessageNotSentError, which makes assistant-ui
// put the text and attachments back into its composer (or the edit back into its edit
// composer): the draft survives a refused send, as SPEC §5 requires.
function submit(store, call) {
  if (!store) throw new MessageNotSentError("The chat store is not ready yet.");
  let result;
  try {
    result = call(store);
  } catch (cause) {
    // Nothing was accepted, so the draft goes back too; the store's typed error stays
    // reachable as `cause` (and through the store's `onError`).
    const notSent = new MessageNotSentError(cause instanceof Error ? cause.message : String(cause));
    notSent.cause = cause;
    throw notSent;
  }
  if (result && result.kind === "blocked") {
    throw new MessageNotSentError(result.hint || "The message was not sent.");
  }
}

// The synthetic error message's id: derived from the user message the failed turn answered
// (or the session, for a thread with no message), so it is the same on every render.
function errorMessageIdFor(last, sessionId) {
  return last ? `${last.id}:error` : `${sessionId}:error`;
}

/**
 * The three tool-answer callbacks of assistant-ui's `ExternalStoreAdapter`, over `store`:
 * `onRespondToToolApproval` (a tool UI's `respondToApproval`), `onAddToolResult` (`addResult`)
 * and `onResumeToolCall` (`resume`, the ask-user answer). Exported for hosts that build their
 * own adapter. Each rejects (or, for `onResumeToolCall`, which assistant-ui calls
 * synchronously, throws) when the store did not take the answer: nothing of that id waits.
 */
export function createToolAnswerCallbacks(store) {
  return {
    // assistant-ui resolves the tool UI's response against the part's `approval` first
    // (runtime/utils/resolveToolApprovalResponse.ts), so a decision arrives as `{approvalId,
    // approved, reason?}`. A rejection leaves assistant-ui's gate retryable.
    onRespondToToolApproval: async ({ approvalId, approved, reason }) => {
      const answer = { id: approvalId, approved: approved === true };
      if (typeof reason === "string" && reason !== "") answer.reason = reason;
      if (!store || !store.addToolApprovalResponse(answer)) {
        throw new Error(`No tool call waits for the approval ${approvalId}.`);
      }
    },
    // `addResult(result)`; `ToolResponse.toResponse` made it `{result, isError}`. An error
    // result is the store's `errorText` (the text itself, or the `{error}` shape this adapter
    // gives failed calls).
    onAddToolResult: async ({ toolCallId, result, isError }) => {
      const answer = isError ? { toolCallId, errorText: errorTextOf(result) } : { toolCallId, output: result };
      if (!store || !store.addToolOutput(answer)) {
        throw new Error(`Tool call ${toolCallId} does not wait for a result.`);
      }
    },
    // `resume(payload)`: the user's answer to an `interrupt` (an ask-user question) is the
    // call's output. The same words assistant-ui uses when nothing resumes the call.
    onResumeToolCall: ({ toolCallId, payload }) => {
      if (!store || !store.addToolOutput({ toolCallId, output: payload })) {
        throw new Error(`Tool call ${toolCallId} is not waiting for resume.`);
      }
    },
  };
}

function useToolAnswers(store) {
  return useMemo(() => createToolAnswerCallbacks(store), [store]);
}

function errorTextOf(result) {
  if (typeof result === "string") return result;
  if (isPlainObject(result) && typeof result.error === "string") return result.error;
  if (result === undefined) return "Tool failed";
  try {
    return JSON.stringify(result);
  } catch {
    return String(result);
  }
}

// ----- thread-level hooks for the calls that wait for the user ---------------------------------

const NO_PENDING = Object.freeze({ approvals: EMPTY, questions: EMPTY });

/**
 * The tool calls of the open session that wait for the user (`snapshot.pending`, SPEC §13),
 * with the actions that answer them, for thread-level chrome (an approval bar, a question
 * card) beside or instead of per-part tool UIs: `{approvals, questions, approve(approvalId,
 * reason?), deny(approvalId, reason?), answer(toolCallId, output)}`. The actions return the
 * store's boolean (false: nothing of that id waits). The component re-renders only when what
 * waits changes, not on every streamed word, and needs no assistant-ui context (it works in a
 * nested sub-agent thread or outside the runtime provider).
 */
export function usePending(store) {
  const subscribe = useCallback(
    (onStoreChange) => (store ? store.subscribe(onStoreChange) : noopUnsubscribe),
    [store],
  );
  const getPending = useCallback(() => (store ? store.getSnapshot().pending : NO_PENDING), [store]);
  const pending = useSyncExternalStore(subscribe, getPending, getPending) ?? NO_PENDING;
  return useMemo(
    () => ({
      approvals: pending.approvals,
      questions: pending.questions,
      approve: (approvalId, reason) => approve(store, approvalId, true, reason),
      deny: (approvalId, reason) => approve(store, approvalId, false, reason),
      answer: (toolCallId, output) => (store ? store.addToolOutput({ toolCallId, output }) : false),
    }),
    [pending, store],
  );
}

/**
 * `usePending(store)`'s approvals: `{pending, approve(approvalId, reason?), deny(approvalId,
 * reason?)}` (as the TrueFoundry runtime's `useTrueFoundryApprovals`).
 */
export function usePendingApprovals(store) {
  const { approvals, approve: yes, deny } = usePending(store);
  return useMemo(() => ({ pending: approvals, approve: yes, deny }), [approvals, yes, deny]);
}

/** `usePending(store)`'s questions: `{pending, answer(toolCallId, output)}`. */
export function usePendingQuestions(store) {
  const { questions, answer } = usePending(store);
  return useMemo(() => ({ pending: questions, answer }), [questions, answer]);
}

function approve(store, id, approved, reason) {
  if (!store) return false;
  const answer = { id, approved };
  if (typeof reason === "string" && reason !== "") answer.reason = reason;
  return store.addToolApprovalResponse(answer);
}

// ----- attachments ------------------------------------------------------------------------------

/** What the default attachment adapter takes besides images: text-like files and PDFs. */
export const DEFAULT_FILE_TYPES =
  "text/plain,text/markdown,text/csv,text/html,text/xml,application/json,application/pdf";

/**
 * An assistant-ui attachment adapter whose files reach the store as `data:` URL attachments
 * (`FileAttachment {mediaType, filename, url}`), as `useChat`'s `sendMessage({files})` sends
 * them: images through assistant-ui's own `SimpleImageAttachmentAdapter` (an image part with a
 * data URL), the `fileTypes` (default `DEFAULT_FILE_TYPES`) as file parts with a data URL.
 * `useChatStoreRuntime` uses one when the host gives no `adapters.attachments`.
 */
export function createAttachmentAdapter(options = {}) {
  return new CompositeAttachmentAdapter([
    new SimpleImageAttachmentAdapter(),
    new DataUrlFileAttachmentAdapter(options.fileTypes ?? DEFAULT_FILE_TYPES),
  ]);
}

let defaultAttachments = null;
function defaultAttachmentAdapter() {
  defaultAttachments ??= createAttachmentAdapter();
  return defaultAttachments;
}

// Not assistant-ui's SimpleTextAttachmentAdapter: that one inlines a text file into the message
// text (`<attachment name=…>`), so the server would get no file and the user's bubble would show
// the file's contents instead of an attachment chip.
class DataUrlFileAttachmentAdapter {
  constructor(accept) {
    this.accept = accept;
  }

  async add({ file }) {
    return {
      id: attachmentId(),
      type: "document",
      name: file.name,
      contentType: file.type,
      file,
      status: { type: "requires-action", reason: "composer-send" },
    };
  }

  async send(attachment, options) {
    const mimeType = attachment.contentType || attachment.file.type || "application/octet-stream";
    return {
      ...attachment,
      status: { type: "complete" },
      content: [
        { type: "file", data: await fileDataUrl(attachment.file, mimeType, options?.signal), mimeType, filename: attachment.name },
      ],
    };
  }

  async remove() {}
}

let attachmentCounter = 0;
function attachmentId() {
  attachmentCounter += 1;
  return `acs-attachment-${Date.now().toString(36)}-${attachmentCounter}`;
}

async function fileDataUrl(file, mimeType, signal) {
  if (signal?.aborted) throw signal.reason ?? new Error("The attachment read was aborted");
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (signal?.aborted) throw signal.reason ?? new Error("The attachment read was aborted");
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:${mimeType};base64,${btoa(binary)}`;
}

// The session list (SPEC §11) as assistant-ui's external-store thread list, so its own
// `ThreadList` / `ThreadListItem` primitives list, switch, create, rename, archive and delete
// sessions. Its first pages (both walks, one request after the other) are asked for on mount.
// assistant-ui's external-store thread list has no pagination (`loadMore` / `hasMore` belong
// to its remote thread list runtime): a host shows a "load more" of its own that calls
// `store.loadMoreSessions()` while `snapshot.sessions.hasMore`.
//
// It stays on when the server turns out to have no list (the open session is then the only
// thread): taking the adapter away would make assistant-ui replace its main thread.
function useThreadList(store, snapshot, enabled) {
  const sessions = snapshot ? snapshot.sessions : null;
  const on = enabled && !!store && !!sessions;
  useEffect(() => {
    if (!on) return;
    const s = store.getSnapshot().sessions;
    // The store asks a first page once however often it is asked to load it.
    if (!s.loaded) store.loadSessions();
    if (s.archivable && !s.archivedLoaded) store.loadSessions({ archived: true });
  }, [on, store]);
  const items = sessions ? sessions.items : EMPTY;
  const threads = useMemo(() => items.filter((i) => !i.archived).map(toThread), [items]);
  const archivedThreads = useMemo(() => items.filter((i) => i.archived).map(toThread), [items]);
  const threadId = snapshot ? snapshot.sessionId : undefined;
  const isLoading = !!sessions && sessions.loading && !sessions.loaded;
  const archivable = !!sessions && sessions.archivable;
  return useMemo(
    () =>
      on
        ? {
            threadId,
            isLoading,
            threads,
            archivedThreads,
            onSwitchToThread: (id) => store.switchSession(id),
            onSwitchToNewThread: () => {
              store.newSession();
            },
            onRename: (id, title) => {
              store.renameSession(id, title);
            },
            // Without an archive (pi-native) assistant-ui is given no archive actions.
            ...(archivable && {
              onArchive: (id) => {
                // As assistant-ui's own thread lists do: the open thread is left first, so an
                // archived one is never the thread being written in.
                if (id === store.getSnapshot().sessionId) store.newSession();
                store.archiveSession(id, true);
              },
              onUnarchive: (id) => {
                store.archiveSession(id, false);
              },
            }),
            onDelete: (id) => {
              store.deleteSession(id);
            },
          }
        : undefined,
    [on, store, threadId, isLoading, archivable, threads, archivedThreads],
  );
}

// One session as assistant-ui's `ExternalStoreThreadData`: the item itself under `custom`, for
// a ThreadListItem that shows more (running, local, updatedAt).
const threadCache = new WeakMap();
function toThread(item) {
  let t = threadCache.get(item);
  if (!t) {
    t = Object.freeze({
      status: item.archived ? "archived" : "regular",
      id: item.id,
      remoteId: item.local ? undefined : item.id,
      title: item.title,
      custom: item,
    });
    threadCache.set(item, t);
  }
  return t;
}

/**
 * Converts one AI SDK `UIMessage` from the snapshot into assistant-ui's `ThreadMessageLike`.
 * Exported for hosts that build their own adapter.
 *
 * assistant-ui throws on a part type it does not know (and on reasoning/tool parts in user
 * messages), which would take the whole thread down; so every part is mapped explicitly, and
 * a part without a counterpart of its own becomes a data part named after its type rather than
 * vanish. Only `step-start` is dropped (see `assistantPart`).
 *
 * An assistant message with a tool call that waits for the user (an approval asked, or an
 * ask-user question: `interrupt`) gets the status `requires-action` / `interrupt`, as
 * assistant-ui's own status rule gives a pending `approval` or `interrupt`
 * (runtime/utils/auto-status.ts); set explicitly, because in pi mode the turn still runs while
 * the tool waits, and a running thread would otherwise show the message as `running`.
 */
export function convertUIMessage(message) {
  const parts = Array.isArray(message.parts) ? message.parts : EMPTY;
  // UIMessage metadata is free-form server JSON; assistant-ui gives some metadata keys meaning
  // (and throws on `steps` outside assistant messages), so all of it goes under `custom`.
  const metadata = isPlainObject(message.metadata) ? { custom: { ...message.metadata } } : undefined;
  switch (message.role) {
    case "user":
      return {
        role: "user",
        id: message.id,
        content: parts.flatMap(userPart),
        // User files become attachments (shown as attachment chips), as in assistant-ui's
        // AI SDK converter, rather than inline file parts.
        attachments: parts.filter((part) => part.type === "file").map(toAttachment),
        metadata,
      };
    case "system":
      // assistant-ui requires exactly one text part in a system message: the texts are joined
      // (a system message has no other parts in the AI SDK).
      return {
        role: "system",
        id: message.id,
        content: [{ type: "text", text: parts.filter(isText).map((part) => part.text).join("\n\n") }],
        metadata,
      };
    default: {
      const like = { role: "assistant", id: message.id, content: parts.flatMap(assistantPart), metadata };
      if (parts.some(waitsForUser)) like.status = REQUIRES_ACTION;
      return like;
    }
  }
}

const REQUIRES_ACTION = Object.freeze({ type: "requires-action", reason: "interrupt" });

/**
 * Whether a UIMessage tool part waits for the user: an approval asked and not answered yet
 * (`approval-requested`), or an ask-user question (`input-available` with `interrupt`, pi mode).
 * The same rule as the store's `snapshot.pending`.
 */
export function waitsForUser(part) {
  if (!isToolType(part)) return false;
  if (part.state === "approval-requested") return true;
  return part.state === "input-available" && isPlainObject(part.interrupt);
}

function userPart(part) {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text ?? "" }];
    case "file":
      // Files are the message's attachments (see convertUIMessage).
      return [];
    case "step-start":
      return [];
    default:
      if (isDataPart(part)) return [dataPart(part)];
      // Reasoning, tool and source parts have no place in a user bubble (assistant-ui throws
      // on them there); they stay visible to a data renderer under their own type.
      return [otherPart(part)];
  }
}

function assistantPart(part) {
  const type = part.type;
  switch (type) {
    case "text":
    case "reasoning": {
      const status = partStatus(part.state);
      return [status ? { type, text: part.text ?? "", status } : { type, text: part.text ?? "" }];
    }
    case "file":
      return [withFilename({ type: "file", data: part.url, mimeType: part.mediaType }, part.filename)];
    case "reasoning-file":
      // A file the model produced while reasoning (ai 7). assistant-ui's reasoning parts are
      // text only, so it is a file part like an answer's file, marked `reasoning: true` (an
      // extra field assistant-ui keeps) for a File component that tells them apart.
      return [{ type: "file", data: part.url, mimeType: part.mediaType, reasoning: true }];
    case "source-url":
      return [
        part.title != null
          ? { type: "source", sourceType: "url", id: part.sourceId, url: part.url, title: part.title }
          : { type: "source", sourceType: "url", id: part.sourceId, url: part.url },
      ];
    case "source-document":
      return [
        withFilename(
          { type: "source", sourceType: "document", id: part.sourceId, title: part.title ?? "", mediaType: part.mediaType },
          part.filename,
        ),
      ];
    case "dynamic-tool":
      return [toolCall(part, part.toolName)];
    case "steering-message":
      // A user message added to the run while it went on (ai 7 steering). assistant-ui has no
      // user content inside an assistant message, and splitting the message in two would give
      // one store message two assistant-ui identities; so it is a data part
      // `steering-message` `{id, text, parts}` (`components.data.by_name["steering-message"]`).
      return [
        {
          type: "data",
          name: "steering-message",
          data: { id: part.id, text: (part.parts ?? EMPTY).filter(isText).map((p) => p.text).join("\n\n"), parts: part.parts ?? EMPTY },
        },
      ];
    case "custom":
      // Provider content the AI SDK does not model (ai 7): a data part `custom` `{kind,
      // providerMetadata}`.
      return [{ type: "data", name: "custom", data: { kind: part.kind, providerMetadata: part.providerMetadata } }];
    case "step-start":
      // Only a boundary between two model calls of one turn: assistant-ui has no content marker
      // for it (its `metadata.steps` wants per-step usage the UIMessage does not carry), and it
      // has nothing to show.
      return [];
    default:
      if (isToolType(part)) return [toolCall(part, type.slice(5))];
      if (isDataPart(part)) return [dataPart(part)];
      return [otherPart(part)];
  }
}

// A UIMessage tool part (`tool-NAME` / `dynamic-tool`) as an assistant-ui tool-call part.
function toolCall(part, toolName) {
  const input = part.input;
  const call = {
    type: "tool-call",
    toolCallId: part.toolCallId,
    toolName,
    // assistant-ui wants an object; a tool whose input is not one (or not there yet) still
    // shows its raw input through `argsText`.
    args: isPlainObject(input) ? input : {},
    argsText: input === undefined ? "" : JSON.stringify(input),
  };
  switch (part.state) {
    case "output-available":
      call.result = part.output;
      call.isError = false;
      // AI SDK marks streamed interim tool output `preliminary`.
      if (part.preliminary === true) call.isPreliminary = true;
      break;
    case "output-error":
      // `{ error: errorText }` rather than the bare text: the shape assistant-ui's AI SDK
      // converter produces, which tool renderers already handle.
      call.isError = true;
      call.result = { error: part.errorText };
      break;
    case "output-denied":
      call.isError = true;
      call.result = { error: part.approval?.reason || "Tool approval denied" };
      break;
    case "input-available":
      // An ask-user call waiting (pi mode): assistant-ui's human-input request. A tool UI
      // answers it with `resume(answer)` (or `addResult(answer)`).
      if (isPlainObject(part.interrupt)) call.interrupt = { type: "human", payload: part.interrupt };
      break;
    default:
      // input-streaming / approval-*: no result yet; the approval below says what waits.
      break;
  }
  if (part.approval && typeof part.approval.id === "string") call.approval = toApproval(part.approval);
  // Structured tool details are UI-only data next to the result: assistant-ui's `artifact`.
  // `part.ui.details` first (the result's details, or the latest `data-tool-ui` progress while
  // the tool runs), else the part's own `details` (pi).
  const details = toolDetailsOf(part);
  if (details !== undefined) {
    call.artifact = details;
    // A nested agent run (the reference server's `pi.subagent`: `details.transcript`) as the
    // call's nested messages, which `MessagePartPrimitive.Messages` renders with the thread's
    // own message components.
    const nested = nestedMessages(part.toolCallId, details);
    if (nested) call.messages = nested;
  }
  // The whole tool UI metadata (rendererId, displayGroup, icon, details) rides along as `ui`:
  // assistant-ui keeps unknown tool-call fields (its ThreadMessageLike conversion spreads the
  // part) and passes them to tool UI components as props; `makeToolUIs` reads it from there.
  if (part.ui !== undefined && part.ui !== null) call.ui = part.ui;
  return call;
}

// The store's approval (`{id, approved?, reason?, requestReason?, isAutomatic?}`) in
// assistant-ui's shape: `requestReason` (why the tool asks) is its `prompt`.
function toApproval(approval) {
  const out = { id: approval.id };
  if (typeof approval.requestReason === "string" && approval.requestReason !== "") out.prompt = approval.requestReason;
  if (typeof approval.approved === "boolean") out.approved = approval.approved;
  if (typeof approval.reason === "string") out.reason = approval.reason;
  if (approval.isAutomatic === true) out.isAutomatic = true;
  return out;
}

// ----- nested messages (a sub-agent's transcript) --------------------------------------------------

const nestedCache = new WeakMap();
const NESTED_COMPLETE = Object.freeze({ type: "complete", reason: "unknown" });
const NESTED_RUNNING = Object.freeze({ type: "running" });

/**
 * A tool's `details.transcript` as assistant-ui `ThreadMessage`s (what a tool-call part's
 * `messages` holds), or undefined when the details have none. Entries are the reference
 * server's `{role: 'user' | 'assistant' | 'tool', text, toolName?, isError?}` (a `tool` entry
 * becomes a tool-call part with its text as result, on the assistant message before it), or
 * UIMessages (`{id?, role, parts}`), converted as the thread's own. The last assistant message
 * is `running` while `details.status` is `running`, and carries `details.error` when it is
 * `error`. Cached per details object, so an unchanged part keeps its nested messages.
 */
export function nestedMessages(toolCallId, details) {
  if (!isPlainObject(details) || !Array.isArray(details.transcript)) return undefined;
  const cached = nestedCache.get(details);
  if (cached) return cached;
  const likes = [];
  details.transcript.forEach((entry, i) => {
    if (!isPlainObject(entry)) return;
    const id = `${toolCallId}:${i}`;
    if (Array.isArray(entry.parts)) {
      likes.push(convertUIMessage({ ...entry, id: typeof entry.id === "string" ? entry.id : id }));
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
        const call = {
          type: "tool-call",
          toolCallId: id,
          toolName: typeof entry.toolName === "string" ? entry.toolName : "tool",
          args: {},
          argsText: "",
          result: entry.isError === true ? { error: text } : text,
          isError: entry.isError === true,
        };
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

// ----- tool UI ------------------------------------------------------------------------------

// One resolving component per (registry, Fallback): the same component type across renders, so
// assistant-ui never remounts a tool UI because `makeToolUIs` was called again.
const toolUiCache = new WeakMap();
const NO_RENDERERS = {};

/**
 * Maps a tool renderer registry (the same one `<ToolPart>` takes: renderer ids, tool names,
 * un-namespaced aliases, `fallback`) onto assistant-ui's tool UI components. Returns
 * `{by_name, Fallback}` for `<MessagePrimitive.Parts components={{ tools: makeToolUIs(r) }} />`.
 *
 * `by_name` has one entry per registry key and per `options.toolNames` (e.g. the names of
 * `snapshot.tools`); `Fallback` takes every other tool call. Each resolves the renderer the way
 * `resolveToolRenderer` does (so `ui.rendererId` wins over the name, and `pi.subagent` finds a
 * `subagent` entry) and renders it with `{part, toolCall}`: `part` is the tool call as a
 * `dynamic-tool` UIMessage part (state, input, output / errorText, details, ui), `toolCall`
 * assistant-ui's own props (`addResult`, `status`, …). With no match it renders
 * `options.Fallback` with assistant-ui's props, else the package's `DefaultToolUI`.
 */
export function makeToolUIs(renderers, options = {}) {
  const Fallback = options.Fallback ?? null;
  const key = renderers && typeof renderers === "object" ? renderers : NO_RENDERERS;
  let byFallback = toolUiCache.get(key);
  if (!byFallback) {
    byFallback = new Map();
    toolUiCache.set(key, byFallback);
  }
  let ToolUI = byFallback.get(Fallback);
  if (!ToolUI) {
    ToolUI = function AgentChatStoreToolUI(props) {
      const part = toolPartFromCall(props);
      const Renderer = resolveToolRenderer(part, renderers);
      if (Renderer) return createElement(Renderer, { part, toolCall: props });
      if (Fallback) return createElement(Fallback, props);
      return createElement(DefaultToolUI, { part });
    };
    byFallback.set(Fallback, ToolUI);
  }
  // A null-prototype object: a tool named `__proto__` is just a key.
  const byName = Object.create(null);
  const keys = renderers instanceof Map ? [...renderers.keys()] : Object.keys(renderers ?? {});
  for (const name of [...keys, ...(options.toolNames ?? EMPTY)]) {
    if (typeof name === "string" && name !== "" && name !== "fallback") byName[name] = ToolUI;
  }
  return { by_name: byName, Fallback: ToolUI };
}

// An assistant-ui tool-call part (as its tool UI props) back as a `dynamic-tool` UIMessage part.
function toolPartFromCall(call) {
  const part = {
    type: "dynamic-tool",
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    state: toolCallState(call),
    input: call.args,
  };
  if (call.result !== undefined) {
    if (call.isError) {
      const error = call.result;
      part.errorText = isPlainObject(error) && typeof error.error === "string" ? error.error : typeof error === "string" ? error : JSON.stringify(error);
    } else {
      part.output = call.result;
    }
    // The artifact is the result's details once there is a result (progress before that).
    if (call.artifact !== undefined) part.details = call.artifact;
  }
  if (call.isPreliminary) part.preliminary = true;
  if (call.approval) {
    const { prompt, ...approval } = call.approval;
    part.approval = typeof prompt === "string" ? { ...approval, requestReason: prompt } : approval;
  }
  if (call.result === undefined && call.interrupt && isPlainObject(call.interrupt.payload)) {
    part.interrupt = call.interrupt.payload;
  }
  if (isPlainObject(call.ui)) part.ui = call.ui;
  return part;
}

function toolCallState(call) {
  if (call.result !== undefined) {
    if (!call.isError) return "output-available";
    return call.approval && call.approval.approved === false ? "output-denied" : "output-error";
  }
  if (call.approval) return call.approval.approved === undefined ? "approval-requested" : "approval-responded";
  if (call.interrupt) return "input-available";
  if (call.argsText) {
    try {
      JSON.parse(call.argsText);
      return "input-available";
    } catch {
      return "input-streaming";
    }
  }
  return call.status && call.status.type === "running" ? "input-streaming" : "input-available";
}

function dataPart(part) {
  const data = { type: "data", name: part.type.slice(5), data: part.data };
  if (typeof part.id === "string") data.id = part.id;
  return data;
}

function toAttachment(part, index) {
  const mediaType = part.mediaType || "application/octet-stream";
  const isImage = mediaType.startsWith("image/");
  return {
    id: String(index),
    type: isImage ? "image" : "file",
    name: part.filename ?? "file",
    contentType: mediaType,
    status: { type: "complete" },
    content: [
      isImage
        ? withFilename({ type: "image", image: part.url }, part.filename)
        : withFilename({ type: "file", data: part.url, mimeType: mediaType }, part.filename),
    ],
  };
}

const queueItemCache = new WeakMap();

// A snapshot queued item `{id, text, files, state, ...}` as an assistant-ui queue item. The ids
// are the store's, so a custom queue item UI can look the item up in `snapshot.queued` for its
// `state`, `canRetry` and `canRemove`, and call `store.retryQueued(id)`.
function toQueueItem(item) {
  let converted = queueItemCache.get(item);
  if (!converted) {
    const parts = [];
    if (item.text) parts.push({ type: "text", text: item.text });
    for (const file of item.files ?? EMPTY) {
      parts.push(withFilename({ type: "file", data: file.url, mimeType: file.mediaType }, file.filename));
    }
    converted = Object.freeze({ id: item.id, prompt: item.text ?? "", parts: Object.freeze(parts) });
    queueItemCache.set(item, converted);
  }
  return converted;
}

// An assistant-ui AppendMessage (composer content + completed attachments) as the store's
// `send(text, files)` arguments. Text parts, including those of text attachments, are joined;
// image and file parts become FileAttachments. Data and audio parts have no field in the chat
// POST (SPEC §2: message text + attachments) and are dropped.
function fromAppendMessage(message) {
  const texts = [];
  const files = [];
  const take = (part, attachment) => {
    switch (part.type) {
      case "text":
        if (part.text) texts.push(part.text);
        break;
      case "image":
        files.push(fileAttachment(part.image, attachment?.contentType, part.filename ?? attachment?.name, "image/png"));
        break;
      case "file":
        files.push(
          part.sourceType === "id"
            ? withFilename({ mediaType: part.mimeType || "application/octet-stream", url: part.data }, part.filename ?? attachment?.name)
            : fileAttachment(part.data, part.mimeType || attachment?.contentType, part.filename ?? attachment?.name, "application/octet-stream"),
        );
        break;
      default:
        break;
    }
  };
  for (const part of message.content ?? EMPTY) take(part);
  for (const attachment of message.attachments ?? EMPTY) {
    for (const part of attachment.content ?? EMPTY) take(part, attachment);
  }
  return { text: texts.join("\n\n"), files };
}

// The store's FileAttachment needs a concrete media type and a URL. assistant-ui parts may carry
// a bare base64 payload and no type; a wildcard type is rejected by AI SDK servers, hence the
// concrete fallbacks.
function fileAttachment(payload, declared, filename, fallbackType) {
  const fromDataUrl = /^data:([^;,]+)/i.exec(payload)?.[1];
  const mediaType = declared && !declared.includes("*") ? declared : fromDataUrl || fallbackType;
  const url = /^(data:|blob:|https?:)/i.test(payload) ? payload : `data:${mediaType};base64,${payload}`;
  return withFilename({ mediaType, url }, filename);
}

// A part kind with no assistant-ui counterpart of its own: a data part named after its type,
// carrying the part (so a `components.data.by_name[type]` renderer can show it).
function otherPart(part) {
  const { type, ...data } = part;
  return { type: "data", name: String(type), data };
}

function errorStatus(error) {
  // A stop is not a failure: assistant-ui shows `cancelled` without an error banner.
  return error.code === "Aborted"
    ? { type: "incomplete", reason: "cancelled" }
    : { type: "incomplete", reason: "error", error: error.message };
}

function partStatus(state) {
  if (state === "streaming") return { type: "running" };
  if (state === "done") return { type: "complete" };
  return undefined;
}

function withFilename(object, filename) {
  if (typeof filename === "string") object.filename = filename;
  return object;
}

function isText(part) {
  return part.type === "text";
}

function isToolType(part) {
  return part.type === "dynamic-tool" || (typeof part.type === "string" && part.type.startsWith("tool-"));
}

function isDataPart(part) {
  return typeof part.type === "string" && part.type.startsWith("data-");
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
