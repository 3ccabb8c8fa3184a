//! Opening a session whose turn is still running (SPEC §12): a reload, a second tab or a
//! switch back shows the turn running, its answer streams on from where it is, stop and
//! follow-ups work, and nothing appears twice: with and without the history's `activeTurn`,
//! with the history's ids or others, with the history holding the turn or not, a turn that
//! ends between the two answers, a switch during the attach, and in AI SDK mode.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{Method, RequestKind, Status, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

const STREAM: &str = "/api/v1/agent/chat/S/stream";

fn texts(h: &Harness) -> Vec<String> {
    h.store.messages().iter().map(|m| m.text()).collect()
}

fn ids(h: &Harness) -> Vec<String> {
    h.store.messages().iter().map(|m| m.id.clone()).collect()
}

fn user(id: &str, text: &str) -> Value {
    json!({"id": id, "role": "user", "parts": [{"type": "text", "text": text}]})
}

fn assistant(id: &str, text: &str) -> Value {
    json!({"id": id, "role": "assistant", "parts": [{"type": "text", "text": text, "state": "done"}]})
}

/// A pi turn `t1` (user `u1` "hi", assistant `a1` "Hello there.") as a server streams it
/// from its start, the deltas cut where `upto` says (0: up to the user message's end).
fn pi_turn(upto: usize) -> Vec<Value> {
    let mut c = vec![
        json!({"type": "data-turn-start", "data": {"turnId": "t1"}}),
        pi_chunk(
            "message-start",
            1,
            json!({"messageId": "u1", "role": "user", "text": "hi"}),
        ),
        pi_chunk(
            "message-end",
            2,
            json!({"messageId": "u1", "role": "user", "text": "hi"}),
        ),
        pi_chunk(
            "message-start",
            3,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi_chunk("text-start", 4, json!({"messageId": "a1", "partId": "0"})),
    ];
    for (i, d) in ["Hello", " there", "."].iter().enumerate().take(upto) {
        c.push(pi_chunk(
            "text-delta",
            5 + i as u64,
            json!({"messageId": "a1", "partId": "0", "delta": d}),
        ));
    }
    c
}

fn pi_turn_end() -> Vec<u8> {
    let mut b = sse(&[
        pi_chunk(
            "text-end",
            8,
            json!({"messageId": "a1", "partId": "0", "text": "Hello there."}),
        ),
        pi_chunk(
            "message-end",
            9,
            json!({"messageId": "a1", "role": "assistant", "text": "Hello there."}),
        ),
    ]);
    b.extend_from_slice(DONE);
    b
}

/// A fresh pi session whose first turn ("hi") streams: the store and its chat request.
fn sending_hi() -> (Harness, agent_chat_store::RequestId) {
    let mut h = reloaded(json!({"messages": [], "activeTurn": null}));
    h.send("hi");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(sse(&pi_turn(1))).open());
    (h, chat)
}

/// A reloaded pi store whose history answer is `answer`.
fn reloaded(answer: Value) -> Harness {
    let mut h = hydrating(PI_CAPS);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(get, Reply::json(200, answer));
    h
}

#[cfg(feature = "pi")]
#[test]
fn active_turn_in_the_history_attaches_at_once_and_duplicates_nothing() {
    // The history holds the turn's user message and the answer so far, under the stream's ids.
    let mut h = reloaded(json!({
        "messages": [user("u0", "before"), assistant("a0", "earlier"), user("u1", "hi"),
                     assistant("a1", "Hello")],
        "activeTurn": {"turnId": "t1"},
    }));
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.store.session().turn_id(), Some("t1"));
    let attach = h.the_open(RequestKind::StreamResume);
    assert_eq!(attach.path, format!("{STREAM}?cursor=-1"));
    assert_eq!(attach.method, Method::Get);

    h.respond(attach.id, Reply::sse(sse(&pi_turn(2))).open());
    assert_eq!(ids(&h), ["u0", "a0", "u1", "a1"]);
    assert_eq!(texts(&h), ["before", "earlier", "hi", "Hello there"]);
    assert_eq!(h.store.status(), Status::Streaming);

    h.respond(attach.id, Reply::sse(pi_turn_end()));
    assert_eq!(texts(&h), ["before", "earlier", "hi", "Hello there."]);
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.errors().is_empty(), "{:?}", h.errors());
}

