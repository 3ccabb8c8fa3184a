// Types for `agent-chat-store/assistant-ui` (written against @assistant-ui/react 0.15.22).
import type {
  AssistantRuntime,
  AttachmentAdapter,
  ExternalStoreAdapter,
  ThreadMessage,
  ThreadMessageLike,
  ToolCallMessagePartComponent,
  ToolCallMessagePartProps,
} from "@assistant-ui/react";
import type { ChatStore, PendingApproval, PendingQuestion, UIMessagePart } from "./agent_chat_store.js";
import type { ToolRendererRegistry } from "./react.js";

/** assistant-ui options forwarded to `useExternalStoreRuntime`. */
export interface ChatStoreRuntimeOptions {
  /**
   * assistant-ui adapters: attachments, speech, dictation, voice, feedback, threadList. Yours
   * win over the defaults (the thread list, `createAttachmentAdapter()`).
   */
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
  /**
   * The default attachment adapter (`createAttachmentAdapter()`: images and text-like files as
   * `data:` URL attachments) when `adapters.attachments` is not given (default true).
   */
  attachments?: boolean | undefined;
}

/**
 * An assistant-ui runtime over `store`, for `<AssistantRuntimeProvider runtime={...}>`.
 * Messages come from the snapshot (a turn that failed before any answer gets an empty assistant
 * message `${userMessageId}:error` carrying the error), waiting follow-ups are assistant-ui queue
 * items (while the session has native follow-ups), new messages go through `store.send`, an edit
 * (`onEdit`, while `snapshot.canEdit`) through `store.send(text, files, {messageId})`, cancel is
 * `store.stop`, reload is `store.regenerate` (while `snapshot.canRegenerate`), a tool UI's
 * `respondToApproval` / `addResult` / `resume` are `store.addToolApprovalResponse` /
 * `store.addToolOutput`, files are `data:` URL attachments, and the session list is its thread
 * list (`ThreadList` lists, switches, creates, renames, archives and deletes sessions). With a
 * `null` store the thread is empty and disabled.
 */
export declare function useChatStoreRuntime(
  store: ChatStore | null | undefined,
  opts?: ChatStoreRuntimeOptions,
): AssistantRuntime;

/**
 * Converts one snapshot message (an AI SDK UIMessage) into assistant-ui's ThreadMessageLike:
 * every part kind mapped (only `step-start` dropped), tool parts as `tool-call` parts with
 * `approval`, `interrupt` (`{type: "human", payload: {question, options}}`) and, for a
 * `details.transcript`, nested `messages`; an assistant message with a call waiting for the user
 * has the status `requires-action` / `interrupt`.
 */
export declare function convertUIMessage(
  message: ReturnType<ChatStore["getSnapshot"]>["messages"][number],
): ThreadMessageLike;

/**
 * A tool part waits for the user: `approval-requested`, or `input-available` with `interrupt`
 * (an ask-user question, pi mode). The rule of `snapshot.pending`.
 */
export declare function waitsForUser(part: UIMessagePart): boolean;

/**
 * A tool's `details.transcript` (entries `{role: "user" | "assistant" | "tool", text, toolName?,
 * isError?}`, or UIMessages) as the `ThreadMessage`s of a tool-call part's `messages`, which
 * `MessagePartPrimitive.Messages` renders; undefined without a transcript. Cached per details
 * object.
 */
export declare function nestedMessages(toolCallId: string, details: unknown): readonly ThreadMessage[] | undefined;

/** The tool-answer callbacks `useChatStoreRuntime` gives assistant-ui, for an adapter of your own. */
export interface ToolAnswerCallbacks {
  /** `store.addToolApprovalResponse({id: approvalId, approved, reason?})`; rejects when refused. */
  onRespondToToolApproval: NonNullable<ExternalStoreAdapter["onRespondToToolApproval"]>;
  /** `store.addToolOutput({toolCallId, output})` (or `errorText` for an error result); rejects when refused. */
  onAddToolResult: NonNullable<ExternalStoreAdapter["onAddToolResult"]>;
  /** `store.addToolOutput({toolCallId, output: payload})` (an ask-user answer); throws when refused. */
  onResumeToolCall: NonNullable<ExternalStoreAdapter["onResumeToolCall"]>;
}

export declare function createToolAnswerCallbacks(store: ChatStore | null | undefined): ToolAnswerCallbacks;

/** What `usePending` returns: `snapshot.pending` and the actions that answer it. */
export interface PendingHandle {
  readonly approvals: readonly PendingApproval[];
  readonly questions: readonly PendingQuestion[];
  /** `store.addToolApprovalResponse({id: approvalId, approved: true, reason?})`. */
  approve(approvalId: string, reason?: string): boolean;
  /** `store.addToolApprovalResponse({id: approvalId, approved: false, reason?})`. */
  deny(approvalId: string, reason?: string): boolean;
  /** `store.addToolOutput({toolCallId, output})`. */
  answer(toolCallId: string, output: unknown): boolean;
}

/**
 * The calls of the open session that wait for the user, with their actions, for thread-level
 * chrome (an approval bar, a question card). Re-renders only when what waits changes; needs no
 * assistant-ui context.
 */
export declare function usePending(store: ChatStore | null | undefined): PendingHandle;

/** The waiting approvals (as the TrueFoundry runtime's `useTrueFoundryApprovals`). */
export declare function usePendingApprovals(store: ChatStore | null | undefined): {
  readonly pending: readonly PendingApproval[];
  approve(approvalId: string, reason?: string): boolean;
  deny(approvalId: string, reason?: string): boolean;
};

/** The waiting ask-user questions. */
export declare function usePendingQuestions(store: ChatStore | null | undefined): {
  readonly pending: readonly PendingQuestion[];
  answer(toolCallId: string, output: unknown): boolean;
};

/** The file types `createAttachmentAdapter` takes besides images. */
export declare const DEFAULT_FILE_TYPES: string;

/**
 * An attachment adapter whose files reach the store as `data:` URL attachments: images through
 * assistant-ui's `SimpleImageAttachmentAdapter`, `fileTypes` (default `DEFAULT_FILE_TYPES`) as
 * file parts. `useChatStoreRuntime` uses one unless `adapters.attachments` is given.
 */
export declare function createAttachmentAdapter(options?: { fileTypes?: string }): AttachmentAdapter;

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
