//! The session list (SPEC §11) on virtual time: the pages and their cursor, one page request
//! at a time, new sessions listed locally until the server lists them, titles from the first
//! user message, the refresh after a turn, and renames, archives and deletes shown at once,
//! undone by a refusal (with a typed error) and applied to the session they named whatever is
//! open when the answer comes.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{
    ErrorKind, Method, RequestKind, SessionItem, StoreEvent, SubmitKind, SESSION_WATCH_MS,
};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

const LIST: &str = "/api/v1/agent/sessions?limit=20&archived=false";

fn session(id: &str, title: Option<&str>) -> Value {
    let mut v =
        json!({"id": id, "updatedAt": "2026-12-01T00:00:00Z", "createdAt": "2026-11-30T00:00:00Z"});
    if let Some(t) = title {
        v["title"] = json!(t);
    }
    v
}

fn page(ids: &[&str], next: Option<&str>) -> Reply {
    let sessions: Vec<Value> = ids
        .iter()
        .map(|id| session(id, Some(&format!("title {id}"))))
        .collect();
    let mut body = json!({ "sessions": sessions });
    if let Some(n) = next {
        body["nextCursor"] = json!(n);
    }
    Reply::json(200, body)
}

fn items(h: &Harness) -> Vec<SessionItem> {
    h.store.sessions().items()
}

fn ids(h: &Harness) -> Vec<String> {
    items(h).into_iter().map(|i| i.id).collect()
}

fn item(h: &Harness, id: &str) -> SessionItem {
    items(h)
        .into_iter()
        .find(|i| i.id == id)
        .unwrap_or_else(|| panic!("{id} is not listed"))
}

/// A pi store whose list was loaded with `ids` (and `next`).
fn listed(ids: &[&str], next: Option<&str>) -> Harness {
    let mut h = Harness::with_caps(PI_CAPS);
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    let get = h.the_open(RequestKind::SessionsGet);
    assert_eq!((get.method, get.path.as_str()), (Method::Get, LIST));
    h.respond(get.id, page(ids, next));
    h
}