#[cfg(feature = "pi")]
#[test]
fn stop_and_follow_ups_work_on_an_attached_turn() {
    let mut h = reloaded(json!({"messages": [user("u1", "hi")], "activeTurn": {"turnId": "t1"}}));
    let attach = h.the_open(RequestKind::StreamResume).id;
    h.respond(attach, Reply::sse(sse(&pi_turn(1))).open());

    // A follow-up is posted to the running turn, not sent as a new one.
    assert_eq!(h.send("and more").kind, SubmitKind::Queued);
    let post = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(post.message(), "and more");
    assert_eq!(h.count(RequestKind::Chat), 0);
    h.respond(post.id, accepted());

    h.stop();
    assert!(h.aborted.contains(&attach));
    let del = h.the_open(RequestKind::TurnDelete);
    assert_eq!(del.path, "/api/v1/agent/chat/S/turn?turnId=t1");
    assert_eq!(h.store.status(), Status::Ready);
}

#[cfg(feature = "pi")]
#[test]
fn without_active_turn_the_stream_route_is_asked_once() {
    let mut h = reloaded(json!({"messages": [user("u0", "before"), assistant("a0", "done")]}));
    // Asked, but nothing shows as running until the server says a turn runs.
    let probe = h.the_open(RequestKind::StreamResume);
    assert_eq!(probe.path, format!("{STREAM}?cursor=-1"));
    assert_eq!(h.store.status(), Status::Ready);
    h.respond(probe.id, Reply::status(204));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(texts(&h), ["before", "done"]);
    assert_eq!(h.count(RequestKind::StreamResume), 1);
    assert_eq!(h.count(RequestKind::MessagesGet), 1);
    assert!(h.errors().is_empty());
}

#[cfg(feature = "pi")]
#[test]
fn active_turn_null_means_nothing_runs() {
    let h = reloaded(json!({"messages": [user("u0", "before")], "activeTurn": null}));
    assert_eq!(h.count(RequestKind::StreamResume), 0);
    assert_eq!(h.store.status(), Status::Ready);
}

#[cfg(feature = "pi")]
#[test]
fn the_attach_option_off_asks_nothing_until_resume_stream() {
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    opts.attach = false;
    let mut h = Harness::new(opts);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(200, json!({"messages": [], "activeTurn": {"turnId": "t1"}})),
    );
    assert_eq!(h.count(RequestKind::StreamResume), 0);
    assert_eq!(h.store.status(), Status::Ready);

    assert!(h.act(|s, now| s.turn_mut().resume_stream(now)));
    let probe = h.the_open(RequestKind::StreamResume);
    h.respond(probe.id, Reply::sse(sse(&pi_turn(3))).open());
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(texts(&h), ["hi", "Hello there."]);
    // Already following a turn: nothing more to attach to.
    assert!(!h.act(|s, now| s.turn_mut().resume_stream(now)));
}

/// The legacy server: no `activeTurn`, and history ids that differ from the streamed ones. A
/// reload after the follow-up was committed: the history holds the prompt, its answer and the
/// follow-up; the replay of the whole turn builds them again, once.
#[cfg(feature = "pi")]
#[test]
fn a_replay_under_other_ids_replaces_the_historys_copy_of_the_turn() {
    let canon = canonical_trace_history();
    let mut earlier = vec![
        user("old-u", "earlier question"),
        assistant("old-a", "earlier answer"),
    ];
    earlier.extend(canon[..3].iter().cloned());
    let mut h = reloaded(json!({ "messages": earlier }));
    let probe = h.the_open(RequestKind::StreamResume).id;
    let events = sse_events(&trace());
    let (head, tail) = events.split_at(events.len() - 6);
    h.respond(probe, Reply::sse(head.concat()).open());
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.store.session().turn_id(), Some("turn-trace-1"));
    for e in tail {
        h.body(probe, e);
    }
    h.end(probe);
    assert_eq!(h.store.status(), Status::Ready);
    let mut want = vec![
        user("old-u", "earlier question"),
        assistant("old-a", "earlier answer"),
    ];
    want.extend(canon.iter().cloned());
    assert_eq!(without_ids(&h.history()), without_ids(&want));
    assert_eq!(&ids(&h)[..2], ["old-u", "old-a"]);
}

