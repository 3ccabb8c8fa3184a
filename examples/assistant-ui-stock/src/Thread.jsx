// A `Thread` in the shape of assistant-ui's stock one (its registry's thread.tsx): welcome,
// messages (user: Edit + branch picker; assistant: parts, error, branch picker, Copy + Reload),
// a sticky footer with the queue and the composer. Plain CSS instead of tailwind, buttons
// instead of icon buttons; data-testid attributes for the end-to-end tests.
import { createContext, useContext } from "react";
import {
  ActionBarPrimitive,
  AuiIf,
  BranchPickerPrimitive,
  ComposerPrimitive,
  ErrorPrimitive,
  MessagePrimitive,
  QueueItemPrimitive,
  ThreadPrimitive,
  useAuiState,
} from "@assistant-ui/react";
import { useChatStore } from "agent-chat-store/react";
import { QueueItemStatus } from "agent-chat-store/assistant-ui";
import { ToolFallback } from "./tools.jsx";

// The store, for the one thing assistant-ui's message status has no field for: the typed
// code of a failed turn's error (`snapshot.error.code`).
const StoreContext = createContext(null);

export function Thread({ store }) {
  return (
    <StoreContext.Provider value={store}>
      <ThreadPrimitive.Root className="thread-root">
        <ThreadPrimitive.Viewport className="thread-viewport" data-testid="thread">
          <AuiIf condition={(s) => s.thread.isEmpty && !s.thread.isLoading}>
            <div className="welcome">How can I help you today?</div>
          </AuiIf>
          <ThreadPrimitive.Messages>{() => <ThreadMessage />}</ThreadPrimitive.Messages>
          <ThreadPrimitive.ViewportFooter className="thread-footer">
            <ComposerPrimitive.Queue>{() => <QueueItem />}</ComposerPrimitive.Queue>
            <Composer />
          </ThreadPrimitive.ViewportFooter>
        </ThreadPrimitive.Viewport>
      </ThreadPrimitive.Root>
    </StoreContext.Provider>
  );
}

function ThreadMessage() {
  const role = useAuiState((s) => s.message.role);
  const isEditing = useAuiState((s) => s.message.composer.isEditing);
  if (isEditing) return <EditComposer />;
  return role === "user" ? <UserMessage /> : <AssistantMessage />;
}

function Text({ text }) {
  return <p className="text" data-testid="part-text">{text}</p>;
}

function UserMessage() {
  const id = useAuiState((s) => s.message.id);
  return (
    <MessagePrimitive.Root className="message user" data-testid="message" data-role="user" data-id={id}>
      <div className="bubble">
        <MessagePrimitive.Parts components={{ Text }} />
      </div>
      <ActionBarPrimitive.Root className="action-bar" hideWhenRunning autohide="not-last">
        <ActionBarPrimitive.Edit data-testid="edit">Edit</ActionBarPrimitive.Edit>
      </ActionBarPrimitive.Root>
      <BranchPicker />
    </MessagePrimitive.Root>
  );
}

function EditComposer() {
  return (
    <MessagePrimitive.Root className="message user editing">
      <ComposerPrimitive.Root className="edit-composer" data-testid="edit-composer">
        <ComposerPrimitive.Input className="input" data-testid="edit-input" autoFocus />
        <div className="row end">
          <ComposerPrimitive.Cancel data-testid="edit-cancel">Cancel</ComposerPrimitive.Cancel>
          <ComposerPrimitive.Send data-testid="edit-send">Update</ComposerPrimitive.Send>
        </div>
      </ComposerPrimitive.Root>
    </MessagePrimitive.Root>
  );
}

function AssistantMessage() {
  const id = useAuiState((s) => s.message.id);
  return (
    <MessagePrimitive.Root className="message assistant" data-testid="message" data-role="assistant" data-id={id}>
      <div className="content">
        <MessagePrimitive.Parts components={{ Text, tools: { Fallback: ToolFallback } }} />
        <MessageError />
      </div>
      <div className="row">
        <BranchPicker />
        <ActionBarPrimitive.Root className="action-bar" hideWhenRunning autohide="not-last">
          <ActionBarPrimitive.Copy data-testid="copy">Copy</ActionBarPrimitive.Copy>
          <ActionBarPrimitive.Reload data-testid="reload">Refresh</ActionBarPrimitive.Reload>
        </ActionBarPrimitive.Root>
      </div>
    </MessagePrimitive.Root>
  );
}

// The stock error box, with the turn's typed code and a Retry (assistant-ui's Reload).
function MessageError() {
  const store = useContext(StoreContext);
  const code = useChatStore(store).error?.code;
  return (
    <MessagePrimitive.Error>
      <ErrorPrimitive.Root className="message-error" data-testid="message-error" data-code={code} role="alert">
        <ErrorPrimitive.Message />
        <ActionBarPrimitive.Reload data-testid="retry">Retry</ActionBarPrimitive.Reload>
      </ErrorPrimitive.Root>
    </MessagePrimitive.Error>
  );
}

function BranchPicker() {
  return (
    <BranchPickerPrimitive.Root className="branch-picker" data-testid="branch-picker" hideWhenSingleBranch>
      <BranchPickerPrimitive.Previous data-testid="branch-previous" aria-label="Previous">‹</BranchPickerPrimitive.Previous>
      <span data-testid="branch-state">
        <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
      </span>
      <BranchPickerPrimitive.Next data-testid="branch-next" aria-label="Next">›</BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  );
}

// A waiting follow-up, as assistant-ui's queue primitives show it: its text, its delivery
// state and error (the store's, which the runtime puts on the queue item; `QueueItemStatus`
// shows them), Run Now (Steer) and Remove.
const QUEUE_STATE_LABEL = {
  posting: "sending…",
  queued: "queued",
  accepted: "queued on the server",
  stalled: "not delivered",
  failed: "failed",
  unsure: "may have run",
};

function QueueItem() {
  const id = useAuiState((s) => s.queueItem.id);
  const state = useAuiState((s) => s.queueItem.state);
  return (
    <div className="queue-item" data-testid="queued" data-id={id} data-state={state}>
      <QueueItemPrimitive.Text className="text" data-testid="queued-text" />
      <QueueItemStatus className="queue-state" labels={QUEUE_STATE_LABEL} />
      <QueueItemPrimitive.Steer data-testid="queued-run-now">Run Now</QueueItemPrimitive.Steer>
      <QueueItemPrimitive.Remove data-testid="queued-remove">Remove</QueueItemPrimitive.Remove>
    </div>
  );
}

function Composer() {
  return (
    <ComposerPrimitive.Root className="composer">
      <ComposerPrimitive.Input className="input" data-testid="composer-input" placeholder="Send a message..." rows={1} autoFocus />
      <AuiIf condition={(s) => !s.thread.isRunning}>
        <ComposerPrimitive.Send data-testid="send">Send</ComposerPrimitive.Send>
      </AuiIf>
      <AuiIf condition={(s) => s.thread.isRunning}>
        <ComposerPrimitive.Cancel data-testid="stop">Stop</ComposerPrimitive.Cancel>
      </AuiIf>
    </ComposerPrimitive.Root>
  );
}
