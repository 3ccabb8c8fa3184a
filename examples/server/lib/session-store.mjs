// Sessions kept on disk, so they survive a restart, and the catalog the session list reads.
//
// The data folder (`--data-dir`):
//   pi/*.jsonl      pi sessions, in pi's own session file format, written and read only through
//                   `SessionManager` of @earendil-works/pi-coding-agent: the agent's messages
//                   (`appendMessage`, on each `message_end`), the title (`appendSessionInfo`),
//                   and custom entries (`appendCustomEntry`, outside the model's context) for
//                   what pi has no field for:
//                     agent-chat-store.session   {sessionId}            our id of the session (first entry)
//                     agent-chat-store.message   {entryId, messageId, files?}  the UI id (and the
//                                                file parts) of the message entry `entryId`
//                     agent-chat-store.turn-end  {turnId}               a turn ended; its timestamp is `updatedAt`
//                     agent-chat-store.archived  {archived}             the latest one wins
//                     agent-chat-store.tool-wait {toolCallId, kind, state, …}  a tool call that
//                                                waited for the user (pi-runtime.mjs `Wait`), at
//                                                the request and at the answer; the latest wins
//   ai-sdk/*.json   AI SDK sessions (the client's history): `{id, runtime, interactiveTools,
//                   createdAt, updatedAt, title?, archived, messages, tree?}` (`tree`: the
//                   client's branches, `[{parentId, message}]`), one file per session named
//                   by the SHA-256 of its id (ids are any string; file names are not).
//
// Our session ids (client-made, any string) are not pi session ids (pi's are UUIDv7 and
// restricted to [A-Za-z0-9._-]), so the mapping lives inside each pi file, in its
// `agent-chat-store.session` entry: no second index to keep in step. Startup opens every file
// once to build the catalog (id, runtime, times, title, first line, archived); a session's
// messages are loaded again only when it is opened.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURE_ROOT } from './tools.mjs';

// The package's main entry needs Node 22 (`fs.globSync`, through modules the session manager
// does not use); its session-manager module is the same code and loads on Node 20. The
// package's `exports` map hides it from a bare specifier, so it is imported by file URL.
const { SessionManager } = await import(new URL('./core/session-manager.js', import.meta.resolve('@earendil-works/pi-coding-agent')));

const T = {
  session: 'agent-chat-store.session',
  message: 'agent-chat-store.message',
  turnEnd: 'agent-chat-store.turn-end',
  archived: 'agent-chat-store.archived',
  toolWait: 'agent-chat-store.tool-wait',
};

const TITLE_CHARS = 80;

/**
 * @typedef {object} SessionRecord  what the list needs, without the transcript
 * @property {string} id
 * @property {'pi'|'ai-sdk'} runtime
 * @property {number} createdAt epoch ms
 * @property {number} updatedAt epoch ms (the end of its last turn)
 * @property {string} [name] the title a rename gave
 * @property {string} [firstLine] first line of the first user message, at most 80 characters
 * @property {boolean} archived
 * @property {string} file
 * @property {boolean} [interactiveTools] ai-sdk: the tool set it was created with
 * @property {PiJournal|AiSdkJournal} [journal] open once the session was created or opened
 */

export class SessionStore {
  /** @param {string} dir the data folder (created if missing) */
  constructor(dir) {
    this.dir = path.resolve(dir);
    this.piDir = path.join(this.dir, 'pi');
    this.aiSdkDir = path.join(this.dir, 'ai-sdk');
    fs.mkdirSync(this.piDir, { recursive: true });
    fs.mkdirSync(this.aiSdkDir, { recursive: true });
    /** @type {Map<string, SessionRecord>} */
    this.records = new Map();
    this.scan();
  }

