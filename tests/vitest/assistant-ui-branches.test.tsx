// assistant-ui's branch picker on `useChatStoreRuntime` (issue 41, point 1): after Regenerate
// or Edit (AI SDK mode) the picker reads "2 / 2" with Previous enabled, Previous shows the old
// branch, and a send continues the branch shown; in pi mode no picker shows. The built package
// against a scripted server.
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  useAuiState,
} from '@assistant-ui/react';
import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../pkg/agent_chat_store.js';
import { useChatStoreRuntime } from '../../pkg/assistant-ui.js';
import { plain, scriptedServer, sse } from './server';

const server = scriptedServer();
const API = '/api/v1/agent';
const AI_SDK = { nativeFollowUp: false, aiSdkOwnsHistory: true };
const PI = { nativeFollowUp: true, aiSdkOwnsHistory: false };

function answer(id: string, text: string) {
  return sse([
    { type: 'start', messageId: id },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: text },
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: 'stop' },
  ]);
}

function Picker() {
  return (
    <BranchPickerPrimitive.Root hideWhenSingleBranch data-testid="picker">
      <BranchPickerPrimitive.Previous data-testid="previous">prev</BranchPickerPrimitive.Previous>
      <span data-testid="branch">
        <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
      </span>
      <BranchPickerPrimitive.Next data-testid="next">next</BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  );
}

function Message() {
  const role = useAuiState((s) => s.message.role);
  const editing = useAuiState((s) => s.message.composer.isEditing);
  return (
    <MessagePrimitive.Root data-testid={`message-${role}`}>
      {editing ? (
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Input data-testid="edit-input" />
          <ComposerPrimitive.Send data-testid="edit-send">save</ComposerPrimitive.Send>
        </ComposerPrimitive.Root>
      ) : (
        <>
          <div data-testid="text">
            <MessagePrimitive.Parts />
          </div>
          <ActionBarPrimitive.Root>
            {role === 'user' ? (
              <ActionBarPrimitive.Edit data-testid="edit">edit</ActionBarPrimitive.Edit>
            ) : (
              <ActionBarPrimitive.Reload data-testid="regenerate">again</ActionBarPrimitive.Reload>
            )}
          </ActionBarPrimitive.Root>
        </>
      )}
      <Picker />
    </MessagePrimitive.Root>
  );
}

