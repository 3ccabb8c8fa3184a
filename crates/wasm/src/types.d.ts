// The package's hand-kept declarations: the JS-side classes, options and functions, and the
// snapshot's shapes the wasm shell assembles. The types of the core's serialised Rust types
// are generated next to it (generated.d.ts); both land in the same .d.ts.
/** A JS `Error` with a stable code and what the server said, verbatim. */
export interface ChatStoreError extends Error {
  readonly name: 'ChatStoreError';
  readonly code: ChatErrorCode;
  /** HTTP status, when the error came from an answer. */
  readonly status?: number;
  /** The server's own `error.code`. */
  readonly serverCode?: string;
  readonly field?: string;
}

/** `snapshot.composer`: the store's draft and what the composer may do with it. */
export interface ComposerSnapshot extends ComposerState {
  draft: string;
  files: readonly FileAttachment[];
}

/** What `getSnapshot()` returns: frozen, and the same object until something changed. */
export interface ChatSnapshot {
  readonly sessionId: string;
  /**
   * The tool calls of the open session that wait for the user (SPEC §13): answer an approval
   * with `addToolApprovalResponse({id: approvalId, approved, reason?})`, a question with
   * `addToolOutput({toolCallId, output})`.
   */
  readonly pending: Readonly<{
    approvals: readonly PendingApproval[];
    questions: readonly PendingQuestion[];
    /** Answers given before their call could take them (SPEC §13, held answers). */
    held: readonly HeldAnswer[];
  }>;
  /** The session list (SPEC §11): `loadSessions()` loads its first page. */
  readonly sessions: Readonly<SessionsSnapshot>;
  readonly status: ChatStatus;
  /**
   * A turn is on its way (`submitted` or `streaming`): `stop()` applies, and a send becomes a
   * follow-up or is refused (`composer.reason`). Computed by the store, so a UI compares no
   * status strings.
   */
  readonly busy: boolean;
  readonly error: ChatStoreError | null;
  /**
   * What the store could not show of this session, newest last (at most 32): an event over
   * `maxEventBytes` (a lost tool result also fails its tool part), an event that is not a
   * chunk, a chunk of an unknown type or naming nothing, a history message it could not read.
   */
  readonly losses: readonly ChatStoreLoss[];
  readonly capabilities: Readonly<Capabilities>;
  readonly capabilitiesLoaded: boolean;
  /** The session runtime's tools (empty when the server has no catalog). */
  readonly tools: readonly ToolCatalogEntry[];
  readonly messages: readonly UIMessage[];
  readonly queued: readonly QueuedItem[];
  readonly composer: Readonly<ComposerSnapshot>;
  readonly turnId: string | null;
  readonly hydrated: boolean;
  readonly canRegenerate: boolean;
  /**
   * `retry()` can run: the last turn failed (a stop is not a failure). Retry asks the turn again
   * where the client owns the history (AI SDK mode), else attaches to what the server still has.
   */
  readonly canRetry: boolean;
  /** A user message can be edited now (`send(text, files, {messageId})`): AI SDK mode, idle. */
  readonly canEdit: boolean;
  /**
   * A turn was sent and no assistant message shows its answer yet: where a UI shows a waiting
   * indicator (`useChat`'s `submitted` before the first chunk).
   */
  readonly awaitingAnswer: boolean;
  /**
   * The last turn ended by a stop, not a failure: the user's `stop()`, or its request aborted
   * (`error.code` `Aborted`, `status` still `error`). False while a turn runs. A UI shows the
   * turn as cut short (cancelled) rather than failed.
   */
  readonly stopped: boolean;
  /**
   * AI SDK mode's message tree: every message the session showed (edits and regenerations
   * kept as siblings), a parent before its children, siblings in the order made; `messages`
   * is its path from the root to `headId`. The shown items hold `messages`' own objects.
   * `null` where the mode keeps no branches (pi, pi-native, a server that owns history).
   */
  readonly branches: Readonly<ChatBranches> | null;
}

