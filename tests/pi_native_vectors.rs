//! The rest of the upstream client's conformance vectors (`vectors-sample.json`, reference
//! §16), each test named after the vector's `source`. The upstream fields map onto this store:
//! `committedMessages` / `streamingMessage` / `$render` ≈ the history's messages, `lastSeq` ≈
//! the cursor (`NativeSession::seq`, or the `cursor` of the next `…/events` the store asks
//! for), `queue.followUps` / `$queuePreview` ≈ `queued()`, the optimistic outbox ≈ the store's
//! pending user send, `$requests` ≈ the requests the store made (paths: the base URL and the
//! headers are the host's fetch's). An upstream row's parts are this store's parts without
//! the `step-start` parts between an answer's steps (upstream's rows have none).
//!
//! Not run, deliberately: `remotePiSession.test.ts:725` checks the session's `currentModel`
//! after a prompt that chose a model: choosing a model is not a feature of this store.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{
    parse_native_state, replay_pi_native_events, ChunkInput, Method, RequestKind, RunStatus,
    Status, StoreOptions, SubmitKind,
};
use common::native_store::{feed, following, run_started};
use common::vectors::{frame, messages, session_after, vector};
use common::*;
use serde_json::{json, Value};

/// The `expect` checkpoints of a vector's steps, then its final `expect`.
fn expects(v: &Value, steps: &str) -> Vec<Value> {
    let mut out: Vec<Value> = v[steps]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["$step"] == "expect")
        .map(|s| s["expect"].clone())
        .collect();
    out.push(v["expect"].clone());
    out
}

// ----- reducer vectors -------------------------------------------------------------------------

#[test]
fn stale_state_is_ignored_before_any_hydrate_pi_chat_reducer_test_ts_379() {
    let v = vector("piChatReducer.test.ts:379");
    let ev = &v["events"];
    let (mut s, _) = session_after(&[ev[0].clone()]);
    let revision = s.history().revision();
    let doc = parse_native_state(json!({"state": ev[1]["snapshot"]})).unwrap();
    assert!(
        !s.apply_state(doc, false),
        "the state is older than the cursor"
    );
    let x = &v["expect"];
    // `$unchanged`: nothing moved.
    assert_eq!(s.history().revision(), revision);
    assert_eq!(s.seq(), x["lastSeq"].as_u64().unwrap());
    assert_eq!(s.turn_id(), x["turnId"].as_str());
    assert_eq!(
        (x["status"].as_str(), s.status()),
        (Some("streaming"), RunStatus::Running)
    );
}

#[test]
fn stale_state_read_by_the_store_is_ignored_pi_chat_reducer_test_ts_379() {
    // The same vector through the store: its events stream applied seq 1, then a state read
    // (after a gap) answers with a state older than that.
    let v = vector("piChatReducer.test.ts:379");
    let (mut h, ev) = following(0);
    feed(&mut h, ev, &[v["events"][0].clone()]);
    feed(
        &mut h,
        ev,
        &[json!({"type": "message-start", "seq": 3, "messageId": "a1", "role": "assistant"})],
    );
    let st = h.the_open(RequestKind::NativeState);
    let snapshot = &v["events"][1]["snapshot"];
    h.respond(
        st.id,
        Reply::json(200, json!({"ref": {}, "state": snapshot})),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.store.session().turn_id(), v["expect"]["turnId"].as_str());
    let again = h.the_open(RequestKind::NativeEvents);
    assert_eq!(
        again.path,
        format!("{}/events?cursor=1", common::native_store::BASE),
        "the cursor stays at the last applied seq"
    );
}