fn session_changes(h: &Harness) -> Vec<String> {
    (h.events.iter())
        .filter_map(|e| match e {
            StoreEvent::SessionChange { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_first_page_lists_the_open_session_first_then_the_servers_in_its_order() {
    let mut h = Harness::with_caps(PI_CAPS);
    // Before any page: the open session, listed locally.
    assert_eq!(ids(&h), ["S"]);
    assert!(item(&h, "S").local);
    assert!(!h.store.sessions().loaded(false) && h.store.sessions().available());
    assert_eq!(
        h.count(RequestKind::SessionsGet),
        0,
        "nothing is asked before loadSessions"
    );

    h.act(|s, now| s.sessions_mut().load(false, now));
    assert!(h.store.sessions().loading());
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(get.id, page(&["b", "S", "a"], Some("c1")));
    assert_eq!(
        ids(&h),
        ["b", "S", "a"],
        "the server's order; S is the server's now"
    );
    assert!(!item(&h, "S").local);
    assert_eq!(item(&h, "b").title.as_deref(), Some("title b"));
    assert_eq!(
        item(&h, "b").updated_at,
        Some(json!("2026-12-01T00:00:00Z"))
    );
    assert!(h.store.sessions().loaded(false) && h.store.sessions().has_more(false));
    assert!(!h.store.sessions().loading());
}

fn running(id: &str, yes: bool) -> Value {
    let mut v = session(id, None);
    v["running"] = json!(yes);
    v
}

#[test]
fn a_background_session_listed_running_is_asked_again_until_its_turn_ends() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.act(|s, now| s.sessions_mut().load(false, now));
    let get = h.the_open(RequestKind::SessionsGet);
    let body = json!({"sessions": [running("a", true), running("S", false)]});
    h.respond(get.id, Reply::json(200, body));
    assert!(item(&h, "a").running, "what the server said");
    assert_eq!(h.count(RequestKind::SessionsGet), 1);

    h.advance(SESSION_WATCH_MS - 1);
    assert_eq!(h.count(RequestKind::SessionsGet), 1, "not before its time");
    h.advance(1);
    let watch = h.the_open(RequestKind::SessionsGet);
    assert_eq!(watch.path, LIST, "the first page again");
    let body = json!({"sessions": [running("a", false), running("S", false)]});
    h.respond(watch.id, Reply::json(200, body));
    assert!(!item(&h, "a").running, "its turn ended");

    // Nothing runs in the background any more: no more watching.
    h.advance(10 * SESSION_WATCH_MS);
    assert_eq!(h.count(RequestKind::SessionsGet), 2);
}

#[test]
fn the_open_session_listed_running_is_not_watched_its_own_status_says() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.act(|s, now| s.sessions_mut().load(false, now));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(
        get.id,
        Reply::json(200, json!({"sessions": [running("S", true)]})),
    );
    h.advance(10 * SESSION_WATCH_MS);
    assert_eq!(h.count(RequestKind::SessionsGet), 1);
}

#[cfg(feature = "pi")]
#[test]
fn leaving_a_session_mid_turn_asks_the_list_again_which_shows_it_running() {
    let mut h = listed(&["S", "a"], None);
    let _chat = streaming_turn(&mut h, "A long answer, please");
    assert!(item(&h, "S").running, "its own status");
    assert_eq!(h.count(RequestKind::SessionsGet), 1);

    h.switch_session("a");
    h.advance(0);
    let refresh = h.the_open(RequestKind::SessionsGet);
    assert_eq!(refresh.path, LIST);
    let body = json!({"sessions": [running("S", true), running("a", false)]});
    h.respond(refresh.id, Reply::json(200, body));
    assert!(item(&h, "S").running, "left, it runs on the server");
    assert!(!item(&h, "a").running);

    // Watched until the server says its turn ended.
    h.advance(SESSION_WATCH_MS);
    let watch = h.the_open(RequestKind::SessionsGet);
    let body = json!({"sessions": [running("S", false), running("a", false)]});
    h.respond(watch.id, Reply::json(200, body));
    assert!(!item(&h, "S").running);

    // Leaving an idle session asks nothing.
    h.switch_session("S");
    h.advance(0);
    assert_eq!(h.count(RequestKind::SessionsGet), 3);
}

#[test]
fn pages_follow_the_cursor_one_request_at_a_time_without_listing_a_session_twice() {
    let mut h = listed(&["a", "b"], Some("c1"));
    assert!(h.act(|s, now| s.sessions_mut().load_more(false, now)));
    let second = h.the_open(RequestKind::SessionsGet);
    assert_eq!(
        second.path,
        "/api/v1/agent/sessions?cursor=c1&limit=20&archived=false"
    );
    // One page request at a time: another "more" is refused, a refresh waits for it.
    assert!(!h.act(|s, now| s.sessions_mut().load_more(false, now)));
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    assert_eq!(h.count(RequestKind::SessionsGet), 2);

    // An offset-cursor server lists `b` again (a newer session pushed it down): one entry.
    h.respond(second.id, page(&["b", "c", "d"], None));
    assert_eq!(ids(&h), ["S", "a", "b", "c", "d"]);
    assert!(!h.store.sessions().has_more(false));
    assert!(
        !h.act(|s, now| s.sessions_mut().load_more(false, now)),
        "no next page"
    );

    // The refresh asked meanwhile goes now; the deeper pages stay listed.
    let refresh = h.the_open(RequestKind::SessionsGet);
    assert_eq!(refresh.path, LIST);
    h.respond(refresh.id, page(&["d", "a"], Some("c9")));
    assert_eq!(
        ids(&h),
        ["S", "d", "a", "b", "c"],
        "d moved up; b, pushed down, and c kept"
    );
    assert!(
        !h.store.sessions().has_more(false),
        "the deepest page's cursor still counts"
    );
}

#[test]
fn a_server_without_a_list_hides_it() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.act(|s, now| s.sessions_mut().load(false, now));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(get.id, Reply::error(404, "not_found", "no such route"));
    assert!(!h.store.sessions().available());
    assert!(
        h.store.sessions().error().is_none(),
        "a 404 is no error: there is no list"
    );
    assert!(!h.act(|s, now| s.sessions_mut().load(false, now)));
    assert_eq!(h.count(RequestKind::SessionsGet), 1);
    assert_eq!(ids(&h), ["S"], "the open session is still listed");
}

#[test]
fn a_failed_page_keeps_the_list_as_it_was_with_a_typed_error() {
    let mut h = listed(&["a", "b"], Some("c1"));
    let before = items(&h);
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let more = h.the_open(RequestKind::SessionsGet);
    h.respond(more.id, Reply::error(503, "unavailable", "try later"));
    assert_eq!(items(&h), before);
    let e = h.store.sessions().error().expect("the error").clone();
    assert_eq!((e.kind, e.status), (ErrorKind::Server, Some(503)));
    assert!(
        h.store.sessions().has_more(false),
        "the same page can be asked again"
    );
    assert!(
        h.errors().iter().any(|x| x.status == Some(503)),
        "onError hears it too"
    );

    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let again = h.the_open(RequestKind::SessionsGet);
    assert_eq!(again.path, more.path, "the same cursor");
    h.respond(again.id, Reply::network("offline"));
    assert_eq!(h.store.sessions().error().unwrap().kind, ErrorKind::Network);

    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let bad = h.the_open(RequestKind::SessionsGet);
    h.respond(bad.id, Reply::json(200, json!({"items": []})));
    assert_eq!(
        h.store.sessions().error().unwrap().kind,
        ErrorKind::Protocol
    );
    assert_eq!(items(&h), before);

    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let ok = h.the_open(RequestKind::SessionsGet);
    let body = json!({"sessions": [{"title": "no id"}, session("c", None), 7]});
    h.respond(ok.id, Reply::json(200, body));
    assert!(
        h.store.sessions().error().is_none(),
        "a page that came clears the error"
    );
    assert_eq!(ids(&h), ["S", "a", "b", "c"]);
    let diag = h.events.iter().any(|e| matches!(e, StoreEvent::Diagnostic { message } if message.contains("2 session list entries")));
    assert!(diag, "what was skipped is said");
}

#[cfg(feature = "pi")]
#[test]
fn a_new_session_is_listed_at_the_top_until_the_server_lists_it() {
    let mut h = listed(&["S", "a"], None);
    let id = h.act(|s, now| s.sessions_mut().create(now)).expect("an id");
    assert_eq!(id.len(), 36, "a v4 UUID: {id}");
    assert_eq!(h.store.session().id(), id);
    assert_eq!(
        session_changes(&h),
        vec![id.clone()],
        "onSessionChange hears it"
    );
    assert_eq!(ids(&h), [id.as_str(), "S", "a"]);
    let it = item(&h, &id);
    assert!(it.local && it.title.is_none() && !it.running);
    // The server has nothing of it: no history asked, no turn to attach to.
    assert!(h.requests(RequestKind::MessagesGet).is_empty());
    assert!(h.requests(RequestKind::StreamResume).is_empty());

    // Its first message titles it, and it runs.
    let chat = streaming_turn(&mut h, "Plan the trip\nto Lisbon, in May");
    let it = item(&h, &id);
    assert_eq!(it.title.as_deref(), Some("Plan the trip"));
    assert!(it.running && it.local);

    // The turn's end refreshes the list (it was loaded); the server lists it now.
    end_turn(&mut h, chat);
    let refresh = h.the_open(RequestKind::SessionsGet);
    assert_eq!(refresh.path, LIST);
    let body =
        json!({"sessions": [session(&id, None), session("S", Some("old")), session("a", None)]});
    h.respond(refresh.id, Reply::json(200, body));
    let it = item(&h, &id);
    assert!(!it.local && !it.running);
    assert_eq!(ids(&h), [id.as_str(), "S", "a"]);
    assert_eq!(
        it.title.as_deref(),
        Some("Plan the trip"),
        "no server title: its first line"
    );
    assert_eq!(
        item(&h, "S").title.as_deref(),
        Some("old"),
        "a server title wins"
    );
    assert_eq!(
        item(&h, "a").title,
        None,
        "never opened here: nothing to name it by"
    );
}

#[test]
fn an_untouched_new_session_leaves_the_list_when_another_opens() {
    let mut h = listed(&["S"], None);
    let id = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    h.switch_session("S");
    assert!(!ids(&h).contains(&id), "nothing was said in it");
    assert_eq!(session_changes(&h), [id, "S".to_string()]);
}

#[cfg(feature = "pi")]
#[test]
fn the_list_refreshes_after_a_turn_only_once_it_was_loaded() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "hello");
    end_turn(&mut h, chat);
    assert_eq!(
        h.count(RequestKind::SessionsGet),
        0,
        "a host without a list asks nothing"
    );
    h.act(|s, now| s.sessions_mut().load(false, now));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(get.id, page(&["S"], None));
    let chat = streaming_turn(&mut h, "again");
    h.respond(chat, Reply::sse(DONE.to_vec()));
    assert_eq!(h.count(RequestKind::SessionsGet), 2);
}