/// The real server's history is `[]` until the first assistant message of the running turn
/// ends: the replay is the whole turn, added.
#[cfg(feature = "pi")]
#[test]
fn a_history_without_the_turn_gets_it_from_the_replay() {
    let mut h = reloaded(json!({ "messages": [] }));
    let probe = h.the_open(RequestKind::StreamResume).id;
    h.respond(probe, Reply::sse(trace()).chunked(300));
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}

/// The same text as the running turn's prompt earlier in the history: only the turn's own copy
/// (the newest) is replaced.
#[cfg(feature = "pi")]
#[test]
fn a_repeated_prompt_text_keeps_the_earlier_exchange() {
    let mut h = reloaded(json!({
        "messages": [user("h0", "hi"), assistant("h1", "first answer"), user("h2", "hi")],
    }));
    let probe = h.the_open(RequestKind::StreamResume).id;
    let mut body = sse(&pi_turn(3));
    body.extend(pi_turn_end());
    h.respond(probe, Reply::sse(body));
    assert_eq!(texts(&h), ["hi", "first answer", "hi", "Hello there."]);
    assert_eq!(ids(&h), ["h0", "h1", "u1", "a1"]);
}

#[cfg(feature = "pi")]
#[test]
fn a_turn_that_ended_between_the_two_answers_reloads_the_history() {
    let mut h = reloaded(json!({"messages": [user("u1", "hi")], "activeTurn": {"turnId": "t1"}}));
    let attach = h.the_open(RequestKind::StreamResume).id;
    h.respond(attach, Reply::status(204));
    assert_eq!(h.store.status(), Status::Ready);
    let again = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        again,
        Reply::json(
            200,
            json!({"messages": [user("u1", "hi"), assistant("a1", "Hello there.")],
                                "activeTurn": null}),
        ),
    );
    assert_eq!(texts(&h), ["hi", "Hello there."]);
    assert_eq!(h.count(RequestKind::StreamResume), 1);
    assert!(h.errors().is_empty());
}

#[cfg(feature = "pi")]
#[test]
fn a_switch_during_the_attach_attaches_again_on_the_way_back() {
    let mut h = reloaded(json!({"messages": [user("u1", "hi")], "activeTurn": {"turnId": "t1"}}));
    let attach = h.the_open(RequestKind::StreamResume).id;
    h.respond(attach, Reply::sse(sse(&pi_turn(1))).open());
    h.switch_session("other");
    assert!(h.aborted.contains(&attach));
    h.switch_session("S");
    // Parked mid-turn: resumed from where it was.
    let resume = h.the_open(RequestKind::StreamResume);
    assert_ne!(resume.id, attach);
    assert_eq!(h.store.status(), Status::Streaming);
    let mut rest = sse(&pi_turn(3)[5..]);
    rest.extend(pi_turn_end());
    h.respond(resume.id, Reply::sse(rest));
    assert_eq!(texts(&h), ["hi", "Hello there."]);
    assert_eq!(h.store.status(), Status::Ready);
}

#[cfg(feature = "pi")]
#[test]
fn sending_while_the_stream_route_is_asked_withdraws_the_question() {
    let mut h = reloaded(json!({"messages": []}));
    let probe = h.the_open(RequestKind::StreamResume).id;
    assert_eq!(h.send("new prompt").kind, SubmitKind::Sent);
    assert!(h.aborted.contains(&probe));
    // A late answer to it changes nothing.
    h.respond(probe, Reply::sse(sse(&pi_turn(3))));
    assert_eq!(texts(&h), ["new prompt"]);
    assert_eq!(h.store.status(), Status::Submitted);
}

