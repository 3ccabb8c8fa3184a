//! A pi-native `ChatStore` (SPEC §14) against a hostile server (issue 38). The input bytes
//! play the server and the network: `/state` bodies (documents with any seq and status, junk,
//! bodies over the limit), the events stream's NDJSON (envelopes whose seq goes on, repeats,
//! skips, is a string, a fraction, past 2^53 or 2^64, disagrees with its event; lines of
//! another session, unknown types, heartbeats, invalid UTF-8, a BOM, lines over
//! `maxEventBytes`) split at any byte, `409` cursor-ahead / replay-gap answers, command
//! answers (202, a busy 409, 5xx, junk), failures, requests left unanswered, and virtual time.
//! A user sends, stops and types now and then. After every input the outputs are drained and
//! the invariants checked:
//! - never panics; every message exports;
//! - no flood: the store's reads (`/state`, `/events`) it makes on its own (not in a user's
//!   action) are at most [`MAX_READS_PER_SECOND`] in any second of virtual time, once the
//!   first [`FREE_READS`] are made: whatever the server answers, it backs off;
//! - bytes of the events stream never make the history shorter (only a `/state` the server
//!   sent, or a prompt's refusal, takes a message away);
//! - the timer makes progress (never fires again and again at one instant);
//! - status `error` comes with an error; a losses list stays bounded (32).
//!
//! `FUZZ_TRACE=1 cargo fuzz run native_hostile <crash file>` prints every step.
#![no_main]

#[path = "common/harness.rs"]
#[macro_use]
mod harness;
use harness::TimerWatch;
use std::collections::VecDeque;

use agent_chat_store::{ChatStore, Output, RequestId, RequestKind, ResponseHead, SeededRandom};
use agent_chat_store::{Status, StoreOptions};
use agent_chat_store_fuzz::{int, one_in, pick, split, string};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const T0: u64 = 1_700_000_000_000;
/// Reads on the store's own in any 1,000 ms of virtual time, after the first few (an open is
/// two: the state and the events; a gap or a range error two more).
const MAX_READS_PER_SECOND: usize = 4;
const FREE_READS: usize = 6;

#[derive(Debug, Clone)]
struct Req {
    id: RequestId,
    kind: RequestKind,
    /// The head was answered, with this status.
    status: Option<u16>,
}

struct Host {
    store: ChatStore,
    now: u64,
    open: Vec<Req>,
    /// The server's seq (what its events and states are numbered from).
    seq: u64,
    /// Times of the reads the store made on its own.
    reads: VecDeque<u64>,
    reads_total: usize,
    /// Inside a user's action: reads it makes are not counted.
    acting: bool,
}

fn options(u: &mut Unstructured) -> StoreOptions {
    let mut o = StoreOptions::new("s1");
    o.pi_native = Some("pi".into());
    o.limits.max_event_bytes = pick(u, &[16 << 20, 256, 64]);
    o.limits.max_body_bytes = pick(u, &[64 << 20, 512]);
    o.limits.max_message_chars = pick(u, &[32 << 20, 100]);
    o.retry.max_attempts = pick(u, &[6, 1, 2]);
    o.stream_idle_timeout_ms = pick(u, &[None, Some(300_000), Some(100)]);
    o
}

fn envelope(session: &str, seq: Value, event: Value) -> String {
    json!({"ref": {"agentTypeId": "pi", "sessionId": session}, "seq": seq, "event": event})
        .to_string()
}

impl Host {
    fn drain(&mut self) {
        while let Some(out) = self.store.poll_output() {
            match out {
                Output::Request(r) => {
                    trace!("  request {} {:?} {}", r.id, r.kind, r.path);
                    if matches!(r.kind, RequestKind::NativeState | RequestKind::NativeEvents)
                        && !self.acting
                    {
                        self.reads.push_back(self.now);
                        self.reads_total += 1;
                    }
                    self.open.push(Req {
                        id: r.id,
                        kind: r.kind,
                        status: None,
                    });
                }
                Output::Abort(id) => self.open.retain(|r| r.id != id),
                Output::Event(_) | Output::AskAutoSend { .. } => {}
            }
        }
        self.check();
    }