#[test]
fn created_at_is_backfilled_by_a_late_message_start_pi_chat_reducer_test_ts_1300() {
    let v = vector("piChatReducer.test.ts:1300");
    let (mut s, _) = session_after(v["events"].as_array().unwrap());
    let want = &v["expect"]["streamingMessage"]["$match"];
    let m = messages(&s);
    assert_eq!(m.as_array().unwrap().len(), 1, "{m:#}");
    assert_eq!(m[0]["id"], want["id"]);
    assert_eq!(m[0]["metadata"]["createdAt"], want["createdAt"], "{m:#}");
    assert_eq!(
        m[0]["parts"][0]["text"], "Hello",
        "the placeholder's text is kept"
    );
    // Beyond the vector: the message's final, which has no `createdAt`, does not drop it.
    let end = json!({"type": "message-end", "seq": 4, "messageId": "a1", "final": {"id": "a1", "role": "assistant", "status": "done", "parts": [{"type": "text", "text": "Hello"}]}});
    s.apply(frame(end), &mut Vec::new());
    let m = messages(&s);
    assert_eq!(m[0]["metadata"]["status"], "done");
    assert_eq!(m[0]["metadata"]["createdAt"], want["createdAt"], "{m:#}");
}

/// A row's parts as upstream's row lists them: without the `step-start` parts.
fn upstream_parts(m: &Value) -> Vec<Value> {
    m["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] != "step-start")
        .cloned()
        .collect()
}

/// Upstream's part type for one of this store's parts.
fn upstream_type(p: &Value) -> &str {
    match p["type"].as_str().unwrap() {
        t if t.starts_with("tool-") => "tool-call",
        t => t,
    }
}

#[test]
fn final_text_that_is_a_substring_is_kept_pi_chat_reducer_test_ts_1397() {
    let v = vector("piChatReducer.test.ts:1397");
    let (s, _) = session_after(v["events"].as_array().unwrap());
    let m = messages(&s);
    assert_eq!(
        m.as_array().unwrap().len(),
        v["expect"]["committedMessages"]["$length"]
            .as_u64()
            .unwrap() as usize,
        "one row for the turn's answer: {m:#}"
    );
    let parts = upstream_parts(&m[0]);
    let texts: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "text")
        .map(|p| &p["text"])
        .collect();
    let want: Vec<&Value> = v["expect"]["committedMessages[0].parts[type=text]"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["text"])
        .collect();
    assert_eq!(texts, want);
}

#[test]
fn adjacent_answers_of_one_turn_are_one_row_pi_chat_reducer_test_ts_1191() {
    let v = vector("piChatReducer.test.ts:1191");
    let events = v["events"].as_array().unwrap();
    let (s, _) = session_after(events);
    let x = &v["expect"];
    let m = messages(&s);
    assert_eq!(
        m.as_array().unwrap().len(),
        x["committedMessages"]["$length"].as_u64().unwrap() as usize,
        "{m:#}"
    );
    assert_eq!(m[0]["id"], x["committedMessages[0].id"]);
    let parts = upstream_parts(&m[0]);
    let types: Vec<&str> = parts.iter().map(upstream_type).collect();
    assert_eq!(json!(types), x["committedMessages[0].parts[*].type"]);
    let want = &x["committedMessages[0].parts"]["$contains"]["$partial"];
    let tool = parts
        .iter()
        .find(|p| p["toolCallId"] == want["id"])
        .unwrap();
    assert_eq!(tool["state"], want["state"]);
    // The store's tool output is the result's `content`.
    assert_eq!(tool["output"], want["output"]["content"]);
    let frames: Vec<String> = events.iter().map(common::vectors::wire).collect();
    let r = replay_pi_native_events(frames.iter().map(|f| ChunkInput::Text(f)), None).unwrap();
    assert_eq!(
        r.messages,
        s.messages(),
        "replayPiNativeEvents shows the same"
    );
}

