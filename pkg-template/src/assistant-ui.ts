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
// The store stays the single authority. assistant-ui gets the store's messages as its message
// repository (`snapshot.branches` in AI SDK mode, else the messages as one chain), renders the
// store's snapshot and forwards the user's actions, each to the one store action that does it:
//
//   onNew / queue.enqueue / queue.steer   store.send(text, files)
//   queue.move(id, {lane: "steer"})       store.runQueuedNow(id)   (QueueItemPrimitive.Steer)
//   queue.remove(id)                      store.removeQueued(id)
//   onEdit                                store.editMessage(sourceId, text, files)  (canEdit;
//                                         store.send(text, files, {messageId}) without branches)
//   setMessages (branch picker)           store.switchBranch(lastId), or store.setMessages(prefix)
//                                         for a cut path (delete, a stop's take-back); branches only
//   onReload(parentId)                    store.regenerate(parentId) (canRegenerate), else
//                                         store.retry() after a failed turn (canRetry)
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
//
// The binding is split by concern under assistant-ui/: the runtime (runtime.ts), message
// conversion (convert.ts, nested.ts), the composer's messages (composer.ts), the queue (queue.ts),
// attachments, the thread list, the tool-answer callbacks, the pending hooks and tool UIs.
import type { ToolCallMessagePartProps } from "@assistant-ui/react";

export { useChatStoreRuntime } from "./assistant-ui/runtime.js";
export type { ChatStoreRuntimeOptions } from "./assistant-ui/runtime.js";
export { convertUIMessage, waitsForUser } from "./assistant-ui/convert.js";
export { nestedMessages } from "./assistant-ui/nested.js";
export { createToolAnswerCallbacks } from "./assistant-ui/tool-answers.js";
export type { ToolAnswerCallbacks } from "./assistant-ui/tool-answers.js";
export { usePending, usePendingApprovals, usePendingQuestions } from "./assistant-ui/pending.js";
export type { PendingHandle } from "./assistant-ui/pending.js";
export { DEFAULT_FILE_TYPES, createAttachmentAdapter } from "./assistant-ui/attachments.js";
export { makeToolUIs } from "./assistant-ui/tool-ui.js";
export type { ToolUIs, ToolUIsOptions } from "./assistant-ui/tool-ui.js";
export { QueueItemStatus, useQueueItemStatus } from "./assistant-ui/queue.js";
export type { ChatQueueItem, QueueItemStatusProps } from "./assistant-ui/queue.js";

/** The assistant-ui props a tool UI gets (re-exported for renderers that use `toolCall`). */
export type AssistantToolCallProps = ToolCallMessagePartProps;
