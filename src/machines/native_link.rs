//! Following one pi-native session (SPEC §14) as a sans-IO model: which read to ask for next
//! (`GET …/state`, `GET …/events?cursor=N`), when (reconnect backoff, reset by an event and by
//! every heartbeat), and what an answer means (frames through the [`NativeGate`], a gap or a
//! range error that makes the state be read again). The store makes the requests and feeds
//! their answers here, as it does for the session list; the commands (`prompt`, `followup`,
//! `stop`, `queue/clear`) are built by [`commands`].
//!
//! The reading rules are the reference's §6 and §13: the state is read once, then the events
//! stream is followed from its `seq`; a stream that ends or fails is reconnected from the
//! cursor without a state read; a seq gap, a `REPLAY_GAP` or a `CURSOR_AHEAD` answer reads the
//! state again. A state older than the events applied is ignored (a lagging server), except
//! the one read after such an answer: its lower seq is taken as it is.
//!
//! Bad input never stalls the link nor makes it read again what it cannot take. A line it
//! cannot take is a [`LineLoss`], and the stream goes on: a line over the line limit (the
//! store's `limits.maxEventBytes`) is known by its head ([`read_frame_head`]); a line that is
//! not a frame of the protocol (not JSON or not UTF-8, a seq that is no integer up to 2^53 − 1,
//! an envelope whose seq differs from its event's) is skipped likewise; an event of a type
//! this version does not know, applied as nothing; an event whose envelope's `ref` names
//! another session, dropped without taking a seq. A skipped line whose seq can be read moves
//! the cursor past it (so no reconnect downloads it again); one whose seq cannot leaves the
//! next event's gap to read the state.
//!
//! Every loop is bounded. The deadlines (the store sets them on the requests):
//! - `/state` answers within [`READ_DEADLINE_MS`] (15 s, upstream's per-attempt budget) of its
//!   request or of its last bytes, else it failed;
//! - `/events` sends its head within [`READ_DEADLINE_MS`], else it failed; after the head, the
//!   store's `streamIdleTimeoutMs` (the server's heartbeats come every 25 s).
//!
//! A recovery (a state read after a gap, `REPLAY_GAP` or `CURSOR_AHEAD`; a state read that
//! failed) is a strike: the first goes at once (a gap, a range error) or after the backoff (a
//! failed state read), each next one after the backoff of its rank, and the
//! [`MAX_STRIKES`]+1-th stops the link with a typed error ([`LinkNote::GaveUp`]: the store
//! shows it in `snapshot.error`; reopening the session starts over). Strikes start over only
//! when a recovery worked, an event applied past the seq it was for (a gap's end, the cursor
//! it met), or after [`QUIET_MS`] without one: a state that does not fill the gap it was read
//! for, or a connect answered by the same range error, clears nothing. With the reference's
//! backoff (its jitter is ±25 %) a loop of gaps or range errors gives up 23–38 s after it
//! began (11 requests: the connect, then a state read and a connect each time), one of failed
//! state reads 23–39 s after the first failure (6 reads; one that never answers adds its 15 s
//! deadline to each, about 2 min in all, said as a typed error from the first failure on):
//! never more than three reads within a second. A state answer over
//! `limits.maxBodyBytes` stops the link at once (it would be the same again). The events
//! stream itself is reconnected as long as it fails, as upstream does, after the backoff (at
//! most 30 s); after [`UNREACHABLE_AFTER`] failures in a row without a connect (a `/state` never
//! read: its first failure) it says so
//! ([`LinkNote::Unreachable`]) and goes on.

use crate::codec::ndjson::{LineError, NdjsonDecoder};
use crate::protocol::pi_native::{
    classify_events_error, parse_addressed_line, read_frame_head, read_state, EventKind, EventRef,
    Frame, FrameHead, NativeEvent,
};
use crate::protocol::ChatError;
use crate::reduce::conversation::Conversation;
use crate::reduce::pi_native::{Gate, NativeEffect, NativeGate};
use crate::util::random::RandomSource;

