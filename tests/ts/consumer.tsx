// Uses every public API of the package; `tsc --strict --noEmit` must accept it.
import {
  ChatStore,
  SseDecoder,
  replayPiStream,
  replayPiNativeEvents,
  replayUiMessageStream,
  type ChatSnapshot,
  type ChatStoreError,
  type QueuedItem,
  type SessionItem,
  type SubmitResult,
  type UIMessage,
  type UIMessagePart,
} from 'agent-chat-store';
import { useChat, useChatStore, useCreateChatStore, useSessions } from 'agent-chat-store/react';
import { ChatStore as AiSdkChatStore, type ChatSnapshot as AiSdkSnapshot } from 'agent-chat-store/ai-sdk';
import { useChat as useAiSdkChat } from 'agent-chat-store/ai-sdk/react';
import {
  useChatStoreRuntime, convertUIMessage, usePending, usePendingApprovals, usePendingQuestions,
  createAttachmentAdapter, createToolAnswerCallbacks, waitsForUser, nestedMessages, DEFAULT_FILE_TYPES,
} from 'agent-chat-store/assistant-ui';

const store = new ChatStore({
  baseUrl: '/',
  sessionId: 's1',
  capabilities: { nativeFollowUp: true },
  headers: () => ({ authorization: 'Bearer x' }),
  credentials: 'include',
  fetch: (input, init) => fetch(input, init),
  throttleMs: 16,
  onData: (d) => console.log(d.name, d.data, d.transient),
  onError: (e: ChatStoreError) => console.log(e.code, e.serverCode, e.status),
  limits: { maxEventBytes: 1 << 20, maxMessages: 1000 },
  retry: { maxAttempts: 3 },
  hydrate: true,
  sendAutomaticallyWhen: 'lastAssistantMessageIsCompleteWithToolCalls',
  routes: { chat: '/api/chat', sessions: '/api/sessions', session: '/api/sessions/{sessionId}' },
  sessionPageSize: 50,
  onSessionChange: (id: string) => history.replaceState(null, '', `?session=${id}`),
});
const custom = new ChatStore({ sessionId: 's9', sendAutomaticallyWhen: ({ messages }) => messages.length > 2 });
custom.dispose();
const unsubscribe: () => void = store.subscribe(() => {});
const snap: ChatSnapshot = store.getSnapshot();
const m: UIMessage | undefined = snap.messages[0];
const p: UIMessagePart | undefined = m?.parts[0];
if (p && p.type === 'text') console.log(p.text.length, p.state);
if (p && p.type === 'dynamic-tool') console.log(p.toolName, p.state, p.input, p.details);
const q: QueuedItem | undefined = snap.queued[0];
console.log(q?.clientSeq, q?.clientNonce, q?.state, snap.composer.canSend, snap.composer.hint, snap.turnId, snap.hydrated, snap.capabilitiesLoaded, snap.status, snap.error?.code);
store.setDraft('hi');
store.setDraftFiles([{ mediaType: 'image/png', url: 'data:image/png;base64,AA==' }]);
const r: SubmitResult = store.submit();
if (r.kind === 'blocked') console.log(r.reason);
store.send('again', [{ mediaType: 'text/plain', filename: 'a.txt', url: 'https://x/a.txt' }]);
store.send('edited', [], { messageId: 'm1' });
const added: boolean = store.addToolOutput({ toolCallId: 'c1', output: { city: 'Paris' } });
store.addToolOutput({ toolCallId: 'c2', errorText: 'denied by the browser', options: { headers: { 'x-a': '1' } } });
store.addToolApprovalResponse({ id: 'ap1', approved: false, reason: 'not now' });
const continued: boolean = store.continueTurn();
console.log(added, continued, snap.tools.map((t) => t.name), snap.canRegenerate);
const busy: boolean = snap.busy;
if (busy) store.stop();
store.stop();
store.switchSession('s2');
const loading: boolean = store.loadSessions() || store.loadSessions({ archived: true });
store.loadMoreSessions();
const fresh: string | undefined = store.newSession();
store.renameSession('s2', 'Trip');
store.archiveSession('s2');
store.archiveSession('s2', false);
store.deleteSession('s2');
const item: SessionItem | undefined = snap.sessions.items[0];
console.log(loading, fresh, item?.title ?? 'New chat', item?.local, item?.running, snap.sessions.hasMore, snap.sessions.error?.code, snap.sessions.available);
const removed: boolean = store.removeQueued('fu-1');
store.retryQueued('fu-1');
store.regenerate();
store.regenerate('m1');
unsubscribe();
store.dispose();

