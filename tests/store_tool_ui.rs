//! The tool catalog and tool UI metadata (the tool UI plan; SPEC §7's tool parts and their
//! `details`): the catalog fetched per session, no catalog as no tools, a tool part's `ui` from
//! the result's details, then `data-tool-ui`, then the catalog; details kept through hydration
//! (§8).

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{RequestKind, StoreEvent};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

fn catalog_json(names: &[&str]) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            if *n == "pi.subagent" {
                json!({"name": n, "description": "runs a nested agent", "inputSchema": {"type": "object"},
                       "ui": {"rendererId": "pi-subagent", "displayGroup": "agents", "icon": "bot"}})
            } else {
                json!({"name": n})
            }
        })
        .collect();
    json!({ "tools": tools })
}

#[test]
fn the_catalog_is_fetched_per_session_and_a_stale_answer_is_ignored() {
    let mut h = Harness::new(options());
    let first = h.the_open(RequestKind::Catalog);
    assert_eq!(first.path, "/api/v1/agent/catalog?sessionId=S");
    assert!(h.store.session().tools().is_empty());
    h.switch_session("T");
    let second = h.the_open(RequestKind::Catalog);
    assert_eq!(second.path, "/api/v1/agent/catalog?sessionId=T");
    // The first session's answer comes late: it changes nothing.
    h.respond(
        first.id,
        Reply::json(200, catalog_json(&["ls", "echo", "pi.subagent"])),
    );
    assert!(h.store.session().tools().is_empty());
    h.respond(second.id, Reply::json(200, catalog_json(&["ls", "echo"])));
    let names: Vec<&str> = h
        .store
        .session()
        .tools()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["ls", "echo"]);
    // Back to S: its own catalog again, with the namespaced harness tool.
    h.switch_session(SESSION);
    let again = h.the_open(RequestKind::Catalog);
    h.respond(
        again.id,
        Reply::json(200, catalog_json(&["ls", "echo", "pi.subagent"])),
    );
    let names: Vec<&str> = h
        .store
        .session()
        .tools()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["ls", "echo", "pi.subagent"]);
    assert_eq!(
        h.store.session().tools()[2]
            .ui
            .as_ref()
            .unwrap()
            .renderer_id
            .as_deref(),
        Some("pi-subagent")
    );
}

#[test]
fn no_catalog_is_no_tools_and_no_error() {
    for reply in [
        Reply::status(404),
        Reply::status(500),
        Reply::network("down"),
        Reply::json(200, json!({"x": 1})),
    ] {
        let mut h = Harness::new(options());
        let c = h.the_open(RequestKind::Catalog);
        h.respond(c.id, reply);
        assert!(h.store.session().tools().is_empty());
        assert!(h.errors().is_empty(), "{:?}", h.errors());
    }
}

#[cfg(feature = "pi")]
#[test]
fn tool_parts_resolve_their_ui_from_details_then_data_tool_ui_then_the_catalog() {
    let mut h = Harness::new(options_with(PI_CAPS));
    let c = h.the_open(RequestKind::Catalog);
    h.respond(c.id, Reply::json(200, catalog_json(&["ls", "pi.subagent"])));
    let chat = streaming_turn(&mut h, "go");
    let pi = |t: &str, d: Value| json!({"type": format!("data-pi-{t}"), "data": d});
    h.body(
        chat,
        &sse(&[
            pi(
                "message-start",
                json!({"seq": 1, "messageId": "a1", "role": "assistant"}),
            ),
            pi(
                "tool-call-start",
                json!({"seq": 2, "messageId": "a1", "toolCallId": "c1", "toolName": "pi.subagent"}),
            ),
            pi(
                "tool-call-end",
                json!({"seq": 3, "messageId": "a1", "toolCallId": "c1", "input": {"task": "t"}}),
            ),
        ]),
    );
    let i = h.message_index("a1");
    // From the catalog only.
    assert_eq!(
        h.store.session().export_message(i)["parts"][0]["ui"],
        json!({"rendererId": "pi-subagent", "displayGroup": "agents", "icon": "bot"})
    );
    let v0 = h.store.session().history().version(i);
    // Live progress: a data-tool-ui chunk (not history in pi mode) shows on the part.
    h.body(
        chat,
        &sse(&[json!({"type": "data-tool-ui", "data": {"toolCallId": "c1", "rendererId": "pi-subagent",
                       "details": {"uiKind": "pi-subagent", "status": "running", "transcript": []}}})]),
    );
    assert!(
        h.store.session().history().version(i) > v0,
        "the part's ui changed: the message is re-exported"
    );
    assert_eq!(
        h.store.session().export_message(i)["parts"][0]["ui"]["details"]["status"],
        "running"
    );
    assert_eq!(h.store.messages().len(), 2, "not a bubble of its own");
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Data { name, .. } if name == "tool-ui")));
    // The result's details win, and stay structured on the part.
    h.body(
        chat,
        &sse(&[pi(
            "tool-result",
            json!({"seq": 4, "messageId": "a1", "toolCallId": "c1", "output": "ok",
                   "details": {"uiKind": "pi-subagent", "status": "done", "steps": [1, 2]}}),
        )]),
    );
    let part = &h.store.session().export_message(i)["parts"][0];
    assert_eq!(part["details"]["steps"], json!([1, 2]));
    assert_eq!(part["ui"]["details"]["status"], "done");
    assert_eq!(part["ui"]["icon"], "bot");
}

#[test]
fn details_survive_hydration_from_the_canonical_history() {
    let mut h = hydrating(PI_CAPS);
    let get = h.the_open(RequestKind::MessagesGet);
    h.respond(
        get.id,
        Reply::json(
            200,
            json!({"messages": [{"id": "a", "role": "assistant", "parts": [
                {"type": "dynamic-tool", "toolName": "pi.subagent", "toolCallId": "c", "state": "output-available",
                 "input": {}, "output": "ok", "details": {"uiKind": "pi-subagent", "transcript": [{"role": "user", "text": "t"}]}}
            ]}]}),
        ),
    );
    let part = &h.store.session().export_message(0)["parts"][0];
    assert_eq!(part["details"]["transcript"][0]["text"], "t");
    assert_eq!(part["ui"]["rendererId"], "pi-subagent");
}
