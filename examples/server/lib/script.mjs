// The scripted "model": a pure function of the transcript. Both runtimes use it (the pi
// runtime through pi-ai's fauxProvider, the AI SDK runtime through a mock LanguageModelV4), so
// what a turn answers depends only on the messages the agent really sent to the model. That
// makes follow-up delivery visible: a follow-up the agent consumed shows up as its own answer.
//
// Rules, applied to the last message of the transcript:
// - a user message with text T:
//   - `fail provider` in T: the provider fails (an error response, no content), unless T
//     hands it to a subagent (below);
//   - `think` in T: a reasoning block comes first;
//   - `list files` in T (optionally `list files in DIR`): a call of the `ls` tool;
//   - `echo X` in T: a call of the `echo` tool with `{text: X}` (X runs to the end of the line);
//   - `where am I` in T, when the agent has the client tool `getLocation` (the AI SDK runtime
//     with `--interactive-tools`): a call of `getLocation` `{}`, answered by the client;
//   - `delete FILE` in T, when the agent has `deleteFile` (the pi runtime always, the AI SDK
//     runtime with `--interactive-tools`): a call of `deleteFile` `{path: FILE}`, which waits
//     for the user's approval. FILE is the next word without trailing punctuation, and only a
//     word that looks like a file (`notes.txt`, `a/b`: a dot between word characters, or a
//     slash) counts, so `Delete me later` stays a plain answer;
//   - for the tools of the AI SDK docs' route (`POST /api/chat`): `weather in CITY` in T (CITY: a word and
//     the capitalised words after it): a call of `getWeatherInformation` `{city}` (a server tool); `confirm X` in T: a call of the
//     client tool `askForConfirmation` `{message: "Confirm X?"}`, answered by the user;
//   - `ask which colour` in T (or `color`), when the agent has `askUser` (the pi runtime): a
//     call of `askUser` `{question: "which colour", options: ["red", "green", "blue"]}`, which
//     waits for the user's answer;
//   - `subagent TASK` in T, when the agent has the `pi.subagent` tool (the pi runtime does, the
//     AI SDK runtime does not): a call of `pi.subagent` with `{task: TASK}` (TASK runs to the end
//     of the line) and no other call, since the task may itself say `list files` or `echo`;
//   - for a subagent only (`folders` given): a task naming a folder of the fixture tree and
//     asking for no tool calls `ls` on that folder;
//   - `recall` in T: `Answer <head>: before this you said "A"; "B".` naming the earlier user
//     messages of the transcript (their first lines), or `Answer <head>: nothing before this.`
//     (so a test sees the whole transcript reached the model, e.g. after a restart);
//   - otherwise the answer is `Answer <head>: w1 w2 … wN`, where <head> is the first three
//     words of T and N is `words:N` from T or the server's `--words`; a regenerated answer
//     says which attempt it is: `Answer <head> (attempt 2): …`;
//   - with a tool call, a short text (`Answer <head>: calling ls.`) precedes the call(s);
// - tool results (the model's turn after its tool calls): `Result for <head>: ls → a, b; echo → X.`,
//   except the interactive tools, which get a sentence of their own: `You are in <city>.`
//   (getLocation's output), `Deleted FILE.` (deleteFile approved and run), `Kept FILE.`
//   (deleteFile denied: the AI SDK's `execution-denied`, or pi's blocked result
//   `Blocked by the user: …`), `You chose <answer>.` (askUser answered), `The weather in
//   <city> is <output>.` (getWeatherInformation), `You answered: <output>.` (askForConfirmation).

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

/** The namespaced harness tool of the pi runtime: a nested agent run for a task. */
export const SUBAGENT_TOOL = 'pi.subagent';
const ALL_TOOLS = ['ls', 'echo', SUBAGENT_TOOL];

const COLOURS = ['red', 'green', 'blue'];

/** A word `delete` may name: `notes.txt`, `notes/todo.txt`, `a/b` (not `me`, `it`, `the`). */
function looksLikeFile(word) {
  return /\w\.\w/.test(word) || word.includes('/');
}

/**
 * The tool calls a user message asks for, in the order the rules list them. Only tools the
 * agent has (`tools`, default all) are called: the model never asks for a tool its runtime
 * lacks. `folders` (a subagent's): folder names of the fixture tree a task may name.
 * @param {string} text
 * @param {{tools?: readonly string[], folders?: readonly string[]}} [opts]
 */
export function toolCallsFor(text, { tools = ALL_TOOLS, folders } = {}) {
  const has = (name) => tools.includes(name);
  const sub = /\bsubagent\b[ \t]+([^\n]*\S)/i.exec(text);
  if (sub && has(SUBAGENT_TOOL)) return [{ name: SUBAGENT_TOOL, args: { task: sub[1].trim() } }];
  const calls = [];
  const ls = /list files(?:\s+in\s+(\S+))?/i.exec(text);
  if (ls && has('ls')) calls.push({ name: 'ls', args: { path: ls[1] ?? '.' } });
  const echo = /\becho\b[ \t]*([^\n]*)/i.exec(text);
  if (echo && has('echo')) calls.push({ name: 'echo', args: { text: echo[1].trim() } });
  if (/\bwhere am i\b/i.test(text) && has('getLocation')) calls.push({ name: 'getLocation', args: {} });
  const del = /\bdelete[ \t]+([^\s?!,;]*[^\s?!,;.])/i.exec(text);
  if (del && looksLikeFile(del[1]) && has('deleteFile')) calls.push({ name: 'deleteFile', args: { path: del[1] } });
  const weather = /\b[Ww]eather [Ii]n[ \t]+(\w[\w-]*(?:[ \t]+[A-Z][\w-]*)*)/.exec(text);
  if (weather && has('getWeatherInformation')) calls.push({ name: 'getWeatherInformation', args: { city: weather[1] } });
  const confirm = /\bconfirm\b[ \t]*([^\n]*)/i.exec(text);
  if (confirm && has('askForConfirmation')) calls.push({ name: 'askForConfirmation', args: { message: `Confirm ${confirm[1].trim().replace(/[?.!]+$/, '') || 'this'}?` } });
  const ask = /\bask[ \t]+(which colou?r)\b/i.exec(text);
  if (ask && has('askUser')) calls.push({ name: 'askUser', args: { question: ask[1].toLowerCase(), options: [...COLOURS] } });
  if (calls.length === 0 && folders && has('ls')) {
    const folder = folders.find((f) => new RegExp(`\\b${f.replace(/[^\w-]/g, '')}\\b`, 'i').test(text));
    if (folder) calls.push({ name: 'ls', args: { path: folder } });
  }
  return calls;
}

