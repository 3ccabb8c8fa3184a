// `Chat`: a chat with the surface of the `ai` package's `Chat` (`id`, `messages`, `status`,
// `error`, `sendMessage`, `regenerate`, `stop`, …) on a `ChatStore`. `useChat` renders one, and
// several components can share one through `useChat({ chat })`. Everything a turn does (the
// request, the stream, what is busy, what continues by itself) is the store's; this file maps
// the AI SDK's options and calls onto the store's, turns the store's answers into promises, and
// gives a transport object (`DefaultChatTransport`, `TextStreamChatTransport`, a custom one) the
// store's requests to make.
import { ChatStore } from "./agent_chat_store.js";
import type {
  ChatSnapshot,
  ChatStoreError,
  ChatStoreOptions,
  DataEvent,
  FileAttachment,
  FinishEvent,
  PrepareSendMessagesRequestOptions,
  PreparedSendMessagesRequest,
  RequestOptions,
  ToolCall,
  UIMessage as StoreMessage,
  UIMessagePart as StorePart,
} from "./agent_chat_store.js";
import type {
  ChatOptions,
  ChatAddToolApproveResponseFunction,
  ChatRequestOptions,
  ChatSendMessageFunction,
  ChatStatus,
  ChatTransport,
  FileUIPart,
  FlexibleSchema,
  InferUIMessageTools,
  TextUIPart,
  ToolOutputInput,
  UIMessage,
  UIMessageChunk,
  UseChatRenderOptions,
} from "./ai-types.js";

const EMPTY: readonly never[] = Object.freeze([]);
/** Marks this package's chats (an `ai` `Chat` passed to `useChat({chat})` is refused). */
const OURS = Symbol.for("agent-chat-store.Chat");
/** The hook's door into a chat it owns: each render's options. */
export const UPDATE = Symbol("agent-chat-store.Chat.update");
/** The hook's door: a chat the hook made is let go of (disposed once its turn is over). */
export const RELEASE = Symbol("agent-chat-store.Chat.release");

/** Every option a chat is given: the AI SDK's, the store's, and the hook's. */
type Options<M extends UIMessage> = ChatOptions<M> & UseChatRenderOptions & { chat?: unknown; transport?: TransportLike };
/** The latest options, read at call time. */
type Latest<M extends UIMessage> = { current: Options<M> };

/** An AI SDK `Resolvable`: a value, a promise, or a function giving either. */
type Resolvable<T> = T | PromiseLike<T> | (() => T | PromiseLike<T>);
type HeadersLike = Record<string, string> | Headers;

/**
 * A transport as this file reads it: `ChatTransport`'s methods, and the fields the `ai`
 * package's `HttpChatTransport`s keep their options in (read where present).
 */
type TransportLike = Partial<ChatTransport<UIMessage>> & {
  api?: string;
  headers?: Resolvable<HeadersLike | undefined>;
  body?: Resolvable<object | undefined>;
  credentials?: Resolvable<RequestCredentials | undefined>;
  fetch?: typeof globalThis.fetch;
  prepareSendMessagesRequest?: PrepareHook;
};
type PrepareHook = NonNullable<ChatStoreOptions["prepareSendMessagesRequest"]>;
type StoreFetch = NonNullable<ChatStoreOptions["fetch"]>;

/**
 * What the store reads of an answer (its `fetch` result): made here without a `Response`
 * global, handed to the store as one.
 */
interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  body: ReadableStream<Uint8Array> | null;
}

/** What the chat's request hooks need of the chat (`storeOptions`). */
interface ViaTransport {
  prepare: PrepareHook;
  fetch: StoreFetch;
  failed: (text: string) => void;
  settle: () => void;
  guard: (signal: AbortSignal | null | undefined) => Guard;
}

function defaultId(): string {
  const c = globalThis.crypto as Crypto | undefined;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

// `await`s an AI SDK `Resolvable`: a value, a promise, or a function giving either.
async function resolve<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === "function" ? await (value as () => T | PromiseLike<T>)() : await value;
}

function plain(headers: HeadersLike | null | undefined): Record<string, string> {
  if (headers == null) return {};
  if (typeof headers.entries === "function" && typeof headers.get === "function") {
    return Object.fromEntries((headers as Headers).entries());
  }
  return headers as Record<string, string>;
}

/** Whether `options` point at a server of this store's family rather than a plain AI SDK route. */
export function isFamily(options: { baseUrl?: unknown; routes?: unknown; capabilities?: unknown }): boolean {
  return options.baseUrl !== undefined || options.routes !== undefined || options.capabilities !== undefined;
}

/** Whether `t` is a transport object to be used as one (`sendMessages`), not only read. */
function usable(t: TransportLike | undefined): t is TransportLike & Pick<ChatTransport<UIMessage>, "sendMessages"> {
  return t != null && typeof t.sendMessages === "function";
}

/**
 * The store's options for the chat's: a plain AI SDK server (a `useChat` route handler at
 * `/api/chat`, or whatever a transport object makes of the request) unless one of ours
 * (`baseUrl`, `routes`, `capabilities`) says the server is of this store's family. `latest`
 * holds the latest options: the transport is read per request, as `@ai-sdk/react` reads the
 * latest one.
 */
