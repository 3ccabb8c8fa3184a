// Tool UIs: the app's renderer registry for `<ToolPart>` (agent-chat-store/react). Renderers are
// explicit imports of the app, keyed by renderer id (`part.ui.rendererId`) or tool name
// (exact, or the un-namespaced alias: `subagent` also takes `pi.subagent`); `fallback` takes
// every other tool. Nothing is loaded from the server.
//
// Renderers also get the `store`, for the tools that wait for the user (SPEC §13, both modes,
// the same two actions): a tool asking for approval shows Allow / Deny with an optional reason
// (`store.addToolApprovalResponse`), pi's `askUser` one button per option and `getLocation`, a
// tool the client runs (AI SDK mode), a small form (`store.addToolOutput`). In AI SDK mode the
// store's `sendAutomaticallyWhen` (App.jsx) continues the conversation with the answer; in pi
// mode the store posts it to the server, which holds the call open. The same calls are listed
// thread-wide in `snapshot.pending` (the approval bar and question cards of App.jsx).
import { useState } from "react";
import { toolDetailsOf, toolNameOf } from "agent-chat-store/react";
import { ToolIcon } from "../../shared/icons.jsx";
import { Json } from "../../shared/parts.jsx";
import { PiSubagent } from "../../shared/subagent.jsx";
import { ApprovalControls, ApprovalStateBadge, approvalSaysItAll, QuestionOptions, inputSummary } from "../../shared/hitl.jsx";

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
        {!approvalSaysItAll(part) && <span className={"badge tool-state " + state}>{TOOL_STATE_LABEL[state] ?? state}</span>}
        <ApprovalStateBadge part={part} />
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

/**
 * Allow / Deny (and a reason) for a tool call that asks first (`approval-requested`): the same
 * controls as the thread's approval bar, with `tool-` test ids.
 */
function ApprovalActions({ part, store }) {
  const id = part.approval.id;
  return (
    <div className="tool-actions" data-testid="tool-approval" data-approval-id={id}>
      <span className="tool-question">
        Run <code>{toolNameOf(part)}</code>{part.input !== undefined ? <> with <code>{inputSummary(part.input)}</code></> : null}?
      </span>
      <ApprovalControls prefix="tool-" idFor={"reason-" + part.toolCallId} onRespond={(answer) => store.addToolApprovalResponse({ id, ...answer })} />
    </div>
  );
}

/** pi's `askUser` while it waits (`input-available` with `interrupt`): one button per option. */
function QuestionActions({ part, store }) {
  const { question, options } = part.interrupt ?? {};
  return (
    <div className="tool-actions" data-testid="tool-question" data-tool-call-id={part.toolCallId}>
      <span className="tool-question">{question ?? "Your answer"}</span>
      <QuestionOptions prefix="tool-" options={options} onAnswer={(option) => store.addToolOutput({ toolCallId: part.toolCallId, output: option })} />
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

/** A tool that asks the user (pi's `askUser`): while it waits, the question and its options. */
export function AskUserTool({ part, store }) {
  const waiting = part.state === "input-available" && part.interrupt && store;
  return <PlainTool part={part} store={store} actions={waiting ? <QuestionActions part={part} store={store} /> : undefined} />;
}

/**
 * `pi.subagent` (renderer id `pi-subagent`): the nested agent run as a collapsible transcript
 * (shared with the assistant-ui example); without its typed details it is the plain tool UI.
 */
export function PiSubagentTool({ part, store }) {
  return <PiSubagent part={part} fallback={<PlainTool part={part} store={store} />} />;
}

/** The app's registry: by renderer id, by (un-namespaced) tool name, then the plain UI. */
export const TOOL_RENDERERS = {
  "pi-subagent": PiSubagentTool,
  subagent: PiSubagentTool,
  getLocation: GetLocationTool,
  askUser: AskUserTool,
  fallback: PlainTool,
};
