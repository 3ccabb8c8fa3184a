// `useChat` code as an `@ai-sdk/react` app has it, with the import changed to ours, next to the
// `ai` package: its transports, helpers and types must meet ours under `tsc --strict`.
// (Not in tests/packaging's copy: that consumer installs no `ai`; see no-ai/ for that case.)
import {
  DefaultChatTransport,
  TextStreamChatTransport,
  getToolName,
  isStaticToolUIPart,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type ChatTransport as AiChatTransport,
  type UIMessage as AiUIMessage,
  type UIMessageChunk as AiUIMessageChunk,
  type FileUIPart as AiFileUIPart,
  type ChatInit as AiChatInit,
  type ChatOnFinishCallback as AiChatOnFinishCallback,
  type ChatRequestOptions as AiChatRequestOptions,
  type ChatStatus as AiChatStatus,
  type CreateUIMessage as AiCreateUIMessage,
  type DataUIPart as AiDataUIPart,
  type DynamicToolUIPart as AiDynamicToolUIPart,
  type InferUIMessageChunk,
  type ToolUIPart as AiToolUIPart,
  type UIMessagePart as AiUIMessagePart,
} from 'ai';
import { jsonSchema, zodSchema } from 'ai';
import { useState } from 'react';
import { z } from 'zod';
import {
  Chat,
  ToolPart,
  useChat,
  type ChatTransport,
  type UIMessage,
  type UIMessageChunk,
  type UseChatHelpers,
  type ChatInit,
  type ChatOnFinishCallback,
  type ChatRequestOptions,
  type ChatStatus,
  type CreateUIMessage,
  type DataUIPart,
  type DynamicToolUIPart,
  type ToolUIPart,
  type UIMessagePart,
} from 'agent-chat-store/react';

type Forecast = { city: string; celsius: number };
type AppMessage = UIMessage<
  { createdAt: number },
  { weather: { city: string }; progress: { done: number } },
  {
    getWeather: { input: { city: string }; output: string };
    forecast: { input: { city: string; days: number }; output: Forecast[] };
  }
>;

