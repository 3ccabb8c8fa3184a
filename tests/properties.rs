//! Property tests (issue 7, item 4), with proptest:
//!
//! - replaying any valid pi stream with chunks duplicated, or with runs of already-delivered
//!   chunks delivered again (a resume that overlaps), gives the same history;
//! - splitting SSE bytes at arbitrary points never changes the decoded events (structured
//!   streams with every line end, BOM, comments, ids and limits, and arbitrary bytes);
//! - the `FollowUpQueue` never has two items in flight and never changes an item's nonce
//!   under arbitrary operation sequences, and the `ChatStore` never has two follow-up POSTs
//!   out for items it still holds.

#![cfg(all(feature = "pi", feature = "replay"))]
#![cfg(not(target_arch = "wasm32"))]

use crate::common;

use std::collections::{HashMap, HashSet};

use agent_chat_store::ChatError;
use agent_chat_store::RequestKind;
use agent_chat_store::SeededRandom;
use agent_chat_store::{replay_pi_stream, ChunkInput};
use agent_chat_store::{FollowUpQueue, ItemState, PostOutcome, RetryPolicy};
use agent_chat_store::{SseDecoder, SseItem};
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};

// ===== pi streams ============================================================================

#[derive(Debug, Clone)]
enum PartSpec {
    /// A text or reasoning part: its deltas, and whether its end carries the full text.
    Text {
        reasoning: bool,
        deltas: Vec<String>,
        end_text: bool,
        /// Each delta is followed by a legacy `data-pi-message-delta` with the same seq.
        legacy: bool,
    },
    /// A tool call whose input streams as JSON fragments, with or without a result.
    Tool {
        name: String,
        input: Value,
        pieces: usize,
        result: Option<(Value, bool)>,
    },
}

#[derive(Debug, Clone)]
struct MsgSpec {
    user: bool,
    text: String,
    parts: Vec<PartSpec>,
    /// A user message-end under another id than its start (a legacy quirk).
    end_alias: bool,
    /// The assistant message-end carries a `final` snapshot.
    final_snapshot: bool,
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,6}",
        "[a-zé🌍„“ ]{1,4}",
        Just(String::new()),
        "\\PC{0,4}",
    ]
}

fn part_strategy() -> impl Strategy<Value = PartSpec> {
    prop_oneof![
        (
            any::<bool>(),
            prop::collection::vec(text_strategy(), 0..4),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(reasoning, deltas, end_text, legacy)| PartSpec::Text {
                reasoning,
                deltas,
                end_text,
                legacy: legacy && !reasoning,
            }),
        (
            "[a-z]{1,6}",
            prop::collection::btree_map("[a-z]{1,3}", "[a-z0-9]{0,4}", 0..3),
            1usize..4,
            prop::option::of((text_strategy(), any::<bool>()))
        )
            .prop_map(|(name, map, pieces, result)| PartSpec::Tool {
                name,
                input: serde_json::to_value(map).unwrap(),
                pieces,
                result: result.map(|(t, e)| (json!([{"type": "text", "text": t}]), e)),
            }),
    ]
}

