// assistant-ui's thread list primitives on `useChatStoreRuntime` (issue 41, point 5): the
// session list's pages through `ThreadListPrimitive.LoadMore` (`s.threads.hasMore`,
// `isLoadingMore`), the archived sessions through `ThreadListPrimitive.Items archived` with
// archive and unarchive, and `s.threadListItem.isRunning` for a session with a turn in flight.
// The store talks to a scripted server (its `fetch` option) listing 41 sessions, 20 a page.
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import {
  AssistantRuntimeProvider,
  ThreadListItemPrimitive,
  ThreadListPrimitive,
  useAuiState,
  type AssistantRuntime,
} from '@assistant-ui/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatStore } from '../../pkg/agent_chat_store.js';
import { useChatStoreRuntime } from '../../pkg/assistant-ui.js';

const SESSIONS = 41;
const LIST = '/api/v1/agent/sessions';
const CHAT = '/api/v1/agent/chat';

interface Row {
  id: string;
  title: string;
  updatedAt: string;
  running: boolean;
  archived: boolean;
}

// The server's sessions, most recently updated first; `s5` runs a turn (in the background: the
// open session is `s0`). A page request can be held (`hold()`) to watch the list load it.
class ListServer {
  rows: Row[] = Array.from({ length: SESSIONS }, (_, i) => ({
    id: `s${i}`,
    title: `Session ${i}`,
    updatedAt: new Date(Date.UTC(2026, 11, 1, 12) - i * 60_000).toISOString(),
    running: i === 5,
    archived: false,
  }));
  pages: { archived: boolean; cursor: string | null }[] = [];
  /** The open session's turn (`POST …/chat`), written by the test. */
  turn: ReadableStreamDefaultController<Uint8Array> | null = null;
  private held: (() => void) | null = null;
  private holding = false;

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    this.held?.();
    this.held = null;
  }

  readonly fetch = async (input: string, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input, 'http://server.test');
    const method = init.method ?? 'GET';
    if (method === 'GET' && url.pathname === LIST) {
      const archived = url.searchParams.get('archived') === 'true';
      const cursor = url.searchParams.get('cursor');
      this.pages.push({ archived, cursor });
      if (this.holding) await new Promise<void>((resolve) => (this.held = resolve));
      const from = Number(cursor ?? 0);
      const limit = Number(url.searchParams.get('limit'));
      const walk = this.rows.filter((r) => r.archived === archived);
      const next = from + limit < walk.length ? String(from + limit) : undefined;
      return json({ sessions: walk.slice(from, from + limit), ...(next && { nextCursor: next }) });
    }
    if (method === 'POST' && url.pathname === CHAT) {
      const body = new ReadableStream<Uint8Array>({ start: (c) => (this.turn = c) });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    const one = url.pathname.startsWith(`${LIST}/`) ? decodeURIComponent(url.pathname.slice(LIST.length + 1)) : null;
    const row = this.rows.find((r) => r.id === one);
    if (method === 'PATCH' && row) {
      Object.assign(row, JSON.parse(String(init.body)));
      return json({ session: row });
    }
    if (method === 'DELETE' && row) {
      this.rows = this.rows.filter((r) => r !== row);
      return new Response(null, { status: 204 });
    }
    return json({ error: 'not found' }, 404);
  };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

let store: ChatStore | null = null;
afterEach(() => {
  store?.dispose();
  store = null;
});

function Item() {
  const id = useAuiState((s) => s.threadListItem.id);
  const running = useAuiState((s) => s.threadListItem.isRunning);
  return (
    <ThreadListItemPrimitive.Root data-testid={`thread-${id}`} data-running={String(running)}>
      <ThreadListItemPrimitive.Trigger>
        <ThreadListItemPrimitive.Title fallback="New Chat" />
      </ThreadListItemPrimitive.Trigger>
      <ThreadListItemPrimitive.Archive>Archive</ThreadListItemPrimitive.Archive>
      <ThreadListItemPrimitive.Unarchive>Unarchive</ThreadListItemPrimitive.Unarchive>
      <ThreadListItemPrimitive.Delete>Delete</ThreadListItemPrimitive.Delete>
    </ThreadListItemPrimitive.Root>
  );
}

