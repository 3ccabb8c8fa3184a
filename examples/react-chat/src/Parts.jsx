// Renderers for the parts of an AI SDK `UIMessage`, as the store's snapshot holds them. Tool
// parts go through the package's `<ToolPart>` with the app's renderer registry (tools.jsx),
// which also gets the store (tools that wait for the user answer through it). A user message
// can be edited in AI SDK mode (`store.send(text, files, {messageId})`).
import { memo, useState } from "react";
import { ToolPart } from "agent-chat-store/react";
import { FileIcon, LinkIcon } from "../../shared/icons.jsx";
import { DataView, FileView, Json, ReasoningView, TextView } from "../../shared/parts.jsx";
import { TOOL_RENDERERS } from "./tools.jsx";

function SourcePart({ part }) {
  if (part.type === "source-url") {
    return (
      <a className="part-source chip" data-testid="part-source" href={part.url} target="_blank" rel="noreferrer">
        <LinkIcon /> {part.title || part.url}
      </a>
    );
  }
  return (
    <span className="part-source chip" data-testid="part-source">
      <FileIcon /> {part.title || part.filename || part.sourceId}
    </span>
  );
}

export function Part({ part, index, store }) {
  const type = part.type;
  if (type === "text") return <TextView text={part.text} state={part.state} />;
  if (type === "reasoning") return <ReasoningView text={part.text} state={part.state} />;
  if (type === "dynamic-tool" || type.startsWith("tool-")) return <ToolPart part={part} renderers={TOOL_RENDERERS} store={store} />;
  if (type.startsWith("data-")) return <DataView name={type.slice("data-".length)} id={part.id} data={part.data} />;
  if (type === "file") return <FileView url={part.url} mediaType={part.mediaType} filename={part.filename} />;
  if (type === "source-url" || type === "source-document") return <SourcePart part={part} />;
  // A step boundary: a thin rule between steps, nothing before the first.
  if (type === "step-start") return index > 0 ? <hr className="step" /> : null;
  return (
    <div className="part-unknown" data-testid="part-unknown">
      <span className="badge">{type}</span>
      <Json value={part} />
    </div>
  );
}

/**
 * One message. Memoised: an unchanged message keeps its identity across snapshots.
 * `canEdit` (AI SDK mode, nothing running): a user message shows Edit, which opens an inline
 * editor; Save replaces the message and drops everything after it (the store asks again).
 */
export const Message = memo(function Message({ message, store, canEdit = false }) {
  const [editing, setEditing] = useState(null); // the draft while editing, else null
  const [refusal, setRefusal] = useState(null);
  const isUser = message.role === "user";

  const startEdit = () => {
    setRefusal(null);
    setEditing(message.parts.filter((p) => p.type === "text").map((p) => p.text).join(""));
  };
  const save = (e) => {
    e?.preventDefault();
    // The message's files stay; only its text changes.
    const files = message.parts
      .filter((p) => p.type === "file")
      .map((p) => ({ mediaType: p.mediaType, url: p.url, ...(p.filename ? { filename: p.filename } : {}) }));
    const result = store.send(editing, files, { messageId: message.id });
    if (result.kind === "sent") setEditing(null);
    else setRefusal(result.reason ?? "blocked");
  };
  const onKeyDown = (e) => {
    if (e.key === "Escape") setEditing(null);
    if (e.key !== "Enter" || e.shiftKey || e.nativeEvent.isComposing) return;
    save(e);
  };

  return (
    <div className={"message " + message.role + (editing !== null ? " editing" : "")} data-testid="message" data-role={message.role} data-id={message.id}>
      <div className="role">{isUser ? "You" : message.role === "assistant" ? "Assistant" : "System"}</div>
      {editing !== null ? (
        <form className="edit-form" data-testid="edit-form" onSubmit={save}>
          <textarea
            data-testid="edit-input"
            value={editing}
            onChange={(e) => setEditing(e.target.value)}
            onKeyDown={onKeyDown}
            rows={Math.min(8, Math.max(2, editing.split("\n").length))}
            autoFocus
          />
          <div className="edit-bar">
            {refusal && <span className="hint" data-testid="edit-refused" data-reason={refusal}>Cannot save now ({refusal}).</span>}
            <button type="button" className="ghost" data-testid="edit-cancel" onClick={() => setEditing(null)}>Cancel</button>
            <button type="submit" className="send" data-testid="edit-save" disabled={!canEdit || editing.trim() === ""}>Save</button>
          </div>
        </form>
      ) : (
        <div className="bubble">
          {message.parts.map((part, i) => (
            <Part key={partKey(part, i)} part={part} index={i} store={store} />
          ))}
        </div>
      )}
      {isUser && canEdit && editing === null && store && (
        <div className="message-actions">
          <button type="button" className="link" data-testid="edit-message" onClick={startEdit}>Edit</button>
        </div>
      )}
    </div>
  );
});

function partKey(part, i) {
  if (part.toolCallId) return "tool:" + part.toolCallId;
  return i;
}