fn msg_strategy() -> impl Strategy<Value = MsgSpec> {
    (
        any::<bool>(),
        "[a-z ]{1,8}",
        prop::collection::vec(part_strategy(), 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(user, text, parts, end_alias, final_snapshot)| MsgSpec {
            user,
            text,
            parts: if user { Vec::new() } else { parts },
            end_alias: end_alias && user,
            final_snapshot: final_snapshot && !user,
        })
}

/// A valid pi stream of one turn: seq strictly increasing, every part inside its message,
/// standard AI SDK chunks interleaved as servers of this family do.
fn build_stream(msgs: &[MsgSpec]) -> Vec<Value> {
    let mut out = vec![json!({"type": "data-turn-start", "data": {"turnId": "turn-p"}})];
    let mut seq = 0u64;
    let mut pi = |out: &mut Vec<Value>, ty: &str, mut data: Value| {
        seq += 1;
        data["seq"] = json!(seq);
        out.push(json!({"type": format!("data-pi-{ty}"), "data": data}));
        seq
    };
    pi(&mut out, "agent-start", json!({}));
    for (m, spec) in msgs.iter().enumerate() {
        let id = format!("m{m}");
        if spec.user {
            pi(
                &mut out,
                "message-start",
                json!({"messageId": id, "role": "user", "text": spec.text}),
            );
            let end_id = if spec.end_alias {
                format!("{id}-end")
            } else {
                id.clone()
            };
            pi(
                &mut out,
                "message-end",
                json!({"messageId": end_id, "role": "user", "text": spec.text}),
            );
            continue;
        }
        pi(
            &mut out,
            "message-start",
            json!({"messageId": id, "role": "assistant"}),
        );
        out.push(json!({"type": "start", "messageId": format!("std-{m}")}));
        let mut final_parts = Vec::new();
        for (p, part) in spec.parts.iter().enumerate() {
            match part {
                PartSpec::Text {
                    reasoning,
                    deltas,
                    end_text,
                    legacy,
                } => {
                    let kind = if *reasoning { "reasoning" } else { "text" };
                    let pid = format!("p{p}");
                    pi(
                        &mut out,
                        &format!("{kind}-start"),
                        json!({"messageId": id, "partId": pid}),
                    );
                    for d in deltas {
                        let s = pi(
                            &mut out,
                            &format!("{kind}-delta"),
                            json!({"messageId": id, "partId": pid, "delta": d}),
                        );
                        if *legacy {
                            out.push(json!({"type": "data-pi-message-delta", "data": {
                                "seq": s, "messageId": id, "role": "assistant", "delta": d}}));
                        }
                        out.push(json!({"type": format!("{kind}-delta"), "id": pid, "delta": d}));
                    }
                    let full: String = deltas.concat();
                    let mut end = json!({"messageId": id, "partId": pid});
                    if *end_text {
                        end["text"] = json!(full);
                    }
                    pi(&mut out, &format!("{kind}-end"), end);
                    final_parts.push(json!({"type": kind, "text": full, "state": "done"}));
                }
                PartSpec::Tool {
                    name,
                    input,
                    pieces,
                    result,
                } => {
                    let call = format!("call-{m}-{p}");
                    pi(
                        &mut out,
                        "tool-call-start",
                        json!({"messageId": id, "toolCallId": call, "toolName": name}),
                    );
                    let text = input.to_string();
                    let chars: Vec<char> = text.chars().collect();
                    let step = chars.len().div_ceil(*pieces).max(1);
                    for piece in chars.chunks(step) {
                        let piece: String = piece.iter().collect();
                        pi(
                            &mut out,
                            "tool-call-delta",
                            json!({"messageId": id, "toolCallId": call, "delta": piece}),
                        );
                    }
                    pi(
                        &mut out,
                        "tool-call-end",
                        json!({"messageId": id, "toolCallId": call, "input": input}),
                    );
                    if let Some((output, is_error)) = result {
                        pi(
                            &mut out,
                            "tool-result",
                            json!({"messageId": format!("tr-{m}-{p}"), "toolCallId": call,
                                   "output": output, "isError": is_error}),
                        );
                    }
                }
            }
        }
        let mut end = json!({"messageId": id, "role": "assistant"});
        if spec.final_snapshot {
            end["final"] = json!({"id": id, "role": "assistant", "parts": final_parts});
        }
        pi(&mut out, "message-end", end);
        out.push(json!({"type": "finish-step"}));
    }
    pi(&mut out, "agent-end", json!({}));
    out.push(json!({"type": "finish"}));
    out
}

fn replay(chunks: &[Value]) -> Vec<Value> {
    let texts: Vec<String> = chunks.iter().map(Value::to_string).collect();
    replay_pi_stream(texts.iter().map(|t| ChunkInput::Text(t)))
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect()
}

/// Re-deliveries: after the first `at` chunks went out, chunks `from..from+len` (all
/// delivered already) go out again.
#[derive(Debug, Clone)]
struct Again {
    at: usize,
    from: usize,
    len: usize,
}

fn deliver(chunks: &[Value], agains: &[Again]) -> Vec<Value> {
    let n = chunks.len();
    let mut out = Vec::new();
    for at in 0..=n {
        for a in agains.iter().filter(|a| a.at % (n + 1) == at) {
            let from = a.from % (at + 1);
            let to = (from + a.len).min(at);
            out.extend_from_slice(&chunks[from..to]);
        }
        if at < n {
            out.push(chunks[at].clone());
        }
    }
    out
}

fn again_strategy() -> impl Strategy<Value = Again> {
    (
        0usize..200,
        0usize..200,
        prop_oneof![Just(1usize), 1usize..12],
    )
        .prop_map(|(at, from, len)| Again { at, from, len })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A chunk delivered again (alone: a duplicate; a run: a resume that overlaps what was
    /// received) changes nothing: seq says it was applied.
    #[test]
    fn pi_replays_with_duplicated_or_replayed_chunks_give_the_same_history(
        msgs in prop::collection::vec(msg_strategy(), 1..5),
        agains in prop::collection::vec(again_strategy(), 1..6),
    ) {
        let chunks = build_stream(&msgs);
        let want = replay(&chunks);
        let delivered = deliver(&chunks, &agains);
        prop_assert_eq!(replay(&delivered), want.clone(), "delivered: {:#?}", delivered);
        // The whole stream twice (a resume from cursor -1 after the end).
        let twice: Vec<Value> = chunks.iter().chain(chunks.iter()).cloned().collect();
        prop_assert_eq!(replay(&twice), want);
    }
}

/// The generator makes what it should: the histories compared above are not empty.
#[test]
fn the_pi_stream_generator_builds_messages_with_parts() {
    let msgs = vec![
        MsgSpec {
            user: true,
            text: "hi".into(),
            parts: vec![],
            end_alias: true,
            final_snapshot: false,
        },
        MsgSpec {
            user: false,
            text: String::new(),
            parts: vec![
                PartSpec::Text {
                    reasoning: true,
                    deltas: vec!["a".into(), "b".into()],
                    end_text: false,
                    legacy: false,
                },
                PartSpec::Tool {
                    name: "read".into(),
                    input: json!({"p": "x"}),
                    pieces: 3,
                    result: Some((json!([{"type": "text", "text": "ok"}]), false)),
                },
                PartSpec::Text {
                    reasoning: false,
                    deltas: vec!["c".into(), "é".into()],
                    end_text: true,
                    legacy: true,
                },
            ],
            end_alias: false,
            final_snapshot: false,
        },
    ];
    let h = replay(&build_stream(&msgs));
    assert_eq!(h.len(), 2, "{h:#?}");
    assert_eq!(h[0]["parts"][0]["text"], "hi");
    let parts = h[1]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3, "{h:#?}");
    assert_eq!(parts[0]["text"], "ab");
    assert_eq!(parts[1]["state"], "output-available");
    assert_eq!(parts[1]["input"], json!({"p": "x"}));
    assert_eq!(parts[2]["text"], "cé");
}

// ===== SSE splitting =========================================================================

#[derive(Debug, Clone)]
enum Line {
    Data(String),
    Id(String),
    Event(String),
    Retry,
    Comment(String),
    Unknown,
    Blank,
}

fn line_strategy() -> impl Strategy<Value = Line> {
    // Values without CR/LF (a line end inside would make it two lines, which is fine too,
    // but then the generator would not know its structure).
    let value = "[^\r\n]{0,12}";
    prop_oneof![
        4 => value.prop_map(Line::Data),
        1 => value.prop_map(Line::Id),
        1 => value.prop_map(Line::Event),
        1 => Just(Line::Retry),
        1 => value.prop_map(Line::Comment),
        1 => Just(Line::Unknown),
        3 => Just(Line::Blank),
    ]
}

fn sse_body_strategy() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        prop::collection::vec((line_strategy(), 0u8..3, any::<bool>()), 0..40),
        prop::collection::vec(any::<u8>(), 0..4),
    )
        .prop_map(|(bom, lines, tail)| {
            let mut out = Vec::new();
            if bom {
                out.extend_from_slice(b"\xEF\xBB\xBF");
            }
            for (line, end, no_space) in lines {
                let sp = if no_space { "" } else { " " };
                let text = match line {
                    Line::Data(v) => format!("data:{sp}{v}"),
                    Line::Id(v) => format!("id:{sp}{v}"),
                    Line::Event(v) => format!("event:{sp}{v}"),
                    Line::Retry => "retry: 100".into(),
                    Line::Comment(v) => format!(":{v}"),
                    Line::Unknown => "foo: bar".into(),
                    Line::Blank => String::new(),
                };
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(match end {
                    0 => b"\n".as_slice(),
                    1 => b"\r".as_slice(),
                    _ => b"\r\n".as_slice(),
                });
            }
            // Arbitrary trailing bytes: an unfinished line, maybe invalid UTF-8.
            out.extend_from_slice(&tail);
            out
        })
}

