// The `ai` package's message, part, chunk, transport and chat types, as `agent-chat-store/react`
// exports them (its `Chat` and `useChat` take and give these).
import type { ChatStore } from "./agent_chat_store.js";
import type { Chat } from "./chat.js";

type Snapshot = ReturnType<ChatStore["getSnapshot"]>;

// ---------------------------------------------------------------------------------------------
// The drop-in `useChat` and `Chat` (issue 39). The message, part, chunk and transport types below
// are written here, not imported: `ai` is an optional peer, and this file must type-check without
// it. Their shapes follow `ai` 7's field for field, so that a value of one is a value of the other
// (our messages into `ai`'s helpers, `ai`'s transports into our `useChat`) under `--strict`.
// ---------------------------------------------------------------------------------------------

type StoreOptions = ConstructorParameters<typeof ChatStore>[0];

/** Picks the value type of an object type: the union of its properties' types. */
type ValuesOf<T> = T[keyof T];

/** A JSON value, as provider metadata carries it. */
export type JSONValue = null | string | number | boolean | Readonly<JSONObject> | readonly JSONValue[];
/**
 * A JSON object (a key may be present and `undefined`). Its values are `any`: the `ai`
 * package's own JSON type is mutable in some 7.x versions and readonly in others, and provider
 * metadata and tool metadata must go both ways with either.
 */
export type JSONObject = { [key: string]: any };
/** Per-provider data on a part or chunk, keyed by the provider's name. */
export type ProviderMetadata = Record<string, JSONObject>;
/** A file's id at each provider it was uploaded to; never an object with a `type`. */
export type ProviderReference = Record<string, string> & { type?: never };

/** Why a model stopped generating. */
export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "interrupted" | "other";

