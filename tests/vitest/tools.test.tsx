// Client-side tools through `useChat`: `onToolCall` answering with `addToolOutput` (the latest
// callback passed is the one called), and a tool that asks for approval before it runs.
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { useChat } from 'agent-chat-store/react';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { scriptedServer, sse, textAnswer } from './server';
import { ChatView } from './view';

const server = scriptedServer();
const text = (testId: string) => screen.getByTestId(testId).textContent;

describe('onToolCall', () => {
  it('calls the onToolCall of the latest render, whose addToolOutput fills the part', async () => {
    const heard = vi.fn();
    function Trip() {
      const [home, setHome] = useState('Lisbon');
      const chat = useChat({
        id: 'trip-chat',
        transport: new DefaultChatTransport({ api: server.at('/api/chat') }),
        onToolCall: ({ toolCall }: any) => {
          heard(home, toolCall);
          void chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: `${home} airport` });
        },
      });
      return (
        <ChatView chat={chat}>
          <button onClick={() => setHome('Porto')}>move</button>
          <button onClick={() => void chat.sendMessage({ text: 'Where do I fly from?' })}>ask</button>
        </ChatView>
      );
    }
    server.on(
      'POST',
      '/api/chat',
      sse([
        { type: 'start', messageId: 'plan-1' },
        { type: 'start-step' },
        { type: 'tool-input-available', toolCallId: 'call-7', toolName: 'homeAirport', input: { near: 'home' } },
        { type: 'finish-step' },
        { type: 'finish' },
      ]),
    );
    render(<Trip />);
    fireEvent.click(screen.getByText('move'));
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: [homeAirport output-available "Porto airport"]'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(heard).toHaveBeenCalledTimes(1);
    expect(heard.mock.calls[0][0]).toBe('Porto');
    expect(heard.mock.calls[0][1]).toMatchObject({ toolCallId: 'call-7', toolName: 'homeAirport', input: { near: 'home' } });
    // No sendAutomaticallyWhen: the output stays on this side.
    expect(server.requestsTo('POST', '/api/chat')).toHaveLength(1);
  });
});

describe('tool outputs sent on', () => {
  it('an output (and an output error) completing the step sends it by sendAutomaticallyWhen', async () => {
    function Converter() {
      const chat = useChat({
        id: 'units-chat',
        transport: new DefaultChatTransport({ api: server.at('/api/chat') }),
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
        onToolCall: ({ toolCall }: any) => {
          if (toolCall.toolName === 'toCelsius') {
            void chat.addToolOutput({ tool: 'toCelsius', toolCallId: toolCall.toolCallId, output: { celsius: 20 } });
          } else {
            void chat.addToolOutput({
              tool: toolCall.toolName,
              toolCallId: toolCall.toolCallId,
              state: 'output-error',
              errorText: 'no such unit here',
            });
          }
        },
      });
      return (
        <ChatView chat={chat}>
          <button onClick={() => void chat.sendMessage({ text: '68°F and 3 leagues?' })}>ask</button>
        </ChatView>
      );
    }
    server.on(
      'POST',
      '/api/chat',
      sse([
        { type: 'start', messageId: 'conv-1' },
        { type: 'start-step' },
        { type: 'tool-input-available', toolCallId: 'call-c', toolName: 'toCelsius', input: { fahrenheit: 68 } },
        { type: 'tool-input-available', toolCallId: 'call-l', toolName: 'toKm', input: { leagues: 3 } },
        { type: 'finish-step' },
        { type: 'finish' },
      ]),
    );
    server.on('POST', '/api/chat', sse(textAnswer(['20 °C; leagues I cannot convert.'])));
    render(<Converter />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(server.requestsTo('POST', '/api/chat')).toHaveLength(2));
    const followUp = server.requestsTo('POST', '/api/chat')[1].body;
    expect(followUp.trigger).toBe('submit-message');
    const parts = followUp.messages[1].parts;
    expect(parts).toContainEqual(
      expect.objectContaining({ toolCallId: 'call-c', state: 'output-available', output: { celsius: 20 } }),
    );
    expect(parts).toContainEqual(
      expect.objectContaining({ toolCallId: 'call-l', state: 'output-error', errorText: 'no such unit here' }),
    );
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(text('message-1')).toBe(
      'assistant: [toCelsius output-available {"celsius":20}][toKm output-error]20 °C; leagues I cannot convert.',
    );
  });
});

describe('approvals', () => {
  it('shows approval-requested, and an approval sends the follow-up POST by sendAutomaticallyWhen', async () => {
    function Cleanup() {
      const chat = useChat({
        id: 'cleanup-chat',
        transport: new DefaultChatTransport({ api: server.at('/api/chat') }),
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      return (
        <ChatView chat={chat}>
          <button onClick={() => void chat.sendMessage({ text: 'Free some disk space.' })}>ask</button>
          <button onClick={() => void chat.addToolApprovalResponse({ id: 'approval-3', approved: true })}>approve</button>
        </ChatView>
      );
    }
    server.on(
      'POST',
      '/api/chat',
      sse([
        { type: 'start', messageId: 'work-1' },
        { type: 'start-step' },
        { type: 'tool-input-available', toolCallId: 'call-rm', toolName: 'removeFile', input: { path: '/var/log/old.log' } },
        { type: 'tool-approval-request', approvalId: 'approval-3', toolCallId: 'call-rm' },
        { type: 'finish-step' },
        { type: 'finish' },
      ]),
    );
    server.on(
      'POST',
      '/api/chat',
      sse([
        { type: 'start' },
        { type: 'start-step' },
        { type: 'tool-output-available', toolCallId: 'call-rm', output: { freedBytes: 4096 } },
        { type: 'finish-step' },
        { type: 'finish' },
      ]),
    );
    render(<Cleanup />);
    fireEvent.click(screen.getByText('ask'));
    await waitFor(() => expect(text('message-1')).toBe('assistant: [removeFile approval-requested]'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(server.requestsTo('POST', '/api/chat')).toHaveLength(1);

    fireEvent.click(screen.getByText('approve'));
    await waitFor(() => expect(server.requestsTo('POST', '/api/chat')).toHaveLength(2));
    const followUp = server.requestsTo('POST', '/api/chat')[1].body;
    expect(followUp.id).toBe('cleanup-chat');
    expect(followUp.trigger).toBe('submit-message');
    expect(followUp.messages).toHaveLength(2);
    expect(followUp.messages[1].parts).toContainEqual(
      expect.objectContaining({
        type: 'tool-removeFile',
        toolCallId: 'call-rm',
        state: 'approval-responded',
        approval: expect.objectContaining({ id: 'approval-3', approved: true }),
      }),
    );
    await waitFor(() => expect(text('message-1')).toBe('assistant: [removeFile output-available {"freedBytes":4096}]'));
    await waitFor(() => expect(text('status')).toBe('ready'));
    expect(screen.queryByTestId('message-2')).toBeNull();
  });
});
