// Tool UIs: the app's renderer registry (the same shape `<ToolPart>` of agent-chat-store/react
// takes: renderer ids, tool names or un-namespaced aliases), mapped onto assistant-ui's tool UI
// slot (`MessagePrimitive.Parts components.tools`) by `makeToolUIs`. Renderers get `{part,
// toolCall}`; a tool call no entry matches gets the plain `Tool` with assistant-ui's props.
// Renderers are explicit imports of the app; nothing is loaded from the server.
import { makeToolUIs } from "agent-chat-store/assistant-ui";
import { ToolIcon } from "../../shared/icons.jsx";
import { Json } from "../../shared/parts.jsx";
import { PiSubagent } from "../../shared/subagent.jsx";

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

/**
 * `pi.subagent` (renderer id `pi-subagent`): the nested agent run as a collapsible transcript
 * (shared with the React example); without its typed details it is the plain tool UI. `part` is
 * the tool call as a UIMessage part (from `makeToolUIs`), `toolCall` assistant-ui's own props.
 */
export function PiSubagentTool({ part, toolCall }) {
  return <PiSubagent part={part} fallback={<Tool {...toolCall} />} />;
}

/** The app's registry: by renderer id, and by the un-namespaced tool name. */
export const TOOL_RENDERERS = {
  "pi-subagent": PiSubagentTool,
  subagent: PiSubagentTool,
};

/** `{by_name, Fallback}` for `MessagePrimitive.Parts components.tools` (created once). */
export const TOOL_UIS = makeToolUIs(TOOL_RENDERERS, { Fallback: Tool });
