// The session list as assistant-ui's external-store thread list.
import { useEffect, useMemo } from "react";
import type { ExternalStoreThreadData, ExternalStoreThreadListAdapter } from "@assistant-ui/react";
import type { ChatSnapshot, ChatStore, SessionItem } from "../agent_chat_store.js";

type Thread = ExternalStoreThreadData<"regular"> | ExternalStoreThreadData<"archived">;

// The session list (SPEC §11) as assistant-ui's external-store thread list, so its own
// `ThreadList` / `ThreadListItem` primitives list, switch, create, rename, archive and delete
// sessions. Its first pages (both walks, one request after the other) are asked for on mount.
// assistant-ui's external-store thread list has no pagination (`loadMore` / `hasMore` belong
// to its remote thread list runtime): a host shows a "load more" of its own that calls
// `store.loadMoreSessions()` while `snapshot.sessions.hasMore`.
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
      // The item itself (assistant-ui types `custom` as a JSON object; the item is one).
      custom: item as unknown as Record<string, unknown>,
    });
    threadCache.set(item, t);
  }
  return t;
}

