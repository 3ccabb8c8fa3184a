//! A server whose resume route (SPEC §12) answers 204 while its turn still runs: a switch
//! away and back during a turn must not post the queued follow-ups again under new nonces
//! (each runs once on the server).

#![cfg(feature = "pi")]

use crate::common;

use std::collections::HashSet;

use agent_chat_store::{ItemState, RequestKind, Status};
use common::scenario::*;
use common::*;
use serde_json::json;

/// A server whose turn `turn-1` runs until told otherwise: follow-ups are accepted into its
/// queue (each nonce run once, at the turn's end), a chat POST meets the running turn (409),
/// a DELETE removes a queued follow-up, the resume route answers 204.
struct BusyServer {
    running: bool,
    queued: Vec<String>,
    removed: HashSet<String>,
    runs: Vec<String>,
    /// Requests answered already (a stream stays open after its answer began).
    served: HashSet<u64>,
    /// The user messages its history lists: `(text, clientNonce)`.
    history: Vec<(String, String)>,
}

impl BusyServer {
    fn serve(&mut self, h: &mut Harness) {
        for _ in 0..200 {
            let kinds = [
                RequestKind::Chat,
                RequestKind::FollowUpPost,
                RequestKind::FollowUpDelete,
                RequestKind::StreamResume,
                RequestKind::MessagesGet,
                RequestKind::TurnDelete,
            ];
            let open: Vec<Sent> = (kinds.iter())
                .flat_map(|k| h.open(*k).into_iter().cloned())
                .filter(|r| !self.served.contains(&r.id))
                .collect();
            if open.is_empty() {
                return;
            }
            for r in open {
                let reply = match r.kind {
                    RequestKind::Chat if self.running => Reply::json(
                        409,
                        json!({"error": {"code": "turn_already_active", "message": "busy", "turnId": "turn-1"}}),
                    ),
                    RequestKind::Chat => {
                        self.runs.push(r.message().to_string());
                        self.running = true;
                        Reply::sse(sse(&[
                            json!({"type": "data-turn-start", "data": {"turnId": "turn-2"}}),
                        ]))
                        .open()
                    }
                    RequestKind::FollowUpPost => {
                        self.queued.push(r.client_nonce().to_string());
                        accepted()
                    }
                    RequestKind::FollowUpDelete => {
                        let nonce = r.client_nonce_in_path().to_string();
                        self.queued.retain(|n| *n != nonce);
                        self.removed.insert(nonce);
                        Reply::json(200, json!({"removed": true}))
                    }
                    RequestKind::StreamResume => Reply::status(204),
                    RequestKind::MessagesGet => {
                        let messages: Vec<_> = (self.history.iter().enumerate())
                            .map(|(i, (text, nonce))| {
                                json!({"id": format!("u{i}"), "role": "user",
                                "parts": [{"type": "text", "text": text}],
                                "metadata": {"clientNonce": nonce}})
                            })
                            .collect();
                        Reply::json(200, json!({ "messages": messages }))
                    }
                    _ => Reply::status(204),
                };
                self.served.insert(r.id);
                h.respond(r.id, reply);
            }
        }
        panic!(
            "the store keeps asking at one instant: {} requests",
            h.sent.len()
        );
    }
}

impl BusyServer {
    fn new(served: u64) -> BusyServer {
        BusyServer {
            running: true,
            queued: Vec::new(),
            removed: HashSet::new(),
            runs: Vec::new(),
            served: HashSet::from([served]),
            history: Vec::new(),
        }
    }
}

/// A turn with three follow-ups the server accepted, then the session switched away and back
/// `times` times while the server's turn runs and its resume route answers 204.
fn switched_back(h: &mut Harness, times: usize) -> BusyServer {
    let chat = streaming_turn(h, "first");
    let mut server = BusyServer::new(chat);
    for text in ["one", "two", "three"] {
        h.submit(text);
        server.serve(h);
    }
    assert_eq!(server.queued.len(), 3);
    for _ in 0..times {
        h.switch_session("T");
        h.switch_session(SESSION);
        server.serve(h);
        h.advance(60_000);
        server.serve(h);
    }
    server
}

#[test]
fn a_switch_back_whose_resume_answers_204_posts_each_follow_up_once() {
    let mut h = Harness::with_caps(PI_CAPS);
    let server = switched_back(&mut h, 3);
    assert_eq!(h.store.status(), Status::Ready, "nothing to follow");
    let posts = h.requests(RequestKind::FollowUpPost);
    let nonces: HashSet<&str> = posts.iter().map(|p| p.client_nonce()).collect();
    assert_eq!(posts.len(), 3, "each follow-up posted once: {posts:#?}");
    assert_eq!(nonces.len(), 3);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0, "none taken back");
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "none sent again as a new message"
    );
    assert!(server.runs.is_empty() && server.removed.is_empty());
    // Still waiting, with the nonce and seq the server holds.
    let queued = h.store.session().queued();
    assert_eq!(queued.len(), 3);
    for (item, post) in queued.iter().zip(&posts) {
        assert_eq!(item.state, ItemState::Accepted);
        assert_eq!(
            (item.client_nonce.as_str(), item.client_seq),
            (post.client_nonce(), post.client_seq())
        );
    }
}

/// The history read after the 204 shows which of them ran (by nonce): those leave the queue,
/// the rest keep waiting.
#[test]
fn after_a_204_the_history_shows_which_follow_ups_ran() {
    let mut h = hydrated(PI_CAPS, json!({"messages": []}));
    let chat = streaming_turn(&mut h, "first");
    let mut server = BusyServer::new(chat);
    for text in ["one", "two", "three"] {
        h.submit(text);
        server.serve(&mut h);
    }
    let posts: Vec<Sent> = h
        .requests(RequestKind::FollowUpPost)
        .into_iter()
        .cloned()
        .collect();
    server.history = vec![
        ("first".into(), "x".into()),
        ("one".into(), posts[0].client_nonce().into()),
        ("two".into(), posts[1].client_nonce().into()),
    ];
    h.switch_session("T");
    h.switch_session(SESSION);
    server.serve(&mut h);
    let texts: Vec<String> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.text.clone())
        .collect();
    assert_eq!(texts, ["three"]);
    assert_eq!(h.count(RequestKind::FollowUpPost), 3);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
}