/// Everything a decoder says about a body fed in the given pieces.
fn decode(body: &[u8], cuts: &[usize], limit: usize) -> (Vec<SseItem>, Option<String>, u64, bool) {
    let mut d = SseDecoder::with_max_event_bytes(limit);
    let mut out = Vec::new();
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    points.sort_unstable();
    let mut at = 0;
    for p in points {
        d.push_into(&body[at..p], &mut out);
        at = p;
    }
    d.push_into(&body[at..], &mut out);
    let cut = d.finish();
    (
        out,
        d.last_event_id().map(str::to_string),
        d.events_dispatched(),
        cut,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Structured streams (every line end, BOM, comments, ids, retry, unknown fields, an
    /// unfinished tail), split anywhere, with the default limit and with a tiny one (which
    /// exercises the oversized-event path): the same events, ids and cut report.
    #[test]
    fn splitting_sse_bytes_anywhere_never_changes_decoded_events(
        body in sse_body_strategy(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        small in 4usize..40,
    ) {
        for limit in [agent_chat_store::DEFAULT_MAX_EVENT_BYTES, small] {
            let whole = decode(&body, &[], limit);
            prop_assert_eq!(&decode(&body, &cuts, limit), &whole);
            // Byte by byte, the worst split there is.
            let every: Vec<usize> = (0..body.len()).collect();
            prop_assert_eq!(decode(&body, &every, limit), whole);
        }
    }

    /// Arbitrary bytes (mostly SSE punctuation), split anywhere.
    #[test]
    fn splitting_arbitrary_bytes_anywhere_never_changes_decoded_events(
        body in prop::collection::vec(
            prop_oneof![
                Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(0xEF), Just(0xBB),
                Just(0xBF), Just(b'd'), Just(b'a'), Just(b't'), Just(b'i'), any::<u8>()
            ],
            0..200,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
        small in 2usize..24,
    ) {
        let mut body = body;
        // Often a real field name, so events do get dispatched.
        if body.len() > 8 && body[0] % 2 == 0 {
            body.splice(0..0, b"data:".iter().copied());
        }
        for limit in [agent_chat_store::DEFAULT_MAX_EVENT_BYTES, small] {
            let whole = decode(&body, &[], limit);
            prop_assert_eq!(decode(&body, &cuts, limit), whole);
        }
    }
}

// ===== the follow-up queue ===================================================================

#[derive(Debug, Clone)]
enum QOp {
    Enqueue,
    Poll,
    /// Answer the request in flight (or, with `stale`, the last ticket that is no longer).
    Answer {
        outcome: u8,
        stale: bool,
    },
    Abort,
    Remove(usize),
    Retry(usize),
    ConsumeNonce(usize),
    ConsumeSeq(usize),
    ConsumeOldest,
    MarkStalled,
    TakeFirstUnposted,
    Take(usize),
    Advance(u64),
}

fn qop_strategy() -> impl Strategy<Value = QOp> {
    prop_oneof![
        4 => Just(QOp::Enqueue),
        5 => Just(QOp::Poll),
        5 => (0u8..9, prop::bool::weighted(0.15)).prop_map(|(outcome, stale)| QOp::Answer { outcome, stale }),
        1 => Just(QOp::Abort),
        1 => any::<usize>().prop_map(QOp::Remove),
        2 => any::<usize>().prop_map(QOp::Retry),
        1 => any::<usize>().prop_map(QOp::ConsumeNonce),
        1 => any::<usize>().prop_map(QOp::ConsumeSeq),
        1 => Just(QOp::ConsumeOldest),
        1 => Just(QOp::MarkStalled),
        1 => Just(QOp::TakeFirstUnposted),
        1 => any::<usize>().prop_map(QOp::Take),
        3 => (0u64..20_000).prop_map(QOp::Advance),
    ]
}

fn outcome(code: u8) -> PostOutcome {
    let conflict = |m: &str| {
        PostOutcome::Failed(ChatError::from_http(
            409,
            json!({"error": {"code": "conflict", "message": m}})
                .to_string()
                .as_bytes(),
        ))
    };
    match code {
        0 => PostOutcome::Accepted { duplicate: false },
        1 => PostOutcome::Accepted { duplicate: true },
        2 => PostOutcome::Deleted,
        3 => PostOutcome::Failed(ChatError::network("reset")),
        4 => PostOutcome::Failed(ChatError::from_http(503, b"")),
        5 => conflict("followup_session_not_ready"),
        6 => conflict("followup_out_of_order"),
        7 => conflict("followup_unsupported"),
        _ => PostOutcome::Aborted,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Under any operation sequence: at most one item `posting`, only while a request is in
    /// flight, and nothing more is handed out meanwhile; an item keeps its nonce (and id) for
    /// its whole life, every request carries its item's nonce, nonces are never shared, and
    /// seq order is queue order.
    #[test]
    fn the_follow_up_queue_never_has_two_in_flight_nor_changes_a_nonce(
        ops in prop::collection::vec(qop_strategy(), 1..120),
        seed in any::<u64>(),
    ) {
        let mut q = FollowUpQueue::new(RetryPolicy { max_attempts: 3, base_delay_ms: 100, max_delay_ms: 1_000 });
        let mut rng = SeededRandom(seed);
        let mut now = T0;
        let mut nonce_of: HashMap<String, String> = HashMap::new();
        let mut current: Option<u64> = None;
        let mut stale: Option<u64> = None;
        let pick = |q: &FollowUpQueue, i: usize| (!q.items().is_empty()).then(|| q.items()[i % q.items().len()].clone());
        for op in ops {
            match op {
                QOp::Enqueue => {
                    let item = q.enqueue("t".into(), Vec::new(), now, &mut rng).clone();
                    prop_assert!(nonce_of.insert(item.id.clone(), item.client_nonce.clone()).is_none());
                    prop_assert_eq!(item.id, format!("fu-{}", item.client_nonce));
                }
                QOp::Poll => {
                    let in_flight = q.in_flight();
                    if let Some(post) = q.poll_request(now) {
                        prop_assert!(in_flight.is_none(), "a second request while one is in flight");
                        prop_assert_eq!(&nonce_of[&post.item_id], &post.client_nonce);
                        if let Some(t) = current.replace(post.ticket) {
                            stale = Some(t);
                        }
                    }
                }
                QOp::Answer { outcome: code, stale: use_stale } => {
                    let ticket = if use_stale { stale } else { current };
                    if let Some(t) = ticket {
                        q.handle_response(t, outcome(code), now, 0.5);
                        if Some(t) == current {
                            current = None;
                            stale = Some(t);
                        }
                    }
                }
                QOp::Abort => {
                    if let Some(t) = q.abort_in_flight() {
                        prop_assert_eq!(Some(t), current);
                        current = None;
                        stale = Some(t);
                    }
                }
                QOp::Remove(i) => { if let Some(it) = pick(&q, i) { q.remove(&it.id); } }
                QOp::Retry(i) => { if let Some(it) = pick(&q, i) { q.retry(&it.id, now); } }
                QOp::ConsumeNonce(i) => { if let Some(it) = pick(&q, i) { q.consume_by_nonce(&it.client_nonce); } }
                QOp::ConsumeSeq(i) => { if let Some(it) = pick(&q, i) { q.consume_by_seq(it.client_seq); } }
                QOp::ConsumeOldest => { q.consume_oldest_posted(); }
                QOp::MarkStalled => {
                    q.strand(false);
                }
                QOp::TakeFirstUnposted => {
                    if let Some(it) = q.take_first_unposted() {
                        prop_assert!(!it.ever_posted);
                    }
                }
                QOp::Take(i) => { if let Some(it) = pick(&q, i) { q.take(&it.id); } }
                QOp::Advance(ms) => now += ms,
            }
            // The request in flight keeps its slot until its answer, even when its item left
            // (consumed, removed, taken): never a second POST beside it.
            prop_assert_eq!(q.in_flight(), current);
            let posting = q.items().iter().filter(|i| i.state == ItemState::Posting).count();
            prop_assert!(posting <= 1, "{} items posting", posting);
            prop_assert!(posting <= usize::from(q.in_flight().is_some()));
            if q.in_flight().is_some() {
                prop_assert!(q.poll_request(u64::MAX).is_none());
                prop_assert_eq!(q.poll_timeout(), None);
            }
            let mut seen = HashSet::new();
            for item in q.items() {
                prop_assert_eq!(&nonce_of[&item.id], &item.client_nonce, "a nonce changed");
                prop_assert!(seen.insert(item.client_nonce.clone()), "a nonce is shared");
            }
            prop_assert!(q.items().windows(2).all(|w| w[0].client_seq < w[1].client_seq));
        }
    }
}

// ===== the store: one follow-up POST out per queue ==========================================

#[derive(Debug, Clone)]
enum SOp {
    Submit,
    /// Answer one open follow-up POST with outcome n (a stale one when several are open).
    Answer(u8, usize),
    Fail(usize),
    Advance(u64),
    Consume(usize),
    Remove(usize),
    Retry(usize),
    Switch,
    EndTurn,
    Send,
}

fn sop_strategy() -> impl Strategy<Value = SOp> {
    prop_oneof![
        5 => Just(SOp::Submit),
        6 => (0u8..8, any::<usize>()).prop_map(|(o, i)| SOp::Answer(o, i)),
        2 => any::<usize>().prop_map(SOp::Fail),
        3 => (0u64..40_000).prop_map(SOp::Advance),
        2 => any::<usize>().prop_map(SOp::Consume),
        1 => any::<usize>().prop_map(SOp::Remove),
        1 => any::<usize>().prop_map(SOp::Retry),
        1 => Just(SOp::Switch),
        1 => Just(SOp::EndTurn),
        2 => Just(SOp::Send),
    ]
}

fn answer_reply(code: u8) -> Reply {
    match code {
        0 => Reply::json(202, json!({"queued": true})),
        1 => Reply::json(202, json!({"queued": true, "duplicate": true})),
        2 => Reply::json(202, json!({"queued": false, "deleted": true})),
        3 => Reply::status(503),
        4 => Reply::error(409, "conflict", "followup_session_not_ready"),
        5 => Reply::error(409, "conflict", "followup_out_of_order"),
        6 => Reply::network("reset"),
        _ => Reply::error(400, "validation_error", "nope"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whatever the user, the server and the clock do, the store never has two follow-up
    /// POSTs out for items it still shows, and an item's nonce never changes, also in the
    /// requests.
    #[test]
    fn the_store_never_has_two_follow_up_posts_out(ops in prop::collection::vec(sop_strategy(), 1..80)) {
        let mut h = Harness::with_caps(PI_CAPS);
        let mut nonce_of: HashMap<String, String> = HashMap::new();
        let mut counter = 0;
        let mut seq = 100u64;
        let mut started: HashSet<u64> = HashSet::new();
        for op in ops {
            let open_posts: Vec<Sent> =
                h.open(RequestKind::FollowUpPost).into_iter().cloned().collect();
            // The stream of the running turn: the chat POST or its resume.
            let stream = h
                .sent
                .iter()
                .filter(|r| matches!(r.kind, RequestKind::Chat | RequestKind::StreamResume))
                .map(|r| r.id)
                .filter(|id| h.open(RequestKind::Chat).iter().chain(h.open(RequestKind::StreamResume).iter()).any(|r| r.id == *id))
                .max();
            match op {
                SOp::Submit | SOp::Send => {
                    counter += 1;
                    h.submit(&format!("m{counter}"));
                    if let Some(item) = h.store.session().queued().last() {
                        nonce_of.entry(item.id.clone()).or_insert(item.client_nonce.clone());
                    }
                }
                SOp::Answer(code, i) => {
                    if !open_posts.is_empty() {
                        let p = &open_posts[i % open_posts.len()];
                        h.respond(p.id, answer_reply(code));
                    }
                }
                SOp::Fail(i) => {
                    if !open_posts.is_empty() {
                        let p = &open_posts[i % open_posts.len()];
                        h.respond(p.id, Reply::network("reset"));
                    }
                }
                SOp::Advance(ms) => h.advance(ms),
                SOp::Consume(i) => {
                    let q = h.store.session().queued();
                    if let (false, Some(stream)) = (q.is_empty(), stream) {
                        let item = q[i % q.len()].clone();
                        seq += 1;
                        let c = sse(&[json!({"type": "data-pi-message-start", "data": {
                            "seq": seq, "messageId": format!("srv-{seq}"), "role": "user",
                            "clientNonce": item.client_nonce, "text": item.text}})]);
                        h.body(stream, &c);
                    }
                }
                SOp::Remove(i) => {
                    let q = h.store.session().queued();
                    if !q.is_empty() {
                        let id = q[i % q.len()].id.clone();
                        h.act(|s, now| s.follow_ups_mut().remove(&id, now));
                    }
                }
                SOp::Retry(i) => {
                    let q = h.store.session().queued();
                    if !q.is_empty() {
                        let id = q[i % q.len()].id.clone();
                        h.retry_queued(&id);
                    }
                }
                SOp::Switch => {
                    let next = if h.store.session().id() == SESSION { "T" } else { SESSION };
                    h.switch_session(next);
                }
                SOp::EndTurn => {
                    if let Some(stream) = stream {
                        h.body(stream, DONE);
                        h.end(stream);
                    }
                }
            }
            // New streams get their head (and a chat its first event) at once.
            let fresh: Vec<Sent> = h
                .open(RequestKind::Chat)
                .into_iter()
                .chain(h.open(RequestKind::StreamResume))
                .filter(|r| !started.contains(&r.id))
                .cloned()
                .collect();
            for r in fresh {
                started.insert(r.id);
                let body = if r.kind == RequestKind::Chat {
                    sse(&[json!({"type": "data-turn-start", "data": {"turnId": format!("t{}", r.id)}})])
                } else {
                    Vec::new()
                };
                h.respond(r.id, Reply::sse(body).open());
            }
            let q = h.store.session().queued();
            let held: HashSet<&str> = q.iter().map(|i| i.client_nonce.as_str()).collect();
            let out = h
                .open(RequestKind::FollowUpPost)
                .into_iter()
                .filter(|r| held.contains(r.client_nonce()))
                .count();
            prop_assert!(out <= 1, "{} follow-up POSTs out", out);
            for item in q {
                if let Some(n) = nonce_of.get(&item.id) {
                    prop_assert_eq!(n, &item.client_nonce);
                }
            }
            for r in h.requests(RequestKind::FollowUpPost) {
                let item_id = format!("fu-{}", r.client_nonce());
                if let Some(n) = nonce_of.get(&item_id) {
                    prop_assert_eq!(n.as_str(), r.client_nonce());
                }
            }
        }
    }
}
