// `useChat` with the shape of `@ai-sdk/react` 4.x's, on a `Chat` of this package: an app
// written for `useChat` changes its import and keeps its code. The hook only renders a chat;
// what a chat does is `chat.js`'s, and what a turn does is the store's.
import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import { Chat, RELEASE, UPDATE } from "./chat.js";
import type { UIMessage, UseChatHelpers, UseChatOptions } from "./ai-types.js";

export { Chat };

/**
 * `useChat` of `@ai-sdk/react` 4.x. With `{ chat }`, renders that chat (shared by every
 * component given it); otherwise makes one from the options during render, and a new one when
 * `id` changes (the old one finishes its turn unseen, then is disposed). Returns `id, messages,
 * setMessages, sendMessage, regenerate, stop, resumeStream, addToolOutput (addToolResult),
 * addToolApprovalResponse, status, error, clearError`, and the store's own `store, queued,
 * composer, pending, sessions, busy, capabilities`. The callbacks called are always the latest
 * passed. See the package README's migration table for each option.
 */
export function useChat<UI_MESSAGE extends UIMessage = UIMessage>(
  options: UseChatOptions<UI_MESSAGE> = {},
): UseChatHelpers<UI_MESSAGE> {
  const given = (options as { chat?: Chat<UI_MESSAGE> | null }).chat;
  if (given != null && !Chat.isChat(given)) {
    throw new TypeError(
      "useChat({ chat }): this chat is not an agent-chat-store Chat (an `ai` Chat?); make it with " +
        "`new Chat(options)` from 'agent-chat-store/react'",
    );
  }
  const own = useRef<Chat<UI_MESSAGE> | null>(null);
  // Without `chat`, the options are a chat's.
  type Init = Exclude<UseChatOptions<UI_MESSAGE>, { chat: Chat<UI_MESSAGE> }>;
  let chat = given as Chat<UI_MESSAGE>;
  if (chat == null) {
    // Made during render, as `@ai-sdk/react` makes its chat: the first render and a changed
    // `id` show the new chat at once (its constructor makes no request).
    if (own.current == null || ((options as Init).id !== undefined && own.current.id !== (options as Init).id)) {
      own.current = new Chat(options as Init);
    }
    chat = own.current;
    chat[UPDATE](options as Init);
  }

  useEffect(() => {
    if (given != null) return undefined;
    const made = chat;
    return () => made[RELEASE]();
  }, [chat, given]);

  const subscribe = useCallback((onChange: () => void) => chat.subscribe(onChange), [chat]);
  const getSnapshot = useCallback(() => chat.getSnapshot(), [chat]);
  const view = useSyncExternalStore(subscribe, getSnapshot, getSnapshot);

  const resume = options.resume;
  useEffect(() => {
    // As `useChat`: asks the stream route once, for a turn still running (a reload).
    if (resume) chat.resumeStream();
  }, [resume, chat]);

  const actions: Pick<
    UseChatHelpers<UI_MESSAGE>,
    | "sendMessage"
    | "regenerate"
    | "stop"
    | "resumeStream"
    | "addToolOutput"
    | "addToolResult"
    | "addToolApprovalResponse"
    | "clearError"
    | "setMessages"
  > = useMemo(
    () => ({
      sendMessage: (message, opts) => chat.sendMessage(message, opts),
      regenerate: (opts) => chat.regenerate(opts),
      stop: () => chat.stop(),
      resumeStream: (opts) => chat.resumeStream(opts),
      addToolOutput: (args) => chat.addToolOutput(args),
      addToolResult: (args) => chat.addToolOutput(args),
      addToolApprovalResponse: (args) => chat.addToolApprovalResponse(args),
      clearError: () => chat.clearError(),
      setMessages: (next) => chat.setMessages(next),
    }),
    [chat],
  );

  return {
    id: chat.id,
    messages: view.messages,
    status: view.status,
    error: view.error,
    ...actions,
    /** The store under the chat (made on first use). */
    get store() {
      return chat.store;
    },
    busy: view.busy,
    queued: view.queued,
    composer: view.composer,
    // `null` until the chat has a store (a first render against a server of the store's family);
    // `UseChatHelpers` declares the snapshot's type, as it always has.
    pending: view.pending as UseChatHelpers<UI_MESSAGE>["pending"],
    sessions: view.sessions,
    capabilities: view.capabilities,
  };
}
