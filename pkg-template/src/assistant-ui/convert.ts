// Message conversion: a snapshot UIMessage as assistant-ui's ThreadMessageLike, every part kind
// mapped (tool parts as tool-call parts, with their approval, interrupt and nested messages).
import type { ThreadMessageLike } from "@assistant-ui/react";
import type {
  DataUIPart,
  DynamicToolUIPart,
  FileUIPart,
  ToolUIPart,
  UIMessage,
  UIMessagePart,
} from "../agent_chat_store.js";
import { toolDetailsOf } from "../tool-ui.js";
import { nestedMessages } from "./nested.js";
import { EMPTY, isDataPart, isPlainObject, isText, isToolType, withFilename } from "./parts.js";
import type { AnyPart } from "./parts.js";

/** One part of a ThreadMessageLike's content. */
export type LikePart = Exclude<ThreadMessageLike["content"], string>[number];
type Attachments = NonNullable<ThreadMessageLike["attachments"]>;
type Status = NonNullable<ThreadMessageLike["status"]>;
type ToolPart = ToolUIPart | DynamicToolUIPart;
/** A tool part as it may come: an ask-user call (pi) carries its question as `interrupt`. */
type WaitingToolPart = ToolPart & { interrupt?: unknown };

/**
 * A part made here, as assistant-ui's type: its parts want JSON (`args`, `data`) where the
 * store's JSON is `unknown`, and some carry fields assistant-ui keeps untyped (`ui`,
 * `reasoning`).
 */
export const likePart = (part: object): LikePart => part as LikePart;

/**
 * Converts one AI SDK `UIMessage` from the snapshot into assistant-ui's `ThreadMessageLike`.
 * Exported for hosts that build their own adapter.
 *
 * assistant-ui throws on a part type it does not know (and on reasoning/tool parts in user
 * messages), which would take the whole thread down; so every part is mapped explicitly, and
 * a part without a counterpart of its own becomes a data part named after its type rather than
 * vanish. Only `step-start` is dropped (see `assistantPart`).
 *
 * An assistant message with a tool call that waits for the user (`waiting`: the store decides
 * which, and `snapshot.pending` names their messages) gets the status `requires-action` /
 * `interrupt`, as assistant-ui's own status rule gives a pending `approval` or `interrupt`
 * (runtime/utils/auto-status.ts); set explicitly, because in pi mode the turn still runs while
 * the tool waits, and a running thread would otherwise show the message as `running`.
 */
export function convertUIMessage(message: UIMessage, waiting = false): ThreadMessageLike {
  const parts: readonly UIMessagePart[] = Array.isArray(message.parts) ? message.parts : EMPTY;
  // UIMessage metadata is free-form server JSON; assistant-ui gives some metadata keys meaning
  // (and throws on `steps` outside assistant messages), so all of it goes under `custom`.
  const metadata = isPlainObject(message.metadata) ? { custom: { ...message.metadata } } : undefined;
  switch (message.role) {
    case "user":
      return {
        role: "user",
        id: message.id,
        content: parts.flatMap(userPart),
        // User files become attachments (shown as attachment chips), as in assistant-ui's
        // AI SDK converter, rather than inline file parts.
        attachments: parts.filter((part): part is FileUIPart => part.type === "file").map(toAttachment),
        metadata,
      };
    case "system":
      // assistant-ui requires exactly one text part in a system message: the texts are joined
      // (a system message has no other parts in the AI SDK).
      return {
        role: "system",
        id: message.id,
        content: [{ type: "text", text: parts.filter(isText).map((part) => part.text).join("\n\n") }],
        metadata,
      };
    default: {
      const like: { -readonly [K in keyof ThreadMessageLike]: ThreadMessageLike[K] } = {
        role: "assistant",
        id: message.id,
        content: parts.flatMap(assistantPart),
        metadata,
      };
      if (waiting) like.status = REQUIRES_ACTION;
      return like;
    }
  }
}

const REQUIRES_ACTION: Status = Object.freeze({ type: "requires-action", reason: "interrupt" });

/**
 * Whether a UIMessage tool part waits for the user: an approval asked and not answered yet
 * (`approval-requested`), or an ask-user question (`input-available` with `interrupt`, pi mode).
 *
 * @deprecated The store decides it: `snapshot.pending` lists the calls that wait, each with
 * its `messageId` (what `convertUIMessage`'s `waiting` wants). Kept for hosts that call it.
 */
