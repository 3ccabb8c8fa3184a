// Types for `agent-chat-store/assistant-ui` (written against @assistant-ui/react 0.15.22).
import type { AssistantRuntime, ExternalStoreAdapter, ThreadMessageLike } from "@assistant-ui/react";
import type { ChatStore } from "./agent_chat_store.js";

/** assistant-ui options forwarded to `useExternalStoreRuntime`. */
export interface ChatStoreRuntimeOptions {
  /** assistant-ui adapters: attachments, speech, dictation, voice, feedback, threadList. */
  adapters?: ExternalStoreAdapter["adapters"];
  suggestions?: ExternalStoreAdapter["suggestions"];
  unstable_capabilities?: ExternalStoreAdapter["unstable_capabilities"];
  /** OR-ed with "no store yet". */
  isDisabled?: boolean | undefined;
  /** OR-ed with the store's busy policy (busy without native follow-ups). */
  isSendDisabled?: boolean | undefined;
}

/**
 * An assistant-ui runtime over `store`, for `<AssistantRuntimeProvider runtime={...}>`.
 * Messages come from the snapshot, waiting follow-ups are assistant-ui queue items (while the
 * session has native follow-ups), new messages go through `store.send`, cancel is `store.stop`,
 * reload is `store.regenerate`. With a `null` store the thread is empty and disabled.
 */
export declare function useChatStoreRuntime(
  store: ChatStore | null | undefined,
  opts?: ChatStoreRuntimeOptions,
): AssistantRuntime;

/** Converts one snapshot message (an AI SDK UIMessage) into assistant-ui's ThreadMessageLike. */
export declare function convertUIMessage(
  message: ReturnType<ChatStore["getSnapshot"]>["messages"][number],
): ThreadMessageLike;