#[test]
fn a_states_split_answer_is_one_row_pi_chat_reducer_test_ts_198() {
    let v = vector("piChatReducer.test.ts:198");
    let doc = json!({"state": v["events"][0]["snapshot"]});
    let r = replay_pi_native_events(Vec::<ChunkInput>::new(), Some(doc.clone())).unwrap();
    let mut s = agent_chat_store::NativeSession::new();
    assert!(s.apply_state(parse_native_state(doc).unwrap(), false));
    assert_eq!(
        r.messages,
        s.messages(),
        "replayPiNativeEvents shows the same"
    );
    let x = &v["expect"];
    let m = messages(&s);
    assert_eq!(
        m.as_array().unwrap().len(),
        x["committedMessages"]["$length"].as_u64().unwrap() as usize,
        "{m:#}"
    );
    assert_eq!(m[0]["id"], x["committedMessages[0].id"]);
    assert_eq!(
        m[0]["metadata"]["createdAt"], x["committedMessages[0].createdAt"],
        "the earliest"
    );
    let parts = upstream_parts(&m[0]);
    let types: Vec<&str> = parts.iter().map(upstream_type).collect();
    assert_eq!(json!(types), x["committedMessages[0].parts[*].type"]);
}

#[test]
fn duplicate_final_tool_ids_are_one_part_pi_chat_reducer_test_ts_2094() {
    let v = vector("piChatReducer.test.ts:2094");
    let (s, _) = session_after(v["events"].as_array().unwrap());
    let m = messages(&s);
    let tools: Vec<&Value> = m[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "tool-bash")
        .collect();
    let want = &v["expect"]["committedMessages[0].parts[type=tool-call]"][0];
    assert_eq!(tools.len(), 1, "{m:#}");
    assert_eq!(tools[0]["toolCallId"], want["id"]);
    assert_eq!(tools[0]["input"], want["input"], "the first copy's input");
    assert_eq!(tools[0]["state"], want["state"], "the settled copy's state");
    // The store's tool output is the result's `content`.
    assert_eq!(tools[0]["output"], want["output"]["content"]);
    // `pendingToolCallIds` is empty: no tool part waits for its result.
    assert!(m[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["state"] != "input-available"));
    assert_eq!(
        m[0]["parts"].as_array().unwrap().last().unwrap()["text"],
        "done"
    );
}

#[test]
fn selector_free_queue_rows_keep_the_follow_up_and_the_prompt_pi_chat_reducer_queue_test_ts_86() {
    // The optimistic prompt is this store's pending send (its run started, its user message
    // not yet committed, so a follow-up may go); the optimistic follow-up is the item the
    // store queued and posted. The seqs are the vector's, after the run's `agent-start`.
    let v = vector("piChatReducer.queue.test.ts:86");
    let steps = v["events"].as_array().unwrap();
    let text = steps[0]["message"]["parts"][0]["text"].as_str().unwrap();
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, text);
    assert_eq!(h.send(text).kind, SubmitKind::Queued);
    let post = h.the_open(RequestKind::FollowUpPost);
    let (nonce, seq) = (post.client_nonce().to_string(), post.client_seq());
    h.respond(
        post.id,
        Reply::json(
            202,
            json!({"accepted": true, "queued": true, "clientNonce": nonce, "clientSeq": seq}),
        ),
    );
    let updates: Vec<Value> = steps
        .iter()
        .filter(|s| s["type"] == "queue-updated")
        .map(|s| {
            let mut s = s.clone();
            s["seq"] = json!(s["seq"].as_u64().unwrap() + 1);
            s
        })
        .collect();
    for (update, x) in updates.iter().zip(expects(&v, "events")) {
        feed(&mut h, ev, std::slice::from_ref(update));
        // `queue.followUps`: the one row, which is this store's follow-up.
        let row = &x["queue.followUps"][0];
        let q = h.store.session().queued();
        assert_eq!(q.len(), 1, "{q:#?}");
        assert_eq!(q[0].text, row["displayText"].as_str().unwrap());
        assert_eq!(
            (q[0].client_nonce.as_str(), q[0].client_seq),
            (nonce.as_str(), seq)
        );
        // `optimisticOutbox` keeps the prompt: its message is still shown.
        assert_eq!(x["optimisticOutbox.$keys"], json!(["prompt-nonce"]));
        let m = h.history();
        assert_eq!(m.len(), 1, "{m:#?}");
        assert_eq!(
            (m[0]["role"].as_str(), m[0]["parts"][0]["text"].as_str()),
            (Some("user"), Some(text))
        );
    }
}