mod lines;

/// The code of a session the server does not have (reference §10).
const NOT_FOUND: &str = "AGENT_SESSION_NOT_FOUND";

/// The longest event line a link made by [`NativeLink::new`] takes (the store gives its own,
/// `limits.maxEventBytes`, whose default this is): a `message-end` final carries a whole
/// message.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long `/state` may take to answer (from its request or its last bytes), and `/events`
/// to send its head, before the attempt counts as failed (upstream's `requestTimeoutMs`).
pub const READ_DEADLINE_MS: u64 = 15_000;

/// Recoveries in a row (see the module doc) before the link gives up with a typed error.
pub const MAX_STRIKES: u32 = 5;

/// Failed attempts in a row after which a read that keeps failing is said
/// ([`LinkNote::Unreachable`]) while it is still tried: a hung connect (15 s each) is said within
/// a minute. A state never read yet (a blank chat) is said at its first failure.
pub const UNREACHABLE_AFTER: u32 = 3;

/// A time without a recovery after which strikes start over.
pub const QUIET_MS: u64 = 60_000;

/// A read the link wants made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// `GET …/state`.
    State,
    /// `GET …/events?cursor=N`.
    Events {
        /// The cursor: the seq of the last event applied.
        cursor: u64,
    },
}

/// Which read an answer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The state read in flight.
    State,
    /// The events stream in flight.
    Events,
}

/// Why a line of the events stream was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineLossKind {
    /// Longer than the line limit (`limits.maxEventBytes`), which it gives.
    TooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// Not a frame of the protocol.
    Malformed,
    /// An event of a type this version does not know (its seq counted).
    UnknownType,
    /// An event its envelope addresses to another session (its seq not counted).
    Elsewhere,
}

/// A line of the events stream the link did not apply, and what its head said of it.
#[derive(Debug, Clone, PartialEq)]
pub struct LineLoss {
    /// Why.
    pub kind: LineLossKind,
    /// What was lost, for a person.
    pub message: String,
    /// Its seq, type, ids and role, as far as they could be read.
    pub head: FrameHead,
}

/// What happened, for the store to show.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkNote {
    /// An event's effect on the session (a committed user message, the queue, the run…).
    Effect(NativeEffect),
    /// The state was read: the history, queue and status are the server's now.
    Hydrated,
    /// A read failed and is tried again after a backoff; the message says why.
    Retrying(String),
    /// The state answer is unusable (another protocol version, not a session document): the
    /// link stops, as the upstream client does.
    Refused(String),
    /// The server has no such session (`404 AGENT_SESSION_NOT_FOUND`): the link stops, and
    /// the session is empty until a send creates it.
    Missing,
    /// A line of the events stream was skipped; the stream goes on.
    Lost(LineLoss),
    /// The link stopped after [`MAX_STRIKES`] recoveries that did not work, or a state answer
    /// too large to read: the error says why. Reopening the session starts over.
    GaveUp(ChatError),
    /// The events stream failed [`UNREACHABLE_AFTER`] times in a row without connecting, or the
    /// first state read failed; it is still tried (after the backoff).
    /// [`NativeLink::reached`] gives the error back.
    Unreachable(ChatError),
}

/// The link's state.
#[derive(Debug)]
pub struct NativeLink {
    gate: NativeGate,
    decoder: NdjsonDecoder,
    /// The longest line taken.
    max_line: usize,
    /// The session followed (`sessionId`): an envelope naming another is not this session's.
    /// `None`: any.
    address: Option<String>,
    /// The read in flight, if any (one at a time: the state, or the events stream).
    reading: Option<Read>,
    /// A read to ask for at this time (a backoff), or at once (`Some(0)`).
    due: Option<(u64, Read)>,
    /// Failed attempts since the last connect or heartbeat.
    attempt: u32,
    /// Heartbeat frames read, over the link's life.
    heartbeats: u64,
    /// Recoveries since the last quiet time (see the module doc).
    strikes: u32,
    /// When the last recovery began.
    trouble_at: Option<u64>,
    /// The highest seq a recovery was for (a gap's end, the cursor a range error or a failed
    /// state read met): an event applied past it shows the recovery worked.
    mark: u64,
    /// The error [`LinkNote::Unreachable`] gave, until a connect.
    unreachable: Option<ChatError>,
    /// The error [`LinkNote::GaveUp`] gave, until the link is opened again.
    gave_up: Option<ChatError>,
    hydrated: bool,
    stopped: bool,
    /// The state is read because the server said the cursor is out of range: a lower seq is
    /// taken.
    rewind: bool,
    /// The state moved while a read of it was in flight: read it once more after that one.
    read_again: bool,
}

