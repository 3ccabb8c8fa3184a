// assistant-ui as its docs set up a new app: a runtime, `<AssistantRuntimeProvider>`, a
// `ThreadList` beside a `Thread`, and tool UIs made with `makeAssistantToolUI`. The one line
// that is ours is the runtime: `useChatStoreRuntime(store)` instead of one of assistant-ui's.
import { AssistantRuntimeProvider } from "@assistant-ui/react";
import { useChatStore } from "agent-chat-store/react";
import { useChatStoreRuntime } from "agent-chat-store/assistant-ui";
import { readConfig } from "../../shared/config.js";
import { useExampleStore } from "../../shared/store.js";
import { Thread } from "./Thread.jsx";
import { ThreadList } from "./ThreadList.jsx";
import { ToolUIs } from "./tools.jsx";

const config = readConfig();

export function App() {
  const { store } = useExampleStore(config);
  const runtime = useChatStoreRuntime(store);
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ToolUIs />
      <div className="layout">
        <aside className="sidebar">
          <ThreadList />
        </aside>
        <main className="main">
          <StatusLine store={store} />
          <Thread store={store} />
        </main>
      </div>
    </AssistantRuntimeProvider>
  );
}

// A one-line status for whoever drives the page (the end-to-end tests read it): the store's
// status and whether its capabilities are known yet.
function StatusLine({ store }) {
  const snapshot = useChatStore(store);
  return (
    <div className="status-line">
      <span data-testid="status" data-status={snapshot.status}>{snapshot.status}</span>
      <span data-testid="capabilities" data-loaded={String(snapshot.capabilitiesLoaded)}>
        {snapshot.capabilities.aiSdkOwnsHistory ? "AI SDK mode" : "pi mode"}
      </span>
    </div>
  );
}