function storeOptions<M extends UIMessage>(
  options: Options<M>,
  id: string,
  latest: Latest<M>,
  viaTransport: ViaTransport,
): ChatStoreOptions {
  const {
    transport,
    messages,
    experimental_throttle,
    throttle,
    resume,
    messageMetadataSchema,
    dataPartSchemas,
    generateId,
    uploadFile,
    onData,
    chat,
    id: _id,
    ...ours
  } = options;
  const family = isFamily(ours);
  // The rest are the store's options, but for the chat's callbacks (`onFinish`, `onError`,
  // `onToolCall`, a `sendAutomaticallyWhen` function): `Chat`'s #open puts the store's over them.
  const out = { ...ours, sessionId: id } as unknown as ChatStoreOptions;
  // `resume: true` asks the stream route once on mount, as `useChat` does.
  if (out.attach === undefined) out.attach = false;
  const hostHook = () => latest.current.transport?.prepareSendMessagesRequest ?? latest.current.prepareSendMessagesRequest;
  const used = !family && usable(transport);
  if (!used && (transport !== undefined || out.headers !== undefined)) {
    // The transport's headers, then the hook's own, both resolved per request.
    out.headers = async () => ({
      ...plain(await resolve(latest.current.transport?.headers)),
      ...plain(await resolve(latest.current.headers)),
    });
  }
  if (!used && (transport !== undefined || out.fetch !== undefined)) {
    out.fetch = (...args) => (latest.current.fetch ?? latest.current.transport?.fetch ?? globalThis.fetch)(...args);
  }
  if (!used && out.credentials === undefined && typeof transport?.credentials === "string") {
    out.credentials = transport.credentials;
  }
  if (family) {
    // This store's servers: the store's body (its own keys, then the `body` option's); a
    // transport's `body` object joins the `body` option when the chat is created.
    if (typeof transport?.body === "object" && transport.body !== null) out.body = { ...transport.body, ...out.body };
    if (hostHook() !== undefined) out.prepareSendMessagesRequest = (req) => hostHook()?.(req);
    return out;
  }
  const api = transport?.api ?? "/api/chat";
  out.routes = { chat: api, stream: `${api}/{sessionId}/stream`, catalog: "", turn: "" };
  // What a route handler written for `useChat` does: it takes the whole history with each
  // POST, keeps none itself, runs no follow-ups, and answers one stream per POST.
  out.capabilities = { nativeFollowUp: false, aiSdkOwnsHistory: true };
  if (out.hydrate === undefined) out.hydrate = false;
  if (out.persist === undefined) out.persist = false;
  if (out.persistSeq === undefined) out.persistSeq = false;
  if (out.aiSdkRequests === undefined) out.aiSdkRequests = true;
  // A lost answer is not resumed (the handler keeps no stream): a disconnect, as `useChat`'s.
  if (out.resumeAttempts === undefined) out.resumeAttempts = 0;
  if (used) {
    // The transport makes the requests: the store's chat POST and stream GET are handed to
    // its `sendMessages` / `reconnectToStream`, and what they return is the answer.
    out.prepareSendMessagesRequest = viaTransport.prepare;
    out.fetch = viaTransport.fetch;
    return out;
  }
  // A failed answer's text is what `useChat` shows as the error's message: it is read here,
  // kept for the chat, and given back to the store as the same answer.
  const fetchOf: StoreFetch = out.fetch ?? ((...args) => globalThis.fetch(...args));
  out.fetch = async (url, init) => {
    const guard = viaTransport.guard(init?.signal);
    const response: Response | null | undefined = await fetchOf(url, { ...init, signal: guard.signal });
    if (response == null || typeof response.status !== "number") return response as Response;
    // A resume with no stream to follow ends no turn: what waits for one is let go here.
    if (response.status === 204) viaTransport.settle();
    if (response.status >= 200 && response.status < 300) {
      const body = response.body;
      if (body == null || typeof body.getReader !== "function") return response;
      return { status: response.status, headers: response.headers, body: guard.follow(body.getReader()) } as Answer as Response;
    }
    const text = await response.text();
    viaTransport.failed(text);
    return textAnswer(
      response.status,
      text,
      (response.headers as Partial<Headers> | undefined)?.get?.("content-type") ?? "text/plain",
    ) as unknown as Response;
  };
  // Every chat POST is made as `DefaultChatTransport.sendMessages` makes it, from the latest
  // transport: its `api`, `body` and `credentials` resolved now, the host's hook over them,
  // and the body `{...body, id, messages, trigger, messageId}` where the hook gives none.
  out.prepareSendMessagesRequest = async (req): Promise<PreparedSendMessagesRequest> => {
    const t: TransportLike = latest.current.transport ?? {};
    const body = { ...(await resolve(t.body)), ...req.body };
    const credentials = (await resolve(t.credentials)) ?? req.credentials;
    const url = t.api ?? req.api;
    const hook = hostHook();
    const prepared = hook ? await hook({ ...req, api: url, body, credentials }) : undefined;
    const { id: chatId, messages, trigger, messageId } = req;
    return {
      api: prepared?.api ?? url,
      headers: prepared?.headers,
      body: prepared?.body !== undefined ? prepared.body : { ...body, id: chatId, messages, trigger, messageId },
      credentials: prepared?.credentials ?? credentials,
    };
  };
  return out;
}

/**
 * A stream of UI message chunk objects (what a transport returns) as the answer the store
 * reads: a server-sent event per chunk, as an AI SDK route writes them. A `Response`-shaped
 * object, so no `Response` global is needed.
 */
