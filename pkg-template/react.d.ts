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
