// Human in the loop: assistant-ui's tool-answer callbacks as the store's two answer actions.
import { useMemo } from "react";
import type { ExternalStoreAdapter } from "@assistant-ui/react";
import type { ChatStore } from "../agent_chat_store.js";
import { isPlainObject } from "./parts.js";

/** The tool-answer callbacks `useChatStoreRuntime` gives assistant-ui, for an adapter of your own. */
export interface ToolAnswerCallbacks {
  /** `store.addToolApprovalResponse({id: approvalId, approved, reason?})`; rejects when refused. */
  onRespondToToolApproval: NonNullable<ExternalStoreAdapter["onRespondToToolApproval"]>;
  /** `store.addToolOutput({toolCallId, output})` (or `errorText` for an error result); rejects when refused. */
  onAddToolResult: NonNullable<ExternalStoreAdapter["onAddToolResult"]>;
  /** `store.addToolOutput({toolCallId, output: payload})` (an ask-user answer); throws when refused. */
  onResumeToolCall: NonNullable<ExternalStoreAdapter["onResumeToolCall"]>;
}

/**
 * The three tool-answer callbacks of assistant-ui's `ExternalStoreAdapter`, over `store`:
 * `onRespondToToolApproval` (a tool UI's `respondToApproval`), `onAddToolResult` (`addResult`)
 * and `onResumeToolCall` (`resume`, the ask-user answer). Exported for hosts that build their
 * own adapter. An answer given before the server asks (the tool card shows the call's input
 * first) is taken: the store holds it (`snapshot.pending.held`) and sends it once asked, or
 * shows why not (`NotAsked`). Each rejects (or, for `onResumeToolCall`, which assistant-ui calls
 * synchronously, throws) only when the store did not take the answer: no such call, or one
 * that has ended.
 */
export function createToolAnswerCallbacks(store: ChatStore): ToolAnswerCallbacks {
  return {
    // assistant-ui resolves the tool UI's response against the part's `approval` first
    // (runtime/utils/resolveToolApprovalResponse.ts), so a decision arrives as `{approvalId,
    // approved, reason?}`. A rejection leaves assistant-ui's gate retryable.
    onRespondToToolApproval: async ({ approvalId, approved, reason }) => {
      const answer: Parameters<ChatStore["addToolApprovalResponse"]>[0] = { id: approvalId, approved: approved === true };
      if (typeof reason === "string" && reason !== "") answer.reason = reason;
      if (!store.addToolApprovalResponse(answer)) {
        throw new Error(`No tool call waits for the approval ${approvalId}.`);
      }
    },
    // `addResult(result)`; `ToolResponse.toResponse` made it `{result, isError}`. An error
    // result is the store's `errorText` (the text itself, or the `{error}` shape this adapter
    // gives failed calls).
    onAddToolResult: async ({ toolCallId, result, isError }) => {
      const answer: Parameters<ChatStore["addToolOutput"]>[0] = isError
        ? { toolCallId, errorText: errorTextOf(result) }
        : { toolCallId, output: result };
      if (!store.addToolOutput(answer)) {
        throw new Error(`Tool call ${toolCallId} does not wait for a result.`);
      }
    },
    // `resume(payload)`: the user's answer to an `interrupt` (an ask-user question) is the
    // call's output. The same words assistant-ui uses when nothing resumes the call.
    onResumeToolCall: ({ toolCallId, payload }) => {
      if (!store.addToolOutput({ toolCallId, output: payload })) {
        throw new Error(`Tool call ${toolCallId} is not waiting for resume.`);
      }
    },
  };
}

export function useToolAnswers(store: ChatStore): ToolAnswerCallbacks {
  return useMemo(() => createToolAnswerCallbacks(store), [store]);
}

function errorTextOf(result: unknown): string {
  if (typeof result === "string") return result;
  if (isPlainObject(result) && typeof result.error === "string") return result.error;
  if (result === undefined) return "Tool failed";
  try {
    return JSON.stringify(result);
  } catch {
    return String(result);
  }
}