function answerOf(chunks: ReadableStream<UIMessageChunk>, guard: Guard): Answer {
  const encoder = new TextEncoder();
  const body = guard.follow(chunks.getReader(), (chunk) => encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
  return {
    status: 200,
    headers: { get: (name) => (name.toLowerCase() === "content-type" ? "text/event-stream" : null) },
    body,
  };
}

/** A request's signal as a chat follows it (`guardOf`). */
interface Guard {
  signal: AbortSignal;
  follow(from: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array>;
  follow<T>(from: ReadableStreamDefaultReader<T>, map: (value: T) => Uint8Array): ReadableStream<Uint8Array>;
}

/**
 * The store aborts a request whenever its turn ends; `useChat` aborts it on a stop only, and
 * at an `error` chunk (or a chunk it refuses) leaves the answer by cancelling its body. The
 * store's `signal` is followed by another: aborted when the turn did not end in error,
 * else the body is left. `failedTurn()` says which.
 */
function guardOf(outer: AbortSignal | null | undefined, failedTurn: () => boolean): Guard {
  const inner = new AbortController();
  let reader: ReadableStreamDefaultReader<unknown> | null = null;
  if (outer) {
    const leave = () => {
      if (reader !== null && failedTurn()) reader.cancel().catch(() => {});
      else inner.abort(outer.reason);
    };
    if (outer.aborted) inner.abort(outer.reason);
    else outer.addEventListener("abort", leave, { once: true });
  }
  return {
    signal: inner.signal,
    // A stream of what `from` reads (each value through `map`), cancelled with it.
    follow<T>(from: ReadableStreamDefaultReader<T>, map = (v: T) => v as unknown as Uint8Array) {
      reader = from;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const step = await from.read();
          if (step.done) controller.close();
          else controller.enqueue(map(step.value));
        },
        cancel(reason) {
          return from.cancel(reason);
        },
      });
    },
  };
}

/**
 * A transport whose requests go through its own `fetch` field (the `ai` package's
 * `HttpChatTransport`s keep the `fetch` option there) is called through a view of it whose
 * `fetch` notes each answer's status: what it throws for a failed answer says no status.
 */
function observed(transport: TransportLike): { target: TransportLike; answered: () => number | undefined } {
  let status: number | undefined;
  const answered = () => status;
  if (transport == null || !("fetch" in transport)) return { target: transport, answered };
  const own = transport.fetch;
  const fetch = async (...args: Parameters<typeof globalThis.fetch>) => {
    // The transport's fetch may answer anything; its status is read where it has one.
    const response: Response | null | undefined = await (own ?? globalThis.fetch)(...args);
    status = response?.status;
    return response;
  };
  return { target: Object.create(transport, { fetch: { value: fetch } }), answered };
}

// An answer of `status` whose body is `text`.
function textAnswer(status: number, text: string, type: string): Answer {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
  return { status, headers: { get: (n) => (n.toLowerCase() === "content-type" ? type : null) }, body };
}


const NO_STREAM: Answer = Object.freeze({ status: 204, headers: { get: () => null }, body: null });

/** A data part as the AI SDK gives one to `onData`. */
type DataPart = { type: `data-${string}`; id?: string; data: unknown; transient?: boolean };

function dataPart(d: DataEvent): DataPart {
  const part: DataPart = { type: `data-${d.name}`, data: d.data };
  if (d.id !== undefined) part.id = d.id;
  if (d.transient) part.transient = true;
  return part;
}

/**
 * Checks `value` against a schema as the `ai` package accepts one: a Standard Schema
 * (`~standard`, zod 3.24+, valibot, arktype), an `ai` `Schema` (`validate`), or a zod-like
 * `safeParse` / `parse`. Resolves to the error, or `null` when it passes.
 */
async function invalid(schema: SchemaView | null | undefined, value: unknown): Promise<Error | null> {
  try {
    if (schema?.["~standard"]?.validate) {
      const r = await schema["~standard"].validate(value);
      return r.issues ? new TypeError(`Type validation failed: ${JSON.stringify(r.issues)}`) : null;
    }
    if (typeof schema?.validate === "function") {
      const r = await schema.validate(value);
      return r && r.success === false ? r.error ?? new TypeError("Type validation failed") : null;
    }
    if (typeof schema?.safeParse === "function") {
      const r = await schema.safeParse(value);
      return r.success ? null : r.error ?? new TypeError("Type validation failed");
    }
    if (typeof schema?.parse === "function") await schema.parse(value);
    return null;
  } catch (e) {
    return e instanceof Error ? e : new TypeError(String(e));
  }
}

// Whether the files of a send must be read first (a `FileList` or `File`s, not `FileUIPart`s).
/** A schema as `invalid` reads it: each kind is told by the members it has. */
type Outcome = { issues?: unknown; success?: boolean; error?: Error };
type SchemaView = {
  "~standard"?: { validate?: (value: unknown) => Outcome | PromiseLike<Outcome> };
  validate?: (value: unknown) => Outcome | null | undefined | PromiseLike<Outcome | null | undefined>;
  safeParse?: (value: unknown) => Outcome | PromiseLike<Outcome>;
  parse?: (value: unknown) => unknown;
};

/** A send's files: a `FileList`, `File`s, or parts already made. */
type Files = FileList | ArrayLike<File | FileUIPart> | null | undefined;

function needsReading(files: Files): boolean {
  if (files == null) return false;
  return Array.from(files).some((f) => !(f && typeof f === "object" && typeof (f as { url?: unknown }).url === "string"));
}

