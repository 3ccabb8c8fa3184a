// Human in the loop (SPEC §13), drawn the same way by both example apps: tool calls that wait
// for the user, an approval (allow / deny, with an optional reason) or a question (one button
// per option). Presentational only: each app wires the callbacks to what it has (the React
// example to the store's `addToolApprovalResponse` / `addToolOutput`, the assistant-ui example to
// assistant-ui's `respondToApproval` / `resume` and the adapter's pending hooks).
import { useState } from "react";

/** A tool call's input in one line: `path: notes.txt`, or its JSON. */
export function inputSummary(input) {
  if (input === undefined || input === null) return "";
  if (typeof input !== "object" || Array.isArray(input)) return JSON.stringify(input);
  return Object.entries(input)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

/**
 * Where an approval stands, from a tool part (an AI SDK UIMessage part: `state` + `approval`):
 * `waiting`, `allowed`, `denied`, or null for a call that never asked.
 */
export function approvalState(part) {
  if (!part?.approval && part?.state !== "approval-requested") return null;
  if (part.state === "output-denied" || part.approval?.approved === false) return "denied";
  if (part.approval?.approved === true) return "allowed";
  if (part.state === "approval-requested") return "waiting";
  // Never answered (stopped while it waited, or the server went away).
  return part.state === "output-error" ? "unanswered" : null;
}

const APPROVAL_LABEL = { waiting: "waiting for your approval", allowed: "allowed by you", denied: "denied by you", unanswered: "not answered" };

/**
 * Whether a tool's own state badge says nothing the approval badge does not (waiting, denied):
 * then a tool UI shows only the approval badge.
 */
export function approvalSaysItAll(part) {
  const state = approvalState(part);
  return state === "waiting" || state === "denied";
}

/** A small badge with the approval's state (`data-approval-state`). */
export function ApprovalStateBadge({ part }) {
  const state = approvalState(part);
  if (!state) return null;
  return (
    <span className={"badge approval-state " + state} data-testid="tool-approval-state" data-approval-state={state}>
      {APPROVAL_LABEL[state]}
    </span>
  );
}

/** Why the last answer did not get through (a pending entry's `error`); answering again retries. */
export function PendingError({ error }) {
  if (!error) return null;
  return (
    <div className="pending-error" role="alert" data-testid="pending-error" data-kind={error.kind} data-status={error.status ?? ""}>
      Not delivered: {error.message}
      {error.status ? ` (HTTP ${error.status}${error.serverCode ? `, ${error.serverCode}` : ""})` : ""}. Answer again to retry.
    </div>
  );
}

/**
 * Allow / Deny, with an optional reason for a denial. `onRespond({approved, reason?})`; test ids
 * `${prefix}approve`, `${prefix}deny`, `${prefix}deny-reason`.
 */
export function ApprovalControls({ onRespond, prefix = "", disabled = false, idFor }) {
  const [reason, setReason] = useState("");
  const deny = () => {
    const r = reason.trim();
    onRespond(r ? { approved: false, reason: r } : { approved: false });
  };
  return (
    <span className="approval-controls">
      <button type="button" className="approve" data-testid={prefix + "approve"} disabled={disabled} onClick={() => onRespond({ approved: true })}>
        Allow
      </button>
      <button type="button" className="deny" data-testid={prefix + "deny"} disabled={disabled} onClick={deny}>
        Deny
      </button>
      <input
        className="deny-reason"
        data-testid={prefix + "deny-reason"}
        aria-label="Reason for denying (optional)"
        id={idFor}
        placeholder="Reason (optional)"
        value={reason}
        disabled={disabled}
        onChange={(e) => setReason(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            deny();
          }
        }}
        spellCheck={false}
      />
    </span>
  );
}

/** One button per option (`${prefix}answer`, `data-option`); `onAnswer(option)`. */
export function QuestionOptions({ options, onAnswer, prefix = "", disabled = false }) {
  const list = Array.isArray(options) ? options : [];
  return (
    <span className="question-options">
      {list.map((option) => (
        <button
          key={option}
          type="button"
          className="answer"
          data-testid={prefix + "answer"}
          data-option={option}
          disabled={disabled}
          onClick={() => onAnswer(option)}
        >
          {option}
        </button>
      ))}
    </span>
  );
}

/**
 * The thread-level chrome above the composer: an approval bar (one row per waiting approval)
 * and an ask-user card per waiting question. `approvals` / `questions` are
 * `snapshot.pending`'s entries (or the same shape); `onRespond(approval, {approved, reason?})`,
 * `onAnswer(question, option)`.
 */
export function PendingPanel({ approvals = [], questions = [], onRespond, onAnswer }) {
  if (approvals.length === 0 && questions.length === 0) return null;
  return (
    <div className="pending-panel" data-testid="pending-panel">
      {approvals.length > 0 && (
        <section className="approval-bar" data-testid="approval-bar" aria-label="Tool calls waiting for your approval">
          {approvals.map((a) => (
            <div key={a.approvalId} className="approval" data-testid="approval" data-approval-id={a.approvalId} data-tool-name={a.toolName} data-tool-call-id={a.toolCallId}>
              <span className="approval-what">
                Allow <code className="tool-name">{a.toolName}</code>
                {inputSummary(a.input) && <> <code className="approval-input" data-testid="approval-input">{inputSummary(a.input)}</code></>}?
              </span>
              <ApprovalControls onRespond={(answer) => onRespond(a, answer)} />
              <PendingError error={a.error} />
            </div>
          ))}
        </section>
      )}
      {questions.map((q) => (
        <section key={q.toolCallId} className="question-card" data-testid="question" data-tool-call-id={q.toolCallId} data-tool-name={q.toolName} aria-label="A question for you">
          <div className="question-text" data-testid="question-text">{q.question ?? inputSummary(q.input)}</div>
          <QuestionOptions options={q.options} onAnswer={(option) => onAnswer(q, option)} />
          <PendingError error={q.error} />
        </section>
      ))}
    </div>
  );
}