function Thread({ store }: { store: ChatStore }) {
  const runtime = useChatStoreRuntime(store, { threadList: false });
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <ThreadPrimitive.Messages>{() => <Message />}</ThreadPrimitive.Messages>
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Input data-testid="composer-input" />
          <ComposerPrimitive.Cancel data-testid="cancel">stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

function open(caps: typeof AI_SDK) {
  // The history's PUT after each turn.
  for (let i = 0; i < 8; i++) server.on('PUT', `${API}/chat/s/messages`, plain(204));
  const store = new ChatStore({
    baseUrl: server.at(''),
    sessionId: 's',
    capabilities: caps,
    hydrate: false,
    persistSeq: false,
    routes: { catalog: '' },
  } as never);
  render(<Thread store={store} />);
  return store;
}

const texts = () => screen.queryAllByTestId('text').map((p) => p.textContent);

async function turn(store: ChatStore, text: string, id: string, reply: string) {
  server.on('POST', `${API}/chat`, answer(id, reply));
  act(() => void store.send(text));
  await waitFor(() => expect(texts().at(-1)).toBe(reply));
  await waitFor(() => expect(store.getSnapshot().status).toBe('ready'));
}

/** The picker of the last message of `role`. */
function lastPicker(role: string) {
  const m = screen.getAllByTestId(`message-${role}`).at(-1)!;
  return {
    label: () => m.querySelector('[data-testid="branch"]')?.textContent ?? null,
    previous: () => m.querySelector('[data-testid="previous"]') as HTMLButtonElement | null,
  };
}

describe('assistant-ui branches on useChatStoreRuntime', () => {
  it('Regenerate keeps the old answer as a sibling; Previous shows it; a send continues it', async () => {
    const store = open(AI_SDK);
    await turn(store, 'one', 'a1', 'first answer');
    expect(lastPicker('assistant').label()).toBeNull();
    server.on('POST', `${API}/chat`, answer('a2', 'second answer'));
    fireEvent.click(screen.getAllByTestId('regenerate').at(-1)!);
    await waitFor(() => expect(texts()).toEqual(['one', 'second answer']));
    await waitFor(() => expect(store.getSnapshot().status).toBe('ready'));
    const picker = lastPicker('assistant');
    await waitFor(() => expect(picker.label()).toBe('2 / 2'));
    expect(picker.previous()!.disabled).toBe(false);

    // snapshot.branches: the shown items hold `messages`' own objects, and the whole value is
    // the same object while the tree and the messages are.
    const snap = store.getSnapshot();
    const branches = snap.branches!;
    expect(branches.headId).toBe('a2');
    expect(branches.items.map((i) => [i.parentId, i.message.id])).toEqual([
      [null, snap.messages[0]!.id],
      [snap.messages[0]!.id, 'a1'],
      [snap.messages[0]!.id, 'a2'],
    ]);
    expect(branches.items[2]!.message).toBe(snap.messages[1]);
    expect(Object.isFrozen(branches) && Object.isFrozen(branches.items)).toBe(true);
    act(() => store.setDraft('draft'));
    expect(store.getSnapshot()).not.toBe(snap);
    expect(store.getSnapshot().branches).toBe(branches);

    fireEvent.click(picker.previous()!);
    await waitFor(() => expect(texts()).toEqual(['one', 'first answer']));
    expect(store.getSnapshot().messages.at(-1)!.id).toBe('a1');
    expect(lastPicker('assistant').label()).toBe('1 / 2');

    await turn(store, 'two', 'a3', 'third answer');
    const sent = server.requestsTo('POST', `${API}/chat`).at(-1)!.body;
    expect(sent.messages.map((m: { id: string }) => m.id).slice(0, 2)).toEqual([
      store.getSnapshot().messages[0]!.id,
      'a1',
    ]);
    expect(texts()).toEqual(['one', 'first answer', 'two', 'third answer']);
  });

  it('Edit makes a new user message beside the old one; Previous shows the old one with its answer', async () => {
    const store = open(AI_SDK);
    await turn(store, 'one', 'a1', 'first answer');
    const oldId = store.getSnapshot().messages[0]!.id;
    fireEvent.click(screen.getByTestId('edit'));
    const input = await screen.findByTestId('edit-input');
    fireEvent.change(input, { target: { value: 'one, edited' } });
    server.on('POST', `${API}/chat`, answer('a2', 'edited answer'));
    fireEvent.click(screen.getByTestId('edit-send'));
    await waitFor(() => expect(texts()).toEqual(['one, edited', 'edited answer']));
    await waitFor(() => expect(store.getSnapshot().status).toBe('ready'));
    expect(store.getSnapshot().messages[0]!.id).not.toBe(oldId);
    const picker = lastPicker('user');
    await waitFor(() => expect(picker.label()).toBe('2 / 2'));
    fireEvent.click(picker.previous()!);
    await waitFor(() => expect(texts()).toEqual(['one', 'first answer']));
    expect(store.getSnapshot().messages[0]!.id).toBe(oldId);
    await turn(store, 'two', 'a3', 'third answer');
    expect(texts()).toEqual(['one', 'first answer', 'two', 'third answer']);
  });

  // With setMessages given, assistant-ui's cancel takes an unanswered message back into its
  // composer and sets the thread without it: the store drops it too (shown once, not twice).
  it('a stop before any answer moves the message to the composer and out of the store', async () => {
    const store = open(AI_SDK);
    await turn(store, 'one', 'a1', 'first answer');
    const answer = server.stream('POST', `${API}/chat`);
    act(() => void store.send('two'));
    await answer.opened;
    await waitFor(() => expect(texts()).toContain('two'));
    fireEvent.click(screen.getByTestId('cancel'));
    await waitFor(() => expect(store.getSnapshot().messages.map((m) => m.role)).toEqual(['user', 'assistant']));
    await waitFor(() => expect(texts()).toEqual(['one', 'first answer']));
    expect((screen.getByTestId('composer-input') as HTMLTextAreaElement).value).toBe('two');
  });

  it('pi mode shows no picker and has no branches', async () => {
    const store = open(PI);
    server.on(
      'POST',
      `${API}/chat`,
      sse([
        { type: 'data-pi-mode', data: { enabled: true } },
        { type: 'start', messageId: 'p1' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'pi answer' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop' },
      ]),
    );
    act(() => void store.send('hello'));
    await waitFor(() => expect(store.getSnapshot().status).not.toBe('submitted'));
    await waitFor(() => expect(store.getSnapshot().busy).toBe(false));
    await waitFor(() => expect(texts()).toContain('hello'));
    expect(store.getSnapshot().branches).toBeNull();
    expect(store.switchBranch('x')).toBe('no-branches');
    expect(screen.queryAllByTestId('branch')).toEqual([]);
  });
});
