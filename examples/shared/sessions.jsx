// Pieces of the session sidebar (SPEC §11) that both example apps draw the same way. The list
// itself differs: the React app renders `useSessions(store)`, the assistant-ui app renders
// assistant-ui's own ThreadList primitives over the runtime's thread list adapter.
import { useRef, useState } from "react";
import { ArchiveIcon, PencilIcon, TrashIcon, UnarchiveIcon } from "./icons.jsx";

/** What a session without a title (the store gives none yet) is called in the list. */
export const UNTITLED = "New chat";

/**
 * The sidebar's frame: heading with the new-session button (`newButton`, each app's own),
 * the list request's error, then `children`. `data-testid="session-list"`.
 */
export function SessionSidebar({ as: Root = "aside", newButton, error, children, ...rest }) {
  return (
    <Root className="sidebar" data-testid="session-list" {...rest}>
      <div className="sidebar-head">
        <h2>Sessions</h2>
        {newButton}
      </div>
      <SessionsError error={error} />
      {children}
    </Root>
  );
}

/** `sessions.error`: the last list request that failed (a page, a rename, an archive, a delete). */
export function SessionsError({ error }) {
  if (!error) return null;
  return (
    <div className="sessions-error" role="alert" data-testid="sessions-error" data-code={error.code}>
      <strong>{error.code}</strong>
      {error.status ? <span> (HTTP {error.status})</span> : null}: {error.message}
    </div>
  );
}

/** A session's title, or `UNTITLED`; `data-testid="session-title"`. */
export function SessionTitle({ children }) {
  return <span className="session-title" data-testid="session-title">{children}</span>;
}

/** The marks after a title: a turn runs there, or nothing of it reached the server yet. */
export function SessionMarks({ item }) {
  return (
    <>
      {item?.running && <span className="session-running" title="A turn is running" aria-label="running" />}
      {item?.local && <span className="session-local muted" title="Not on the server yet">new</span>}
    </>
  );
}

/**
 * The inline title editor: Enter or leaving the field keeps the draft, Escape drops it.
 * `onDone(title)` with the new title, or `null` when nothing changed.
 */
export function RenameField({ title, onDone }) {
  const [draft, setDraft] = useState(title ?? "");
  // Enter and the blur that follows when the field unmounts must not both count.
  const finished = useRef(false);
  const finish = (value) => {
    if (finished.current) return;
    finished.current = true;
    onDone(value === null || value === (title ?? "") ? null : value);
  };
  return (
    <input
      className="session-rename-input"
      data-testid="session-rename-input"
      aria-label="Session title"
      value={draft}
      placeholder={UNTITLED}
      autoFocus
      onFocus={(e) => e.target.select()}
      onChange={(e) => setDraft(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === "Enter" && !e.nativeEvent.isComposing) {
          e.preventDefault();
          finish(draft);
        } else if (e.key === "Escape") {
          e.preventDefault();
          finish(null);
        }
      }}
      onBlur={() => finish(draft)}
    />
  );
}

/** The row of a session in the list, with its data attributes for tests and styling. */
export function SessionRow({ as: Root = "li", item, id, current, archived, children, ...rest }) {
  return (
    <Root
      className={"session-item" + (current ? " current" : "")}
      data-testid="session-item"
      data-session-id={id}
      data-current={String(!!current)}
      data-local={String(!!item?.local)}
      data-running={String(!!item?.running)}
      data-archived={String(!!archived)}
      {...rest}
    >
      {children}
    </Root>
  );
}

// The row's action buttons. Each app passes its own button element where assistant-ui has a
// primitive for the action (`as`), so the action goes through its runtime.

export function RenameButton({ onClick }) {
  return (
    <button type="button" className="icon" data-testid="session-rename" title="Rename" aria-label="Rename" onClick={onClick}>
      <PencilIcon />
    </button>
  );
}

export function ArchiveButton({ as: Button = "button", archived, ...rest }) {
  const label = archived ? "Unarchive" : "Archive";
  return (
    <Button type="button" className="icon" data-testid="session-archive" title={label} aria-label={label} {...rest}>
      {archived ? <UnarchiveIcon /> : <ArchiveIcon />}
    </Button>
  );
}

export function DeleteButton({ as: Button = "button", ...rest }) {
  return (
    <Button type="button" className="icon danger" data-testid="session-delete" title="Delete" aria-label="Delete" {...rest}>
      <TrashIcon />
    </Button>
  );
}

/** "Load more" for the next page of a walk (`session-more`, the archived one's `session-more-archived`). */
export function LoadMoreButton({ archived = false, onClick }) {
  return (
    <button type="button" className="link load-more" data-testid={archived ? "session-more-archived" : "session-more"} onClick={onClick}>
      Load more
    </button>
  );
}

/** Shows or hides the archived sessions. */
export function ArchivedToggle({ open, onToggle }) {
  return (
    <button type="button" className="link archived-toggle" data-testid="session-archived-toggle" aria-expanded={open} onClick={onToggle}>
      {open ? "Hide archived" : "Archived"}
    </button>
  );
}
