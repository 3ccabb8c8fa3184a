// `useCreateChatStore` makes its store during render (its constructor does no IO) and the
// subscription starts it: StrictMode's double render and simulated remount make one store's
// requests, and the unmount disposes it. Imported from the built package directly (not through
// the suite's `useChat` alias: `@ai-sdk/react` has no such hook).
import { render, screen, waitFor } from '@testing-library/react';
import { Activity, StrictMode } from 'react';
import { describe, expect, it } from 'vitest';
import { useChatStore, useCreateChatStore } from '../../pkg/react.js';
import type { ChatStore } from '../../pkg/agent_chat_store.js';
import { plain, scriptedServer } from './server';

const server = scriptedServer();
const API = '/api/v1/agent';

function scriptOpen(session: string): void {
  server.on('GET', `${API}/capabilities`, plain(200, '{"nativeFollowUp":false,"aiSdkOwnsHistory":true}', 'application/json'));
  server.on('GET', `${API}/catalog`, plain(404));
  server.on('GET', `${API}/chat/${session}/messages`, plain(200, '{"messages":[]}', 'application/json'));
  server.on('GET', `${API}/chat/${session}/stream`, plain(204));
}

function Probe({ seen }: { seen: ChatStore[] }) {
  const store = useCreateChatStore({ baseUrl: server.at(''), sessionId: 'strict', persistSeq: false });
  seen.push(store);
  const s = useChatStore(store);
  return <p data-testid="state">{`${s.status} ${s.hydrated ? 'hydrated' : 'loading'} ${s.messages.length}`}</p>;
}

describe('useCreateChatStore', () => {
  it('the first render has a store and its initial snapshot; unsubscribed, it asks nothing', async () => {
    let first: string | null = null;
    function First() {
      const store = useCreateChatStore({ baseUrl: server.at(''), sessionId: 'first', persistSeq: false });
      first ??= `${store.getSnapshot().status} ${store.getSnapshot().messages.length}`;
      return null;
    }
    scriptOpen('first');
    const { unmount } = render(<First />);
    expect(first).toBe('ready 0');
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requests).toHaveLength(0);
    unmount();
  });

  it('under StrictMode: one store, one store`s worth of requests; the unmount disposes it', async () => {
    scriptOpen('strict');
    const seen: ChatStore[] = [];
    const { unmount } = render(
      <StrictMode>
        <Probe seen={seen} />
      </StrictMode>,
    );
    await waitFor(() => expect(screen.getByTestId('state').textContent).toBe('ready hydrated 0'));
    await new Promise((r) => setTimeout(r, 50));
    // StrictMode rendered twice and mounted twice, and every render saw the one store.
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen).size).toBe(1);
    expect(server.requestsTo('GET', `${API}/capabilities`)).toHaveLength(1);
    expect(server.requestsTo('GET', `${API}/chat/strict/messages`)).toHaveLength(1);
    expect(server.requests.filter((r) => r.method !== 'OPTIONS').map((r) => r.path.replace(/^\/t\d+/, ''))).toEqual([
      `${API}/capabilities`,
      `${API}/catalog`,
      `${API}/chat/strict/messages`,
      `${API}/chat/strict/stream`,
    ]);
    unmount();
    await new Promise((r) => setTimeout(r, 10));
    // Disposed: a later action sends nothing.
    seen[0]!.send('after the unmount');
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requestsTo('POST', `${API}/chat`)).toHaveLength(0);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('hidden by <Activity> (effects gone, state kept): the store is disposed, and shown again a fresh one opens', async () => {
    scriptOpen('strict');
    scriptOpen('strict');
    const seen: ChatStore[] = [];
    const view = (mode: 'visible' | 'hidden') => (
      <Activity mode={mode}>
        <Probe seen={seen} />
      </Activity>
    );
    const { rerender, unmount } = render(view('visible'));
    await waitFor(() => expect(screen.getByTestId('state').textContent).toBe('ready hydrated 0'));
    const first = seen[0]!;
    rerender(view('hidden'));
    await new Promise((r) => setTimeout(r, 20));
    rerender(view('visible'));
    await waitFor(() => expect(seen.at(-1)).not.toBe(first));
    await waitFor(() => expect(server.requestsTo('GET', `${API}/chat/strict/messages`)).toHaveLength(2));
    await waitFor(() => expect(screen.getByTestId('state').textContent).toBe('ready hydrated 0'));
    // The first store is gone: an action on it sends nothing.
    first.send('to the disposed store');
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    unmount();
  });
});
