import { useEffect, useLayoutEffect, useRef } from "react";
import { useChatStore } from "agent-chat-store/react";
import { ErrorBanner, Flag, SessionForm, ToolCatalog } from "../../shared/chrome.jsx";
import { readConfig } from "../../shared/config.js";
import { useExampleStore } from "../../shared/store.js";
import { PendingPanel } from "../../shared/hitl.jsx";
import { FileIcon, PaperclipIcon, RetryIcon, StopIcon } from "../../shared/icons.jsx";
import { useSessionSwitch } from "../../shared/session.js";
import { Message } from "./Parts.jsx";
import { Sessions } from "./Sessions.jsx";

const config = readConfig();

export function App() {
  const { store, sessionId } = useExampleStore(config);
  const snapshot = useChatStore(store);

  // Switches from the header's form and from back/forward.
  const switchTo = useSessionSwitch(store);

  return (
    <div className="shell">
      <Sessions store={store} />
      <Chat store={store} snapshot={snapshot} onSwitch={switchTo} />
    </div>
  );
}

function Chat({ store, snapshot, onSwitch }) {
  const { status, messages, queued, error, capabilities, busy, canEdit } = snapshot;
  const scrollRef = useAutoScroll([messages, queued, status, snapshot.pending]);

  return (
    <div className="app">
      <Header snapshot={snapshot} onSwitch={onSwitch} />

      <main className="thread" ref={scrollRef} data-testid="thread">
        <div className="thread-inner">
          {!snapshot.hydrated && messages.length === 0 && (
            <div className="empty muted" data-testid="loading">Loading history…</div>
          )}
          {snapshot.hydrated && messages.length === 0 && queued.length === 0 && !busy && (
            <div className="empty" data-testid="empty">
              <h2>Start a conversation</h2>
              <p className="muted">
                Messages you send while the agent is answering are{" "}
                {capabilities.nativeFollowUp ? "queued and delivered in order." : "held until it is done."}
              </p>
            </div>
          )}

          {messages.map((message) => (
            <Message key={message.id} message={message} store={store} canEdit={canEdit} />
          ))}

          {snapshot.awaitingAnswer && (
            <div className="message assistant pending" data-testid="pending">
              <div className="role">Assistant</div>
              <div className="bubble"><span className="dots"><i /><i /><i /></span></div>
            </div>
          )}

          {queued.map((item) => (
            <QueuedBubble key={item.id} item={item} store={store} />
          ))}

          <ErrorBanner error={error} />
        </div>
      </main>

      {/* Tool calls waiting for the user, across the session (SPEC §13): the same two actions in
          both modes (pi: the store posts the answer; AI SDK: sendAutomaticallyWhen goes on). */}
      <PendingPanel
        approvals={snapshot.pending.approvals}
        questions={snapshot.pending.questions}
        onRespond={(approval, answer) => store.addToolApprovalResponse({ id: approval.approvalId, ...answer })}
        onAnswer={(question, option) => store.addToolOutput({ toolCallId: question.toolCallId, output: option })}
      />

      <Composer store={store} snapshot={snapshot} busy={busy} />
    </div>
  );
}

function Header({ snapshot, onSwitch }) {
  const { status, capabilities, capabilitiesLoaded, turnId, sessionId } = snapshot;
  return (
    <header className="header">
      <div className="header-row">
        <h1>agent-chat-store <span className="muted">React</span></h1>
        <SessionForm sessionId={sessionId} onSwitch={onSwitch} />
      </div>
      <div className="header-row meta">
        <span className={"badge status " + status} data-testid="status" data-status={status}>{status}</span>
        <span className="meta-item" data-testid="session-id">session <code>{sessionId}</code></span>
        <span
          className="meta-item"
          data-testid="capabilities"
          data-native-follow-up={String(capabilities.nativeFollowUp)}
          data-ai-sdk-owns-history={String(capabilities.aiSdkOwnsHistory)}
          data-loaded={String(capabilitiesLoaded)}
          title={capabilitiesLoaded ? "capabilities from the server" : "defaults until the server answers"}
        >
          <Flag on={capabilities.nativeFollowUp}>follow-ups</Flag>
          <Flag on={capabilities.aiSdkOwnsHistory}>AI SDK history</Flag>
          <Flag on={capabilities.followUpAttachments}>follow-up files</Flag>
          {!capabilitiesLoaded && <span className="muted"> (loading)</span>}
        </span>
        <span className="meta-item" data-testid="turn-id" data-turn-id={turnId ?? ""}>
          turn <code className="turn" title={turnId ?? ""}>{turnId ?? "—"}</code>
        </span>
      </div>
      <div className="header-row meta">
        <ToolCatalog tools={snapshot.tools} />
      </div>
    </header>
  );
}