// ----- session vectors -------------------------------------------------------------------------

/// A store for the vector's `client`: its agent type and session, no other request first.
fn client(v: &Value) -> Harness {
    let c = &v["client"];
    let mut o = StoreOptions::new(c["sessionId"].as_str().unwrap());
    o.hydrate = false;
    o.stream_idle_timeout_ms = None;
    o.pi_native = Some(c["agentTypeId"].as_str().unwrap().into());
    Harness::new(o)
}

/// `frames` on the wire, in envelopes addressed to the vector's client's session (its agent
/// type and id).
fn addressed(v: &Value, frames: &[Value]) -> Vec<u8> {
    let at =
        json!({"agentTypeId": v["client"]["agentTypeId"], "sessionId": v["client"]["sessionId"]});
    let wrap = |e: &Value| json!({"ref": at, "seq": e["seq"], "event": e}).to_string() + "\n";
    frames.iter().map(wrap).collect::<String>().into_bytes()
}

/// The requests the store made, less its take-backs: a follow-up the server holds while no
/// run is on is taken back with `POST …/queue/clear` (SPEC §6, "no reordering"), a request
/// the upstream client does not make.
fn made(h: &Harness) -> Vec<Sent> {
    let take_back =
        |r: &Sent| r.kind == RequestKind::FollowUpDelete && r.path.ends_with("/queue/clear");
    h.sent.iter().filter(|r| !take_back(r)).cloned().collect()
}

/// Plays a session vector's script: each `$http` step is the next request the store made
/// (method, and URL less the client's `apiBaseUrl`), answered as scripted; each `$frame` goes to
/// the stream opened last; at each `expect` checkpoint (and at the end) `check` runs with the
/// checkpoint's index and expectations.
fn play(v: &Value, mut check: impl FnMut(&mut Harness, usize, &Value)) {
    let base = v["client"]["apiBaseUrl"].as_str().unwrap();
    let mut h = client(v);
    let (mut next, mut stream, mut checkpoint) = (0, None, 0);
    for step in v["steps"].as_array().unwrap() {
        if let Some(want) = step.get("$http") {
            let r = made(&h)
                .get(next)
                .cloned()
                .unwrap_or_else(|| panic!("no request for step {step}; made: {:#?}", h.sent));
            next += 1;
            let method = match want["method"].as_str() {
                Some("GET") => Method::Get,
                _ => Method::Post,
            };
            assert_eq!(r.method, method, "{step}: {:#?}", h.sent);
            let body = ["body", "bodyMatch"].iter().any(|k| want.get(k).is_some());
            assert!(
                !body,
                "this runner does not check request bodies yet: {step}"
            );
            assert_eq!(
                Some(r.path.as_str()),
                want["url"].as_str().unwrap().strip_prefix(base)
            );
            let answer = &step["respond"];
            let status = answer["status"].as_u64().unwrap() as u16;
            match answer.get("ndjson") {
                Some(frames) => {
                    let body = addressed(v, frames.as_array().unwrap());
                    h.respond(
                        r.id,
                        Reply::bytes(status, Some("application/x-ndjson"), body).open(),
                    );
                    stream = Some(r.id);
                }
                None => {
                    h.respond(r.id, Reply::json(status, answer["json"].clone()));
                }
            }
        } else if let Some(f) = step.get("$frame") {
            let stream = stream.expect("an open stream");
            h.body(stream, &addressed(v, std::slice::from_ref(f)));
        } else if step["$step"] == "expect" {
            check(&mut h, checkpoint, &step["expect"]);
            checkpoint += 1;
        } else {
            panic!("a step this runner does not play: {step}");
        }
    }
    assert_eq!(
        made(&h).len(),
        next,
        "no request beyond the script: {:#?}",
        &made(&h)[next..]
    );
    check(&mut h, checkpoint, &v["expect"]);
}

