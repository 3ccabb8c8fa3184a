// assistant-ui part components (`MessagePrimitive.Parts components={...}`). The store's parts
// arrive converted by `convertUIMessage`: text/reasoning keep their streaming status, tool parts
// are `tool-call`s (args = input, result = output, isError + {error} for failures), data parts
// keep their name, files and sources map to their counterparts. Tool calls go through the app's
// renderer registry, mapped onto assistant-ui's tool UI slot by `makeToolUIs` (tools.jsx).
import { FileIcon, LinkIcon } from "./icons.jsx";
import { Json, TOOL_UIS } from "./tools.jsx";

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
  tools: TOOL_UIS,
  data: { Fallback: Data },
};
