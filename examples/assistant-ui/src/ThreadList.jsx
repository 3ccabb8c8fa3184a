// The session sidebar (SPEC §11) with assistant-ui's own ThreadList primitives: listing,
// switching, creating, renaming, archiving and deleting go through assistant-ui's runtime,
// which calls the thread list adapter `useChatStoreRuntime` gives it, and so does "Load more"
// (`ThreadListPrimitive.LoadMore`). Only what assistant-ui has no slot for comes from the
// store: the archived walk's own next page, the list request's error, and whether the server
// has a list at all.
import { memo, useState } from "react";
import { ThreadListItemPrimitive, ThreadListPrimitive, useAui, useAuiState } from "@assistant-ui/react";
import { useSessions } from "agent-chat-store/react";
import { PlusIcon } from "../../shared/icons.jsx";
import {
  ArchiveButton, ArchivedToggle, DeleteButton, LoadMoreButton, RenameButton, RenameField,
  SessionMarks, SessionRow, SessionSidebar, SessionTitle, UNTITLED,
} from "../../shared/sessions.jsx";

// Memoised: the app re-renders on every streamed word, the list only when it changes.
export const ThreadList = memo(function ThreadList({ store }) {
  const [showArchived, setShowArchived] = useState(false);
  const sessions = useSessions(store);
  if (!sessions.available) return null;
  return (
    <SessionSidebar
      as={ThreadListPrimitive.Root}
      error={sessions.error}
      data-loading={String(sessions.loading)}
      newButton={
        <ThreadListPrimitive.New className="new-session" data-testid="session-new">
          <PlusIcon /> New
        </ThreadListPrimitive.New>
      }
    >
      <div className="session-items">
        <ThreadListPrimitive.Items>{sessions.archivable ? renderItem : renderUnarchivable}</ThreadListPrimitive.Items>
      </div>
      {sessions.hasMore && (
        <ThreadListPrimitive.LoadMore className="link load-more" data-testid="session-more">
          Load more
        </ThreadListPrimitive.LoadMore>
      )}

      {/* A server without an archive (pi-native): no Archived section, no archive buttons. */}
      {sessions.archivable && <ArchivedToggle open={showArchived} onToggle={() => setShowArchived((open) => !open)} />}
      {sessions.archivable && showArchived && (
        <section className="archived session-items" data-testid="session-archived">
          <ThreadListPrimitive.Items archived>{renderItem}</ThreadListPrimitive.Items>
          {sessions.archivedHasMore && (
            <LoadMoreButton archived onClick={() => store.loadMoreSessions({ archived: true })} />
          )}
        </section>
      )}
    </SessionSidebar>
  );
});

// One function for every render: assistant-ui memoises the rows on it.
const renderItem = () => <ThreadListItem archivable />;
const renderUnarchivable = () => <ThreadListItem archivable={false} />;

function ThreadListItem({ archivable }) {
  const aui = useAui();
  const id = useAuiState((s) => s.threadListItem.id);
  const title = useAuiState((s) => s.threadListItem.title);
  const archived = useAuiState((s) => s.threadListItem.status === "archived");
  const current = useAuiState((s) => s.threads.mainThreadId === s.threadListItem.id);
  // The store's own SessionItem (running, local), which the adapter hands over as `custom`.
  const item = useAuiState((s) => s.threadListItem.custom);
  const [renaming, setRenaming] = useState(false);
  const rename = (newTitle) => {
    setRenaming(false);
    if (newTitle !== null) aui.threadListItem().rename(newTitle);
  };
  return (
    <SessionRow as={ThreadListItemPrimitive.Root} item={item} id={id} current={current} archived={archived}>
      {renaming ? (
        <RenameField title={title} onDone={rename} />
      ) : (
        <ThreadListItemPrimitive.Trigger className="session-trigger" title={title || UNTITLED}>
          <SessionTitle>
            <ThreadListItemPrimitive.Title fallback={UNTITLED} />
          </SessionTitle>
          <SessionMarks item={item} />
        </ThreadListItemPrimitive.Trigger>
      )}
      <div className="session-actions">
        <RenameButton onClick={() => setRenaming(true)} />
        {/* The server cannot archive a session it does not have yet (the store refuses). */}
        {!item?.local && archivable && (
          <ArchiveButton as={archived ? ThreadListItemPrimitive.Unarchive : ThreadListItemPrimitive.Archive} archived={archived} />
        )}
        <DeleteButton as={ThreadListItemPrimitive.Delete} />
      </div>
    </SessionRow>
  );
}
