// assistant-ui binding for agent-chat-store: an ExternalStoreAdapter over a ChatStore.
//
// Written against @assistant-ui/react 0.15.22 (its @assistant-ui/core 0.3.35), read from the
// published .d.ts and runtime sources: `useExternalStoreRuntime(adapter)`, `ExternalStoreAdapter`
// (messages, convertMessage, isRunning, isLoading, isDisabled, isSendDisabled, onNew, onCancel,
// onReload, queue, adapters, suggestions, unstable_capabilities), `ExternalThreadQueueAdapter`
// (items, steerItems, enqueue, steer, move, edit, remove), `ThreadMessageLike` and
// `MessageNotSentError`. The part mapping follows assistant-ui's own AI SDK converter
// (@assistant-ui/ai-sdk `convertMessage`), so tool UIs written for that runtime work unchanged.
//
// The store stays the single authority: assistant-ui gets no `setMessages`, no `onEdit`, no
// branch repository. It renders the store's snapshot and forwards the user's actions.
//
// Tool UI: `makeToolUIs(renderers)` maps the package's renderer registry (`./tool-ui.js`) onto
// assistant-ui's tool UI slot of `MessagePrimitive.Parts` (`components.tools` =
// `{by_name, Fallback}`), keyed by tool name as assistant-ui does. assistant-ui 0.15.22 also
// has `makeAssistantToolUI` / `useAssistantToolUI` (registered into `aui.tools.toolUIs`, which
// win over `by_name`), but they are deprecated there and match by tool name only, so a
// `rendererId` or an un-namespaced alias could not be honoured; the `tools` slot can.
import { createElement, useCallback, useEffect, useMemo } from "react";
import { MessageNotSentError, useExternalStoreRuntime } from "@assistant-ui/react";
import { DefaultToolUI, useChatStore } from "./react.js";
import { resolveToolRenderer, toolDetailsOf } from "./tool-ui.js";

const EMPTY = Object.freeze([]);
const noop = () => {};

