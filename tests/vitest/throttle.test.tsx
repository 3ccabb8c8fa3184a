// `throttle` (and its old name `experimental_throttle`): renders of a streaming answer come at
// most once per interval. Time is vitest's fake clock (setTimeout and Date); the bytes come
// from the real local server, and the test knows each arrived through a fetch that tells it.
import { act, fireEvent, render, screen } from '@testing-library/react';
import { DefaultChatTransport } from 'ai';
import { useChat } from 'agent-chat-store/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { scriptedServer, textAnswer } from './server';
import { ChatView } from './view';

const server = scriptedServer();
afterEach(() => vi.useRealTimers());

/**
 * A fetch whose answer bodies record each piece the chat reads (decoded), and `until(needle)`:
 * I/O turns pass (the fake clock stays) until the chat has read `needle`. It fails at once if
 * the chat shows an error first, and after a bounded number of turns otherwise.
 */
function watchedFetch() {
  const read: string[] = [];
  const fetchAndWatch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const decoder = new TextDecoder();
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        read.push(decoder.decode(chunk, { stream: true }));
      },
    });
    return new Response(response.body!.pipeThrough(tap), { status: response.status, headers: response.headers });
  };
  const until = async (needle: string) => {
    for (let turn = 0; turn < 5000; turn++) {
      if (read.join('').includes(needle)) return;
      if (screen.queryByTestId('status')?.textContent === 'error') {
        throw new Error(`the chat failed before reading ${needle}: ${screen.getByTestId('error').textContent}`);
      }
      await act(async () => {
        await new Promise((r) => setImmediate(r));
      });
    }
    throw new Error(`${needle} was not read in 5000 I/O turns`);
  };
  return { fetch: fetchAndWatch, until };
}

/** Lets the chat handle what it read (I/O turns pass; the fake clock does not move). */
async function settle() {
  await act(async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  });
}

const shown = () => screen.queryByTestId('message-1')?.textContent ?? '';

function Ticker({ options, fetch }: { options: Record<string, unknown>; fetch: typeof globalThis.fetch }) {
  const chat = useChat({
    id: 'ticker-chat',
    transport: new DefaultChatTransport({ api: server.at('/api/chat'), fetch }),
    ...options,
  });
  return (
    <ChatView chat={chat}>
      <button onClick={() => void chat.sendMessage({ text: 'Prices?' })}>ask</button>
    </ChatView>
  );
}

async function streamTwoDeltas(options: Record<string, unknown>) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const watch = watchedFetch();
  const answer = server.stream('POST', '/api/chat');
  render(<Ticker options={options} fetch={watch.fetch} />);
  fireEvent.click(screen.getByText('ask'));
  await answer.opened;
  const chunks = textAnswer(['up 2%, ', 'down 1%']);
  for (const c of chunks.slice(0, 4)) answer.write(c);
  await watch.until('up 2%');
  await settle();
  answer.write(chunks[4]);
  await watch.until('down 1%');
  await settle();
  return { answer, chunks, watch };
}

describe('throttle', () => {
  it('without a throttle, each delta read is shown at once (the baseline the others need)', async () => {
    const { answer, chunks, watch } = await streamTwoDeltas({});
    expect(shown()).toBe('assistant: up 2%, down 1%');
    for (const c of chunks.slice(5)) answer.write(c);
    answer.end();
    await watch.until('[DONE]');
    await settle();
    expect(screen.getByTestId('status').textContent).toBe('ready');
  });

  it.each([['throttle'], ['experimental_throttle']])(
    '%s: 1000 holds the latest delta back until the clock moves 1000 ms',
    async (name) => {
      const { answer, chunks, watch } = await streamTwoDeltas({ [name]: 1000 });
      // Read and handled, not yet shown: the clock has not moved.
      expect(shown()).not.toBe('assistant: up 2%, down 1%');
      await act(async () => {
        vi.advanceTimersByTime(1000);
      });
      expect(shown()).toBe('assistant: up 2%, down 1%');

      for (const c of chunks.slice(5)) answer.write(c);
      answer.end();
      await watch.until('[DONE]');
      await settle();
      await act(async () => {
        vi.advanceTimersByTime(1000);
      });
      await settle();
      expect(screen.getByTestId('status').textContent).toBe('ready');
      expect(shown()).toBe('assistant: up 2%, down 1%');
    },
  );
});
