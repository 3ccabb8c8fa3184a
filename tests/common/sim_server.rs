//! A simulated agent server (first written for `tests/fault_schedules.rs`): it keeps SPEC §2's
//! follow-up idempotency rules (accepted nonces, deleted nonces and seqs, out-of-order seqs, a
//! "not ready" window), runs pi turns whose events it buffers for resumes by cursor, and lets
//! a running turn consume the accepted follow-ups in arrival order before it ends. It does no
//! IO and keeps no clock: a test hands it each request as it reaches the server (`chat`,
//! `resume`, `followup`, `delete_followup`), advances its turns with `tick`, and carries what it
//! answers (`Resp`) and what its connections (`conns`) stream back to a `Harness`.
//!
//! With `native` set it speaks the pi-native protocol instead (SPEC §14, see
//! `tests/fault_schedules_native.rs`): the same turns and follow-up queue, their events in one
//! session-wide NDJSON log, and the routes `state`, `events`, `prompt`, `followup`,
//! `queue/clear` and `stop` at the end of this file.
//!
//! What it committed (`commits`) and every follow-up POST it saw (`posts`) are kept for the
//! test's invariants.

use std::collections::{HashMap, HashSet, VecDeque};

use agent_chat_store::RequestId;
use serde_json::{json, Value};

// ===== a small PRNG (xorshift64*) ==========================================================

pub struct Prng(u64);

impl Prng {
    pub fn new(seed: u64) -> Prng {
        // splitmix64 of the seed, so that neighbouring seeds start far apart.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Prng((z ^ (z >> 31)) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// An index picked by weight.
    pub fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut r = self.below(total.max(1));
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

// ===== the simulated server =================================================================

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    Chat,
    FollowUp(String),
}

/// A user message the server committed to its history.
#[derive(Debug, Clone)]
pub struct Commit {
    pub session: String,
    pub text: String,
    pub via: Via,
}

/// A follow-up POST as the server saw it.
#[derive(Debug, Clone)]
pub struct PostSeen {
    pub session: String,
    pub text: String,
    pub nonce: String,
    pub seq: u64,
    pub answer: String,
}

pub struct Turn {
    pub id: String,
    /// Each event's data (`[DONE]` included), in order; the resume cursor indexes it.
    pub events: Vec<String>,
    pub seq: u64,
    pub done: bool,
    /// The assistant message being written: its id and text so far.
    pub assistant: Option<(String, String)>,
    pub words_left: u64,
}

#[derive(Default)]
pub struct SrvSession {
    pub canonical: Vec<Value>,
    pub last_seq: Option<u64>,
    /// Accepted nonces and their seqs.
    pub accepted: HashMap<String, u64>,
    pub deleted_nonces: HashSet<String>,
    pub deleted_seqs: HashSet<u64>,
    /// Nonces of follow-ups that ran.
    pub consumed: HashSet<String>,
    /// Accepted while a turn ran, not consumed yet: (nonce, seq, text), arrival order.
    pub pending: VecDeque<(String, u64, String)>,
    pub turns: Vec<Turn>,
    pub not_ready_until: u64,
    /// pi-native: the session's events stream, one NDJSON line (`{ref, seq, event}`) per
    /// event, each under the next session-wide seq, and (with [`Hostile`]) the bad lines put
    /// between them; a connection's place in it is an index.
    pub log: Vec<LogLine>,
    /// pi-native: the latest seq an event took.
    pub seq: u64,
    /// pi-native with [`Hostile`]: `/state` answers that failed (500) in a row.
    pub state_failures: u32,
    /// pi-native: the settled messages `GET …/state` lists, in the protocol's shape.
    pub state_msgs: Vec<Value>,
    /// pi-native: the request ledger, `operation:requestId` → (the command, its receipt).
    pub ledger: HashMap<String, (Value, Value)>,
    /// pi-native: the nonces pi's queue adapter has seen (it ignores a second enqueue of one,
    /// and forgets them when an explicit clear empties the queue).
    pub seen_nonces: HashSet<String>,
    /// pi-native: the seq of each `state_msgs` entry's `message-start` (its `createdAt`, for
    /// the reconciler).
    pub state_at: Vec<u64>,
    /// pi-native with [`LiveFacts::selectors_by_text`]: what the server remembers of accepted
    /// prompts and follow-ups, to attach their selectors by text.
    pub rec: Reconciler,
}

impl SrvSession {
    pub fn active_turn(&mut self) -> Option<&mut Turn> {
        self.turns.last_mut().filter(|t| !t.done)
    }
}

/// A live SSE connection: the server writes the turn's events into it from `pos` on.
pub struct Conn {
    pub page: u32,
    pub req: RequestId,
    pub session: String,
    pub turn: usize,
    pub pos: usize,
    pub open: bool,
    pub head_sent: bool,
}

#[derive(Default)]
pub struct Server {
    pub sessions: HashMap<String, SrvSession>,
    pub commits: Vec<Commit>,
    pub posts: Vec<PostSeen>,
    pub conns: Vec<Conn>,
    /// The real server's queue (SPEC §6): a follow-up accepted while no turn runs is kept and
    /// runs after the next prompt, as one accepted after pi's last poll of a turn does.
    pub keep_idle_followups: bool,
    /// A DELETE of a follow-up that already ran is answered 409 `followup_already_started`
    /// (the reference server); otherwise 204, as the real server answers every DELETE.
    pub says_started: bool,
    pub next_id: u64,
    /// The server speaks the pi-native protocol (SPEC §14) instead of the first transport.
    pub native: bool,
    /// pi-native: how many events the replay buffer keeps (`None`: all of them).
    pub replay_window: Option<usize>,
    /// pi-native: the real server's ways where it differs from the written protocol (all off:
    /// the protocol as written).
    pub live: LiveFacts,
    /// pi-native: what the server did, by kind (the coverage the test reports).
    pub stats: std::collections::BTreeMap<&'static str, u64>,
    /// pi-native: how often a clear of the whole queue removed each nonce (the store posts
    /// the items of its own such a clear took along again, under a fresh `clientSeq`).
    pub cleared_by_all: HashMap<String, u32>,
    /// pi-native: the events stream carries bad lines and `/state` fails now and then.
    pub hostile: Option<Hostile>,
    /// pi-native: where each events connection began in its session's log, in the order of
    /// `conns` (the lines a connection carried are `start..conn.pos`).
    pub events_served: Vec<usize>,
}

/// One line of a session's events stream (pi-native).
#[derive(Debug, Clone)]
pub struct LogLine {
    /// The line, without its newline (not UTF-8 for one kind of bad line).
    pub bytes: Vec<u8>,
    /// The seq the line takes (a real event's, or a bad line's that takes one: an unknown
    /// type, an oversize line); `None`: the cursor cannot move past it.
    pub seq: Option<u64>,
    /// What bad line it is, if one.
    pub bad: Option<BadLine>,
}

impl LogLine {
    /// The line as the stream writes it.
    pub fn wire(&self) -> Vec<u8> {
        let mut b = self.bytes.clone();
        b.push(b'\n');
        b
    }

