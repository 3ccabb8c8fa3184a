//! AI SDK mode's branches: every message the session showed kept as a tree beside the visible
//! path (`messages`). Regenerate keeps the old answer as a sibling of the new one, an edit as a
//! branch makes a new user message beside the edited one, `switch_branch` shows another
//! branch which the next send continues, and the server's history keeps the tree.

use crate::common;

use agent_chat_store::{BranchItem, BranchRefusal, ChatStore, Limits, RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

/// The tree as `(parent id, id, shown)`, in the snapshot's order.
fn tree(s: &ChatStore) -> Vec<(Option<String>, String, bool)> {
    let b = s.session().branches().expect("AI SDK mode keeps branches");
    let path = s.messages();
    (b.items.iter())
        .map(|it| match *it {
            BranchItem::Shown(i) => (
                i.checked_sub(1).map(|p| path[p].id.clone()),
                path[i].id.clone(),
                true,
            ),
            BranchItem::Kept { parent, message } => {
                (parent.map(str::to_string), message.id.clone(), false)
            }
        })
        .collect()
}

fn texts(s: &ChatStore) -> Vec<String> {
    s.messages().iter().map(|m| m.text()).collect()
}

fn sent_texts(body: &Value) -> Vec<String> {
    (body["messages"].as_array().unwrap().iter())
        .map(|m| {
            let parts = m["parts"].as_array().unwrap();
            let text = parts.iter().find(|p| p["type"] == "text").unwrap();
            text["text"].as_str().unwrap().to_string()
        })
        .collect()
}

fn id_at(h: &Harness, i: usize) -> String {
    h.store.messages()[i].id.clone()
}

#[test]
fn regenerate_keeps_the_old_answer_as_a_sibling_and_a_switch_then_send_continues_it() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    let (u1, u2) = (id_at(&h, 0), id_at(&h, 2));
    // No branch yet: the tree is the path.
    assert!(tree(&h.store).iter().all(|(_, _, shown)| *shown));
    assert_eq!(h.store.session().branches().unwrap().head_id, Some("a2"));
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    assert_eq!(sent_texts(chat.body()), ["one", "answer one", "two"]);
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    assert_eq!(texts(&h.store), ["one", "answer one", "two", "again"]);
    let want = vec![
        (None, u1.clone(), true),
        (Some(u1.clone()), "a1".into(), true),
        (Some("a1".into()), u2.clone(), true),
        (Some(u2.clone()), "a2".into(), false),
        (Some(u2.clone()), "a2b".into(), true),
    ];
    assert_eq!(
        tree(&h.store),
        want,
        "the old answer first: siblings in the order made"
    );
    assert_eq!(h.store.session().branches().unwrap().head_id, Some("a2b"));

    // Back to the old answer: the history is that path, the next send continues it.
    assert_eq!(h.act(|s, now| s.switch_branch("a2", now)), Ok(()));
    assert_eq!(texts(&h.store), ["one", "answer one", "two", "answer two"]);
    assert_eq!(h.store.session().branches().unwrap().head_id, Some("a2"));
    let kept: Vec<_> = tree(&h.store).into_iter().filter(|t| !t.2).collect();
    assert_eq!(kept, [(Some(u2.clone()), "a2b".to_string(), false)]);
    h.send("three");
    let chat = h.last(RequestKind::Chat);
    assert_eq!(
        sent_texts(chat.body()),
        ["one", "answer one", "two", "answer two", "three"]
    );
    h.respond(chat.id, Reply::sse(ai_answer("a3", "answer three")));
    assert_eq!(texts(&h.store).len(), 6);
    // The sibling order stays as made after the switch.
    let under_u2: Vec<String> = (tree(&h.store).into_iter())
        .filter(|(p, _, _)| p.as_deref() == Some(u2.as_str()))
        .map(|(_, id, _)| id)
        .collect();
    assert_eq!(under_u2, ["a2", "a2b"]);
    // Switching to the newer answer and back follows the child last shown: a3.
    assert_eq!(h.act(|s, now| s.switch_branch("a2b", now)), Ok(()));
    assert_eq!(texts(&h.store), ["one", "answer one", "two", "again"]);
    assert_eq!(h.act(|s, now| s.switch_branch(&u2, now)), Ok(()));
    assert_eq!(
        h.store.messages().last().unwrap().id,
        "a2b",
        "u2's last shown child"
    );
    assert_eq!(h.act(|s, now| s.switch_branch("a2", now)), Ok(()));
    assert_eq!(
        h.store.messages().last().unwrap().id,
        "a3",
        "a2's deepest descendant"
    );
}

