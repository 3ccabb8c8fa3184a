// The session sidebar (SPEC §11) over `useSessions(store)`: the store owns the list, its
// order, titles and pages; this only draws it and forwards clicks.
import { memo, useState } from "react";
import { useSessions } from "agent-chat-store/react";
import { PlusIcon } from "../../shared/icons.jsx";
import {
  ArchiveButton, ArchivedToggle, DeleteButton, LoadMoreButton, RenameButton, RenameField,
  SessionMarks, SessionRow, SessionSidebar, SessionTitle, UNTITLED,
} from "../../shared/sessions.jsx";

// Memoised: the app re-renders on every streamed word, the list only when `useSessions` says.
export const Sessions = memo(function Sessions({ store }) {
  const [showArchived, setShowArchived] = useState(false);
  // With `archived`, the hook also asks for the archived sessions' first page.
  const sessions = useSessions(store, { archived: showArchived });
  // A server without the list routes answered 404: no sidebar at all.
  if (!sessions.available) return null;

  const unarchived = sessions.items.filter((item) => !item.archived);
  const archived = sessions.items.filter((item) => item.archived);
  const row = (item) => <SessionItem key={item.id} item={item} current={item.id === sessions.current} sessions={sessions} />;

  return (
    <SessionSidebar
      error={sessions.error}
      data-loading={String(sessions.loading)}
      newButton={
        <button type="button" className="new-session" data-testid="session-new" onClick={() => sessions.create()}>
          <PlusIcon /> New
        </button>
      }
    >
      <ul className="session-items">{unarchived.map(row)}</ul>
      {sessions.loading && !sessions.loaded && <div className="sessions-loading muted">Loading…</div>}
      {sessions.hasMore && <LoadMoreButton onClick={() => sessions.loadMore()} />}

      {/* A server without an archive (pi-native): no Archived section. */}
      {sessions.archivable && <ArchivedToggle open={showArchived} onToggle={() => setShowArchived((open) => !open)} />}
      {sessions.archivable && showArchived && (
        <section className="archived" data-testid="session-archived">
          <ul className="session-items">{archived.map(row)}</ul>
          {sessions.archivedLoaded && archived.length === 0 && <div className="sessions-note muted">No archived sessions</div>}
          {sessions.archivedHasMore && <LoadMoreButton archived onClick={() => sessions.loadMore({ archived: true })} />}
        </section>
      )}
    </SessionSidebar>
  );
});

function SessionItem({ item, current, sessions }) {
  const [renaming, setRenaming] = useState(false);
  const rename = (title) => {
    setRenaming(false);
    if (title !== null) sessions.rename(item.id, title);
  };
  return (
    <SessionRow item={item} id={item.id} current={current} archived={item.archived}>
      {renaming ? (
        <RenameField title={item.title} onDone={rename} />
      ) : (
        <button
          type="button"
          className="session-trigger"
          aria-current={current ? "true" : undefined}
          title={item.title ?? UNTITLED}
          onClick={() => sessions.open(item.id)}
        >
          <SessionTitle>{item.title ?? UNTITLED}</SessionTitle>
          <SessionMarks item={item} />
        </button>
      )}
      <div className="session-actions">
        <RenameButton onClick={() => setRenaming(true)} />
        {/* The server cannot archive a session it does not have yet (the store refuses). */}
        {!item.local && sessions.archivable && <ArchiveButton archived={item.archived} onClick={() => sessions.archive(item.id, !item.archived)} />}
        <DeleteButton onClick={() => sessions.remove(item.id)} />
      </div>
    </SessionRow>
  );
}