function ListState() {
  const hasMore = useAuiState((s) => s.threads.hasMore);
  const loadingMore = useAuiState((s) => s.threads.isLoadingMore);
  const loading = useAuiState((s) => s.threads.isLoading);
  return <output data-testid="list-state">{`hasMore=${hasMore} loadingMore=${loadingMore} loading=${loading}`}</output>;
}

let seen: AssistantRuntime | null = null;
function App({ chat }: { chat: ChatStore }) {
  const runtime = useChatStoreRuntime(chat);
  seen = runtime;
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadListPrimitive.Root>
        <ListState />
        <div data-testid="regular">
          <ThreadListPrimitive.Items components={{ ThreadListItem: Item }} />
        </div>
        <ThreadListPrimitive.LoadMore data-testid="load-more">Load more</ThreadListPrimitive.LoadMore>
        <div data-testid="archived">
          <ThreadListPrimitive.Items archived components={{ ThreadListItem: Item }} />
        </div>
      </ThreadListPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

function open(server: ListServer): void {
  store = new ChatStore({
    baseUrl: 'http://server.test',
    sessionId: 's0',
    fetch: server.fetch,
    capabilities: {},
    hydrate: false,
    attach: false,
    persistSeq: false,
    persist: false,
  });
  render(<App chat={store} />);
}

const shown = (section: string) =>
  within(screen.getByTestId(section))
    .queryAllByTestId(/^thread-/)
    .map((el) => el.dataset.testid!.slice('thread-'.length));
const listState = () => screen.getByTestId('list-state').textContent;
const loadMore = () => screen.getByTestId('load-more') as HTMLButtonElement;

describe('the thread list on useChatStoreRuntime', () => {
  it('shows the first page, and LoadMore reaches all 41 sessions through the store', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    expect(shown('regular')).toEqual(server.rows.slice(0, 20).map((r) => r.id));
    await waitFor(() => expect(listState()).toBe('hasMore=true loadingMore=false loading=false'));
    expect(loadMore().disabled).toBe(false);

    // The next page, held: the list says it loads it, and LoadMore waits.
    server.hold();
    fireEvent.click(loadMore());
    await waitFor(() => expect(listState()).toBe('hasMore=true loadingMore=true loading=false'));
    expect(loadMore().disabled).toBe(true);
    await act(async () => server.release());
    await waitFor(() => expect(shown('regular')).toHaveLength(40));
    expect(listState()).toBe('hasMore=true loadingMore=false loading=false');

    fireEvent.click(loadMore());
    await waitFor(() => expect(shown('regular')).toHaveLength(SESSIONS));
    expect(shown('regular')).toEqual(server.rows.map((r) => r.id));
    await waitFor(() => expect(listState()).toBe('hasMore=false loadingMore=false loading=false'));
    expect(loadMore().disabled).toBe(true);

    // The store's own walk did it: the first page of each walk, then the unarchived walk's
    // next pages, each asked once.
    const unarchived = server.pages.filter((p) => !p.archived).map((p) => p.cursor);
    expect(unarchived).toEqual([null, '20', '40']);
    expect(server.pages.filter((p) => p.archived).map((p) => p.cursor)).toEqual([null]);
  });

  it('the archived pages follow the unarchived ones under the same LoadMore', async () => {
    const server = new ListServer();
    for (const r of server.rows.slice(10, 35)) r.archived = true; // 25 archived, 16 not
    open(server);
    await waitFor(() => expect(shown('archived')).toHaveLength(20));
    expect(shown('regular')).toHaveLength(16);
    await waitFor(() => expect(listState()).toBe('hasMore=true loadingMore=false loading=false'));
    fireEvent.click(loadMore());
    await waitFor(() => expect(shown('archived')).toHaveLength(25));
    await waitFor(() => expect(listState()).toBe('hasMore=false loadingMore=false loading=false'));
    expect(shown('regular')).toHaveLength(16);
  });

  it('archive moves a thread to the archived list, unarchive brings it back', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    expect(shown('archived')).toEqual([]);

    fireEvent.click(within(screen.getByTestId('thread-s3')).getByText('Archive'));
    await waitFor(() => expect(shown('archived')).toEqual(['s3']));
    expect(shown('regular')).not.toContain('s3');
    await waitFor(() => expect(server.rows.find((r) => r.id === 's3')!.archived).toBe(true));

    fireEvent.click(within(screen.getByTestId('archived')).getByText('Unarchive'));
    await waitFor(() => expect(shown('archived')).toEqual([]));
    expect(shown('regular')).toContain('s3');
    await waitFor(() => expect(server.rows.find((r) => r.id === 's3')!.archived).toBe(false));
  });

  it('a background session the server lists as running shows running; it stops with the list', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    const running = () => shown('regular').filter((id) => screen.getByTestId(`thread-${id}`).dataset.running === 'true');
    await waitFor(() => expect(running()).toEqual(['s5']));

    // Its turn ended on the server: the next refresh of the list says so.
    server.rows[5].running = false;
    act(() => void store!.loadSessions());
    await waitFor(() => expect(running()).toEqual([]));
  });

  it('the open session shows running while its turn is in flight', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    const runs = () => screen.getByTestId('thread-s0').dataset.running;
    expect(runs()).toBe('false');
    act(() => void store!.send('Hello'));
    await waitFor(() => expect(runs()).toBe('true'));
    await waitFor(() => expect(server.turn).not.toBeNull());
    const chunks = [{ type: 'start' }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hi' }];
    const end = [{ type: 'text-end', id: 't' }, { type: 'finish', finishReason: 'stop' }];
    const write = (c: unknown) => server.turn!.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(c)}\n\n`));
    act(() => chunks.forEach(write));
    await waitFor(() => expect(store!.getSnapshot().messages).toHaveLength(2));
    expect(runs()).toBe('true');
    act(() => {
      end.forEach(write);
      server.turn!.enqueue(new TextEncoder().encode('data: [DONE]\n\n'));
      server.turn!.close();
    });
    await waitFor(() => expect(store!.getSnapshot().status).toBe('ready'));
    await waitFor(() => expect(runs()).toBe('false'));
  });

  it('a session left mid-turn shows running in the background', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    const runs = (id: string) => screen.getByTestId(`thread-${id}`).dataset.running;
    act(() => void store!.send('A long answer, please'));
    await waitFor(() => expect(server.turn).not.toBeNull());
    await waitFor(() => expect(runs('s0')).toBe('true'));
    server.rows[0].running = true; // the server goes on with it after the client left

    const before = server.pages.length;
    fireEvent.click(within(screen.getByTestId('thread-s1')).getByText('Session 1'));
    await waitFor(() => expect(store!.getSnapshot().sessionId).toBe('s1'));
    await waitFor(() => expect(server.pages.length).toBe(before + 1));
    expect(server.pages[before]).toEqual({ archived: false, cursor: null });
    await waitFor(() => expect(runs('s0')).toBe('true'));
    expect(runs('s1')).toBe('false');
  });

  it('delete takes a thread off the list and off the server', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    fireEvent.click(within(screen.getByTestId('thread-s7')).getByText('Delete'));
    await waitFor(() => expect(shown('regular')).not.toContain('s7'));
    await waitFor(() => expect(server.rows.some((r) => r.id === 's7')).toBe(false));
  });

  it('pins the assistant-ui seam: its external-store thread list core has no pages of its own', async () => {
    const server = new ListServer();
    open(server);
    await waitFor(() => expect(shown('regular')).toHaveLength(20));
    const core = (seen!.threads as unknown as { _core?: object })._core;
    expect(core, 'runtime.threads._core: the thread list core the binding extends').toBeTruthy();
    const proto = Object.getPrototypeOf(core);
    for (const member of ['hasMore', 'isLoadingMore', 'loadMore', 'unstable_isThreadRunning']) {
      // An upgrade that gives this core its own pages or running flags: revisit
      // pkg-template/src/assistant-ui/thread-list.ts (useThreadListPages).
      expect(member in proto, `assistant-ui's own ${member}`).toBe(false);
      expect(Object.getOwnPropertyDescriptor(core, member), `the binding's ${member}`).toBeDefined();
    }
    expect(typeof (core as { _notifySubscribers?: unknown })._notifySubscribers).toBe('function');
  });
});
