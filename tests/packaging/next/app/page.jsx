// A server component: the package runs on the server too (here its pure reducer, in the same
// module instance the client component's hook is bundled with on the server).
import { replayPiStream } from "agent-chat-store";
import Chat from "./chat.jsx";

export const dynamic = "force-dynamic";

const greeting = replayPiStream([
  { type: "data-pi-message-start", data: { seq: 1, messageId: "g", role: "assistant" } },
  { type: "data-pi-message-end", data: { seq: 2, messageId: "g", role: "assistant", text: "Rendered on the server." } },
]).messages;

export default function Page() {
  return (
    <>
      <p data-testid="server-rendered">{greeting[0].parts[0].text}</p>
      <Chat />
    </>
  );
}
