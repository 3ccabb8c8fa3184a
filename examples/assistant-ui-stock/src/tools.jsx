// Tool UIs as assistant-ui's docs write them: `makeAssistantToolUI({toolName, render})`,
// mounted once inside the runtime provider (`<ToolUIs />`), and a fallback for every other
// tool. The runtime forwards each answer to the store: `respondToApproval` (an approval),
// `resume` (a question the server asked), `addResult` (a result the UI gives).
import { useState } from "react";
import { makeAssistantToolUI } from "@assistant-ui/react";

function ToolCard({ toolName, status, children, ...rest }) {
  return (
    <div className="tool" data-testid="part-tool" data-tool-name={toolName} data-status={status?.type} {...rest}>
      <div className="tool-name">{toolName}</div>
      {children}
    </div>
  );
}

const json = (value) => (value === undefined ? "" : JSON.stringify(value));

/** Any tool without a UI of its own: its name, input and output. */
export function ToolFallback({ toolName, args, result, isError, status }) {
  return (
    <ToolCard toolName={toolName} status={status}>
      <pre className="tool-args">{json(args)}</pre>
      {result !== undefined && (
        <pre className={"tool-result" + (isError ? " error" : "")} data-testid="tool-result">{json(result)}</pre>
      )}
    </ToolCard>
  );
}

/** `deleteFile` asks for approval first: Approve / Deny through `respondToApproval`. */
const DeleteFileUI = makeAssistantToolUI({
  toolName: "deleteFile",
  render: ({ toolName, args, result, approval, respondToApproval, status }) => (
    <ToolCard toolName={toolName} status={status}>
      <div>Delete <code>{args?.path}</code>?</div>
      {approval && approval.approved === undefined && (
        <div className="row" data-testid="tool-approval">
          <button type="button" data-testid="tool-approve" onClick={() => respondToApproval({ approved: true })}>Approve</button>
          <button type="button" data-testid="tool-deny" onClick={() => respondToApproval({ approved: false, reason: "not now" })}>Deny</button>
        </div>
      )}
      {approval?.approved !== undefined && <div data-testid="tool-approval-answer">{approval.approved ? "approved" : "denied"}</div>}
      {result !== undefined && <pre className="tool-result" data-testid="tool-result">{json(result)}</pre>}
    </ToolCard>
  ),
});

/**
 * `askUser` asks the user a question: its options as buttons, shown from the call's input as
 * soon as it has them. An answer goes through `resume` once the server asked (`interrupt`),
 * and through `addResult` before that: the runtime holds it until the server asks.
 */
const AskUserUI = makeAssistantToolUI({
  toolName: "askUser",
  render: function AskUser({ toolName, args, result, interrupt, addResult, resume, status }) {
    const [chosen, setChosen] = useState(null);
    const asked = !!interrupt;
    const answer = (option) => {
      setChosen(option);
      if (asked) resume(option);
      else addResult(option);
    };
    return (
      <ToolCard toolName={toolName} status={status} data-asked={String(asked)}>
        <div>{args?.question}</div>
        {result === undefined && chosen === null && (
          <div className="row" data-testid="tool-question">
            {(args?.options ?? []).map((option) => (
              <button type="button" key={option} data-option={option} onClick={() => answer(option)}>{option}</button>
            ))}
          </div>
        )}
        {chosen !== null && result === undefined && <div data-testid="tool-answer-pending">You answered {chosen}</div>}
        {result !== undefined && <pre className="tool-result" data-testid="tool-result">{json(result)}</pre>}
      </ToolCard>
    );
  },
});

export function ToolUIs() {
  return (
    <>
      <DeleteFileUI />
      <AskUserUI />
    </>
  );
}
