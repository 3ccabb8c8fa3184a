// When the conversation goes on by itself after the user answered a tool (AI SDK mode, SPEC §13):
// the `ai` package's two built-in `sendAutomaticallyWhen` predicates, combined. Continue once
// the last assistant message's last step has all its client tool calls answered
// (`lastAssistantMessageIsCompleteWithToolCalls`) or all its approvals answered
// (`lastAssistantMessageIsCompleteWithApprovalResponses`). In pi mode the server holds the call
// open and the store posts the answer itself, so nothing is continued from here.
function lastStepTools(messages) {
  const message = messages[messages.length - 1];
  if (!message || message.role !== "assistant") return null;
  const start = message.parts.map((p) => p.type).lastIndexOf("step-start");
  const step = message.parts.slice(start + 1);
  const isTool = (p) => p.type === "dynamic-tool" || p.type.startsWith("tool-");
  return { step, isTool };
}
const answered = (p) => (p.state === "output-available" && p.preliminary !== true) || p.state === "output-error";

export function completeWithToolCalls({ messages }) {
  const last = lastStepTools(messages);
  if (!last) return false;
  const { step, isTool } = last;
  const client = step.filter((p) => isTool(p) && !p.providerExecuted);
  const lastTool = step.findLastIndex((p) => isTool(p) && !p.providerExecuted);
  return (
    client.length > 0 &&
    !step.slice(lastTool + 1).some((p) => p.type === "text" && p.state !== "done") &&
    client.every(answered)
  );
}

export function completeWithApprovalResponses({ messages }) {
  const last = lastStepTools(messages);
  if (!last) return false;
  const tools = last.step.filter(last.isTool);
  return (
    tools.some((p) => p.state === "approval-responded") &&
    tools.every((p) => answered(p) || p.state === "output-denied" || p.state === "approval-responded")
  );
}

/**
 * The store's `sendAutomaticallyWhen` option: true only where the AI SDK owns the history (the
 * server says so in its capabilities) and one of the two predicates holds. `getStore()` returns
 * the store once it exists (the option is given before the store is made).
 */
export function continueAfterToolAnswers(getStore) {
  return ({ messages }) => {
    const aiSdk = getStore()?.getSnapshot().capabilities.aiSdkOwnsHistory === true;
    return aiSdk && (completeWithToolCalls({ messages }) || completeWithApprovalResponses({ messages }));
  };
}
