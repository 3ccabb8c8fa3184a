// Attachments: files reach the store as `data:` URL attachments.
import { CompositeAttachmentAdapter, SimpleImageAttachmentAdapter } from "@assistant-ui/react";
import type { AttachmentAdapter } from "@assistant-ui/react";

type PendingAttachment = Awaited<ReturnType<AttachmentAdapter["add"]>> extends infer A
  ? A extends AsyncGenerator<infer Y> ? Y : A
  : never;
type CompleteAttachment = Awaited<ReturnType<AttachmentAdapter["send"]>>;

// ----- attachments ------------------------------------------------------------------------------

/** What the default attachment adapter takes besides images: text-like files and PDFs. */
export const DEFAULT_FILE_TYPES: string =
  "text/plain,text/markdown,text/csv,text/html,text/xml,application/json,application/pdf";

/**
 * An assistant-ui attachment adapter whose files reach the store as `data:` URL attachments
 * (`FileAttachment {mediaType, filename, url}`), as `useChat`'s `sendMessage({files})` sends
 * them: images through assistant-ui's own `SimpleImageAttachmentAdapter` (an image part with a
 * data URL), the `fileTypes` (default `DEFAULT_FILE_TYPES`) as file parts with a data URL.
 * `useChatStoreRuntime` uses one when the host gives no `adapters.attachments`.
 */
export function createAttachmentAdapter(options: { fileTypes?: string } = {}): AttachmentAdapter {
  return new CompositeAttachmentAdapter([
    new SimpleImageAttachmentAdapter(),
    new DataUrlFileAttachmentAdapter(options.fileTypes ?? DEFAULT_FILE_TYPES),
  ]);
}

let defaultAttachments: AttachmentAdapter | null = null;
export function defaultAttachmentAdapter(): AttachmentAdapter {
  defaultAttachments ??= createAttachmentAdapter();
  return defaultAttachments;
}

// Not assistant-ui's SimpleTextAttachmentAdapter: that one inlines a text file into the message
// text (`<attachment name=…>`), so the server would get no file and the user's bubble would show
// the file's contents instead of an attachment chip.
class DataUrlFileAttachmentAdapter implements AttachmentAdapter {
  accept: string;

  constructor(accept: string) {
    this.accept = accept;
  }

  async add({ file }: { file: File }): Promise<PendingAttachment> {
    return {
      id: attachmentId(),
      type: "document",
      name: file.name,
      contentType: file.type,
      file,
      status: { type: "requires-action", reason: "composer-send" },
    };
  }

  async send(attachment: PendingAttachment, options?: { signal?: AbortSignal }): Promise<CompleteAttachment> {
    const mimeType = attachment.contentType || attachment.file.type || "application/octet-stream";
    return {
      ...attachment,
      status: { type: "complete" },
      content: [
        { type: "file", data: await fileDataUrl(attachment.file, mimeType, options?.signal), mimeType, filename: attachment.name },
      ],
    };
  }

  async remove() {}
}

let attachmentCounter = 0;
function attachmentId() {
  attachmentCounter += 1;
  return `acs-attachment-${Date.now().toString(36)}-${attachmentCounter}`;
}

async function fileDataUrl(file: File, mimeType: string, signal: AbortSignal | undefined): Promise<string> {
  if (signal?.aborted) throw signal.reason ?? new Error("The attachment read was aborted");
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (signal?.aborted) throw signal.reason ?? new Error("The attachment read was aborted");
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:${mimeType};base64,${btoa(binary)}`;
}