impl Default for NativeLink {
    fn default() -> Self {
        NativeLink::new()
    }
}

impl NativeLink {
    /// A link that has read nothing yet; [`open`](Self::open) starts it.
    pub fn new() -> Self {
        NativeLink::with_max_line_bytes(MAX_LINE_BYTES)
    }

    /// [`new`](Self::new), taking lines of at most `limit` bytes.
    pub fn with_max_line_bytes(limit: usize) -> Self {
        NativeLink {
            gate: NativeGate::new(),
            decoder: NdjsonDecoder::new(limit),
            max_line: limit,
            address: None,
            reading: None,
            due: None,
            attempt: 0,
            heartbeats: 0,
            strikes: 0,
            trouble_at: None,
            mark: 0,
            unreachable: None,
            gave_up: None,
            hydrated: false,
            stopped: false,
            rewind: false,
            read_again: false,
        }
    }

    /// Heartbeat frames read so far (the store's watchdog tells beats by their count).
    pub fn heartbeats(&self) -> u64 {
        self.heartbeats
    }

    /// The session followed: events addressed to another are dropped.
    pub fn address(&mut self, session_id: &str) {
        if self.address.as_deref() != Some(session_id) {
            self.address = Some(session_id.to_string());
        }
    }

    /// The gate: cursor, queue, run status.
    pub fn gate(&self) -> &NativeGate {
        &self.gate
    }

    /// The gate, for the store's own moves (a stop).
    pub fn gate_mut(&mut self) -> &mut NativeGate {
        &mut self.gate
    }

    /// The state was read at least once.
    pub fn hydrated(&self) -> bool {
        self.hydrated
    }

    /// The events stream is open (its answer began).
    pub fn reading(&self) -> Option<Read> {
        self.reading
    }

    /// Starts following: the state first. Strikes start over; the error the link gave up
    /// with, if it did, is given back (it no longer holds).
    pub fn open(&mut self) -> Option<ChatError> {
        // A read in flight when the session was left was aborted with it.
        self.reading = None;
        self.stopped = false;
        self.read_again = false;
        self.due = Some((0, Read::State));
        self.strikes = 0;
        self.trouble_at = None;
        self.gave_up.take()
    }

    /// Reads the state again now (the store learned the session moved on without the
    /// events saying so yet); the read in flight is given up.
    ///
    /// A state read already in flight is kept, and one more follows its answer (it may have
    /// left before the move): however many moves come at once, two reads at most.
    pub fn reread(&mut self) {
        if self.stopped {
            return;
        }
        if self.reading == Some(Read::State) {
            self.read_again = true;
            return;
        }
        self.reading = None;
        self.due = Some((0, Read::State));
    }

    /// Stops following (a session switch, `dispose`): the store aborts the read in flight.
    pub fn close(&mut self) {
        self.stopped = true;
        self.reading = None;
        self.due = None;
    }

    /// The read to make now, if one is due; the store makes it and feeds its answer here.
    pub fn poll_ask(&mut self, now_ms: u64) -> Option<Ask> {
        if self.stopped || self.reading.is_some() {
            return None;
        }
        let (at, read) = self.due?;
        if at > now_ms {
            return None;
        }
        self.due = None;
        self.reading = Some(read);
        Some(match read {
            Read::State => Ask::State,
            Read::Events => {
                self.decoder = NdjsonDecoder::new(self.max_line);
                Ask::Events {
                    cursor: self.gate.seq(),
                }
            }
        })
    }

