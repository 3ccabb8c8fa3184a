// The message box both pages share: enabled only while the chat is ready, it hands the
// trimmed text to `onSend` and empties itself.
import { useState, type FormEvent } from 'react';

export function MessageForm({ ready, onSend }: { ready: boolean; onSend: (text: string) => void }) {
  const [draft, setDraft] = useState('');

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    onSend(text);
    setDraft('');
  }

  return (
    <form onSubmit={submit}>
      <input
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        placeholder="Type a message"
        aria-label="Message"
        disabled={!ready}
      />
      <button type="submit" disabled={!ready || draft.trim() === ''}>
        Send
      </button>
    </form>
  );
}
