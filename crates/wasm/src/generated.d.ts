// Generated from the Rust types by `UPDATE_TS=1 cargo test --features ts --test ts_generated`
// (src/ts.rs lists them); do not edit. crates/wasm/src/types.d.ts declares the rest.

/**
 * The chat's status, as `useChat` names it.
 */
export type ChatStatus = "ready" | "submitted" | "streaming" | "error";

/**
 * The stable kinds of error. The names are part of the JS API (`error.code`).
 */
export type ChatErrorCode = "FollowUpUnsupported" | "FollowUpOutOfOrder" | "SessionNotReady" | "TurnAlreadyActive" | "Validation" | "Network" | "Server" | "Protocol" | "Aborted" | "LimitExceeded" | "StreamStalled" | "NotAsked";

/**
 * An error with its stable kind and what the server (or the network) said, verbatim.
 */
export type ChatStoreErrorShape = { 
/**
 * The stable kind JS switches on.
 */
kind: ChatErrorCode, 
/**
 * HTTP status, when the error came from an answer.
 */
status?: number, 
/**
 * The server's own `error.code`, unchanged.
 */
serverCode?: string, 
/**
 * The server's `error.message`, or a description for errors without a body.
 */
message: string, 
/**
 * The server's `error.field`: the request field a validation error names.
 */
field?: string, };

/**
 * The capabilities of the runtime behind one session.
 *
 * Defaults are `{nativeFollowUp: false, aiSdkOwnsHistory: true}`: a plain AI SDK server, on
 * which a busy send is blocked rather than queued.
 */
export type Capabilities = { 
/**
 * The server accepts `POST …/followup` while a turn streams and runs them in order.
 */
nativeFollowUp: boolean, 
/**
 * The AI SDK reducer owns history (and the store PUTs it); `false` means the server's pi
 * projection owns it.
 */
aiSdkOwnsHistory: boolean, 
/**
 * A follow-up may carry attachments. Not in the reference servers' answer; defaults to
 * `false`, which makes a busy send with files refuse with `filesWhileBusy`.
 */
followUpAttachments: boolean, 
/**
 * A message needs text: files alone are refused as `empty` (pi-native's prompt requires
 * its `content`). Not in the reference servers' answer; defaults to `false`.
 */
textRequired: boolean, };

/**
 * A file the user attaches to a message (`attachments` of the chat and follow-up POSTs, and
 * the `file` part it becomes).
 */
export type FileAttachment = { 
/**
 * `mediaType`: the file's MIME type.
 */
mediaType: string, 
/**
 * `filename`: the file's name, if known.
 */
filename?: string, 
/**
 * `url`: where the file is, often a `data:` URL.
 */
url: string, 
/**
 * `providerReference`: the file's id at each provider it was uploaded to.
 */
providerReference?: Record<string, string>, 
/**
 * `providerMetadata`: the part's provider-specific data.
 */
providerMetadata?: ProviderMetadata, };

export type ProviderMetadata = Record<string, Record<string, unknown>>;

export interface TextUIPart { type: 'text'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata; citations?: unknown[] }
export interface ReasoningUIPart { type: 'reasoning'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata; id?: string }
export type ToolState =
  | 'input-streaming' | 'input-available' | 'approval-requested' | 'approval-responded'
  | 'output-available' | 'output-error' | 'output-denied';
/**
 * A tool part's resolved UI metadata, each field from the first source that has it: the
 * result's `details` (`details.uiKind` → `rendererId`), a `data-tool-ui` chunk for the call,
 * the catalog entry's `ui`. Never parsed from text.
 */
