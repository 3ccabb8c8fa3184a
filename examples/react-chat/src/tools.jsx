// Tool UIs: the app's renderer registry for `<ToolPart>` (agent-chat-store/react). Renderers are
// explicit imports of the app, keyed by renderer id (`part.ui.rendererId`) or tool name
// (exact, or the un-namespaced alias: `subagent` also takes `pi.subagent`); `fallback` takes
// every other tool. Nothing is loaded from the server.
//
// Renderers also get the `store`, for the tools that wait for the user (AI SDK mode): a tool
// asking for approval shows Approve / Deny (`store.addToolApprovalResponse`), and `getLocation`,
// a tool the client runs, shows a small form that answers it (`store.addToolOutput`). With the
// store's `sendAutomaticallyWhen` (App.jsx) the answer continues the conversation.
import { useState } from "react";
import { toolDetailsOf, toolNameOf } from "agent-chat-store/react";
import { BotIcon, ToolIcon } from "./icons.jsx";

export function Json({ value }) {
  if (value === undefined) return <span className="muted">—</span>;
  let text;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return <pre className="json">{text}</pre>;
}

const TOOL_STATE_LABEL = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "awaiting approval",
  "approval-responded": "approval answered",
  "output-available": "done",
  "output-error": "error",
  "output-denied": "denied",
};

/**
 * The plain tool UI: name, state, input, output or error, approval, structured details.
 * A tool waiting for the user (an approval request, or `actions` of a client tool) is open,
 * with its buttons first.
 */
export function PlainTool({ part, store, actions }) {
  const toolName = toolNameOf(part);
  const state = part.state;
  const failed = state === "output-error" || state === "output-denied";
  const details = toolDetailsOf(part);
  const approval = state === "approval-requested" && store && part.approval?.id ? <ApprovalActions part={part} store={store} /> : null;
  const waiting = approval != null || actions != null;
  return (
    <details
      className={"part-tool" + (failed ? " failed" : "") + (waiting ? " waiting" : "")}
      data-testid="part-tool"
      data-tool-name={toolName}
      data-state={state}
      data-tool-call-id={part.toolCallId}
      data-renderer="plain"
      open={failed || waiting || undefined}
    >
      <summary>
        <span className="tool-icon"><ToolIcon /></span>
        <span className="tool-name">{part.title || toolName}</span>
        <span className={"badge tool-state " + state}>{TOOL_STATE_LABEL[state] ?? state}</span>
      </summary>
      <div className="tool-body">
        {approval}
        {actions}
        {state === "output-denied" && (
          <div className="tool-section denied" data-testid="tool-denied">
            Not run: the user denied it{part.approval?.reason ? ` (${part.approval.reason})` : ""}.
          </div>
        )}
        <div className="tool-section">
          <div className="label">Input</div>
          <Json value={part.input ?? part.rawInput} />
        </div>
        {state === "output-available" && (
          <div className="tool-section" data-testid="tool-output">
            <div className="label">Output{part.preliminary ? " (preliminary)" : ""}</div>
            <Json value={part.output} />
          </div>
        )}
        {state === "output-error" && (
          <div className="tool-section" data-testid="tool-error">
            <div className="label">Error</div>
            <pre className="json error-text">{part.errorText}</pre>
          </div>
        )}
        {part.approval && (
          <div className="tool-section">
            <div className="label">Approval</div>
            <Json value={part.approval} />
          </div>
        )}
        {details !== undefined && (
          <div className="tool-section">
            <div className="label">Details</div>
            <Json value={details} />
          </div>
        )}
      </div>
    </details>
  );
}

/** Approve / Deny for a tool call that asks first (`approval-requested`). */
function ApprovalActions({ part, store }) {
  const answer = (approved) => store.addToolApprovalResponse({ id: part.approval.id, approved });
  return (
    <div className="tool-actions" data-testid="tool-approval" data-approval-id={part.approval.id}>
      <span className="tool-question">
        Run <code>{toolNameOf(part)}</code>{part.input !== undefined ? <> with <code>{JSON.stringify(part.input)}</code></> : null}?
      </span>
      <button type="button" className="approve" data-testid="tool-approve" onClick={() => answer(true)}>Approve</button>
      <button type="button" className="deny" data-testid="tool-deny" onClick={() => answer(false)}>Deny</button>
    </div>
  );
}

/** The answer to `getLocation`, a tool the client runs: a city, prefilled. */
function LocationForm({ part, store }) {
  const [city, setCity] = useState("Paris");
  const submit = (e) => {
    e.preventDefault();
    if (city.trim()) store.addToolOutput({ toolCallId: part.toolCallId, output: { city: city.trim() } });
  };
  const decline = () => store.addToolOutput({ toolCallId: part.toolCallId, errorText: "The user did not share a location." });
  return (
    <form className="tool-actions" data-testid="tool-output-form" onSubmit={submit}>
      <label className="tool-question" htmlFor={"city-" + part.toolCallId}>Your city</label>
      <input
        id={"city-" + part.toolCallId}
        data-testid="tool-output-input"
        value={city}
        onChange={(e) => setCity(e.target.value)}
        spellCheck={false}
      />
      <button type="submit" className="approve" data-testid="tool-output-submit" disabled={!city.trim()}>Share</button>
      <button type="button" className="deny" data-testid="tool-output-decline" onClick={decline}>Decline</button>
    </form>
  );
}

/** `getLocation`: the client runs it, so while it waits (`input-available`) the user answers. */
export function GetLocationTool({ part, store }) {
  const waiting = part.state === "input-available" && store;
  return <PlainTool part={part} store={store} actions={waiting ? <LocationForm part={part} store={store} /> : undefined} />;
}

const SUBAGENT_STATUS_LABEL = { running: "working…", done: "done", error: "failed" };
const ROLE_LABEL = { user: "Task", assistant: "Subagent", tool: "Tool" };

/**
 * `pi.subagent` (renderer id `pi-subagent`): the nested agent run as a collapsible transcript:
 * task, status, steps, and the nested transcript's messages. It reads the typed details
 * (`part.ui.details`: the result's details, or the latest progress while it runs); without
 * them (an older server, a plain-text result) it is the plain tool UI.
 */
export function PiSubagentTool({ part, store }) {
  const details = toolDetailsOf(part);
  const [open, setOpen] = useState(false);
  if (!details || typeof details !== "object" || details.uiKind !== "pi-subagent") return <PlainTool part={part} store={store} />;
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
          {transcript.map((entry, i) => (
            <div key={i} className={"subagent-entry " + entry.role + (entry.isError ? " failed" : "")} data-testid="subagent-entry" data-role={entry.role}>
              <div className="subagent-role">{ROLE_LABEL[entry.role] ?? entry.role}{entry.toolName ? ` · ${entry.toolName}` : ""}</div>
              <div className="subagent-text">{entry.text || <span className="muted">(no text)</span>}</div>
            </div>
          ))}
          {status === "running" && <span className="dots"><i /><i /><i /></span>}
        </div>
        {details.error && (
          <div className="error-text" data-testid="subagent-error">{details.error}</div>
        )}
      </div>
    </details>
  );
}

/** The app's registry: by renderer id, by (un-namespaced) tool name, then the plain UI. */
export const TOOL_RENDERERS = {
  "pi-subagent": PiSubagentTool,
  subagent: PiSubagentTool,
  getLocation: GetLocationTool,
  fallback: PlainTool,
};
