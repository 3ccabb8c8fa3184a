// The route a plain AI SDK documentation app talks to: `POST /api/chat` as the route handler of
// the AI SDK docs' "Chatbot" and "Chatbot Tool Usage" pages (`ai` 7.0.173's
// docs/04-ai-sdk-ui/02-chatbot.mdx, 03-chatbot-tool-usage.mdx) writes it, with the scripted
// model in place of `__MODEL__` and the tools of the "Chatbot Tool Usage" page:
// `getWeatherInformation` (a server tool), `askForConfirmation` (a client tool the user answers)
// and `getLocation` (a client tool `onToolCall` answers), plus `deleteFile`, which needs the
// user's approval (not on the docs' pages; the approval flow of `useChat`). Stateless, as the
// docs' route is: the client sends the whole history each time (`{id, messages, trigger,
// messageId}`), nothing is kept, there is no stream to resume (`GET /api/chat/:id/stream`
// answers 204, app.mjs).
//
// The one thing kept is a count per chat and user message, so a regenerated answer names its
// attempt (`Answer <head> (attempt 2): …`), as the AI SDK runtime's answers do.
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  streamText,
  toUIMessageStream,
} from 'ai';
import { z } from 'zod';
import { scriptedModel } from './ai-sdk-runtime.mjs';
import { runDeleteFile } from './tools.mjs';

/** The tools of the docs' "Chatbot Tool Usage" page, as it declares them. */
export const DOCS_TOOLS = {
  // server-side tool with execute function:
  getWeatherInformation: {
    description: 'show the weather in a given city to the user',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({}) => {
      const weatherOptions = ['sunny', 'cloudy', 'rainy', 'snowy', 'windy'];
      return weatherOptions[Math.floor(Math.random() * weatherOptions.length)];
    },
  },
  // client-side tool that starts user interaction:
  askForConfirmation: {
    description: 'Ask the user for confirmation.',
    inputSchema: z.object({
      message: z.string().describe('The message to ask for confirmation.'),
    }),
  },
  // client-side tool that is automatically executed on the client:
  getLocation: {
    description: 'Get the user location. Always ask for confirmation before using this tool.',
    inputSchema: z.object({}),
  },
  // Not one of the docs' page's tools: a server tool that waits for the user's approval
  // (`needsApproval`), so an app's approval flow (`addToolApprovalResponse`, then
  // `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`) has a route
  // to talk to. The step ends at `tool-approval-request`; the next POST, carrying the answer,
  // runs it (a pretend deletion) or reports it denied, and the model answers that.
  deleteFile: {
    description: 'Delete a file (asks the user for approval first)',
    inputSchema: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async (args) => (await runDeleteFile(args)).text,
  },
};

/**
 * The docs' `POST(req: Request): Response`, over the scripted model paced by `knobs`.
 * @param {{knobs: {tps: number, chunkTokens: number, words: number}}} opts
 */
export function docsChatRoute({ knobs }) {
  /** answers given per `chatId user-message-id` (a regenerate counts up) */
  const attempts = new Map();

  return async function POST(req) {
    const { id, messages, trigger } = await req.json();

    const lastUser = Array.isArray(messages) ? messages.findLast((m) => m?.role === 'user') : undefined;
    let attempt = 1;
    if (lastUser && messages.at(-1) === lastUser) {
      const key = `${id} ${lastUser.id}`;
      attempt = trigger === 'regenerate-message' ? (attempts.get(key) ?? 1) + 1 : 1;
      attempts.set(key, attempt);
    }

    const result = streamText({
      model: scriptedModel({ knobs, toolNames: Object.keys(DOCS_TOOLS), attempt, signal: req.signal }),
      messages: await convertToModelMessages(messages),
      tools: DOCS_TOOLS,
      abortSignal: req.signal,
    });

    return createUIMessageStreamResponse({
      stream: toUIMessageStream({ stream: result.stream }),
    });
  };
}

/**
 * Answers a Node request with what a Web `(Request) => Response` handler returns: the request
 * (its body already read as JSON) becomes a `Request` whose `signal` aborts when the client goes
 * away; the `Response`'s body is piped out, and cancelled if the client leaves mid-stream.
 * `cutAfter` N: the socket is destroyed after N body chunks (a connection lost mid-answer).
 */
export async function serveWebHandler(handler, req, res, body, { headers: extraHeaders = {}, cutAfter } = {}) {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort(new DOMException('client went away', 'AbortError'));
  });
  const request = new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : v === undefined ? [] : [[k, v]])),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: abort.signal,
  });
  const response = await handler(request);
  const headers = { ...extraHeaders };
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return res.end();
  const reader = response.body.getReader();
  res.once('close', () => {
    if (!res.writableFinished) reader.cancel().catch(() => {});
  });
  let sent = 0;
  try {
    for (;;) {
      if (cutAfter !== undefined && sent >= cutAfter) {
        reader.cancel().catch(() => {});
        res.destroy();
        return;
      }
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) break;
      res.write(value);
      sent += 1;
    }
  } catch {
    // cancelled (the client left) or the stream failed: nothing more to send
  }
  if (!res.destroyed) res.end();
}