/** `snapshot.branches`: assistant-ui's message repository shape, with `UIMessage`s. */
export interface ChatBranches {
  /** The last message shown, which the next send continues (`null`: none). */
  readonly headId: string | null;
  readonly items: readonly Readonly<{ parentId: string | null; message: UIMessage }>[];
}

export interface ChatRoutes {
  capabilities?: string;
  /** `GET` the tool catalog; `''`: the server has none, never asked. */
  catalog?: string;
  chat?: string;
  followup?: string;
  messages?: string;
  stream?: string;
  /** `DELETE` the running turn to stop it; `''`: aborting the stream is all (a plain AI SDK server). */
  turn?: string;
  /** pi mode: `POST` an approval's answer (default `/api/v1/agent/chat/{sessionId}/approval`). */
  approval?: string;
  /** pi mode: `POST` a waiting call's answer (default `/api/v1/agent/chat/{sessionId}/tool-output`). */
  toolOutput?: string;
  /** `GET` the session list (default `/api/v1/agent/sessions`). */
  sessions?: string;
  /** `PATCH` / `DELETE` one session (default `/api/v1/agent/sessions/{sessionId}`). */
  session?: string;
}

/** A tool call waiting for the user's approval (`snapshot.pending.approvals`, SPEC §13). */
export interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input?: unknown;
  messageId: string;
  /** Why the last answer did not get through (the call waits again); answering again retries. */
  error?: ChatStoreErrorShape;
}

/** A tool call waiting for the user's answer to a question (`snapshot.pending.questions`). */
export interface PendingQuestion {
  toolCallId: string;
  toolName: string;
  question?: string;
  options?: readonly string[];
  input?: unknown;
  messageId: string;
  error?: ChatStoreErrorShape;
}

/**
 * An answer given before its call could take it (`snapshot.pending.held`): a pi call the server
 * has not asked about yet, an AI SDK call whose input still streams. `addToolOutput` took it
 * (returned true); it is given exactly once when the call can take it. Let go unsent when the
 * call ends, or the turn does, first: `error` (code `NotAsked`) says so until the next turn.
 */
export interface HeldAnswer {
  toolCallId: string;
  toolName: string;
  messageId: string;
  output?: unknown;
  errorText?: string;
  error?: ChatStoreErrorShape;
}

/** `snapshot.sessions`: the session list. */
export interface SessionsSnapshot {
  /** False once the server answered the list route with 404 (it has no list): hide it. */
  available: boolean;
  /** A page of the unarchived sessions came (`loadSessions()` asks for one). */
  loaded: boolean;
  /** A page request is on its way (one at a time). */
  loading: boolean;
  /** `loadMoreSessions()` has a next page to ask for. */
  hasMore: boolean;
  /** A page of the archived sessions came (`loadSessions({archived: true})`). */
  archivedLoaded: boolean;
  archivedHasMore: boolean;
  /**
   * The server has an archive: `archiveSession` and `loadSessions({archived: true})` can do
   * something (false over pi-native, whose protocol has none): hide the archive actions.
   */
  archivable: boolean;
  /**
   * Sessions opened here that the server does not list yet (`local`), then the unarchived
   * sessions, then the archived ones loaded so far, each most recently updated first.
   */
  items: readonly SessionItem[];
  /** The last failed list request (a page, a rename, an archive, a delete), until one succeeds. */
  error: ChatStoreError | null;
}