    /// When the next read is due, if one waits.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.due.map(|(at, _)| at).filter(|_| !self.stopped)
    }

    /// The session was reached: the events stream answered 2xx, or the state was read. The
    /// error of a [`LinkNote::Unreachable`] said before no longer holds and is given back.
    /// The events backoff starts over only with the first event or heartbeat read: a server
    /// that answers and ends at once is not reconnected every second forever.
    pub fn reached(&mut self) -> Option<ChatError> {
        self.unreachable.take()
    }

    /// The link stopped with a typed error ([`LinkNote::GaveUp`]): a user's send opens it
    /// again.
    pub fn gave_up(&self) -> bool {
        self.gave_up.is_some()
    }

    /// Bytes of the events stream; frames go through the gate into `conversation`.
    pub fn events_body(
        &mut self,
        conversation: &mut Conversation,
        bytes: &[u8],
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading != Some(Read::Events) {
            return;
        }
        let mut lines = Vec::new();
        self.decoder.push(bytes, &mut lines);
        self.take_lines(conversation, lines, now_ms, rng, out);
    }

    /// An event past the last recovery's mark was applied: the recovery worked.
    fn worked(&mut self) {
        self.strikes = 0;
        self.trouble_at = None;
    }

    /// Counts a recovery: whether the link may go on (else it gave up with `error`).
    fn strike(&mut self, error: &ChatError, now_ms: u64, out: &mut Vec<LinkNote>) -> bool {
        self.mark = self.mark.max(self.gate.seq());
        if self
            .trouble_at
            .is_some_and(|t| now_ms.saturating_sub(t) >= QUIET_MS)
        {
            self.strikes = 0;
        }
        self.trouble_at = Some(now_ms);
        self.strikes += 1;
        if self.strikes > MAX_STRIKES {
            self.give_up(error.clone(), out);
            return false;
        }
        true
    }

    /// Reads the state again: at once the first time, after the backoff of its rank after.
    fn recover(
        &mut self,
        error: ChatError,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        self.reading = None;
        if !self.strike(&error, now_ms, out) {
            return;
        }
        // From the second on, the backoff of its rank from 2 s: with the stream's own
        // connect before it, never more than three reads within a second.
        let delay = match self.strikes {
            1 => 0,
            n => backoff_ms(n - 1, rng.unit()),
        };
        self.due = Some((now_ms + delay, Read::State));
        out.push(LinkNote::Retrying(error.message));
    }

    /// Stops following, with `error` for the store to show.
    fn give_up(&mut self, mut error: ChatError, out: &mut Vec<LinkNote>) {
        self.close();
        error.message = format!(
            "the session cannot be followed: {} (reopen the session to try again)",
            error.message
        );
        self.gave_up = Some(error.clone());
        out.push(LinkNote::GaveUp(error));
    }

    /// The read's answer ended: its status, and its whole body for a non-2xx or the state
    /// (status 0: the store could not keep the answer, larger than `limits.maxBodyBytes`).
    pub fn answer_end(
        &mut self,
        conversation: &mut Conversation,
        read: Read,
        (status, body): (u16, &[u8]),
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading != Some(read) {
            return;
        }
        let ok = (200..300).contains(&status);
        if status == 404 && ChatError::from_http(404, body).says(NOT_FOUND) {
            self.close();
            self.hydrated = true;
            out.push(LinkNote::Missing);
            return;
        }
        match read {
            Read::State if ok => {
                let doc = read_state(body);
                match doc {
                    Ok(doc) => {
                        let rewind = std::mem::take(&mut self.rewind);
                        if !self.gate.apply_state(conversation, doc, rewind) {
                            out.push(LinkNote::Effect(NativeEffect::Diagnostic(
                                "a state older than the events applied was ignored".into(),
                            )));
                        }
                        self.hydrated = true;
                        self.reading = None;
                        let next = match std::mem::take(&mut self.read_again) {
                            true => Read::State,
                            false => Read::Events,
                        };
                        self.due = Some((now_ms, next));
                        out.push(LinkNote::Hydrated);
                    }
                    Err(e) => {
                        self.close();
                        out.push(LinkNote::Refused(format!(
                            "the session state is unusable: {e}"
                        )));
                    }
                }
            }
            Read::State if status == 0 => {
                let mut error = ChatError::protocol(
                    "the session state is larger than limits.maxBodyBytes".to_string(),
                );
                error.field = Some("limits.maxBodyBytes".into());
                self.give_up(error, out);
            }
            Read::State => {
                let mut error = ChatError::from_http(status, body);
                error.message = format!("the state read answered {status}: {}", error.message);
                self.retry(Read::State, error, now_ms, rng, out)
            }
            Read::Events if !ok && classify_events_error(status, body).is_some() => {
                // The server says the cursor does not fit it: its state is taken whatever
                // its seq (upstream rewinds for `CURSOR_AHEAD` only; a state ignored after a
                // `REPLAY_GAP` would only bring the same answer again, at once).
                self.rewind = true;
                let why = format!(
                    "the events cursor is out of range ({status}): reading the state again"
                );
                let mut error = ChatError::from_http(status, body);
                error.message = why;
                self.recover(error, now_ms, rng, out);
            }
            Read::Events => {
                if ok {
                    let mut lines = Vec::new();
                    self.decoder.finish(&mut lines);
                    self.take_lines(conversation, lines, now_ms, rng, out);
                    if self.reading != Some(Read::Events) {
                        return;
                    }
                }
                let error = match ok {
                    true => ChatError::network("the events stream ended"),
                    false => {
                        let mut e = ChatError::from_http(status, body);
                        e.message = format!("the events stream answered {status}: {}", e.message);
                        e
                    }
                };
                self.retry(Read::Events, error, now_ms, rng, out);
            }
        }
    }

    /// The read failed without an answer (network error, timeout).
    pub fn failed(
        &mut self,
        read: Read,
        message: &str,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading == Some(read) {
            self.retry(read, ChatError::network(message), now_ms, rng, out);
        }
    }

    /// Tries `read` again after the reference's backoff: `d = min(30 s, 1 s·2^attempt)`,
    /// `round(min(30 s, d·(1−j) + r·2·d·j))` with `j = 0.25`. A hydrated session reconnects
    /// its events from the cursor without reading the state. A state read is a strike.
    fn retry(
        &mut self,
        read: Read,
        error: ChatError,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        self.reading = None;
        let read = if self.hydrated { read } else { Read::State };
        if read == Read::State && !self.strike(&error, now_ms, out) {
            return;
        }
        self.due = Some((now_ms + backoff_ms(self.attempt, rng.unit()), read));
        self.attempt = self.attempt.saturating_add(1);
        let say = match read {
            Read::Events => self.attempt >= UNREACHABLE_AFTER,
            Read::State => !self.hydrated,
        };
        if say && self.unreachable.is_none() {
            let what = match read {
                Read::Events => "the events stream",
                Read::State => "the session state",
            };
            let mut e = error.clone();
            e.message = format!(
                "{what} failed {} time(s) in a row (still trying): {}",
                self.attempt, error.message
            );
            self.unreachable = Some(e.clone());
            out.push(LinkNote::Unreachable(e));
        }
        out.push(LinkNote::Retrying(error.message));
    }
}

/// The reconnect delay after `attempt` failures, `r` in `[0, 1)`.
pub fn backoff_ms(attempt: u32, r: f64) -> u64 {
    const CAP: f64 = 30_000.0;
    const J: f64 = 0.25;
    let d = (1000.0 * 2f64.powi(attempt.min(16) as i32)).min(CAP);
    (d * (1.0 - J) + r * 2.0 * d * J).min(CAP).round() as u64
}

pub mod commands;