export interface ToolUi extends ToolUiHints { details?: unknown }
interface ToolFields {
  toolCallId: string;
  /** Always present on exported tool parts (`{}` when nothing is known). */
  ui?: ToolUi;
  state: ToolState;
  title?: string;
  providerExecuted?: boolean;
  input?: unknown;
  rawInput?: unknown;
  output?: unknown;
  errorText?: string;
  /** Structured tool-result details (never parsed from text). */
  details?: unknown;
  /**
   * pi tools: the result's content as the model was given it (`[{type: "text", text}, …]`),
   * beside an `output` that shows it as the tool's output.
   */
  resultContent?: unknown;
  preliminary?: boolean;
  callProviderMetadata?: ProviderMetadata;
  resultProviderMetadata?: ProviderMetadata;
  toolMetadata?: Record<string, unknown>;
  inputEncoding?: 'json' | 'text';
  approval?: {
    id: string;
    approved?: boolean;
    reason?: string;
    descriptor?: unknown;
    inputSchemaInput?: unknown;
    requestReason?: string;
    isAutomatic?: boolean;
    signature?: string;
  };
}
export interface ToolUIPart extends ToolFields { type: `tool-${string}` }
export interface DynamicToolUIPart extends ToolFields { type: 'dynamic-tool'; toolName: string }
/** A data part is the whole chunk: keys other than these (e.g. `transient: false`) are kept. */
export interface DataUIPart { type: `data-${string}`; id?: string; data: unknown; [key: string]: unknown }
export interface FileUIPart { type: 'file'; mediaType: string; filename?: string; url: string; providerReference?: Record<string, string>; providerMetadata?: ProviderMetadata }
export interface SourceUrlUIPart { type: 'source-url'; sourceId: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
export interface SourceDocumentUIPart { type: 'source-document'; sourceId: string; mediaType: string; title: string; filename?: string; providerMetadata?: ProviderMetadata }
export interface StepStartUIPart { type: 'step-start' }
export interface ReasoningFileUIPart { type: 'reasoning-file'; mediaType: string; url: string; providerMetadata?: ProviderMetadata }
/** Provider content the AI SDK does not model (`kind` is `provider.name`). */
export interface CustomUIPart { type: 'custom'; kind: string; providerMetadata?: ProviderMetadata }
/** A user message added to the run by steering. */
export interface SteeringMessageUIPart { type: 'steering-message'; id: string; parts: Array<TextUIPart | FileUIPart> }
export type UIMessagePart =
  | TextUIPart | ReasoningUIPart | ToolUIPart | DynamicToolUIPart | DataUIPart | FileUIPart
  | SourceUrlUIPart | SourceDocumentUIPart | StepStartUIPart | ReasoningFileUIPart | CustomUIPart
  | SteeringMessageUIPart;

/** A message in the AI SDK's `UIMessage` shape. */
export interface UIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  metadata?: unknown;
  parts: UIMessagePart[];
}

/**
 * How the catalog says a tool would like to be shown.
 */
export type ToolUiHints = { 
/**
 * `rendererId`: the renderer the tool's parts ask for.
 */
rendererId?: string, 
/**
 * `displayGroup`: the group the UI may show the tool's parts under.
 */
displayGroup?: string, 
/**
 * `icon`: the name of the tool's icon.
 */
icon?: string, };

/**
 * One tool of the session's runtime (`GET …/catalog`).
 */
export type ToolCatalogEntry = { 
/**
 * `name`: the tool's name, as in its parts' `tool-<name>`.
 */
name: string, 
/**
 * `description`: what the tool does, in words for people.
 */
description?: string, 
/**
 * `inputSchema`: the JSON Schema of the tool's input.
 */
inputSchema?: unknown, 
/**
 * `ui`: how the tool would like its parts shown.
 */
ui?: ToolUiHints, };

/**
 * Where a queued follow-up is in its life. Serialized in lowercase for the JS snapshot.
 */
export type QueuedState = "queued" | "posting" | "accepted" | "failed" | "stalled" | "unsure";

/**
 * What "Run Now" (`runQueuedNow`) does for an item, decided by the store from the item, the
 * turn and the transport, and shown on the item (`runNow`) so a UI restates no rule.
 */
export type RunNow = "retry" | "interrupt" | "after-current" | "none";

/**
 * The answer of `runQueuedNow(id)`: what it did, or why it did nothing.
 */
export type RunNowOutcome = "retried" | "interrupting" | "after-current" | "not-now" | "not-found";

/**
 * A [`FollowUpItem`] as the snapshot shows it (`QueuedItem` in TypeScript): its own fields
 * a UI reads and what the user may do with it.
 */
