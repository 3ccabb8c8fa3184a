//! The whole `ChatStore`, driven by an arbitrary sequence of inputs, as a host and a hostile
//! server would: user actions, HTTP heads / bodies / ends / failures for the requests it asked
//! for (answers of every kind: SSE bodies of generated chunks split anywhere, JSON, HTML, junk,
//! error statuses, status 0), late answers of aborted requests, and time steps that fire its
//! timer. After every input the outputs are drained (the run loop rule) and the invariants are
//! checked:
//! - never panics (every snapshot message exports and serialises);
//! - queued items are never duplicated: ids and nonces unique, and an item that left the queue
//!   never comes back (but a stop returns one on its way back as a new message, `stalled`,
//!   SPEC §6) nor is POSTed again;
//! - at most one follow-up POST in flight per session;
//! - status consistent: `error` ⇒ an error to show; busy ⇒ a stream request in flight, a
//!   resume scheduled or a held turn's DELETE out; not busy ⇒ no stream request in flight for
//!   the session (a zombie fetch); a turn id only while busy;
//! - message ids unique;
//! - a late answer of a request the store is done with changes nothing;
//! - the timer makes progress: a timeout never fires again and again at the same instant;
//! - the session list (SPEC §11) lists each session once, the open one always (unless its own
//!   delete is on its way), and has at most one page request in flight;
//! - at most one answer POST in flight per waiting tool call (SPEC §13).
#![no_main]

#[path = "common/harness.rs"]
#[macro_use]
mod harness;
use harness::TimerWatch;
use std::collections::{HashMap, HashSet};

use agent_chat_store::ItemState;
use agent_chat_store::SeededRandom;
use agent_chat_store::Status;
use agent_chat_store::{
    AutoSend, ChatStore, Output, RequestId, RequestKind, ResponseHead, StoreOptions,
};
use agent_chat_store::{Capabilities, FileAttachment};
use agent_chat_store_fuzz::{
    any_chunk, chunk_text, int, message, one_in, pi_chunk, pick, split, sse_body, string, ui_chunk,
    value, Ctx, TOOL_CALL_IDS, TURN_IDS,
};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const SESSIONS: &[&str] = &["s1", "s2", "s 3"];

/// Fixed bug (found by this target; regression test
/// `removing_a_posting_follow_up_keeps_one_post_in_flight` in tests/hostile.rs): an item the
/// user takes out of the queue while its POST is in flight (`remove_queued`, `retry_queued`
/// as a new message) leaves that POST open, untracked, and the queue moves on: the next
/// item's POST can be in flight at the same time. While true, such POSTs are not counted.
/// False since the fix; true would switch the check off again. (An item the server consumed while its POST was in
/// flight is fine: the server has it, only the answer is pending; those are never counted.)
const KNOWN_REMOVE_WHILE_POSTING: bool = false;

/// Fixed bug (found by this target; regression test
/// `chunks_after_a_violation_in_the_same_read_are_not_applied` in tests/hostile.rs): the
/// chunks decoded from the same network read as a protocol violation are still applied after
/// the turn failed (a `data-turn-start` among them sets `turnId` with status `error`). While
/// true, the turn-id check is skipped once a body read aborted its own stream, until the next
/// stream request.
const KNOWN_APPLIED_AFTER_VIOLATION: bool = false;

/// Fixed bug (minor; found by this target; regression test
/// `dispose_mid_turn_leaves_no_turn_id` in tests/hostile.rs): `dispose()` during a turn sets
/// the status to `ready` and keeps `turnId`. While true, the turn-id check ends at dispose.
const KNOWN_TURN_ID_AFTER_DISPOSE: bool = false;

/// Fixed bug (found by this target; regression test
/// `actions_after_dispose_make_no_requests` in tests/hostile.rs): after `dispose()`,
/// `regenerate` still sends a chat POST and `retry_queued` a DELETE (then stays `submitted`
/// forever). While true, the host stops acting on a disposed store.
const KNOWN_ACTIONS_AFTER_DISPOSE: bool = false;