/**
 * The reply to a user message.
 * @param {string} text the user's text
 * @param {{words: number, tools?: readonly string[], folders?: readonly string[], attempt?: number, earlier?: readonly string[]}} opts
 *   `attempt` (> 1: a regenerated answer) is named in the answer's text; `earlier`: the texts
 *   of the transcript's earlier user messages (for `recall`)
 * @returns {Reply}
 */
export function replyToUser(text, { words, tools, folders, attempt = 1, earlier = [] }) {
  const head = headOf(text) + (attempt > 1 ? ` (attempt ${attempt})` : '');
  const calls = toolCallsFor(text, { tools, folders });
  // A subagent's task is the subagent's business: `subagent fail provider` fails the nested run.
  const delegated = calls.length === 1 && calls[0].name === SUBAGENT_TOOL;
  if (/fail provider/i.test(text) && !delegated) {
    return { blocks: [], stop: 'error', errorMessage: 'scripted provider error' };
  }
  const blocks = [];
  if (/\bthink/i.test(text)) {
    blocks.push({ type: 'thinking', text: `Thinking about "${head}": the user wrote ${text.trim().split(/\s+/).length} words, so I answer them.` });
  }
  if (calls.length > 0) {
    blocks.push({ type: 'text', text: `Answer ${head}: calling ${calls.map((c) => c.name).join(' and ')}.` });
    for (const c of calls) blocks.push({ type: 'toolCall', name: c.name, args: c.args });
    return { blocks, stop: 'toolUse' };
  }
  if (/\brecall\b/i.test(text)) {
    const said = earlier.map((t) => String(t).split('\n')[0].trim()).filter(Boolean);
    blocks.push({ type: 'text', text: said.length ? `Answer ${head}: before this you said ${said.map((t) => `"${t}"`).join('; ')}.` : `Answer ${head}: nothing before this.` });
    return { blocks, stop: 'stop' };
  }
  const n = wordCount(text, words);
  blocks.push({ type: 'text', text: n > 0 ? `Answer ${head}: ${fillerWords(n)}` : `Answer ${head}.` });
  return { blocks, stop: 'stop' };
}

/**
 * The sentence an interactive tool's result gets (undefined: the generic summary).
 * @param {{name:string, text:string, isError:boolean, denied?:boolean, input?:any, value?:any}} r
 */
function toolSentence(r) {
  if (r.name === 'getLocation' && !r.isError) {
    const v = r.value;
    const city = v && typeof v === 'object' && typeof v.city === 'string' ? v.city : typeof v === 'string' ? v : r.text;
    return `You are in ${String(city).trim().replace(/\.$/, '') || 'an unknown place'}.`;
  }
  if (r.name === 'deleteFile') {
    const file = typeof r.input?.path === 'string' ? r.input.path : r.text.replace(/^deleted /, '');
    if (r.denied) return `Kept ${file}.`;
    if (!r.isError) return `Deleted ${file}.`;
  }
  if (r.name === 'getWeatherInformation' && !r.isError) {
    return `The weather in ${r.input?.city ?? 'that city'} is ${r.text.trim().replace(/\.$/, '')}.`;
  }
  if (r.name === 'askForConfirmation' && !r.isError) {
    return `You answered: ${r.text.trim().replace(/\.$/, '')}.`;
  }
  if (r.name === 'askUser' && !r.isError) {
    return `You chose ${r.text.trim().replace(/\.$/, '') || 'nothing'}.`;
  }
  return undefined;
}

/**
 * The reply after tool results.
 * @param {string} userText the user message that led to the tool calls
 * @param {{name:string, text:string, isError:boolean, denied?:boolean, input?:any, value?:any}[]} results
 *   `denied`: the user denied the call; `input`: the call's input; `value`: the raw output
 * @returns {Reply}
 */
export function replyToToolResults(userText, results) {
  const head = headOf(userText);
  const sentences = [];
  const rest = [];
  for (const r of results) {
    const sentence = toolSentence(r);
    if (sentence) sentences.push(sentence);
    else rest.push(r);
  }
  if (rest.length === 0 && sentences.length > 0) {
    return { blocks: [{ type: 'text', text: sentences.join(' ') }], stop: 'stop' };
  }
  const summary = rest
    .map((r) => {
      // (a result that is itself a sentence loses its final period: no `..` at the end)
      const flat = r.text.split('\n').map((s) => s.trim()).filter(Boolean).join(', ').replace(/\.$/, '');
      return r.isError ? `${r.name} failed (${flat})` : `${r.name} → ${flat || '(nothing)'}`;
    })
    .join('; ');
  const text = [...sentences, `Result for ${head}: ${summary}.`].join(' ');
  return { blocks: [{ type: 'text', text }], stop: 'stop' };
}