// Every bubble that is still on its way says "Waiting…"; the detail says where it is.
const QUEUED_LABEL = {
  queued: "Waiting…",
  posting: "Waiting… (sending)",
  accepted: "Waiting… (queued on the server)",
  failed: "Failed",
  stalled: "Not delivered",
  unsure: "Not known whether it ran",
};

function QueuedBubble({ item, store }) {
  return (
    <div className={"message user queued " + item.state} data-testid="queued" data-state={item.state} data-id={item.id}>
      <div className="role">You · <span className="queued-state">{QUEUED_LABEL[item.state] ?? item.state}</span></div>
      <div className="bubble">
        <div className="part-text" data-testid="queued-text">{item.text}</div>
        {item.files.length > 0 && (
          <div className="files">{item.files.map((f, i) => <span key={i} className="chip"><FileIcon /> {f.filename || f.mediaType}</span>)}</div>
        )}
        {item.error && (
          <div className="queued-error" data-testid="queued-error">
            {item.error.kind}: {item.error.message}
          </div>
        )}
        <div className="queued-actions">
          {item.attempts > 1 && <span className="muted">attempt {item.attempts}</span>}
          {item.readOnly && <span className="muted">from another tab</span>}
          {item.removing && <span className="muted">removing…</span>}
          {item.canRetry && (
            <button type="button" className="link" data-testid="queued-retry" onClick={() => store.retryQueued(item.id)}>
              Retry
            </button>
          )}
          {item.canRemove && (
            <button type="button" className="link" data-testid="queued-remove" onClick={() => store.removeQueued(item.id)}>
              Remove
            </button>
          )}
        </div>
      </div>
    </div>
  );
}

function Composer({ store, snapshot, busy }) {
  const { composer, canRegenerate } = snapshot;
  const fileInput = useRef(null);

  const onKeyDown = (e) => {
    if (e.key !== "Enter" || e.shiftKey || e.nativeEvent.isComposing) return;
    e.preventDefault();
    // When it cannot send, Enter does nothing: the draft stays as it is.
    if (composer.canSend) store.submit();
  };

  const onSubmit = (e) => {
    e.preventDefault();
    if (composer.canSend) store.submit();
  };

  const onFiles = async (e) => {
    const picked = Array.from(e.target.files ?? []);
    e.target.value = "";
    if (picked.length === 0) return;
    const added = await Promise.all(picked.map(readFile));
    store.setDraftFiles([...store.getSnapshot().composer.files, ...added]);
  };

  const removeFile = (index) => {
    store.setDraftFiles(composer.files.filter((_, i) => i !== index));
  };

  return (
    <footer className="composer-wrap">
      <form className="composer" onSubmit={onSubmit}>
        {composer.files.length > 0 && (
          <div className="draft-files">
            {composer.files.map((f, i) => (
              <span key={i} className="chip" data-testid="draft-file">
                <FileIcon /> {f.filename || f.mediaType}
                <button type="button" className="chip-x" aria-label="Remove file" onClick={() => removeFile(i)}>×</button>
              </span>
            ))}
          </div>
        )}
        <textarea
          data-testid="composer-input"
          className="composer-input"
          placeholder={composer.followUp ? "Queue a follow-up…" : "Send a message…"}
          value={composer.draft}
          onChange={(e) => store.setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          rows={Math.min(8, Math.max(2, composer.draft.split("\n").length))}
          autoFocus
        />
        <div className="composer-bar">
          <div className="composer-left">
            <button type="button" className="ghost" onClick={() => fileInput.current?.click()} title="Attach files">
              <PaperclipIcon /> Attach
            </button>
            <input ref={fileInput} type="file" multiple hidden data-testid="attach-input" onChange={onFiles} />
            {composer.hint && (
              <span className="hint" data-testid="hint" data-reason={composer.reason ?? ""}>
                {composer.hint}
              </span>
            )}
          </div>
          <div className="composer-right">
            {canRegenerate && (
              <button type="button" className="ghost" data-testid="regenerate" onClick={() => store.regenerate()}>
                <RetryIcon /> Regenerate
              </button>
            )}
            {busy && (
              <button type="button" className="stop" data-testid="stop" onClick={() => store.stop()}>
                <StopIcon /> Stop
              </button>
            )}
            <button type="submit" className="send" data-testid="send" disabled={!composer.canSend}>
              {busy && composer.canSend ? "Queue" : "Send"}
            </button>
          </div>
        </div>
      </form>
    </footer>
  );
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () =>
      resolve({ mediaType: file.type || "application/octet-stream", filename: file.name, url: String(reader.result) });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// Keeps the thread pinned to the bottom while new content streams in, unless the user scrolled up.
function useAutoScroll(deps) {
  const ref = useRef(null);
  const pinned = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onScroll = () => {
      pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, []);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return ref;
}