export interface ChatStoreLimits {
  /** One SSE event larger than this is skipped with a Protocol error (default 16 MiB). */
  maxEventBytes?: number;
  /** A JSON answer larger than this is refused (default 64 MiB). */
  maxBodyBytes?: number;
  /** A hydrated history keeps at most this many newest messages (default 100,000). */
  maxMessages?: number;
  /**
   * A streamed message longer than this (UTF-16 units of its texts, tool inputs and outputs,
   * data) stops the turn with a `LimitExceeded` error, what it showed kept (default 32 Mi,
   * at most 64 Mi: JS strings end at 512 Mi).
   */
  maxMessageChars?: number;
  /** The same for the whole history while a turn streams (default 128 Mi, at most 256 Mi). */
  maxHistoryChars?: number;
  /**
   * AI SDK mode: the history's PUT keeps a file's `data:` URL up to this long, so it still
   * shows after a reload; a longer one is stored without its `url` (default 1 Mi).
   */
  maxStoredDataUrlChars?: number;
}

/** A data chunk as the host receives it in `onData`. */
export interface DataEvent { type: 'data'; name: string; id?: string; data: unknown; transient: boolean }
/** Diagnostics and turn ends, for logging (`onEvent`). */
export type StoreEvent =
  | { type: 'diagnostic'; message: string }
  | {
      type: 'finish';
      finishReason?: string;
      /** The assistant message the turn answered into, if any. */
      messageId?: string;
      isAbort: boolean;
      isDisconnect: boolean;
      isError: boolean;
    };

/** What `onFinish` receives after every turn, a stop or a failure included (`useChat`'s). */
export interface FinishEvent {
  /** The turn's assistant message (`{id: '', role: 'assistant', parts: []}` when none answered). */
  message: UIMessage;
  messages: readonly UIMessage[];
  /** The user stopped it. */
  isAbort: boolean;
  /** Its stream was lost and could not be resumed. */
  isDisconnect: boolean;
  /** It failed (an `error` chunk, a refused or failed request). */
  isError: boolean;
  finishReason?: string;
}

/** A tool call for the client to run (`onToolCall`); answer it with `addToolOutput`. */
export interface ToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  dynamic?: boolean;
}

/** What a send adds to its request (`useChat`'s `ChatRequestOptions`). */
export interface RequestOptions {
  /** Keys merged into the JSON body after the store's own (which they never replace). */
  body?: Record<string, unknown>;
  /** Headers for this request, over the store's. */
  headers?: Record<string, string> | Headers;
  /** Request metadata for `prepareSendMessagesRequest` (never sent by the store). */
  metadata?: unknown;
}

/** `send`'s options: a request's, and the new user message's `id` and `messageMetadata`. */
export interface SendOptions extends RequestOptions {
  /** Edit this user message instead (AI SDK mode): it is replaced and what follows dropped. */
  messageId?: string;
  /** The new user message's id (the store makes one otherwise, or when the id is taken). */
  id?: string;
  /** The user message's `metadata`. */
  messageMetadata?: unknown;
  /** The answer's message id when its stream names none (a host's `generateId`). */
  responseId?: string;
}

/** What `prepareSendMessagesRequest` sees of a chat POST (the `ai` package's hook). */
export interface PrepareSendMessagesRequestOptions {
  /** The URL the store would post to. */
  api: string;
  /** The chat (session) id. */
  id: string;
  messages: readonly UIMessage[];
  /**
   * As the `ai` package gives it: the `body` option's keys and the send's (the send's win),
   * not the store's own (`id`, `trigger`, …, which are fields here). A returned `body` is sent
   * as it is.
   */
  body: Record<string, unknown>;
  headers: Record<string, string>;
  credentials?: RequestCredentials;
  requestMetadata?: unknown;
  trigger: 'submit-message' | 'regenerate-message';
  messageId?: string;
}

/** What it may replace; what it leaves out stays as the store made it. */
export interface PreparedSendMessagesRequest {
  api?: string;
  body?: unknown;
  headers?: Record<string, string> | Headers;
  credentials?: RequestCredentials;
}

export type HeadersOption = Record<string, string> | Headers | (() => Record<string, string> | Headers | Promise<Record<string, string> | Headers>);

