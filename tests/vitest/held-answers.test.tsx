// An ask-user answer given through assistant-ui before the server asks (pi mode): the tool
// card shows the call from its input about a second before the server's ask, and a tool UI may
// `resume` it at once. The real store (the built package) holds the answer, the binding neither
// throws nor logs, and the answer is posted exactly once, when the ask arrives.
import { render, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { useCreateChatStore } from '../../pkg/react.js';
import { useChatStoreRuntime } from '../../pkg/assistant-ui.js';
import type { ChatStore } from '../../pkg/agent_chat_store.js';
import { plain, scriptedServer } from './server';

const server = scriptedServer();
const API = '/api/v1/agent';
const SESSION = 'held';

function scriptOpen(): void {
  server.on('GET', `${API}/capabilities`, plain(200, '{"nativeFollowUp":true,"aiSdkOwnsHistory":false}', 'application/json'));
  server.on('GET', `${API}/catalog`, plain(404));
  server.on('GET', `${API}/chat/${SESSION}/messages`, plain(200, '{"messages":[]}', 'application/json'));
  server.on('GET', `${API}/chat/${SESSION}/stream`, plain(204));
}

const pi = (type: string, seq: number, data: Record<string, unknown>) => ({ type: `data-pi-${type}`, data: { seq, ...data } });

interface Seen {
  store?: ChatStore;
  runtime?: ReturnType<typeof useChatStoreRuntime>;
}

function Host({ seen }: { seen: Seen }) {
  const store = useCreateChatStore({ baseUrl: server.at(''), sessionId: SESSION, persistSeq: false });
  seen.store = store;
  seen.runtime = useChatStoreRuntime(store);
  return null;
}

describe('an ask-user answer before the ask (pi)', () => {
  it('is held, shown in snapshot.pending.held, and posted once when the server asks', async () => {
    scriptOpen();
    const chat = server.stream('POST', `${API}/chat`);
    server.on('POST', `${API}/chat/${SESSION}/tool-output`, plain(202, '{"ok":true}', 'application/json'));
    const errors = vi.spyOn(console, 'error');
    const seen: Seen = {};
    const { unmount } = render(<Host seen={seen} />);
    const store = seen.store!;
    await waitFor(() => expect(store.getSnapshot().hydrated).toBe(true));
    store.send('ask which colour');
    await chat.opened;
    chat.write({ type: 'data-turn-start', data: { turnId: 'turn-1' } });
    chat.write(pi('message-start', 1, { messageId: 'a1', role: 'assistant' }));
    chat.write(pi('tool-call-start', 2, { messageId: 'a1', toolCallId: 'q1', toolName: 'askUser' }));
    chat.write(pi('tool-call-end', 3, { messageId: 'a1', toolCallId: 'q1', input: { question: 'which colour' } }));
    // The tool card shows the call (its input) before the server asks.
    await waitFor(() => expect(seen.runtime!.thread.getState().messages.some((m) => m.id === 'a1')).toBe(true));
    const part = seen.runtime!.thread.getMessageById('a1').getMessagePartByToolCallId('q1');
    expect(part.getState().interrupt).toBeUndefined();
    expect(() => part.resumeToolCall('green')).not.toThrow();
    expect(store.getSnapshot().pending.held).toMatchObject([{ toolCallId: 'q1', toolName: 'askUser', messageId: 'a1', output: 'green' }]);
    await new Promise((r) => setTimeout(r, 30));
    expect(server.requestsTo('POST', `${API}/chat/${SESSION}/tool-output`)).toHaveLength(0);

    chat.write(pi('tool-input-request', 4, { messageId: 'a1', toolCallId: 'q1', question: 'which colour', options: ['red', 'green'] }));
    await waitFor(() => expect(server.requestsTo('POST', `${API}/chat/${SESSION}/tool-output`)).toHaveLength(1));
    expect(server.requestsTo('POST', `${API}/chat/${SESSION}/tool-output`)[0].body).toEqual({ toolCallId: 'q1', output: 'green' });
    expect(store.getSnapshot().pending.held).toEqual([]);
    expect(store.getSnapshot().pending.questions).toEqual([]);

    chat.write(pi('tool-input-request', 4, { messageId: 'a1', toolCallId: 'q1', question: 'which colour' }));
    chat.write(pi('tool-result', 5, { messageId: 'a1', toolCallId: 'q1', output: { content: [{ type: 'text', text: 'green' }] } }));
    chat.end();
    await waitFor(() => expect(store.getSnapshot().status).toBe('ready'));
    expect(server.requestsTo('POST', `${API}/chat/${SESSION}/tool-output`)).toHaveLength(1);
    expect(store.getSnapshot().error).toBeNull();
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
    unmount();
  });
});