// Also found and fixed (test `a_turn_start_chunk_while_idle_leaves_no_turn_id`): the public
// `handle_chunk` with a `data-turn-start` while no turn runs sets `turnId` with status
// `ready`; the target feeds `handle_chunk` only while a turn runs.

const T0: u64 = 1_700_000_000_000;

/// A path segment as the store encodes it (RFC 3986's unreserved set kept).
fn enc(s: &str) -> String {
    s.bytes()
        .map(
            |b| match b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                true => (b as char).to_string(),
                false => format!("%{b:02X}"),
            },
        )
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Sent,
    Head,
}

#[derive(Debug, Clone)]
struct Req {
    id: RequestId,
    kind: RequestKind,
    path: String,
    body: Option<String>,
    phase: Phase,
    status: u16,
}

struct Host {
    store: ChatStore,
    now: u64,
    /// Requests asked for and neither answered to the end, failed, nor aborted.
    open: Vec<Req>,
    /// Requests the store is done with (ended, failed, aborted), for late answers.
    done: Vec<RequestId>,
    /// Per session: the queue ids seen last time it was current, and those that left.
    queue_ids: HashMap<String, HashSet<String>>,
    gone_ids: HashMap<String, HashSet<String>>,
    gone_nonces: HashMap<String, HashSet<String>>,
    nonce_of: HashMap<String, String>,
    /// Nonces of items removed while their POST was in flight (see the known bug above).
    /// Nonces of items the user removed or retried while their POST was in flight.
    user_took: HashSet<String>,
    /// The stream request whose body is being fed, and whether feeding it aborted it.
    feeding: Option<RequestId>,
    aborted_while_feeding: bool,
    disposed: bool,
    /// The input being checked is a `stop()`: an item on its way back as a new message (a
    /// stranded take-back, or the user's retry) returns to the head of the queue `stalled`
    /// (SPEC §6), the one way an item that left may come back.
    stopping: bool,
    /// The store's questions for the host's auto-send predicate (tokens), answered later.
    asked: Vec<u64>,
    ctx: Ctx,
}

fn options(u: &mut Unstructured) -> StoreOptions {
    let mut o = StoreOptions::new(SESSIONS[0]);
    o.capabilities = match int(u, 0, 4) {
        0 | 1 => None,
        2 => Some(Capabilities {
            native_follow_up: true,
            ai_sdk_owns_history: false,
            follow_up_attachments: false,
            text_required: one_in(u, 2),
        }),
        3 => Some(Capabilities::default()),
        _ => Some(Capabilities {
            native_follow_up: true,
            ai_sdk_owns_history: true,
            follow_up_attachments: true,
            text_required: false,
        }),
    };
    o.hydrate = one_in(u, 2);
    o.followup_timeout_ms = pick(u, &[30_000, 1_000, 50]);
    o.resume_attempts = int(u, 0, 3) as u32;
    o.resume_delay_ms = pick(u, &[500, 10, 1]);
    o.stream_idle_timeout_ms = pick(u, &[None, Some(300_000), Some(100), Some(5)]);
    o.limits.max_event_bytes = pick(u, &[16 << 20, 256, 64]);
    o.limits.max_body_bytes = pick(u, &[64 << 20, 512]);
    o.limits.max_messages = pick(u, &[100_000, 2]);
    o.retry.max_attempts = pick(u, &[6, 1, 2]);
    o.retry.base_delay_ms = pick(u, &[500, 1]);
    o.retry.max_delay_ms = pick(u, &[15_000, 10]);
    o.send_automatically_when = pick(
        u,
        &[
            AutoSend::Never,
            AutoSend::ToolCallsComplete,
            AutoSend::ApprovalsAnswered,
            AutoSend::Host,
        ],
    );
    o
}