// Reads a `FileList` (or an array of `File`s) as `data:` URL file parts, as `useChat` does.
async function fileParts(files: Files): Promise<FileUIPart[]> {
  if (files == null) return [];
  return Promise.all(Array.from(files).map(async (f): Promise<FileUIPart> => {
    if (f && typeof f === "object" && typeof (f as { url?: unknown }).url === "string") return f as FileUIPart;
    const url = await new Promise<string>((res, rej) => {
      const reader = new FileReader();
      reader.onload = () => res(reader.result as string);
      reader.onerror = () => rej(reader.error);
      reader.readAsDataURL(f as File);
    });
    return { type: "file", mediaType: (f as File).type, filename: (f as File).name, url };
  }));
}

function attachment(part: FileUIPart): FileAttachment {
  const f: FileAttachment = { mediaType: part.mediaType, url: part.url };
  if (part.filename !== undefined) f.filename = part.filename;
  if (part.providerReference !== undefined) f.providerReference = part.providerReference;
  if (part.providerMetadata !== undefined) f.providerMetadata = part.providerMetadata;
  return f;
}

const request = (o: ChatRequestOptions = {}): RequestOptions => ({
  body: o.body as Record<string, unknown> | undefined,
  headers: o.headers,
  metadata: o.metadata,
});

/** An object's fields by name. */
type Fields = Record<string, unknown>;

/** The `Error` a chat shows: the store's fields beside its message. */
interface ShownError extends Error {
  code?: ChatStoreError["code"];
  status?: number;
}


/**
 * The store's error as `useChat` users read it: an `Error` whose `message` is the AI SDK's
 * wording of the same failure (a failed answer's whole body text, as `DefaultChatTransport`
 * throws it; the stream's `errorText`), with the
 * store's `code`, `status`, `serverCode`, `field` and `retryable` beside.
 */
function sdkError(e: ChatStoreError, wording: string | null): ShownError {
  const out: ShownError = new Error(e.status !== undefined && wording != null ? wording : e.message);
  for (const key of ["code", "status", "serverCode", "field", "retryable"]) {
    if ((e as unknown as Fields)[key] !== undefined) (out as unknown as Fields)[key] = (e as unknown as Fields)[key];
  }
  return out;
}

// What a transport threw, shown as it is, with the store's `code` and `status` beside where
// it has none of its own (not enumerable: its printed form stays the thrower's).
function withCode(thrown: object, e: ChatStoreError): ShownError {
  for (const key of ["code", "status"] as const) {
    if (e[key] === undefined || key in thrown || !Object.isExtensible(thrown)) continue;
    Object.defineProperty(thrown, key, { value: e[key], configurable: true, writable: true });
  }
  return thrown as ShownError;
}

/**
 * A message as the `ai` package builds one: `metadata` always a key (undefined when none),
 * an answer's text and reasoning parts with a `providerMetadata` key, and a tool part's
 * `rawInput` only where the `ai` package keeps it (an input that failed to parse). Cached by
 * the store's object, so an unchanged message keeps its identity from render to render.
 */
const shaped = new WeakMap<StoreMessage, StoreMessage>();
const isTool = (p: StorePart) => p.type === "dynamic-tool" || p.type.startsWith("tool-");
function sdkPart(p: StorePart): StorePart {
  if ((p.type === "text" || p.type === "reasoning") && !("providerMetadata" in p)) {
    return Object.freeze({ ...p, providerMetadata: undefined });
  }
  if (isTool(p) && "rawInput" in p && (p as { state?: unknown }).state !== "output-error") {
    const { rawInput: _raw, ...rest } = p;
    return Object.freeze(rest);
  }
  return p;
}
function sdkMessage(m: StoreMessage): StoreMessage {
  let out = shaped.get(m);
  if (out) return out;
  const parts = m.role === "user" ? m.parts : m.parts.map(sdkPart);
  if ("metadata" in m && parts.every((p, i) => p === m.parts[i])) return m;
  // `id`, `role` and `metadata` first, as the `ai` package orders a message's keys.
  out = Object.freeze({ id: m.id, role: m.role, metadata: m.metadata, ...(m as object), parts: m.parts === parts ? parts : Object.freeze(parts) }) as StoreMessage;
  shaped.set(m, out);
  return out;
}
const shapedLists = new WeakMap<readonly StoreMessage[], readonly StoreMessage[]>();
function sdkMessages(list: readonly StoreMessage[]): readonly StoreMessage[] {
  let out = shapedLists.get(list);
  if (!out) {
    out = Object.freeze(list.map(sdkMessage));
    shapedLists.set(list, out);
  }
  return out;
}

/** What a chat's `getSnapshot()` gives: `useChat`'s fields, the same object until one changed. */
export interface ChatView<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly messages: UI_MESSAGE[];
  readonly status: ChatStatus;
  readonly error: Error | undefined;
  readonly busy: boolean;
  readonly queued: ChatSnapshot["queued"];
  readonly composer: ChatSnapshot["composer"] | null;
  readonly pending: ChatSnapshot["pending"] | null;
  readonly sessions: ChatSnapshot["sessions"] | null;
  readonly capabilities: ChatSnapshot["capabilities"] | null;
}

/** What `sendMessage` takes (`ChatSendMessageFunction`'s message). */
type SendMessageInput<M extends UIMessage> = NonNullable<Parameters<ChatSendMessageFunction<M>>[0]>;
type ApprovalArgs = Parameters<ChatAddToolApproveResponseFunction>[0];

/**
 * A chat with the `ai` package's `Chat` surface on a `ChatStore`. Its constructor makes no
 * request: against a plain AI SDK route the store is made at once (it starts no IO), against
 * a server of this store's family when the chat is first subscribed to or used.
 */
