// Message part views both example apps draw the same way. Each app maps its own part shape onto
// these props: the store's UIMessage parts (react-chat) or assistant-ui's converted parts.
import { FileIcon } from "./icons.jsx";

export function Json({ value }) {
  if (value === undefined) return <span className="muted">—</span>;
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return <pre className="json">{text}</pre>;
}

/** `state`: the part's AI SDK state, `"streaming"` or `"done"` (the default). */
export function TextView({ text, state }) {
  return (
    <div className="part-text" data-testid="part-text" data-state={state ?? "done"}>
      {text}
      {state === "streaming" && <span className="cursor" aria-hidden="true" />}
    </div>
  );
}

export function ReasoningView({ text, state }) {
  const streaming = state === "streaming";
  return (
    <details className="part-reasoning" data-testid="part-reasoning" data-state={state ?? "done"}>
      <summary>{streaming ? "Thinking…" : "Reasoning"}</summary>
      <div className="reasoning-text">{text}</div>
    </details>
  );
}

/** A `data-{name}` part; `id` is shown when the part has one. */
export function DataView({ name, id, data }) {
  return (
    <details className="part-data" data-testid="part-data" data-name={name}>
      <summary>
        <span className="badge">data</span> {name}
        {id ? <span className="muted"> #{id}</span> : null}
      </summary>
      <Json value={data} />
    </details>
  );
}

/** A file: an image inline, anything else a link chip. `url` may be a data: URL. */
export function FileView({ url, mediaType, filename }) {
  const label = filename || mediaType;
  if (mediaType?.startsWith("image/")) {
    return (
      <figure className="part-file" data-testid="part-file" data-media-type={mediaType}>
        <img src={url} alt={label} />
        {filename && <figcaption>{filename}</figcaption>}
      </figure>
    );
  }
  return (
    <a className="part-file chip" data-testid="part-file" data-media-type={mediaType} href={url} target="_blank" rel="noreferrer">
      <FileIcon /> {label}
    </a>
  );
}