/// Capabilities fetched (not static): the attach waits for them, as they decide which reducer
/// reads the turn.
#[cfg(feature = "pi")]
#[test]
fn the_attach_waits_for_the_capabilities() {
    let mut opts = options();
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(200, json!({"messages": [], "activeTurn": {"turnId": "t1"}})),
    );
    assert_eq!(h.count(RequestKind::StreamResume), 0);
    let caps = h.the_open(RequestKind::Capabilities).id;
    h.respond(
        caps,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    let attach = h.the_open(RequestKind::StreamResume).id;
    h.respond(attach, Reply::sse(sse(&pi_turn(3))).open());
    assert_eq!(texts(&h), ["hi", "Hello there."]);
}

/// AI SDK mode (`useChat`'s resume): the replay's `start` names the answer the history holds,
/// which is rebuilt in place, not added.
#[test]
fn ai_sdk_replay_rebuilds_the_answer_the_history_holds() {
    let mut h = hydrated(
        AI_SDK_CAPS,
        json!({
            "messages": [user("u1", "hi"), assistant("a1", "Hel")],
            "activeTurn": {"turnId": "t1"},
        }),
    );
    let attach = h.the_open(RequestKind::StreamResume).id;
    let replay = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
        json!({"type": "text-delta", "id": "t", "delta": "lo"}),
    ]);
    h.respond(attach, Reply::sse(replay).open());
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(ids(&h), ["u1", "a1"]);
    assert_eq!(texts(&h), ["hi", "Hello"]);
    let mut end = sse(&[
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish"}),
    ]);
    end.extend_from_slice(DONE);
    h.respond(attach, Reply::sse(end));
    assert_eq!(ids(&h), ["u1", "a1"]);
    assert_eq!(texts(&h), ["hi", "Hello"]);
    assert_eq!(h.store.status(), Status::Ready);
}