const replay = replayUiMessageStream([{ type: 'start' }], { messageId: 'x' });
console.log(replay.message.id, replay.finishReason, replay.error?.message, removed);
console.log(replayPiStream([]).messages.length);
const native = replayPiNativeEvents([{ type: 'agent-start', seq: 1, turnId: 't' }], { state: undefined });
const nativeStatus: 'ready' | 'streaming' | 'error' = native.status;
console.log(native.seq + native.queued.length, nativeStatus);
const dec = new SseDecoder();
const events: string[] = [...dec.push(new Uint8Array()), ...dec.finish()];
console.log(events);

export function Chat() {
  const s = useChatStore(store);
  const owned = useCreateChatStore({ sessionId: 's3' });
  const maybe = useChatStore(owned);
  const runtime = useChatStoreRuntime(owned, { threadList: true });
  const sessions = useSessions(owned, { archived: true });
  const p = usePending(owned);
  p.approve(p.approvals[0]!.approvalId, 'ok');
  p.deny('x');
  p.answer('c', 'red');
  console.log(usePendingApprovals(owned).pending, snap.pending.questions[0]?.question);
  usePendingQuestions(owned).answer('c', 1);
  useChatStoreRuntime(owned, { attachments: false, adapters: { attachments: createAttachmentAdapter({ fileTypes: DEFAULT_FILE_TYPES }) } });
  void createToolAnswerCallbacks(owned).onRespondToToolApproval({ approvalId: 'a', approved: true });
  const w: boolean = waitsForUser(snap.messages[0]!.parts[0]!);
  console.log(w, nestedMessages('c', {}));
  console.log(sessions.current, sessions.items.length, sessions.loadMore(), sessions.create());
  console.log(maybe?.status, runtime, convertUIMessage);
  return (
    <div>
      {s.messages.map((msg) => <p key={msg.id}>{msg.role}</p>)}
      {s.queued.map((item) => <p key={item.id}>{item.text}</p>)}
      <button disabled={!s.composer.canSend} onClick={() => store.submit()}>Send</button>
      {s.composer.hint}
    </div>
  );
}

// The drop-in `useChat` as the AI SDK's documentation writes it, the request shaped by the store's
// own `body` and `prepareSendMessagesRequest` options (no `ai` here: see use-chat-ai.tsx).
export function DocsChat() {
  const { messages, sendMessage, status, stop, error, regenerate, addToolOutput, setMessages } = useChat({
    body: { model: "m" },
    prepareSendMessagesRequest: ({ body, messages: m }) => ({ body: { ...body, messages: m } }),
    onFinish: ({ message, messages: all, isAbort, isDisconnect, isError, finishReason }) => {
      const n: number = all.length + message.parts.length;
      const flags: boolean[] = [isAbort, isDisconnect, isError];
      const reason: string | undefined = finishReason;
      void [n, flags, reason];
    },
    onToolCall: async ({ toolCall }) => {
      if (toolCall.toolName === "getLocation") void addToolOutput({ tool: "getLocation", toolCallId: toolCall.toolCallId, output: "Paris", options: { body: { model: "m" } } });
    },
    onData: (part) => void part.data,
    experimental_throttle: 50,
  });
  return (
    <div>
      {messages.map((m) => (
        <div key={m.id}>{m.parts.map((p, i) => (p.type === "text" ? <span key={i}>{p.text}</span> : null))}</div>
      ))}
      {error && <button onClick={() => void regenerate()}>Retry</button>}
      <button onClick={() => void sendMessage({ text: "hi" }, { body: { model: "x" }, headers: { "x-a": "1" } })} disabled={status !== "ready"}>
        Send
      </button>
      <button onClick={() => void stop()}>Stop</button>
      <button onClick={() => setMessages((old) => old.slice(0, -1))}>Undo</button>
    </div>
  );
}

// The AI SDK build: the same types, its own module.
export function AiSdkBuildChat() {
  // A transport is any object with these two methods (as the `ai` package's `ChatTransport`).
  const { messages, sendMessage, status } = useAiSdkChat({
    transport: {
      sendMessages: async ({ messages: sent }) =>
        new ReadableStream({ start: (c) => { c.enqueue({ type: "text-start", id: `t${sent.length}` }); c.close(); } }),
      reconnectToStream: async () => null,
    },
  });
  const direct = new AiSdkChatStore({ baseUrl: "/", sessionId: "s" });
  const snap: AiSdkSnapshot = direct.getSnapshot();
  void snap.status;
  return <button onClick={() => void sendMessage({ text: "hi" })} disabled={status !== "ready"}>{messages.length}</button>;
}
