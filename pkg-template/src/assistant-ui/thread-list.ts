// The session list as assistant-ui's thread list: the external-store thread list adapter, and
// the pages and running flags its core leaves out.
import { useEffect, useMemo, useState } from "react";
import type { AssistantRuntime, ExternalStoreThreadData, ExternalStoreThreadListAdapter } from "@assistant-ui/react";
import type { ChatSnapshot, ChatStore, SessionItem, SessionsSnapshot } from "../agent_chat_store.js";

type Thread = ExternalStoreThreadData<"regular"> | ExternalStoreThreadData<"archived">;

// The session list (SPEC §11) as assistant-ui's external-store thread list, so its own
// `ThreadList` / `ThreadListItem` primitives list, switch, create, rename, archive and delete
// sessions. Its first pages (both walks, one request after the other) are asked for on mount;
// the next ones through `ThreadListPrimitive.LoadMore` (`useThreadListPages` below).
//
// It stays on when the server turns out to have no list (the open session is then the only
// thread): taking the adapter away would make assistant-ui replace its main thread.
export function useThreadList(
  store: ChatStore,
  snapshot: ChatSnapshot,
  enabled: boolean,
): ExternalStoreThreadListAdapter | undefined {
  const { sessions } = snapshot;
  useEffect(() => {
    if (!enabled) return;
    const s = store.getSnapshot().sessions;
    // The store asks a first page once however often it is asked to load it.
    if (!s.loaded) store.loadSessions();
    if (s.archivable && !s.archivedLoaded) store.loadSessions({ archived: true });
  }, [enabled, store]);
  const items: readonly SessionItem[] = sessions.items;
  const threads = useMemo(() => items.filter((i) => !i.archived).map(toThread) as ExternalStoreThreadData<"regular">[], [items]);
  const archivedThreads = useMemo(
    () => items.filter((i) => i.archived).map(toThread) as ExternalStoreThreadData<"archived">[],
    [items],
  );
  const threadId = snapshot.sessionId;
  const isLoading = sessions.loading && !sessions.loaded;
  const archivable = sessions.archivable;
  return useMemo(
    (): ExternalStoreThreadListAdapter | undefined =>
      enabled
        ? {
            threadId,
            isLoading,
            threads,
            archivedThreads,
            onSwitchToThread: (id: string) => store.switchSession(id),
            onSwitchToNewThread: () => {
              store.newSession();
            },
            onRename: (id: string, title: string) => {
              store.renameSession(id, title);
            },
            // Without an archive (pi-native) assistant-ui is given no archive actions.
            ...(archivable && {
              onArchive: (id: string) => {
                // As assistant-ui's own thread lists do: the open thread is left first, so an
                // archived one is never the thread being written in.
                if (id === store.getSnapshot().sessionId) store.newSession();
                store.archiveSession(id, true);
              },
              onUnarchive: (id: string) => {
                store.archiveSession(id, false);
              },
            }),
            onDelete: (id: string) => {
              store.deleteSession(id);
            },
          }
        : undefined,
    [enabled, store, threadId, isLoading, archivable, threads, archivedThreads],
  );
}

// One session as assistant-ui's `ExternalStoreThreadData`: the item itself under `custom`, for
// a ThreadListItem that shows more (running, local, updatedAt).
const threadCache = new WeakMap<SessionItem, Thread>();
function toThread(item: SessionItem): Thread {
  let t = threadCache.get(item);
  if (!t) {
    t = Object.freeze<Thread>({
      status: item.archived ? "archived" : "regular",
      id: item.id,
      remoteId: item.local ? undefined : item.id,
      title: item.title,
      // assistant-ui's core copies the thread's fields into its item (its type has no place
      // for this one): the stock ThreadList groups items by it (Today, Yesterday, Earlier).
      ...lastMessageAt(item),
      // The item itself (assistant-ui types `custom` as a JSON object; the item is one).
      custom: item as unknown as Record<string, unknown>,
    });
    threadCache.set(item, t);
  }
  return t;
}


function lastMessageAt(item: SessionItem): { lastMessageAt?: Date } {
  if (item.updatedAt === undefined) return {};
  const at = new Date(item.updatedAt);
  return Number.isNaN(at.getTime()) ? {} : { lastMessageAt: at };
}

// ----- pages and running flags -----------------------------------------------------------------
//
// assistant-ui reads a thread list's pages and running flags from its thread list core, as
// optional members: `hasMore`, `isLoadingMore`, `loadMore()` (→ `s.threads.hasMore`,
// `s.threads.isLoadingMore`, `aui.threads.loadMore()`, `ThreadListPrimitive.LoadMore`) and
// `unstable_isThreadRunning(id)` (→ `s.threadListItem.isRunning`), and re-reads them when the
// core notifies its subscribers. Its external-store core (ExternalStoreThreadListRuntimeCore,
// @assistant-ui/core 0.3.35) has none of them: the adapter cannot say them. Its remote thread
// list runtime has them, but owns the threads' lifecycle (it makes new threads, mounts a runtime
// per thread), which is the store's (`newSession`, `switchSession`). So the binding gives the
// core it got from `useExternalStoreRuntime` these four members, read from the store:
//
// - `hasMore`: a next page of either walk (the unarchived sessions, then the archived ones: one
//   list for assistant-ui, as its remote list's one walk with archived items split out);
// - `loadMore()`: the store's `loadMoreSessions` for that walk (after the page on its way, if
//   one is: the store asks one at a time); settles when the page came;
// - `isLoadingMore`: a `loadMore()` on its way;
// - `unstable_isThreadRunning(id)`: the session's `running` (the open session's own turn, else
//   what the server listed; assistant-ui adds the open thread's own run).
//
// The seam (the runtime's `threads._core`, the members' names) is assistant-ui's internals,
// pinned by tests/vitest/thread-list.test.tsx: an upgrade that moves it fails there, and here
// it warns once and leaves the list without pages rather than break it.

