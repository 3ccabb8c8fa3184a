// The composer's side: what assistant-ui sends (an AppendMessage) as the store's `send`
// arguments (the waiting follow-ups as assistant-ui queue items are ./queue.ts).
import type { AppendMessage } from "@assistant-ui/react";
import type { FileAttachment } from "../agent_chat_store.js";
import { EMPTY, withFilename } from "./parts.js";

// An assistant-ui AppendMessage (composer content + completed attachments) as the store's
// `send(text, files)` arguments. Text parts, including those of text attachments, are joined;
// image and file parts become FileAttachments. Data and audio parts have no field in the chat
// POST (SPEC §2: message text + attachments) and are dropped.
export function fromAppendMessage(message: AppendMessage): { text: string; files: FileAttachment[] } {
  const texts: string[] = [];
  const files: FileAttachment[] = [];
  // Parts are read as they may come (assistant-ui passes what the composer and the attachment
  // adapters made): each field is checked where it is used.
  type Part = {
    type?: unknown;
    text?: string;
    image?: string;
    data?: string;
    mimeType?: string;
    filename?: string;
    sourceType?: string;
  };
  type Attachment = { contentType?: string; name?: string; content?: readonly Part[] };
  const take = (part: Part, attachment?: Attachment) => {
    switch (part.type) {
      case "text":
        if (part.text) texts.push(part.text);
        break;
      case "image":
        files.push(fileAttachment(part.image!, attachment?.contentType, part.filename ?? attachment?.name, "image/png"));
        break;
      case "file":
        files.push(
          part.sourceType === "id"
            ? withFilename({ mediaType: part.mimeType || "application/octet-stream", url: part.data! }, part.filename ?? attachment?.name)
            : fileAttachment(part.data!, part.mimeType || attachment?.contentType, part.filename ?? attachment?.name, "application/octet-stream"),
        );
        break;
      default:
        break;
    }
  };
  for (const part of (message.content ?? EMPTY) as readonly Part[]) take(part);
  for (const attachment of (message.attachments ?? EMPTY) as readonly Attachment[]) {
    for (const part of attachment.content ?? EMPTY) take(part, attachment);
  }
  return { text: texts.join("\n\n"), files };
}

// The store's FileAttachment needs a concrete media type and a URL. assistant-ui parts may carry
// a bare base64 payload and no type; a wildcard type is rejected by AI SDK servers, hence the
// concrete fallbacks.
function fileAttachment(payload: string, declared: string | undefined, filename: string | undefined, fallbackType: string): FileAttachment {
  const fromDataUrl = /^data:([^;,]+)/i.exec(payload)?.[1];
  const mediaType = declared && !declared.includes("*") ? declared : fromDataUrl || fallbackType;
  const url = /^(data:|blob:|https?:)/i.test(payload) ? payload : `data:${mediaType};base64,${payload}`;
  return withFilename({ mediaType, url }, filename);
}