impl Host {
    /// The run loop: drain every output, then check the invariants.
    fn drain(&mut self) {
        while let Some(out) = self.store.poll_output() {
            match out {
                Output::Request(r) => {
                    if let Some(b) = &r.body {
                        serde_json::from_str::<Value>(b).expect("request bodies are JSON");
                    }
                    if r.kind.is_stream() {
                        self.aborted_while_feeding = false;
                    }
                    if r.kind == RequestKind::FollowUpPost {
                        // Never an item that already left the queue.
                        let nonce = body_nonce(r.body.as_deref());
                        let session = self.store.session().id().to_string();
                        let gone = self.gone_nonces.get(&session);
                        assert!(
                            !gone.is_some_and(|g| g.contains(&nonce)),
                            "follow-up {nonce} posted after it left the queue"
                        );
                    }
                    self.open.push(Req {
                        id: r.id,
                        kind: r.kind,
                        path: r.path,
                        body: r.body,
                        phase: Phase::Sent,
                        status: 0,
                    });
                }
                Output::Abort(id) => {
                    if self.feeding == Some(id) {
                        self.aborted_while_feeding = true;
                    }
                    self.close(id);
                }
                Output::Event(_) => {}
                Output::AskAutoSend { token } => self.asked.push(token),
            }
        }
        self.check();
    }

    fn close(&mut self, id: RequestId) {
        self.open.retain(|r| r.id != id);
        self.done.push(id);
    }