    /// The line as text, for the schedule's log.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// The kinds of bad line the hostile server writes between events (SPEC §10, §14; the rules
/// are `src/machines/native_link.rs`'s module doc). Those without a usable seq take none, so the seq
/// of the next real event stays the next one; an unknown type and an oversize line take the
/// seq a real event would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BadLine {
    /// A well-formed event whose envelope's `ref.sessionId` names another session, with the
    /// seq the next real event gets (dropped without taking it).
    Elsewhere,
    /// A heartbeat after a byte order mark (read as a heartbeat: no loss).
    BomHeartbeat,
    /// A plain heartbeat between events (no loss).
    Heartbeat,
    /// An envelope whose seq (and its event's) is a string.
    StringSeq,
    /// An envelope whose seq differs from its event's.
    SeqMismatch,
    /// Not JSON.
    Garbage,
    /// A heartbeat followed by garbage on the same line.
    TrailingGarbage,
    /// A line that is not UTF-8 (no seq in it).
    NotUtf8,
    /// An event of a type the protocol does not have (takes a seq).
    UnknownType,
    /// An unknown event padded over the page's `limits.maxEventBytes` (takes a seq; its
    /// head, first on the line, says so).
    Oversize,
}

impl BadLine {
    /// The store records it as a loss (a heartbeat is none).
    pub fn is_loss(self) -> bool {
        !matches!(self, BadLine::BomHeartbeat | BadLine::Heartbeat)
    }

    /// It takes a seq (the cursor moves past it).
    pub fn takes_seq(self) -> bool {
        matches!(self, BadLine::UnknownType | BadLine::Oversize)
    }
}

/// The hostile-input fault class of the pi-native schedules.
pub struct Hostile {
    /// Its own draws, so that the world's stay as they were.
    pub rng: Prng,
    /// How often (percent) a bad line comes before an event.
    pub percent: u64,
    /// The page's `limits.maxEventBytes` (no real line comes near it).
    pub max_event_bytes: usize,
    /// `/state` answers 500 this often (percent), at most [`Hostile::MAX_STATE_FAILURES`] times in a row.
    pub state_500_percent: u64,
    /// How many of each kind were written.
    pub written: std::collections::BTreeMap<BadLine, u64>,
}

impl Hostile {
    /// Failed `/state` answers in a row at most (the link gives up after 7 failed reads).
    pub const MAX_STATE_FAILURES: u32 = 2;

