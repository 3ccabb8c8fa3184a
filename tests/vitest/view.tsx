// What a test component shows of a chat: its status, its error, and each message as a line
// `role: text` where a tool part reads `[name state output]`. Tests read these by test id.
import type { ReactNode } from 'react';

export interface ShownChat {
  id?: string;
  status: string;
  error: Error | undefined | null;
  messages: Array<{ id: string; role: string; metadata?: unknown; parts: any[] }>;
}

export function partText(part: any): string {
  if (part.type === 'text') return part.text;
  if (part.type === 'dynamic-tool' || (typeof part.type === 'string' && part.type.startsWith('tool-'))) {
    const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
    const output = part.output === undefined ? '' : ` ${JSON.stringify(part.output)}`;
    return `[${name} ${part.state}${output}]`;
  }
  return '';
}

export function ChatView({ chat, prefix = '', children }: { chat: ShownChat; prefix?: string; children?: ReactNode }) {
  return (
    <div>
      <div data-testid={`${prefix}status`}>{chat.status}</div>
      <div data-testid={`${prefix}error`}>{chat.error ? chat.error.message : ''}</div>
      <ol>
        {chat.messages.map((m, i) => (
          <li key={m.id}>
            <span data-testid={`${prefix}message-${i}`}>{`${m.role}: ${m.parts.map(partText).join('')}`}</span>
            {m.metadata === undefined ? null : (
              <span data-testid={`${prefix}metadata-${i}`}>{JSON.stringify(m.metadata)}</span>
            )}
          </li>
        ))}
      </ol>
      {children}
    </div>
  );
}
