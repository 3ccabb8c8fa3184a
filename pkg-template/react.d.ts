// Types for `agent-chat-store/react`. The option and snapshot types are taken from the
// generated `ChatStore` declaration, so they can never drift from it.
import type { ComponentType, ReactElement } from "react";
import type { ChatStore } from "./agent_chat_store.js";
import type { ToolMessagePart, ToolRendererProps, ToolRenderers } from "./tool-ui.js";

export * from "./tool-ui.js";

/**
 * Subscribes the component to `store` (via `useSyncExternalStore`) and returns its snapshot:
 * the same frozen object until something changed.
 */
export declare function useChatStore(store: ChatStore): ReturnType<ChatStore["getSnapshot"]>;
/** With no store yet (e.g. the first render of `useCreateChatStore`), returns `null`. */
export declare function useChatStore(
  store: ChatStore | null | undefined,
): ReturnType<ChatStore["getSnapshot"]> | null;

/**
 * Creates a `ChatStore` owned by the calling component: created on mount, disposed on unmount,
 * `switchSession(options.sessionId)` when that option changes. Returns `null` until the store
 * exists (the first render), then the store. Only `sessionId` is reactive; `onData`, `onError`,
 * `onEvent`, `onSessionChange`, `fetch` and `headers` always call the latest values; other options are read once (remount
 * with a React `key` to change them). StrictMode-safe: its simulated remount disposes the first
 * store and creates another.
 */
export declare function useCreateChatStore(
  options: ConstructorParameters<typeof ChatStore>[0],
): ChatStore | null;

type Snapshot = ReturnType<ChatStore["getSnapshot"]>;

/** What `useSessions` returns: `snapshot.sessions`, the open session's id, and the actions. */
export interface SessionsHandle extends Readonly<Snapshot["sessions"]> {
  /** The open session's id (`null` without a store). */
  readonly current: string | null;
  /** `store.loadSessions(opts)`: the first page again. */
  load(opts?: { archived?: boolean }): boolean;
  /** `store.loadMoreSessions(opts)`: the next page. */
  loadMore(opts?: { archived?: boolean }): boolean;
  /** `store.newSession()`: switches to a fresh session, returns its id. */
  create(): string | undefined;
  /** `store.switchSession(id)`. */
  open(id: string): void;
  rename(id: string, title: string): boolean;
  archive(id: string, archived?: boolean): boolean;
  /** `store.deleteSession(id)`. */
  remove(id: string): boolean;
}

/**
 * The session list of `store` with its actions, for a sidebar. Asks for the first page on
 * mount (and the archived sessions' with `{archived: true}`); re-renders only when the list or
 * the open session changes.
 */
export declare function useSessions(
  store: ChatStore | null | undefined,
  options?: { archived?: boolean },
): SessionsHandle;

/** A React tool renderer: a component that receives the tool part as `part`. */
export type ToolRenderer<P = {}> = ComponentType<ToolRendererProps & P>;

/** A registry of React tool renderers (`fallback` optional), for `ToolPart` and `makeToolUIs`. */
export type ToolRendererRegistry<P = {}> = ToolRenderers<ToolRenderer<P>>;

/**
 * Renders a tool part with the renderer `resolveToolRenderer` picks from `renderers` (by
 * `part.ui.rendererId`, exact tool name, un-namespaced alias, `fallback`), else with
 * `DefaultToolUI`. Extra props are passed to the renderer.
 */
export declare function ToolPart(props: {
  part: ToolMessagePart;
  renderers?: ToolRendererRegistry<any> | null | undefined;
  /** Anything else is passed to the renderer. */
  [prop: string]: unknown;
}): ReactElement;

/** The plain tool UI: name, state, input, output or error text (class names `acs-tool*`). */
export declare function DefaultToolUI(props: ToolRendererProps): ReactElement;

type StoreOptions = ConstructorParameters<typeof ChatStore>[0];
type Message = Snapshot["messages"][number];
type FinishEvent = Parameters<NonNullable<StoreOptions["onFinish"]>>[0];
type ToolCallEvent = Parameters<NonNullable<StoreOptions["onToolCall"]>>[0];
type PrepareSendMessagesRequest = NonNullable<StoreOptions["prepareSendMessagesRequest"]>;

/** A file as `useChat` takes it: a `FileUIPart`. */
export interface UseChatFilePart {
  type: "file";
  mediaType: string;
  filename?: string;
  url: string;
  providerReference?: Record<string, string>;
}

/** `useChat`'s `ChatRequestOptions`: what one send adds to its request. */
export interface UseChatRequestOptions {
  body?: object;
  headers?: Record<string, string> | Headers;
  /** Request metadata, for `prepareSendMessagesRequest` (never sent by itself). */
  metadata?: unknown;
}

