// The streaming scenario run under each DOM environment (realm-jsdom.test.tsx,
// realm-happy-dom.test.tsx). Each environment puts its own globals beside the fetch it leaves
// or brings, so the bytes of an answer body need not be the global Uint8Array's: a chat must
// read them whatever realm made them. The answer is cut mid-event and mid-character.
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DefaultChatTransport } from 'ai';
import { useChat } from 'agent-chat-store/react';
import { expect, it } from 'vitest';
import { type ScriptedServer, sseEvent, textAnswer } from './server';
import { ChatView } from './view';

export function streamsBytesFromAnyRealm(server: ScriptedServer) {
  it('streams an SSE answer cut anywhere, multi-byte characters split across reads', async () => {
    function Cafe() {
      const chat = useChat({ id: 'realm-chat', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
      return (
        <ChatView chat={chat}>
          <button onClick={() => void chat.sendMessage({ text: 'Order?' })}>ask</button>
        </ChatView>
      );
    }
    const answer = server.stream('POST', '/api/chat');
    render(<Cafe />);
    fireEvent.click(screen.getByText('ask'));
    await answer.opened;

    const wire = new TextEncoder().encode(
      textAnswer(['Un café ', 'и чай ', '🍵.'], { messageId: 'order-1', metadata: { table: 7 } })
        .map(sseEvent)
        .join('') + 'data: [DONE]\n\n',
    );
    // Cut inside 'é' (2 bytes) and inside '🍵' (4 bytes), and elsewhere every 7 bytes.
    const cuts = new Set<number>();
    for (let i = 7; i < wire.length; i += 7) cuts.add(i);
    const e = wire.indexOf(0xc3);
    const tea = wire.indexOf(0xf0);
    cuts.add(e + 1).add(tea + 1).add(tea + 3);
    let from = 0;
    for (const at of [...cuts].sort((a, b) => a - b)) {
      answer.writeBytes(wire.subarray(from, at));
      from = at;
    }
    answer.writeBytes(wire.subarray(from));
    answer.end(false);

    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('ready'));
    expect(screen.getByTestId('message-1').textContent).toBe('assistant: Un café и чай 🍵.');
    expect(JSON.parse(screen.getByTestId('metadata-1').textContent!)).toEqual({ table: 7 });
    expect(screen.getByTestId('error').textContent).toBe('');
  });
}
