// The follow-up queue through assistant-ui's stock primitives (ComposerPrimitive.Queue,
// QueueItemPrimitive.Text / Steer / Remove) on `useChatStoreRuntime`, in jsdom: each item shows
// the store's state (through `queueItem`, `useAuiState` and the package's QueueItemStatus), Run
// Now is `store.runQueuedNow(id)` and Remove `store.removeQueued(id)`. The store is a stand-in
// whose snapshot the test sets, as the real store's rules (what Run Now does, which state an
// item has) are the core's and tested natively (tests/store_run_now.rs).
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  QueueItemPrimitive,
  ThreadPrimitive,
  useAuiState,
} from '@assistant-ui/react';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueItemStatus, useChatStoreRuntime } from '../../pkg/assistant-ui.js';

afterEach(() => cleanup());

const item = (over: Record<string, unknown>) => ({
  id: 'fu-1',
  clientNonce: '1',
  clientSeq: 1,
  text: 'next',
  files: [],
  state: 'accepted',
  attempts: 1,
  error: null,
  everPosted: true,
  readOnly: false,
  removing: false,
  canRetry: false,
  canRemove: true,
  runNow: 'interrupt',
  canRunNow: true,
  ...over,
});

function snapshotOf(over: Record<string, unknown> = {}) {
  return Object.freeze({
    sessionId: 's1',
    status: 'streaming',
    busy: true,
    error: null,
    hydrated: true,
    canRegenerate: false,
    canEdit: false,
    capabilities: { nativeFollowUp: true, aiSdkOwnsHistory: false, followUpAttachments: false },
    composer: { canSendText: true },
    queued: [],
    sessions: { available: false, loaded: false, loading: false, hasMore: false, archivedLoaded: false, archivedHasMore: false, archivable: false, items: [], error: null },
    pending: { approvals: [], questions: [] },
    stopped: false,
    messages: [],
    ...over,
  });
}