#[test]
fn an_edit_as_a_branch_is_a_new_user_message_beside_the_edited_one() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    let (u1, u2) = (id_at(&h, 0), id_at(&h, 2));
    let r = h.act(|s, now| {
        let opts = Default::default();
        s.use_chat()
            .edit_as_branch(&u2, "two, edited", vec![], opts, now)
    });
    assert_eq!(r.kind, SubmitKind::Sent);
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["trigger"], "submit-message");
    assert_eq!(
        sent_texts(chat.body()),
        ["one", "answer one", "two, edited"]
    );
    let edited = id_at(&h, 2);
    assert_ne!(edited, u2, "a new message, not the old one replaced");
    assert_eq!(chat.body()["messages"][2]["id"], edited.as_str());
    h.respond(chat.id, Reply::sse(ai_answer("a2e", "edited answer")));
    let t = tree(&h.store);
    assert!(t.contains(&(Some("a1".into()), u2.clone(), false)));
    assert!(
        t.contains(&(Some(u2.clone()), "a2".into(), false)),
        "its answer kept with it"
    );
    assert!(t.contains(&(Some("a1".into()), edited.clone(), true)));
    let siblings: Vec<&str> = (t.iter())
        .filter(|(p, _, _)| p.as_deref() == Some("a1"))
        .map(|(_, id, _)| id.as_str())
        .collect();
    assert_eq!(siblings, [u2.as_str(), edited.as_str()]);
    // The old text with its answer, whole.
    assert_eq!(h.act(|s, now| s.switch_branch(&u2, now)), Ok(()));
    assert_eq!(texts(&h.store), ["one", "answer one", "two", "answer two"]);
    // An edit of the first message: a second root.
    let r = h.act(|s, now| {
        let opts = Default::default();
        s.use_chat().edit_as_branch(&u1, "uno", vec![], opts, now)
    });
    assert_eq!(r.kind, SubmitKind::Sent);
    assert_eq!(sent_texts(h.last(RequestKind::Chat).body()), ["uno"]);
    let roots = tree(&h.store).into_iter().filter(|t| t.0.is_none()).count();
    assert_eq!(roots, 2);
    // An assistant message is not editable.
    let r = h.act(|s, now| {
        s.use_chat()
            .edit_as_branch("a1", "x", vec![], Default::default(), now)
    });
    assert_eq!(r.kind, SubmitKind::Blocked);
}

/// `useChat`'s edit (`sendMessage({messageId})`) replaces the message in place, as the `ai`
/// package does: the same id, no sibling, and what answered the old text gone for good.
#[test]
fn the_use_chat_edit_in_place_keeps_no_sibling() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let u2 = id_at(&h, 2);
    let r = h.act(|s, now| s.use_chat().edit(&u2, "two, edited", vec![], now));
    assert_eq!(r.kind, SubmitKind::Sent);
    assert_eq!(id_at(&h, 2), u2);
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2c", "edited")));
    assert!(
        tree(&h.store).iter().all(|(_, _, shown)| *shown),
        "{:?}",
        tree(&h.store)
    );
}

#[test]
fn a_switch_is_refused_while_a_turn_runs_for_unknown_ids_and_without_branches() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let before = texts(&h.store);
    assert_eq!(
        h.act(|s, now| s.switch_branch("a2", now)),
        Err(BranchRefusal::Busy)
    );
    assert_eq!(texts(&h.store), before);
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let (before, tree_before) = (texts(&h.store), tree(&h.store));
    assert_eq!(
        h.act(|s, now| s.switch_branch("nope", now)),
        Err(BranchRefusal::UnknownMessage)
    );
    assert_eq!((texts(&h.store), tree(&h.store)), (before, tree_before));

    // pi mode: the server owns the history; no branches at all.
    let mut pi = Harness::with_caps(PI_CAPS);
    assert!(pi.store.session().branches().is_none());
    assert_eq!(
        pi.act(|s, now| s.switch_branch("x", now)),
        Err(BranchRefusal::NoBranches)
    );
}