/** A schema as the `ai` package takes one: Standard Schema, an `ai` `Schema`, or zod-like. */
export type UseChatSchema =
  | { "~standard": { validate(value: unknown): unknown } }
  | { validate(value: unknown): unknown }
  | { safeParse(value: unknown): unknown }
  | { parse(value: unknown): unknown };

/** The options of `useChat`: `@ai-sdk/react` 4.x's, and the store's. */
export interface UseChatOptions extends Partial<Omit<StoreOptions, "sessionId" | "onData">> {
  /** The chat id (the store's `sessionId`); default `generateId()`. */
  id?: string;
  /** The messages a new chat starts with (when the store hydrates none). */
  messages?: readonly Message[];
  /**
   * An `ai` `DefaultChatTransport` (or any object with its fields): `api` (default
   * `/api/chat`), `headers`, `body`, `credentials`, `fetch`, `prepareSendMessagesRequest`.
   */
  transport?: {
    api?: string;
    headers?: unknown;
    body?: unknown;
    credentials?: unknown;
    fetch?: unknown;
    prepareSendMessagesRequest?: PrepareSendMessagesRequest;
  };
  onFinish?: (event: FinishEvent) => void;
  onToolCall?: (event: ToolCallEvent) => void | PromiseLike<void>;
  onError?: (error: Error) => void;
  /** A data part as it streams, `{type: 'data-NAME', id?, data, transient?}`. */
  onData?: (part: { type: `data-${string}`; id?: string; data: unknown; transient?: boolean }) => void;
  experimental_throttle?: number;
  throttle?: number;
  /** Asks the stream route on mount, to follow a turn still running (a reload). */
  resume?: boolean;
  /** Checks each assistant message's metadata: a failure ends the turn with its error. */
  messageMetadataSchema?: UseChatSchema;
  /** Checks each data part's `data` by name (without `data-`). */
  dataPartSchemas?: Record<string, UseChatSchema>;
  /** Makes the chat id and the user messages' ids. */
  generateId?: () => string;
  /** Turns a file into a URL before it is sent (an upload), instead of sending its bytes. */
  uploadFile?: (file: UseChatFilePart) => Promise<{ url: string; mediaType?: string; filename?: string; providerReference?: Record<string, string> }>;
}

/** What `useChat` returns: `@ai-sdk/react` 4.x's shape, and the store's own fields. */
export interface UseChatHelpers {
  readonly id: string;
  readonly messages: readonly Message[];
  setMessages(messages: readonly Message[] | ((messages: readonly Message[]) => readonly Message[])): void;
  sendMessage(
    message?:
      | { text?: string; files?: FileList | readonly UseChatFilePart[]; metadata?: unknown; messageId?: string; id?: string }
      | { parts: readonly unknown[]; metadata?: unknown; messageId?: string; id?: string },
    options?: UseChatRequestOptions,
  ): Promise<void>;
  regenerate(options?: { messageId?: string } & UseChatRequestOptions): Promise<void>;
  stop(): Promise<void>;
  resumeStream(options?: UseChatRequestOptions): Promise<void>;
  /** `options`: the body keys, headers and metadata of the automatic continuation it may send. */
  addToolOutput(
    args: (
      | { tool?: string; toolCallId: string; output: unknown; state?: "output-available" }
      | { tool?: string; toolCallId: string; state: "output-error"; errorText: string }
    ) & { options?: UseChatRequestOptions },
  ): Promise<void>;
  /** The old name of `addToolOutput`. */
  addToolResult: UseChatHelpers["addToolOutput"];
  addToolApprovalResponse(args: { id: string; approved: boolean; reason?: string; options?: UseChatRequestOptions }): Promise<void>;
  readonly status: Snapshot["status"];
  readonly error: Error | undefined;
  clearError(): void;
  /** The store (`null` during the first render). */
  readonly store: ChatStore | null;
  readonly busy: boolean;
  readonly queued: Snapshot["queued"];
  readonly composer: Snapshot["composer"] | null;
  readonly pending: Snapshot["pending"];
  readonly sessions: Snapshot["sessions"] | null;
  readonly capabilities: Snapshot["capabilities"] | null;
}

/**
 * `@ai-sdk/react` 4.x's `useChat` on a `ChatStore`: change the import, keep the code. Against a
 * plain AI SDK route handler by default (`transport.api`, default `/api/chat`); against this
 * store's server family with `baseUrl`, `routes` or `capabilities`.
 */
export declare function useChat(options?: UseChatOptions): UseChatHelpers;
