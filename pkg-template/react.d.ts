// Types for `agent-chat-store/react`. The option and snapshot types are taken from the
// generated `ChatStore` declaration, so they can never drift from it.
import type { ChatStore } from "./agent_chat_store.js";

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
 * `fetch` and `headers` always call the latest values; other options are read once (remount
 * with a React `key` to change them). StrictMode-safe: its simulated remount disposes the first
 * store and creates another.
 */
export declare function useCreateChatStore(
  options: ConstructorParameters<typeof ChatStore>[0],
): ChatStore | null;
