// The store both example apps create, the same way: the URL keeps the open session (every
// switch the store makes, a thread list's included, comes back through `onSessionChange`), and
// where the AI SDK owns history the conversation goes on by itself once a tool was answered
// (continue.js); in pi mode the store posts the answer to the server, which holds the call open.
import { useEffect, useRef, useState } from "react";
import { useCreateChatStore } from "agent-chat-store/react";
import { continueAfterToolAnswers } from "./continue.js";
import { useSessionUrl } from "./session.js";

/** Returns `{store, sessionId}`: the store is there from the first render (`useCreateChatStore`). */
export function useExampleStore(config) {
  const { sessionId, onSessionChange } = useSessionUrl(config.sessionId);
  const storeRef = useRef(null);
  const [sendAutomaticallyWhen] = useState(() => continueAfterToolAnswers(() => storeRef.current));
  // Created on mount, disposed on unmount; a changed `sessionId` option switches the session.
  const store = useCreateChatStore({
    baseUrl: config.baseUrl,
    sessionId,
    onSessionChange,
    sessionPageSize: config.sessionPageSize,
    protocol: config.protocol,
    agentType: config.agentType,
    capabilities: config.capabilities,
    sendAutomaticallyWhen,
  });
  useEffect(() => {
    storeRef.current = store;
  }, [store]);
  return { store, sessionId };
}
