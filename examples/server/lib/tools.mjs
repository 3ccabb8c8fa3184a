// The real tools both runtimes execute: `ls` lists a folder under fixture-files/, `echo`
// returns its text. The human-in-the-loop tools are here too: `deleteFile`, which needs the
// user's approval and only pretends to delete (nothing on disk changes), in the pi runtime
// always and in the AI SDK runtime with `--interactive-tools`; `getLocation` (AI SDK, same
// flag), which the client runs (no server side at all); `askUser` (pi), whose answer is the
// user's (its parameters and result shape only: pi-runtime.mjs holds the call open). They are
// plain async functions; each runtime wraps them in its own tool shape (pi's AgentTool, the AI
// SDK's tool()). The pi runtime adds a harness-only tool, `pi.subagent` (lib/subagent.mjs).
// What a runtime really has is what its catalog lists (`catalogEntry`), with the UI hints of
// `TOOL_UI`.
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixture-files');

export const lsParameters = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Folder inside the fixture folder; "." for its root' } },
  additionalProperties: false,
};

export const echoParameters = {
  type: 'object',
  properties: { text: { type: 'string', description: 'Text to echo back' } },
  required: ['text'],
  additionalProperties: false,
};

/** Lists a folder of the fixture tree: `name` for files, `name/` for folders, sorted. */
export async function runLs(args, root = FIXTURE_ROOT) {
  const rel = typeof args?.path === 'string' && args.path !== '' ? args.path : '.';
  const target = path.resolve(root, rel);
  if (target !== root && !target.startsWith(root + path.sep)) {
    throw new Error(`path outside the fixture folder: ${rel}`);
  }
  let entries;
  try {
    entries = await readdir(target, { withFileTypes: true });
  } catch (e) {
    throw new Error(e?.code === 'ENOENT' ? `no such folder: ${rel}` : `cannot list ${rel}: ${e?.code ?? e}`);
  }
  const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  return { text: names.join('\n'), details: { path: rel, entries: names } };
}

export async function runEcho(args) {
  const text = typeof args?.text === 'string' ? args.text : '';
  return { text, details: { length: text.length } };
}

export const getLocationParameters = {
  type: 'object',
  properties: {},
  additionalProperties: false,
};

export const deleteFileParameters = {
  type: 'object',
  properties: { path: { type: 'string', description: 'The file to delete' } },
  required: ['path'],
  additionalProperties: false,
};

/** `deleteFile` after an approval: a pretend deletion (the fixture tree is never touched). */
export async function runDeleteFile(args) {
  const file = typeof args?.path === 'string' ? args.path : '';
  return { text: `deleted ${file}`, details: { path: file } };
}

export const askUserParameters = {
  type: 'object',
  properties: {
    question: { type: 'string', description: 'The question to ask the user' },
    options: { type: 'array', items: { type: 'string' }, description: 'The answers to offer' },
  },
  required: ['question'],
  additionalProperties: false,
};

export const subagentParameters = {
  type: 'object',
  properties: { task: { type: 'string', description: 'What the subagent should do' } },
  required: ['task'],
  additionalProperties: false,
};

export const TOOL_DESCRIPTIONS = {
  ls: 'List the files of a folder in the fixture folder',
  echo: 'Echo a text back',
  'pi.subagent': 'Hand a task to a nested pi agent (with ls and echo) and return its answer',
  getLocation: 'The city the user is in (the client answers it)',
  deleteFile: 'Delete a file (asks the user for approval first)',
  askUser: 'Ask the user a question and wait for the answer',
};

export const TOOL_PARAMETERS = {
  ls: lsParameters,
  echo: echoParameters,
  'pi.subagent': subagentParameters,
  getLocation: getLocationParameters,
  deleteFile: deleteFileParameters,
  askUser: askUserParameters,
};

/**
 * Renderer hints of the catalog (`ui`). `rendererId` names a rich renderer of the host app;
 * the others are grouping and icon hints. A tool's own result `details.uiKind` wins over these.
 */
export const TOOL_UI = {
  ls: { displayGroup: 'workspace', icon: 'folder' },
  echo: { displayGroup: 'workspace', icon: 'message' },
  'pi.subagent': { rendererId: 'pi-subagent', displayGroup: 'agents', icon: 'bot' },
  getLocation: { displayGroup: 'client', icon: 'pin' },
  deleteFile: { displayGroup: 'workspace', icon: 'trash' },
  askUser: { displayGroup: 'client', icon: 'question' },
};

/** One catalog entry: `{name, description, inputSchema, ui?}`. */
export function catalogEntry(name, description = TOOL_DESCRIPTIONS[name], inputSchema = TOOL_PARAMETERS[name]) {
  return {
    name,
    description,
    inputSchema,
    ...(TOOL_UI[name] ? { ui: { ...TOOL_UI[name] } } : {}),
  };
}

/** Names of the folders at the root of the fixture tree (a subagent's task may name one). */
export const FIXTURE_FOLDERS = readdirSync(FIXTURE_ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
