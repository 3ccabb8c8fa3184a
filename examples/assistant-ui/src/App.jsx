import { createContext, useContext } from "react";
import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  AttachmentPrimitive,
  AuiIf,
  ComposerPrimitive,
  ErrorPrimitive,
  MessagePrimitive,
  QueueItemPrimitive,
  ThreadPrimitive,
  useAuiState,
} from "@assistant-ui/react";
import { useChatStore } from "agent-chat-store/react";
import { useChatStoreRuntime, usePending } from "agent-chat-store/assistant-ui";
import { ErrorBanner, Flag, SessionForm, ToolCatalog } from "../../shared/chrome.jsx";
import { readConfig } from "../../shared/config.js";
import { useExampleStore } from "../../shared/store.js";
import { PendingPanel } from "../../shared/hitl.jsx";
import { PaperclipIcon, PencilIcon, RetryIcon, StopIcon } from "../../shared/icons.jsx";
import { useSessionSwitch } from "../../shared/session.js";
import { PART_COMPONENTS } from "./Parts.jsx";
import { ThreadList } from "./ThreadList.jsx";

const config = readConfig();

// The store and its snapshot, for the few things assistant-ui has no slot for (the queue items'
// delivery state, retry, capabilities, the store's errors that belong to no message).
const ChatContext = createContext(null);
const useChat = () => useContext(ChatContext);

export function App() {
  const { store } = useExampleStore(config);
  const snapshot = useChatStore(store);
  const runtime = useChatStoreRuntime(store);

  const switchTo = useSessionSwitch(store);

  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ChatContext.Provider value={{ store, snapshot }}>
        <div className="shell">
          <ThreadList store={store} />
          <div className="app">
            <Header onSwitch={switchTo} />
            <Thread />
          </div>
        </div>
      </ChatContext.Provider>
    </AssistantRuntimeProvider>
  );
}

function Header({ onSwitch }) {
  const { snapshot } = useChat();
  const current = snapshot.sessionId;
  return (
    <header className="header">
      <div className="header-row">
        <h1>agent-chat-store <span className="muted">assistant-ui</span></h1>
        <SessionForm sessionId={current} onSwitch={onSwitch} />
      </div>
      <div className="header-row meta">
        <span className={"badge status " + snapshot.status} data-testid="status" data-status={snapshot.status}>
          {snapshot.status}
        </span>
        <span className="meta-item" data-testid="session-id">session <code>{snapshot.sessionId}</code></span>
        <span
          className="meta-item"
          data-testid="capabilities"
          data-native-follow-up={String(snapshot.capabilities.nativeFollowUp)}
          data-ai-sdk-owns-history={String(snapshot.capabilities.aiSdkOwnsHistory)}
          data-loaded={String(snapshot.capabilitiesLoaded)}
        >
          <Flag on={snapshot.capabilities.nativeFollowUp}>follow-ups</Flag>
          <Flag on={snapshot.capabilities.aiSdkOwnsHistory}>AI SDK history</Flag>
          {!snapshot.capabilitiesLoaded && <span className="muted"> (loading)</span>}
        </span>
        <span className="meta-item" data-testid="turn-id" data-turn-id={snapshot.turnId ?? ""}>
          turn <code className="turn" title={snapshot.turnId ?? ""}>{snapshot.turnId ?? "—"}</code>
        </span>
      </div>
      <div className="header-row meta">
        <ToolCatalog tools={snapshot.tools} />
      </div>
    </header>
  );
}

function Thread() {
  return (
    <ThreadPrimitive.Root className="thread-root">
      <ThreadPrimitive.Viewport className="thread" data-testid="thread">
        <div className="thread-inner">
          <AuiIf condition={(s) => s.thread.isLoading}>
            <div className="empty muted" data-testid="loading">Loading history…</div>
          </AuiIf>
          <AuiIf condition={(s) => !s.thread.isLoading && s.thread.isEmpty && s.composer.queue.length === 0}>
            <div className="empty" data-testid="empty">
              <h2>Start a conversation</h2>
              <p className="muted">Built with assistant-ui primitives over agent-chat-store.</p>
            </div>
          </AuiIf>

          <ThreadPrimitive.Messages>
            {({ message }) => (message.role === "user" ? <UserMessage /> : <AssistantMessage />)}
          </ThreadPrimitive.Messages>

          {/* Waiting follow-ups, after all messages: assistant-ui's queue, fed by snapshot.queued. */}
          <ComposerPrimitive.Queue>{({ queueItem }) => <QueuedBubble id={queueItem.id} />}</ComposerPrimitive.Queue>

          <StoreError />
        </div>
        <ThreadPrimitive.ViewportFooter className="composer-wrap">
          <PendingBar />
          <Composer />
        </ThreadPrimitive.ViewportFooter>
      </ThreadPrimitive.Viewport>
    </ThreadPrimitive.Root>
  );
}