    fn check(&mut self) {
        let s = &self.store;
        let session = s.session().id().to_string();
        // The session list: each session once, the open one among them, one page in flight.
        let items = s.sessions().items();
        let listed: HashSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(
            listed.len(),
            items.len(),
            "a session listed twice: {items:?}"
        );
        let deleting_open = self.open.iter().any(|r| {
            r.kind == RequestKind::SessionDelete && r.path.ends_with(&format!("/{}", enc(&session)))
        });
        assert!(
            self.disposed || deleting_open || listed.contains(session.as_str()),
            "the open session {session} is not listed: {items:?}"
        );
        let pages = (self.open.iter())
            .filter(|r| r.kind == RequestKind::SessionsGet)
            .count();
        assert!(pages <= 1, "{pages} page requests in flight");
        // SPEC §13: one answer POST in flight per waiting call, and every retry the same body.
        let mut answers: HashMap<String, usize> = HashMap::new();
        for r in (self.open.iter()).filter(|r| {
            matches!(
                r.kind,
                RequestKind::ApprovalPost | RequestKind::ToolOutputPost
            )
        }) {
            let v: Value = serde_json::from_str(r.body.as_deref().unwrap_or("{}")).unwrap();
            let key = v
                .get("approvalId")
                .or(v.get("toolCallId"))
                .map(Value::to_string)
                .unwrap_or_default();
            *answers.entry(key).or_default() += 1;
        }
        assert!(
            answers.values().all(|n| *n <= 1),
            "two answers in flight for one call: {answers:?}"
        );
        // Queue: unique ids and nonces; what left never comes back.
        let mut ids = HashSet::new();
        let mut nonces = HashSet::new();
        for q in s.session().queued() {
            assert!(ids.insert(q.id.clone()), "queued item {} twice", q.id);
            assert!(
                nonces.insert(q.client_nonce.clone()),
                "nonce {} twice",
                q.client_nonce
            );
            self.nonce_of.insert(q.id.clone(), q.client_nonce.clone());
        }
        let gone = self.gone_ids.entry(session.clone()).or_default();
        let gone_nonces = self.gone_nonces.entry(session.clone()).or_default();
        if let Some(prev) = self.queue_ids.get(&session) {
            for id in prev.difference(&ids) {
                gone.insert(id.clone());
                if let Some(n) = self.nonce_of.get(id) {
                    gone_nonces.insert(n.clone());
                }
            }
        }
        let queued = s.session().queued();
        for (i, q) in queued.iter().enumerate() {
            // A stop puts the follow-up a held turn was to send back at the head: `stalled`
            // where the server may have it, `queued` where it does not.
            let back = matches!(q.state, ItemState::Stalled | ItemState::Queued);
            let restored = self.stopping && i == 0 && back;
            if restored && gone.remove(&q.id) {
                gone_nonces.remove(&q.client_nonce);
            }
            assert!(!gone.contains(&q.id), "queued item {} came back", q.id);
        }
        self.queue_ids.insert(session.clone(), ids);
        // Follow-up POSTs: one in flight per session (a POST for an item that left the queue
        // is posted no more: the server consumed or deleted it, or the user took it).
        let mut posts: HashMap<&str, usize> = HashMap::new();
        for r in self
            .open
            .iter()
            .filter(|r| r.kind == RequestKind::FollowUpPost)
        {
            let nonce = nonce_of_post(r);
            let queued = nonces.contains(&nonce);
            let taken = self.user_took.contains(&nonce);
            if queued || (taken && !KNOWN_REMOVE_WHILE_POSTING) {
                *posts.entry(r.path.as_str()).or_default() += 1;
            }
        }
        for (path, n) in posts {
            assert!(n <= 1, "{n} follow-up POSTs in flight to {path}");
        }
        // Status.
        let status = s.status();
        if status == Status::Error {
            assert!(
                s.session().error().is_some(),
                "status error without an error"
            );
        }
        // Switching sessions aborts the old one's streams, so every open one is this session's.
        let streams = self.open.iter().filter(|r| r.kind.is_stream()).count();
        if status.is_busy() {
            let deletes = self
                .open
                .iter()
                .any(|r| r.kind == RequestKind::FollowUpDelete);
            assert!(
                streams > 0 || s.poll_timeout().is_some() || deletes,
                "status {status:?} with nothing in flight or scheduled"
            );
        } else {
            // The one exception: the question whether a turn runs (SPEC §12), asked of the
            // stream route from the turn's start while the status stays what it is.
            let probes = (self.open.iter())
                .filter(|r| r.kind == RequestKind::StreamResume && r.path.ends_with("cursor=-1"))
                .count();
            assert!(
                streams == probes && probes <= 1,
                "a stream request left open while {status:?}: {:?}",
                self.open
            );
        }
        let known = (KNOWN_APPLIED_AFTER_VIOLATION && self.aborted_while_feeding)
            || (KNOWN_TURN_ID_AFTER_DISPOSE && self.disposed);
        if s.session().turn_id().is_some() && !known {
            assert!(
                status.is_busy(),
                "turn id {:?} while {status:?}",
                s.session().turn_id()
            );
        }
        // Messages: unique ids; every one exports (the snapshot path).
        let mut seen = HashSet::new();
        for (i, m) in s.messages().iter().enumerate() {
            assert!(seen.insert(m.id.as_str()), "message id {:?} twice", m.id);
            let _ = serde_json::to_string(&s.session().export_message(i)).unwrap();
        }
        let _ = serde_json::to_string(&s.session().queued()).unwrap();
        let _ = s.composer().state();
        // What the generator may name next.
        self.ctx.nonces = s
            .session()
            .queued()
            .iter()
            .map(|q| q.client_nonce.clone())
            .collect();
        self.ctx.client_seqs = s.session().queued().iter().map(|q| q.client_seq).collect();
        self.ctx.local_ids = s.messages().iter().map(|m| m.id.clone()).take(8).collect();
    }

