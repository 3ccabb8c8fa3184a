//! Sessions over the pi-native transport (SPEC §11 through §14's routes) on virtual time: the
//! list is `GET /api/v1/agents/pi/sessions` and its summaries, rename and delete are the
//! protocol's own commands with a `requestId`, there is no archive; a session the server does
//! not have (made by `newSession`, or one whose state read answers 404) is created by the
//! first send, and the store follows it under the id the server gave it.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{Method, RequestKind, Status, StoreEvent};
use common::native_store::*;
use common::*;
use serde_json::{json, Value};

const LIST: &str = "/api/v1/agents/pi/sessions?limit=20";

fn summary(id: &str, title: &str, status: &str) -> Value {
    json!({"ref": {"agentTypeId": "pi", "sessionId": id}, "title": title, "status": status,
        "createdAt": 1_764_000_000_000u64, "updatedAt": 1_764_000_100_000u64, "turnCount": 1})
}

fn listed(h: &mut Harness, sessions: Vec<Value>, next: Option<&str>) {
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    let get = h.the_open(RequestKind::SessionsGet);
    assert_eq!((get.method, get.path.as_str()), (Method::Get, LIST));
    let mut body = json!({ "sessions": sessions });
    if let Some(n) = next {
        body["nextCursor"] = json!(n);
    }
    h.respond(get.id, Reply::json(200, body));
}

fn ids(h: &Harness) -> Vec<String> {
    h.store
        .sessions()
        .items()
        .into_iter()
        .map(|i| i.id)
        .collect()
}

fn not_found() -> Reply {
    Reply::json(
        404,
        json!({"error": {"code": "AGENT_SESSION_NOT_FOUND", "message": "no session"}}),
    )
}

#[test]
fn the_list_reads_the_protocols_summaries_and_pages_by_its_cursor() {
    let (mut h, _) = following(0);
    listed(
        &mut h,
        vec![
            summary("A", "Alpha", "running"),
            summary("B", "Beta", "idle"),
        ],
        Some("c2"),
    );
    let items = h.store.sessions().items();
    let a = items.iter().find(|i| i.id == "A").expect("A listed");
    assert_eq!(a.title.as_deref(), Some("Alpha"));
    assert!(a.running, "status running is a running session");
    assert!(!items.iter().find(|i| i.id == "B").unwrap().running);
    assert!(h.store.sessions().has_more(false));
    assert!(h.act(|s, now| s.sessions_mut().load_more(false, now)));
    let more = h.the_open(RequestKind::SessionsGet);
    assert_eq!(
        more.path,
        format!("/api/v1/agents/pi/sessions?cursor=c2&limit=20")
    );
    h.respond(
        more.id,
        Reply::json(
            200,
            json!({"sessions": [summary("C", "Gamma", "aborting")]}),
        ),
    );
    assert!(ids(&h).contains(&"C".to_string()));
    assert!(!h.store.sessions().has_more(false));
    assert!(
        !h.act(|s, now| s.sessions_mut().load(true, now)),
        "no archived walk over pi-native"
    );
    assert!(!h.act(|s, now| s.sessions_mut().archive("B", true, now)));
    assert_eq!(h.count(RequestKind::SessionPatch), 0);
}

#[test]
fn rename_and_delete_are_the_protocols_commands() {
    let (mut h, _) = following(0);
    listed(&mut h, vec![summary("B", "Beta", "idle")], None);
    assert!(h.act(|s, now| s.sessions_mut().rename("B", "  Better  ", now)));
    let rename = h.the_open(RequestKind::SessionPatch);
    assert_eq!(
        (rename.method, rename.path.as_str()),
        (Method::Post, "/api/v1/agents/pi/sessions/B/rename")
    );
    let body = rename.body.clone().unwrap();
    assert_eq!(body["title"], "Better");
    assert!(body["requestId"].as_str().is_some_and(|r| !r.is_empty()));
    h.respond(rename.id, Reply::json(200, summary("B", "Better", "idle")));
    let b = h.store.sessions().items().into_iter().find(|i| i.id == "B");
    assert_eq!(b.unwrap().title.as_deref(), Some("Better"));

    assert!(h.act(|s, now| s.sessions_mut().delete("B", now)));
    let delete = h.the_open(RequestKind::SessionDelete);
    assert_eq!(delete.method, Method::Delete);
    assert!(
        delete
            .path
            .starts_with("/api/v1/agents/pi/sessions/B?requestId="),
        "{}",
        delete.path
    );
    assert!(!ids(&h).contains(&"B".to_string()), "gone at once");
    h.respond(delete.id, Reply::bytes(204, None, Vec::new()));
    assert!(!ids(&h).contains(&"B".to_string()));
    assert!(h.errors().is_empty());
}

#[test]
fn a_refused_rename_puts_the_title_back_with_the_servers_error() {
    let (mut h, _) = following(0);
    listed(&mut h, vec![summary("B", "Beta", "idle")], None);
    h.act(|s, now| s.sessions_mut().rename("B", "Other", now));
    let rename = h.the_open(RequestKind::SessionPatch);
    h.respond(
        rename.id,
        Reply::json(
            409,
            json!({"error": {"code": "AGENT_COMMAND_INVALID_STATE", "message": "no rename"}}),
        ),
    );
    let b = h.store.sessions().items().into_iter().find(|i| i.id == "B");
    assert_eq!(b.unwrap().title.as_deref(), Some("Beta"));
    assert_eq!(h.errors().len(), 1);
}

