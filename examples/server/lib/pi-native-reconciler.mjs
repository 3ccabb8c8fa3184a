// How the real pi-native server (boring-ui 31361f15) finds the selectors (`clientNonce`,
// `clientSeq`) and display texts of user messages and queue rows: our own model of its
// `PiChatMessageMetadataReconciler` (packages/agent/src/server/pi-chat/), for the
// `nativeSelectorsDropped` switch of pi-native.mjs.
//
// Why a model of the reconciler and not a rule such as "only the first consumed follow-up keeps its selectors":
// the real server's pi messages and pi queue carry no selectors at all; the reconciler
// remembers what was accepted and matches by text, and what it attaches depends on the order
// of events. Modelled, it gives what the live server gave in every probe (pi-native-protocol.md
// §9, §14.2; upstream README "Known facts of the live servers"):
// - a consumed follow-up's `queue-updated` comes first and re-syncs the remembered follow-ups
//   to the rows that still have selectors, so the consumed one is forgotten before its user
//   `message-start`, which then has none (a lone follow-up: none; three distinct: none);
// - rows are matched by position when the remembered entry at that index has the same text,
//   else by a text unique in both lists: of `first, same, same, third`, once `first` is
//   consumed the rows are `[same (none), same (f2, 2), third (f4, 4)]`, and the first `same`'s
//   `message-start` finds `f2` by text (the second `same` and `third` find nothing);
// - of two queued identical texts, the remaining row gets the first one's selectors;
// - a prompt's selectors are matched on its `message-start` and forgotten there (unless it had
//   a `displayContent`, kept until its `message-end`), so `/state` and the finals have none;
// - a message whose metadata is gone shows pi's text (`content`), not the `displayContent`.
// The metering, files and persisted-state parts of the original are left out (this server
// has no billing; attachments keep the parts pi-runtime.mjs gives them), and so is its memory
// of the follow-up an interrupt starts: the live server records it only after pi's own run
// already drained that follow-up (the interrupt waits for the aborted run, which goes on with
// the queue), so its user `message-start` had no selectors there either.
//
// Input is what the real server maps from pi, with no selectors: user `message-start` with
// pi's text, user finals with pi's text, queue rows `{id, kind, displayText: pi's text}`.

export class MetadataReconciler {
  constructor() {
    /** @type {Entry[]} accepted prompts not yet seen in the stream */
    this.prompts = [];
    /** @type {Entry[]} accepted follow-ups, re-synced to the queue rows that have selectors */
    this.followUps = [];
  }

  recordPrompt({ clientNonce, content, displayContent }) {
    const displayText = displayContent ?? content;
    this.prompts.push({ displayText, ...(displayText !== content ? { serverText: content } : {}), clientNonce, recordedAt: Date.now() });
  }

  recordFollowUp({ clientNonce, clientSeq, content, displayContent }) {
    const displayText = displayContent ?? content;
    this.followUps.push({ displayText, ...(displayText !== content ? { serverText: content } : {}), clientNonce, clientSeq, recordedAt: Date.now() });
  }

  /**
   * Rows as a `queue-updated` and `/state` give them: selectors attached by position when the
   * remembered entry there has the same text, else by a text unique in both lists. Every
   * reading re-syncs the memory to its rows, as the original's does.
   */
  enrichQueue(rows) {
    const enriched = this.attach(rows);
    this.syncFromQueue(enriched);
    return enriched;
  }

  attach(rows) {
    const metadata = this.followUps;
    if (metadata.length === 0) return rows;
    const rowCounts = countTexts(rows.map((r) => r.displayText));
    const metaCounts = new Map();
    for (const e of metadata) {
      metaCounts.set(e.displayText, (metaCounts.get(e.displayText) ?? 0) + 1);
      if (e.serverText) metaCounts.set(e.serverText, (metaCounts.get(e.serverText) ?? 0) + 1);
    }
    return rows.map((row, index) => {
      if (hasSelector(row)) return row;
      const indexed = metadata[index];
      if (matchesText(indexed, row.displayText)) return withRowSelector(row, indexed);
      if ((rowCounts.get(row.displayText) ?? 0) !== 1) return row;
      if ((metaCounts.get(row.displayText) ?? 0) !== 1) return row;
      const matched = metadata.find((e) => matchesText(e, row.displayText));
      return matched ? withRowSelector(row, matched) : row;
    });
  }

  /** What is remembered of follow-ups: the rows that have selectors now, nothing else. */
  syncFromQueue(rows) {
    const previous = this.followUps;
    const now = Date.now();
    this.followUps = rows.filter(hasSelector).map((row) => {
      const match = previous.find((e) => matchesSelector(e, row));
      return {
        displayText: row.displayText,
        ...(match?.serverText ? { serverText: match.serverText } : {}),
        clientNonce: row.clientNonce,
        clientSeq: row.clientSeq,
        recordedAt: match?.recordedAt ?? now,
      };
    });
  }

