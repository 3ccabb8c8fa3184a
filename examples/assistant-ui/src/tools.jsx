// Tool UIs: the app's renderer registry (the same shape `<ToolPart>` of agent-chat-store/react
// takes: renderer ids, tool names or un-namespaced aliases), mapped onto assistant-ui's tool UI
// slot (`MessagePrimitive.Parts components.tools`) by `makeToolUIs`. Renderers get `{part,
// toolCall}`; a tool call no entry matches gets the plain `Tool` with assistant-ui's props.
// Renderers are explicit imports of the app; nothing is loaded from the server.
import { useState } from "react";
import { toolDetailsOf, toolNameOf } from "agent-chat-store/react";
import { makeToolUIs } from "agent-chat-store/assistant-ui";
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


// The AI SDK tool state, as far as assistant-ui's tool-call part still tells it.
function toolState({ result, isError, approval, argsText }) {
  if (result !== undefined) return isError ? "output-error" : "output-available";
  if (approval && approval.approved === undefined) return "approval-requested";
  return argsText ? "input-available" : "input-streaming";
}

const TOOL_STATE_LABEL = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "awaiting approval",
  "output-available": "done",
  "output-error": "error",
};

export function Tool(props) {
  const { toolName, args, argsText, result, isError, toolCallId, artifact } = props;
  const state = toolState(props);
  return (
    <details
      className={"part-tool" + (isError ? " failed" : "")}
      data-testid="part-tool"
      data-tool-name={toolName}
      data-state={state}
      data-tool-call-id={toolCallId}
      data-renderer="plain"
      open={isError || undefined}
    >
      <summary>
        <span className="tool-icon"><ToolIcon /></span>
        <span className="tool-name">{toolName}</span>
        <span className={"badge tool-state " + state}>{TOOL_STATE_LABEL[state] ?? state}</span>
      </summary>
      <div className="tool-body">
        <div className="tool-section">
          <div className="label">Input</div>
          <Json value={args && Object.keys(args).length ? args : argsText || undefined} />
        </div>
        {result !== undefined && !isError && (
          <div className="tool-section" data-testid="tool-output">
            <div className="label">Output</div>
            <Json value={result} />
          </div>
        )}
        {isError && (
          <div className="tool-section" data-testid="tool-error">
            <div className="label">Error</div>
            <pre className="json error-text">{result?.error ?? JSON.stringify(result)}</pre>
          </div>
        )}
        {artifact !== undefined && (
          <div className="tool-section">
            <div className="label">Details</div>
            <Json value={artifact} />
          </div>
        )}
      </div>
    </details>
  );
}

const SUBAGENT_STATUS_LABEL = { running: "working…", done: "done", error: "failed" };
const ROLE_LABEL = { user: "Task", assistant: "Subagent", tool: "Tool" };

/**
 * `pi.subagent` (renderer id `pi-subagent`): the nested agent run as a collapsible transcript:
 * task, status, steps, and the nested transcript's messages. It reads the typed details
 * (`part.ui.details`: the result's details, or the latest progress while it runs); without
 * them (an older server, a plain-text result) it is the plain tool UI. `part` is the tool call
 * as a UIMessage part (from `makeToolUIs`), `toolCall` assistant-ui's own props.
 */
export function PiSubagentTool({ part, toolCall }) {
  const details = toolDetailsOf(part);
  const [open, setOpen] = useState(false);
  if (!details || typeof details !== "object" || details.uiKind !== "pi-subagent") return <Tool {...toolCall} />;
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

/** The app's registry: by renderer id, and by the un-namespaced tool name. */
export const TOOL_RENDERERS = {
  "pi-subagent": PiSubagentTool,
  subagent: PiSubagentTool,
};

/** `{by_name, Fallback}` for `MessagePrimitive.Parts components.tools` (created once). */
export const TOOL_UIS = makeToolUIs(TOOL_RENDERERS, { Fallback: Tool });
