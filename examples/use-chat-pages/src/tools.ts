// The messages of the tools page, typed by the tools the reference server's `POST /api/chat`
// offers (examples/server/lib/docs-chat.mjs), so each `tool-…` part has its own input and output.
import type { UIDataTypes, UIMessage } from 'ai';

export type PageTools = {
  /** Answered by the page itself (`onToolCall`). */
  getLocation: { input: Record<string, never>; output: { city: string } };
  /** Answered by the user's click. */
  askForConfirmation: { input: { message: string }; output: string };
  /** Run by the server. */
  getWeatherInformation: { input: { city: string }; output: string };
  /** Run by the server once the user approves it. */
  deleteFile: { input: { path: string }; output: string };
};

export type ToolsMessage = UIMessage<never, UIDataTypes, PageTools>;

/** Where the page says the user is (a pretend location service). */
export const HERE = { city: 'Lisbon' };
