// Tool UIs: the app's renderer registry (the same shape `<ToolPart>` of agent-chat-store/react
// takes: renderer ids, tool names or un-namespaced aliases), mapped onto assistant-ui's tool UI
// slot (`MessagePrimitive.Parts components.tools`) by `makeToolUIs`. Renderers get `{part,
// toolCall}`; a tool call no entry matches gets the plain `Tool` with assistant-ui's props.
// Renderers are explicit imports of the app; nothing is loaded from the server.
//
// Tools that wait for the user (SPEC §13) answer through assistant-ui's own tool UI props, as a
// tool UI written for any assistant-ui runtime does: `respondToApproval({approved, reason?})`
// for a call that asks for approval (`deleteFile`, both runtimes), `resume(answer)` for pi's
// `askUser` question (assistant-ui's `interrupt`), `addResult(output)` for `getLocation`, a tool
// the client runs (AI SDK runtime). The adapter forwards them to the store
// (`onRespondToToolApproval`, `onResumeToolCall`, `onAddToolResult`).
import { useState } from "react";
import { MessagePartPrimitive, MessagePrimitive, useAuiState } from "@assistant-ui/react";
import { makeToolUIs } from "agent-chat-store/assistant-ui";
import { ToolIcon } from "../../shared/icons.jsx";
import { Json } from "../../shared/parts.jsx";
import { PiSubagent, TranscriptEntry } from "../../shared/subagent.jsx";
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