    pub fn new(seed: u64, max_event_bytes: usize) -> Hostile {
        let mut rng = Prng::new(seed ^ 0x0048_5449_4c45);
        let percent = rng.range(5, 25);
        let state_500_percent = rng.range(0, 20);
        Hostile {
            rng,
            percent,
            max_event_bytes,
            state_500_percent,
            written: Default::default(),
        }
    }
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Resp {
    Http(u16, Vec<u8>),
    Stream(usize),
    NetFail(&'static str),
}

pub fn error_body(code: &str, message: &str) -> Vec<u8> {
    json!({"error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// `/api/v1/agent/chat/{S}/…` → S.
pub fn path_session(path: &str) -> String {
    let rest = path
        .strip_prefix("/api/v1/agent/chat/")
        .unwrap_or_else(|| panic!("unexpected path {path}"));
    rest.split('/').next().unwrap().to_string()
}

pub fn query(path: &str, key: &str) -> Option<String> {
    let q = path.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        kv.split_once('=')
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
    })
}

impl Server {
    pub fn session(&mut self, s: &str) -> &mut SrvSession {
        self.sessions.entry(s.to_string()).or_default()
    }

    fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id)
    }

    /// Appends a pi event (with the next seq unless `seq` is false) to the running turn.
    fn emit(&mut self, session: &str, ty: &str, mut data: Value, seq: bool) {
        let turn = self.session(session).active_turn().expect("a running turn");
        if seq {
            turn.seq += 1;
            data["seq"] = json!(turn.seq);
        }
        turn.events
            .push(json!({"type": ty, "data": data}).to_string());
    }

    /// Appends a pi-native event to the session's log under the next session-wide seq, in its
    /// `{ref, seq, event}` envelope (one NDJSON line).
    fn nemit(&mut self, session: &str, mut event: Value) {
        self.maybe_bad_line(session);
        let s = self.session(session);
        s.seq += 1;
        let seq = s.seq;
        event["seq"] = json!(seq);
        let envelope = json!({
            "ref": {"agentTypeId": NATIVE_AGENT, "sessionId": session},
            "seq": seq,
            "event": event,
        });
        let mut bytes = envelope.to_string().into_bytes();
        if let Some(h) = &self.hostile {
            assert!(
                bytes.len() < h.max_event_bytes,
                "a real event line over the hostile seed's limit: {} bytes",
                bytes.len()
            );
        }
        // A byte order mark before a real event: read as the event (no loss).
        if self.hostile.as_mut().is_some_and(|h| h.rng.chance(3)) {
            bytes.splice(0..0, "\u{feff}".bytes());
            self.count("hostile: a byte order mark before an event");
        }
        self.session(session).log.push(LogLine {
            bytes,
            seq: Some(seq),
            bad: None,
        });
    }

    /// With [`Hostile`], sometimes a bad line before the next event.
    fn maybe_bad_line(&mut self, session: &str) {
        let Some(h) = &mut self.hostile else {
            return;
        };
        if !h.rng.chance(h.percent) {
            return;
        }
        use BadLine::*;
        let kind = [
            Elsewhere,
            BomHeartbeat,
            Heartbeat,
            StringSeq,
            SeqMismatch,
            Garbage,
            TrailingGarbage,
            NotUtf8,
            UnknownType,
            Oversize,
        ][h.rng.weighted(&[4, 2, 2, 3, 3, 2, 2, 2, 4, 2])];
        let pad_to = h.max_event_bytes + h.rng.range(1, 3 * h.max_event_bytes as u64) as usize;
        *h.written.entry(kind).or_default() += 1;
        let s = self.session(session);
        let next = s.seq + 1;
        let at = json!({"agentTypeId": NATIVE_AGENT, "sessionId": session});
        let sample = |seq: Value| json!({"type": "telemetry-sample", "seq": seq, "tokens": 7});
        let hb = r#"{"type":"heartbeat","now":"2026-01-01T00:00:00.000Z"}"#;
        let (bytes, seq): (Vec<u8>, Option<u64>) = match kind {
            Elsewhere => {
                let other =
                    json!({"agentTypeId": NATIVE_AGENT, "sessionId": format!("{session}-other")});
                let ev = json!({"type": "message-delta", "messageId": "elsewhere", "partId": "0",
                    "kind": "text", "delta": "not here ", "seq": next});
                let line = json!({"ref": other, "seq": next, "event": ev});
                (line.to_string().into_bytes(), None)
            }
            BomHeartbeat => (format!("\u{feff}{hb}").into_bytes(), None),
            Heartbeat => (hb.as_bytes().to_vec(), None),
            StringSeq => {
                let q = json!(next.to_string());
                let line = json!({"ref": at, "seq": q, "event": sample(q.clone())});
                (line.to_string().into_bytes(), None)
            }
            SeqMismatch => {
                let line = json!({"ref": at, "seq": next, "event": sample(json!(next + 1))});
                (line.to_string().into_bytes(), None)
            }
            Garbage => (b"<html>502 Bad Gateway</html>".to_vec(), None),
            TrailingGarbage => (format!("{hb} }}garbage").into_bytes(), None),
            NotUtf8 => {
                let mut b = br#"{"type":"telemetry-sample","note":""#.to_vec();
                b.extend_from_slice(&[0xff, 0xfe, 0xc3]);
                b.extend_from_slice(br#""}"#);
                (b, None)
            }
            UnknownType => {
                let line = json!({"ref": at, "seq": next, "event": sample(json!(next))});
                (line.to_string().into_bytes(), Some(next))
            }
            Oversize => {
                // Written by hand: the seqs first, where the line's head has them.
                let head = format!(
                    r#"{{"ref":{at},"seq":{next},"event":{{"type":"telemetry-sample","seq":{next},"pad":""#
                );
                let mut b = head.into_bytes();
                b.resize(pad_to, b'x');
                b.extend_from_slice(br#""}}"#);
                (b, Some(next))
            }
        };
        let s = self.session(session);
        if let Some(q) = seq {
            s.seq = q;
        }
        s.log.push(LogLine {
            bytes,
            seq,
            bad: Some(kind),
        });
    }

    /// Counts something the native server did (the coverage the test reports).
    pub fn count(&mut self, what: &'static str) {
        *self.stats.entry(what).or_default() += 1;
    }

    fn start_assistant(&mut self, session: &str, rng: &mut Prng) {
        let id = self.id("a");
        if self.native {
            self.nemit(
                session,
                json!({"type": "message-start", "messageId": id, "role": "assistant"}),
            );
        } else {
            self.emit(
                session,
                "data-pi-message-start",
                json!({"messageId": id, "role": "assistant"}),
                true,
            );
            self.emit(
                session,
                "data-pi-text-start",
                json!({"messageId": id, "partId": "0"}),
                true,
            );
        }
        let turn = self.session(session).active_turn().unwrap();
        turn.assistant = Some((id, String::new()));
        turn.words_left = rng.range(1, 3);
    }

    /// A user message of the running turn: a prompt's (its `clientNonce`, over the native
    /// protocol), or a follow-up's (its nonce and seq).
    fn user_message(
        &mut self,
        session: &str,
        uid: &str,
        text: &str,
        nonce: Option<&str>,
        seq: Option<u64>,
    ) {
        if self.native {
            return self.native_user_message(session, uid, text, nonce, seq);
        }
        let mut start = json!({"messageId": uid, "role": "user", "text": text});
        if let (Some(n), Some(_)) = (nonce, seq) {
            start["clientNonce"] = json!(n);
        }
        self.emit(session, "data-pi-message-start", start, true);
        self.emit(
            session,
            "data-pi-message-end",
            json!({"messageId": uid, "role": "user", "text": text}),
            true,
        );
    }

    fn commit_user(&mut self, session: &str, id: &str, text: &str, via: Via) {
        let part = match self.native {
            // The store reads the protocol's text parts as settled ones.
            true => json!({"type": "text", "text": text, "state": "done"}),
            false => json!({"type": "text", "text": text}),
        };
        self.session(session)
            .canonical
            .push(json!({"id": id, "role": "user", "parts": [part]}));
        self.commits.push(Commit {
            session: session.to_string(),
            text: text.to_string(),
            via,
        });
    }

    /// The assistant message `id` is over (`status`: done, or aborted by a stop): the
    /// canonical history has it.
    fn end_assistant(&mut self, session: &str, id: &str, text: &str, status: &str) {
        if self.native {
            let parts = match text.is_empty() {
                true => json!([]),
                false => json!([{"type": "text", "id": format!("{id}:text:0"), "text": text}]),
            };
            if !text.is_empty() {
                self.nemit(
                    session,
                    json!({"type": "message-part-end", "messageId": id, "partId": "0", "kind": "text", "text": text}),
                );
            }
            let fin = json!({"id": id, "role": "assistant", "status": status, "parts": parts});
            self.nemit(
                session,
                json!({"type": "message-end", "messageId": id, "final": fin.clone()}),
            );
            let at = self.latest(session);
            let s = self.session(session);
            s.state_msgs.push(fin);
            s.state_at.push(at);
        } else {
            self.emit(
                session,
                "data-pi-text-end",
                json!({"messageId": id, "partId": "0", "text": text}),
                true,
            );
            self.emit(
                session,
                "data-pi-message-end",
                json!({"messageId": id, "role": "assistant", "text": text}),
                true,
            );
        }
        let parts = match text.is_empty() {
            true => json!([]),
            false => json!([{"type": "text", "text": text, "state": "done"}]),
        };
        self.session(session)
            .canonical
            .push(json!({"id": id, "role": "assistant", "parts": parts}));
    }

    pub fn chat(&mut self, session: &str, text: &str, rng: &mut Prng) -> Result<usize, Resp> {
        if self.session(session).active_turn().is_some() {
            return Err(Resp::Http(
                409,
                error_body("conflict", "turn_already_active"),
            ));
        }
        Ok(self.start_turn(session, text, None, rng))
    }

    /// A run begins with the user message `text` (a native prompt's has its `clientNonce`).
    fn start_turn(
        &mut self,
        session: &str,
        text: &str,
        nonce: Option<&str>,
        rng: &mut Prng,
    ) -> usize {
        let turn_index = self.begin_run(session);
        let uid = self.id("u");
        self.user_message(session, &uid, text, nonce, None);
        self.commit_user(session, &uid, text, Via::Chat);
        self.start_assistant(session, rng);
        turn_index
    }

    /// A new run of `session`, announced as the protocol does; its index.
    fn begin_run(&mut self, session: &str) -> usize {
        let turn_id = self.id("turn-");
        let s = self.session(session);
        s.turns.push(Turn {
            id: turn_id.clone(),
            events: Vec::new(),
            seq: 0,
            done: false,
            assistant: None,
            words_left: 0,
        });
        let turn_index = s.turns.len() - 1;
        if self.native {
            self.nemit(session, json!({"type": "agent-start", "turnId": turn_id}));
        } else {
            self.emit(
                session,
                "data-turn-start",
                json!({"turnId": turn_id}),
                false,
            );
            self.emit(session, "data-pi-agent-start", json!({}), true);
        }
        turn_index
    }

    /// One step of a running turn. Returns whether anything was emitted.
    pub fn tick(&mut self, session: &str, rng: &mut Prng) -> bool {
        let native = self.native;
        let Some(turn) = self.session(session).active_turn() else {
            return false;
        };
        match turn.assistant.clone() {
            Some((id, mut text)) if turn.words_left > 0 => {
                let word = format!("w{} ", turn.seq + 1);
                text.push_str(&word);
                turn.words_left -= 1;
                turn.assistant = Some((id.clone(), text));
                if native {
                    turn.seq += 1;
                    self.nemit(
                        session,
                        json!({"type": "message-delta", "messageId": id, "partId": "0", "kind": "text", "delta": word}),
                    );
                } else {
                    self.emit(
                        session,
                        "data-pi-text-delta",
                        json!({"messageId": id, "partId": "0", "delta": word}),
                        true,
                    );
                }
            }
            Some((id, text)) => {
                turn.assistant = None;
                self.end_assistant(session, &id, &text, "done");
            }
            None => match self.session(session).pending.pop_front() {
                // The agent would stop: the next follow-up, in arrival order, runs first.
                Some(next) => self.run_follow_up(session, next, rng),
                None if native => {
                    let turn = self.session(session).active_turn().unwrap();
                    let turn_id = turn.id.clone();
                    turn.done = true;
                    self.nemit(
                        session,
                        json!({"type": "agent-end", "turnId": turn_id, "status": "ok"}),
                    );
                }
                None => {
                    self.emit(session, "data-pi-agent-end", json!({}), true);
                    let turn = self.session(session).active_turn().unwrap();
                    turn.events.push("[DONE]".into());
                    turn.done = true;
                }
            },
        }
        true
    }
    /// `GET …/stream?cursor=C`: the latest turn's events after C, then live.
    pub fn resume(&mut self, session: &str, cursor: &str) -> Result<usize, Resp> {
        let s = self.session(session);
        let Some(turn) = s.turns.last() else {
            return Err(Resp::Http(204, Vec::new()));
        };
        let Ok(c) = cursor.parse::<i64>() else {
            return Err(Resp::Http(
                400,
                error_body("validation_error", "cursor must be an integer >= -1"),
            ));
        };
        let pos = (c + 1).max(0) as usize;
        if pos > turn.events.len() {
            return Err(Resp::Http(
                416,
                error_body("range_not_satisfiable", "Cursor outside buffer range"),
            ));
        }
        if turn.done && pos == turn.events.len() {
            return Err(Resp::Http(204, Vec::new()));
        }
        Ok(pos)
    }

    /// SPEC §2's follow-up idempotency rules.
    pub fn followup(&mut self, session: &str, body: &Value, now: u64) -> (u16, Vec<u8>) {
        let text = body["message"].as_str().unwrap_or_default().to_string();
        let seq = body["clientSeq"].as_u64().expect("clientSeq");
        let nonce = body["clientNonce"]
            .as_str()
            .expect("clientNonce")
            .to_string();
        let keep_idle = self.keep_idle_followups;
        let s = self.session(session);
        let (status, answer, body): (u16, &str, Vec<u8>) = if now < s.not_ready_until {
            (
                409,
                "not-ready",
                error_body("conflict", "followup_session_not_ready"),
            )
        } else if s.deleted_nonces.contains(&nonce) || s.deleted_seqs.contains(&seq) {
            (
                202,
                "deleted",
                json!({"queued": false, "deleted": true})
                    .to_string()
                    .into_bytes(),
            )
        } else if s.accepted.contains_key(&nonce) {
            (
                202,
                "duplicate",
                json!({"queued": true, "duplicate": true})
                    .to_string()
                    .into_bytes(),
            )
        } else if s.last_seq.is_some_and(|l| seq <= l) {
            (
                409,
                "out-of-order",
                error_body("conflict", "followup_out_of_order"),
            )
        } else {
            s.last_seq = Some(seq);
            s.accepted.insert(nonce.clone(), seq);
            let running = s.active_turn().is_some();
            if running || keep_idle {
                s.pending.push_back((nonce.clone(), seq, text.clone()));
            }
            (
                202,
                if running { "accepted" } else { "accepted-idle" },
                json!({"queued": true}).to_string().into_bytes(),
            )
        };
        self.posts.push(PostSeen {
            session: session.to_string(),
            text,
            nonce,
            seq,
            answer: answer.to_string(),
        });
        (status, body)
    }

    pub fn delete_followup(&mut self, session: &str, path: &str) -> (u16, Vec<u8>) {
        let nonce = query(path, "clientNonce").expect("clientNonce");
        let seq: u64 = query(path, "clientSeq").unwrap().parse().unwrap();
        let says_started = self.says_started;
        let s = self.session(session);
        if says_started && s.consumed.contains(&nonce) {
            return (409, error_body("conflict", "followup_already_started"));
        }
        s.deleted_nonces.insert(nonce.clone());
        s.deleted_seqs.insert(seq);
        s.pending.retain(|(n, q, _)| *n != nonce && *q != seq);
        (204, Vec::new())
    }

    pub fn running(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.turns.last().is_some_and(|t| !t.done))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }
}

// ===== the pi-native protocol (reference/pi-native-protocol.md) ==============================

/// The agent type the native pages address.
pub const NATIVE_AGENT: &str = "pi";

/// `/api/v1/agents/pi/sessions/{S}/…` → S.
pub fn native_path_session(path: &str) -> String {
    let rest = path
        .strip_prefix("/api/v1/agents/pi/sessions/")
        .unwrap_or_else(|| panic!("unexpected path {path}"));
    rest.split(['/', '?']).next().unwrap().to_string()
}

/// A gateway error answer (`{"error":{"code","message","details"?}}`).
fn gateway_error(code: &str, message: &str, details: Option<Value>) -> Vec<u8> {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = details {
        e["details"] = d;
    }
    json!({ "error": e }).to_string().into_bytes()
}

impl Server {
    fn latest(&mut self, session: &str) -> u64 {
        self.session(session).seq
    }

    /// pi's follow-up queue as the protocol shows it: positional ids and each row's
    /// selectors, the ones it was posted with, or (`selectors_by_text`) the ones the
    /// reconciler recovers, which re-syncs its memory to them as every reading does upstream.
    fn queue_rows(&mut self, session: &str) -> Vec<Value> {
        let by_text = self.live.selectors_by_text;
        let at = self.latest(session);
        let s = self.session(session);
        let rows: Vec<(String, Option<String>, Option<u64>)> = match by_text {
            false => (s.pending.iter())
                .map(|(n, q, t)| (t.clone(), Some(n.clone()), Some(*q)))
                .collect(),
            true => {
                let texts: Vec<String> = s.pending.iter().map(|(_, _, t)| t.clone()).collect();
                s.rec.enrich_queue(&texts, at)
            }
        };
        let rows: Vec<Value> = (rows.into_iter().enumerate())
            .map(|(i, (text, nonce, seq))| {
                let mut row = queue_row(session, i, &text);
                if let Some(n) = nonce {
                    row["clientNonce"] = json!(n);
                }
                if let Some(q) = seq {
                    row["clientSeq"] = json!(q);
                }
                row
            })
            .collect();
        if by_text {
            let pending: Vec<(String, u64)> = (self.session(session).pending.iter())
                .map(|(n, q, _)| (n.clone(), *q))
                .collect();
            for (row, (nonce, _)) in rows.iter().zip(&pending) {
                match row["clientNonce"].as_str() {
                    None => self.count("live: a queue row without selectors"),
                    Some(n) if n != nonce => {
                        self.count("live: a queue row with another's selectors")
                    }
                    Some(_) => {}
                }
            }
        }
        rows
    }

    /// pi's queue as the server reads it from pi: texts only (a stop's `clearedQueue` with
    /// `selectors_by_text`).
    fn raw_queue_rows(&mut self, session: &str) -> Vec<Value> {
        let s = self.session(session);
        (s.pending.iter().enumerate())
            .map(|(i, (_, _, text))| queue_row(session, i, text))
            .collect()
    }

    /// A user message of a run (its prompt's, `nonce` only, or a follow-up's, `nonce` and
    /// `seq`): `message-start` and `message-end` with their final, and the state's copy. As
    /// written, both carry the selectors it was sent with, and a follow-up's start is followed
    /// by `followup-consumed`; with `selectors_by_text`, pi's message has none and the
    /// reconciler attaches what it finds by text (maybe none, maybe another's), the state's
    /// copy keeps none; with `no_followup_consumed`, no `followup-consumed`.
    fn native_user_message(
        &mut self,
        session: &str,
        uid: &str,
        text: &str,
        nonce: Option<&str>,
        seq: Option<u64>,
    ) {
        let exact = nonce.map(|n| (n.to_string(), seq));
        let by_text = self.live.selectors_by_text;
        let start_seq = self.latest(session) + 1;
        let start_sel = match by_text {
            true => self.session(session).rec.find(text),
            false => exact.clone(),
        };
        if by_text && seq.is_some() {
            self.count(match &start_sel {
                None => "live: a run follow-up's message-start without selectors",
                Some((n, _)) if Some(n.as_str()) != nonce => {
                    "live: a run follow-up's message-start with another's selectors"
                }
                Some(_) => "live: a run follow-up's message-start with its selectors",
            });
        }
        let mut start =
            json!({"type": "message-start", "messageId": uid, "role": "user", "text": text});
        with_selectors(&mut start, start_sel.as_ref());
        if by_text {
            self.session(session)
                .rec
                .consume_start(text, start_sel.as_ref());
        }
        self.nemit(session, start);
        if let (Some(n), Some(q), false) = (nonce, seq, self.live.no_followup_consumed) {
            self.nemit(
                session,
                json!({"type": "followup-consumed", "messageId": uid, "clientNonce": n, "clientSeq": q}),
            );
        }
        let raw = json!({"id": uid, "role": "user", "status": "done",
            "parts": [{"type": "text", "text": text}]});
        let end_sel = match by_text {
            true => self.session(session).rec.find(text),
            false => exact.clone(),
        };
        let mut fin = raw.clone();
        with_selectors(&mut fin, end_sel.as_ref());
        if by_text {
            self.session(session)
                .rec
                .consume_end(text, end_sel.as_ref());
        }
        self.nemit(
            session,
            json!({"type": "message-end", "messageId": uid, "final": fin}),
        );
        let mut kept = raw;
        if !by_text {
            with_selectors(&mut kept, exact.as_ref());
        }
        let s = self.session(session);
        s.state_msgs.push(kept);
        s.state_at.push(start_seq);
    }

    /// The queued follow-up `(nonce, seq, text)` runs in the current run: consumed, its user
    /// message shown as the protocol shows it, then the answer.
    fn run_follow_up(&mut self, session: &str, next: (String, u64, String), rng: &mut Prng) {
        let (nonce, seq, text) = next;
        self.session(session).consumed.insert(nonce.clone());
        let uid = self.id("u");
        if self.native {
            self.native_run_follow_up(session, &uid, (&nonce, seq, &text), rng);
        } else {
            self.emit(
                session,
                "data-followup-consumed",
                json!({"clientNonce": nonce, "clientSeq": seq}),
                false,
            );
            self.user_message(session, &uid, &text, Some(&nonce), Some(seq));
        }
        self.commit_user(session, &uid, &text, Via::FollowUp(nonce));
        self.start_assistant(session, rng);
    }

    /// The running turn runs the follow-up `(nonce, seq, text)` next: pi's queue without it
    /// (`queue-updated`), then its user message. With `selectors_by_text` the two come in
    /// either order, as live: a queue read first makes the reconciler forget the follow-up
    /// (its message then has no selectors: a lone follow-up, live), one after lets its
    /// message find them (the first of three, live).
    fn native_run_follow_up(
        &mut self,
        session: &str,
        uid: &str,
        (nonce, seq, text): (&str, u64, &str),
        rng: &mut Prng,
    ) {
        let queue_first = !self.live.selectors_by_text || rng.chance(50);
        if queue_first {
            self.queue_updated(session);
        }
        self.native_user_message(session, uid, text, Some(nonce), Some(seq));
        if !queue_first {
            self.queue_updated(session);
        }
    }

    /// `queue-updated` with the whole queue.
    fn queue_updated(&mut self, session: &str) {
        let rows = self.queue_rows(session);
        self.nemit(
            session,
            json!({"type": "queue-updated", "queue": {"followUps": rows}}),
        );
    }

    /// A replay of a command the ledger has: the same command gets its first receipt again
    /// (`duplicate: true`), another one under the same requestId a 409.
    fn ledger_replay(&mut self, session: &str, key: &str, body: &Value) -> Option<(u16, Vec<u8>)> {
        let (first, receipt) = self.session(session).ledger.get(key)?.clone();
        if first != *body {
            self.count("requestId reused with another payload (409 AGENT_REQUEST_CONFLICT)");
            let msg = "requestId was already used with a different payload";
            return Some((409, gateway_error("AGENT_REQUEST_CONFLICT", msg, None)));
        }
        let mut r = receipt;
        r["duplicate"] = json!(true);
        Some((202, r.to_string().into_bytes()))
    }

    /// `GET …/state`: the session document (protocolVersion 1) at the latest seq.
    pub fn native_state(&mut self, session: &str) -> (u16, Vec<u8>) {
        if let Some(h) = &mut self.hostile {
            let fails = self.sessions.get(session).map_or(0, |s| s.state_failures);
            if fails < Hostile::MAX_STATE_FAILURES && h.rng.chance(h.state_500_percent) {
                self.session(session).state_failures += 1;
                self.count("hostile: state 500");
                let b = gateway_error("INTERNAL_ERROR", "state unavailable", None);
                return (500, b);
            }
        }
        self.session(session).state_failures = 0;
        self.count("state reads");
        let seq = self.latest(session);
        let by_text = self.live.selectors_by_text;
        let s = self.session(session);
        let mut messages = s.state_msgs.clone();
        if by_text {
            s.rec.enrich_messages(&mut messages, &s.state_at);
        }
        // Read after the messages, as upstream's snapshot does (its re-sync then).
        let rows = self.queue_rows(session);
        let s = self.session(session);
        let running = s.turns.last().filter(|t| !t.done);
        if let Some((id, text)) = running.and_then(|t| t.assistant.clone()) {
            let parts = match text.is_empty() {
                true => json!([]),
                false => json!([{"type": "text", "text": text}]),
            };
            messages.push(
                json!({"id": id, "role": "assistant", "status": "streaming", "parts": parts}),
            );
        }
        let mut state = json!({
            "protocolVersion": 1, "sessionId": session, "seq": seq,
            "status": if running.is_some() { "streaming" } else { "idle" },
            "messages": messages, "queue": {"followUps": rows},
            "followUpMode": "one-at-a-time",
        });
        if let Some(t) = running {
            state["activeTurnId"] = json!(t.id);
        }
        let doc = json!({"ref": {"agentTypeId": NATIVE_AGENT, "sessionId": session}, "seq": seq, "state": state});
        (200, doc.to_string().into_bytes())
    }

    /// `GET …/events?cursor=N`: the position in the log to stream from (then live), or the
    /// 409 of a cursor out of the replay window.
    pub fn native_events(&mut self, session: &str, cursor: Option<&str>) -> Result<usize, Resp> {
        let latest = self.latest(session);
        let cursor = match cursor.map(str::parse::<u64>) {
            None => latest, // no cursor: live only
            Some(Ok(c)) => c,
            Some(Err(_)) => {
                let d = json!({"field": "query.cursor"});
                let b = gateway_error("AGENT_COMMAND_INVALID_STATE", "cursor", Some(d));
                return Err(Resp::Http(400, b));
            }
        };
        let min_replay = self
            .replay_window
            .map_or(0, |w| latest.saturating_sub(w as u64));
        let details = json!({"latestSeq": latest, "minReplaySeq": min_replay});
        if cursor > latest {
            self.count("events: 409 AGENT_SESSION_CURSOR_AHEAD");
            let b = gateway_error("AGENT_SESSION_CURSOR_AHEAD", "cursor ahead", Some(details));
            return Err(Resp::Http(409, b));
        }
        if cursor < min_replay {
            self.count("events: 409 AGENT_SESSION_REPLAY_GAP");
            let b = gateway_error("AGENT_SESSION_REPLAY_GAP", "replay gap", Some(details));
            return Err(Resp::Http(409, b));
        }
        self.count("events connections");
        // The lines after the one that took the cursor's seq (bad lines without one included).
        let log = &self.session(session).log;
        let pos = match cursor {
            0 => 0,
            c => {
                1 + (log.iter())
                    .position(|l| l.seq == Some(c))
                    .expect("every seq up to the latest is in the log")
            }
        };
        self.events_served.push(pos);
        Ok(pos)
    }

    /// `POST …/prompt`: starts a run when none is on (its events come on the stream);
    /// idempotent by requestId; a refusal for state leaves the requestId usable.
    pub fn native_prompt(&mut self, session: &str, body: &Value, rng: &mut Prng) -> (u16, Vec<u8>) {
        let rid = body["requestId"].as_str().expect("requestId");
        let nonce = body["clientNonce"]
            .as_str()
            .expect("clientNonce")
            .to_string();
        let text = body["content"].as_str().expect("content").to_string();
        let key = format!("prompt:{rid}");
        if let Some(r) = self.ledger_replay(session, &key, body) {
            self.count("prompt: replay answered from the ledger");
            return r;
        }
        if self.session(session).active_turn().is_some() {
            self.count("prompt: 409 AGENT_COMMAND_INVALID_STATE (a run is on)");
            let b = gateway_error(
                "AGENT_COMMAND_INVALID_STATE",
                "prompt is invalid in current state",
                Some(json!({"status": "streaming"})),
            );
            return (409, b);
        }
        self.count("prompt: run started");
        let cursor = self.latest(session) + 1;
        (self.session(session).rec).record_prompt(&nonce, &text, cursor - 1);
        self.start_turn(session, &text, Some(&nonce), rng);
        let receipt = json!({"accepted": true, "cursor": cursor, "clientNonce": nonce, "disposition": "prompt"});
        (self.session(session).ledger).insert(key, (body.clone(), receipt.clone()));
        (202, receipt.to_string().into_bytes())
    }

    /// `POST …/followup`: appended to pi's queue whatever the session's state (no
    /// not-ready, out-of-order or deleted answers exist); idempotent by requestId.
    pub fn native_followup(&mut self, session: &str, body: &Value) -> (u16, Vec<u8>) {
        let rid = body["requestId"].as_str().expect("requestId");
        let nonce = body["clientNonce"]
            .as_str()
            .expect("clientNonce")
            .to_string();
        let seq = body["clientSeq"].as_u64().expect("clientSeq");
        let text = body["content"].as_str().expect("content").to_string();
        let key = format!("followup:{rid}");
        let (status, bytes, answer) = if let Some((st, b)) = self.ledger_replay(session, &key, body)
        {
            (st, b, if st == 202 { "duplicate" } else { "conflict" })
        } else {
            let running = self.session(session).active_turn().is_some();
            let requeue = self.live.nonce_requeue;
            let at = self.latest(session);
            let s = self.session(session);
            s.rec.record_follow_up(&nonce, seq, &text, at);
            let seen = !s.seen_nonces.insert(nonce.clone());
            if seen && requeue && s.pending.iter().any(|(n, _, _)| *n == nonce) {
                self.count("live: followup: a nonce queued twice");
            }
            let s = self.session(session);
            let answer = if seen && !requeue {
                "ignored" // pi's adapter drops a second enqueue of a nonce
            } else {
                s.accepted.insert(nonce.clone(), seq);
                s.pending.push_back((nonce.clone(), seq, text.clone()));
                self.queue_updated(session);
                if running {
                    "accepted"
                } else {
                    "accepted-idle"
                }
            };
            let cursor = self.latest(session);
            let receipt = json!({"accepted": true, "queued": true, "cursor": cursor,
                "clientNonce": nonce, "clientSeq": seq, "disposition": "followup"});
            (self.session(session).ledger).insert(key, (body.clone(), receipt.clone()));
            (202, receipt.to_string().into_bytes(), answer)
        };
        self.count(match answer {
            "accepted" => "followup: queued during a run",
            "accepted-idle" => "followup: queued while idle (stranded)",
            "duplicate" => "followup: replay answered from the ledger",
            "ignored" => "followup: nonce seen, enqueue ignored",
            _ => "followup: requestId conflict",
        });
        self.posts.push(PostSeen {
            session: session.to_string(),
            text,
            nonce,
            seq,
            answer: answer.to_string(),
        });
        (status, bytes)
    }

    /// `POST …/queue/clear`: both selectors must name the same queued item (409
    /// `AGENT_REQUEST_CONFLICT` when it is not queued any more); one selector clears what
    /// matches (maybe nothing); none clears the queue.
    pub fn native_queue_clear(&mut self, session: &str, body: &Value) -> (u16, Vec<u8>) {
        // A clear with a requestId is idempotent by it, as every command (reference §4).
        let key = body["requestId"]
            .as_str()
            .map(|r| format!("queue-clear:{r}"));
        if let Some(k) = &key {
            if let Some(r) = self.ledger_replay(session, k, body) {
                self.count("queue/clear: replay answered from the ledger");
                return r;
            }
        }
        let nonce = body
            .get("clientNonce")
            .and_then(Value::as_str)
            .map(str::to_string);
        let seq = body.get("clientSeq").and_then(Value::as_u64);
        if self.live.selective_clear_noop && (nonce.is_some() || seq.is_some()) {
            return self.native_clear_noop(session, key, body, nonce.as_deref(), seq);
        }
        let s = self.session(session);
        let before = s.pending.len();
        match (&nonce, seq) {
            (Some(n), Some(q)) => {
                let at = s.pending.iter().position(|(pn, _, _)| pn == n);
                match at {
                    Some(i) if s.pending[i].1 == q => {
                        s.pending.remove(i);
                    }
                    _ => {
                        self.count("queue/clear: 409 AGENT_REQUEST_CONFLICT (not queued)");
                        let b = gateway_error(
                            "AGENT_REQUEST_CONFLICT",
                            "queue selectors disagree",
                            None,
                        );
                        return (409, b);
                    }
                }
            }
            (Some(n), None) => s.pending.retain(|(pn, _, _)| pn != n),
            (None, Some(q)) => s.pending.retain(|(_, pq, _)| *pq != q),
            (None, None) => {
                let nonces: Vec<String> = s.pending.drain(..).map(|(n, _, _)| n).collect();
                for n in nonces {
                    *self.cleared_by_all.entry(n).or_default() += 1;
                }
            }
        }
        let s = self.session(session);
        let cleared = before - s.pending.len();
        if s.pending.is_empty() {
            s.seen_nonces.clear();
        }
        if cleared > 0 {
            self.count("queue/clear: cleared");
            self.queue_updated(session);
        }
        let cursor = self.latest(session);
        let r = json!({"accepted": true, "cursor": cursor, "cleared": cleared});
        if let Some(k) = key {
            (self.session(session).ledger).insert(k, (body.clone(), r.clone()));
        }
        (202, r.to_string().into_bytes())
    }

    /// A selective `queue/clear` on the live server (`selective_clear_noop`): its gateway
    /// checks two selectors against the rows its `/state` shows (with `selectors_by_text`
    /// the recovered ones: a queued item whose row lost its selectors fails it too), then its
    /// pi adapter, made anew per request, removes nothing.
    fn native_clear_noop(
        &mut self,
        session: &str,
        key: Option<String>,
        body: &Value,
        nonce: Option<&str>,
        seq: Option<u64>,
    ) -> (u16, Vec<u8>) {
        if let (Some(n), Some(q)) = (nonce, seq) {
            let rows = self.queue_rows(session);
            let by_nonce = rows.iter().position(|r| r["clientNonce"] == n);
            let by_seq = rows.iter().position(|r| r["clientSeq"] == q);
            if by_nonce.is_none() || by_nonce != by_seq {
                let queued = (self.session(session).pending.iter()).any(|(pn, _, _)| pn == n);
                self.count(match queued {
                    true => {
                        "queue/clear: 409 AGENT_REQUEST_CONFLICT (queued, its row's selectors lost)"
                    }
                    false => "queue/clear: 409 AGENT_REQUEST_CONFLICT (not queued)",
                });
                let b = gateway_error("AGENT_REQUEST_CONFLICT", "queue selectors disagree", None);
                return (409, b);
            }
        }
        self.count("queue/clear: cleared 0 (live: selectors remove nothing)");
        let cursor = self.latest(session);
        let r = json!({"accepted": true, "cursor": cursor, "cleared": 0});
        if let Some(k) = key {
            (self.session(session).ledger).insert(k, (body.clone(), r.clone()));
        }
        (202, r.to_string().into_bytes())
    }

    /// `POST …/stop`: the whole queue is dropped first (listed in `clearedQueue`: with
    /// `selectors_by_text` pi's texts, no selectors), then the run is aborted: its assistant
    /// message ends `aborted`, maybe an `ABORTED` error (never with `no_aborted_error`), and
    /// `agent-end {status: aborted}`.
    pub fn native_stop(&mut self, session: &str, rng: &mut Prng) -> (u16, Vec<u8>) {
        let cleared = match self.live.selectors_by_text {
            true => self.raw_queue_rows(session),
            false => self.queue_rows(session),
        };
        let s = self.session(session);
        s.pending.clear();
        s.seen_nonces.clear();
        if !cleared.is_empty() {
            self.count("stop: dropped queued follow-ups");
            self.queue_updated(session);
        }
        let running = self.session(session).active_turn().map(|turn| {
            turn.done = true;
            (turn.id.clone(), turn.assistant.take())
        });
        if let Some((turn_id, assistant)) = running {
            self.count("stop: aborted a run");
            if let Some((id, text)) = assistant {
                self.end_assistant(session, &id, &text, "aborted");
            }
            if !self.live.no_aborted_error && rng.chance(50) {
                let e = json!({"code": "ABORTED", "message": "Aborted"});
                self.nemit(
                    session,
                    json!({"type": "error", "turnId": turn_id, "error": e}),
                );
            }
            self.nemit(
                session,
                json!({"type": "agent-end", "turnId": turn_id, "status": "aborted"}),
            );
        } else {
            self.count("stop: nothing running");
        }
        let cursor = self.latest(session);
        let r =
            json!({"accepted": true, "cursor": cursor, "stopped": true, "clearedQueue": cleared});
        (202, r.to_string().into_bytes())
    }
}

impl Server {
    /// `POST …/interrupt` (reference §3.14): with a run on, the first queued follow-up is
    /// taken, the run aborted (its assistant `aborted`, `agent-end {status: aborted}`), and
    /// that follow-up started as the next run under its selectors; the rest stay queued.
    /// With none on, nothing happens. Idempotent by requestId, as every command.
    pub fn native_interrupt(
        &mut self,
        session: &str,
        body: &Value,
        rng: &mut Prng,
    ) -> (u16, Vec<u8>) {
        let key = body["requestId"].as_str().map(|r| format!("interrupt:{r}"));
        if let Some(k) = &key {
            if let Some(r) = self.ledger_replay(session, k, body) {
                self.count("interrupt: replay answered from the ledger");
                return r;
            }
        }
        let running = self.session(session).active_turn().map(|turn| {
            turn.done = true;
            (turn.id.clone(), turn.assistant.take())
        });
        if let Some((turn_id, assistant)) = running {
            let next = self.session(session).pending.pop_front();
            if let Some((id, text)) = assistant {
                self.end_assistant(session, &id, &text, "aborted");
            }
            self.nemit(
                session,
                json!({"type": "agent-end", "turnId": turn_id, "status": "aborted"}),
            );
            match next {
                Some(next) => {
                    self.count("interrupt: aborted a run and started the first follow-up");
                    self.begin_run(session);
                    self.run_follow_up(session, next, rng);
                }
                None => self.count("interrupt: aborted a run, nothing queued"),
            }
        } else {
            self.count("interrupt: nothing running");
        }
        let r = json!({"accepted": true, "cursor": self.latest(session)});
        if let Some(k) = key {
            (self.session(session).ledger).insert(k, (body.clone(), r.clone()));
        }
        (202, r.to_string().into_bytes())
    }
}

/// A `queue.followUps` row without selectors: its positional id, kind and text.
fn queue_row(session: &str, i: usize, text: &str) -> Value {
    json!({"id": format!("queue:{session}:followup:{i}:{}", text.len()),
           "kind": "followup", "displayText": text})
}

/// Sets a message's (or event's) `clientNonce` and `clientSeq`, where there are any.
fn with_selectors(v: &mut Value, selectors: Option<&(String, Option<u64>)>) {
    if let Some((n, q)) = selectors {
        v["clientNonce"] = json!(n);
        if let Some(q) = q {
            v["clientSeq"] = json!(q);
        }
    }
}

// ===== the live server's ways (pi-native) ====================================================

/// Where the real pi-native server (boring-ui 31361f15, probed live:
/// `../shared/upstream/README.md`, "Known facts of the live servers") differs from its written
/// protocol, one switch each. All off, the simulated server speaks the protocol as written:
/// every user message and queue row carries the selectors it was posted with, a follow-up's
/// user `message-start` is followed by `followup-consumed`, `queue/clear` with selectors
/// removes that item (409 `AGENT_REQUEST_CONFLICT` when it is not queued), pi's adapter
/// ignores a second enqueue of a nonce it has seen, and a stop may send `error ABORTED` before
/// its `agent-end`. The fault schedules turn them all on together for most seeds
/// (`tests/common/fault_world.rs`): that is the server the store ships against.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveFacts {
    /// pi's messages and queue carry no selectors; the server attaches them by text with
    /// [`Reconciler`] (our own model of upstream's `PiChatMessageMetadataReconciler`): a consumed
    /// follow-up's user `message-start` usually has none (its queue read came first), of two
    /// alike the second may carry the first one's; a queue row whose text is shared may have
    /// none; `/state` user messages have none (unless the memory still holds their text); a
    /// stop's `clearedQueue` rows have none.
    pub selectors_by_text: bool,
    /// No `followup-consumed` event (upstream emits it only for a pi message that carries
    /// both selectors, which native ones never do).
    pub no_followup_consumed: bool,
    /// A `queue/clear` with selectors answers 202 `cleared: 0` and keeps the row; with both
    /// selectors, for an item the state's rows do not name by both (no longer queued, or its
    /// row lost its selectors), 409 `AGENT_REQUEST_CONFLICT` "queue selectors disagree".
    /// Clear-all (`{}`) works.
    pub selective_clear_noop: bool,
    /// No nonce dedupe: a follow-up posted again under a new requestId is queued again (and
    /// runs again), even while the first is queued. Only the requestId ledger dedupes.
    pub nonce_requeue: bool,
    /// A stop sends no `error ABORTED` before `agent-end {status: "aborted"}`.
    pub no_aborted_error: bool,
}

impl LiveFacts {
    /// Every way of the live server.
    pub const ALL: LiveFacts = LiveFacts {
        selectors_by_text: true,
        no_followup_consumed: true,
        selective_clear_noop: true,
        nonce_requeue: true,
        no_aborted_error: true,
    };
}

/// What the reconciler remembers of an accepted prompt (`seq: None`) or follow-up.
#[derive(Debug, Clone)]
struct Remembered {
    text: String,
    nonce: String,
    seq: Option<u64>,
    /// The session's latest seq when it was remembered (upstream's `recordedAt`).
    at: u64,
}

/// How the live server finds the selectors of user messages and queue rows: our own model of
/// upstream's `PiChatMessageMetadataReconciler` (31361f15,
/// `packages/agent/src/server/pi-chat/piChatMessageMetadataReconciler.ts`, as the reference
/// server's `examples/server/lib/pi-native-reconciler.mjs` models it), with the session's seq
/// as its clock. pi's own messages and queue have no selectors: it remembers what was
/// accepted and matches by text, and what it attaches depends on the order of events.
#[derive(Debug, Default)]
pub struct Reconciler {
    /// Accepted prompts whose user message has not started yet.
    prompts: Vec<Remembered>,
    /// Accepted follow-ups, re-synced to the queue rows that have selectors at every read.
    follow_ups: Vec<Remembered>,
}

impl Reconciler {
    fn record_prompt(&mut self, nonce: &str, text: &str, at: u64) {
        self.prompts.push(Remembered {
            text: text.into(),
            nonce: nonce.into(),
            seq: None,
            at,
        });
    }

