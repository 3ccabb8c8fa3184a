// The pieces around the thread that both example apps draw the same way: the session switcher,
// the capability flags, the tool catalog and the store's error banner.
import { useEffect, useState } from "react";

/** The session field of the header; `onSwitch(draft)` on submit. */
export function SessionForm({ sessionId, onSwitch }) {
  const [draftSession, setDraftSession] = useState(sessionId);
  // Follow switches made elsewhere (back/forward).
  useEffect(() => setDraftSession(sessionId), [sessionId]);

  const submit = (e) => {
    e.preventDefault();
    onSwitch(draftSession);
  };

  return (
    <form className="session-form" onSubmit={submit}>
      <label htmlFor="session-input" className="muted">Session</label>
      <input
        id="session-input"
        data-testid="session-input"
        value={draftSession}
        onChange={(e) => setDraftSession(e.target.value)}
        spellCheck={false}
      />
      <button type="submit" data-testid="switch-session" disabled={!draftSession.trim() || draftSession.trim() === sessionId}>
        Switch
      </button>
    </form>
  );
}

// The session's tool catalog (`snapshot.tools`): what this runtime really has. Nothing here is
// assumed: a runtime without `pi.subagent` shows no trace of it.
export function ToolCatalog({ tools }) {
  const list = Array.isArray(tools) ? tools : [];
  return (
    <span className="meta-item tool-catalog" data-testid="tool-catalog" data-count={list.length}>
      Tools
      {list.length === 0 && <span className="muted">—</span>}
      {list.map((tool) => (
        <code
          key={tool.name}
          className={"tool-chip" + (tool.ui?.rendererId ? " rich" : "")}
          data-tool={tool.name}
          data-renderer={tool.ui?.rendererId ?? ""}
          data-group={tool.ui?.displayGroup ?? ""}
          title={[tool.description, tool.ui?.displayGroup && `group: ${tool.ui.displayGroup}`].filter(Boolean).join(" · ")}
        >
          {tool.name}
        </code>
      ))}
    </span>
  );
}

export function Flag({ on, children }) {
  return <span className={"flag " + (on ? "on" : "off")}>{on ? "✓" : "✗"} {children}</span>;
}

/** The store's `snapshot.error`, if any. */
export function ErrorBanner({ error }) {
  if (!error) return null;
  return (
    <div className="error-banner" role="alert" data-testid="error" data-code={error.code}>
      <strong>{error.code}</strong>
      {error.status ? <span className="muted"> (HTTP {error.status}{error.serverCode ? `, ${error.serverCode}` : ""})</span> : null}
      <span>: {error.message}</span>
    </div>
  );
}
