// A plain chat: the form follows `status` (disabled unless ready), Stop shows while a reply is
// on its way, a failed reply shows its error with Try again (`regenerate`) and Dismiss
// (`clearError`), and `onFinish` tells how the last reply ended.
import { useChat } from '@ai-sdk/react';
import { useState } from 'react';
import { MessageForm } from './message-form';

export default function ChatPage() {
  const [lastEnd, setLastEnd] = useState('none yet');
  const { messages, sendMessage, status, stop, error, regenerate, clearError } = useChat({
    onFinish({ isAbort, isDisconnect, isError }) {
      setLastEnd(isAbort ? 'stopped' : isDisconnect ? 'disconnected' : isError ? 'failed' : 'complete');
    },
  });

  const busy = status === 'submitted' || status === 'streaming';


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

      <MessageForm ready={status === 'ready'} onSend={(text) => void sendMessage({ text })} />

      <p className="last-end">Last reply: {lastEnd}</p>
    </>
  );
}
