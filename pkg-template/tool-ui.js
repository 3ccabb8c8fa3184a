// Tool UI registry for agent-chat-store: which renderer shows a tool part. Framework-free (no
// React, no wasm): a renderer is whatever the host registers (a React component, a function
// returning a DOM node, a template id, …).
//
// Renderers are explicit registrations of the host app, keyed by renderer id or tool name;
// nothing is loaded from the server. Rich UI comes from typed metadata on the part (`part.ui`,
// which the store resolves from the tool result's `details.uiKind`, a `data-tool-ui` chunk, or
// the session's tool catalog), never from parsing human text.

/**
 * The tool name of a `tool-NAME` or `dynamic-tool` part (`undefined` for any other part).
 * @param {{type?: string, toolName?: string} | null | undefined} part
 */
export function toolNameOf(part) {
  if (!part || typeof part.type !== "string") return undefined;
  if (part.type === "dynamic-tool") return typeof part.toolName === "string" ? part.toolName : undefined;
  if (part.type.startsWith("tool-")) return part.type.slice("tool-".length);
  return undefined;
}

/** Whether `part` is a tool part (`tool-NAME` or `dynamic-tool`). */
export function isToolPart(part) {
  return toolNameOf(part) !== undefined;
}

/**
 * The un-namespaced alias of a tool name: the segment after its last `.` (`pi.subagent` →
 * `subagent`), or `undefined` when the name has no namespace.
 * @param {string | undefined} name
 */
export function toolAlias(name) {
  if (typeof name !== "string") return undefined;
  const dot = name.lastIndexOf(".");
  if (dot < 0 || dot === name.length - 1) return undefined;
  return name.slice(dot + 1);
}

// An own entry of the registry (a plain object or a Map). Own properties only: a tool named
// `constructor` or `__proto__` must not find Object.prototype's members.
function entry(renderers, key) {
  if (typeof key !== "string" || key === "") return undefined;
  if (renderers instanceof Map) return renderers.get(key) ?? undefined;
  return Object.prototype.hasOwnProperty.call(renderers, key) ? (renderers[key] ?? undefined) : undefined;
}

/**
 * Which registry entry renders the tool part `part`, and why: `{key, via, renderer}`, or
 * `undefined` (also for a part that is not a tool part).
 * Order: `part.ui.rendererId` (`via: "rendererId"`), the exact tool name (`"name"`), the
 * un-namespaced alias (`"alias"`), then the registry's `fallback` entry (`"fallback"`).
 */
export function matchToolRenderer(part, renderers) {
  if (!renderers) return undefined;
  const name = toolNameOf(part);
  if (name === undefined) return undefined; // not a tool part
  const rendererId = part.ui && typeof part.ui === "object" ? part.ui.rendererId : undefined;
  const candidates = [
    [rendererId, "rendererId"],
    [name, "name"],
    [toolAlias(name), "alias"],
    ["fallback", "fallback"],
  ];
  for (const [key, via] of candidates) {
    const renderer = entry(renderers, key);
    if (renderer !== undefined) return { key, via, renderer };
  }
  return undefined;
}

/**
 * The renderer for a tool part: by `part.ui?.rendererId`, then the exact tool name (`toolName`
 * of a `dynamic-tool` part, the `NAME` of `tool-NAME`), then the un-namespaced alias
 * (`pi.subagent` → `subagent`), then `renderers.fallback`; `undefined` when none matches.
 * `renderers` is a plain object or a Map; entries that are `undefined` or `null` are skipped.
 */
export function resolveToolRenderer(part, renderers) {
  return matchToolRenderer(part, renderers)?.renderer;
}

/**
 * The structured UI details of a tool part: `part.ui.details` (the result's `details`, or the
 * latest `data-tool-ui` progress while the tool runs), else the part's own `details`.
 */
export function toolDetailsOf(part) {
  if (!part) return undefined;
  const ui = part.ui && typeof part.ui === "object" ? part.ui : undefined;
  return ui && ui.details !== undefined ? ui.details : part.details;
}
