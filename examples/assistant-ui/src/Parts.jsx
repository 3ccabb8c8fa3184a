// assistant-ui part components (`MessagePrimitive.Parts components={...}`). The store's parts
// arrive converted by `convertUIMessage`: text/reasoning keep their streaming status, tool parts
// are `tool-call`s (args = input, result = output, isError + {error} for failures), data parts
// keep their name, files and sources map to their counterparts.
import { FileIcon, LinkIcon, ToolIcon } from "./icons.jsx";

function Json({ value }) {
  if (value === undefined) return <span className="muted">—</span>;
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return <pre className="json">{text}</pre>;
}

function Text({ text, status }) {
  const streaming = status?.type === "running";
  return (
    <div className="part-text" data-testid="part-text" data-state={streaming ? "streaming" : "done"}>
      {text}
      {streaming && <span className="cursor" aria-hidden="true" />}
    </div>
  );
}

function Reasoning({ text, status }) {
  const streaming = status?.type === "running";
  return (
    <details className="part-reasoning" data-testid="part-reasoning" data-state={streaming ? "streaming" : "done"}>
      <summary>{streaming ? "Thinking…" : "Reasoning"}</summary>
      <div className="reasoning-text">{text}</div>
    </details>
  );
}

// The AI SDK tool state, as far as assistant-ui's tool-call part still tells it.
function toolState({ result, isError, approval, argsText }) {
  if (result !== undefined) return isError ? "output-error" : "output-available";
  if (approval && approval.approved === undefined) return "approval-requested";
  return argsText ? "input-available" : "input-streaming";
}

const TOOL_STATE_LABEL = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "awaiting approval",
  "output-available": "done",
  "output-error": "error",
};

function Tool(props) {
  const { toolName, args, argsText, result, isError, toolCallId, artifact } = props;
  const state = toolState(props);
  return (
    <details
      className={"part-tool" + (isError ? " failed" : "")}
      data-testid="part-tool"
      data-tool-name={toolName}
      data-state={state}
      data-tool-call-id={toolCallId}
      open={isError || undefined}
    >
      <summary>
        <span className="tool-icon"><ToolIcon /></span>
        <span className="tool-name">{toolName}</span>
        <span className={"badge tool-state " + state}>{TOOL_STATE_LABEL[state] ?? state}</span>
      </summary>
      <div className="tool-body">
        <div className="tool-section">
          <div className="label">Input</div>
          <Json value={args && Object.keys(args).length ? args : argsText || undefined} />
        </div>
        {result !== undefined && !isError && (
          <div className="tool-section" data-testid="tool-output">
            <div className="label">Output</div>
            <Json value={result} />
          </div>
        )}
        {isError && (
          <div className="tool-section" data-testid="tool-error">
            <div className="label">Error</div>
            <pre className="json error-text">{result?.error ?? JSON.stringify(result)}</pre>
          </div>
        )}
        {artifact !== undefined && (
          <div className="tool-section">
            <div className="label">Details</div>
            <Json value={artifact} />
          </div>
        )}
      </div>
    </details>
  );
}

function Data({ name, data }) {
  return (
    <details className="part-data" data-testid="part-data" data-name={name}>
      <summary><span className="badge">data</span> {name}</summary>
      <Json value={data} />
    </details>
  );
}

function File({ data, mimeType, filename }) {
  const label = filename || mimeType;
  if (mimeType?.startsWith("image/")) {
    return (
      <figure className="part-file" data-testid="part-file" data-media-type={mimeType}>
        <img src={data} alt={label} />
        {filename && <figcaption>{filename}</figcaption>}
      </figure>
    );
  }
  return (
    <a className="part-file chip" data-testid="part-file" data-media-type={mimeType} href={data} target="_blank" rel="noreferrer">
      <FileIcon /> {label}
    </a>
  );
}

function Image({ image, filename }) {
  return (
    <figure className="part-file" data-testid="part-file">
      <img src={image} alt={filename || "image"} />
    </figure>
  );
}

function Source({ sourceType, url, title, id }) {
  if (sourceType === "url") {
    return (
      <a className="part-source chip" data-testid="part-source" href={url} target="_blank" rel="noreferrer">
        <LinkIcon /> {title || url}
      </a>
    );
  }
  return <span className="part-source chip" data-testid="part-source"><FileIcon /> {title || id}</span>;
}

function Empty({ status }) {
  if (status?.type !== "running") return null;
  return <span className="dots" data-testid="pending"><i /><i /><i /></span>;
}

export const PART_COMPONENTS = {
  Text,
  Reasoning,
  Source,
  Image,
  File,
  Empty,
  tools: { Fallback: Tool },
  data: { Fallback: Data },
};
