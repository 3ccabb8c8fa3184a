// The transports an app hands `useChat`: `ai`'s DefaultChatTransport (body, headers, a
// prepareSendMessagesRequest hook), TextStreamChatTransport, and an object of the app's own.
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DefaultChatTransport, TextStreamChatTransport } from 'ai';
import { useChat } from 'agent-chat-store/react';
import { describe, expect, it, vi } from 'vitest';
import { plain, scriptedServer, sse, textAnswer } from './server';
import { ChatView } from './view';

const server = scriptedServer();
const text = (testId: string) => screen.getByTestId(testId).textContent;

function Desk({ id, transport }: { id: string; transport: any }) {
  const chat = useChat({ id, transport });
  return (
    <ChatView chat={chat}>
      <button onClick={() => void chat.sendMessage({ text: 'Book a room.' })}>ask</button>
    </ChatView>
  );
}

describe('DefaultChatTransport', () => {
  it("sends the transport's body keys and headers with each POST", async () => {
    server.on('POST', '/api/chat', sse(textAnswer(['Room 4 is free.'])));
    const transport = new DefaultChatTransport({
      api: server.at('/api/chat'),
      body: { building: 'north' },
      headers: { 'x-desk': 'front' },
    });
    render(<Desk id="desk-1" transport={transport} />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: Room 4 is free.'));
    const [sent] = server.requestsTo('POST', '/api/chat');
    expect(sent.headers['x-desk']).toBe('front');
    expect(sent.body).toMatchObject({ building: 'north', id: 'desk-1', trigger: 'submit-message' });
    expect(sent.body.messages).toHaveLength(1);
  });

  it('lets prepareSendMessagesRequest choose the URL, the headers and the whole body', async () => {
    server.on('POST', '/api/rooms', sse(textAnswer(['Booked.'])));
    const prepare = vi.fn(({ id, messages }: any) => ({
      api: server.at('/api/rooms'),
      headers: { 'x-prepared': 'yes' },
      body: { chat: id, question: messages[messages.length - 1].parts[0].text },
    }));
    const transport = new DefaultChatTransport({ api: server.at('/api/chat'), prepareSendMessagesRequest: prepare });
    render(<Desk id="desk-2" transport={transport} />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: Booked.'));
    expect(server.requestsTo('POST', '/api/chat')).toHaveLength(0);
    const [sent] = server.requestsTo('POST', '/api/rooms');
    expect(sent.headers['x-prepared']).toBe('yes');
    expect(sent.body).toEqual({ chat: 'desk-2', question: 'Book a room.' });
    expect(prepare).toHaveBeenCalledWith(expect.objectContaining({ id: 'desk-2', trigger: 'submit-message' }));
  });
});

describe('TextStreamChatTransport', () => {
  it('shows a text/plain answer as the assistant text', async () => {
    const answer = server.stream('POST', '/api/text', { 'content-type': 'text/plain; charset=utf-8' });
    render(<Desk id="desk-3" transport={new TextStreamChatTransport({ api: server.at('/api/text') })} />);
    fireEvent.click(screen.getByText('ask'));
    await answer.opened;
    answer.writeRaw('Room 12, ');
    await waitFor(() => expect(text('message-1')).toBe('assistant: Room 12, '));
    answer.writeRaw('second floor.');
    answer.end(false);
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(text('message-1')).toBe('assistant: Room 12, second floor.');
    const [sent] = server.requestsTo('POST', '/api/text');
    expect(sent.body).toMatchObject({ id: 'desk-3', trigger: 'submit-message' });
  });

  it('an error status from a text route is the error, with its body as the message', async () => {
    server.on('POST', '/api/text', plain(502, 'upstream gateway down'));
    render(<Desk id="desk-4" transport={new TextStreamChatTransport({ api: server.at('/api/text') })} />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('status')).toBe('error'));
    expect(text('error')).toBe('upstream gateway down');
  });
});

describe('a transport of the app', () => {
  it("shows what its sendMessages stream gives, and is asked with the chat's id and trigger", async () => {
    const transport = {
      sendMessages: vi.fn(async ({ messages }: any) => {
        const asked = messages[messages.length - 1].parts[0].text;
        return new ReadableStream({
          start(controller) {
            for (const chunk of textAnswer(['You said: ', asked], { messageId: 'local-1' })) controller.enqueue(chunk);
            controller.close();
          },
        });
      }),
      reconnectToStream: vi.fn(async () => null),
    };
    render(<Desk id="desk-5" transport={transport} />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: You said: Book a room.'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(transport.sendMessages).toHaveBeenCalledTimes(1);
    expect(transport.sendMessages.mock.calls[0][0]).toMatchObject({ chatId: 'desk-5', trigger: 'submit-message' });
    expect(server.requests).toHaveLength(0);
  });

  it("resume: true reads the transport's reconnectToStream and shows what it gives", async () => {
    const transport = {
      sendMessages: vi.fn(async () => {
        throw new Error('not asked in this test');
      }),
      reconnectToStream: vi.fn(async () =>
        new ReadableStream({
          start(controller) {
            for (const chunk of textAnswer(['picked up again'], { messageId: 'back-1' })) controller.enqueue(chunk);
            controller.close();
          },
        }),
      ),
    };
    function Returning() {
      const chat = useChat({ id: 'desk-6', transport, resume: true });
      return <ChatView chat={chat} />;
    }
    render(<Returning />);
    await waitFor(() => expect(text('message-0')).toBe('assistant: picked up again'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(transport.reconnectToStream).toHaveBeenCalledWith(expect.objectContaining({ chatId: 'desk-6' }));
    expect(transport.sendMessages).not.toHaveBeenCalled();
  });

  it("a sendMessages that throws is the chat's error, its message kept", async () => {
    const transport = {
      sendMessages: vi.fn(async () => {
        throw new Error('offline: the queue is full');
      }),
      reconnectToStream: vi.fn(async () => null),
    };
    render(<Desk id="desk-7" transport={transport} />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('status')).toBe('error'));
    expect(text('error')).toBe('offline: the queue is full');
    expect(text('message-0')).toBe('user: Book a room.');
  });
});