/// A title is trimmed and cut at `MAX_TITLE_CHARS` characters before it is sent or shown.
#[test]
fn a_huge_title_is_cut_at_its_bound() {
    let mut h = listed(&["S", "a"], None);
    let huge = "日".repeat(1 << 20);
    assert!(h.act(|s, now| s.sessions_mut().rename("a", &huge, now)));
    let patch = h.the_open(RequestKind::SessionPatch);
    let sent = patch.body()["title"].as_str().unwrap().to_string();
    assert_eq!(sent, "日".repeat(agent_chat_store::MAX_TITLE_CHARS));
    assert_eq!(item(&h, "a").title.as_deref(), Some(sent.as_str()));
}

#[test]
fn a_rename_shows_at_once_and_a_refusal_puts_the_old_title_back() {
    let mut h = listed(&["S", "a", "b"], None);
    assert!(h.act(|s, now| s.sessions_mut().rename("a", "  Trip  ", now)));
    assert_eq!(item(&h, "a").title.as_deref(), Some("Trip"));
    let patch = h.the_open(RequestKind::SessionPatch);
    assert_eq!(
        (patch.method, patch.path.as_str()),
        (Method::Patch, "/api/v1/agent/sessions/a")
    );
    assert_eq!(patch.body(), &json!({"title": "Trip"}));
    h.respond(patch.id, Reply::error(500, "boom", "disk full"));
    assert_eq!(item(&h, "a").title.as_deref(), Some("title a"));
    let e = h.store.sessions().error().unwrap();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Server, "disk full")
    );

    h.act(|s, now| s.sessions_mut().rename("a", "Trip", now));
    let patch = h.the_open(RequestKind::SessionPatch);
    let answer = json!({"session": session("a", Some("Trip (server)"))});
    h.respond(patch.id, Reply::json(200, answer));
    assert_eq!(
        item(&h, "a").title.as_deref(),
        Some("Trip (server)"),
        "the server's word"
    );
    assert!(h.store.sessions().error().is_none());

    assert!(
        !h.act(|s, now| s.sessions_mut().rename("a", "   ", now)),
        "an empty title"
    );
    assert!(
        !h.act(|s, now| s.sessions_mut().rename("zz", "x", now)),
        "a session nobody knows"
    );
    assert_eq!(h.count(RequestKind::SessionPatch), 2);
}