export class Chat<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat's id (the store's `sessionId`). */
  declare readonly id: string;
  declare readonly generateId: () => string;
  #latest: Latest<UI_MESSAGE>;
  #store: ChatStore | null = null;
  #unsubscribe: (() => void) | null = null;
  #listeners = new Set<() => void>();
  #view: ChatView<UI_MESSAGE> | null = null;
  #viewOf: { snapshot?: ChatSnapshot; local?: Error | null; shown?: readonly StoreMessage[] | null } = { snapshot: undefined, local: undefined };
  #local: Error | null = null; // a validator's error: it lives outside the store
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #finishThrew: { error: unknown } | null = null;
  #chain: Promise<void> | null = null; // the last send, until its turn is over: later sends wait for it
  #unsent = 0; // sends not yet handed to the store (files being read, or held)
  #stops = 0;
  #thrown: unknown = null; // what a transport object threw, shown as it is
  #wording: string | null = null; // a failed answer's body text, the message `useChat` shows for it
  #requests = new Map<string, PrepareSendMessagesRequestOptions>(); // the store's chat requests, kept for a transport to make
  #shownError: { from: ChatStoreError | null; to: ShownError | undefined } = { from: null, to: undefined };
  #releasing: true | null = null;
  #lastMeta: unknown = undefined;
  // `throttle`: the messages shown, published at most once per `throttleMs` while a turn
  // streams (its start and end at once); status and error are never held back (as
  // `@ai-sdk/react`, whose throttle is its messages' alone).
  #throttleMs = 0;
  #shown: readonly StoreMessage[] | null = null;
  #shownAt = 0;
  #shownStatus: ChatStatus | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** The options of `useChat` without `chat`. */
  constructor(options: ChatOptions<UI_MESSAGE> & UseChatRenderOptions = {}) {
    (this as unknown as Record<symbol, boolean>)[OURS] = true;
    this.#latest = { current: options };
    this.generateId = options.generateId ?? defaultId;
    this.id = options.id ?? this.generateId();
    this.#throttleMs = options.throttle ?? options.experimental_throttle ?? 0;
    // Own, bound members, as the `ai` `Chat`'s: `const { sendMessage } = chat` works.
    type Methods = Record<string, (...args: never[]) => unknown>;
    for (const name of ["sendMessage", "regenerate", "stop", "resumeStream", "addToolOutput", "addToolResult", "addToolApprovalResponse", "clearError", "setMessages"]) {
      (this as unknown as Methods)[name] = (this as unknown as Methods)[name]!.bind(this);
    }
    if (!isFamily(options)) this.#open();
  }

  /** Whether `chat` is one of this package's chats. */
  static isChat(chat: unknown): chat is Chat<UIMessage> {
    return chat != null && (chat as Record<symbol, unknown>)[OURS] === true;
  }

  /** The `ChatStore` under this chat (made on first use). */
  get store(): ChatStore {
    return this.#open();
  }

  #open(): ChatStore {
    if (this.#store) return this.#store;
    const latest = this.#latest;
    const chat = this;
    // The store's messages are this chat's message type: the generic is the host's word for them.
    const hooks = {
      onFinish: (event: FinishEvent) => {
        try {
          latest.current.onFinish?.({
            ...event,
            message: sdkMessage(event.message) as unknown as UI_MESSAGE,
            messages: event.messages.map(sdkMessage) as unknown as UI_MESSAGE[],
          } as Parameters<NonNullable<ChatOptions<UI_MESSAGE>["onFinish"]>>[0]);
        } catch (e) {
          chat.#finishThrew = { error: e };
        }
        chat.#settleSoon();
      },
      onError: (error: ChatStoreError) => latest.current.onError?.(chat.#errorOf(error)),
      onToolCall: (event: { toolCall: ToolCall }) =>
        latest.current.onToolCall?.(event as Parameters<NonNullable<ChatOptions<UI_MESSAGE>["onToolCall"]>>[0]),
    };
    const viaTransport: ViaTransport = {
      // The request the store would make, kept for `fetch` to hand to the transport.
      prepare: (req) => {
        const key = `acs-transport:${Math.random().toString(36).slice(2)}`;
        chat.#requests.set(key, req);
        return { api: key };
      },
      // An `Answer` is what the store reads of a `Response`.
      fetch: (url, init) => chat.#viaTransport(url, init) as Promise<unknown> as Promise<Response>,
      failed: (text) => {
        chat.#wording = text;
      },
      settle: () => chat.#settleSoon(),
      guard: (signal) => chat.#guard(signal),
    };
    const options: ChatStoreOptions = { ...storeOptions(latest.current, this.id, latest, viaTransport), ...hooks };
    if (typeof latest.current.sendAutomaticallyWhen === "function") {
      options.sendAutomaticallyWhen = (...args) =>
        latest.current.sendAutomaticallyWhen?.(...(args as unknown as [{ messages: UI_MESSAGE[] }])) ?? false;
    }
    if (latest.current.onData || latest.current.dataPartSchemas) {
      // `onData` hears the data part as the AI SDK gives it: `{type: 'data-NAME', id, data}`.
      options.onData = (d) => {
        const part = dataPart(d);
        const schemas = latest.current.dataPartSchemas as Record<string, FlexibleSchema<unknown> | undefined> | undefined;
        const schema = schemas?.[d.name];
        if (schema) chat.#validate(schema, part.data);
        latest.current.onData?.(part as Parameters<NonNullable<ChatOptions<UI_MESSAGE>["onData"]>>[0]);
      };
    }
    const store = new ChatStore(options);
    this.#store = store;
    const initial = latest.current.messages;
    if (initial?.length && store.getSnapshot().messages.length === 0 && !store.getSnapshot().busy) {
      store.setMessages(initial as unknown as StoreMessage[]);
    }
    this.#unsubscribe = store.subscribe(() => this.#changed());
    return store;
  }

  // A request's signal followed as `useChat` would: a turn that ended in error leaves the body.
  #guard(signal: AbortSignal | null | undefined): Guard {
    return guardOf(signal, () => this.#store?.getSnapshot().status === "error");
  }

  // The store's request, made by the transport object: a chat POST by `sendMessages`, a
  // stream GET by `reconnectToStream`; what they return (chunk objects) is the answer.
  async #viaTransport(url: string, init: RequestInit): Promise<Answer> {
    // Only called with a usable transport (`storeOptions`).
    const transport = this.#latest.current.transport as TransportLike & ChatTransport<UIMessage>;
    const guard = this.#guard(init?.signal);
    const { target, answered } = observed(transport);
    // What the transport threw: the chat's error as it is. Thrown over an HTTP answer (an
    // `HttpChatTransport`'s `!response.ok`), it is that failed answer for the store, which
    // classifies it by status; thrown otherwise, a lost request (a failed resume: an answer
    // that failed, as a resume gives up on a lost one quietly).
    const failed = (e: unknown, resume: boolean): Answer => {
      if (e && (e as Error).name === "AbortError") throw e;
      this.#thrown = e;
      const status = answered();
      const answer = status !== undefined && status >= 400 ? status : resume ? 500 : undefined;
      if (answer === undefined) throw e;
      return textAnswer(answer, String((e as Error | null | undefined)?.message ?? e), "text/plain");
    };
    if (init?.method === "GET") {
      let stream: ReadableStream<UIMessageChunk> | null;
      try {
        stream = await transport.reconnectToStream.call(target, { chatId: this.id, abortSignal: guard.signal });
      } catch (e) {
        return failed(e, true);
      }
      if (stream != null) return answerOf(stream, guard);
      this.#settleSoon(); // no stream to follow: no turn ends, what waits for one is let go
      return NO_STREAM;
    }
    const req = this.#requests.get(url);
    this.#requests.delete(url);
    if (!req) throw new TypeError(`agent-chat-store: no request kept for ${url}`);
    try {
      const stream = await transport.sendMessages.call(target, {
        chatId: req.id ?? this.id,
        messages: this.#messages() as unknown as UIMessage[],
        abortSignal: guard.signal,
        metadata: req.requestMetadata,
        headers: Object.keys(req.headers ?? {}).length ? req.headers : undefined,
        body: Object.keys(req.body ?? {}).length ? req.body : undefined,
        trigger: req.trigger,
        messageId: req.messageId,
      } as Parameters<ChatTransport<UIMessage>["sendMessages"]>[0]);
      return answerOf(stream, guard);
    } catch (e) {
      return failed(e, false);
    }
  }

  // The messages a request carries: as the snapshot has them, in the `ai` package's shape,
  // the answer being made left out (as the `ai` package sends the history before it).
  #messages(): readonly StoreMessage[] {
    const s = this.#store!.getSnapshot();
    const list = s.messages;
    const last = list[list.length - 1];
    const open = s.busy && last?.role === "assistant" && last.parts.length === 0;
    return sdkMessages(open ? list.slice(0, -1) : list);
  }

  #changed() {
    // A chat let go of is disposed once its turn is over.
    if (this.#releasing && !this.#store?.getSnapshot().busy) {
      this.#disposeNow();
      return;
    }
    this.#publish();
    this.#checkMetadata();
    if (this.#waiters.length > 0 && !this.#store?.getSnapshot().busy) this.#settleSoon();
    this.#tell();
  }

  #tell() {
    for (const f of [...this.#listeners]) f();
  }

  // The messages to show now, under `throttle`: a status change other than the first words
  // of an answer shows them at once; otherwise at most once per `throttleMs`.
  #publish() {
    const live = this.#store?.getSnapshot();
    if (!live) return;
    const ms = this.#throttleMs;
    const was = this.#shownStatus;
    this.#shownStatus = live.status;
    const urgent = was !== live.status && !(was === "submitted" && live.status === "streaming");
    const wait = ms - (Date.now() - this.#shownAt);
    if (ms <= 0 || urgent || wait <= 0 || this.#shown === null) {
      if (this.#timer !== null) clearTimeout(this.#timer);
      this.#timer = null;
      this.#shown = live.messages;
      this.#shownAt = Date.now();
    } else if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        const now = this.#store?.getSnapshot();
        if (!now) return;
        this.#shown = now.messages;
        this.#shownAt = Date.now();
        this.#tell();
      }, wait);
    }
  }

  /** Subscribes to the chat's changes (`useSyncExternalStore`'s `subscribe`). */
  subscribe(listener: () => void): () => boolean {
    this.#releasing = null;
    this.#open();
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `{messages, status, error}` and the store's own fields: the same object until one changed. */
  getSnapshot(): ChatView<UI_MESSAGE> {
    const snapshot = this.#store?.getSnapshot();
    if (snapshot && this.#shown === null) this.#publish();
    const shown = snapshot ? this.#shown : undefined;
    const of = this.#viewOf;
    if (this.#view && of.snapshot === snapshot && of.local === this.#local && of.shown === shown) return this.#view;
    this.#viewOf = { snapshot, local: this.#local, shown };
    const error = this.#local ?? (snapshot?.error ? this.#errorOf(snapshot.error) : undefined);
    this.#view = Object.freeze({
      messages: (snapshot ? sdkMessages(shown!) : this.#latest.current.messages ?? EMPTY) as UI_MESSAGE[],
      status: this.#local ? ("error" as const) : snapshot?.status ?? "ready",
      error,
      busy: snapshot?.busy ?? false,
      queued: snapshot?.queued ?? EMPTY,
      composer: snapshot?.composer ?? null,
      pending: snapshot?.pending ?? null,
      sessions: snapshot?.sessions ?? null,
      capabilities: snapshot?.capabilities ?? null,
    });
    return this.#view;
  }

  // One `Error` per failure: the object `onError` was given is the one `error` shows.
  #errorOf(e: ChatStoreError): ShownError {
    const held = this.#shownError;
    if (held.from === e) return held.to!;
    if (held.from && held.from.message === e.message && held.from.code === e.code && held.from.status === e.status) {
      this.#shownError = { from: e, to: held.to };
      return held.to!;
    }
    const thrown = this.#thrown;
    const to = thrown != null && typeof thrown === "object" ? withCode(thrown, e) : sdkError(e, this.#wording);
    this.#shownError = { from: e, to };
    return to;
  }

  /** The messages as they are now (a throttled hook may show older ones). */
  get messages(): UI_MESSAGE[] {
    const s = this.#store?.getSnapshot();
    return (s ? sdkMessages(s.messages) : this.#latest.current.messages ?? EMPTY) as UI_MESSAGE[];
  }

  /** Replaces the conversation locally (no request). */
  set messages(messages: UI_MESSAGE[]) {
    this.setMessages(messages);
  }

  get status(): ChatStatus {
    return this.getSnapshot().status;
  }

  get error(): Error | undefined {
    return this.getSnapshot().error;
  }

  get lastMessage(): UI_MESSAGE | undefined {
    const m = this.messages;
    return m[m.length - 1];
  }

  /** Replaces the messages (a function of the current ones, or an array); stops a running turn first. */
  setMessages(next: UI_MESSAGE[] | ((messages: UI_MESSAGE[]) => UI_MESSAGE[])): void {
    const s = this.#open();
    const messages = typeof next === "function" ? next(this.messages) : next;
    // The store writes a running turn's stream into its last message: it stops first.
    if (s.getSnapshot().busy) s.stop();
    s.setMessages(messages as unknown as StoreMessage[]);
    s.flush();
  }

  #turnEnd(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  // A send's promise settles when its whole chain of requests has: an automatic continuation
  // (sendAutomaticallyWhen) starts right after a finish and is waited for; a turn that ends
  // without a finish (a resume that found no stream) settles it too.
  #settleSoon() {
    if (this.#waiters.length === 0 && this.#finishThrew === null) return;
    setTimeout(() => {
      const threw = this.#finishThrew;
      if (!threw && this.#store?.getSnapshot().busy) return;
      this.#finishThrew = null;
      const waiting = this.#waiters;
      this.#waiters = [];
      for (const w of waiting) (threw ? w.reject(threw.error) : w.resolve());
    });
  }

  #clearLocal() {
    this.#thrown = null;
    this.#wording = null;
    if (this.#local) {
      this.#local = null;
      this.#changed();
    }
  }

  /**
   * Sends a user message (`{text, files?}`, `{files}`, `{parts}`), or with no message asks
   * for an answer to the history as it is. The message and status `submitted` are in the chat
   * when this returns (once its files are read, for a `FileList`); resolves when the turn and
   * its automatic continuations are over.
   */
  sendMessage(message?: SendMessageInput<UI_MESSAGE>, options?: ChatRequestOptions): Promise<void> {
    const asked = this.#stops;
    const send = (files: readonly FileUIPart[]): Promise<void> => {
      const s = this.#open();
      this.#clearLocal();
      if (message == null) {
        const sent = s.continueTurn(request(options));
        s.flush();
        return sent ? this.#turnEnd() : Promise.resolve();
      }
      if (this.#stops !== asked) return Promise.resolve();
      let text: string;
      let parts: readonly FileUIPart[];
      if ("text" in message || "files" in message) {
        text = (message as { text?: string }).text ?? "";
        parts = files;
      } else {
        const all: readonly UIMessage["parts"][number][] = message.parts ?? [];
        text = all.filter((p): p is TextUIPart => p.type === "text").map((p) => p.text).join("");
        parts = all.filter((p): p is FileUIPart => p.type === "file");
      }
      // As the `ai` package: the user message's id first, then the answer's.
      const newId = () => this.generateId();
      const id = message.messageId != null ? undefined : (message as { id?: string }).id ?? newId();
      const r = s.send(text, parts.map(attachment), {
        messageId: message.messageId,
        id,
        responseId: newId(),
        messageMetadata: message.metadata,
        ...request(options),
      });
      s.flush();
      return r.kind === "sent" ? this.#turnEnd() : Promise.resolve();
    };
    const files: Files = message != null && ("text" in message || "files" in message) ? message.files : undefined;
    const upload = this.#latest.current.uploadFile;
    // A send while a turn runs, where the server takes no follow-ups (a plain AI SDK route
    // runs one stream per POST), is held and sent when that turn and what continues it are
    // over, as are the sends after it: in the order asked, each once. A stop drops the held.
    const now = this.#open().getSnapshot();
    const held = now.busy && !now.capabilities?.nativeFollowUp;
    let run: Promise<void>;
    if (this.#unsent === 0 && !held && !needsReading(files) && typeof upload !== "function") {
      // None to read: every one is a part already (`needsReading`).
      run = send(files == null ? [] : (Array.from(files) as FileUIPart[]));
    } else {
      this.#unsent += 1;
      const before = (held ? this.#chain ?? this.#turnEnd() : this.#chain ?? Promise.resolve()).catch(() => {});
      run = before.then(async () => {
        try {
          let parts = await fileParts(files);
          if (typeof upload === "function") {
            parts = await Promise.all(parts.map(async (p) => ({ ...p, ...(await upload(p)) })));
          }
          return send(parts);
        } finally {
          this.#unsent -= 1;
        }
      });
    }
    const chain = run.catch(() => {});
    this.#chain = chain;
    chain.then(() => {
      if (this.#chain === chain) this.#chain = null;
    });
    return run.then(() => {});
  }

  /** Asks again for the last answer (or the one of `messageId`). */
  regenerate({ messageId, ...options }: { messageId?: string } & ChatRequestOptions = {}): Promise<void> {
    const s = this.#open();
    this.#clearLocal();
    const sent = s.regenerate({ messageId, responseId: this.generateId(), ...request(options) });
    s.flush();
    return sent ? this.#turnEnd() : Promise.resolve();
  }

  /** Stops the running turn, and the sends still reading their files. */
  async stop(): Promise<void> {
    this.#stops += 1;
    const s = this.#store;
    if (!s) return;
    s.stop();
    s.flush();
  }

  /** Follows a turn still running on the server (its stream route), if there is one. */
  async resumeStream(_options?: ChatRequestOptions): Promise<void> {
    const s = this.#open();
    this.#thrown = null;
    this.#wording = null;
    if (s.resumeStream()) {
      s.flush();
      await this.#turnEnd();
    }
  }

  /** A client tool's output (or `state: 'output-error'` with `errorText`). */
  async addToolOutput<TOOL extends keyof InferUIMessageTools<UI_MESSAGE>>({
    toolCallId,
    output,
    state,
    errorText,
    options: o,
  }: ToolOutputInput<UI_MESSAGE, TOOL>): Promise<void> {
    const s = this.#open();
    const answer: Parameters<ChatStore["addToolOutput"]>[0] =
      state === "output-error" ? { toolCallId, errorText: errorText ?? "" } : { toolCallId, output };
    if (o !== undefined) answer.options = request(o);
    s.addToolOutput(answer);
    s.flush();
  }

  /** The old name of `addToolOutput`. */
  addToolResult<TOOL extends keyof InferUIMessageTools<UI_MESSAGE>>(args: ToolOutputInput<UI_MESSAGE, TOOL>): Promise<void> {
    return this.addToolOutput(args);
  }

  /** The user's answer to a tool call's approval request. */
  async addToolApprovalResponse({ id, approved, reason, options: o }: ApprovalArgs): Promise<void> {
    const s = this.#open();
    const answer: Parameters<ChatStore["addToolApprovalResponse"]>[0] = { id, approved };
    if (reason !== undefined) answer.reason = reason;
    if (o !== undefined) answer.options = request(o);
    s.addToolApprovalResponse(answer);
    s.flush();
  }

  /** Takes the error away (status `ready`). */
  clearError(): void {
    this.#clearLocal();
    const s = this.#store;
    if (!s) return;
    s.clearError();
    s.flush();
  }

  /** Ends the chat: its request aborted, its timers cleared. A later use makes a new store. */
  dispose(): void {
    this.#releasing = null;
    this.#disposeNow();
  }

  #disposeNow(): void {
    const s = this.#store;
    if (!s) return;
    this.#store = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#shown = null;
    this.#shownStatus = undefined;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) w.resolve();
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    s.dispose();
  }

  [UPDATE](options: Options<UI_MESSAGE>): void {
    this.#latest.current = options;
  }

  // A chat its hook let go of (the hook's `id` changed, or it unmounted): as the `ai`
  // package's, a turn still running goes on to its end unseen; then the store is disposed.
  [RELEASE](): void {
    // After the commit: StrictMode's simulated remount subscribes again at once, and keeps it.
    queueMicrotask(() => {
      if (this.#listeners.size > 0) return;
      if (this.#store?.getSnapshot().busy) this.#releasing = true;
      else this.#disposeNow();
    });
  }

  #validate(schema: FlexibleSchema<unknown>, value: unknown): void {
    invalid(schema as SchemaView, value).then((error) => {
      if (!error || !this.#store) return;
      // As the `ai` package: a part that fails its schema ends the turn with that error.
      this.#store.stop();
      this.#local = error;
      this.#changed();
      this.#latest.current.onError?.(error);
    });
  }

  // The assistant message's metadata, checked when it changes (`messageMetadataSchema`).
  #checkMetadata(): void {
    const schema = this.#latest.current.messageMetadataSchema;
    if (!schema || !this.#store) return;
    const list = this.#store.getSnapshot().messages;
    const last = list[list.length - 1];
    if (!last || last.role !== "assistant" || last.metadata === this.#lastMeta) return;
    this.#lastMeta = last.metadata;
    if (last.metadata !== undefined) this.#validate(schema as FlexibleSchema<unknown>, last.metadata);
  }
}
