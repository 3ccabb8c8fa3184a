// Renderers for the parts of an AI SDK `UIMessage`, as the store's snapshot holds them. Tool
// parts go through the package's `<ToolPart>` with the app's renderer registry (tools.jsx).
import { memo } from "react";
import { ToolPart } from "agent-chat-store/react";
import { FileIcon, LinkIcon } from "./icons.jsx";
import { Json, TOOL_RENDERERS } from "./tools.jsx";

function TextPart({ part }) {
  return (
    <div className="part-text" data-testid="part-text" data-state={part.state ?? "done"}>
      {part.text}
      {part.state === "streaming" && <span className="cursor" aria-hidden="true" />}
    </div>
  );
}

function ReasoningPart({ part }) {
  const streaming = part.state === "streaming";
  return (
    <details className="part-reasoning" data-testid="part-reasoning" data-state={part.state ?? "done"}>
      <summary>{streaming ? "Thinking…" : "Reasoning"}</summary>
      <div className="reasoning-text">{part.text}</div>
    </details>
  );
}

function DataPart({ part }) {
  const name = part.type.slice("data-".length);
  return (
    <details className="part-data" data-testid="part-data" data-name={name}>
      <summary>
        <span className="badge">data</span> {name}
        {part.id ? <span className="muted"> #{part.id}</span> : null}
      </summary>
      <Json value={part.data} />
    </details>
  );
}

function FilePart({ part }) {
  const label = part.filename || part.mediaType;
  if (part.mediaType?.startsWith("image/")) {
    return (
      <figure className="part-file" data-testid="part-file" data-media-type={part.mediaType}>
        <img src={part.url} alt={label} />
        {part.filename && <figcaption>{part.filename}</figcaption>}
      </figure>
    );
  }
  return (
    <a className="part-file chip" data-testid="part-file" data-media-type={part.mediaType} href={part.url} target="_blank" rel="noreferrer">
      <FileIcon /> {label}
    </a>
  );
}

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

export function Part({ part, index }) {
  const type = part.type;
  if (type === "text") return <TextPart part={part} />;
  if (type === "reasoning") return <ReasoningPart part={part} />;
  if (type === "dynamic-tool" || type.startsWith("tool-")) return <ToolPart part={part} renderers={TOOL_RENDERERS} />;
  if (type.startsWith("data-")) return <DataPart part={part} />;
  if (type === "file") return <FilePart part={part} />;
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

/** One message. Memoised: an unchanged message keeps its identity across snapshots. */
export const Message = memo(function Message({ message }) {
  return (
    <div className={"message " + message.role} data-testid="message" data-role={message.role} data-id={message.id}>
      <div className="role">{message.role === "user" ? "You" : message.role === "assistant" ? "Assistant" : "System"}</div>
      <div className="bubble">
        {message.parts.map((part, i) => (
          <Part key={partKey(part, i)} part={part} index={i} />
        ))}
      </div>
    </div>
  );
});

function partKey(part, i) {
  if (part.toolCallId) return "tool:" + part.toolCallId;
  return i;
}