#[test]
fn a_page_landing_during_a_rename_does_not_undo_it() {
    let mut h = listed(&["S", "a"], None);
    h.act(|s, now| s.sessions_mut().rename("a", "Mine", now));
    h.act(|s, now| s.sessions_mut().load(false, now));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(get.id, page(&["a", "S"], None));
    assert_eq!(item(&h, "a").title.as_deref(), Some("Mine"));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(patch.id, Reply::status(200));
    assert_eq!(
        item(&h, "a").title.as_deref(),
        Some("Mine"),
        "taken, without a body"
    );
}

#[test]
fn answers_after_a_switch_apply_to_the_session_they_named() {
    let mut h = listed(&["S", "a", "b"], None);
    h.act(|s, now| s.sessions_mut().rename("S", "Renamed", now));
    h.act(|s, now| s.sessions_mut().delete("b", now));
    let patch = h.the_open(RequestKind::SessionPatch);
    let delete = h.the_open(RequestKind::SessionDelete);
    h.switch_session("a");
    assert!(!h.aborted.contains(&patch.id) && !h.aborted.contains(&delete.id));
    h.respond(
        patch.id,
        Reply::json(200, json!({"session": session("S", Some("Renamed"))})),
    );
    h.respond(delete.id, Reply::status(204));
    assert_eq!(item(&h, "S").title.as_deref(), Some("Renamed"));
    assert_eq!(ids(&h), ["S", "a"]);
    assert_eq!(h.store.session().id(), "a");
}

#[test]
fn a_delete_is_shown_at_once_and_a_refusal_puts_it_back_in_its_place() {
    let mut h = listed(&["S", "a", "b"], None);
    assert!(h.act(|s, now| s.sessions_mut().delete("a", now)));
    assert_eq!(ids(&h), ["S", "b"]);
    let del = h.the_open(RequestKind::SessionDelete);
    assert_eq!(
        (del.method, del.path.as_str()),
        (Method::Delete, "/api/v1/agent/sessions/a")
    );
    assert!(
        !h.act(|s, now| s.sessions_mut().delete("a", now)),
        "already on its way"
    );
    h.respond(del.id, Reply::error(403, "forbidden", "not yours"));
    assert_eq!(ids(&h), ["S", "a", "b"]);
    assert_eq!(h.store.sessions().error().unwrap().status, Some(403));

    h.act(|s, now| s.sessions_mut().delete("a", now));
    let del = h.the_open(RequestKind::SessionDelete);
    h.respond(del.id, Reply::error(404, "session_not_found", "gone"));
    assert_eq!(ids(&h), ["S", "b"], "already gone is what a delete wants");
    assert!(h.store.sessions().error().is_none());
}

