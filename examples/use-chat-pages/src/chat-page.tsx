// A plain chat: the form follows `status` (disabled unless ready), Stop shows while a reply is
// on its way, a failed reply shows its error with Try again (`regenerate`) and Dismiss
// (`clearError`), and `onFinish` tells how the last reply ended.
import { useChat } from '@ai-sdk/react';
import { useState, type FormEvent } from 'react';

export default function ChatPage() {
  const [draft, setDraft] = useState('');
  const [lastEnd, setLastEnd] = useState('none yet');
  const { messages, sendMessage, status, stop, error, regenerate, clearError } = useChat({
    onFinish({ isAbort, isDisconnect, isError }) {
      setLastEnd(isAbort ? 'stopped' : isDisconnect ? 'disconnected' : isError ? 'failed' : 'complete');
    },
  });

  const busy = status === 'submitted' || status === 'streaming';

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    void sendMessage({ text });
    setDraft('');
  }

  return (
    <>
      <ol className="messages">
        {messages.map((message) => (
          <li key={message.id} data-role={message.role}>
            <span className="who">{message.role === 'user' ? 'You' : 'Assistant'}</span>
            <span className="text">
              {message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')}
            </span>
          </li>
        ))}
      </ol>

      {busy && (
        <p className="progress" role="status">
          {status === 'submitted' ? 'Waiting for a reply…' : 'Replying…'}{' '}
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        </p>
      )}

      {error && (
        <div className="error" role="alert">
          <p>Something went wrong: {error.message}</p>
          <button type="button" onClick={() => void regenerate()}>
            Try again
          </button>{' '}
          <button type="button" onClick={() => clearError()}>
            Dismiss
          </button>
        </div>
      )}

      <form onSubmit={submit}>
        <input
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder="Type a message"
          aria-label="Message"
          disabled={status !== 'ready'}
        />
        <button type="submit" disabled={status !== 'ready' || draft.trim() === ''}>
          Send
        </button>
      </form>

      <p className="last-end">Last reply: {lastEnd}</p>
    </>
  );
}
