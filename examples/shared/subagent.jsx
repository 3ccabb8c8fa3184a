// The reference server's `pi.subagent` (renderer id `pi-subagent`), drawn the same way by both
// example apps; each app wraps it in its own registry entry and gives its own plain tool UI as
// the fallback.
import { useState } from "react";
import { toolDetailsOf, toolNameOf } from "agent-chat-store/react";
import { BotIcon } from "./icons.jsx";

const SUBAGENT_STATUS_LABEL = { running: "working…", done: "done", error: "failed" };
const ROLE_LABEL = { user: "Task", assistant: "Subagent", tool: "Tool" };

/**
 * The nested agent run as a collapsible transcript: task, status, steps, and the nested
 * transcript's messages. It reads the typed details (`part.ui.details`: the result's details, or
 * the latest progress while it runs); without them (an older server, a plain-text result) it is
 * `fallback`, the app's plain tool UI. `part` is the tool call as a UIMessage part.
 * `transcript`, when given, draws the nested messages instead of the entries of
 * `details.transcript` (the assistant-ui example renders them with assistant-ui's own
 * `MessagePartPrimitive.Messages`); each entry should look like `<TranscriptEntry>`.
 */
export function PiSubagent({ part, fallback, transcript: nested }) {
  const details = toolDetailsOf(part);
  const [open, setOpen] = useState(false);
  if (!details || typeof details !== "object" || details.uiKind !== "pi-subagent") return fallback;
  const status = details.status ?? "running";
  const steps = Array.isArray(details.steps) ? details.steps : [];
  const transcript = Array.isArray(details.transcript) ? details.transcript : [];
  const failed = status === "error" || part.state === "output-error";
  return (
    <details
      className={"part-tool subagent" + (failed ? " failed" : "")}
      data-testid="part-tool"
      data-tool-name={toolNameOf(part)}
      data-state={part.state}
      data-tool-call-id={part.toolCallId}
      data-renderer="pi-subagent"
      data-ui-renderer-id={part.ui?.rendererId ?? ""}
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary data-testid="subagent-summary">
        <span className="tool-icon"><BotIcon /></span>
        <span className="tool-name">subagent</span>
        <span className="subagent-task" data-testid="subagent-task">{details.task}</span>
        <span className={"badge subagent-status " + status} data-testid="subagent-status" data-status={status}>
          {SUBAGENT_STATUS_LABEL[status] ?? status}
        </span>
        <span className="muted subagent-count">{steps.length} {steps.length === 1 ? "step" : "steps"}</span>
      </summary>
      <div className="tool-body subagent-body" data-testid="subagent-body">
        {steps.length > 0 && (
          <ol className="subagent-steps" data-testid="subagent-steps">
            {steps.map((s, i) => (
              <li key={s.id ?? i} className={"subagent-step " + (s.status ?? "")} data-testid="subagent-step" data-kind={s.kind} data-status={s.status}>
                <span className="step-dot" aria-hidden="true" />
                <span className="step-label">{s.label}</span>
              </li>
            ))}
          </ol>
        )}
        <div className="subagent-transcript" data-testid="subagent-transcript">
          {transcript.length === 0 && <div className="muted">Starting…</div>}
          {nested ?? transcript.map((entry, i) => <TranscriptEntry key={i} {...entry} />)}
          {status === "running" && <span className="dots"><i /><i /><i /></span>}
        </div>
        {details.error && (
          <div className="error-text" data-testid="subagent-error">{details.error}</div>
        )}
      </div>
    </details>
  );
}

/** One entry of a nested transcript: `{role: "user" | "assistant" | "tool", text, toolName?, isError?}`. */
export function TranscriptEntry({ role, text, toolName, isError }) {
  return (
    <div className={"subagent-entry " + role + (isError ? " failed" : "")} data-testid="subagent-entry" data-role={role}>
      <div className="subagent-role">{ROLE_LABEL[role] ?? role}{toolName ? ` · ${toolName}` : ""}</div>
      <div className="subagent-text">{text || <span className="muted">(no text)</span>}</div>
    </div>
  );
}