#[cfg(feature = "pi")]
#[test]
fn deleting_the_open_session_switches_to_a_new_one_first() {
    let mut h = listed(&["S", "a"], None);
    let chat = streaming_turn(&mut h, "hello");
    end_turn(&mut h, chat);
    let refresh = h.the_open(RequestKind::SessionsGet);
    h.respond(refresh.id, page(&["S", "a"], None));
    h.submit("queued while idle? no: sent");
    let chat = h.the_open(RequestKind::Chat);
    assert!(h.act(|s, now| s.sessions_mut().delete("S", now)));
    let new = h.store.session().id().to_string();
    assert_ne!(new, "S");
    assert_eq!(session_changes(&h), vec![new.clone()]);
    assert!(
        h.aborted.contains(&chat.id),
        "its stream is let go like any switch's"
    );
    let del = h.the_open(RequestKind::SessionDelete);
    assert_eq!(del.path, "/api/v1/agent/sessions/S");
    assert_eq!(ids(&h), [new.as_str(), "a"]);
    h.respond(del.id, Reply::status(204));
    assert_eq!(ids(&h), [new.as_str(), "a"]);
    assert!(h.store.messages().is_empty());
}

#[test]
fn a_session_nothing_was_said_in_is_only_forgotten() {
    let mut h = listed(&["S"], None);
    let id = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    assert!(h.act(|s, now| s.sessions_mut().delete(&id, now)));
    assert_eq!(h.count(RequestKind::SessionDelete), 0);
    let next = h.store.session().id().to_string();
    assert_ne!(next, id);
    assert_eq!(ids(&h), [next.as_str(), "S"]);
}

#[test]
fn archiving_moves_a_session_and_a_refusal_moves_it_back() {
    let mut h = listed(&["S", "a", "b"], None);
    assert!(h.act(|s, now| s.sessions_mut().archive("b", true, now)));
    let patch = h.the_open(RequestKind::SessionPatch);
    assert_eq!(patch.body(), &json!({"archived": true}));
    let shown = items(&h);
    assert_eq!(
        shown
            .iter()
            .map(|i| (i.id.as_str(), i.archived))
            .collect::<Vec<_>>(),
        [("S", false), ("a", false), ("b", true)]
    );
    h.respond(patch.id, Reply::network("offline"));
    assert!(!item(&h, "b").archived);
    assert_eq!(h.store.sessions().error().unwrap().kind, ErrorKind::Network);

    h.act(|s, now| s.sessions_mut().archive("a", true, now));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(
        patch.id,
        Reply::json(
            200,
            json!({"session": {"id": "a", "archived": true, "title": "title a"}}),
        ),
    );
    assert!(item(&h, "a").archived);
    assert_eq!(
        ids(&h),
        ["S", "b", "a"],
        "the archived ones after the others"
    );

    // The archived walk: its own pages.
    h.act(|s, now| s.sessions_mut().load(true, now));
    let get = h.the_open(RequestKind::SessionsGet);
    assert_eq!(get.path, "/api/v1/agent/sessions?limit=20&archived=true");
    let body = json!({"sessions": [{"id": "a", "archived": true}, {"id": "old", "archived": true}], "nextCursor": "z"});
    h.respond(get.id, Reply::json(200, body));
    assert!(h.store.sessions().loaded(true) && h.store.sessions().has_more(true));
    assert_eq!(ids(&h), ["S", "b", "a", "old"]);

    // Unarchived: back among the others.
    h.act(|s, now| s.sessions_mut().archive("old", false, now));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(patch.id, Reply::status(200));
    assert_eq!(
        ids(&h),
        ["old", "S", "b", "a"],
        "at the top: its place is the server's to say"
    );
    assert!(!item(&h, "old").archived);
    assert!(!h.act(|s, now| s.sessions_mut().archive("nobody", true, now)));
}

#[cfg(feature = "pi")]
#[test]
fn a_title_given_before_the_server_knows_the_session_goes_once_it_does() {
    let mut h = Harness::with_caps(PI_CAPS);
    let id = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    assert!(h.act(|s, now| s.sessions_mut().rename(&id, "Draft plan", now)));
    assert_eq!(
        h.count(RequestKind::SessionPatch),
        0,
        "the server cannot know it yet"
    );
    assert_eq!(item(&h, &id).title.as_deref(), Some("Draft plan"));
    let chat = streaming_turn(&mut h, "first words");
    assert_eq!(
        item(&h, &id).title.as_deref(),
        Some("Draft plan"),
        "not the first message"
    );
    end_turn(&mut h, chat);
    let patch = h.the_open(RequestKind::SessionPatch);
    assert_eq!(patch.path, format!("/api/v1/agent/sessions/{id}"));
    assert_eq!(patch.body(), &json!({"title": "Draft plan"}));
    h.respond(patch.id, Reply::status(200));
    assert_eq!(h.count(RequestKind::SessionPatch), 1);
}