/**
 * Returns an assistant-ui runtime bound to `store` (pass it to `<AssistantRuntimeProvider>`).
 * `store` may be `null` (as `useCreateChatStore` returns on its first render): the thread is
 * then empty and disabled.
 *
 * `opts` forwards assistant-ui's own options: `adapters` (attachments, speech, dictation,
 * feedback, ...), `suggestions`, `unstable_capabilities`, and `isDisabled` / `isSendDisabled`,
 * which are OR-ed with the store's own gates.
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

  // The run error is shown on the last assistant message (assistant-ui's ErrorPrimitive reads
  // `status.error`). assistant-ui caches conversions per message object and keeps a cached
  // explicit status forever, so the converter's identity changes exactly when the error (or the
  // message it belongs to) changes, which makes assistant-ui re-convert.
  const error = snapshot && status === "error" ? snapshot.error : null;
  const last = messages.length > 0 ? messages[messages.length - 1] : null;
  const errorMessageId = error && last && last.role === "assistant" ? last.id : null;
  const convertMessage = useCallback(
    (message) => {
      const like = convertUIMessage(message);
      return error && message.id === errorMessageId ? { ...like, status: errorStatus(error) } : like;
    },
    [error, errorMessageId],
  );

  // One door for every new user message, whether it arrives through `onNew` or the queue: the
  // store decides (SPEC §5, §6) whether it is sent as a turn, queued as a follow-up, or refused.
  // A refusal throws MessageNotSentError, which makes assistant-ui put the text and
  // attachments back into its composer: the draft survives a refused send, as SPEC §5 requires.
  const send = useCallback(
    (message) => {
      if (!store) throw new MessageNotSentError("The chat store is not ready yet.");
      const { text, files } = fromAppendMessage(message);
      let result;
      try {
        result = store.send(text, files);
      } catch (cause) {
        // Nothing was accepted, so the draft goes back too; the store's typed error stays
        // reachable as `cause` (and through the store's `onError`).
        const notSent = new MessageNotSentError(cause instanceof Error ? cause.message : String(cause));
        notSent.cause = cause;
        throw notSent;
      }
      if (result && result.kind === "blocked") {
        throw new MessageNotSentError(result.hint);
      }
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
  // a user message id regenerates the answer after it; none regenerates the last answer.
  const onReload = useCallback(
    async (parentId) => {
      if (store) store.regenerate(parentId ?? undefined);
    },
    [store],
  );

  const given = opts.adapters;
  const threadList = useThreadList(store, snapshot, opts.threadList !== false && !given?.threadList);
  const adapters = useMemo(
    () => (threadList && !given?.threadList ? { ...given, threadList } : given),
    [threadList, given],
  );

  return useExternalStoreRuntime({
    messages,
    convertMessage,
    isRunning,
    // Until the canonical history arrived (SPEC §8), so a thread does not flash "empty".
    isLoading: snapshot ? !snapshot.hydrated : true,
    isDisabled: !store || !!opts.isDisabled,
    isSendDisabled,
    onNew,
    onCancel,
    // Only where regenerating can happen (AI SDK-owned history, nothing running): without
    // `onReload` assistant-ui hides its reload button instead of offering a no-op.
    onReload: snapshot && snapshot.canRegenerate ? onReload : undefined,
    queue,
    adapters,
    suggestions: opts.suggestions,
    unstable_capabilities: opts.unstable_capabilities,
  });
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
    if (!s.archivedLoaded) store.loadSessions({ archived: true });
  }, [on, store]);
  const items = sessions ? sessions.items : EMPTY;
  const threads = useMemo(() => items.filter((i) => !i.archived).map(toThread), [items]);
  const archivedThreads = useMemo(() => items.filter((i) => i.archived).map(toThread), [items]);
  const threadId = snapshot ? snapshot.sessionId : undefined;
  const isLoading = !!sessions && sessions.loading && !sessions.loaded;
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
            onArchive: (id) => {
              // As assistant-ui's own thread lists do: the open thread is left first, so an
              // archived one is never the thread being written in.
              if (id === store.getSnapshot().sessionId) store.newSession();
              store.archiveSession(id, true);
            },
            onUnarchive: (id) => {
              store.archiveSession(id, false);
            },
            onDelete: (id) => {
              store.deleteSession(id);
            },
          }
        : undefined,
    [on, store, threadId, isLoading, threads, archivedThreads],
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
 * messages), which would take the whole thread down; so every part is mapped explicitly and
 * anything without a counterpart (`step-start`, unknown types) is dropped.
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
      // assistant-ui requires exactly one text part in a system message.
      return {
        role: "system",
        id: message.id,
        content: [{ type: "text", text: parts.filter(isText).map((part) => part.text).join("\n\n") }],
        metadata,
      };
    default:
      return { role: "assistant", id: message.id, content: parts.flatMap(assistantPart), metadata };
  }
}

function userPart(part) {
  if (part.type === "text") return [{ type: "text", text: part.text ?? "" }];
  if (isDataPart(part)) return [dataPart(part)];
  // Files are attachments; reasoning/tool/source parts have no place in a user bubble.
  return [];
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
    default:
      if (typeof type === "string" && type.startsWith("tool-")) return [toolCall(part, type.slice(5))];
      if (isDataPart(part)) return [dataPart(part)];
      // `step-start` only separates steps; assistant-ui has no content marker for it.
      return [];
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
    default:
      // input-streaming / input-available / approval-*: no result yet; assistant-ui derives
      // the running / requires-action status from the missing result and the approval.
      break;
  }
  if (part.approval && typeof part.approval.id === "string") {
    const approval = { id: part.approval.id };
    if (typeof part.approval.approved === "boolean") approval.approved = part.approval.approved;
    if (typeof part.approval.reason === "string") approval.reason = part.approval.reason;
    call.approval = approval;
  }
  // Structured tool details are UI-only data next to the result: assistant-ui's `artifact`.
  // `part.ui.details` first (the result's details, or the latest `data-tool-ui` progress while
  // the tool runs), else the part's own `details` (pi).
  const details = toolDetailsOf(part);
  if (details !== undefined) call.artifact = details;
  // The whole tool UI metadata (rendererId, displayGroup, icon, details) rides along as `ui`:
  // assistant-ui keeps unknown tool-call fields (its ThreadMessageLike conversion spreads the
  // part) and passes them to tool UI components as props; `makeToolUIs` reads it from there.
  if (part.ui !== undefined && part.ui !== null) call.ui = part.ui;
  return call;
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
  if (call.approval) part.approval = call.approval;
  if (isPlainObject(call.ui)) part.ui = call.ui;
  return part;
}

function toolCallState(call) {
  if (call.result !== undefined) {
    if (!call.isError) return "output-available";
    return call.approval && call.approval.approved === false ? "output-denied" : "output-error";
  }
  if (call.approval) return call.approval.approved === undefined ? "approval-requested" : "approval-responded";
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
// `state` (`failed` / `stalled`) and call `store.retryQueued(id)`.
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

function isDataPart(part) {
  return typeof part.type === "string" && part.type.startsWith("data-");
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