interface ThreadListCore {
  __internal_setAdapter?: unknown;
  _notifySubscribers?: () => void;
}

/** What the members read: the latest store, and whether the list is the binding's. */
interface PagesSource {
  store: ChatStore;
  enabled: boolean;
  /** The `loadMore()` on its way (one at a time, as assistant-ui's own lists do). */
  loading: Promise<void> | null;
}

const MEMBERS = ["hasMore", "isLoadingMore", "loadMore", "unstable_isThreadRunning"] as const;
let warned = false;

/** The external-store thread list core behind `runtime`, or null where it is not found. */
export function threadListCore(runtime: AssistantRuntime): ThreadListCore | null {
  const core = (runtime.threads as unknown as { _core?: unknown })._core;
  if (!core || typeof core !== "object") return null;
  const c = core as ThreadListCore;
  return typeof c.__internal_setAdapter === "function" && typeof c._notifySubscribers === "function" ? c : null;
}

// The cores given the members, with what they read (a render done twice, as StrictMode does,
// finds its core's).
const sources = new WeakMap<ThreadListCore, PagesSource>();

// Gives `core` the four members over a source of its own, or null when it cannot (assistant-ui's
// own members win: a core that has any of them already pages by itself).
function install(core: ThreadListCore, store: ChatStore, enabled: boolean): PagesSource | null {
  const known = sources.get(core);
  if (known) return known;
  if (MEMBERS.some((m) => m in core)) return null;
  const source: PagesSource = { store, enabled, loading: null };
  sources.set(core, source);
  const sessions = () => source.store.getSnapshot().sessions;
  Object.defineProperties(core, {
    hasMore: { get: () => source.enabled && hasMoreOf(sessions()) },
    isLoadingMore: { get: () => source.enabled && source.loading !== null },
    loadMore: { value: () => (source.enabled ? loadMore(source, core) : Promise.resolve()) },
    unstable_isThreadRunning: {
      value: (id: string) => source.enabled && runningIds(sessions().items).has(id),
    },
  });
  return source;
}

function hasMoreOf(s: SessionsSnapshot): boolean {
  return s.hasMore || (s.archivable && s.archivedHasMore);
}

const running = new WeakMap<readonly SessionItem[], ReadonlySet<string>>();
function runningIds(items: readonly SessionItem[]): ReadonlySet<string> {
  let ids = running.get(items);
  if (!ids) {
    ids = new Set(items.filter((i) => i.running).map((i) => i.id));
    running.set(items, ids);
  }
  return ids;
}

function loadMore(source: PagesSource, core: ThreadListCore): Promise<void> {
  if (source.loading) return source.loading;
  const { store } = source;
  const task = (async () => {
    // The store asks one page at a time: a page on its way (the first page's refresh after a
    // turn) goes first, then the next page is asked.
    await until(store, (s) => !s.loading);
    const s = store.getSnapshot().sessions;
    const archived = !s.hasMore && s.archivable && s.archivedHasMore;
    if (!store.loadMoreSessions(archived ? { archived: true } : undefined)) return;
    await until(store, (s) => !s.loading);
  })();
  const done = () => {
    source.loading = null;
    core._notifySubscribers?.();
  };
  source.loading = task.then(done, done);
  core._notifySubscribers?.();
  return source.loading;
}

// Resolves once the store's session list satisfies `ready` (or the list turned out not to be
// there: nothing more will come).
function until(store: ChatStore, ready: (s: SessionsSnapshot) => boolean): Promise<void> {
  const met = () => {
    const s = store.getSnapshot().sessions;
    return ready(s) || !s.available;
  };
  if (met()) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = store.subscribe(() => {
      if (!met()) return;
      stop();
      resolve();
    });
  });
}

/**
 * Gives assistant-ui's thread list behind `runtime` the session list's pages and running flags
 * (above), while `enabled` (the thread list is the binding's), and tells assistant-ui when they
 * change.
 */
export function useThreadListPages(
  runtime: AssistantRuntime,
  store: ChatStore,
  snapshot: ChatSnapshot,
  enabled: boolean,
): void {
  const [installed] = useState(() => {
    const core = threadListCore(runtime);
    const source = core && install(core, store, enabled);
    if (core && source) return { core, source };
    if (!warned) {
      warned = true;
      console.warn(
        "agent-chat-store: this assistant-ui's thread list core was not the one the binding knows; " +
          "the thread list shows no pages beyond the first and no running flags.",
      );
    }
    return null;
  });
  const { sessions } = snapshot;
  const hasMore = enabled && hasMoreOf(sessions);
  const runningKey = enabled ? [...runningIds(sessions.items)].join("\n") : "";
  // After useExternalStoreRuntime's own effect (which hands the core the new threads): the
  // members read the store, and assistant-ui re-reads them on this notification.
  useEffect(() => {
    if (!installed) return;
    installed.source.store = store;
    installed.source.enabled = enabled;
    installed.core._notifySubscribers?.();
  }, [installed, store, enabled, hasMore, runningKey]);
}