/// A new session: nothing read; the first send creates it, the store takes the server's id,
/// reads its state and events, and posts the prompt there with the nonce it started with.
#[test]
fn a_new_sessions_first_send_creates_it_and_the_store_follows_the_servers_id() {
    let (mut h, _) = following(0);
    let made = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    assert_eq!(h.store.session().id(), made);
    assert!(h.store.session().hydrated(), "nothing to read: it is empty");
    assert_eq!(h.count(RequestKind::NativeState), 1, "only S's");
    assert!(h.act(|s, now| s.sessions_mut().rename(&made, "Plans", now)));
    assert_eq!(
        h.count(RequestKind::SessionPatch),
        0,
        "the server has no such session yet"
    );

    h.send("hello");
    assert_eq!(h.store.status(), Status::Submitted);
    let create = h.the_open(RequestKind::NativeCreate);
    assert_eq!(
        (create.method, create.path.as_str()),
        (Method::Post, "/api/v1/agents/pi/sessions")
    );
    let body = create.body.clone().unwrap();
    assert_eq!(body["title"], "Plans", "the title given before it existed");
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        0,
        "not before it exists"
    );
    h.respond(
        create.id,
        Reply::json(201, json!({"agentTypeId": "pi", "sessionId": "N1"})),
    );
    assert_eq!(h.store.session().id(), "N1");
    assert!(h.events.iter().any(|e| matches!(e,
        StoreEvent::SessionChange { session_id, renamed_from: Some(old) }
            if session_id == "N1" && *old == made)));
    let listed = ids(&h);
    assert!(listed.contains(&"N1".to_string()) && !listed.contains(&made));
    let prompt = h.the_open(RequestKind::NativePrompt);
    assert_eq!(prompt.path, "/api/v1/agents/pi/sessions/N1/prompt");
    let nonce = prompt.body.as_ref().unwrap()["clientNonce"].clone();
    assert_eq!(
        body["requestId"],
        format!("create:{}", nonce.as_str().unwrap())
    );
    let st = h.the_open(RequestKind::NativeState);
    assert_eq!(st.path, "/api/v1/agents/pi/sessions/N1/state");
    h.respond(prompt.id, Reply::json(202, json!({"accepted": true})));
    h.respond(st.id, state(0, "idle", json!([]), json!([])));
    let ev = h.the_open(RequestKind::NativeEvents);
    assert_eq!(ev.path, "/api/v1/agents/pi/sessions/N1/events?cursor=0");
    h.respond(
        ev.id,
        Reply::bytes(200, Some("application/x-ndjson"), Vec::new()).open(),
    );
    // Addressed to the session by the name the server gave it.
    h.body(
        ev.id,
        &lines_of("N1", &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": nonce, "text": "hello"}),
            json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "ok"}),
        ]),
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.history().len(), 1);
    assert!(h.errors().is_empty(), "{:?}", h.errors());
}

/// A session id the server does not know (a stale link): its state read answers 404, which is
/// not retried; the session shows empty and a send creates a new one.
#[test]
fn a_session_the_server_does_not_have_is_empty_and_a_send_creates_one() {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, not_found());
    assert!(h.store.session().hydrated());
    h.advance(120_000);
    assert_eq!(h.count(RequestKind::NativeState), 1, "a 404 is not retried");
    assert_eq!(h.count(RequestKind::NativeEvents), 0);
    assert_eq!(h.store.status(), Status::Ready);
    h.send("hi");
    let create = h.the_open(RequestKind::NativeCreate);
    h.respond(
        create.id,
        Reply::json(201, json!({"agentTypeId": "pi", "sessionId": "N2"})),
    );
    assert_eq!(h.store.session().id(), "N2");
    assert_eq!(
        h.the_open(RequestKind::NativePrompt).path,
        "/api/v1/agents/pi/sessions/N2/prompt"
    );
}

#[test]
fn a_refused_create_fails_the_send_and_a_stop_before_it_posts_no_stop() {
    let (mut h, _) = following(0);
    h.act(|s, now| s.sessions_mut().create(now));
    h.send("one");
    let create = h.the_open(RequestKind::NativeCreate);
    h.respond(
        create.id,
        Reply::json(
            404,
            json!({"error": {"code": "AGENT_TYPE_UNKNOWN", "message": "unknown agent type"}}),
        ),
    );
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.count(RequestKind::NativePrompt), 0);

    h.send("two");
    let create = h.the_open(RequestKind::NativeCreate);
    h.stop();
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::NativeStop), 0, "nothing runs there");
    assert!(h.aborted.contains(&create.id));
}

/// A switch away cuts the prompt (or the creation) off; back again, it is sent again with the
/// same bytes, so the server takes it once, and the turn goes on.
#[test]
fn a_prompt_cut_off_by_a_switch_is_sent_again_on_the_way_back() {
    let (mut h, _) = following(0);
    let made = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    h.send("hello");
    let create = h.the_open(RequestKind::NativeCreate);
    h.switch_session("S");
    assert!(h.aborted.contains(&create.id));
    h.switch_session(&made);
    let again = h.the_open(RequestKind::NativeCreate);
    assert_eq!(again.body, create.body, "the same requestId");
    assert_eq!(h.store.status(), Status::Submitted);
    h.respond(
        again.id,
        Reply::json(201, json!({"agentTypeId": "pi", "sessionId": "N3"})),
    );
    let prompt = h.the_open(RequestKind::NativePrompt);
    h.switch_session("S");
    h.switch_session("N3");
    let prompt2 = h.the_open(RequestKind::NativePrompt);
    assert_eq!(prompt2.body, prompt.body, "the same requestId");
    assert_eq!(prompt2.path, "/api/v1/agents/pi/sessions/N3/prompt");
}