  scan() {
    for (const name of fs.readdirSync(this.piDir).filter((n) => n.endsWith('.jsonl'))) {
      const file = path.join(this.piDir, name);
      try {
        this.add(piRecord(SessionManager.open(file, this.piDir), file));
      } catch (e) {
        console.error(`skipping pi session file ${file}: ${e.message}`);
      }
    }
    for (const name of fs.readdirSync(this.aiSdkDir).filter((n) => n.endsWith('.json'))) {
      const file = path.join(this.aiSdkDir, name);
      try {
        this.add(aiSdkRecord(JSON.parse(fs.readFileSync(file, 'utf8')), file));
      } catch (e) {
        console.error(`skipping ai-sdk session file ${file}: ${e.message}`);
      }
    }
  }

  /** A file that is not ours (no session id) is left alone; of two claiming one id, the newer wins. */
  add(rec) {
    if (!rec) return;
    const other = this.records.get(rec.id);
    if (!other || other.updatedAt < rec.updatedAt) this.records.set(rec.id, rec);
  }

  get(id) {
    return this.records.get(id);
  }

  /** A new pi session (its file appears with its first message). */
  createPi(id) {
    const sm = SessionManager.create(FIXTURE_ROOT, this.piDir);
    sm.appendCustomEntry(T.session, { sessionId: id });
    const createdAt = Date.parse(sm.getHeader().timestamp);
    /** @type {SessionRecord} */
    const rec = { id, runtime: 'pi', createdAt, updatedAt: createdAt, archived: false, file: sm.getSessionFile() };
    rec.journal = new PiJournal(rec, sm);
    this.records.set(id, rec);
    return rec.journal;
  }

  /** A new AI SDK session (written at once: its history is whatever the client gives). */
  createAiSdk(id, { interactiveTools = false } = {}) {
    const now = Date.now();
    const file = path.join(this.aiSdkDir, `${createHash('sha256').update(id).digest('hex').slice(0, 32)}.json`);
    /** @type {SessionRecord} */
    const rec = { id, runtime: 'ai-sdk', createdAt: now, updatedAt: now, archived: false, file, interactiveTools };
    rec.journal = new AiSdkJournal(rec, []);
    this.records.set(id, rec);
    rec.journal.save();
    return rec.journal;
  }

  /** The session's journal, its file opened on first use. */
  journal(id) {
    const rec = this.records.get(id);
    if (!rec) return undefined;
    if (!rec.journal) {
      rec.journal = rec.runtime === 'pi'
        ? new PiJournal(rec, SessionManager.open(rec.file, this.piDir))
        : AiSdkJournal.read(rec);
    }
    return rec.journal;
  }

  /** Rename (`title`: '' clears it) and/or archive; `updatedAt` stays (the list keeps its order). */
  update(id, { title, archived }) {
    const j = this.journal(id);
    if (title !== undefined) j.rename(title);
    if (archived !== undefined) j.archive(archived);
    return this.records.get(id);
  }

  /** Forgets the session and removes its file; its journal writes nothing from now on. */
  remove(id) {
    const rec = this.records.get(id);
    if (!rec) return false;
    rec.journal?.close();
    this.records.delete(id);
    fs.rmSync(rec.file, { force: true });
    return true;
  }

  clear() {
    for (const id of [...this.records.keys()]) this.remove(id);
  }

  /**
   * One page of the list, most recently updated first (ties: by id). The cursor is a keyset
   * cursor, the (updatedAt, id) of the page's last item: the next page starts after that
   * position, wherever it is now. A session updated between two page requests moves to the
   * top, before the cursor: the walk never lists it twice (and never shifts the others), and
   * if the walk had not reached it yet, the next walk from the top shows it first.
   * @returns {{records: SessionRecord[], nextCursor?: string}}
   */
  list({ archived = false, limit = 20, cursor, runtime } = {}) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    // `archived: 'any'` and `runtime` serve the pi-native list (pi sessions, no archive notion).
    const all = [...this.records.values()]
      .filter((r) => (archived === 'any' || r.archived === archived) && (runtime === undefined || r.runtime === runtime))
      .sort(order);
    const start = after ? all.findIndex((r) => order(r, after) > 0) : 0;
    const records = start < 0 ? [] : all.slice(start, start + limit);
    const more = start >= 0 && start + limit < all.length;
    return { records, ...(more ? { nextCursor: encodeCursor(records.at(-1)) } : {}) };
  }
}

export class CursorError extends Error {}

