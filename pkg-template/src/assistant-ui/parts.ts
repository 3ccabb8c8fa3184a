// Helpers every part of the assistant-ui binding uses: reading UIMessage parts, whose shapes are
// the store's (and, for nested transcripts, any JSON).
import type { DataUIPart, DynamicToolUIPart, TextUIPart, ToolUIPart } from "../agent_chat_store.js";

export const EMPTY: readonly never[] = Object.freeze([]);

/** A part as these helpers read it: a `type`, maybe; anything else. */
export type AnyPart = { readonly type?: unknown };

export function withFilename<T extends object>(object: T, filename: unknown): T & { filename?: string } {
  if (typeof filename === "string") (object as { filename?: string }).filename = filename;
  return object;
}

export function isText(part: AnyPart): part is TextUIPart {
  return part.type === "text";
}

export function isToolType(part: AnyPart): part is ToolUIPart | DynamicToolUIPart {
  return part.type === "dynamic-tool" || (typeof part.type === "string" && part.type.startsWith("tool-"));
}

export function isDataPart(part: AnyPart): part is DataUIPart {
  return typeof part.type === "string" && part.type.startsWith("data-");
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