export interface ChatStoreOptions {
  /** Prefix of every route (default: relative to the page). */
  baseUrl?: string;
  sessionId: string;
  /** A static override: no capabilities request is made. */
  capabilities?: Partial<Capabilities>;
  /** Per-route path templates; `{sessionId}` is replaced. */
  routes?: ChatRoutes;
  /** Sent with every request; a function is called per request. */
  headers?: HeadersOption;
  credentials?: 'omit' | 'same-origin' | 'include';
  /** A custom fetch (default: the global one). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * At most one notification per this many ms (default: one per microtask), as `useChat`'s
   * `experimental_throttle`: `getSnapshot()` gives the snapshot of the last notification; a
   * turn's start (`submitted`) and end (`ready`, `error`) are told at once.
   */
  throttleMs?: number;
  onData?: (chunk: DataEvent) => void;
  onError?: (error: ChatStoreError) => void;
  onEvent?: (event: StoreEvent) => void;
  /** After every turn, a stop or a failure included (`useChat`'s `onFinish`). */
  onFinish?: (event: FinishEvent) => void;
  /** A tool call for the client to run (AI SDK mode): answer with `addToolOutput`. */
  onToolCall?: (event: { toolCall: ToolCall }) => void;
  /** Sees each chat POST and may replace its `api`, `body`, `headers`, `credentials`. */
  prepareSendMessagesRequest?: (
    options: PrepareSendMessagesRequestOptions,
  ) => PreparedSendMessagesRequest | undefined | PromiseLike<PreparedSendMessagesRequest | undefined>;
  /** Keys merged into every chat and follow-up POST body after the store's own. */
  body?: Record<string, unknown>;
  /**
   * AI SDK mode: PUT the history after each turn (default true). Off for a server that keeps
   * none, as a plain `useChat` route handler.
   */
  persist?: boolean;
  /**
   * Requests and statuses as the `ai` package's `Chat` makes them: a plain submit names no
   * `messageId`, a regenerate answers in a new message, a resume is `submitted` until its
   * first chunk that writes, and a refused resume is an error. `useChat` sets it for a plain
   * AI SDK route handler.
   */
  aiSdkRequests?: boolean;
  /**
   * The server's protocol: `sse` (the default: SPEC §2–§13's routes and chunks) or
   * `pi-native` (SPEC §14: `GET …/state`, the NDJSON events stream, `POST …/prompt`,
   * `…/followup`, `…/stop`, `…/queue/clear` under `/api/v1/agents/{agentType}/sessions/{id}`).
   */
  protocol?: 'sse' | 'pi-native';
  /** The pi-native agent type (default `pi`). */
  agentType?: string;
  /**
   * The open session changed (`switchSession`, `newSession`, deleting the open one): keep the
   * id in the page's URL here. Not called for the session the store was created with. With
   * `{renamedFrom}` it is the same session under the id the server gave it (pi-native creates
   * the sessions `newSession` makes with their first message): replace the URL's entry rather
   * than add one.
   */
  onSessionChange?: (sessionId: string, change?: { renamedFrom: string }) => void;
  /** Sessions per page of the session list (default 20). */
  sessionPageSize?: number;
  limits?: ChatStoreLimits;
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  followUpTimeoutMs?: number;
  resumeAttempts?: number;
  resumeDelayMs?: number;
  /**
   * A turn's stream silent this long (no byte at all) counts as dropped and is resumed
   * (default 300,000; 0: never). It holds for streams that send no heartbeats; a proxy that
   * keeps the socket open after the server died (Vite's dev proxy does) makes it the only
   * bound.
   */
  streamIdleTimeoutMs?: number;
  /**
   * A stream that beats (pi-native heartbeats; SSE `:` comments, at the capabilities'
   * `heartbeatMs` or as learned from two beats) counts as dropped once nothing came for its
   * interval plus this long (default 5,000; 0: beats are not watched). The usual recovery
   * runs first (a resume, a reconnect); when it fails, the turn ends with a `StreamStalled`
   * error.
   */
  heartbeatGraceMs?: number;
  /** Load the canonical history when a session opens (default true). */
  hydrate?: boolean;
  /**
   * Opening a session attaches to a turn the server is still running (a reload, a second tab):
   * it shows as streaming and goes on (default true). Off: only `resumeStream()` does.
   */
  attach?: boolean;
  /**
   * Keep each session's last follow-up `clientSeq` in `localStorage` (where the page has it),
   * so a clock behind what it was before a reload starts above what the server took
   * (default true).
   */
  persistSeq?: boolean;
  /**
   * AI SDK mode: continue the conversation on its own when the last assistant message is
   * complete: the `ai` package's built-in predicates by name, or your own (a promise is
   * awaited; never asked after a failed turn).
   */
  sendAutomaticallyWhen?:
    | 'lastAssistantMessageIsCompleteWithToolCalls'
    | 'lastAssistantMessageIsCompleteWithApprovalResponses'
    | ((options: { messages: readonly UIMessage[] }) => boolean | PromiseLike<boolean>);
}

