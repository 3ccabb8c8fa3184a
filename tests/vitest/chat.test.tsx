// `new Chat({...})` shared by components through `useChat({chat})`: one conversation, shown
// by each, driven from any of them or from outside React.
import { Chat as AiSdkChat } from '@ai-sdk/react';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DefaultChatTransport } from 'ai';
import { Chat, useChat } from 'agent-chat-store/react';
import { describe, expect, it, vi } from 'vitest';
import { scriptedServer, sse, textAnswer } from './server';
import { ChatView } from './view';

const server = scriptedServer();
const text = (testId: string) => screen.getByTestId(testId).textContent;

function Pane({ name, chat }: { name: string; chat: any }) {
  const helpers = useChat({ chat });
  return (
    <ChatView chat={helpers} prefix={`${name}-`}>
      <button onClick={() => void helpers.sendMessage({ text: `Hello from ${name}` })}>{`send ${name}`}</button>
    </ChatView>
  );
}

describe('a shared Chat', () => {
  it('two components on one Chat show one conversation sent from one of them', async () => {
    const chat = new Chat({ id: 'shared-room', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
    server.on('POST', '/api/chat', sse(textAnswer(['Hi, left.'])));
    render(
      <>
        <Pane name="left" chat={chat} />
        <Pane name="right" chat={chat} />
      </>,
    );
    fireEvent.click(screen.getByText('send left'));
    await waitFor(() => expect(text('right-message-1')).toBe('assistant: Hi, left.'));
    await waitFor(() => expect(text('right-status')).toBe('ready'));
    expect(text('left-message-0')).toBe('user: Hello from left');
    expect(text('right-message-0')).toBe('user: Hello from left');
    expect(text('left-message-1')).toBe('assistant: Hi, left.');
    expect(text('left-status')).toBe('ready');
    const posts = server.requestsTo('POST', '/api/chat');
    expect(posts).toHaveLength(1);
    expect(posts[0].body.id).toBe('shared-room');
    expect(chat.id).toBe('shared-room');
    expect(chat.status).toBe('ready');
    expect(chat.messages.map((m: any) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.lastMessage?.role).toBe('assistant');
  });

  it('a send on the Chat itself, outside React, shows in the components', async () => {
    const chat = new Chat({ id: 'outside-room', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
    server.on('POST', '/api/chat', sse(textAnswer(['Heard you.'])));
    render(<Pane name="only" chat={chat} />);
    await act(async () => {
      await chat.sendMessage({ text: 'From a plain script' });
    });
    await waitFor(() => expect(text('only-message-1')).toBe('assistant: Heard you.'));
    expect(text('only-message-0')).toBe('user: From a plain script');
    expect(text('only-status')).toBe('ready');
  });

  it('messages set on the Chat show in its components, and lastMessage follows them', async () => {
    const chat = new Chat({ id: 'set-room', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
    render(<Pane name="only" chat={chat} />);
    act(() => {
      chat.messages = [
        { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Saved question' }] },
        { id: 'm2', role: 'assistant', parts: [{ type: 'text', text: 'Saved answer' }] },
      ];
    });
    await waitFor(() => expect(text('only-message-1')).toBe('assistant: Saved answer'));
    expect(text('only-message-0')).toBe('user: Saved question');
    expect(chat.lastMessage?.id).toBe('m2');
  });

  it('carries its store beside the AI SDK members (ours only)', async () => {
    const chat: any = new Chat({ id: 'store-room', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
    server.on('POST', '/api/chat', sse(textAnswer(['Kept.'])));
    render(<Pane name="only" chat={chat} />);
    fireEvent.click(screen.getByText('send only'));
    await waitFor(() => expect(text('only-message-1')).toBe('assistant: Kept.'));
    expect(typeof chat.store?.getSnapshot).toBe('function');
    expect(chat.store.getSnapshot().messages.map((m: any) => m.id)).toEqual(chat.messages.map((m: any) => m.id));
    expect(typeof chat.dispose).toBe('function');
  });

  it("refuses the AI SDK's own Chat with a TypeError (ours only)", () => {
    const foreign = new AiSdkChat({ id: 'foreign', transport: new DefaultChatTransport({ api: server.at('/api/chat') }) });
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(() => render(<Pane name="x" chat={foreign} />)).toThrow(TypeError);
    } finally {
      quiet.mockRestore();
    }
  });
});