// A ChatStore stand-in: the snapshot is the test's, each action is recorded.
function fakeStore(initial: ReturnType<typeof snapshotOf>) {
  let snapshot = initial;
  const listeners = new Set<() => void>();
  const calls: unknown[][] = [];
  return {
    calls,
    set(next: ReturnType<typeof snapshotOf>) {
      snapshot = next;
      for (const l of listeners) l();
    },
    subscribe(l: () => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    getSnapshot: () => snapshot,
    send: (...args: unknown[]) => (calls.push(['send', ...args]), { kind: 'queued' }),
    stop: () => calls.push(['stop']),
    regenerate: () => false,
    loadSessions: () => true,
    runQueuedNow: (id: string) => (calls.push(['runQueuedNow', id]), 'interrupting'),
    removeQueued: (id: string) => (calls.push(['removeQueued', id]), true),
    retryQueued: (id: string) => (calls.push(['retryQueued', id]), true),
  };
}

function StateViaAui() {
  const state = useAuiState((s) => (s.queueItem as any).state);
  const canRunNow = useAuiState((s) => (s.queueItem as any).canRunNow);
  return <span data-testid="aui-state" data-can-run-now={String(canRunNow)}>{state}</span>;
}

function Queue({ store }: { store: any }) {
  const runtime = useChatStoreRuntime(store, { threadList: false, attachments: false });
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Queue>
            {({ queueItem }) => (
              <div data-testid="queue-item" data-id={queueItem.id}>
                <QueueItemPrimitive.Text />
                <QueueItemStatus />
                <StateViaAui />
                <QueueItemPrimitive.Steer>Run Now</QueueItemPrimitive.Steer>
                <QueueItemPrimitive.Remove>Remove</QueueItemPrimitive.Remove>
              </div>
            )}
          </ComposerPrimitive.Queue>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

describe('the queue on stock assistant-ui primitives', () => {
  it('shows each item with its state and error, and Run Now / Remove reach the store', () => {
    const store = fakeStore(
      snapshotOf({
        queued: [
          item({}),
          item({ id: 'fu-2', text: 'later', runNow: 'after-current', canRunNow: false }),
          item({ id: 'fu-3', text: 'broken', state: 'failed', canRetry: true, runNow: 'retry', error: { kind: 'Server', message: 'HTTP 500' } }),
        ],
      }),
    );
    render(<Queue store={store} />);
    const rows = screen.getAllByTestId('queue-item');
    expect(rows.map((r) => r.getAttribute('data-id'))).toEqual(['fu-1', 'fu-2', 'fu-3']);
    const status = (row: HTMLElement) => row.querySelector('[data-state]')!;
    expect(rows.map((r) => status(r).getAttribute('data-state'))).toEqual(['accepted', 'accepted', 'failed']);
    expect(rows.map((r) => status(r).getAttribute('data-run-now'))).toEqual(['interrupt', 'after-current', 'retry']);
    expect(rows[2].querySelector('[data-queue-error]')!.textContent).toContain('HTTP 500');
    expect(within(rows[0]).getByTestId('aui-state').textContent).toBe('accepted');
    expect(within(rows[1]).getByTestId('aui-state').getAttribute('data-can-run-now')).toBe('false');
    expect(rows[0].textContent).toContain('next');

    fireEvent.click(within(rows[0]).getByText('Run Now'));
    fireEvent.click(within(rows[2]).getByText('Run Now'));
    fireEvent.click(within(rows[1]).getByText('Remove'));
    expect(store.calls).toEqual([
      ['runQueuedNow', 'fu-1'],
      ['runQueuedNow', 'fu-3'],
      ['removeQueued', 'fu-2'],
    ]);
  });

  it('a follow-up stalled by Stop shows stalled, and Run Now retries it', () => {
    const store = fakeStore(snapshotOf({ queued: [item({})] }));
    render(<Queue store={store} />);
    const stalled = item({ state: 'stalled', canRetry: true, runNow: 'retry' });
    act(() => store.set(snapshotOf({ status: 'ready', busy: false, stopped: true, queued: [stalled] })));
    const row = screen.getByTestId('queue-item');
    expect(row.querySelector('[data-state]')!.getAttribute('data-state')).toBe('stalled');
    expect(within(row).getByTestId('aui-state').textContent).toBe('stalled');
    fireEvent.click(within(row).getByText('Run Now'));
    expect(store.calls).toEqual([['runQueuedNow', 'fu-1']]);
    // Sent as a new message, it leaves the queue: no item is left behind.
    act(() => store.set(snapshotOf({ status: 'submitted', queued: [] })));
    expect(screen.queryAllByTestId('queue-item')).toEqual([]);
  });

  it('keeps an item the same object while the snapshot item is', () => {
    const a = item({});
    const store = fakeStore(snapshotOf({ queued: [a] }));
    const seen: unknown[] = [];
    function Probe() {
      seen.push(useAuiState((s) => s.queueItem));
      return null;
    }
    render(
      <QueueWith store={store}>
        <Probe />
      </QueueWith>,
    );
    act(() => store.set(snapshotOf({ queued: [a], status: 'streaming' })));
    expect(new Set(seen).size).toBe(1);
    const removing = item({ removing: true, canRemove: false, runNow: 'none', canRunNow: false });
    act(() => store.set(snapshotOf({ queued: [removing] })));
    expect((seen[seen.length - 1] as any).removing).toBe(true);
    expect(screen.getByText('removing')).toBeTruthy();
  });
});

function QueueWith({ store, children }: { store: any; children: React.ReactNode }) {
  const runtime = useChatStoreRuntime(store, { threadList: false, attachments: false });
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Queue>
            {() => (
              <div data-testid="queue-item">
                <QueueItemStatus />
                {children}
              </div>
            )}
          </ComposerPrimitive.Queue>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}
