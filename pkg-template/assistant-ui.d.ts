// Types for `agent-chat-store/assistant-ui` (written against @assistant-ui/react 0.15.22).
import type {
  AssistantRuntime,
  ExternalStoreAdapter,
  ThreadMessageLike,
  ToolCallMessagePartComponent,
  ToolCallMessagePartProps,
} from "@assistant-ui/react";
import type { ChatStore } from "./agent_chat_store.js";
import type { ToolRendererRegistry } from "./react.js";

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
  /**
   * The session list as assistant-ui's thread list (`adapters.threadList`), while the server
   * has one (default true; an `adapters.threadList` of your own wins).
   */
  threadList?: boolean | undefined;
}

/**
 * An assistant-ui runtime over `store`, for `<AssistantRuntimeProvider runtime={...}>`.
 * Messages come from the snapshot, waiting follow-ups are assistant-ui queue items (while the
 * session has native follow-ups), new messages go through `store.send`, cancel is `store.stop`,
 * reload is `store.regenerate`, and the session list is its thread list (`ThreadList` lists,
 * switches, creates, renames, archives and deletes sessions). With a `null` store the thread is
 * empty and disabled.
 */
export declare function useChatStoreRuntime(
  store: ChatStore | null | undefined,
  opts?: ChatStoreRuntimeOptions,
): AssistantRuntime;

/** Converts one snapshot message (an AI SDK UIMessage) into assistant-ui's ThreadMessageLike. */
export declare function convertUIMessage(
  message: ReturnType<ChatStore["getSnapshot"]>["messages"][number],
): ThreadMessageLike;

/** Options of `makeToolUIs`. */
export interface ToolUIsOptions {
  /** More tool names for `by_name` (e.g. `snapshot.tools.map(t => t.name)`). */
  toolNames?: Iterable<string>;
  /** What renders a tool call no registry entry matches (assistant-ui props); default `DefaultToolUI`. */
  Fallback?: ToolCallMessagePartComponent;
}

/** assistant-ui's tool UI slot: `<MessagePrimitive.Parts components={{ tools: makeToolUIs(r) }} />`. */
export interface ToolUIs {
  by_name: Record<string, ToolCallMessagePartComponent>;
  Fallback: ToolCallMessagePartComponent;
}

/**
 * Maps a tool renderer registry (renderer ids, tool names, un-namespaced aliases, `fallback`:
 * the registry `<ToolPart>` takes) onto assistant-ui's tool UI components. Each tool call is
 * resolved as `resolveToolRenderer` does (`ui.rendererId`, exact name, alias, `fallback`) and
 * rendered with `{part, toolCall}` (`part`: the call as a `dynamic-tool` UIMessage part with its
 * `ui`; `toolCall`: assistant-ui's props). The components are cached per registry object and
 * `Fallback`, so calling it again does not remount tool UIs.
 */
export declare function makeToolUIs(renderers: ToolRendererRegistry<any> | null | undefined, options?: ToolUIsOptions): ToolUIs;

/** The assistant-ui props a tool UI gets (re-exported for renderers that use `toolCall`). */
export type AssistantToolCallProps = ToolCallMessagePartProps;
