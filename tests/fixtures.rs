//! Every legacy-server trace replays to the canonical history its server answered afterwards
//! (ids aside), with no duplicate or misplaced part.

#![cfg(all(feature = "pi", feature = "replay"))]

use crate::common;

use agent_chat_store::{replay_pi_stream, sse_data, ChunkInput};
use common::{fixture, without_ids};
use serde_json::Value;

fn replay(name: &str) -> Vec<Value> {
    let body = fixture(name);
    let data = sse_data(&body);
    let out = replay_pi_stream(data.iter().map(|d| ChunkInput::Text(d)));
    out.messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect()
}

#[test]
fn prompt_and_follow_up_trace_matches_the_canonical_history() {
    let got = replay("trace-prompt-followup.sse");
    let canonical: Value =
        serde_json::from_slice(&fixture("trace-prompt-followup.messages.json")).unwrap();
    let want = canonical["messages"].as_array().unwrap();
    assert_eq!(without_ids(&got), without_ids(want));
}

#[test]
fn stop_trace_matches_the_canonical_history() {
    let got = replay("trace-stop.sse");
    let http = String::from_utf8(fixture("trace-stop.http.txt")).unwrap();
    let line = http
        .lines()
        .skip_while(|l| !l.starts_with("## GET messages after stop"))
        .nth(1)
        .unwrap();
    let canonical: Value = serde_json::from_str(line).unwrap();
    let want = canonical["messages"].as_array().unwrap();
    // A stopped turn sends no text-end; the end of the stream settles the part as done, as
    // the server's history has it.
    assert_eq!(without_ids(&got), without_ids(want));
}

#[test]
fn provider_error_trace_keeps_the_user_message_and_an_empty_assistant_turn() {
    let got = replay("trace-provider-error.sse");
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0]["role"], "user");
    assert_eq!(got[0]["parts"][0]["text"], "[ERR] trigger provider error");
    assert_eq!(got[1]["role"], "assistant");
    assert_eq!(got[1]["parts"].as_array().unwrap().len(), 0);
}

#[test]
fn replaying_a_trace_twice_in_one_turn_changes_nothing() {
    let body = fixture("trace-prompt-followup.sse");
    let data = sse_data(&body);
    // The same turn's chunks again, without a new turn-start: every seq is a replay.
    let twice = data.iter().chain(data.iter().skip(1));
    let out = replay_pi_stream(twice.map(|d| ChunkInput::Text(d)));
    let once = replay("trace-prompt-followup.sse");
    let got: Vec<Value> = out
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    assert_eq!(got, once);
}