#[cfg(feature = "pi")]
#[test]
fn a_rename_the_server_does_not_know_yet_waits_without_an_error() {
    // A session with messages here (sent, the turn still on its way) but not on the list.
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "hello");
    h.act(|s, now| s.sessions_mut().rename("S", "Named", now));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(
        patch.id,
        Reply::error(404, "session_not_found", "no such session"),
    );
    assert!(h.store.sessions().error().is_none());
    assert_eq!(item(&h, "S").title.as_deref(), Some("Named"));
    end_turn(&mut h, chat);
    let again = h.the_open(RequestKind::SessionPatch);
    assert_eq!(again.body(), &json!({"title": "Named"}));
}

#[cfg(feature = "pi")]
#[test]
fn switching_keeps_each_sessions_parked_state_and_names_the_switch() {
    let mut h = listed(&["S", "a"], None);
    let chat = streaming_turn(&mut h, "in S");
    h.submit("waiting in S");
    assert_eq!(h.store.session().queued().len(), 1);
    h.switch_session("a");
    assert_eq!(session_changes(&h), ["a"]);
    assert!(
        item(&h, "S").title.is_some(),
        "S's history is parked here: its title shows"
    );
    h.switch_session("S");
    assert_eq!(session_changes(&h), ["a", "S"]);
    assert_eq!(
        h.store.session().queued()[0].text,
        "waiting in S",
        "its queue is as it was"
    );
    let _ = chat;
}

#[test]
fn nothing_is_asked_after_dispose() {
    let mut h = listed(&["S", "a"], Some("c"));
    h.dispose();
    let n = h.sent.len();
    assert!(!h.act(|s, now| s.sessions_mut().load(false, now)));
    assert!(!h.act(|s, now| s.sessions_mut().load_more(false, now)));
    assert!(!h.act(|s, now| s.sessions_mut().rename("a", "x", now)));
    assert!(!h.act(|s, now| s.sessions_mut().delete("a", now)));
    assert!(h.act(|s, now| s.sessions_mut().create(now)).is_none());
    assert_eq!(h.sent.len(), n);
}

#[cfg(feature = "pi")]
#[test]
fn a_session_list_request_does_not_hold_up_the_chat() {
    let mut h = listed(&["S"], None);
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    assert_eq!(h.send("hi").kind, SubmitKind::Sent);
}

#[test]
fn a_list_request_without_an_answer_times_out_and_frees_the_slot() {
    let mut h = listed(&["S", "a"], Some("c1"));
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    h.act(|s, now| s.sessions_mut().rename("a", "Mine", now));
    let hung = h.the_open(RequestKind::SessionsGet);
    h.advance(30_000);
    assert!(h.aborted.contains(&hung.id));
    assert_eq!(h.store.sessions().error().unwrap().kind, ErrorKind::Network);
    assert_eq!(
        item(&h, "a").title.as_deref(),
        Some("title a"),
        "the unanswered rename undone"
    );
    assert!(
        h.act(|s, now| s.sessions_mut().load_more(false, now)),
        "the page can be asked again"
    );
}

#[test]
fn a_session_opened_again_while_its_delete_was_on_its_way_stays_listed() {
    let mut h = listed(&["S", "a"], None);
    h.act(|s, now| s.sessions_mut().delete("a", now));
    let del = h.the_open(RequestKind::SessionDelete);
    h.switch_session("a");
    h.respond(del.id, Reply::status(204));
    let it = item(&h, "a");
    assert!(it.local, "open, so listed; the server has it no more");
    assert_eq!(h.store.session().id(), "a");
}

#[test]
fn a_page_asked_before_a_change_was_taken_is_asked_again_not_merged() {
    let mut h = listed(&["S", "a", "b"], None);
    h.act(|s, now| s.sessions_mut().load(false, now));
    let stale = h.the_open(RequestKind::SessionsGet);
    h.act(|s, now| s.sessions_mut().delete("a", now));
    h.act(|s, now| s.sessions_mut().rename("b", "New b", now));
    let del = h.the_open(RequestKind::SessionDelete);
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(del.id, Reply::status(204));
    h.respond(patch.id, Reply::status(200));
    // The server's answer to the page was made before it took either change.
    h.respond(stale.id, page(&["S", "a", "b"], None));
    assert_eq!(
        ids(&h),
        ["S", "b"],
        "the deleted session does not come back"
    );
    assert_eq!(item(&h, "b").title.as_deref(), Some("New b"));
    let again = h.the_open(RequestKind::SessionsGet);
    assert_eq!(again.path, LIST, "the same page, asked again");
    let body = json!({"sessions": [session("S", Some("title S")), session("b", Some("New b"))]});
    h.respond(again.id, Reply::json(200, body));
    assert_eq!(ids(&h), ["S", "b"]);
    assert_eq!(h.count(RequestKind::SessionsGet), 3);
}

