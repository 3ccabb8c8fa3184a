// The chat as a webpack 5 app (plain JS, no JSX, so no loader either).
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";
import { useChatStore, useCreateChatStore } from "agent-chat-store/react";

function App() {
  const store = useCreateChatStore({ baseUrl: "/", sessionId: "webpack-app" });
  const s = useChatStore(store);
  if (!s) return h("p", null, "Loading…");
  const send = (e) => { e.preventDefault(); store.submit(); };
  return h("main", null,
    s.messages.map((m) => h("div", { key: m.id, className: `message ${m.role}` },
      m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""))),
    s.error && h("p", { role: "alert" }, s.error.message),
    h("form", { onSubmit: send },
      h("textarea", { value: s.composer.draft, onChange: (e) => store.setDraft(e.target.value) }),
      h("button", { type: "submit", disabled: !s.composer.canSend }, "Send"),
      s.busy && h("button", { type: "button", onClick: () => store.stop() }, "Stop")));
}

createRoot(document.getElementById("root")).render(h(App));
