// Tool UI registry for agent-chat-store: which renderer shows a tool part. Framework-free (no
// React, no wasm): a renderer is whatever the host registers (a React component, a function
// returning a DOM node, a template id, …).
//
// Renderers are explicit registrations of the host app, keyed by renderer id or tool name;
// nothing is loaded from the server. Rich UI comes from typed metadata on the part (`part.ui`,
// which the store resolves from the tool result's `details.uiKind`, a `data-tool-ui` chunk, or
// the session's tool catalog), never from parsing human text.
import type { DynamicToolUIPart, ToolUIPart } from "./agent_chat_store.js";

/** The UI hints of a tool in the session's catalog (`snapshot.tools[].ui`). */
export interface ToolUiHints {
  /** A renderer the host app registered under this id (e.g. `"pi-subagent"`). */
  rendererId?: string;
  /** A grouping hint (e.g. `"agents"`, `"workspace"`). */
  displayGroup?: string;
  /** An icon hint (e.g. `"bot"`). */
  icon?: string;
}

/**
 * Typed tool UI metadata of a tool part (`part.ui`), resolved by the store from, in order: the
 * tool result's `details` (`details.uiKind` as `rendererId`, `details` as `details`), the latest
 * `data-tool-ui` chunk for the part's `toolCallId`, then the catalog entry's `ui`.
 */
export interface ToolUi extends ToolUiHints {
  /** Structured details for the renderer (never parsed from human text). */
  details?: unknown;
}

/** One tool of the session's catalog (`snapshot.tools`). */
export interface ToolCatalogEntry {
  name: string;
  description?: string;
  /** The tool's input JSON Schema. */
  inputSchema?: unknown;
  ui?: ToolUiHints;
}

/** A `tool-NAME` or `dynamic-tool` part of a snapshot message, with its UI metadata. */
export type ToolMessagePart = (ToolUIPart | DynamicToolUIPart) & { ui?: ToolUi };

/** What a tool renderer receives: the tool part (and, under assistant-ui, its tool-call props). */
export interface ToolRendererProps<P extends ToolMessagePart = ToolMessagePart> {
  part: P;
  /** assistant-ui only (`makeToolUIs`): the tool-call part props assistant-ui passed. */
  toolCall?: unknown;
}

/**
 * A registry: renderer ids and tool names (exact, or un-namespaced aliases) to renderers, plus
 * an optional `fallback`. A plain object or a Map. A renderer is whatever the host registers
 * (`R`); the React entry's `ToolRenderer` is a component.
 */
export type ToolRenderers<R = unknown> =
  | { readonly [key: string]: R | null | undefined; readonly fallback?: R | null | undefined }
  | ReadonlyMap<string, R | null | undefined>;

/** Which entry matched, and by which rule. */
export interface ToolRendererMatch<R = unknown> {
  key: string;
  via: "rendererId" | "name" | "alias" | "fallback";
  renderer: R;
}

/** What the lookups read of a part: its type, a dynamic tool's name, its UI metadata. */
type PartLike = { type?: string; toolName?: string; ui?: ToolUi } | null | undefined;

/** The tool name of a `tool-NAME` or `dynamic-tool` part (`undefined` for any other part). */
export function toolNameOf(part: { type?: string; toolName?: string } | null | undefined): string | undefined {
  if (!part || typeof part.type !== "string") return undefined;
  if (part.type === "dynamic-tool") return typeof part.toolName === "string" ? part.toolName : undefined;
  if (part.type.startsWith("tool-")) return part.type.slice("tool-".length);
  return undefined;
}

/** Whether `part` is a tool part (`tool-NAME` or `dynamic-tool`). */
export function isToolPart(part: unknown): part is ToolMessagePart {
  return toolNameOf(part as { type?: string; toolName?: string } | null | undefined) !== undefined;
}

/**
 * The un-namespaced alias of a tool name: the segment after its last `.` (`pi.subagent` →
 * `subagent`), or `undefined` when the name has no namespace.
 */
export function toolAlias(name: string | undefined): string | undefined {
  if (typeof name !== "string") return undefined;
  const dot = name.lastIndexOf(".");
  if (dot < 0 || dot === name.length - 1) return undefined;
  return name.slice(dot + 1);
}

// An own entry of the registry (a plain object or a Map). Own properties only: a tool named
// `constructor` or `__proto__` must not find Object.prototype's members.
function entry<R>(renderers: ToolRenderers<R>, key: string | undefined): R | undefined {
  if (typeof key !== "string" || key === "") return undefined;
  if (renderers instanceof Map) return renderers.get(key) ?? undefined;
  return Object.prototype.hasOwnProperty.call(renderers, key)
    ? ((renderers as { readonly [key: string]: R | null | undefined })[key] ?? undefined)
    : undefined;
}

/**
 * Which registry entry renders the tool part `part`, and why: `{key, via, renderer}`, or
 * `undefined` (also for a part that is not a tool part).
 * Order: `part.ui.rendererId` (`via: "rendererId"`), the exact tool name (`"name"`), the
 * un-namespaced alias (`"alias"`), then the registry's `fallback` entry (`"fallback"`).
 */
export function matchToolRenderer<R>(
  part: PartLike,
  renderers: ToolRenderers<R> | null | undefined,
): ToolRendererMatch<R> | undefined {
  if (!renderers) return undefined;
  const name = toolNameOf(part);
  if (name === undefined) return undefined; // not a tool part
  const rendererId = part!.ui && typeof part!.ui === "object" ? part!.ui.rendererId : undefined;
  const candidates: [string | undefined, ToolRendererMatch["via"]][] = [
    [rendererId, "rendererId"],
    [name, "name"],
    [toolAlias(name), "alias"],
    ["fallback", "fallback"],
  ];
  for (const [key, via] of candidates) {
    const renderer = entry(renderers, key);
    if (renderer !== undefined) return { key: key as string, via, renderer };
  }
  return undefined;
}

/**
 * The renderer for a tool part: by `part.ui?.rendererId`, then the exact tool name (`toolName`
 * of a `dynamic-tool` part, the `NAME` of `tool-NAME`), then the un-namespaced alias
 * (`pi.subagent` → `subagent`), then `renderers.fallback`; `undefined` when none matches.
 * `renderers` is a plain object or a Map; entries that are `undefined` or `null` are skipped.
 */
export function resolveToolRenderer<R>(part: PartLike, renderers: ToolRenderers<R> | null | undefined): R | undefined {
  return matchToolRenderer(part, renderers)?.renderer;
}

/**
 * The structured UI details of a tool part: `part.ui.details` (the result's `details`, or the
 * latest `data-tool-ui` progress while the tool runs), else the part's own `details`.
 */
export function toolDetailsOf(part: { ui?: ToolUi; details?: unknown } | null | undefined): unknown {
  if (!part) return undefined;
  const ui = part.ui && typeof part.ui === "object" ? part.ui : undefined;
  return ui && ui.details !== undefined ? ui.details : part.details;
}