/// A reload: this page does not know the turn another page (or it, before the reload) started.
fn refused_by_a_running_turn(h: &mut Harness, text: &str) -> agent_chat_store::RequestId {
    assert_eq!(h.send(text).kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let refusal = json!({"error": {"code": "turn_already_active",
                                   "message": "a turn is already running", "turnId": "t1"}});
    h.respond(chat, Reply::json(409, refusal));
    chat
}

/// The legacy server's refusal, which names no turn.
fn refused_without_a_turn_id(h: &mut Harness, text: &str) {
    assert_eq!(h.send(text).kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let refusal = json!({"error": {"code": "conflict", "message": "turn_already_active"}});
    h.respond(chat, Reply::json(409, refusal));
}

#[cfg(feature = "pi")]
#[test]
fn a_409_turn_already_active_attaches_and_posts_the_message_as_a_follow_up() {
    let mut h = reloaded(json!({"messages": [], "activeTurn": null}));
    refused_by_a_running_turn(&mut h, "my question");
    // No bubble of a message the server did not take, no error: the turn runs, attached.
    assert_eq!(texts(&h), Vec::<String>::new());
    assert!(h.errors().is_empty(), "{:?}", h.errors());
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.store.session().turn_id(), Some("t1"));
    let attach = h.the_open(RequestKind::StreamResume);
    assert_eq!(attach.path, format!("{STREAM}?cursor=-1"));
    let queued: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|q| q.text.as_str())
        .collect();
    assert_eq!(queued, ["my question"]);

    // The other page's turn streams in; the message is posted to it, once.
    h.respond(attach.id, Reply::sse(sse(&pi_turn(3))).open());
    let post = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(post.message(), "my question");
    h.respond(post.id, accepted());
    let consumed = sse(&[pi_chunk(
        "message-start",
        10,
        json!({"messageId": "u2", "role": "user", "text": "my question",
               "clientNonce": post.client_nonce()}),
    )]);
    h.respond(attach.id, Reply::sse(consumed).open());
    assert!(h.store.session().queued().is_empty());
    assert_eq!(texts(&h), ["hi", "Hello there.", "my question"]);
    assert_eq!(h.count(RequestKind::FollowUpPost), 1);
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[cfg(feature = "pi")]
#[test]
fn a_409_without_native_follow_ups_gives_the_draft_back() {
    let caps = agent_chat_store::Capabilities {
        native_follow_up: false,
        ..PI_CAPS
    };
    let mut opts = options_with(caps);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(200, json!({"messages": [], "activeTurn": null})),
    );
    refused_by_a_running_turn(&mut h, "my question");
    assert_eq!(texts(&h), Vec::<String>::new());
    assert_eq!(h.store.composer().draft(), "my question");
    assert_eq!(h.store.status(), Status::Streaming);
    let c = h.store.composer().state();
    assert!(!c.can_send);
    assert_eq!(c.reason, Some(agent_chat_store::Refusal::Busy));
    assert!(h.errors().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
}

/// SPEC §7/§8: after a stop the screen shows what the server kept: the words it streamed before
/// it took the abort come with the history read once the stop is answered. The stopped turn,
/// still winding down there, is not attached to again.
#[cfg(feature = "pi")]
#[test]
fn after_a_stop_the_history_shown_is_the_one_the_server_kept() {
    let (mut h, _) = sending_hi();
    assert_eq!(texts(&h), ["hi", "Hello"]);
    h.stop();
    let del = h.the_open(RequestKind::TurnDelete).id;
    assert_eq!(
        h.count(RequestKind::MessagesGet),
        1,
        "not before the server took the stop"
    );
    h.respond(del, Reply::status(204));
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(
            200,
            json!({"messages": [user("u1", "hi"), assistant("a1", "Hello there")],
                                "activeTurn": {"turnId": "t1"}}),
        ),
    );
    assert_eq!(texts(&h), ["hi", "Hello there"]);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::StreamResume), 0);
}

/// Two tabs on one session (or a tab and its reload): the second attaches to the first one's
/// turn; what each sends while it runs is posted as a follow-up and arrives once, shown in
/// both, in the order the server ran them.
#[cfg(feature = "pi")]
#[test]
fn two_tabs_on_one_session_both_deliver_their_messages_once() {
    let (mut a, chat) = sending_hi();

    let mut b = reloaded(json!({"messages": [user("u1", "hi")], "activeTurn": {"turnId": "t1"}}));
    let b_stream = b.the_open(RequestKind::StreamResume).id;
    b.respond(b_stream, Reply::sse(sse(&pi_turn(1))).open());
    assert_eq!(b.store.status(), Status::Streaming);
    assert_eq!(texts(&b), ["hi", "Hello"]);

    // Each tab queues one; the server takes A's first, then B's.
    assert_eq!(a.send("from A").kind, SubmitKind::Queued);
    assert_eq!(b.send("from B").kind, SubmitKind::Queued);
    let pa = a.the_open(RequestKind::FollowUpPost);
    let pb = b.the_open(RequestKind::FollowUpPost);
    assert_ne!(pa.client_nonce(), pb.client_nonce());
    a.respond(pa.id, accepted());
    b.respond(pb.id, accepted());

    // Both streams carry both follow-ups: each tab's own by its nonce, the other's as a
    // message it did not queue.
    let ran = sse(&[
        pi_chunk(
            "message-start",
            10,
            json!({"messageId": "f1", "role": "user", "text": "from A",
                                              "clientNonce": pa.client_nonce()}),
        ),
        pi_chunk(
            "message-start",
            11,
            json!({"messageId": "f2", "role": "user", "text": "from B",
                                              "clientNonce": pb.client_nonce()}),
        ),
    ]);
    a.respond(chat, Reply::sse(ran.clone()).open());
    b.respond(b_stream, Reply::sse(ran).open());
    for tab in [&a, &b] {
        assert_eq!(texts(tab), ["hi", "Hello", "from A", "from B"]);
        assert!(tab.store.session().queued().is_empty());
        assert_eq!(tab.count(RequestKind::FollowUpPost), 1);
    }
    assert_eq!(a.count(RequestKind::Chat) + b.count(RequestKind::Chat), 1);
}