function order(a, b) {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function encodeCursor(rec) {
  return Buffer.from(JSON.stringify([rec.updatedAt, rec.id])).toString('base64url');
}

function decodeCursor(text) {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Number.isFinite(updatedAt) && typeof id === 'string') return { updatedAt, id };
  } catch {
    // falls through
  }
  throw new CursorError('cursor is not one this server gave');
}

/** The first non-empty line of a text, at most 80 characters (undefined: none). */
export function firstLineOf(text) {
  const line = String(text ?? '').split(/\r\n|\r|\n/).map((l) => l.trim()).find(Boolean);
  return line === undefined ? undefined : Array.from(line).slice(0, TITLE_CHARS).join('');
}

/** A title as pi's `appendSessionInfo` keeps it: one line, trimmed ('' means none). */
export function cleanTitle(title) {
  return title.replace(/[\r\n]+/g, ' ').trim();
}

function piText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

/** The first line of the first UI user message that has text. */
function firstUserLine(messages) {
  for (const m of messages) {
    if (m?.role !== 'user') continue;
    const line = firstLineOf((m.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(''));
    if (line) return line;
  }
  return undefined;
}

/** The catalog record of a pi session file (undefined: not one of ours). */
function piRecord(sm, file) {
  let id;
  let archived = false;
  let updatedAt = Date.parse(sm.getHeader().timestamp);
  let firstLine;
  for (const e of sm.getEntries()) {
    if (e.type === 'custom' && e.customType === T.session && id === undefined) id = e.data?.sessionId;
    else if (e.type === 'custom' && e.customType === T.archived) archived = !!e.data?.archived;
    else if (e.type === 'custom' && e.customType === T.turnEnd) updatedAt = Date.parse(e.timestamp);
    else if (e.type === 'message' && e.message.role === 'user' && firstLine === undefined) {
      firstLine = firstLineOf(piText(e.message.content)); // as pi's list: the first with text
    }
  }
  if (typeof id !== 'string') return undefined;
  const name = sm.getSessionName();
  const createdAt = Date.parse(sm.getHeader().timestamp);
  return { id, runtime: 'pi', createdAt, updatedAt, archived, file, ...(name ? { name } : {}), ...(firstLine ? { firstLine } : {}) };
}

function aiSdkRecord(doc, file) {
  if (typeof doc?.id !== 'string' || !Array.isArray(doc.messages)) return undefined;
  const firstLine = firstUserLine(doc.messages);
  return {
    id: doc.id,
    runtime: 'ai-sdk',
    createdAt: Date.parse(doc.createdAt),
    updatedAt: Date.parse(doc.updatedAt),
    archived: !!doc.archived,
    file,
    interactiveTools: !!doc.interactiveTools,
    ...(doc.title ? { name: doc.title } : {}),
    ...(firstLine ? { firstLine } : {}),
  };
}

/**
 * A write a turn makes as it runs: a failing disk is reported, and the turn goes on (the
 * session then lacks what failed after a restart). Renames and archives throw instead: their
 * request answers 500.
 */
function kept(write) {
  try {
    write();
  } catch (e) {
    console.error(`session not kept: ${e.message}`);
  }
}

/** Writes of one pi session, through its `SessionManager`. */
class PiJournal {
  /** @param {SessionRecord} rec */
  constructor(rec, sm) {
    this.rec = rec;
    this.sm = sm;
    this.closed = false;
  }

  /**
   * The transcript to give a re-created agent: the session context pi builds from the file,
   * with each message's UI id and file parts (keyed by the message object), and the tool
   * calls that waited for the user (their latest records).
   * @returns {{messages: object[], meta: Map<object, {id: string, files?: object[]}>, waits: object[]}}
   */
  restore() {
    const byEntry = new Map();
    const waits = new Map();
    for (const e of this.sm.getBranch()) {
      if (e.type === 'custom' && e.customType === T.message) byEntry.set(e.data.entryId, e.data);
      else if (e.type === 'custom' && e.customType === T.toolWait && typeof e.data?.toolCallId === 'string') waits.set(e.data.toolCallId, e.data);
    }
    const projection = this.sm.buildSessionProjection();
    const meta = new Map();
    for (const { sourceEntry, messages } of projection.entries) {
      const m = byEntry.get(sourceEntry.id);
      if (m && messages.length === 1) meta.set(messages[0], { id: m.messageId, ...(m.files ? { files: m.files } : {}) });
    }
    return { messages: projection.messages, meta, waits: [...waits.values()] };
  }

  /** A tool call's wait for the user, as it is now (requested, answered, stopped). */
  wait(record) {
    if (this.closed) return;
    kept(() => this.sm.appendCustomEntry(T.toolWait, record));
  }

  /** A message the agent ended (`ui`: its UI id and file parts; tool results have none). */
  message(message, ui) {
    if (this.closed) return;
    kept(() => this.writeMessage(message, ui));
  }

  writeMessage(message, ui) {
    const entryId = this.sm.appendMessage(message);
    if (ui?.id !== undefined) this.sm.appendCustomEntry(T.message, { entryId, messageId: ui.id, ...(ui.files?.length ? { files: ui.files } : {}) });
    // As pi's own session list: the first user message that has text.
    if (message.role === 'user' && this.rec.firstLine === undefined) {
      const line = firstLineOf(piText(message.content));
      if (line) this.rec.firstLine = line;
    }
  }

  turnEnded(turn) {
    if (this.closed) return;
    kept(() => {
      const entryId = this.sm.appendCustomEntry(T.turnEnd, { turnId: turn.id, ...(turn.stopped ? { stopped: true } : {}) });
      this.rec.updatedAt = Date.parse(this.sm.getEntry(entryId).timestamp);
    });
  }

  rename(title) {
    if (this.closed) return;
    this.sm.appendSessionInfo(title);
    const name = this.sm.getSessionName();
    if (name) this.rec.name = name;
    else delete this.rec.name;
  }

  archive(archived) {
    if (this.closed) return;
    this.sm.appendCustomEntry(T.archived, { archived });
    this.rec.archived = archived;
  }

  close() {
    this.closed = true;
  }
}

/** Writes of one AI SDK session: the whole file again, atomically, at each change. */
class AiSdkJournal {
  /** @param {SessionRecord} rec @param {object[]} messages */
  constructor(rec, messages, tree = null) {
    this.rec = rec;
    this.messages = messages;
    /** @type {object[] | null} the client's branches beside `messages`, as it stored them */
    this.tree = tree;
    this.closed = false;
  }

  /** @param {SessionRecord} rec */
  static read(rec) {
    const doc = JSON.parse(fs.readFileSync(rec.file, 'utf8'));
    return new AiSdkJournal(rec, doc.messages ?? [], Array.isArray(doc.tree) ? doc.tree : null);
  }

  restore() {
    return { history: this.messages, tree: this.tree, interactiveTools: !!this.rec.interactiveTools };
  }

  /** @param {object[] | null} tree */
  branches(tree) {
    this.tree = tree;
    kept(() => this.save());
  }

  history(messages) {
    this.messages = messages;
    const line = firstUserLine(messages);
    if (line) this.rec.firstLine = line;
    else delete this.rec.firstLine;
    kept(() => this.save());
  }

  turnEnded() {
    this.rec.updatedAt = Date.now();
    kept(() => this.save());
  }

  rename(title) {
    if (title) this.rec.name = title;
    else delete this.rec.name;
    this.save();
  }

  archive(archived) {
    this.rec.archived = archived;
    this.save();
  }

  save() {
    if (this.closed) return;
    const { id, runtime, createdAt, updatedAt, name, archived, interactiveTools, file } = this.rec;
    const doc = {
      id, runtime, interactiveTools: !!interactiveTools,
      createdAt: new Date(createdAt).toISOString(), updatedAt: new Date(updatedAt).toISOString(),
      ...(name ? { title: name } : {}), archived, messages: this.messages,
      ...(this.tree ? { tree: this.tree } : {}),
    };
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(doc));
    fs.renameSync(tmp, file);
  }

  close() {
    this.closed = true;
  }
}
