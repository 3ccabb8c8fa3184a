// `useChat` for an app without the `ai` package: our own types only. tsconfig.json here maps
// `ai` and `@ai-sdk/*` to a module that exports nothing, so the package's .d.ts must not need them.
import { useState } from 'react';
import {
  Chat,
  DefaultToolUI,
  ToolPart,
  useChat,
  useChatStore,
  type ChatOnFinishCallback,
  type ChatTransport,
  type DynamicToolUIPart,
  type FileUIPart,
  type InferUIMessageChunk,
  type ToolUIPart,
  type UIMessage,
  type UIMessageChunk,
} from 'agent-chat-store/react';

type Note = { title: string; body: string };
type NotesMessage = UIMessage<
  { model: string; tokens?: number },
  { note: Note; status: { text: string } },
  { saveNote: { input: Note; output: { id: string } }; search: { input: { q: string }; output: string[] } }
>;

// A transport over a fetch of our own: the route answers a UI message stream of JSON lines.
const lines: ChatTransport<NotesMessage> = {
  async sendMessages({ chatId, messages, abortSignal, trigger, messageId, headers, body }) {
    const res = await fetch(`/notes/${chatId}`, {
      method: 'POST',
      signal: abortSignal,
      headers: { 'content-type': 'application/json', ...(headers instanceof Headers ? {} : headers) },
      body: JSON.stringify({ ...body, trigger, messageId, messages }),
    });
    if (!res.ok || !res.body) throw new Error(await res.text());
    let rest = '';
    return res.body.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TransformStream<string, UIMessageChunk>({
        transform(text, out) {
          const all = (rest + text).split('\n');
          rest = all.pop() ?? '';
          for (const line of all) if (line.trim()) out.enqueue(JSON.parse(line) as UIMessageChunk);
        },
      }),
    );
  },
  async reconnectToStream({ chatId }) {
    const res = await fetch(`/notes/${chatId}/stream`);
    return res.status === 204 || !res.body ? null : res.body.pipeThrough(new TransformStream<Uint8Array, UIMessageChunk>());
  },
};

// The predicate an app writes itself when it has no `ai` to import it from.
function allToolsAnswered({ messages }: { messages: NotesMessage[] }): boolean {
  const last = messages.at(-1);
  if (!last || last.role !== 'assistant') return false;
  const tools = last.parts.filter((p): p is ToolUIPart<{ saveNote: { input: Note; output: { id: string } }; search: { input: { q: string }; output: string[] } }> | DynamicToolUIPart =>
    p.type.startsWith('tool-') || p.type === 'dynamic-tool');
  return tools.length > 0 && tools.every((p) => p.state === 'output-available' || p.state === 'output-error');
}

const logFinish: ChatOnFinishCallback<NotesMessage> = ({ message, isError, finishReason }) => {
  if (!isError) console.log(message.metadata?.model, finishReason);
};

export function Notes() {
  const [text, setText] = useState('');
  const { messages, sendMessage, status, addToolOutput, addToolApprovalResponse, error, stop, store, busy, pending } =
    useChat<NotesMessage>({
      transport: lines,
      sendAutomaticallyWhen: allToolsAnswered,
      onFinish: logFinish,
      onToolCall: async ({ toolCall }) => {
        if (!toolCall.dynamic && toolCall.toolName === 'search') {
          void addToolOutput({ tool: 'search', toolCallId: toolCall.toolCallId, output: [toolCall.input.q] });
        }
      },
      onData: (part) => {
        if (part.type === 'data-status') setText(part.data.text);
      },
    });
  const snapshot = useChatStore(store);
  // A question the server asks (pending.questions) is answered by its call id alone.
  const answer = (toolCallId: string) => void addToolOutput({ toolCallId, output: { id: 'n1' } });
  const attach = (f: FileUIPart) => void sendMessage({ files: [f], metadata: { model: 'small' } });
  return (
    <section data-busy={busy} data-approvals={pending.approvals.length} data-draft={snapshot?.composer.canSend}>
      {messages.map((m) => (
        <div key={m.id}>
          {m.parts.map((part, i) => {
            if (part.type === 'data-note') return <h3 key={i}>{part.data.title}</h3>;
            if (part.type === 'tool-saveNote') {
              if (part.state === 'approval-requested') {
                return (
                  <button key={i} onClick={() => void addToolApprovalResponse({ id: part.approval.id, approved: true })}>
                    Save {part.input.title}?
                  </button>
                );
              }
              if (part.state === 'output-available') return <a key={i} href={`/n/${part.output.id}`}>saved</a>;
              return <DefaultToolUI key={i} part={part} />;
            }
            if (part.type === 'tool-search' || part.type === 'dynamic-tool') return <ToolPart key={i} part={part} />;
            return part.type === 'text' ? <p key={i}>{part.text}</p> : null;
          })}
        </div>
      ))}
      {error && <output>{error.message}</output>}
      <input value={text} onChange={(e) => setText(e.target.value)} />
      <button disabled={status !== 'ready'} onClick={() => void sendMessage({ text })}>Send</button>
      <button onClick={() => void sendMessage({ role: 'user', parts: [{ type: 'text', text }] })}>Send parts</button>
      <button onClick={() => attach({ type: 'file', mediaType: 'text/plain', url: 'data:text/plain,hi' })}>Attach</button>
      <button onClick={() => void stop()}>Stop</button>
      {pending.questions.map((q) => <button key={q.toolCallId} onClick={() => answer(q.toolCallId)}>Answer</button>)}
    </section>
  );
}

// One chat shared by a header and the page.
const notesChat = new Chat<NotesMessage>({ transport: lines, baseUrl: '/', throttle: 50 });
export function NotesHeader() {
  const { status, messages, store } = useChat({ chat: notesChat });
  void store.getSnapshot().sessionId;
  return <header data-status={status}>{messages.filter((m) => m.role === 'user').length}</header>;
}
export function NotesPage() {
  const { messages, regenerate, setMessages } = useChat({ chat: notesChat, experimental_throttle: 30 });
  const lastChunk: InferUIMessageChunk<NotesMessage> = { type: 'message-metadata', messageMetadata: { model: 'm' } };
  void lastChunk;
  return (
    <main>
      {messages.length}
      <button onClick={() => void regenerate()}>Again</button>
      <button onClick={() => setMessages([])}>Clear</button>
    </main>
  );
}

// The default message type, without options at all.
export function Bare() {
  const { messages, sendMessage } = useChat();
  const firstText = messages[0]?.parts.find((p) => p.type === 'text');
  return <button onClick={() => void sendMessage({ text: 'hi' })}>{firstText?.text}</button>;
}