/**
 * The chat store. `new ChatStore(options)` does no IO: it starts (asks for capabilities,
 * history or state, and arms its timers, whose timeouts count from then) when first subscribed
 * to, asked to act (any method but `getSnapshot`, `flush` and `dispose`), or `start()`ed. So it
 * can be made during a render, as `@ai-sdk/react`'s `Chat` is. Before the start `getSnapshot()`
 * gives the initial state (status `ready`, no messages); a store disposed before it started
 * never sends anything.
 */
export class ChatStore {
  constructor(options: ChatStoreOptions);
  /** Bound: can be passed around detached (`useSyncExternalStore(store.subscribe, …)`). The first subscribe starts the store. */
  readonly subscribe: (listener: () => void) => () => void;
  /** Bound: the same frozen snapshot object until something changed. Never starts the store. */
  readonly getSnapshot: () => ChatSnapshot;
  /** Starts the store's IO now (what the first subscribe or action does); later calls do nothing. */
  start(): void;
  setDraft(text: string): void;
  setDraftFiles(files: readonly FileAttachment[]): void;
  submit(): SubmitResult;
  /** With `{messageId}` (AI SDK mode) it edits that user message: replaced, what follows dropped. */
  send(text: string, files?: readonly FileAttachment[], options?: SendOptions): SubmitResult;
  /** The result of a tool the client runs. */
  /** `options`: the body keys, headers and metadata of the automatic continuation it may send. */
  addToolOutput(args: ({ toolCallId: string; output: unknown } | { toolCallId: string; errorText: string }) & { options?: RequestOptions }): boolean;
  /** The user's answer to a tool approval request. */
  addToolApprovalResponse(args: { id: string; approved: boolean; reason?: string; options?: RequestOptions }): boolean;
  /** Continues from the last assistant message (what `sendAutomaticallyWhen` does). */
  continueTurn(options?: RequestOptions): boolean;
  /**
   * `useChat`'s `setMessages`: replaces the messages while no turn runs (throws a
   * `Validation` error while one runs, or for a message it cannot read; nothing changes).
   */
  setMessages(messages: readonly UIMessage[]): void;
  stop(): void;
  /** As `useChat`'s `clearError`: status `error` becomes `ready` and `error` goes. */
  clearError(): void;
  /**
   * As `useChat`'s `resumeStream`: attaches to a turn the server runs (nothing if none runs).
   * False when a turn is already followed.
   */
  resumeStream(): boolean;
  /**
   * Retry after a failed turn (`snapshot.canRetry`; assistant-ui's Reload on the error): AI SDK
   * mode asks the turn again (`regenerate()`); over the SSE pi routes a lost connection
   * attaches to a turn the server may still run (`resumeStream()`), an answer the server ended
   * in its error sends the message again; over
   * pi-native the error clears, the link reconnects by itself, and a prompt given up
   * unanswered is sent again under its nonce. False when nothing was done.
   */
  retry(): boolean;
  switchSession(sessionId: string): void;
  /** The session list's first page (again). False when the server has no list. */
  loadSessions(options?: { archived?: boolean }): boolean;
  /** The next page; false when there is none or a page request is on its way. */
  loadMoreSessions(options?: { archived?: boolean }): boolean;
  /** Switches to a fresh session (listed locally until its first message) and returns its id. */
  newSession(): string | undefined;
  /** Renamed at once; a refusal puts the old title back (`sessions.error`). */
  renameSession(id: string, title: string): boolean;
  /** Archived (or not) at once; a refusal moves it back. */
  archiveSession(id: string, archived?: boolean): boolean;
  /** Gone at once (back if refused); deleting the open session switches to a new one first. */
  deleteSession(id: string): boolean;
  removeQueued(id: string): boolean;
  retryQueued(id: string): boolean;
  /**
   * "Run Now" on a queued follow-up, as its `runNow` says: `retried` (a failed, stalled or
   * unsure one, as `retryQueued`), `interrupting` (pi-native: the running answer stops and the
   * server runs it next), `after-current` (it runs after the current answer; nothing sooner is
   * possible), `not-now` (nothing applies now: see the item), `not-found`.
   */
  runQueuedNow(id: string): RunNowOutcome;
  regenerate(messageId?: string | ({ messageId?: string; responseId?: string } & RequestOptions)): boolean;
  /**
   * Edits a user message as a new branch (AI SDK mode): a new user message beside `sourceId`
   * under the same parent, the old one kept with its answers in `branches`; the chat POST
   * carries the new path. `options.messageId` names the new message.
   */
  editMessage(sourceId: string, text: string, files?: readonly FileAttachment[], options?: SendOptions): SubmitResult;
  /**
   * Shows the branch of `messageId`: `messages` becomes the path through it to its deepest
   * descendant along the child last shown, and the next send continues it (stored with the
   * history where the server keeps it). `null` when switched, else why nothing changed.
   */
  switchBranch(messageId: string): BranchRefusal | null;
  /** Tells the listeners now of what changed, instead of on the next microtask (or at the end of `throttleMs`). */
  flush(): void;
  dispose(): void;
  free(): void;
}