    fn check(&mut self) {
        while self.reads.front().is_some_and(|&t| t + 1000 <= self.now) {
            self.reads.pop_front();
        }
        if self.reads_total > FREE_READS {
            assert!(
                self.reads.len() <= MAX_READS_PER_SECOND,
                "{} reads within a second of virtual time (at +{} ms): a flood",
                self.reads.len(),
                self.now - T0
            );
        }
        let s = &self.store;
        if s.status() == Status::Error {
            assert!(
                s.session().error().is_some(),
                "status error without an error"
            );
        }
        assert!(
            s.session().losses().len() <= 32,
            "{} losses kept",
            s.session().losses().len()
        );
        for i in 0..s.messages().len() {
            let _ = serde_json::to_string(&s.session().export_message(i)).unwrap();
        }
        let _ = serde_json::to_string(&s.session().queued()).unwrap();
        let _ = s.composer().state();
    }

    fn act(&mut self, f: impl FnOnce(&mut ChatStore, u64)) {
        let now = self.now;
        f(&mut self.store, now);
        self.drain();
    }

    fn user(&mut self, f: impl FnOnce(&mut ChatStore, u64)) {
        self.acting = true;
        let now = self.now;
        f(&mut self.store, now);
        self.drain();
        self.acting = false;
    }

    fn advance(&mut self, ms: u64) {
        let target = self.now + ms;
        let mut watch = TimerWatch::default();
        while let Some(t) = self.store.poll_timeout() {
            if t > target {
                break;
            }
            self.now = self.now.max(t);
            watch.fired(self.now, t);
            self.act(|s, now| s.handle_timeout(now));
        }
        self.now = target;
        self.check();
    }

    /// A seq for a line or a state: mostly the next one, else anything.
    fn seq(&mut self, u: &mut Unstructured) -> Value {
        match int(u, 0, 12) {
            0 => json!(self.seq),                    // stale
            1 | 7 => json!(self.seq + int(u, 2, 5)), // a gap
            2 => json!(9_007_199_254_740_993u64),    // past 2^53
            3 => json!(u64::MAX),                    // the top
            4 => json!(self.seq.to_string()),        // a string
            5 => json!(self.seq as f64 + 1.5),       // a fraction
            6 => Value::Null,
            _ => {
                self.seq += 1;
                json!(self.seq)
            }
        }
    }

