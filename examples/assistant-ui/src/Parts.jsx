// assistant-ui part components (`MessagePrimitive.Parts components={...}`). The store's parts
// arrive converted by `convertUIMessage`: text/reasoning keep their streaming status, tool parts
// are `tool-call`s (args = input, result = output, isError + {error} for failures), data parts
// keep their name, files and sources map to their counterparts. Tool calls go through the app's
// renderer registry, mapped onto assistant-ui's tool UI slot by `makeToolUIs` (tools.jsx).
import { FileIcon, LinkIcon } from "../../shared/icons.jsx";
import { DataView, FileView, ReasoningView, TextView } from "../../shared/parts.jsx";
import { TOOL_UIS } from "./tools.jsx";

// assistant-ui's part status, as the AI SDK part state the shared views take.
const partState = (status) => (status?.type === "running" ? "streaming" : "done");

function Text({ text, status }) {
  return <TextView text={text} state={partState(status)} />;
}

function Reasoning({ text, status }) {
  return <ReasoningView text={text} state={partState(status)} />;
}

function Data({ name, data }) {
  return <DataView name={name} data={data} />;
}

function File({ data, mimeType, filename }) {
  return <FileView url={data} mediaType={mimeType} filename={filename} />;
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
