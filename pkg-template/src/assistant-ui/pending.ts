// Thread-level hooks for the calls that wait for the user (`snapshot.pending`).
import { useCallback, useMemo, useSyncExternalStore } from "react";
import type { ChatStore, HeldAnswer, PendingApproval, PendingQuestion } from "../agent_chat_store.js";

/** What `usePending` returns: `snapshot.pending` and the actions that answer it. */
export interface PendingHandle {
  readonly approvals: readonly PendingApproval[];
  readonly questions: readonly PendingQuestion[];
  /** Answers given before their call could take them (`snapshot.pending.held`): sent once asked. */
  readonly held: readonly HeldAnswer[];
  /** `store.addToolApprovalResponse({id: approvalId, approved: true, reason?})`. */
  approve(approvalId: string, reason?: string): boolean;
  /** `store.addToolApprovalResponse({id: approvalId, approved: false, reason?})`. */
  deny(approvalId: string, reason?: string): boolean;
  /** `store.addToolOutput({toolCallId, output})`. */
  answer(toolCallId: string, output: unknown): boolean;
}

// ----- thread-level hooks for the calls that wait for the user ---------------------------------

/**
 * The tool calls of the open session that wait for the user (`snapshot.pending`, SPEC §13),
 * with the actions that answer them, for thread-level chrome (an approval bar, a question
 * card) beside or instead of per-part tool UIs: `{approvals, questions, held, approve(approvalId,
 * reason?), deny(approvalId, reason?), answer(toolCallId, output)}`. The actions return the
 * store's boolean (false: nothing of that id waits). The component re-renders only when what
 * waits changes, not on every streamed word, and needs no assistant-ui context (it works in a
 * nested sub-agent thread or outside the runtime provider).
 */
export function usePending(store: ChatStore): PendingHandle {
  const getPending = useCallback(() => store.getSnapshot().pending, [store]);
  const pending = useSyncExternalStore(store.subscribe, getPending, getPending);
  return useMemo(
    (): PendingHandle => ({
      approvals: pending.approvals,
      questions: pending.questions,
      held: pending.held,
      approve: (approvalId: string, reason?: string) => approve(store, approvalId, true, reason),
      deny: (approvalId: string, reason?: string) => approve(store, approvalId, false, reason),
      answer: (toolCallId: string, output: unknown) => store.addToolOutput({ toolCallId, output }),
    }),
    [pending, store],
  );
}

/**
 * `usePending(store)`'s approvals: `{pending, approve(approvalId, reason?), deny(approvalId,
 * reason?)}` (as the TrueFoundry runtime's `useTrueFoundryApprovals`).
 */
export function usePendingApprovals(store: ChatStore): {
  readonly pending: readonly PendingApproval[];
  approve(approvalId: string, reason?: string): boolean;
  deny(approvalId: string, reason?: string): boolean;
} {
  const { approvals, approve: yes, deny } = usePending(store);
  return useMemo(() => ({ pending: approvals, approve: yes, deny }), [approvals, yes, deny]);
}

/** `usePending(store)`'s questions: `{pending, answer(toolCallId, output)}`. */
export function usePendingQuestions(store: ChatStore): {
  readonly pending: readonly PendingQuestion[];
  answer(toolCallId: string, output: unknown): boolean;
} {
  const { questions, answer } = usePending(store);
  return useMemo(() => ({ pending: questions, answer }), [questions, answer]);
}

function approve(store: ChatStore, id: string, approved: boolean, reason: string | undefined): boolean {
  const answer: Parameters<ChatStore["addToolApprovalResponse"]>[0] = { id, approved };
  if (typeof reason === "string" && reason !== "") answer.reason = reason;
  return store.addToolApprovalResponse(answer);
}

