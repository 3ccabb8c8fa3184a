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

/**
 * Subscribes the calling component to `store` (via `useSyncExternalStore`, whose first
 * subscribe starts the store's IO) and returns its snapshot: the same frozen object until
 * something changed.
 */
export function useChatStore(store: ChatStore): Snapshot {
  // The store's `subscribe` and `getSnapshot` are bound functions, the same on every read: no
  // resubscription per render. The same function serves as the server snapshot: a store
  // rendered on the server is never subscribed, so it never starts.
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}

/** What `useSessions` returns: `snapshot.sessions`, the open session's id, and the actions. */
export interface SessionsHandle extends Readonly<Snapshot["sessions"]> {
  /** The open session's id. */
  readonly current: string;
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
 * The session list of `store` (SPEC §11) with its actions, for a sidebar: `snapshot.sessions`
 * plus `current` (the open session's id) and `load`, `loadMore`, `create`, `open`, `rename`,
 * `archive`, `remove`. The first page is asked for when the component mounts (and the
 * archived sessions' too with `{archived: true}`). The component re-renders only when the list
 * or the open session changes, not on every streamed word.
 */
export function useSessions(store: ChatStore, options: { archived?: boolean } = {}): SessionsHandle {
  const getSessions = useCallback(() => store.getSnapshot().sessions, [store]);
  const getCurrent = useCallback(() => store.getSnapshot().sessionId, [store]);
  const sessions = useSyncExternalStore(store.subscribe, getSessions, getSessions);
  const current = useSyncExternalStore(store.subscribe, getCurrent, getCurrent);
  const archived = !!options.archived;
  useEffect(() => {
    const s = store.getSnapshot().sessions;
    // The store asks a first page once however often it is asked to load it.
    if (!s.loaded) store.loadSessions();
    if (archived && s.archivable && !s.archivedLoaded) store.loadSessions({ archived: true });
  }, [store, archived]);
  return useMemo(
    (): SessionsHandle => ({
      ...sessions,
      current,
      load: (opts?: { archived?: boolean }) => store.loadSessions(opts),
      loadMore: (opts?: { archived?: boolean }) => store.loadMoreSessions(opts),
      create: () => store.newSession(),
      open: (id: string) => store.switchSession(id),
      rename: (id: string, title: string) => store.renameSession(id, title),
      archive: (id: string, yes = true) => store.archiveSession(id, yes),
      remove: (id: string) => store.deleteSession(id),
    }),
    [sessions, current, store],
  );
}

/**
 * Creates a `ChatStore` owned by the calling component: made during its first render (its
 * constructor does no IO: the store starts when first subscribed to, `useChatStore` does, or
 * asked to act), `dispose()`d when it unmounts, and `switchSession(options.sessionId)` when that
 * option changes (the store, its other options and its per-session queues are kept).
 *
 * A render thrown away (StrictMode's second call, concurrent rendering, server rendering) leaves
 * a store that never started: no request, no timer. The disposal waits a microtask, so
 * StrictMode's simulated unmount and remount keep the one store; a component whose effects
 * come back after a real disposal (a hidden `<Activity>`) gets a fresh store.
 *
 * Only `sessionId` is reactive. `onData`, `onError`, `onEvent`, `onFinish`, `onToolCall`,
 * `onSessionChange`, `prepareSendMessagesRequest`, a `sendAutomaticallyWhen` function, `fetch`
 * and a `headers` given at creation always call the latest values passed to the hook (so closures over props/state are never
 * stale); every other option is read once. To change them, remount with a React `key`.
 */
export function useCreateChatStore(options: ChatStoreOptions): ChatStore {
  const latest = useRef(options);
  useEffect(() => {
    latest.current = options;
  });
  const [store, setStore] = useState(() => new ChatStore(withLatestCallbacks(latest)));
  const mounts = useRef(0);

  useEffect(() => {
    if (disposed.has(store)) {
      setStore(new ChatStore(withLatestCallbacks(latest)));
      return;
    }
    mounts.current += 1;
    return () => {
      mounts.current -= 1;
      // After the commit: StrictMode's simulated remount has mounted it again by then.
      queueMicrotask(() => {
        if (mounts.current > 0) return;
        disposed.add(store);
        store.dispose();
      });
    };
  }, [store]);

  const sessionId = options.sessionId;
  useEffect(() => {
    // Compared with the snapshot rather than a previous prop: a store made with this sessionId
    // is not switched to the session it already has.
    if (sessionId != null && store.getSnapshot().sessionId !== sessionId) {
      store.switchSession(sessionId);
    }
  }, [store, sessionId]);

  return store;
}

// The stores `useCreateChatStore` disposed: a component whose effects run again after that (the
// state kept, as a hidden `<Activity>`'s) replaces its store instead of using a dead one.
const disposed = new WeakSet<ChatStore>();

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