/// A clock an hour behind across a reload (SPEC §6): the new page's seqs fall below what the
/// server accepted from the old one. Each refusal renumbers the item under the same nonce; it
/// is accepted within a few posts and never fails or blocks the queue.
#[cfg(feature = "pi")]
#[test]
fn a_clock_an_hour_behind_across_a_reload_is_renumbered_past() {
    let hour = 3_600_000;
    let held = T0 + hour; // the old page's last accepted seq (its clock was right)
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::at(opts, T0, 3);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(
            200,
            json!({"messages": [user("u1", "hi")], "activeTurn": {"turnId": "t1"}}),
        ),
    );
    let attach = h.the_open(RequestKind::StreamResume).id;
    h.respond(attach, Reply::sse(sse(&pi_turn(1))).open());
    assert_eq!(h.send("after the reload").kind, SubmitKind::Queued);
    let mut nonce = None;
    for posts in 1.. {
        let p = h.the_open(RequestKind::FollowUpPost);
        assert_eq!(p.message(), "after the reload");
        assert_eq!(
            *nonce.get_or_insert(p.client_nonce().to_string()),
            p.client_nonce()
        );
        if p.client_seq() > held {
            h.respond(p.id, accepted());
            assert!(posts <= 14, "{posts} posts");
            break;
        }
        let refusal = Reply::error(409, "conflict", "followup_out_of_order");
        h.respond(p.id, refusal);
        assert_ne!(
            h.store.session().queued()[0].state,
            agent_chat_store::ItemState::Failed
        );
    }
    assert_eq!(
        h.store.session().queued()[0].state,
        agent_chat_store::ItemState::Accepted
    );
    assert!(h.errors().is_empty(), "{:?}", h.errors());
}

/// A history read after the stop that is behind what was streamed (the server has not written
/// the stopped answer yet) does not take the answer away.
#[cfg(feature = "pi")]
#[test]
fn a_history_behind_the_stopped_answer_takes_nothing_away() {
    let (mut h, _) = sending_hi();
    h.stop();
    let del = h.the_open(RequestKind::TurnDelete).id;
    h.respond(del, Reply::status(204));
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(
            200,
            json!({"messages": [user("u1", "hi")], "activeTurn": null}),
        ),
    );
    assert_eq!(texts(&h), ["hi", "Hello"]);
}

/// The legacy server after a stop: a send made at once meets the stopped turn still winding
/// down (409), and its stream route replays that whole turn (200, to `[DONE]`), not 204. The
/// replay is the turn this client followed: nothing of it shows twice (live, the stopped
/// answer's text showed twice in its part).
#[cfg(feature = "pi")]
#[test]
fn a_send_right_after_a_stop_replays_the_stopped_turn_once() {
    let mut h = reloaded(json!({"messages": [], "activeTurn": null}));
    assert_eq!(h.send("hi").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    // The head names the turn (`x-turn-id`) before its `data-turn-start` comes.
    h.respond(chat, Reply::sse(sse(&pi_turn(2))).turn_id("t1").open());
    assert_eq!(texts(&h), ["hi", "Hello there"]);
    h.stop();
    assert_eq!(h.store.status(), Status::Ready);
    refused_without_a_turn_id(&mut h, "next");
    let replay = h.the_open(RequestKind::StreamResume);
    assert_eq!(replay.path, format!("{STREAM}?cursor=-1"));
    let mut body = sse(&pi_turn(2));
    body.extend_from_slice(b"data: [DONE]\n\n");
    h.respond(replay.id, Reply::sse(body));
    assert_eq!(texts(&h)[..2], ["hi", "Hello there"], "{:#?}", h.history());
}
