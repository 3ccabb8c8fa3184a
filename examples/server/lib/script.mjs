// The scripted "model": a pure function of the transcript. Both runtimes use it (the pi
// runtime through pi-ai's fauxProvider, the AI SDK runtime through a mock LanguageModelV4), so
// what a turn answers depends only on the messages the agent really sent to the model. That
// makes follow-up delivery visible: a follow-up the agent consumed shows up as its own answer.
//
// Rules, applied to the last message of the transcript:
// - a user message with text T:
//   - `fail provider` in T: the provider fails (an error response, no content);
//   - `think` in T: a reasoning block comes first;
//   - `list files` in T (optionally `list files in DIR`): a call of the `ls` tool;
//   - `echo X` in T: a call of the `echo` tool with `{text: X}` (X runs to the end of the line);
//   - otherwise the answer is `Answer <head>: w1 w2 … wN`, where <head> is the first three
//     words of T and N is `words:N` from T or the server's `--words`;
//   - with a tool call, a short text (`Answer <head>: calling ls.`) precedes the call(s);
// - tool results (the model's turn after its tool calls): `Result for <head>: ls → a, b; echo → X.`

/** @typedef {{type:'thinking', text:string} | {type:'text', text:string} | {type:'toolCall', name:string, args:object}} Block */
/** @typedef {{blocks: Block[], stop: 'stop'|'toolUse'|'error', errorMessage?: string}} Reply */

const DIRECTIVE = /\b(words|tps):\d+\b/gi;

/** The first words of a user message, directives left out. */
export function headOf(text, count = 3) {
  const words = String(text).replace(DIRECTIVE, ' ').trim().split(/\s+/).filter(Boolean);
  return words.slice(0, count).join(' ') || '(empty)';
}

function wordCount(text, fallback) {
  const m = /\bwords:(\d+)\b/i.exec(text);
  if (!m) return fallback;
  return Math.min(Number(m[1]), 2000);
}

/** `w1 w2 … wN` */
export function fillerWords(n) {
  return Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
}

/** The tool calls a user message asks for, in the order the rules list them. */
export function toolCallsFor(text) {
  const calls = [];
  const ls = /list files(?:\s+in\s+(\S+))?/i.exec(text);
  if (ls) calls.push({ name: 'ls', args: { path: ls[1] ?? '.' } });
  const echo = /\becho\b[ \t]*([^\n]*)/i.exec(text);
  if (echo) calls.push({ name: 'echo', args: { text: echo[1].trim() } });
  return calls;
}

/**
 * The reply to a user message.
 * @param {string} text the user's text
 * @param {{words: number}} opts
 * @returns {Reply}
 */
export function replyToUser(text, { words }) {
  const head = headOf(text);
  if (/fail provider/i.test(text)) {
    return { blocks: [], stop: 'error', errorMessage: 'scripted provider error' };
  }
  const blocks = [];
  if (/\bthink/i.test(text)) {
    blocks.push({ type: 'thinking', text: `Thinking about "${head}": the user wrote ${text.trim().split(/\s+/).length} words, so I answer them.` });
  }
  const calls = toolCallsFor(text);
  if (calls.length > 0) {
    blocks.push({ type: 'text', text: `Answer ${head}: calling ${calls.map((c) => c.name).join(' and ')}.` });
    for (const c of calls) blocks.push({ type: 'toolCall', name: c.name, args: c.args });
    return { blocks, stop: 'toolUse' };
  }
  const n = wordCount(text, words);
  blocks.push({ type: 'text', text: n > 0 ? `Answer ${head}: ${fillerWords(n)}` : `Answer ${head}.` });
  return { blocks, stop: 'stop' };
}

/**
 * The reply after tool results.
 * @param {string} userText the user message that led to the tool calls
 * @param {{name:string, text:string, isError:boolean}[]} results
 * @returns {Reply}
 */
export function replyToToolResults(userText, results) {
  const head = headOf(userText);
  const summary = results
    .map((r) => {
      const flat = r.text.split('\n').map((s) => s.trim()).filter(Boolean).join(', ');
      return r.isError ? `${r.name} failed (${flat})` : `${r.name} → ${flat || '(nothing)'}`;
    })
    .join('; ');
  return { blocks: [{ type: 'text', text: `Result for ${head}: ${summary}.` }], stop: 'stop' };
}