/// Kept messages count against `limits.maxMessages` with the shown ones: the oldest kept
/// branches go first.
#[test]
fn kept_branches_stay_within_the_message_limit() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.limits = Limits {
        max_messages: 5,
        ..Limits::default()
    };
    let mut h = Harness::new(opts);
    two_ai_turns(&mut h);
    for id in ["b", "c", "d"] {
        assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
        let chat = h.last(RequestKind::Chat);
        h.respond(chat.id, Reply::sse(ai_answer(id, id)));
    }
    let kept: Vec<String> = (tree(&h.store).into_iter())
        .filter(|t| !t.2)
        .map(|t| t.1)
        .collect();
    // 4 shown + 1 kept: the newest kept answer, the one just replaced.
    assert_eq!(kept, ["c"]);
}

/// The PUT keeps the tree beside the visible path (`headId`, `tree`); a store that reads it
/// back (a reload) shows the same branches, and a switch is stored too.
#[test]
fn the_tree_round_trips_through_the_servers_history() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    let put = h.last(RequestKind::MessagesPut);
    assert!(
        put.body().get("tree").is_none(),
        "no branches, the body of before"
    );
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let put = h.last(RequestKind::MessagesPut).body().clone();
    assert_eq!(put["headId"], "a2b");
    assert_eq!(put["messages"].as_array().unwrap().len(), 4);
    let tree_ids: Vec<&str> = (put["tree"].as_array().unwrap().iter())
        .map(|it| it["message"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(tree_ids.len(), 5);
    assert_eq!(&tree_ids[3..], ["a2", "a2b"]);
    assert_eq!(put["tree"][3]["parentId"], put["messages"][2]["id"]);
    assert_eq!(put["tree"][0]["parentId"], Value::Null);

    // A reload: the server answers what it stored.
    let mut r = hydrated(
        AI_SDK_CAPS,
        json!({"messages": put["messages"], "tree": put["tree"]}),
    );
    assert_eq!(tree(&r.store), tree(&h.store));
    assert_eq!(r.act(|s, now| s.switch_branch("a2", now)), Ok(()));
    assert_eq!(texts(&r.store), ["one", "answer one", "two", "answer two"]);
    let put = r.last(RequestKind::MessagesPut).body().clone();
    assert_eq!(put["headId"], "a2", "the switch is stored");
    // A server that keeps no tree: the branches live as long as the session here.
    let plain = hydrated(AI_SDK_CAPS, json!({"messages": put["messages"]}));
    assert!(tree(&plain.store).iter().all(|t| t.2));
    // A tree whose items cannot be read leaves those out, and nothing else.
    let bad = json!({"messages": put["messages"], "tree": [
        {"parentId": 7, "message": put["tree"][0]["message"]},
        {"parentId": null, "message": {"id": "x"}},
    ]});
    let b = hydrated(AI_SDK_CAPS, bad);
    assert_eq!(texts(&b.store), ["one", "answer one", "two", "answer two"]);
    assert!(tree(&b.store).iter().all(|t| t.2));
}

/// `setMessages` with the path cut short (assistant-ui's delete, or a stop's unanswered
/// message taken back to its composer) keeps the branches; another list starts afresh.
#[test]
fn set_messages_keeps_the_branches_only_for_a_cut_path() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let cut: Vec<_> = h.store.messages()[..3].to_vec();
    assert!(h.act(|s, _| s.use_chat().set_messages(cut)));
    let t = tree(&h.store);
    assert!(
        t.contains(&(Some(id_at(&h, 2)), "a2".to_string(), false)),
        "{t:?}"
    );
    assert_eq!(t.iter().filter(|x| x.2).count(), 3);
    let other = vec![h.store.messages()[1].clone()];
    assert!(h.act(|s, _| s.use_chat().set_messages(other)));
    assert!(tree(&h.store).iter().all(|t| t.2));
}