/** What a citation points at: a web page or a document. */
export type CitationSource =
  | { type: "source"; sourceType: "url"; id: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
  | {
      type: "source";
      sourceType: "document";
      id: string;
      mediaType: string;
      title: string;
      filename?: string;
      providerMetadata?: ProviderMetadata;
    };
/** A reference backing a stretch of generated text. */
export type Citation = { source: CitationSource; startIndex?: number; endIndex?: number; citedText?: string };

/** The data part types a message may hold, by name (a part's `type` is `data-NAME`). */
export type UIDataTypes = Record<string, unknown>;
/** A tool as the UI sees it: what goes in, what comes out. */
export type UITool = { input: unknown; output: unknown | undefined };
/** The tools a message may call, by name (a part's `type` is `tool-NAME`). */
export type UITools = Record<string, UITool>;

/** Every key optional, all the way down (arrays, maps and sets included); leaves stay as they are. */
export type DeepPartial<T> = T extends
  | null
  | undefined
  | string
  | number
  | boolean
  | symbol
  | bigint
  | void
  | Date
  | RegExp
  | ((...args: any[]) => unknown)
  | (new (...args: any[]) => unknown)
  ? T
  : T extends Map<infer K, infer V>
    ? {} & Map<DeepPartial<K>, DeepPartial<V>>
    : T extends Set<infer E>
      ? {} & Set<DeepPartial<E>>
      : T extends ReadonlyMap<infer K, infer V>
        ? {} & ReadonlyMap<DeepPartial<K>, DeepPartial<V>>
        : T extends ReadonlySet<infer E>
          ? {} & ReadonlySet<DeepPartial<E>>
          : T extends object
            ? T extends ReadonlyArray<infer E>
              ? E[] extends T
                ? readonly E[] extends T
                  ? ReadonlyArray<DeepPartial<E | undefined>>
                  : Array<DeepPartial<E | undefined>>
                : { [K in keyof T]?: DeepPartial<T[K]> }
              : { [K in keyof T]?: DeepPartial<T[K]> }
            : unknown;

/**
 * A chat message in the AI SDK's shape: what `useChat` renders and what a route handler
 * receives. `METADATA` types `metadata`, `DATA_PARTS` the `data-NAME` parts, `TOOLS` the
 * `tool-NAME` parts.
 */
export interface UIMessage<METADATA = unknown, DATA_PARTS extends UIDataTypes = UIDataTypes, TOOLS extends UITools = UITools> {
  /** Unique within the chat. */
  id: string;
  role: "system" | "user" | "assistant";
  /** Whatever the app attaches (the stream's `messageMetadata`, a send's `metadata`). */
  metadata?: METADATA;
  /** The content, in order: render these. */
  parts: Array<UIMessagePart<DATA_PARTS, TOOLS>>;
}

/** One piece of a message's content. */
export type UIMessagePart<DATA_TYPES extends UIDataTypes, TOOLS extends UITools> =
  | TextUIPart
  | CustomContentUIPart
  | ReasoningUIPart
  | ToolUIPart<TOOLS>
  | DynamicToolUIPart
  | SourceUrlUIPart
  | SourceDocumentUIPart
  | FileUIPart
  | ReasoningFileUIPart
  | DataUIPart<DATA_TYPES>
  | SteeringMessageUIPart
  | StepStartUIPart;

/** Text; `state` is `streaming` until its end arrives. */
export type TextUIPart = {
  type: "text";
  /** Where the text's claims come from (apart from the message's source parts). */
  citations?: Array<Citation>;
  text: string;
  state?: "streaming" | "done";
  providerMetadata?: ProviderMetadata;
};

/** Provider-specific content; `kind` is `provider.type`. */
export type CustomContentUIPart = {
  type: "custom";
  kind: `${string}.${string}`;
  providerMetadata?: ProviderMetadata;
};

/** The model's reasoning text. */
export type ReasoningUIPart = {
  type: "reasoning";
  id?: string;
  text: string;
  state?: "streaming" | "done";
  providerMetadata?: ProviderMetadata;
};

/** A web page the answer drew on. */
export type SourceUrlUIPart = {
  type: "source-url";
  sourceId: string;
  url: string;
  title?: string;
  providerMetadata?: ProviderMetadata;
};

/** A document the answer drew on. */
export type SourceDocumentUIPart = {
  type: "source-document";
  sourceId: string;
  mediaType: string;
  title: string;
  filename?: string;
  providerMetadata?: ProviderMetadata;
};

/** A file: an attachment of a user message, or one the model made. `url` may be a data URL. */
export type FileUIPart = {
  type: "file";
  /** A full media type (`image/png`) or only its top-level segment (`image`). */
  mediaType: string;
  filename?: string;
  url: string;
  /** Set by an upload; preferred over `url` when the model is called. */
  providerReference?: ProviderReference;
  providerMetadata?: ProviderMetadata;
};

/** A file that is part of the model's reasoning. */
export type ReasoningFileUIPart = {
  type: "reasoning-file";
  mediaType: string;
  url: string;
  providerMetadata?: ProviderMetadata;
};

/** A user message that joined the turn while the answer was being written (steering). */
export type SteeringMessageUIPart = {
  type: "steering-message";
  id: string;
  parts: Array<TextUIPart | FileUIPart>;
};

/** Where a new model step starts inside the message. */
export type StepStartUIPart = { type: "step-start" };

/** A `data-NAME` part, one member per name of `DATA_TYPES`. */
export type DataUIPart<DATA_TYPES extends UIDataTypes> = ValuesOf<{
  [NAME in keyof DATA_TYPES & string]: { type: `data-${NAME}`; id?: string; data: DATA_TYPES[NAME] };
}>;

/** An approval the tool call waits for (no answer yet). */
type ApprovalAsked = {
  id: string;
  approved?: never;
  descriptor?: unknown;
  requestReason?: string;
  reason?: never;
  isAutomatic?: boolean;
  signature?: string;
  inputSchemaInput?: unknown;
};
/** An answered approval; `APPROVED` narrows what the answer was. */
type ApprovalAnswered<APPROVED extends boolean> = {
  id: string;
  approved: APPROVED;
  descriptor?: unknown;
  requestReason?: string;
  reason?: string;
  isAutomatic?: boolean;
  signature?: string;
  inputSchemaInput?: unknown;
};

/**
 * A tool call's life, by `state`: its input streaming in, complete, waiting for an approval,
 * approved or denied, then its output or its error. `INPUT`/`OUTPUT` type the tool's values;
 * `ERROR_INPUT` is what `input` may be once the call failed.
 */
type ToolCallStates<INPUT, OUTPUT, PARTIAL_INPUT, ERROR_INPUT> =
  | {
      state: "input-streaming";
      input?: PARTIAL_INPUT | undefined;
      /** The input's raw text so far, to go on streaming after a reload. */
      rawInput?: string;
      inputEncoding?: "json" | "text";
      output?: never;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      approval?: never;
    }
  | {
      state: "input-available";
      input: INPUT;
      output?: never;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      approval?: never;
    }
  | {
      state: "approval-requested";
      input: INPUT;
      output?: never;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      approval: ApprovalAsked;
    }
  | {
      state: "approval-responded";
      input: INPUT;
      output?: never;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      approval: ApprovalAnswered<boolean>;
    }
  | {
      state: "output-available";
      input: INPUT;
      output: OUTPUT;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      resultProviderMetadata?: ProviderMetadata;
      /** A partial output; a later one replaces it. */
      preliminary?: boolean;
      approval?: ApprovalAnswered<true>;
    }
  | {
      state: "output-error";
      input: ERROR_INPUT;
      /** @deprecated Read `input`. */
      rawInput?: unknown;
      output?: never;
      errorText: string;
      callProviderMetadata?: ProviderMetadata;
      resultProviderMetadata?: ProviderMetadata;
      approval?: ApprovalAnswered<true>;
    }
  | {
      state: "output-denied";
      input: INPUT;
      output?: never;
      errorText?: never;
      callProviderMetadata?: ProviderMetadata;
      approval: ApprovalAnswered<false>;
    };

/** A tool call of one known tool, without its `type`: what a tool's own UI component takes. */
export type UIToolInvocation<TOOL extends UITool> = {
  toolCallId: string;
  title?: string;
  toolMetadata?: JSONObject;
  /** The provider ran the tool (not the client nor the server's code). */
  providerExecuted?: boolean;
} & ToolCallStates<TOOL["input"], TOOL["output"], DeepPartial<TOOL["input"]>, TOOL["input"] | undefined>;

/** A `tool-NAME` part: a call of a tool the message type declares, typed by that tool. */
export type ToolUIPart<TOOLS extends UITools = UITools> = ValuesOf<{
  [NAME in keyof TOOLS & string]: { type: `tool-${NAME}` } & UIToolInvocation<TOOLS[NAME]>;
}>;

/** A call of a tool known only at run time (`toolName`), its values untyped. */
export type DynamicToolUIPart = {
  type: "dynamic-tool";
  /** `false`: a static tool part turned dynamic because its schema was unavailable. */
  dynamic?: false;
  toolName: string;
  toolCallId: string;
  title?: string;
  toolMetadata?: JSONObject;
  providerExecuted?: boolean;
} & ToolCallStates<unknown, unknown, unknown, unknown>;

/** One part of a message type. */
type PartOf<T extends UIMessage> = T["parts"][number];

/** The data part types of a message type, read back from its parts. */
type DataTypesFromParts<T extends UIMessage> = {
  [P in Extract<PartOf<T>, { type: `data-${string}` }> as P["type"] extends `data-${infer NAME}` ? NAME : never]: P extends {
    data: infer DATA;
  }
    ? DATA
    : never;
};
/** The tools of a message type, read back from its parts. */
type ToolsFromParts<T extends UIMessage> = {
  [P in Extract<PartOf<T>, { type: `tool-${string}` }> as P["type"] extends `tool-${infer NAME}` ? NAME : never]: {
    input: P extends { state: "input-available"; input: infer INPUT } ? INPUT : never;
    output: P extends { state: "output-available"; output: infer OUTPUT } ? OUTPUT : never;
  };
};

// The `Infer*` types take a message type's own type arguments, so that ours and `ai`'s name the
// very same types (generic functions such as `addToolOutput` then match `ai`'s). A message type
// built from `ai`'s `UIMessage` gives no type arguments to ours (they cannot be inferred through
// another package's look-alike part types): its names are then read back from its parts.

/** The metadata type of a message type. */
export type InferUIMessageMetadata<T extends UIMessage> = T extends { metadata?: infer METADATA } ? METADATA : unknown;
/** The data part types of a message type, by name. */
export type InferUIMessageData<T extends UIMessage> = T extends UIMessage<unknown, infer DATA_TYPES>
  ? string extends keyof DATA_TYPES
    ? string extends keyof DataTypesFromParts<T>
      ? DATA_TYPES
      : DataTypesFromParts<T>
    : DATA_TYPES
  : UIDataTypes;
/** The tools of a message type, by name: each one's `input` and `output`. */
export type InferUIMessageTools<T extends UIMessage> = T extends UIMessage<unknown, UIDataTypes, infer TOOLS>
  ? string extends keyof TOOLS
    ? string extends keyof ToolsFromParts<T>
      ? TOOLS
      : ToolsFromParts<T>
    : TOOLS
  : UITools;

/** A tool call as `onToolCall` gets it. */
interface ToolCallOf<NAME extends string, INPUT> {
  toolCallId: string;
  toolName: NAME;
  input: INPUT;
  providerExecuted?: boolean;
  dynamic?: boolean;
}
/** `onToolCall`'s call: one of the message type's tools (typed input), or a dynamic one. */
export type InferUIMessageToolCall<UI_MESSAGE extends UIMessage> =
  | ValuesOf<{
      [NAME in keyof InferUIMessageTools<UI_MESSAGE>]: ToolCallOf<
        NAME & string,
        InferUIMessageTools<UI_MESSAGE>[NAME] extends { input: infer INPUT } ? INPUT : never
      > & { dynamic?: false };
    }>
  | (ToolCallOf<string, unknown> & { dynamic: true });

/** A `data-NAME` chunk; `transient` ones reach `onData` only, never a message. */
type DataUIMessageChunk<DATA_TYPES extends UIDataTypes> = ValuesOf<{
  [NAME in keyof DATA_TYPES & string]: { type: `data-${NAME}`; id?: string; data: DATA_TYPES[NAME]; transient?: boolean };
}>;

/** One chunk of the AI SDK's UI message stream: what a `ChatTransport`'s streams carry. */
export type UIMessageChunk<METADATA = unknown, DATA_TYPES extends UIDataTypes = UIDataTypes> =
  | { type: "text-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "text-delta"; delta: string; id: string; providerMetadata?: ProviderMetadata }
  | { type: "text-end"; citations?: Array<Citation>; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-end"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "custom"; kind: `${string}.${string}`; providerMetadata?: ProviderMetadata }
  | { type: "error"; errorText: string }
  | {
      type: "tool-input-available";
      toolCallId: string;
      toolName: string;
      input: unknown;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
      toolMetadata?: JSONObject;
      dynamic?: boolean;
      title?: string;
    }
  | {
      type: "tool-input-error";
      toolCallId: string;
      toolName: string;
      input: unknown;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
      toolMetadata?: JSONObject;
      dynamic?: boolean;
      errorText: string;
      title?: string;
    }
  | {
      type: "tool-approval-request";
      approvalId: string;
      toolCallId: string;
      approvalDescriptor?: unknown;
      inputSchemaInput?: unknown;
      reason?: string;
      isAutomatic?: boolean;
      signature?: string;
    }
  | {
      type: "tool-approval-response";
      approvalId: string;
      approved: boolean;
      reason?: string;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
    }
  | {
      type: "tool-output-available";
      toolCallId: string;
      output: unknown;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
      toolMetadata?: JSONObject;
      dynamic?: boolean;
      preliminary?: boolean;
    }
  | {
      type: "tool-output-error";
      toolCallId: string;
      errorText: string;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
      toolMetadata?: JSONObject;
      dynamic?: boolean;
    }
  | { type: "tool-output-denied"; toolCallId: string }
  | {
      type: "tool-input-start";
      toolCallId: string;
      toolName: string;
      inputEncoding?: "json" | "text";
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
      toolMetadata?: JSONObject;
      dynamic?: boolean;
      title?: string;
    }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "source-url"; sourceId: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
  | {
      type: "source-document";
      sourceId: string;
      mediaType: string;
      title: string;
      filename?: string;
      providerMetadata?: ProviderMetadata;
    }
  | { type: "file"; url: string; mediaType: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-file"; url: string; mediaType: string; providerMetadata?: ProviderMetadata }
  | DataUIMessageChunk<DATA_TYPES>
  | { type: "steering-message"; id: string; parts: Array<TextUIPart | FileUIPart> }
  | { type: "start-step" }
  | { type: "finish-step" }
  /** Drops the parts the current step added. */
  | { type: "reset-step" }
  | { type: "start"; messageId?: string; messageMetadata?: METADATA }
  | { type: "finish"; finishReason?: FinishReason; messageMetadata?: METADATA }
  | { type: "abort"; reason?: string }
  | { type: "message-metadata"; messageMetadata: METADATA };

/** The chunk type of a message type's stream (its metadata and data part types). */
export type InferUIMessageChunk<T extends UIMessage> = UIMessageChunk<InferUIMessageMetadata<T>, InferUIMessageData<T>>;

/** What one request adds: headers, body keys, and metadata for the transport's hooks. */
export type ChatRequestOptions = {
  headers?: Record<string, string> | Headers;
  body?: object;
  /** Given to `prepareSendMessagesRequest` as `requestMetadata`; never sent by itself. */
  metadata?: unknown;
};

/**
 * How a chat reaches its server: `ai`'s `DefaultChatTransport`, `TextStreamChatTransport`, or
 * your own object. The store reads the chunks the returned streams carry.
 */
export interface ChatTransport<UI_MESSAGE extends UIMessage = UIMessage> {
  /** A reconnect replays the answer from its start (its first `start` chunk resets the message). */
  readonly resumeStreamIsReplay?: boolean;
  /** Releases what the transport holds open (sockets, ...). */
  close?: () => void;
  /** Posts the conversation (a new user message, or a regenerate) and streams the answer. */
  sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      /** The message regenerated, or `undefined` for a new one. */
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>>;
  /** Follows the chat's running answer, or resolves `null` when none runs. */
  reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null>;
}

/** Where the chat is: `submitted` (waiting for the answer's first chunk), `streaming`, `ready`, `error`. */
export type ChatStatus = "submitted" | "streaming" | "ready" | "error";

/** A message to send: the message type without `id` and `role`, both optional. */
export type CreateUIMessage<UI_MESSAGE extends UIMessage> = Omit<UI_MESSAGE, "id" | "role"> & {
  id?: UI_MESSAGE["id"];
  role?: UI_MESSAGE["role"];
};

/**
 * A validator of `T`, as `ai` takes one: a Standard Schema (zod 3.24+/4, valibot, arktype, ...),
 * an `ai` `Schema` (`jsonSchema()`, `zodSchema()`) or a function returning one.
 */
export type FlexibleSchema<T = any> =
  | { readonly "~standard": { readonly validate: (value: unknown) => unknown } }
  | { readonly jsonSchema: unknown; readonly validate?: (value: unknown) => unknown; readonly _type?: T }
  | (() => { readonly jsonSchema: unknown })
  | { readonly _def: unknown; readonly safeParseAsync: (value: unknown) => unknown };

/** A schema per data part name (without `data-`). */
export type UIDataTypesToSchemas<T extends UIDataTypes> = { [K in keyof T]: FlexibleSchema<T[K]> };

export type ChatOnErrorCallback = (error: Error) => void;
/** A tool call for the client to run: answer with `addToolOutput` (not awaited inside). */
export type ChatOnToolCallCallback<UI_MESSAGE extends UIMessage = UIMessage> = (options: {
  toolCall: InferUIMessageToolCall<UI_MESSAGE>;
}) => void | PromiseLike<void>;
/** Each data part as it arrives, transient ones included. */
export type ChatOnDataCallback<UI_MESSAGE extends UIMessage> = (dataPart: DataUIPart<InferUIMessageData<UI_MESSAGE>>) => void;
/** After every answer, a stopped, dropped or failed one included (the flags say which). */
export type ChatOnFinishCallback<UI_MESSAGE extends UIMessage> = (options: {
  /** The assistant message of this answer. */
  message: UI_MESSAGE;
  /** The whole conversation, that message included. */
  messages: UI_MESSAGE[];
  isAbort: boolean;
  /** The connection dropped. */
  isDisconnect: boolean;
  isError: boolean;
  finishReason?: FinishReason;
}) => void;

/** Answers a tool approval request (`part.approval.id`). */
export type ChatAddToolApproveResponseFunction = (args: {
  id: string;
  approved: boolean;
  reason?: string;
  /** Used by the request `sendAutomaticallyWhen` may send next. */
  options?: ChatRequestOptions;
}) => void | PromiseLike<void>;

/**
 * Gives a client-run tool call its output (or its error). `tool` types `output`; it may be left
 * out (the store finds the call by `toolCallId`), as when answering `snapshot.pending.questions`.
 */
export type ChatAddToolOutputFunction<UI_MESSAGE extends UIMessage> = <TOOL extends keyof InferUIMessageTools<UI_MESSAGE>>(
  args: ToolOutputInput<UI_MESSAGE, TOOL>,
) => void | PromiseLike<void>;

/** What `addToolOutput` takes: the call, and its output (typed by `tool`) or its error. */
export type ToolOutputInput<UI_MESSAGE extends UIMessage, TOOL extends keyof InferUIMessageTools<UI_MESSAGE>> = {
  tool?: TOOL;
  toolCallId: string;
  /** Used by the request `sendAutomaticallyWhen` may send next. */
  options?: ChatRequestOptions;
} & (
  | {
      state?: "output-available";
      output: InferUIMessageTools<UI_MESSAGE>[TOOL]["output"];
      errorText?: never;
    }
  | { state: "output-error"; output?: never; errorText: string }
);

/**
 * Sends a message, then streams the answer. Text (with files), files alone, or a whole message
 * (`{role: 'user', parts}`); with `messageId`, that user message is replaced and what follows
 * it dropped. With no message, it asks for an answer to the conversation as it is.
 */
export type ChatSendMessageFunction<UI_MESSAGE extends UIMessage> = (
  message?:
    | (CreateUIMessage<UI_MESSAGE> & { text?: never; files?: never; messageId?: string })
    | {
        text: string;
        files?: FileList | FileUIPart[];
        metadata?: InferUIMessageMetadata<UI_MESSAGE>;
        parts?: never;
        messageId?: string;
      }
    | {
        files: FileList | FileUIPart[];
        metadata?: InferUIMessageMetadata<UI_MESSAGE>;
        parts?: never;
        messageId?: string;
      },
  options?: ChatRequestOptions,
) => Promise<void>;

/** The AI SDK's chat options (`ai`'s `ChatInit`). */
export interface ChatInit<UI_MESSAGE extends UIMessage> {
  /** The chat id (the store's session id); default `generateId()`. */
  id?: string;
  /** Checks each answer's metadata; a failure ends the turn with its error. */
  messageMetadataSchema?: FlexibleSchema<UI_MESSAGE["metadata"]>;
  /** Checks each data part's `data`, by name. */
  dataPartSchemas?: UIDataTypesToSchemas<InferUIMessageData<UI_MESSAGE>>;
  /** The messages a new chat starts with (when the server's history has none). */
  messages?: UI_MESSAGE[];
  /** Makes the chat id and the messages' ids. */
  generateId?: () => string;
  /** Default: the AI SDK's `/api/chat` route, as `new DefaultChatTransport()` would post to it. */
  transport?: ChatTransport<UI_MESSAGE>;
  onError?: ChatOnErrorCallback;
  onToolCall?: ChatOnToolCallCallback<UI_MESSAGE>;
  onFinish?: ChatOnFinishCallback<UI_MESSAGE>;
  onData?: ChatOnDataCallback<UI_MESSAGE>;
  /** Asked after each answer and each tool output/approval: `true` sends the conversation again. */
  sendAutomaticallyWhen?: (options: { messages: UI_MESSAGE[] }) => boolean | PromiseLike<boolean>;
}

/**
 * The store's own options that `useChat` and `Chat` take besides the AI SDK's: its server family
 * (`baseUrl`, `routes`, `capabilities`, `protocol`), request shaping (`headers`, `body`,
 * `credentials`, `fetch`, `prepareSendMessagesRequest`), `onEvent`, limits, retries. The AI
 * SDK's names (`id`, `onData`, `onError`, `onFinish`, `onToolCall`, `sendAutomaticallyWhen`) are
 * `ChatInit`'s here.
 */
export type ChatStoreExtraOptions = Partial<
  Omit<StoreOptions, "sessionId" | "onData" | "onError" | "onFinish" | "onToolCall" | "sendAutomaticallyWhen">
> & {
  /** Turns a file into a URL before it is sent (an upload), instead of sending its bytes. */
  uploadFile?: (file: FileUIPart) => Promise<{
    url: string;
    mediaType?: string;
    filename?: string;
    providerReference?: Record<string, string>;
  }>;
};

/** What `new Chat(...)` takes: the AI SDK's options and the store's. */
export type ChatOptions<UI_MESSAGE extends UIMessage = UIMessage> = ChatInit<UI_MESSAGE> & ChatStoreExtraOptions;

/** How often `useChat` re-renders, and whether it follows a running answer on mount. */
export type UseChatRenderOptions = {
  /** At most one re-render per this many ms (default: every change). */
  throttle?: number;
  /** @deprecated Use `throttle`. */
  experimental_throttle?: number;
  /** On mount, follows an answer the server is still running (a reload). */
  resume?: boolean;
};

/** `useChat`'s options: a shared `Chat`, or a chat's options (the AI SDK's and the store's). */
export type UseChatOptions<UI_MESSAGE extends UIMessage = UIMessage> = (
  | { chat: Chat<UI_MESSAGE> }
  | ChatOptions<UI_MESSAGE>
) &
  UseChatRenderOptions;

/** What `useChat` returns: `@ai-sdk/react`'s fields, then the store's own. */
export type UseChatHelpers<UI_MESSAGE extends UIMessage = UIMessage> = {
  readonly id: string;
  messages: UI_MESSAGE[];
  /** Replaces the conversation locally (no request), e.g. before `regenerate()`. */
  setMessages: (messages: UI_MESSAGE[] | ((messages: UI_MESSAGE[]) => UI_MESSAGE[])) => void;
  sendMessage: ChatSendMessageFunction<UI_MESSAGE>;
  regenerate: (options?: { messageId?: string } & ChatRequestOptions) => Promise<void>;
  stop: () => Promise<void>;
  resumeStream: (options?: ChatRequestOptions) => Promise<void>;
  addToolOutput: ChatAddToolOutputFunction<UI_MESSAGE>;
  /** @deprecated Use `addToolOutput`. */
  addToolResult: ChatAddToolOutputFunction<UI_MESSAGE>;
  addToolApprovalResponse: ChatAddToolApproveResponseFunction;
  status: ChatStatus;
  /** As the AI SDK words it, with the store's `code` (and HTTP `status`) on it. */
  error: Error | undefined;
  clearError: () => void;
  /** The store under the chat (`chat.store`). */
  readonly store: ChatStore;
  /** A turn is on its way (`submitted` or `streaming`). */
  readonly busy: boolean;
  readonly queued: Snapshot["queued"];
  readonly composer: Snapshot["composer"] | null;
  readonly pending: Snapshot["pending"];
  readonly sessions: Snapshot["sessions"] | null;
  readonly capabilities: Snapshot["capabilities"] | null;
};

/** @deprecated Use `FileUIPart`. */
export type UseChatFilePart = FileUIPart;
/** @deprecated Use `ChatRequestOptions`. */
export type UseChatRequestOptions = ChatRequestOptions;
/** @deprecated Use `FlexibleSchema`. */
export type UseChatSchema = FlexibleSchema;