export interface UiReplayResult {
  message: UIMessage;
  finishReason?: string;
  error?: { message: string };
}
/**
 * Reduces AI SDK UI message chunks into one assistant message, as the `ai` package's stream
 * processor does for `useChat`: a `start` with another `messageId` renames the message.
 * `resetOnMessageIdChange: true` starts it over instead, as `readUIMessageStream` does.
 */
export function replayUiMessageStream(
  chunks: readonly unknown[],
  options?: { messageId?: string; lastMessage?: UIMessage; resetOnMessageIdChange?: boolean },
): UiReplayResult;
/** Reduces a chunk list (both families) in pi mode. */
export function replayPiStream(chunks: readonly unknown[]): { messages: UIMessage[]; diagnostics: string[] };
/**
 * Reduces pi-native frames (SPEC §14: events, bare or in their `{ref, seq, event}` envelope,
 * or NDJSON lines as strings) as the store does, after a `GET …/state` answer when given:
 * stale events are ignored, a seq gap is a diagnostic (the store would re-read `/state`).
 */
export function replayPiNativeEvents(
  frames: readonly unknown[],
  options?: { state?: unknown },
): {
  messages: UIMessage[];
  queued: { id: string; text: string; clientNonce?: string; clientSeq?: number }[];
  status: 'ready' | 'streaming' | 'error';
  seq: number;
  error?: { message: string };
  diagnostics: string[];
};

/** An incremental WHATWG SSE decoder. */
export class SseDecoder {
  constructor(maxEventBytes?: number);
  push(bytes: Uint8Array): string[];
  finish(): string[];
  readonly skipped: number;
  free(): void;
}
