"use client";
// The chat as a client component. It is also rendered on the server: the store is made during
// render and does no IO until a subscribe, which the server never makes, so the server sends
// the empty chat's composer.
import { useChatStore, useCreateChatStore } from "agent-chat-store/react";

export default function Chat() {
  const store = useCreateChatStore({ baseUrl: "/", sessionId: "next-app" });
  const s = useChatStore(store);
  const send = (e) => {
    e.preventDefault();
    store.submit();
  };
  return (
    <main>
      {s.messages.map((m) => (
        <div key={m.id} className={`message ${m.role}`}>
          {m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")}
        </div>
      ))}
      {s.error && <p role="alert">{s.error.message}</p>}
      <form onSubmit={send}>
        <textarea value={s.composer.draft} onChange={(e) => store.setDraft(e.target.value)} />
        <button type="submit" disabled={!s.composer.canSend}>Send</button>
        {s.busy && <button type="button" onClick={() => store.stop()}>Stop</button>}
      </form>
    </main>
  );
}
