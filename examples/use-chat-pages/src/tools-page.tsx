// Tools in a chat. `getLocation` is answered by the page as soon as it is called (`onToolCall`
// + `addToolOutput`); `askForConfirmation` waits for the user's click; `getWeatherInformation`
// runs on the server; `deleteFile` runs on the server once the user allows it
// (`addToolApprovalResponse`). A reply that ends with every call answered, or with every
// approval decided, is sent back by itself (`sendAutomaticallyWhen`).
import { useChat } from '@ai-sdk/react';
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { type ReactNode } from 'react';
import { MessageForm } from './message-form';
import { HERE, type ToolsMessage } from './tools';

type Part = ToolsMessage['parts'][number];

export default function ToolsPage() {
  const { messages, sendMessage, status, stop, error, addToolOutput, addToolApprovalResponse } = useChat<ToolsMessage>({
    sendAutomaticallyWhen: ({ messages }) =>
      lastAssistantMessageIsCompleteWithToolCalls({ messages }) ||
      lastAssistantMessageIsCompleteWithApprovalResponses({ messages }),
    onToolCall({ toolCall }) {
      if (toolCall.dynamic) return;
      if (toolCall.toolName === 'getLocation') {
        // Not awaited: the output goes in while the reply is still being read.
        void addToolOutput({ tool: 'getLocation', toolCallId: toolCall.toolCallId, output: HERE });
      }
    },
  });


  function answer(toolCallId: string, output: string) {
    void addToolOutput({ tool: 'askForConfirmation', toolCallId, output });
  }

  function decide(id: string, approved: boolean) {
    void addToolApprovalResponse(approved ? { id, approved } : { id, approved, reason: 'The user said no' });
  }

  function show(part: Part): ReactNode {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'tool-getLocation':
        return part.state === 'output-available' ? `Location: ${part.output.city}` : 'Finding your location…';
      case 'tool-askForConfirmation':
        switch (part.state) {
          case 'input-streaming':
            return 'Preparing a question…';
          case 'input-available':
            return (
              <>
                <span>{part.input.message}</span>{' '}
                <button type="button" onClick={() => answer(part.toolCallId, 'yes')}>
                  Yes
                </button>{' '}
                <button type="button" onClick={() => answer(part.toolCallId, 'no')}>
                  No
                </button>
              </>
            );
          case 'output-available':
            return `${part.input.message} You said ${part.output}.`;
          default:
            return `${part.input?.message ?? 'A question'} (${part.state})`;
        }
      case 'tool-getWeatherInformation':
        switch (part.state) {
          case 'input-streaming':
            return 'Asking about the weather…';
          case 'input-available':
            return `Looking up the weather in ${part.input.city}…`;
          case 'output-available':
            return `Weather in ${part.input.city}: ${part.output}`;
          case 'output-error':
            return `No weather for ${part.input?.city ?? 'that city'}: ${part.errorText}`;
          default:
            return `Weather (${part.state})`;
        }
      case 'tool-deleteFile':
        switch (part.state) {
          case 'approval-requested':
            return (
              <>
                <span>Delete {part.input.path}?</span>{' '}
                <button type="button" onClick={() => decide(part.approval.id, true)}>
                  Allow
                </button>{' '}
                <button type="button" onClick={() => decide(part.approval.id, false)}>
                  Deny
                </button>
              </>
            );
          case 'approval-responded':
            return `Delete ${part.input.path}: ${part.approval.approved ? 'allowed' : 'denied'}…`;
          case 'output-available':
            return `Done: ${part.output}`;
          case 'output-denied':
            return `Not deleted (${part.approval.reason ?? 'denied'})`;
          case 'output-error':
            return `Delete failed: ${part.errorText}`;
          default:
            return 'Preparing a deletion…';
        }
      default:
        return null;
    }
  }

  return (
    <>
      <ol className="messages">
        {messages.map((message) => (
          <li key={message.id} data-role={message.role}>
            <span className="who">{message.role === 'user' ? 'You' : 'Assistant'}</span>
            {message.parts.map((part, i) => {
              const shown = show(part);
              return shown === null ? null : (
                <div key={i} className="part" data-part={part.type}>
                  {shown}
                </div>
              );
            })}
          </li>
        ))}
      </ol>

      {(status === 'submitted' || status === 'streaming') && (
        <p className="progress" role="status">
          Working…{' '}
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        </p>
      )}

      {error && (
        <p className="error" role="alert">
          Something went wrong: {error.message}
        </p>
      )}

      <MessageForm ready={status === 'ready'} onSend={(text) => void sendMessage({ text })} />
    </>
  );
}