    fn record_follow_up(&mut self, nonce: &str, seq: u64, text: &str, at: u64) {
        self.follow_ups.push(Remembered {
            text: text.into(),
            nonce: nonce.into(),
            seq: Some(seq),
            at,
        });
    }

    /// pi's queue (`texts`) with selectors: by position where the remembered follow-up there
    /// has the row's text, else by a text unique among the rows and among the remembered.
    /// The memory is then re-synced to the rows that have selectors (`enrichQueue`).
    fn enrich_queue(
        &mut self,
        texts: &[String],
        at: u64,
    ) -> Vec<(String, Option<String>, Option<u64>)> {
        let meta = &self.follow_ups;
        let rows: Vec<(String, Option<&Remembered>)> = (texts.iter().enumerate())
            .map(|(i, t)| {
                let found = match meta.get(i).filter(|e| e.text == *t) {
                    Some(e) => Some(e),
                    None => {
                        let unique = texts.iter().filter(|x| *x == t).count() == 1
                            && meta.iter().filter(|e| e.text == *t).count() == 1;
                        unique.then(|| meta.iter().find(|e| e.text == *t)).flatten()
                    }
                };
                (t.clone(), found)
            })
            .collect();
        let rows: Vec<(String, Option<String>, Option<u64>)> = (rows.into_iter())
            .map(|(t, e)| match e {
                Some(e) => (t, Some(e.nonce.clone()), e.seq),
                None => (t, None, None),
            })
            .collect();
        let previous = std::mem::take(&mut self.follow_ups);
        self.follow_ups = (rows.iter())
            .filter_map(|(t, n, q)| {
                let n = n.as_ref()?;
                let before = previous.iter().find(|e| e.nonce == *n);
                Some(Remembered {
                    text: t.clone(),
                    nonce: n.clone(),
                    seq: *q,
                    at: before.map_or(at, |e| e.at),
                })
            })
            .collect();
        rows
    }