#[test]
fn of_two_changes_of_one_kind_the_last_made_wins_whatever_the_answer_order() {
    let mut h = listed(&["S", "a"], None);
    h.act(|s, now| s.sessions_mut().archive("a", true, now));
    h.act(|s, now| s.sessions_mut().archive("a", false, now));
    h.act(|s, now| s.sessions_mut().rename("a", "one", now));
    h.act(|s, now| s.sessions_mut().rename("a", "two", now));
    let patches = h
        .open(RequestKind::SessionPatch)
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(patches.len(), 4);
    for p in patches.iter().rev() {
        h.respond(p.id, Reply::status(200));
    }
    let a = item(&h, "a");
    assert!(!a.archived, "unarchived: the last archive change made");
    assert_eq!(a.title.as_deref(), Some("two"));
}

#[test]
fn an_archived_page_without_the_flag_is_archived_all_the_same() {
    let mut h = listed(&["S"], None);
    h.act(|s, now| s.sessions_mut().load(true, now));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(
        get.id,
        Reply::json(200, json!({"sessions": [{"id": "old", "title": "Old"}]})),
    );
    assert!(item(&h, "old").archived);
    assert_eq!(ids(&h), ["S", "old"]);
}

#[test]
fn an_archive_answer_without_the_whole_session_keeps_what_was_listed() {
    let mut h = listed(&["S", "a"], None);
    h.act(|s, now| s.sessions_mut().archive("a", true, now));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(
        patch.id,
        Reply::json(200, json!({"session": {"id": "a", "archived": true}})),
    );
    let a = item(&h, "a");
    assert_eq!(a.title.as_deref(), Some("title a"));
    assert_eq!(a.updated_at, Some(json!("2026-12-01T00:00:00Z")));
}

#[test]
fn a_later_page_answered_404_ends_the_walk_and_keeps_the_list() {
    let mut h = listed(&["S", "a"], Some("c1"));
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let more = h.the_open(RequestKind::SessionsGet);
    h.respond(
        more.id,
        Reply::error(404, "cursor_expired", "no such cursor"),
    );
    assert!(h.store.sessions().available());
    assert!(!h.store.sessions().has_more(false));
    assert_eq!(ids(&h), ["S", "a"]);
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
}

#[test]
fn a_session_opened_by_id_is_deleted_on_the_server_even_before_its_history_came() {
    let mut h = listed(&["S"], None);
    h.switch_session("X");
    assert!(h.act(|s, now| s.sessions_mut().delete("X", now)));
    let del = h.the_open(RequestKind::SessionDelete);
    assert_eq!(del.path, "/api/v1/agent/sessions/X");
    // And a rename of such a session is sent at once.
    h.switch_session("Y");
    h.act(|s, now| s.sessions_mut().rename("Y", "Named", now));
    assert_eq!(h.count(RequestKind::SessionPatch), 1);
}

#[cfg(feature = "pi")]
#[test]
fn renaming_a_local_session_with_messages_shows_at_once_and_after_the_answer() {
    let mut h = listed(&["S"], None);
    let id = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    let chat = streaming_turn(&mut h, "first words");
    h.act(|s, now| s.sessions_mut().rename(&id, "Mine", now));
    assert_eq!(item(&h, &id).title.as_deref(), Some("Mine"));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(patch.id, Reply::status(200));
    assert_eq!(item(&h, &id).title.as_deref(), Some("Mine"));
    let _ = chat;
}

#[cfg(feature = "pi")]
#[test]
fn a_title_held_back_is_superseded_by_a_later_rename() {
    let mut h = Harness::with_caps(PI_CAPS);
    let id = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    h.act(|s, now| s.sessions_mut().rename(&id, "A", now));
    let chat = streaming_turn(&mut h, "hello");
    h.act(|s, now| s.sessions_mut().rename(&id, "B", now));
    end_turn(&mut h, chat);
    let titles: Vec<Value> = h
        .requests(RequestKind::SessionPatch)
        .iter()
        .map(|p| p.body().clone())
        .collect();
    assert_eq!(titles, [json!({"title": "B"})], "A is never sent after B");
}

#[test]
fn the_open_session_stays_listed_while_its_own_delete_is_on_its_way() {
    let mut h = listed(&["S", "a"], None);
    h.act(|s, now| s.sessions_mut().delete("a", now));
    h.switch_session("a");
    assert!(ids(&h).contains(&"a".to_string()));
}