// A user message, or its edit composer while assistant-ui edits it. Edit is assistant-ui's own
// (`ActionBarPrimitive.Edit`): the runtime offers `onEdit` only while the store can edit (AI SDK
// history, nothing running), so the button is there exactly then; the edit composer's Send is
// the store's `editMessage(sourceId, text, files)`: a new user message beside the old one, which
// stays with its answer as a branch.
function UserMessage() {
  const id = useAuiState((s) => s.message.id);
  return (
    <MessagePrimitive.Root className="message user" data-testid="message" data-role="user" data-id={id}>
      <div className="role">You</div>
      <AuiIf condition={(s) => s.message.composer.isEditing}>
        <EditComposer />
      </AuiIf>
      <AuiIf condition={(s) => !s.message.composer.isEditing}>
        <div className="bubble">
          <MessagePrimitive.Parts components={PART_COMPONENTS} />
          <MessagePrimitive.Attachments>{({ attachment }) => <span className="chip" data-testid="message-attachment">{attachment.name}</span>}</MessagePrimitive.Attachments>
        </div>
        <AuiIf condition={(s) => s.thread.capabilities.edit}>
          <ActionBarPrimitive.Root className="action-bar user" hideWhenRunning>
            <ActionBarPrimitive.Edit className="ghost small" data-testid="edit">
              <PencilIcon /> Edit
            </ActionBarPrimitive.Edit>
          </ActionBarPrimitive.Root>
        </AuiIf>
      </AuiIf>
    </MessagePrimitive.Root>
  );
}

// assistant-ui's edit composer of one message (`ComposerPrimitive` inside `MessagePrimitive`):
// it starts with the message's text and files; Cancel leaves it as it was.
function EditComposer() {
  return (
    <ComposerPrimitive.Root className="composer edit-composer" data-testid="edit-composer">
      <div className="composer-attachments">
        <ComposerPrimitive.Attachments>{() => <ComposerAttachment />}</ComposerPrimitive.Attachments>
      </div>
      <ComposerPrimitive.Input className="composer-input" data-testid="edit-input" minRows={1} maxRows={8} submitMode="enter" autoFocus />
      <div className="composer-bar">
        <div className="composer-left" />
        <div className="composer-right">
          <ComposerPrimitive.Cancel className="ghost" data-testid="edit-cancel">Cancel</ComposerPrimitive.Cancel>
          <ComposerPrimitive.Send className="send" data-testid="edit-send">Send</ComposerPrimitive.Send>
        </div>
      </div>
    </ComposerPrimitive.Root>
  );
}

// An assistant message. A failed turn's error is assistant-ui's `MessagePrimitive.Error` on the
// message the runtime marked (the last answer, or the stand-in it adds when the turn failed
// before any answer), with assistant-ui's Reload as Retry. Reload (Regenerate / Retry) is there
// while the runtime offers `onReload` (the store can regenerate): assistant-ui's own capability.
function AssistantMessage() {
  const id = useAuiState((s) => s.message.id);
  const role = useAuiState((s) => s.message.role);
  const failed = useAuiState((s) => s.message.status?.type === "incomplete" && s.message.status.reason === "error");
  return (
    <MessagePrimitive.Root className={"message " + role} data-testid="message" data-role={role} data-id={id} data-failed={failed ? "true" : undefined}>
      <div className="role">{role === "system" ? "System" : "Assistant"}</div>
      <div className="bubble">
        <MessagePrimitive.Parts components={PART_COMPONENTS} />
        <MessagePrimitive.Error>
          <ErrorPrimitive.Root className="message-error" data-testid="message-error" role="alert">
            <ErrorPrimitive.Message />
            <AuiIf condition={(s) => s.thread.capabilities.reload}>
              <ActionBarPrimitive.Reload className="small retry" data-testid="retry">
                <RetryIcon /> Retry
              </ActionBarPrimitive.Reload>
            </AuiIf>
          </ErrorPrimitive.Root>
        </MessagePrimitive.Error>
      </div>
      <ActionBarPrimitive.Root className="action-bar" hideWhenRunning autohide="not-last">
        {!failed && (
          <AuiIf condition={(s) => s.thread.capabilities.reload}>
            <ActionBarPrimitive.Reload className="ghost small" data-testid="regenerate">
              <RetryIcon /> Regenerate
            </ActionBarPrimitive.Reload>
          </AuiIf>
        )}
        <ActionBarPrimitive.Copy className="ghost small">Copy</ActionBarPrimitive.Copy>
      </ActionBarPrimitive.Root>
    </MessagePrimitive.Root>
  );
}

const QUEUED_LABEL = {
  queued: "Waiting",
  posting: "Sending…",
  accepted: "Queued on server",
  failed: "Failed",
  stalled: "Not delivered",
  unsure: "Not known whether it ran",
};