    /// The selectors a user message with `text` gets: the first remembered prompt with that
    /// text, else the first follow-up (`enrichEvent`).
    fn find(&self, text: &str) -> Option<(String, Option<u64>)> {
        let e = (self.prompts.iter().find(|e| e.text == text))
            .or_else(|| self.follow_ups.iter().find(|e| e.text == text))?;
        Some((e.nonce.clone(), e.seq))
    }

    /// After a user `message-start` with `selectors` (as published): the follow-up it was
    /// (by its nonce, else the first with its text), and the prompt it was, are forgotten.
    fn consume_start(&mut self, text: &str, selectors: Option<&(String, Option<u64>)>) {
        let follow_up = match selectors {
            Some((n, _)) => self.follow_ups.iter().position(|e| e.nonce == *n),
            None => self.follow_ups.iter().position(|e| e.text == text),
        };
        if let Some(i) = follow_up {
            self.follow_ups.remove(i);
        }
        self.consume_end(text, selectors);
    }

    /// After a user `message-end` with `selectors`: the prompt it was is forgotten (a
    /// `clientSeq` says it was a follow-up).
    fn consume_end(&mut self, text: &str, selectors: Option<&(String, Option<u64>)>) {
        let prompt = match selectors {
            Some((_, Some(_))) => return,
            Some((n, None)) => self.prompts.iter().position(|e| e.nonce == *n),
            None => self.prompts.iter().position(|e| e.text == text),
        };
        if let Some(i) = prompt {
            self.prompts.remove(i);
        }
    }

    /// `/state`'s user messages (`created`: each one's seq): each remembered entry serves
    /// the first message with its text made after it was remembered; the memory is only read
    /// (`enrichMessages`).
    fn enrich_messages(&self, messages: &mut [Value], created: &[u64]) {
        let mut prompts = self.prompts.clone();
        let mut follow_ups = self.follow_ups.clone();
        for (m, at) in messages.iter_mut().zip(created) {
            if m["role"] != "user" || m.get("clientNonce").is_some() {
                continue;
            }
            let text = m["parts"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let take = |list: &mut Vec<Remembered>| {
                let i = list.iter().position(|e| e.text == text && *at >= e.at)?;
                Some(list.remove(i))
            };
            if let Some(e) = take(&mut prompts).or_else(|| take(&mut follow_ups)) {
                with_selectors(m, Some(&(e.nonce, e.seq)));
            }
        }
    }
}