export function waitsForUser(part: UIMessagePart): boolean {
  if (!isToolType(part)) return false;
  if (part.state === "approval-requested") return true;
  return part.state === "input-available" && isPlainObject((part as WaitingToolPart).interrupt);
}

function userPart(part: UIMessagePart): LikePart[] {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text ?? "" }];
    case "file":
      // Files are the message's attachments (see convertUIMessage).
      return [];
    case "step-start":
      return [];
    default:
      if (isDataPart(part)) return [dataPart(part)];
      // Reasoning, tool and source parts have no place in a user bubble (assistant-ui throws
      // on them there); they stay visible to a data renderer under their own type.
      return [otherPart(part)];
  }
}

function assistantPart(part: UIMessagePart): LikePart[] {
  switch (part.type) {
    case "text":
    case "reasoning": {
      const type = part.type;
      const status = partStatus(part.state);
      return [status ? { type, text: part.text ?? "", status } : { type, text: part.text ?? "" }];
    }
    case "file":
      return [withFilename({ type: "file", data: part.url, mimeType: part.mediaType }, part.filename)];
    case "reasoning-file":
      // A file the model produced while reasoning (ai 7). assistant-ui's reasoning parts are
      // text only, so it is a file part like an answer's file, marked `reasoning: true` (an
      // extra field assistant-ui keeps) for a File component that tells them apart.
      return [likePart({ type: "file", data: part.url, mimeType: part.mediaType, reasoning: true })];
    case "source-url":
      return [
        part.title != null
          ? { type: "source", sourceType: "url", id: part.sourceId, url: part.url, title: part.title }
          : { type: "source", sourceType: "url", id: part.sourceId, url: part.url },
      ];
    case "source-document":
      return [
        withFilename(
          { type: "source", sourceType: "document", id: part.sourceId, title: part.title ?? "", mediaType: part.mediaType },
          part.filename,
        ),
      ];
    case "dynamic-tool":
      return [toolCall(part, part.toolName)];
    case "steering-message":
      // A user message added to the run while it went on (ai 7 steering). assistant-ui has no
      // user content inside an assistant message, and splitting the message in two would give
      // one store message two assistant-ui identities; so it is a data part
      // `steering-message` `{id, text, parts}` (`components.data.by_name["steering-message"]`).
      return [
        likePart({
          type: "data",
          name: "steering-message",
          data: { id: part.id, text: (part.parts ?? EMPTY).filter(isText).map((p) => p.text).join("\n\n"), parts: part.parts ?? EMPTY },
        }),
      ];
    case "custom":
      // Provider content the AI SDK does not model (ai 7): a data part `custom` `{kind,
      // providerMetadata}`.
      return [likePart({ type: "data", name: "custom", data: { kind: part.kind, providerMetadata: part.providerMetadata } })];
    case "step-start":
      // Only a boundary between two model calls of one turn: assistant-ui has no content marker
      // for it (its `metadata.steps` wants per-step usage the UIMessage does not carry), and it
      // has nothing to show.
      return [];
    default:
      if (isToolType(part)) return [toolCall(part, part.type.slice(5))];
      if (isDataPart(part)) return [dataPart(part)];
      return [otherPart(part)];
  }
}

