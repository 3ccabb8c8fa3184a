//! A simulated agent server (first written for `tests/fault_schedules.rs`): it keeps SPEC §2's
//! follow-up idempotency rules (accepted nonces, deleted nonces and seqs, out-of-order seqs, a
//! "not ready" window), runs pi turns whose events it buffers for resumes by cursor, and lets
//! a running turn consume the accepted follow-ups in arrival order before it ends. It does no
//! IO and keeps no clock: a test hands it each request as it reaches the server (`chat`,
//! `resume`, `followup`, `delete_followup`), advances its turns with `tick`, and carries what it
//! answers (`Resp`) and what its connections (`conns`) stream back to a `Harness`.
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

    fn start_assistant(&mut self, session: &str, rng: &mut Prng) {
        let id = self.id("a");
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
        let turn = self.session(session).active_turn().unwrap();
        turn.assistant = Some((id, String::new()));
        turn.words_left = rng.range(1, 3);
    }

    fn commit_user(&mut self, session: &str, id: &str, text: &str, via: Via) {
        self.session(session).canonical.push(json!({
            "id": id, "role": "user", "parts": [{"type": "text", "text": text}]
        }));
        self.commits.push(Commit {
            session: session.to_string(),
            text: text.to_string(),
            via,
        });
    }

    pub fn chat(&mut self, session: &str, text: &str, rng: &mut Prng) -> Result<usize, Resp> {
        if self.session(session).active_turn().is_some() {
            return Err(Resp::Http(
                409,
                error_body("conflict", "turn_already_active"),
            ));
        }
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
        self.emit(
            session,
            "data-turn-start",
            json!({"turnId": turn_id}),
            false,
        );
        self.emit(session, "data-pi-agent-start", json!({}), true);
        let uid = self.id("u");
        self.emit(
            session,
            "data-pi-message-start",
            json!({"messageId": uid, "role": "user", "text": text}),
            true,
        );
        self.emit(
            session,
            "data-pi-message-end",
            json!({"messageId": uid, "role": "user", "text": text}),
            true,
        );
        self.commit_user(session, &uid, text, Via::Chat);
        self.start_assistant(session, rng);
        Ok(turn_index)
    }

    /// One step of a running turn. Returns whether anything was emitted.
    pub fn tick(&mut self, session: &str, rng: &mut Prng) -> bool {
        let Some(turn) = self.session(session).active_turn() else {
            return false;
        };
        match turn.assistant.clone() {
            Some((id, mut text)) if turn.words_left > 0 => {
                let word = format!("w{} ", turn.seq + 1);
                text.push_str(&word);
                turn.words_left -= 1;
                turn.assistant = Some((id.clone(), text));
                self.emit(
                    session,
                    "data-pi-text-delta",
                    json!({"messageId": id, "partId": "0", "delta": word}),
                    true,
                );
            }
            Some((id, text)) => {
                turn.assistant = None;
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
                self.session(session).canonical.push(json!({
                    "id": id, "role": "assistant",
                    "parts": [{"type": "text", "text": text, "state": "done"}]
                }));
            }
            None => match self.session(session).pending.pop_front() {
                // The agent would stop: the next follow-up, in arrival order, runs first.
                Some((nonce, seq, text)) => {
                    self.session(session).consumed.insert(nonce.clone());
                    let uid = self.id("u");
                    self.emit(
                        session,
                        "data-followup-consumed",
                        json!({"clientNonce": nonce, "clientSeq": seq}),
                        false,
                    );
                    self.emit(
                        session,
                        "data-pi-message-start",
                        json!({"messageId": uid, "role": "user", "clientNonce": nonce, "text": text}),
                        true,
                    );
                    self.emit(
                        session,
                        "data-pi-message-end",
                        json!({"messageId": uid, "role": "user", "text": text}),
                        true,
                    );
                    self.commit_user(session, &uid, &text, Via::FollowUp(nonce));
                    self.start_assistant(session, rng);
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