export function Tool(props) {
  // `state`: the store's state of the call, which the binding keeps on the tool-call part.
  const { toolName, args, argsText, result, isError, toolCallId, artifact, state } = props;
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

/**
 * A tool call as the UIMessage part `makeToolUIs` gives (`part`): name, state, the approval's
 * state, input, output or error, approval. `actions` (the controls of a call that waits) come
 * first, and keep it open.
 */
function PartTool({ part, actions }) {
  const { state } = part;
  const failed = state === "output-error" || state === "output-denied";
  const waiting = actions != null;
  return (
    <details
      className={"part-tool" + (failed ? " failed" : "") + (waiting ? " waiting" : "")}
      data-testid="part-tool"
      data-tool-name={part.toolName}
      data-state={state}
      data-tool-call-id={part.toolCallId}
      data-renderer="interactive"
      open={failed || waiting || undefined}
    >
      <summary>
        <span className="tool-icon"><ToolIcon /></span>
        <span className="tool-name">{part.toolName}</span>
        {!approvalSaysItAll(part) && <span className={"badge tool-state " + state}>{TOOL_STATE_LABEL[state] ?? state}</span>}
        <ApprovalStateBadge part={part} />
      </summary>
      <div className="tool-body">
        {actions}
        {state === "output-denied" && (
          <div className="tool-section denied" data-testid="tool-denied">
            Not run: the user denied it{part.approval?.reason ? ` (${part.approval.reason})` : ""}.
          </div>
        )}
        <div className="tool-section">
          <div className="label">Input</div>
          <Json value={part.input} />
        </div>
        {state === "output-available" && (
          <div className="tool-section" data-testid="tool-output">
            <div className="label">Output</div>
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
      </div>
    </details>
  );
}

/**
 * Calls one of assistant-ui's answer functions; what it throws or rejects with (the runtime did
 * not take the answer) is shown under the controls, which stay for another try.
 */
function useAnswer() {
  const [error, setError] = useState(null);
  const run = (fn) => {
    setError(null);
    try {
      Promise.resolve(fn()).catch(setError);
    } catch (e) {
      setError(e);
    }
  };
  const view = error ? <div className="pending-error" data-testid="tool-answer-error">{String(error.message ?? error)}</div> : null;
  return [run, view];
}

/** A tool that asks first (`deleteFile`): Allow / Deny with a reason, `respondToApproval`. */
export function ApprovalTool({ part, toolCall }) {
  const [run, error] = useAnswer();
  const waiting = part.state === "approval-requested" && part.approval?.id;
  const actions = waiting ? (
    <div className="tool-actions" data-testid="tool-approval" data-approval-id={part.approval.id}>
      <span className="tool-question">
        Run <code>{part.toolName}</code>{inputSummary(part.input) ? <> with <code>{inputSummary(part.input)}</code></> : null}?
      </span>
      <ApprovalControls prefix="tool-" idFor={"reason-" + part.toolCallId} onRespond={(answer) => run(() => toolCall.respondToApproval(answer))} />
      {error}
    </div>
  ) : undefined;
  return <PartTool part={part} actions={actions} />;
}

/** pi's `askUser` (assistant-ui's `interrupt`): one button per option, `resume(option)`. */
export function AskUserTool({ part, toolCall }) {
  const [run, error] = useAnswer();
  const question = part.interrupt ?? (toolCall.interrupt?.payload || null);
  const actions = part.state === "input-available" && question ? (
    <div className="tool-actions" data-testid="tool-question" data-tool-call-id={part.toolCallId}>
      <span className="tool-question">{question.question ?? "Your answer"}</span>
      <QuestionOptions prefix="tool-" options={question.options} onAnswer={(option) => run(() => toolCall.resume(option))} />
      {error}
    </div>
  ) : undefined;
  return <PartTool part={part} actions={actions} />;
}

/** `getLocation`, a tool the client runs (AI SDK runtime): a city, `addResult({city})`. */
export function GetLocationTool({ part, toolCall }) {
  const [run, error] = useAnswer();
  const [city, setCity] = useState("Paris");
  const waiting = part.state === "input-available";
  const submit = (e) => {
    e.preventDefault();
    if (city.trim()) run(() => toolCall.addResult({ city: city.trim() }));
  };
  const actions = waiting ? (
    <form className="tool-actions" data-testid="tool-output-form" onSubmit={submit}>
      <label className="tool-question" htmlFor={"city-" + part.toolCallId}>Your city</label>
      <input id={"city-" + part.toolCallId} data-testid="tool-output-input" value={city} onChange={(e) => setCity(e.target.value)} spellCheck={false} />
      <button type="submit" className="approve" data-testid="tool-output-submit" disabled={!city.trim()}>Share</button>
      {error}
    </form>
  ) : undefined;
  return <PartTool part={part} actions={actions} />;
}

/**
 * `pi.subagent` (renderer id `pi-subagent`): the nested agent run as a collapsible transcript
 * (shared with the React example); without its typed details it is the plain tool UI. `part` is
 * the tool call as a UIMessage part (from `makeToolUIs`), `toolCall` assistant-ui's own props.
 * The nested messages are the tool-call part's `messages` (the runtime's conversion of the
 * sub-agent's transcript), rendered by assistant-ui's `MessagePartPrimitive.Messages` in a
 * read-only nested thread.
 */
export function PiSubagentTool({ part, toolCall }) {
  const nested = toolCall.messages?.length ? <NestedMessages /> : undefined;
  return <PiSubagent part={part} fallback={<Tool {...toolCall} />} transcript={nested} />;
}

function NestedMessages() {
  return (
    <div className="nested-messages" data-testid="nested-messages">
      <MessagePartPrimitive.Messages>{() => <NestedMessage />}</MessagePartPrimitive.Messages>
    </div>
  );
}

// One message of the nested thread; each of its parts is one transcript entry.
function NestedMessage() {
  const role = useAuiState((s) => s.message.role);
  const status = useAuiState((s) => s.message.status?.type ?? "complete");
  return (
    <MessagePrimitive.Root className="nested-message" data-testid="nested-message" data-role={role} data-status={status}>
      <MessagePrimitive.Parts components={NESTED_PART_COMPONENTS} />
    </MessagePrimitive.Root>
  );
}

function NestedText({ text }) {
  const role = useAuiState((s) => s.message.role);
  return <TranscriptEntry role={role} text={text} />;
}

// A nested tool call (the transcript's `tool` entry): its result is the entry's text.
function NestedToolCall({ toolName, result, isError }) {
  const text = isError ? (result?.error ?? "") : typeof result === "string" ? result : result === undefined ? "" : JSON.stringify(result);
  return <TranscriptEntry role="tool" toolName={toolName} text={text} isError={isError} />;
}

// A finished nested message without content (the transcript's empty entry); a running or
// failed one has its state shown by the tool UI around it. (assistant-ui also renders `Empty`
// after a message's last tool call; that is no entry.)
function NestedEmpty({ status }) {
  const role = useAuiState((s) => s.message.role);
  const empty = useAuiState((s) => s.message.parts.length === 0);
  return empty && status?.type === "complete" ? <TranscriptEntry role={role} text="" /> : null;
}

const NESTED_PART_COMPONENTS = {
  Text: NestedText,
  Empty: NestedEmpty,
  tools: { Fallback: NestedToolCall },
};

/** The app's registry: by renderer id, and by the un-namespaced tool name. */
export const TOOL_RENDERERS = {
  "pi-subagent": PiSubagentTool,
  subagent: PiSubagentTool,
  deleteFile: ApprovalTool,
  askUser: AskUserTool,
  getLocation: GetLocationTool,
};

/** `{by_name, Fallback}` for `MessagePrimitive.Parts components.tools` (created once). */
export const TOOL_UIS = makeToolUIs(TOOL_RENDERERS, { Fallback: Tool });