    fn event(&mut self, u: &mut Unstructured, seq: &Value) -> Value {
        let mid = pick(u, &["a1", "a2", "u1"]);
        let mut e = match int(u, 0, 11) {
            0 => json!({"type": "agent-start", "turnId": pick(u, &["t1", "t2"])}),
            1 => {
                json!({"type": "agent-end", "turnId": pick(u, &["t1", "t2"]), "status": pick(u, &["ok", "aborted", "error"])})
            }
            2 => {
                json!({"type": "message-start", "messageId": mid, "role": pick(u, &["user", "assistant"]), "text": string(u)})
            }
            3 | 4 => {
                json!({"type": "message-delta", "messageId": mid, "partId": "0", "kind": "text", "delta": string(u).repeat(int(u, 1, 64) as usize)})
            }
            5 => {
                json!({"type": "message-end", "messageId": mid, "final": {"id": mid, "role": "assistant", "status": "done", "parts": [{"type": "text", "text": string(u)}]}})
            }
            6 => {
                json!({"type": "tool-call", "messageId": mid, "toolCallId": "c1", "toolName": "ls", "input": {}})
            }
            7 => {
                json!({"type": "tool-result", "messageId": mid, "toolCallId": "c1", "output": {"content": [{"type": "text", "text": "y".repeat(int(u, 0, 600) as usize)}]}})
            }
            8 => json!({"type": "queue-updated", "queue": {"followUps": []}}),
            9 => {
                json!({"type": "error", "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": string(u)}})
            }
            10 => json!({"type": "future-event", "x": 1}),
            _ => json!({"type": "usage", "usage": {}}),
        };
        e["seq"] = seq.clone();
        e
    }

    /// One NDJSON line of the events stream (with its `\n`, or junk of any kind).
    fn line(&mut self, u: &mut Unstructured) -> Vec<u8> {
        match int(u, 0, 14) {
            0 => b"{\"type\":\"heartbeat\",\"now\":\"2026-12-06T00:00:00Z\"}\n".to_vec(),
            1 => {
                // Another session's event, with this session's next seq.
                let seq = json!(self.seq + 1);
                let e = self.event(u, &seq);
                (envelope("other", seq, e) + "\n").into_bytes()
            }
            2 => {
                // Envelope and event disagree.
                let seq = self.seq(u);
                let other = json!(self.seq + 7);
                let e = self.event(u, &other);
                (envelope("s1", seq, e) + "\n").into_bytes()
            }
            3 => {
                let mut b = b"{\"ref\":{\"agentTypeId\":\"pi\",\"sessionId\":\"s1\"},\"seq\":1,\"event\":{\"type\":\"usage\",\"seq\":1,\"x\":\"".to_vec();
                b.extend([0xFF, 0xFE, 0xC0]);
                b.extend(b"\"}}\n");
                b
            }
            4 => {
                let mut b = "\u{FEFF}".as_bytes().to_vec();
                b.extend(b"{\"type\":\"heartbeat\",\"now\":\"x\"}\n");
                b
            }
            5 => {
                // A line over a small maxEventBytes.
                let seq = self.seq(u);
                let mut e = self.event(u, &seq);
                e["pad"] = json!("p".repeat(int(u, 100, 4096) as usize));
                (envelope("s1", seq, e) + "\n").into_bytes()
            }
            6 => (string(u) + "\n").into_bytes(),
            7 => b"\n\r\n   \n".to_vec(),
            8 => {
                let seq = self.seq(u);
                let e = self.event(u, &seq);
                (envelope("s1", seq, e) + " trailing\n").into_bytes()
            }
            _ => {
                let seq = self.seq(u);
                let e = self.event(u, &seq);
                if one_in(u, 5) {
                    (e.to_string() + "\n").into_bytes() // a bare event
                } else {
                    (envelope("s1", seq, e) + "\n").into_bytes()
                }
            }
        }
    }

    fn state_body(&mut self, u: &mut Unstructured) -> Vec<u8> {
        match int(u, 0, 9) {
            0 => b"<html>502</html>".to_vec(),
            1 => "{\"state\":".repeat(int(u, 1, 3000) as usize).into_bytes(),
            2 => {
                let doc = json!({"state": {"protocolVersion": 2, "seq": 1}});
                doc.to_string().into_bytes()
            }
            _ => {
                let seq = match int(u, 0, 6) {
                    0 => json!(9_007_199_254_740_993u64),
                    1 => json!(int(u, 0, 3)),
                    2 => json!("7"),
                    _ => json!(self.seq),
                };
                let n = int(u, 0, 4);
                let messages: Vec<Value> = (0..n)
                    .map(|i| {
                        json!({"id": format!("m{i}"), "role": pick(u, &["user", "assistant"]), "status": "done",
                           "parts": [{"type": "text", "text": string(u).repeat(int(u, 1, 200) as usize)}]})
                    })
                    .collect();
                json!({"ref": {"agentTypeId": "pi", "sessionId": pick(u, &["s1", "s1", "other"])}, "seq": seq,
                   "state": {"protocolVersion": 1, "sessionId": "s1", "seq": seq,
                       "status": pick(u, &["idle", "streaming", "error"]), "messages": messages,
                       "queue": {"followUps": []}, "followUpMode": "one-at-a-time"}})
                .to_string()
                .into_bytes()
            }
        }
    }

    fn error_body(code: &str, seq: u64) -> Vec<u8> {
        json!({"error": {"code": code, "message": code, "details": {"latestSeq": seq, "minReplaySeq": 0}}})
            .to_string()
            .into_bytes()
    }

    /// Answers the open request `i`: its head if none yet, then (mostly at once) a body, and
    /// its end now, later, or never.
    fn answer(&mut self, u: &mut Unstructured, i: usize) {
        let Req { id, status, .. } = self.open[i].clone();
        if status.is_none() {
            self.head(u, i);
            if one_in(u, 4) {
                return;
            }
        }
        if let Some(i) = self.open.iter().position(|r| r.id == id) {
            self.body(u, i);
        }
    }

    fn head(&mut self, u: &mut Unstructured, i: usize) {
        let Req { id, kind, .. } = self.open[i].clone();
        {
            let status = match (kind, int(u, 0, 9)) {
                (_, 0) => pick(u, &[500, 502, 503, 404, 400]),
                (RequestKind::NativeEvents, 1 | 2) => 409,
                (RequestKind::NativePrompt, 1 | 2) => 409,
                (RequestKind::NativePrompt | RequestKind::FollowUpPost, _) => 202,
                _ => 200,
            };
            trace!("head of {id} ({kind:?}): {status}");
            self.open[i].status = Some(status);
            let content_type = Some(match kind {
                RequestKind::NativeEvents if status == 200 => "application/x-ndjson".to_string(),
                _ => "application/json".to_string(),
            });
            self.act(|s, now| {
                s.handle_response_head(
                    id,
                    ResponseHead {
                        status,
                        content_type,
                        turn_id: None,
                    },
                    now,
                )
            });
        }
    }

    fn body(&mut self, u: &mut Unstructured, i: usize) {
        let Req { id, kind, status } = self.open[i].clone();
        let status = status.unwrap_or(200);
        let ok = (200..300).contains(&status);
        let body = match kind {
            RequestKind::NativeEvents if ok => {
                let mut b = Vec::new();
                for _ in 0..int(u, 1, 8) {
                    b.extend(self.line(u));
                }
                b
            }
            RequestKind::NativeEvents if status == 409 => {
                let code = pick(
                    u,
                    &["AGENT_SESSION_CURSOR_AHEAD", "AGENT_SESSION_REPLAY_GAP"],
                );
                Self::error_body(code, self.seq)
            }
            RequestKind::NativeState if ok => self.state_body(u),
            RequestKind::NativePrompt if status == 409 => {
                Self::error_body("AGENT_COMMAND_INVALID_STATE", self.seq)
            }
            RequestKind::NativePrompt if ok => json!({"accepted": true, "cursor": self.seq + 1})
                .to_string()
                .into_bytes(),
            _ if ok => b"{\"accepted\":true}".to_vec(),
            _ => Self::error_body(pick(u, &["INTERNAL_ERROR", "AGENT_SESSION_NOT_FOUND"]), 0),
        };
        let before = self.store.messages().len();
        for piece in split(u, &body) {
            if !self.open.iter().any(|r| r.id == id) {
                break;
            }
            trace!("body of {id}: {:?}", String::from_utf8_lossy(piece));
            self.act(|s, now| s.handle_response_body(id, piece, now));
        }
        if kind == RequestKind::NativeEvents && ok {
            let after = self.store.messages().len();
            assert!(
                after >= before,
                "the events stream's bytes took messages away: {before} -> {after}"
            );
        }
        // A body is one answer; the end comes now, later, or never.
        if !one_in(u, 3) && self.open.iter().any(|r| r.id == id) {
            self.open.retain(|r| r.id != id);
            trace!("end of {id}");
            self.act(|s, now| s.handle_response_end(id, now));
        }
    }

    fn step(&mut self, u: &mut Unstructured) {
        match int(u, 0, 15) {
            0..=9 => {
                let n = self.open.len();
                if n > 0 {
                    let i = int(u, 0, n as u64 - 1) as usize;
                    self.answer(u, i);
                } else {
                    self.advance(1_000);
                }
            }
            10..=12 => {
                let ms = pick(u, &[1, 50, 400, 1_000, 5_000, 15_000, 60_000]);
                trace!("advance {ms}");
                self.advance(ms);
            }
            13 => {
                if let Some(i) = (0..self.open.len()).nth(int(u, 0, 7) as usize) {
                    let id = self.open[i].id;
                    self.open.remove(i);
                    trace!("failure of {id}");
                    self.act(|s, now| s.handle_request_failed(id, "network error", now));
                }
            }
            14 => {
                let text = pick(u, &["hi", "again", "x"]);
                trace!("send {text}");
                self.user(|s, now| {
                    s.send(text, Vec::new(), now);
                });
            }
            _ => {
                trace!("stop");
                self.user(|s, now| s.turn_mut().stop(now));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let opts = options(&mut u);
    let store = ChatStore::new(opts, Box::new(SeededRandom(11)), T0);
    let mut host = Host {
        store,
        now: T0,
        open: Vec::new(),
        seq: int(&mut u, 0, 5),
        reads: VecDeque::new(),
        reads_total: 0,
        acting: false,
    };
    host.drain();
    let mut steps = 0;
    while !u.is_empty() && steps < 300 {
        host.step(&mut u);
        steps += 1;
    }
});
