// The pi-native event stream (pi-native-protocol.md §6): a per-session event log with a
// session-wide `seq`, a bounded replay window, and the NDJSON responses that follow it.
//
// The log lives as long as the process (not the session object), so `seq` never restarts while
// the server runs: a session deleted and prompted again, or re-opened from disk, goes on
// counting. Events are kept already wrapped (`{ref, seq, event}`), as they go on the wire.

/**
 * @typedef {object} ChannelSettings  read at each use, so the control route can change them
 * @property {number} replayWindow how many events stay replayable
 * @property {() => boolean} takeSkipSeq true once per `skipSeq` fault: publish one seq too high
 */

export class EventChannel {
  /** @param {{agentTypeId: string, sessionId: string}} ref @param {ChannelSettings} settings */
  constructor(ref, settings) {
    this.ref = ref;
    this.settings = settings;
    /** latest published seq (0: none yet) */
    this.seq = 0;
    /** @type {{ref: object, seq: number, event: object}[]} the retained window, oldest first */
    this.events = [];
    /** @type {Set<(line: object) => void>} */
    this.subscribers = new Set();
  }

  /** Publishes `{type, …fields}`; returns its seq. */
  publish(event) {
    // The fault leaves a hole in the numbering, as a lost event would: a client must notice the
    // gap and re-read `/state`.
    const seq = this.seq + (this.settings.takeSkipSeq() ? 2 : 1);
    this.seq = seq;
    const { type, ...fields } = event;
    const line = { ref: this.ref, seq, event: { type, seq, ...fields } };
    this.events.push(line);
    this.trim();
    for (const s of this.subscribers) s(line);
    return seq;
  }

  trim() {
    const keep = Math.max(0, this.settings.replayWindow);
    if (this.events.length > keep) this.events.splice(0, this.events.length - keep);
  }

  /**
   * Why `cursor` cannot be served (undefined: it can). As §6: beyond the latest seq is
   * CURSOR_AHEAD; older than the window (or nothing retained while it is behind) is REPLAY_GAP.
   */
  refuse(cursor) {
    this.trim(); // the window may have shrunk (control route)
    const latestSeq = this.seq;
    const minReplaySeq = this.events[0]?.seq ?? latestSeq + 1;
    const details = { latestSeq, minReplaySeq };
    if (cursor > latestSeq) return { code: 'AGENT_SESSION_CURSOR_AHEAD', message: `cursor ${cursor} is ahead of the latest seq ${latestSeq}`, details };
    if (cursor < latestSeq && (this.events.length === 0 || cursor < minReplaySeq - 1)) {
      return { code: 'AGENT_SESSION_REPLAY_GAP', message: `cursor ${cursor} is older than the replay window (events from ${minReplaySeq})`, details };
    }
    return undefined;
  }

  subscribe(fn) {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }
}

/**
 * Answers `GET …/events`: 200 NDJSON, a bare heartbeat first (and every `heartbeatMs`), the
 * retained events with seq > `cursor` (none when `cursor` is undefined: live only), then live
 * events until the client goes. `cutAfter` (fault): destroy the socket once that many event
 * lines went out (heartbeats do not count; 0 = right after the first heartbeat).
 * Resolves when the response closed. The caller checked the cursor (`refuse`).
 */
export function pipeEvents(res, channel, { cursor, heartbeatMs, cutAfter, headers = {} }) {
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/x-ndjson',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  let sent = 0;
  const cut = () => {
    closed = true;
    // No clean end of the chunked body: the client must see a broken connection.
    res.socket?.destroy();
    res.destroy();
  };
  const write = (obj, isEvent) => {
    if (closed) return;
    const text = `${JSON.stringify(obj)}\n`;
    if (isEvent && cutAfter !== undefined && cutAfter !== null && ++sent >= cutAfter) {
      closed = true;
      res.write(text, () => setImmediate(cut));
      return;
    }
    res.write(text);
  };
  const heartbeat = () => write({ type: 'heartbeat', now: new Date().toISOString() }, false);
  heartbeat();
  if (cutAfter === 0) {
    closed = true;
    setImmediate(cut);
  }
  // Replay and subscribe in one synchronous step: publishing is synchronous too, so no event
  // can fall between the two (none lost, none twice).
  if (cursor !== undefined) for (const line of channel.events) if (line.seq > cursor) write(line, true);
  const unsubscribe = channel.subscribe((line) => write(line, true));
  const timer = setInterval(heartbeat, Math.max(10, heartbeatMs));
  return new Promise((resolve) => {
    res.once('close', () => {
      closed = true;
      clearInterval(timer);
      unsubscribe();
      resolve();
    });
  });
}
