// Tool UI: the package's renderer registry (../tool-ui.js) on assistant-ui's tool UI slot.
import { createElement } from "react";
import type { ToolCallMessagePartComponent, ToolCallMessagePartProps } from "@assistant-ui/react";
import type { DynamicToolUIPart } from "../agent_chat_store.js";
import { DefaultToolUI } from "../react.js";
import type { ToolRendererRegistry } from "../react.js";
import { resolveToolRenderer } from "../tool-ui.js";
import type { ToolMessagePart, ToolUi } from "../tool-ui.js";
import { EMPTY, isPlainObject } from "./parts.js";

/** Options of `makeToolUIs`. */
export interface ToolUIsOptions {
  /** More tool names for `by_name` (e.g. `snapshot.tools.map(t => t.name)`). */
  toolNames?: Iterable<string>;
  /** What renders a tool call no registry entry matches (assistant-ui props); default `DefaultToolUI`. */
  Fallback?: ToolCallMessagePartComponent;
}

/** assistant-ui's tool UI slot: `<MessagePrimitive.Parts components={{ tools: makeToolUIs(r) }} />`. */
export interface ToolUIs {
  by_name: Record<string, ToolCallMessagePartComponent>;
  Fallback: ToolCallMessagePartComponent;
}

/** A tool call as its UI gets it: assistant-ui's props, and the fields this binding adds (`ui`). */
type CallProps = ToolCallMessagePartProps & { ui?: unknown; state?: DynamicToolUIPart["state"]; approval?: { approved?: boolean; prompt?: unknown; [key: string]: unknown }; interrupt?: { payload?: unknown } };

// ----- tool UI ------------------------------------------------------------------------------

// One resolving component per (registry, Fallback): the same component type across renders, so
// assistant-ui never remounts a tool UI because `makeToolUIs` was called again.
const toolUiCache = new WeakMap<object, Map<ToolCallMessagePartComponent | null, ToolCallMessagePartComponent>>();
const NO_RENDERERS = {};

/**
 * Maps a tool renderer registry (the same one `<ToolPart>` takes: renderer ids, tool names,
 * un-namespaced aliases, `fallback`) onto assistant-ui's tool UI components. Returns
 * `{by_name, Fallback}` for `<MessagePrimitive.Parts components={{ tools: makeToolUIs(r) }} />`.
 *
 * `by_name` has one entry per registry key and per `options.toolNames` (e.g. the names of
 * `snapshot.tools`); `Fallback` takes every other tool call. Each resolves the renderer the way
 * `resolveToolRenderer` does (so `ui.rendererId` wins over the name, and `pi.subagent` finds a
 * `subagent` entry) and renders it with `{part, toolCall}`: `part` is the tool call as a
 * `dynamic-tool` UIMessage part (state, input, output / errorText, details, ui), `toolCall`
 * assistant-ui's own props (`addResult`, `status`, …). With no match it renders
 * `options.Fallback` with assistant-ui's props, else the package's `DefaultToolUI`.
 */
export function makeToolUIs(
  // Any registry: each renderer gets the props it was registered for.
  renderers: ToolRendererRegistry<any> | null | undefined,
  options: ToolUIsOptions = {},
): ToolUIs {
  const Fallback = options.Fallback ?? null;
  const key = renderers && typeof renderers === "object" ? renderers : NO_RENDERERS;
  let byFallback = toolUiCache.get(key);
  if (!byFallback) {
    byFallback = new Map();
    toolUiCache.set(key, byFallback);
  }
  let ToolUI = byFallback.get(Fallback);
  if (!ToolUI) {
    ToolUI = function AgentChatStoreToolUI(props: ToolCallMessagePartProps) {
      const part = toolPartFromCall(props as CallProps);
      const Renderer = resolveToolRenderer(part, renderers);
      if (Renderer) return createElement(Renderer, { part, toolCall: props });
      if (Fallback) return createElement(Fallback, props);
      return createElement(DefaultToolUI, { part });
    };
    byFallback.set(Fallback, ToolUI);
  }
  // A null-prototype object: a tool named `__proto__` is just a key.
  const byName: Record<string, ToolCallMessagePartComponent> = Object.create(null);
  const keys = renderers instanceof Map ? [...renderers.keys()] : Object.keys(renderers ?? {});
  for (const name of [...keys, ...(options.toolNames ?? EMPTY)]) {
    if (typeof name === "string" && name !== "" && name !== "fallback") byName[name] = ToolUI;
  }
  return { by_name: byName, Fallback: ToolUI! };
}

// An assistant-ui tool-call part (as its tool UI props) back as a `dynamic-tool` UIMessage part.
function toolPartFromCall(call: CallProps): ToolMessagePart {
  const part: DynamicToolUIPart & { interrupt?: Record<string, unknown> } = {
    type: "dynamic-tool",
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    state: toolCallState(call),
    input: call.args,
  };
  const made = part as { -readonly [K in keyof typeof part]: (typeof part)[K] };
  if (call.result !== undefined) {
    if (call.isError) {
      const error = call.result;
      made.errorText = isPlainObject(error) && typeof error.error === "string" ? error.error : typeof error === "string" ? error : JSON.stringify(error);
    } else {
      made.output = call.result;
    }
    // The artifact is the result's details once there is a result (progress before that).
    if (call.artifact !== undefined) made.details = call.artifact;
  }
  if (call.isPreliminary) made.preliminary = true;
  if (call.approval) {
    const { prompt, ...approval } = call.approval;
    const answered = approval as NonNullable<DynamicToolUIPart["approval"]>;
    made.approval = typeof prompt === "string" ? { ...answered, requestReason: prompt } : answered;
  }
  if (call.result === undefined && call.interrupt && isPlainObject(call.interrupt.payload)) {
    made.interrupt = call.interrupt.payload;
  }
  if (isPlainObject(call.ui)) made.ui = call.ui as ToolUi;
  return part;
}

// The store's state of the call (`state`, kept by `convertUIMessage`). A tool-call part made
// elsewhere (a host's own converter) has none: its result says what assistant-ui knows.
function toolCallState(call: CallProps): DynamicToolUIPart["state"] {
  if (call.state) return call.state;
  if (call.result === undefined) return "input-available";
  return call.isError ? "output-error" : "output-available";
}