    fn act(&mut self, f: impl FnOnce(&mut ChatStore, u64)) {
        let now = self.now;
        f(&mut self.store, now);
        self.drain();
        trace!(
            "    -> status {:?}, turn {:?}, messages {}, queued {:?}, open {:?}",
            self.store.status(),
            self.store.session().turn_id(),
            self.store.messages().len(),
            self.store
                .session()
                .queued()
                .iter()
                .map(|q| (&q.text, q.state))
                .collect::<Vec<_>>(),
            self.open
                .iter()
                .map(|r| (r.id, r.kind, r.phase))
                .collect::<Vec<_>>()
        );
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
            trace!("timeout at +{}", self.now - T0);
            self.act(|s, now| s.handle_timeout(now));
        }
        self.now = target;
    }

    /// A late answer: the store is done with the request, so nothing may change.
    fn late_answer(&mut self, u: &mut Unstructured) {
        let Some(&id) = u.choose(&self.done).ok() else {
            return;
        };
        let rev = self.store.revision();
        let now = self.now;
        trace!("late answer for {id}");
        match int(u, 0, 3) {
            0 => self.store.handle_response_head(
                id,
                ResponseHead {
                    status: 200,
                    content_type: Some("text/event-stream".into()),
                    turn_id: Some("late".into()),
                },
                now,
            ),
            1 => self.store.handle_response_body(
                id,
                b"data: {\"type\":\"text-start\",\"id\":\"x\"}\n\n",
                now,
            ),
            2 => self.store.handle_response_end(id, now),
            _ => self.store.handle_request_failed(id, "late", now),
        }
        assert_eq!(
            self.store.revision(),
            rev,
            "a late answer of request {id} changed the store"
        );
        assert!(
            self.store.outputs().poll_request().is_none(),
            "a late answer made a request"
        );
        self.drain();
    }

    fn head(&mut self, u: &mut Unstructured, i: usize) {
        let kind = self.open[i].kind;
        let status = match int(u, 0, 15) {
            0 => 404,
            1 => pick(u, &[409, 400, 422]),
            2 => pick(u, &[500, 503, 429]),
            3 => 204,
            4 => pick(u, &[416, 0, 301, 202]),
            _ if kind == RequestKind::FollowUpPost => 202,
            _ => 200,
        };
        let content_type = match int(u, 0, 7) {
            0 => None,
            1 => Some("text/html; charset=utf-8".to_string()),
            2 => Some("application/json".to_string()),
            3 => Some(" TEXT/HTML".to_string()),
            _ if kind.is_stream() => Some("text/event-stream".to_string()),
            _ => Some("application/json".to_string()),
        };
        let turn_id = one_in(u, 3).then(|| pick(u, TURN_IDS).to_string());
        let id = self.open[i].id;
        trace!("head of {id} ({kind:?}): {status} {content_type:?} turn {turn_id:?}");
        self.open[i].phase = Phase::Head;
        self.open[i].status = status;
        self.act(|s, now| {
            s.handle_response_head(
                id,
                ResponseHead {
                    status,
                    content_type,
                    turn_id,
                },
                now,
            )
        });
    }

    fn body_bytes(&mut self, u: &mut Unstructured, kind: RequestKind, status: u16) -> Vec<u8> {
        let ok = (200..300).contains(&status);
        if one_in(u, 12) {
            return match int(u, 0, 3) {
                0 => b"<!doctype html><html><body>Bad gateway</body></html>".to_vec(),
                1 => vec![0xFF, 0xFE, 0x00, b'{'],
                2 => "[".repeat(int(u, 1, 5000) as usize).into_bytes(),
                _ => string(u).into_bytes(),
            };
        }
        if !ok {
            let code = pick(
                u,
                &[
                    "followup_session_not_ready",
                    "followup_unsupported",
                    "followup_out_of_order",
                    "turn_already_active",
                    "conflict",
                    "bad_request",
                ],
            );
            return json!({"error": {"code": code, "message": string(u)}})
                .to_string()
                .into_bytes();
        }
        match kind {
            RequestKind::Chat | RequestKind::StreamResume => {
                let n = int(u, 1, 8);
                let mut texts = Vec::new();
                for _ in 0..n {
                    let c = match int(u, 0, 5) {
                        0 => any_chunk(u, &mut self.ctx),
                        1 | 2 => ui_chunk(u, &mut self.ctx),
                        _ => pi_chunk(u, &mut self.ctx),
                    };
                    texts.push(chunk_text(u, &c));
                }
                sse_body(u, &texts)
            }
            RequestKind::Capabilities => pick(
                u,
                &[
                    r#"{"nativeFollowUp":true,"aiSdkOwnsHistory":false}"#,
                    r#"{"nativeFollowUp":false,"aiSdkOwnsHistory":true}"#,
                    r#"{"nativeFollowUp":true,"aiSdkOwnsHistory":true,"followUpAttachments":true}"#,
                    r#"{"__proto__":{"nativeFollowUp":true},"constructor":{"prototype":{}}}"#,
                    r#"{"nativeFollowUp":"yes"}"#,
                    "[1]",
                    "null",
                ],
            )
            .as_bytes()
            .to_vec(),
            RequestKind::Catalog => {
                let tools = json!([
                    {"name": "ls", "ui": {"rendererId": "files"}},
                    {"name": "__proto__", "description": value(u, 2)},
                    {"nameless": true},
                    value(u, 2),
                ]);
                match int(u, 0, 2) {
                    0 => json!({"tools": tools}).to_string().into_bytes(),
                    1 => json!({"tools": value(u, 2)}).to_string().into_bytes(),
                    _ => value(u, 3).to_string().into_bytes(),
                }
            }
            RequestKind::MessagesGet => {
                let list: Vec<Value> = (0..int(u, 0, 5))
                    .map(|_| message(u, &mut self.ctx))
                    .collect();
                if one_in(u, 8) {
                    value(u, 3).to_string().into_bytes()
                } else {
                    json!({"messages": list}).to_string().into_bytes()
                }
            }
            RequestKind::SessionsGet => {
                let ids = ["s1", "s2", "s 3", "x", ""];
                let list: Vec<Value> = (0..int(u, 0, 4))
                    .map(|_| match int(u, 0, 5) {
                        0 => value(u, 2),
                        _ => json!({"id": pick(u, &ids), "title": string(u), "archived": one_in(u, 4), "updatedAt": int(u, 0, 9)}),
                    })
                    .collect();
                let next = pick(u, &[None, Some("c1"), Some(""), Some("c2")]);
                match int(u, 0, 6) {
                    0 => value(u, 3).to_string().into_bytes(),
                    _ => json!({"sessions": list, "nextCursor": next}).to_string().into_bytes(),
                }
            }
            RequestKind::SessionPatch => match int(u, 0, 3) {
                0 => value(u, 2).to_string().into_bytes(),
                1 => Vec::new(),
                _ => json!({"session": {"id": pick(u, &["s1", "s2", "x"]), "title": string(u), "archived": one_in(u, 2)}})
                    .to_string()
                    .into_bytes(),
            },
            RequestKind::FollowUpPost => pick(
                u,
                &[
                    r#"{"queued":true}"#,
                    r#"{"queued":true,"duplicate":true}"#,
                    r#"{"queued":false,"deleted":true}"#,
                    "",
                    "junk",
                ],
            )
            .as_bytes()
            .to_vec(),
            _ => Vec::new(),
        }
    }

    fn body(&mut self, u: &mut Unstructured, i: usize) {
        let (id, kind, status) = (self.open[i].id, self.open[i].kind, self.open[i].status);
        let bytes = self.body_bytes(u, kind, status);
        for piece in split(u, &bytes) {
            if !self.open.iter().any(|r| r.id == id) {
                break; // aborted on the way (a violation, a limit)
            }
            trace!("body of {id}: {:?}", String::from_utf8_lossy(piece));
            self.feeding = Some(id);
            self.act(|s, now| s.handle_response_body(id, piece, now));
            self.feeding = None;
        }
    }

    fn end(&mut self, i: usize) {
        let id = self.open[i].id;
        trace!("end of {id}");
        self.close(id);
        self.act(|s, now| s.handle_response_end(id, now));
    }

    fn fail(&mut self, u: &mut Unstructured, i: usize) {
        let id = self.open[i].id;
        self.close(id);
        let message = pick(u, &["network error", "timed out", "ECONNRESET"]);
        trace!("failure of {id}: {message}");
        self.act(|s, now| s.handle_request_failed(id, message, now));
    }

    fn pick_open(&self, u: &mut Unstructured, phase: Option<Phase>) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.open.len())
            .filter(|&i| phase.is_none_or(|p| self.open[i].phase == p))
            .collect();
        u.choose(&candidates).ok().copied()
    }

    fn step(&mut self, u: &mut Unstructured) {
        match int(u, 0, 30) {
            0 | 1 => {
                let text = string(u);
                trace!("submit {text:?}");
                self.act(|s, now| {
                    s.composer_mut().set_draft(&text);
                    s.composer_mut().submit(now);
                });
            }
            2 => {
                let text = string(u);
                let files = if one_in(u, 4) {
                    vec![FileAttachment {
                        media_type: "image/png".into(),
                        filename: Some("a.png".into()),
                        url: "data:image/png;base64,AA==".into(),
                        provider_reference: None,
                        provider_metadata: None,
                    }]
                } else {
                    Vec::new()
                };
                trace!("send {text:?} with {} files", files.len());
                self.act(|s, now| {
                    s.send(&text, files, now);
                });
            }
            3 => {
                trace!("stop");
                self.stopping = true;
                self.act(|s, now| s.turn_mut().stop(now));
                self.stopping = false;
            }
            4 => {
                let to = pick(u, SESSIONS);
                trace!("switch to {to:?}");
                self.act(|s, now| s.switch_session(to, now));
            }
            5 | 6 => {
                let ids: Vec<String> = self
                    .store
                    .session()
                    .queued()
                    .iter()
                    .map(|q| q.id.clone())
                    .collect();
                let id = u.choose(&ids).cloned().unwrap_or_else(|_| "fu-none".into());
                if let Some(q) = self.store.session().queued().iter().find(|q| q.id == id) {
                    if q.state == ItemState::Posting {
                        self.user_took.insert(q.client_nonce.clone());
                    }
                }
                if one_in(u, 2) {
                    trace!("remove {id}");
                    self.act(|s, now| {
                        s.follow_ups_mut().remove(&id, now);
                    });
                } else {
                    trace!("retry {id}");
                    self.act(|s, now| {
                        s.follow_ups_mut().retry(&id, now);
                    });
                }
            }
            7 => {
                let id = self.ctx.local_ids.first().cloned();
                let target = if one_in(u, 2) { id } else { None };
                trace!("regenerate {target:?}");
                self.act(|s, now| {
                    s.use_chat().regenerate(target.as_deref(), now);
                });
            }
            8 => {
                let ids: Vec<String> = self.store.messages().iter().map(|m| m.id.clone()).collect();
                let id = u.choose(&ids).cloned().unwrap_or_default();
                let text = string(u);
                trace!("edit {id:?} {text:?}");
                self.act(|s, now| {
                    s.use_chat().edit(&id, &text, Vec::new(), now);
                });
            }
            9 => {
                let call = pick(u, TOOL_CALL_IDS);
                let out = if one_in(u, 3) {
                    Err(string(u))
                } else {
                    Ok(value(u, 2))
                };
                trace!("tool output for {call}: {out:?}");
                self.act(|s, now| {
                    s.use_chat().add_tool_output(call, out, now);
                });
            }
            10 => {
                let ap = pick(u, &["ap0", "ap1"]);
                let yes = one_in(u, 2);
                trace!("approval {ap} {yes}");
                self.act(|s, now| {
                    s.use_chat().add_tool_approval_response(ap, yes, None, now);
                });
            }
            11 => {
                trace!("continue");
                self.act(|s, now| {
                    s.use_chat().continue_turn(now);
                })
            }
            12 if one_in(u, 16) => {
                trace!("dispose");
                self.disposed = true;
                self.act(|s, _| s.dispose())
            }
            13..=15 => {
                if let Some(i) = self.pick_open(u, Some(Phase::Sent)) {
                    self.head(u, i);
                }
            }
            16..=20 => {
                if let Some(i) = self.pick_open(u, Some(Phase::Head)) {
                    self.body(u, i);
                }
            }
            21 | 22 => {
                if let Some(i) = self.pick_open(u, Some(Phase::Head)) {
                    self.end(i);
                }
            }
            23 => {
                if let Some(i) = self.pick_open(u, None) {
                    self.fail(u, i);
                }
            }
            24 | 25 => {
                let ms = pick(u, &[1, 10, 100, 1_000, 30_000, 300_000]);
                self.advance(ms);
            }
            26 => self.late_answer(u),
            29 => {
                let items = self.store.sessions().items();
                let ids: Vec<String> = items
                    .iter()
                    .map(|i| i.id.clone())
                    .chain(["s2".to_string(), "zz".to_string()])
                    .collect();
                let id = u.choose(&ids).cloned().unwrap_or_default();
                let archived = one_in(u, 3);
                match int(u, 0, 6) {
                    0 => {
                        trace!("load sessions {archived}");
                        self.act(|s, now| {
                            s.sessions_mut().load(archived, now);
                        })
                    }
                    1 => {
                        trace!("load more sessions {archived}");
                        self.act(|s, now| {
                            s.sessions_mut().load_more(archived, now);
                        })
                    }
                    2 => {
                        trace!("new session");
                        self.act(|s, now| {
                            s.sessions_mut().create(now);
                        })
                    }
                    3 | 4 => {
                        let title = string(u);
                        trace!("rename {id:?} {title:?}");
                        self.act(|s, now| {
                            s.sessions_mut().rename(&id, &title, now);
                        })
                    }
                    5 => {
                        trace!("archive {id:?} {archived}");
                        self.act(|s, now| {
                            s.sessions_mut().archive(&id, archived, now);
                        })
                    }
                    _ => {
                        trace!("delete {id:?}");
                        self.act(|s, now| {
                            s.sessions_mut().delete(&id, now);
                        })
                    }
                }
            }
            // The host's predicate answers one of the questions, in any order, at any time.
            28 if !self.asked.is_empty() => {
                let token = self
                    .asked
                    .remove(int(u, 0, self.asked.len() as u64 - 1) as usize);
                let yes = one_in(u, 2);
                trace!("auto-send answer {token} {yes}");
                self.act(|s, now| {
                    s.handle_auto_send(token, yes, now);
                });
            }
            // A host with its own transport feeds chunks while a turn runs. (While none runs,
            // a `data-turn-start` set `turnId` with status `ready`: reported, not fuzzed.)
            27 if self.store.status().is_busy() => {
                let c = if one_in(u, 2) {
                    pi_chunk(u, &mut self.ctx)
                } else {
                    ui_chunk(u, &mut self.ctx)
                };
                let text = chunk_text(u, &c);
                trace!("handle_chunk {text}");
                if let Ok(chunk) = agent_chat_store::parse_chunk(&text) {
                    self.act(|s, now| s.handle_chunk(chunk, now));
                }
            }
            _ => {
                // A whole answer at once: head, body, end.
                if let Some(i) = self.pick_open(u, Some(Phase::Sent)) {
                    let id = self.open[i].id;
                    self.head(u, i);
                    if let Some(i) = self.open.iter().position(|r| r.id == id) {
                        self.body(u, i);
                    }
                    if let Some(i) = self.open.iter().position(|r| r.id == id) {
                        self.end(i);
                    }
                }
            }
        }
    }
}

fn body_nonce(body: Option<&str>) -> String {
    let v: Value = serde_json::from_str(body.unwrap_or("null")).unwrap_or(Value::Null);
    v["clientNonce"].as_str().unwrap_or_default().to_string()
}

fn nonce_of_post(r: &Req) -> String {
    body_nonce(r.body.as_deref())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let opts = options(&mut u);
    let now = T0;
    let store = ChatStore::new(opts, Box::new(SeededRandom(7)), now);
    let mut host = Host {
        store,
        now,
        open: Vec::new(),
        done: Vec::new(),
        queue_ids: HashMap::new(),
        gone_ids: HashMap::new(),
        gone_nonces: HashMap::new(),
        nonce_of: HashMap::new(),
        user_took: HashSet::new(),
        feeding: None,
        aborted_while_feeding: false,
        disposed: false,
        stopping: false,
        asked: Vec::new(),
        ctx: Ctx::default(),
    };
    host.drain();
    let mut steps = 0;
    while !u.is_empty() && steps < 200 && !(KNOWN_ACTIONS_AFTER_DISPOSE && host.disposed) {
        host.step(&mut u);
        steps += 1;
    }
});
