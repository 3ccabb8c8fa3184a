// The `id` option over a component's life: a new id is a new chat at once, and an id that
// changes on every render settles instead of rendering forever.
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DefaultChatTransport } from 'ai';
import { useChat } from 'agent-chat-store/react';
import { StrictMode, useLayoutEffect, useState } from 'react';
import { describe, expect, it } from 'vitest';
import { scriptedServer, sse, textAnswer } from './server';
import { ChatView } from './view';

const server = scriptedServer();
const text = (testId: string) => screen.getByTestId(testId).textContent;

describe('id changes', () => {
  it('a new id shows the new, empty chat in the very commit that asks for it', async () => {
    const commits: Array<{ asked: string; chatId: string; messages: number }> = [];
    function Inbox() {
      const [id, setId] = useState('inbox-a');
      const chat = useChat({ id, transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
      useLayoutEffect(() => {
        commits.push({ asked: id, chatId: chat.id, messages: chat.messages.length });
      });
      return (
        <ChatView chat={chat}>
          <button onClick={() => void chat.sendMessage({ text: 'Any mail?' })}>ask</button>
          <button onClick={() => setId('inbox-b')}>switch</button>
        </ChatView>
      );
    }
    server.on('POST', '/api/chat', sse(textAnswer(['Two new letters.'])));
    server.on('POST', '/api/chat', sse(textAnswer(['Nothing here.'])));
    render(<Inbox />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: Two new letters.'));
    await waitFor(() => expect(text('status')).toBe('ready'));

    commits.length = 0;
    fireEvent.click(screen.getByText('switch'));
    const afterSwitch = commits.filter((c) => c.asked === 'inbox-b');
    expect(afterSwitch.length).toBeGreaterThan(0);
    expect(afterSwitch).toEqual(afterSwitch.map(() => ({ asked: 'inbox-b', chatId: 'inbox-b', messages: 0 })));
    expect(screen.queryByTestId('message-0')).toBeNull();

    // The new chat's first POST carries its own id and only its own message.
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: Nothing here.'));
    const second = server.requestsTo('POST', '/api/chat')[1].body;
    expect(second.id).toBe('inbox-b');
    expect(second.messages).toHaveLength(1);
  });

  it('an id that changes on every render does not render forever', async () => {
    let renders = 0;
    function Restless() {
      renders += 1;
      const chat = useChat({ id: `restless-${renders}`, transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
      return <ChatView chat={chat} />;
    }
    render(<Restless />);
    await act(async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    });
    const settled = renders;
    expect(settled).toBeLessThan(10);
    await act(async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    });
    expect(renders).toBe(settled);
    expect(text('status')).toBe('ready');
  });
});

describe('StrictMode', () => {
  it('its double render and simulated remount leave one chat that sends once and shows its answer', async () => {
    function Inbox() {
      const chat = useChat({ id: 'strict-inbox', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
      return (
        <ChatView chat={chat}>
          <button onClick={() => void chat.sendMessage({ text: 'Any mail?' })}>ask</button>
        </ChatView>
      );
    }
    server.on('POST', '/api/chat', sse(textAnswer(['One letter.'])));
    render(
      <StrictMode>
        <Inbox />
      </StrictMode>,
    );
    fireEvent.click(screen.getByText('ask'));
    expect(text('message-0')).toBe('user: Any mail?');
    await waitFor(() => expect(text('message-1')).toBe('assistant: One letter.'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(server.requestsTo('POST', '/api/chat')).toHaveLength(1);
  });
});