  /** A user `message-start` or `message-end` as published (the others pass unchanged). */
  enrichEvent(event) {
    if (event.type === 'message-start' && event.role === 'user' && !hasSelector(event)) {
      const meta = this.findPrompt(event.text) ?? this.findFollowUp(event.text);
      if (meta) {
        return { ...event, text: meta.displayText, ...(meta.clientNonce ? { clientNonce: meta.clientNonce } : {}), ...(meta.clientSeq !== undefined ? { clientSeq: meta.clientSeq } : {}) };
      }
    }
    if (event.type === 'message-end' && event.final.role === 'user' && !hasSelector(event.final)) {
      const text = messageText(event.final);
      const meta = this.findPrompt(text) ?? this.findFollowUp(text);
      if (meta) return { ...event, final: withMessageSelector(event.final, meta) };
    }
    return event;
  }

  /** After publishing `event` (enriched): forget what it used up. */
  consumeEvent(event) {
    if (event.type === 'message-start' && event.role === 'user') {
      // the follow-up it was: by its selectors, else the first one with its text
      if (hasSelector(event)) removeWhere(this.followUps, (e) => matchesSelector(e, event));
      else if (event.text) removeWhere(this.followUps, (e) => matchesText(e, event.text));
      // the prompt it was (a clientSeq says it was a follow-up)
      if (event.clientSeq !== undefined) return;
      const prompt = event.clientNonce ? this.prompts.find((e) => e.clientNonce === event.clientNonce) : this.findPrompt(event.text);
      // A prompt with a display text is kept to its `message-end`, whose final has pi's text.
      if (prompt?.serverText) return;
      if (event.clientNonce) removeWhere(this.prompts, (e) => e.clientNonce === event.clientNonce);
      else removeWhere(this.prompts, (e) => matchesText(e, event.text));
      return;
    }
    if (event.type !== 'message-end' || event.final.role !== 'user') return;
    if (event.final.clientSeq !== undefined) return;
    if (event.final.clientNonce) removeWhere(this.prompts, (e) => e.clientNonce === event.final.clientNonce);
    else removeWhere(this.prompts, (e) => matchesText(e, messageText(event.final)));
  }

  /** `/state`'s user messages (the memory is only read: each entry serves one message). */
  enrichMessages(messages) {
    const followUps = [...this.followUps];
    const prompts = [...this.prompts];
    if (followUps.length === 0 && prompts.length === 0) return messages;
    return messages.map((m) => {
      if (m.role !== 'user' || hasSelector(m)) return m;
      const text = messageText(m);
      const meta = takeFirst(prompts, text, m) ?? takeFirst(followUps, text, m);
      return meta ? withMessageSelector(m, meta) : m;
    });
  }

  findPrompt(text) {
    return text ? this.prompts.find((e) => matchesText(e, text)) : undefined;
  }

  findFollowUp(text) {
    return text ? this.followUps.find((e) => matchesText(e, text)) : undefined;
  }
}

function hasSelector(x) {
  return Boolean(x.clientNonce) || x.clientSeq !== undefined;
}

function matchesSelector(entry, selector) {
  if (selector.clientNonce) return entry.clientNonce === selector.clientNonce;
  return selector.clientSeq !== undefined && entry.clientSeq === selector.clientSeq;
}

function matchesText(entry, text) {
  if (!entry || !text) return false;
  return entry.displayText === text || entry.serverText === text;
}

function withRowSelector(row, meta) {
  return {
    ...row,
    displayText: meta.displayText,
    ...(meta.clientNonce ? { clientNonce: meta.clientNonce } : {}),
    ...(meta.clientSeq !== undefined ? { clientSeq: meta.clientSeq } : {}),
  };
}

/** The first text part says the display text (the others go), plus the selectors. */
function withMessageSelector(m, meta) {
  let replaced = false;
  const parts = m.parts.flatMap((p) => {
    if (p.type !== 'text') return [p];
    if (replaced) return [];
    replaced = true;
    return [{ ...p, text: meta.displayText }];
  });
  return {
    ...m,
    parts,
    ...(meta.clientNonce ? { clientNonce: meta.clientNonce } : {}),
    ...(meta.clientSeq !== undefined ? { clientSeq: meta.clientSeq } : {}),
  };
}

function messageText(m) {
  const text = m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  return text === '' ? undefined : text;
}

/** The first entry with this text recorded before the message was made, taken out of `list`. */
function takeFirst(list, text, m) {
  if (!text || !m.createdAt) return undefined;
  const at = Date.parse(m.createdAt);
  if (!Number.isFinite(at)) return undefined;
  const i = list.findIndex((e) => matchesText(e, text) && e.recordedAt !== undefined && at >= e.recordedAt);
  return i < 0 ? undefined : list.splice(i, 1)[0];
}

/** Removes the first entry `pred` holds for; whether there was one. */
function removeWhere(list, pred) {
  const i = list.findIndex(pred);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

function countTexts(texts) {
  const counts = new Map();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/**
 * @typedef {object} Entry  what the reconciler remembers of an accepted message
 * @property {string} displayText
 * @property {string} [serverText] the text pi got, when a displayContent differed
 * @property {string} [clientNonce]
 * @property {number} [clientSeq]
 * @property {number} [recordedAt]
 */