// A UIMessage tool part (`tool-NAME` / `dynamic-tool`) as an assistant-ui tool-call part.
function toolCall(part: WaitingToolPart, toolName: string): LikePart {
  const input = part.input;
  const call: {
    type: "tool-call";
    toolCallId: string;
    toolName: string;
    args: object;
    argsText: string;
    result?: unknown;
    isError?: boolean;
    isPreliminary?: boolean;
    interrupt?: { type: "human"; payload: unknown };
    approval?: ReturnType<typeof toApproval>;
    artifact?: unknown;
    messages?: ReturnType<typeof nestedMessages>;
    ui?: unknown;
    state: ToolPart["state"];
  } = {
    type: "tool-call",
    toolCallId: part.toolCallId,
    toolName,
    // The store's state of the call, which assistant-ui's fields do not say in full (an
    // approval answered, input still streaming): kept for `makeToolUIs`, which gives tool UIs
    // the part back as the store has it.
    state: part.state,
    // assistant-ui wants an object; a tool whose input is not one (or not there yet) still
    // shows its raw input through `argsText`.
    args: isPlainObject(input) ? input : {},
    argsText: input === undefined ? "" : JSON.stringify(input),
  };
  switch (part.state) {
    case "output-available":
      call.result = part.output;
      call.isError = false;
      // AI SDK marks streamed interim tool output `preliminary`.
      if (part.preliminary === true) call.isPreliminary = true;
      break;
    case "output-error":
      // `{ error: errorText }` rather than the bare text: the shape assistant-ui's AI SDK
      // converter produces, which tool renderers already handle.
      call.isError = true;
      call.result = { error: part.errorText };
      break;
    case "output-denied":
      call.isError = true;
      call.result = { error: part.approval?.reason || "Tool approval denied" };
      break;
    case "input-available":
      // An ask-user call waiting (pi mode): assistant-ui's human-input request. A tool UI
      // answers it with `resume(answer)` (or `addResult(answer)`).
      if (isPlainObject(part.interrupt)) call.interrupt = { type: "human", payload: part.interrupt };
      break;
    default:
      // input-streaming / approval-*: no result yet; the approval below says what waits.
      break;
  }
  if (part.approval && typeof part.approval.id === "string") call.approval = toApproval(part.approval);
  // Structured tool details are UI-only data next to the result: assistant-ui's `artifact`.
  // `part.ui.details` first (the result's details, or the latest `data-tool-ui` progress while
  // the tool runs), else the part's own `details` (pi).
  const details = toolDetailsOf(part);
  if (details !== undefined) {
    call.artifact = details;
    // A nested agent run (the reference server's `pi.subagent`: `details.transcript`) as the
    // call's nested messages, which `MessagePartPrimitive.Messages` renders with the thread's
    // own message components.
    const nested = nestedMessages(part.toolCallId, details);
    if (nested) call.messages = nested;
  }
  // The whole tool UI metadata (rendererId, displayGroup, icon, details) rides along as `ui`:
  // assistant-ui keeps unknown tool-call fields (its ThreadMessageLike conversion spreads the
  // part) and passes them to tool UI components as props; `makeToolUIs` reads it from there.
  if (part.ui !== undefined && part.ui !== null) call.ui = part.ui;
  return likePart(call);
}

// The store's approval (`{id, approved?, reason?, requestReason?, isAutomatic?}`) in
// assistant-ui's shape: `requestReason` (why the tool asks) is its `prompt`.
function toApproval(approval: NonNullable<ToolPart["approval"]>) {
  const out: { id: string; prompt?: string; approved?: boolean; reason?: string; isAutomatic?: true } = { id: approval.id };
  if (typeof approval.requestReason === "string" && approval.requestReason !== "") out.prompt = approval.requestReason;
  if (typeof approval.approved === "boolean") out.approved = approval.approved;
  if (typeof approval.reason === "string") out.reason = approval.reason;
  if (approval.isAutomatic === true) out.isAutomatic = true;
  return out;
}

function dataPart(part: DataUIPart): LikePart {
  const data: { type: "data"; name: string; data: unknown; id?: string } = { type: "data", name: part.type.slice(5), data: part.data };
  if (typeof part.id === "string") data.id = part.id;
  return likePart(data);
}

function toAttachment(part: FileUIPart, index: number): Attachments[number] {
  const mediaType = part.mediaType || "application/octet-stream";
  const isImage = mediaType.startsWith("image/");
  return {
    id: String(index),
    type: isImage ? "image" : "file",
    name: part.filename ?? "file",
    contentType: mediaType,
    status: { type: "complete" },
    content: [
      isImage
        ? withFilename({ type: "image", image: part.url }, part.filename)
        : withFilename({ type: "file", data: part.url, mimeType: mediaType }, part.filename),
    ],
  };
}

// A part kind with no assistant-ui counterpart of its own: a data part named after its type,
// carrying the part (so a `components.data.by_name[type]` renderer can show it).
function otherPart(part: AnyPart): LikePart {
  const { type, ...data } = part;
  return likePart({ type: "data", name: String(type), data });
}

function partStatus(state: unknown): { type: "running" } | { type: "complete" } | undefined {
  if (state === "streaming") return { type: "running" };
  if (state === "done") return { type: "complete" };
  return undefined;
}

