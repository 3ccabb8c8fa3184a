// React bindings for agent-chat-store. Dependency-free apart from the `react` peer.
//
// The store is an external store in React's sense: it owns the state, React only reads
// snapshots. `getSnapshot()` returns the same frozen object until something changed, and an
// unchanged message keeps its object identity, which is exactly the contract
// `useSyncExternalStore` needs (no tearing, no render loops, memoised rows can skip work).
import { createElement, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import type { ComponentType, MutableRefObject, ReactElement } from "react";
import { ChatStore } from "./agent_chat_store.js";
import type { ChatSnapshot, ChatStoreOptions } from "./agent_chat_store.js";
import { resolveToolRenderer, toolNameOf } from "./tool-ui.js";
import type { ToolMessagePart, ToolRendererProps, ToolRenderers } from "./tool-ui.js";

// The framework-free tool renderer registry, for one import in React apps.
export * from "./tool-ui.js";
// The drop-in for `@ai-sdk/react`'s `useChat`, and the `ai` package's types it takes and gives
// (written in ai-types.ts, not imported: `ai` is an optional peer).
export { Chat, useChat } from "./use-chat.js";
export type * from "./ai-types.js";

type Snapshot = ChatSnapshot;

const noopUnsubscribe = () => {};

/**
 * Subscribes the component to `store` (via `useSyncExternalStore`) and returns its snapshot:
 * the same frozen object until something changed.
 */
export function useChatStore(store: ChatStore): Snapshot;
/** With no store yet (e.g. the first render of `useCreateChatStore`), returns `null`. */
export function useChatStore(store: ChatStore | null | undefined): Snapshot | null;
/**
 * Subscribes the calling component to `store` and returns its current snapshot.
 *
 * `store` may be `null`/`undefined` (as `useCreateChatStore` returns before its first effect ran);
 * the hook then returns `null`.
 */
export function useChatStore(store: ChatStore | null | undefined): Snapshot | null {
  // `subscribe` and `getSnapshot` are methods of a wasm-bindgen class instance: they need their
  // `this`, and useSyncExternalStore resubscribes whenever the function identity changes, so the
  // bound closures are created once per store, not once per render.
  const subscribe = useCallback(
    (onStoreChange: () => void) => (store ? store.subscribe(onStoreChange) : noopUnsubscribe),
    [store],
  );
  const getSnapshot = useCallback(() => (store ? store.getSnapshot() : null), [store]);
  // The same function serves as the server snapshot: the store has no separate server state,
  // and a host that renders on the server creates the store there too (or passes null).
  return useSyncExternalStore(subscribe, getSnapshot, getSnapshot);
}

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

const NO_SESSIONS: Snapshot["sessions"] = Object.freeze({
  available: false,
  loaded: false,
  loading: false,
  hasMore: false,
  archivedLoaded: false,
  archivedHasMore: false,
  archivable: false,
  items: Object.freeze([]),
  error: null,
});

/**
 * The session list of `store` (SPEC §11) with its actions, for a sidebar: `snapshot.sessions`
 * plus `current` (the open session's id) and `load`, `loadMore`, `create`, `open`, `rename`,
 * `archive`, `remove`. The first page is asked for when the component mounts (and the
 * archived sessions' too with `{archived: true}`). The component re-renders only when the list
 * or the open session changes, not on every streamed word.
 */
export function useSessions(
  store: ChatStore | null | undefined,
  options: { archived?: boolean } = {},
): SessionsHandle {
  const subscribe = useCallback(
    (onStoreChange: () => void) => (store ? store.subscribe(onStoreChange) : noopUnsubscribe),
    [store],
  );
  const getSessions = useCallback(() => (store ? store.getSnapshot().sessions : NO_SESSIONS), [store]);
  const getCurrent = useCallback(() => (store ? store.getSnapshot().sessionId : null), [store]);
  const sessions = useSyncExternalStore(subscribe, getSessions, getSessions);
  const current = useSyncExternalStore(subscribe, getCurrent, getCurrent);
  const archived = !!options.archived;
  useEffect(() => {
    if (!store) return;
    const s = store.getSnapshot().sessions;
    // The store asks a first page once however often it is asked to load it.
    if (!s.loaded) store.loadSessions();
    if (archived && s.archivable && !s.archivedLoaded) store.loadSessions({ archived: true });
  }, [store, archived]);
  return useMemo(
    (): SessionsHandle => ({
      ...sessions,
      current,
      load: (opts?: { archived?: boolean }) => (store ? store.loadSessions(opts) : false),
      loadMore: (opts?: { archived?: boolean }) => (store ? store.loadMoreSessions(opts) : false),
      create: () => (store ? store.newSession() : undefined),
      open: (id: string) => store?.switchSession(id),
      rename: (id: string, title: string) => (store ? store.renameSession(id, title) : false),
      archive: (id: string, yes = true) => (store ? store.archiveSession(id, yes) : false),
      remove: (id: string) => (store ? store.deleteSession(id) : false),
    }),
    [sessions, current, store],
  );
}

/**
 * Creates a `ChatStore` owned by the calling component: created when the component mounts,
 * `dispose()`d when it unmounts, and `switchSession(options.sessionId)` when that option changes
 * (the store, its other options and its per-session queues are kept).
 *
 * Returns the store, or `null` during the very first render: the store is created in an effect,
 * because its constructor starts network IO, and a render may run twice (StrictMode) or be
 * thrown away (concurrent rendering), which would leak a store nobody disposes.
 * Under StrictMode's simulated unmount/remount the first store is disposed and a fresh one is
 * created; the component re-renders with the new one.
 *
 * Only `sessionId` is reactive. `onData`, `onError`, `onEvent`, `onFinish`, `onToolCall`,
 * `onSessionChange`, `prepareSendMessagesRequest`, a `sendAutomaticallyWhen` function, `fetch`
 * and a `headers` given at creation always call the latest values passed to the hook (so closures over props/state are never
 * stale); every other option is read once. To change them, remount with a React `key`.
 */
export function useCreateChatStore(options: ChatStoreOptions): ChatStore | null {
  const [store, setStore] = useState<ChatStore | null>(null);
  const latest = useRef(options);
  // Declared before the creation effect, so a (re)creation in the same commit sees these options.
  useEffect(() => {
    latest.current = options;
  });

  useEffect(() => {
    const created = new ChatStore(withLatestCallbacks(latest));
    setStore(created);
    return () => {
      created.dispose();
      // On a real unmount this is a no-op; on StrictMode's remount the new store replaces it.
      setStore((current) => (current === created ? null : current));
    };
  }, []);

  const sessionId = options.sessionId;
  useEffect(() => {
    // Compared with the snapshot rather than a previous prop, so a store created with an older
    // sessionId (effects ran after a prop change) is brought to the current one, and a freshly
    // created store is not switched to the session it already has.
    if (store && sessionId != null && store.getSnapshot().sessionId !== sessionId) {
      store.switchSession(sessionId);
    }
  }, [store, sessionId]);

  return store;
}

// Replaces the callback options with trampolines that read `latest.current` at call time.
// Only the callbacks present at creation are wrapped: the store may decide at construction
// whether to use, say, a custom fetch, so an option appearing later is not honoured.
function withLatestCallbacks(latest: MutableRefObject<ChatStoreOptions>): ChatStoreOptions {
  const options = { ...latest.current };
  if (typeof options.onData === "function") {
    options.onData = (...args) => latest.current.onData?.(...args);
  }
  if (typeof options.onError === "function") {
    options.onError = (...args) => latest.current.onError?.(...args);
  }
  if (typeof options.onEvent === "function") {
    options.onEvent = (...args) => latest.current.onEvent?.(...args);
  }
  if (typeof options.onSessionChange === "function") {
    options.onSessionChange = (...args) => latest.current.onSessionChange?.(...args);
  }
  // The same for these, read by name.
  type Callback = ((...args: unknown[]) => unknown) | undefined;
  type ByName = Record<string, Callback>;
  for (const name of ["onFinish", "onToolCall", "prepareSendMessagesRequest"]) {
    if (typeof (options as unknown as ByName)[name] === "function") {
      (options as unknown as ByName)[name] = (...args) => (latest.current as unknown as ByName)[name]?.(...args);
    }
  }
  if (typeof options.sendAutomaticallyWhen === "function") {
    // A predicate given as a function stays one; the latest is asked (false once removed).
    options.sendAutomaticallyWhen = (...args) =>
      ((latest.current.sendAutomaticallyWhen as Callback)?.(...args) as boolean | undefined) ?? false;
  }
  if (typeof options.fetch === "function") {
    options.fetch = (...args) => (latest.current.fetch ?? globalThis.fetch)(...args);
  }
  if (options.headers != null) {
    // Headers may be an object or a function; a function covers both and lets a token that
    // rotates in React state reach the next request without recreating the store.
    options.headers = () => {
      const headers = latest.current.headers;
      return typeof headers === "function" ? headers() : (headers ?? {});
    };
  }
  return options;
}

/** A React tool renderer: a component that receives the tool part as `part`. */
export type ToolRenderer<P = {}> = ComponentType<ToolRendererProps & P>;

/** A registry of React tool renderers (`fallback` optional), for `ToolPart` and `makeToolUIs`. */
export type ToolRendererRegistry<P = {}> = ToolRenderers<ToolRenderer<P>>;

/**
 * Renders a tool part (`tool-NAME` / `dynamic-tool`) with the renderer `resolveToolRenderer`
 * picks from `renderers` (by `part.ui.rendererId`, exact tool name, un-namespaced alias, then
 * `renderers.fallback`), as `<Renderer part={part} {...rest} />`; with none, `DefaultToolUI`.
 * Renderers are the host app's own components: nothing is loaded from the server.
 */
export function ToolPart({
  part,
  renderers,
  ...rest
}: {
  part: ToolMessagePart;
  // Any registry: each renderer gets the props it was registered for.
  renderers?: ToolRendererRegistry<any> | null | undefined;
  /** Anything else is passed to the renderer. */
  [prop: string]: unknown;
}): ReactElement {
  const Renderer: ComponentType<ToolRendererProps> = resolveToolRenderer(part, renderers) ?? DefaultToolUI;
  return createElement(Renderer, { ...rest, part });
}

/**
 * A plain tool UI (what `ToolPart` shows when no renderer matches): the tool's name and state,
 * its input, and its output or error text. Unstyled; class names `acs-tool*`, and
 * `data-tool-name` / `data-state` / `data-tool-call-id` attributes.
 */
export function DefaultToolUI({ part }: ToolRendererProps): ReactElement {
  const name = toolNameOf(part) ?? "tool";
  const state = part.state;
  const failed = state === "output-error" || state === "output-denied";
  return createElement(
    "div",
    { className: "acs-tool", "data-tool-name": name, "data-state": state, "data-tool-call-id": part.toolCallId },
    createElement(
      "div",
      { className: "acs-tool-header" },
      createElement("strong", { className: "acs-tool-name" }, part.title || name),
      " ",
      createElement("span", { className: "acs-tool-state" }, state),
    ),
    part.input !== undefined ? createElement("pre", { className: "acs-tool-input" }, show(part.input)) : null,
    state === "output-available" ? createElement("pre", { className: "acs-tool-output" }, show(part.output)) : null,
    failed ? createElement("pre", { className: "acs-tool-error" }, part.errorText ?? "") : null,
  );
}

function show(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