// One assistant-ui queue item; its delivery state and retry come from the store (same ids).
function QueuedBubble({ id }) {
  const { store, snapshot } = useChat();
  const item = snapshot.queued.find((q) => q.id === id);
  const state = item?.state ?? "queued";
  return (
    <div className={"message user queued " + state} data-testid="queued" data-state={state} data-id={id}>
      <div className="role">You · <span className="queued-state">{QUEUED_LABEL[state] ?? state}</span></div>
      <div className="bubble">
        <QueueItemPrimitive.Text className="part-text" data-testid="queued-text" />
        {item?.error && (
          <div className="queued-error" data-testid="queued-error">{item.error.kind}: {item.error.message}</div>
        )}
        <div className="queued-actions">
          {item?.readOnly && <span className="muted">from another tab</span>}
          {item?.removing && <span className="muted">removing…</span>}
          {item?.canRetry && (
            <button type="button" className="link" data-testid="queued-retry" onClick={() => store.retryQueued(id)}>
              Retry
            </button>
          )}
          {item?.canRemove && (
            <QueueItemPrimitive.Remove className="link" data-testid="queued-remove">Remove</QueueItemPrimitive.Remove>
          )}
        </div>
      </div>
    </div>
  );
}

// The tool calls of the session that wait for the user, above the composer: the adapter's
// thread-level hook (`usePending`, as the TrueFoundry runtime's `useTrueFoundryApprovals`), beside
// the per-part tool UIs that answer through assistant-ui's own `respondToApproval` / `resume`.
function PendingBar() {
  const { store } = useChat();
  const { approvals, questions, approve, deny, answer } = usePending(store);
  return (
    <PendingPanel
      approvals={approvals}
      questions={questions}
      onRespond={(a, { approved, reason }) => (approved ? approve(a.approvalId) : deny(a.approvalId, reason))}
      onAnswer={(q, option) => answer(q.toolCallId, option)}
    />
  );
}

// The store's error when no message shows it: a failed turn's error is on its message
// (`MessagePrimitive.Error` above); what belongs to no turn (a refused follow-up, a stop's
// `Aborted`, a request outside a turn) is a banner.
function StoreError() {
  const { snapshot } = useChat();
  const shownByThread = useAuiState((s) => {
    const last = s.thread.messages.at(-1);
    return last?.status?.type === "incomplete" && last.status.reason === "error";
  });
  return shownByThread ? null : <ErrorBanner error={snapshot.error} />;
}

function Composer() {
  const { snapshot } = useChat();
  // assistant-ui's composer owns the draft, so the store's text policy applies (not
  // `composer.hint`, which is about the store's own, empty draft).
  const followUp = snapshot.composer.followUp;
  const hint = snapshot.composer.textHint;
  return (
    <ComposerPrimitive.Root className="composer">
      {/* Files picked with Attach (the runtime's default attachment adapter: data: URLs). */}
      <div className="composer-attachments">
        <ComposerPrimitive.Attachments>{() => <ComposerAttachment />}</ComposerPrimitive.Attachments>
      </div>
      <ComposerPrimitive.Input
        className="composer-input"
        data-testid="composer-input"
        placeholder={followUp ? "Queue a follow-up…" : "Send a message…"}
        minRows={2}
        maxRows={8}
        submitMode="enter"
        autoFocus
        onKeyDown={(e) => {
          // assistant-ui inserts a newline on Enter when it cannot send; keep the draft as it was.
          if (hint && e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) e.preventDefault();
        }}
      />
      <div className="composer-bar">
        <div className="composer-left">
          <ComposerPrimitive.AddAttachment className="ghost small" data-testid="attach">
            <PaperclipIcon /> Attach
          </ComposerPrimitive.AddAttachment>
          {hint && <span className="hint" data-testid="hint">{hint}</span>}
        </div>
        <div className="composer-right">
          <AuiIf condition={(s) => s.thread.isRunning}>
            <ComposerPrimitive.Cancel className="stop" data-testid="stop">
              <StopIcon /> Stop
            </ComposerPrimitive.Cancel>
          </AuiIf>
          <ComposerPrimitive.Send className="send" data-testid="send">
            {followUp ? "Queue" : "Send"}
          </ComposerPrimitive.Send>
        </div>
      </div>
    </ComposerPrimitive.Root>
  );
}

function ComposerAttachment() {
  return (
    <AttachmentPrimitive.Root className="chip" data-testid="composer-attachment">
      <AttachmentPrimitive.Name />
      <AttachmentPrimitive.Remove className="chip-x" aria-label="Remove" data-testid="composer-attachment-remove">×</AttachmentPrimitive.Remove>
    </AttachmentPrimitive.Root>
  );
}