/// `lastSeq`, as the store shows it: the cursor of the events stream it opens when the one
/// open now breaks (the store's reconnect; the stream is then answered, empty and open).
fn cursor_after_reconnect(h: &mut Harness) -> u64 {
    let open = h.the_open(RequestKind::NativeEvents).id;
    h.fail(open, "connection reset");
    h.advance(30_000);
    let again = h.the_open(RequestKind::NativeEvents);
    h.respond(
        again.id,
        Reply::bytes(200, Some("application/x-ndjson"), Vec::new()).open(),
    );
    let (_, cursor) = again.path.split_once("?cursor=").unwrap();
    cursor.parse().unwrap()
}

#[test]
fn active_reload_hydrates_then_follows_from_the_states_seq_remote_pi_session_test_ts_138() {
    let v = vector("remotePiSession.test.ts:138");
    let base = v["client"]["apiBaseUrl"].as_str().unwrap().to_string();
    play(&v, |h, i, x| match i {
        0 => {
            assert!(h.store.session().hydrated());
            assert_eq!(
                (x["status"].as_str(), h.store.status()),
                (Some("streaming"), Status::Streaming)
            );
            assert_eq!(h.store.session().turn_id(), x["turnId"].as_str());
            assert_eq!(
                h.history().len(),
                x["committedMessages"]["$length"].as_u64().unwrap() as usize
            );
            let q = h.store.session().queued();
            assert_eq!(q.len(), 1, "{q:#?}");
            assert_eq!(
                q[0].text,
                x["queue.followUps"][0]["$partial"]["displayText"]
                    .as_str()
                    .unwrap()
            );
            let urls: Vec<String> = made(h)
                .iter()
                .map(|r| format!("{base}{}", r.path))
                .collect();
            assert_eq!(json!(urls), x["$requests[*].url"]);
            assert!(x["lastSeq"] == 42 && urls[1].ends_with("cursor=42"));
        }
        _ => {
            let want = &x["streamingMessage"]["$match"];
            let last = h.history().last().cloned().unwrap();
            assert_eq!((&last["id"], &last["role"]), (&want["id"], &want["role"]));
            assert_eq!(h.store.status(), Status::Streaming);
            assert_eq!(cursor_after_reconnect(h), x["lastSeq"].as_u64().unwrap());
        }
    });
}

#[test]
fn cursor_ahead_reads_the_state_again_and_takes_its_lower_seq_remote_pi_session_test_ts_308() {
    let v = vector("remotePiSession.test.ts:308");
    play(&v, |h, _, x| {
        assert!(h.store.session().hydrated());
        // `status: idle`: the run the first state said was on is over here too. The state
        // still lists a follow-up (`nonce-q`) that no run will take. This store did not post
        // it (SPEC §14.1: another client's, or this page's before a reload): it is shown,
        // read-only, and left to the server, as upstream leaves it waiting.
        assert_eq!(x["status"], "idle");
        assert_eq!(h.store.status(), Status::Ready);
        assert_eq!(
            h.count(RequestKind::FollowUpDelete),
            0,
            "not this store's to take back"
        );
        let q = h.store.session().queued();
        assert_eq!(
            (q.len(), q[0].client_nonce.as_str(), q[0].read_only),
            (1, "nonce-q", true)
        );
        // `committedMessages`: the state's, replacing the first state's.
        let m = h.history();
        let want = &x["committedMessages"];
        assert_eq!(m.len(), want.as_array().unwrap().len(), "{m:#?}");
        assert_eq!(m[0]["id"], want[0]["$partial"]["id"]);
        assert_eq!(
            m[0]["parts"][0]["text"],
            want[0]["$partial"]["parts"][0]["$partial"]["text"]
        );
        assert_eq!(cursor_after_reconnect(h), x["lastSeq"].as_u64().unwrap());
    });
}