export type QueuedItem = { id: string, clientNonce: string, clientSeq: number, text: string, files: Array<FileAttachment>, state: QueuedState, attempts: number, error: ChatStoreErrorShape | null, everPosted: boolean, 
/**
 * A row of the server's queue that another client posted (another tab, this page before a
 * reload; pi-native): shown where the server runs it, never retried or removed here.
 */
readOnly: boolean, 
/**
 * The user removed it and the server may still run it: it stays until the server's queue
 * no longer holds it (pi-native). If it cannot be taken back, `removing` turns false again
 * and `error` says why.
 */
removing: boolean, 
/**
 * Retry applies (`retryQueued`): the store's rule, so a UI restates none.
 */
canRetry: boolean, 
/**
 * Remove applies (`removeQueued`).
 */
canRemove: boolean, 
/**
 * What Run Now does for it (`runQueuedNow`).
 */
runNow: RunNow, 
/**
 * Run Now does something now (`retry` or `interrupt`).
 */
canRunNow: boolean, };

/**
 * Why a submit is refused.
 */
export type SendRefusal = "empty" | "busy" | "filesWhileBusy" | "piUnsupported";

/**
 * What the composer may do right now.
 */
export type ComposerState = { 
/**
 * `canSend`: the draft can be sent now (`hasContent && (!busy || nativeFollowUp)`).
 */
canSend: boolean, 
/**
 * `reason`: why a submit of the draft would be refused; `None` when `can_send`.
 */
reason: SendRefusal | null, 
/**
 * `hint`: the words the composer shows, e.g. [`BUSY_HINT`] while busy without follow-ups.
 */
hint: string | null, 
/**
 * A send now queues a follow-up for the running turn (the UI may say "Queue").
 */
followUp: boolean, 
/**
 * Whether a text-only message could be sent now, whatever the store's draft holds: for a
 * composer that keeps its own draft (assistant-ui's).
 */
canSendText: boolean, 
/**
 * The hint for such a composer: shown while a text send is refused.
 */
textHint: string | null, };

/**
 * What [`ComposerMut::submit`] / [`ChatStore::send`] did with the message, and why not when
 * refused.
 */
export type SubmitResult = { 
/**
 * What happened to the message.
 */
kind: "sent" | "queued" | "blocked", 
/**
 * Why it was refused (`empty`, `busy`, `filesWhileBusy`); only when `Blocked`.
 */
reason?: SendRefusal, 
/**
 * The words for a refusal (`Refusal::hint`), so a UI that shows one restates no policy.
 */
hint?: string, };

/**
 * One session as the list shows it (`snapshot.sessions.items`).
 */
export type SessionItem = { 
/**
 * The session's id (what `switchSession` takes).
 */
id: string, 
/**
 * The server's title, else the first line of the session's first user message when the
 * store holds its history; absent when neither is known.
 */
title?: string, 
/**
 * As the server gave it (an ISO string or a number), when it did.
 */
createdAt?: string | number, 
/**
 * As the server gave it; the list is ordered by it, most recent first.
 */
updatedAt?: string | number, 
/**
 * A turn runs in it (the open session's own status, else what the server said).
 */
running: boolean, 
/**
 * Archived (listed by `loadSessions({archived: true})`).
 */
archived: boolean, 
/**
 * Not on the server's list (yet): a new session before its first message reached it.
 */
local: boolean, };

/**
 * One thing the store could not show.
 */
export type ChatStoreLoss = { 
/**
 * What kind of loss.
 */
code: "EventTooLarge" | "BadChunk" | "UnknownChunk" | "NotApplied" | "HistorySkipped", 
/**
 * What was lost, for a person.
 */
message: string, 
/**
 * The message that streamed when it happened (stream losses), or `None`.
 */
messageId: string | null, 
/**
 * The tool call whose result was lost, if it was one.
 */
toolCallId?: string, };

/**
 * Why `ChatStore::switch_branch` (`switchBranch` in JS) changed nothing.
 */
export type BranchRefusal = "no-branches" | "busy" | "unknown-message";