#[cfg(feature = "pi")]
#[test]
fn sessions_past_the_first_page_are_not_shown_as_new_after_a_refresh() {
    let mut h = listed(&["S", "a"], Some("c1"));
    h.switch_session("a");
    h.switch_session("S");
    let chat = streaming_turn(&mut h, "hello");
    end_turn(&mut h, chat);
    let refresh = h.the_open(RequestKind::SessionsGet);
    // Newer sessions pushed `a`, opened here, off the first page.
    h.respond(refresh.id, page(&["S", "n1"], Some("c2")));
    assert_eq!(
        ids(&h),
        ["S", "n1"],
        "a is on the server: on a page not loaded now"
    );
    assert!(items(&h).iter().all(|i| !i.local));
}

#[test]
fn loading_on_mount_twice_asks_for_the_first_page_once() {
    let mut h = Harness::with_caps(PI_CAPS);
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    let get = h.the_open(RequestKind::SessionsGet);
    h.respond(get.id, page(&["S"], None));
    assert_eq!(h.count(RequestKind::SessionsGet), 1);
}

#[test]
fn dispose_aborts_the_list_requests_too() {
    let mut h = listed(&["S", "a"], Some("c"));
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    h.act(|s, now| s.sessions_mut().rename("a", "x", now));
    let get = h.the_open(RequestKind::SessionsGet);
    let patch = h.the_open(RequestKind::SessionPatch);
    h.dispose();
    assert!(h.aborted.contains(&get.id) && h.aborted.contains(&patch.id));
    assert_eq!(h.store.poll_timeout(), None);
}

/// The list as runs of the server's pages shown as listed: a page added at the end keeps the
/// walk's generation (an export of it adds that page alone), only the sessions the store holds
/// and those with a change on their way are items of their own, and the refresh after a turn
/// records what it changed.
#[test]
fn the_view_is_runs_of_pages_with_only_the_held_and_changed_sessions_apart() {
    use agent_chat_store::SessionListPart as Part;
    let mut h = listed(&["a", "S", "b"], Some("c1"));
    let generation = h.store.sessions().listed(false).1;
    h.act(|s, now| s.sessions_mut().load_more(false, now));
    let more = h.the_open(RequestKind::SessionsGet);
    h.respond(more.id, page(&["c", "d", "e"], Some("c2")));
    assert_eq!(
        h.store.sessions().listed(false).1,
        generation,
        "a page added"
    );
    assert_eq!(h.store.sessions().listed(false).0.len(), 6);
    let view = h.store.sessions().view();
    // The open session `S` (held: its own status) shown apart, in its place.
    assert_eq!(view[0], Part::Listed(false, 0, 1));
    assert!(matches!(&view[1], Part::Own(i) if i.id == "S"));
    assert_eq!(view[2], Part::Listed(false, 2, 6));
    assert_eq!(view.len(), 3);
    assert_eq!(ids(&h), ["a", "S", "b", "c", "d", "e"]);

    // A rename on its way: that session apart too, with its new title.
    h.act(|s, now| s.sessions_mut().rename("d", "New", now));
    let view = h.store.sessions().view();
    assert_eq!(view.len(), 5);
    assert!(matches!(&view[3], Part::Own(i) if i.id == "d" && i.title.as_deref() == Some("New")));
    assert_eq!(view[4], Part::Listed(false, 5, 6));
    let patch = h.the_open(RequestKind::SessionPatch);
    h.respond(patch.id, Reply::json(200, json!({})));
    let taken = h.store.sessions().listed(false).1;
    assert!(taken > generation, "an item changed in place");
    assert_eq!(item(&h, "d").title.as_deref(), Some("New"));

    // The first page again, `e` moved up: recorded as a refresh of a 2-item page over 6.
    h.act(|s, now| s.sessions_mut().load(false, now));
    let first = h.the_open(RequestKind::SessionsGet);
    h.respond(first.id, page(&["e", "a"], Some("c9")));
    let (listed, now) = h.store.sessions().listed(false);
    assert_eq!(
        listed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
        ["e", "a", "S", "b", "c", "d"]
    );
    assert_eq!(h.store.sessions().refreshed(false), Some((now, 2, 6)));
    assert_eq!(ids(&h), ["e", "a", "S", "b", "c", "d"]);
    // A session listed after the refresh is found in its new place (the index follows).
    assert!(h.act(|s, now| s.sessions_mut().rename("c", "Moved", now)));
    assert_eq!(item(&h, "c").title.as_deref(), Some("Moved"));
}
