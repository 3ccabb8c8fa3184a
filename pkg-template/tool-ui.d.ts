// Types for `agent-chat-store/tool-ui`: the framework-free tool renderer registry.
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

/** The tool name of a `tool-NAME` / `dynamic-tool` part; `undefined` for other parts. */
export declare function toolNameOf(part: { type?: string; toolName?: string } | null | undefined): string | undefined;

/** Whether `part` is a `tool-NAME` or `dynamic-tool` part. */
export declare function isToolPart(part: unknown): part is ToolMessagePart;

/** The segment after the last `.` (`pi.subagent` → `subagent`); `undefined` without a namespace. */
export declare function toolAlias(name: string | undefined): string | undefined;

/** The entry `resolveToolRenderer` would pick, with its key and rule. */
export declare function matchToolRenderer<R>(
  part: { type?: string; toolName?: string; ui?: ToolUi } | null | undefined,
  renderers: ToolRenderers<R> | null | undefined,
): ToolRendererMatch<R> | undefined;

/**
 * The renderer for a tool part: by `part.ui?.rendererId`, then the exact tool name, then the
 * un-namespaced alias (`pi.subagent` → `subagent`), then `renderers.fallback`; `undefined` when
 * none matches or `part` is not a tool part.
 */
export declare function resolveToolRenderer<R>(
  part: { type?: string; toolName?: string; ui?: ToolUi } | null | undefined,
  renderers: ToolRenderers<R> | null | undefined,
): R | undefined;

/** `part.ui.details` when set (result details, or the latest progress), else `part.details`. */
export declare function toolDetailsOf(part: { ui?: ToolUi; details?: unknown } | null | undefined): unknown;