// Typed messages, typed tool parts, approvals, automatic continuation, the usual transport.
export function WeatherChat({ token }: { token: string }) {
  const [draft, setDraft] = useState('');
  const { messages, sendMessage, status, stop, error, regenerate, addToolOutput, addToolApprovalResponse, clearError } =
    useChat<AppMessage>({
      transport: new DefaultChatTransport({
        api: '/api/weather-chat',
        headers: () => ({ authorization: `Bearer ${token}` }),
        body: { units: 'metric' },
        credentials: 'include',
        prepareSendMessagesRequest: ({ id, messages: all, body, requestMetadata }) => ({
          body: { ...body, id, last: all[all.length - 1], hint: requestMetadata },
        }),
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onToolCall: ({ toolCall }) => {
        if (toolCall.dynamic) return;
        if (toolCall.toolName === 'getWeather') {
          const city: string = toolCall.input.city;
          void addToolOutput({ tool: 'getWeather', toolCallId: toolCall.toolCallId, output: `sunny in ${city}` });
        }
      },
      onData: (part) => {
        if (part.type === 'data-progress') console.log(part.data.done);
        else console.log(part.data.city);
      },
      onFinish: ({ message, messages: all, isAbort, isDisconnect, isError, finishReason }) => {
        const started: number | undefined = message.metadata?.createdAt;
        console.log(all.length, started, isAbort || isDisconnect || isError, finishReason ?? 'none');
      },
      onError: (e) => console.error(e.message),
      experimental_throttle: 40,
    });

  return (
    <div>
      {messages.map((message) => (
        <article key={message.id} data-role={message.role}>
          {message.metadata && <time>{new Date(message.metadata.createdAt).toISOString()}</time>}
          {message.parts.map((part, i) => {
            switch (part.type) {
              case 'text':
                return <p key={i}>{part.text}</p>;
              case 'reasoning':
                return <details key={i}>{part.text}</details>;
              case 'file':
                return <img key={i} src={part.url} alt={part.filename ?? part.mediaType} />;
              case 'source-url':
                return <a key={i} href={part.url}>{part.title ?? part.url}</a>;
              case 'data-weather':
                return <small key={i}>{part.data.city}</small>;
              case 'data-progress':
                return <progress key={i} value={part.data.done} />;
              case 'tool-getWeather':
                switch (part.state) {
                  case 'input-streaming':
                    return <pre key={i}>{part.input?.city ?? '...'}</pre>;
                  case 'input-available':
                    return <span key={i}>Looking up {part.input.city}</span>;
                  case 'approval-requested':
                    return (
                      <span key={i}>
                        {part.input.city}?
                        <button onClick={() => void addToolApprovalResponse({ id: part.approval.id, approved: true })}>Yes</button>
                        <button
                          onClick={() =>
                            void addToolApprovalResponse({ id: part.approval.id, approved: false, reason: 'not now' })
                          }
                        >
                          No
                        </button>
                      </span>
                    );
                  case 'approval-responded':
                    return <span key={i}>{part.approval.approved ? 'approved' : 'denied'}</span>;
                  case 'output-available': {
                    const text: string = part.output;
                    return <span key={i}>{text}</span>;
                  }
                  case 'output-error':
                    return <em key={i}>{part.errorText}</em>;
                  case 'output-denied':
                    return <em key={i}>denied: {part.approval.reason ?? ''}</em>;
                }
                return null;
              case 'tool-forecast':
                if (part.state === 'output-available') {
                  const days: Forecast[] = part.output;
                  return <ul key={i}>{days.map((d) => <li key={d.city}>{d.celsius}</li>)}</ul>;
                }
                return null;
              case 'dynamic-tool':
                return <code key={i}>{part.toolName}: {part.state}</code>;
              default:
                return null;
            }
          })}
        </article>
      ))}
      {error && (
        <p>
          {error.message} <button onClick={() => void regenerate()}>Retry</button>
          <button onClick={clearError}>Dismiss</button>
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void sendMessage({ text: draft, metadata: { createdAt: Date.now() } }, { body: { temperature: 0.2 } });
          setDraft('');
        }}
      >
        <input value={draft} onChange={(e) => setDraft(e.target.value)} disabled={status !== 'ready'} />
        {(status === 'submitted' || status === 'streaming') && <button onClick={() => void stop()}>Stop</button>}
      </form>
    </div>
  );
}

// The other send forms, and `ai`'s part helpers on our parts.
export function SendForms({ files }: { files: FileList | null }) {
  const chat = useChat<AppMessage>({ transport: new TextStreamChatTransport({ api: '/api/text' }) });
  const pdf: AiFileUIPart = { type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,AA==' };
  const send = async () => {
    await chat.sendMessage({ role: 'user', parts: [{ type: 'text', text: 'hello' }, pdf], metadata: { createdAt: 1 } });
    await chat.sendMessage({ parts: [{ type: 'text', text: 'no role' }] });
    if (files) await chat.sendMessage({ files });
    await chat.sendMessage({ text: 'with a picture', files: [pdf] });
    await chat.sendMessage({ text: 'edited', messageId: chat.messages[0]?.id });
    await chat.sendMessage();
    await chat.regenerate({ messageId: chat.messages.at(-1)?.id, headers: { 'x-retry': '1' } });
    await chat.resumeStream();
    await chat.addToolResult({ tool: 'forecast', toolCallId: 'c1', output: [{ city: 'Oslo', celsius: 3 }] });
    await chat.addToolOutput({ tool: 'getWeather', toolCallId: 'c2', state: 'output-error', errorText: 'offline' });
  };
  const names: string[] = [];
  for (const message of chat.messages) {
    for (const part of message.parts) {
      if (isToolUIPart(part)) names.push(getToolName(part));
      if (isStaticToolUIPart(part) && part.type === 'tool-forecast' && part.state === 'input-available') {
        names.push(`${part.input.city} x${part.input.days}`);
      }
    }
  }
  chat.setMessages((old) => old.filter((m) => m.role !== 'system'));
  // The store's own fields are there too.
  const extras = [chat.busy, chat.queued.length, chat.composer?.canSend, chat.pending.approvals.length, chat.store];
  return <button onClick={() => void send()}>{names.join(',')}{extras.length}</button>;
}

// Inference as `@ai-sdk/react` has it: the part union narrows by `type`.
export function DataCities() {
  const { messages } = useChat<AppMessage>();
  return <>{messages[0].parts.map((p) => (p.type === 'data-weather' ? p.data.city : ''))}</>;
}

// A transport of our own: any object with the two methods.
const echo: ChatTransport<AppMessage> = {
  async sendMessages({ messages, abortSignal, trigger, chatId, messageId, body, headers, metadata }) {
    void [abortSignal, trigger, chatId, messageId, body, headers, metadata];
    const last = messages.at(-1);
    const said = last?.parts.find((p) => p.type === 'text')?.text ?? '';
    return new ReadableStream<UIMessageChunk>({
      start(controller) {
        controller.enqueue({ type: 'start', messageMetadata: { createdAt: Date.now() } });
        controller.enqueue({ type: 'text-start', id: 't' });
        controller.enqueue({ type: 'text-delta', id: 't', delta: said });
        controller.enqueue({ type: 'text-end', id: 't' });
        controller.enqueue({ type: 'data-weather', data: { city: 'Lima' }, transient: true });
        controller.enqueue({ type: 'finish', finishReason: 'stop' });
        controller.close();
      },
    });
  },
  reconnectToStream: async () => null,
};
// Ours is one of `ai`'s, and `ai`'s is one of ours.
const echoForAi: AiChatTransport<AiUIMessage> = echo as ChatTransport<UIMessage>;
const aiTransport: ChatTransport<AppMessage> = new DefaultChatTransport<AppMessage>();
const chunkForAi: AiUIMessageChunk = { type: 'tool-output-denied', toolCallId: 'x' } satisfies UIMessageChunk;
void [echoForAi, aiTransport, chunkForAi];

export function EchoChat() {
  const { messages, sendMessage } = useChat<AppMessage>({
    id: 'echo',
    transport: echo,
    generateId: () => crypto.randomUUID(),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    messages: [{ id: 'm0', role: 'assistant', parts: [{ type: 'text', text: 'Ask me.' }] }],
    // The store's own options stay accepted.
    headers: { 'x-app': 'echo' },
    body: { tenant: 't1' },
    credentials: 'same-origin',
    resume: false,
  });
  return <button onClick={() => void sendMessage({ text: 'ping' })}>{messages.length}</button>;
}

// Without a type argument, and against this store's own server family.
export function PlainChat() {
  const { messages, status, sendMessage, capabilities, sessions } = useChat({
    baseUrl: '/agent',
    capabilities: { nativeFollowUp: true },
    fetch: (input, init) => fetch(input, init),
    throttle: 16,
  });
  return (
    <div data-status={status} data-follow-up={capabilities?.nativeFollowUp} data-sessions={sessions?.items.length}>
      {messages.map((m) =>
        m.parts.map((p, i) =>
          isToolUIPart(p) ? <ToolPart key={i} part={p} /> : p.type === 'text' ? <span key={i}>{p.text}</span> : null,
        ),
      )}
      <button onClick={() => void sendMessage({ text: 'go' })}>Go</button>
    </div>
  );
}

// One `Chat`, two components.
const shared = new Chat<AppMessage>({
  id: 'shared',
  transport: new DefaultChatTransport({ api: '/api/chat' }),
  onFinish: ({ message }) => console.log(message.parts.length),
});

export function SharedList() {
  const { messages } = useChat({ chat: shared });
  const typed: AppMessage[] = messages;
  return <ol>{typed.map((m) => <li key={m.id}>{m.role}</li>)}</ol>;
}

export function SharedInput() {
  const helpers: UseChatHelpers<AppMessage> = useChat({ chat: shared, throttle: 50 });
  return <button onClick={() => void helpers.sendMessage({ text: 'from the other one' })}>{helpers.status}</button>;
}

// The `Chat` itself, as `ai`'s is used.
export async function drive() {
  await shared.sendMessage({ text: 'hi', metadata: { createdAt: 0 } });
  const last: AppMessage | undefined = shared.lastMessage;
  shared.messages = shared.messages.slice(0, 1);
  await shared.addToolApprovalResponse({ id: 'a1', approved: true });
  await shared.stop();
  const snapshot = shared.store.getSnapshot();
  shared.dispose();
  return [last, shared.id, shared.status, shared.error, snapshot.status, shared.generateId()];
}

// Our messages are `ai`'s messages, and back.
export function roundTrip(ours: AppMessage[], theirs: AiUIMessage[]) {
  const toAi: AiUIMessage[] = ours;
  const plain: UIMessage[] = theirs;
  const fromAi: AiUIMessage[] = plain;
  const oneOfOurs: UIMessage = theirs[0];
  return [toAi, fromAi, oneOfOurs];
}

// What must not compile.
import { Chat as AiChat, type UseChatHelpers as AiUseChatHelpers } from '@ai-sdk/react';
import type { AbstractChat } from 'ai';
export function Refusals(aiChat: AiChat<AppMessage>) {
  const { messages, sendMessage, addToolOutput } = useChat<AppMessage>();
  const part = messages[0].parts[0];
  if (part.type === 'data-weather') {
    // @ts-expect-error data-weather has no `days`
    void part.data.days;
  }
  if (part.type === 'tool-getWeather' && part.state === 'output-available') {
    // @ts-expect-error the output is a string
    const n: number = part.output;
    void n;
  }
  // @ts-expect-error the metadata is `{createdAt: number}`
  void sendMessage({ text: 'x', metadata: { createdAt: 'now' } });
  // @ts-expect-error text and parts are exclusive
  void sendMessage({ text: 'x', parts: [] });
  // @ts-expect-error no such tool
  void addToolOutput({ tool: 'nope', toolCallId: 'c', output: '' });
  // @ts-expect-error getWeather's output is a string
  void addToolOutput({ tool: 'getWeather', toolCallId: 'c', output: 3 });
  // @ts-expect-error `ai`'s Chat is not ours (no store)
  useChat({ chat: aiChat });
  // @ts-expect-error a transport is an object with sendMessages/reconnectToStream
  useChat({ transport: { api: '/api/chat' } });
}

// Type for type, both ways: a value of ours is one of `ai`'s and the reverse.
type Both<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type AppData = { weather: { city: string }; progress: { done: number } };
type AppTools = {
  getWeather: { input: { city: string }; output: string };
  forecast: { input: { city: string; days: number }; output: Forecast[] };
};
type AiAppMessage = AiUIMessage<{ createdAt: number }, AppData, AppTools>;
export const sameShapes: [
  Both<AppMessage, AiAppMessage>,
  Both<UIMessage, AiUIMessage>,
  Both<UIMessagePart<AppData, AppTools>, AiUIMessagePart<AppData, AppTools>>,
  Both<ToolUIPart<AppTools>, AiToolUIPart<AppTools>>,
  Both<ToolUIPart, AiToolUIPart>,
  Both<DynamicToolUIPart, AiDynamicToolUIPart>,
  Both<DataUIPart<AppData>, AiDataUIPart<AppData>>,
  Both<UIMessageChunk<{ createdAt: number }, AppData>, InferUIMessageChunk<AiAppMessage>>,
  Both<UIMessageChunk, AiUIMessageChunk>,
  Both<ChatTransport<AppMessage>, AiChatTransport<AiAppMessage>>,
  Both<ChatRequestOptions, AiChatRequestOptions>,
  Both<ChatStatus, AiChatStatus>,
  Both<CreateUIMessage<AppMessage>, AiCreateUIMessage<AiAppMessage>>,
  Both<ChatOnFinishCallback<AppMessage>, AiChatOnFinishCallback<AiAppMessage>>,
  Both<Omit<ChatInit<AppMessage>, 'messageMetadataSchema' | 'dataPartSchemas'>, Omit<AiChatInit<AiAppMessage>, 'messageMetadataSchema' | 'dataPartSchemas' | 'experimental_queue'>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

// Schemas as `ai` takes them: zod, `zodSchema()`, `jsonSchema()`.
export function CheckedChat() {
  const { messages } = useChat<AppMessage>({
    messageMetadataSchema: z.object({ createdAt: z.number() }),
    dataPartSchemas: {
      weather: zodSchema(z.object({ city: z.string() })),
      progress: jsonSchema<{ done: number }>({ type: 'object', properties: { done: { type: 'number' } } }),
    },
  });
  return <>{messages.length}</>;
}

// `ai`'s chat options are ours (schemas included), and our hook's result is `@ai-sdk/react`'s
// (less its experimental queue, which the store has as `queued`).
type AiQueue = 'experimental_queuedMessages' | 'experimental_removeQueuedMessage' | 'experimental_sendQueuedMessageNow';
export function fromAiOptions(init: Omit<AiChatInit<AiAppMessage>, 'experimental_queue'>, ours: UseChatHelpers<AppMessage>) {
  const options: ChatInit<AppMessage> = init;
  const helpers: Omit<AiUseChatHelpers<AiAppMessage>, AiQueue> = ours;
  return [options, helpers, useChat<AppMessage>(init)];
}

// Our `Chat` has `ai`'s `Chat`'s public surface.
type ChatSurface = 'id' | 'generateId' | 'status' | 'error' | 'messages' | 'lastMessage' | 'sendMessage' | 'regenerate'
  | 'resumeStream' | 'clearError' | 'addToolApprovalResponse' | 'addToolOutput' | 'addToolResult' | 'stop';
export const asAiChat: Pick<AbstractChat<AiAppMessage>, ChatSurface> = shared;

// An app that keeps its message type built from `ai`'s `UIMessage`.
export function AiTypedChat() {
  const { messages, addToolOutput, sendMessage } = useChat<AiAppMessage>({
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    onToolCall: ({ toolCall }) => {
      if (!toolCall.dynamic && toolCall.toolName === 'forecast') {
        const days: number = toolCall.input.days;
        void addToolOutput({ tool: 'forecast', toolCallId: toolCall.toolCallId, output: [{ city: 'Rome', celsius: days }] });
      }
    },
    onData: (part) => void (part.type === 'data-weather' ? part.data.city : part.data.done),
  });
  // @ts-expect-error forecast's output is a list
  void addToolOutput({ tool: 'forecast', toolCallId: 'c', output: 'warm' });
  void sendMessage({ text: 'x', metadata: { createdAt: 2 } });
  // @ts-expect-error the metadata is `{createdAt: number}`
  void sendMessage({ text: 'x', metadata: { createdAt: '2' } });
  return <>{messages.map((m) => m.parts.map((p) => (p.type === 'tool-forecast' && p.state === 'output-available' ? p.output.length : 0)))}</>;
}

// No type argument anywhere: everything falls back to the plain `UIMessage`.
export function Untyped({ initial }: { initial: AiUIMessage[] }) {
  const chat = new Chat({ transport: new DefaultChatTransport() });
  const { messages, addToolOutput } = useChat({
    messages: initial,
    transport: new DefaultChatTransport({ api: '/api/plain', fetch: (input, init) => fetch(input, init) }),
    onToolCall: ({ toolCall }) => void addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: null }),
  });
  const other = useChat({ chat });
  return <>{messages.length + other.messages.length}</>;
}
