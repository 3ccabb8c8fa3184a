//! The pi reducer on arbitrary chunk sequences of both families.
//!
//! Input: `[mode][…]`. Mode bit 0 clear: the rest is an SSE body (fixture seeds), its events'
//! data are the chunks. Set: the rest drives a generator of JSON chunks (pi projection events
//! with seqs that go forward, repeat, go back or are malformed; AI SDK chunks; junk), mixed
//! with what the store does between events (new turns, optimistic user messages, hydration).
//! The chunks go through `replay_pi_stream` (as text and as parsed values) and through a
//! `PiReducer` driven directly. Invariants:
//! - never panics;
//! - the seq watermark never goes back within a turn (only a new turn resets it);
//! - an event at or below the watermark changes nothing (a replay);
//! - `apply` says true exactly when the history changed;
//! - every applied part event lands in a message of the history: the message it changed holds
//!   the part (the delta's text, the tool call);
//! - message ids stay unique and the id index agrees with the list.
#![no_main]

use agent_chat_store::History;
use agent_chat_store::PiReducer;
use agent_chat_store::{parse_chunk, Chunk, PartKind, PiEvent};
use agent_chat_store::{replay_pi_stream, sse_data, ChunkInput};
use agent_chat_store::{Part, Role, UIMessage};
use agent_chat_store_fuzz::{any_chunk, chunk_text, int, message, one_in, Ctx};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

enum Step {
    Chunk(String),
    /// The store started a turn of its own: an optimistic user message, then a new turn.
    ClientTurn(String),
    /// A `data-turn-start` the store handles itself (the reducer's watermark restarts).
    NewTurn,
    /// Hydration replaced the history.
    Hydrate(Vec<UIMessage>),
    EndOfStream,
}

fn check_history(h: &History) {
    let mut seen = std::collections::HashSet::new();
    for (i, m) in h.messages().iter().enumerate() {
        assert!(
            seen.insert(m.id.as_str()),
            "duplicate message id {:?}",
            m.id
        );
        assert_eq!(
            h.position(&m.id),
            Some(i),
            "index out of date for {:?}",
            m.id
        );
        assert!(h.version(i) <= h.revision());
    }
}

fn texts_of(m: &UIMessage, kind: PartKind) -> impl Iterator<Item = &str> {
    m.parts.iter().filter_map(move |p| match (p, kind) {
        (Part::Text { text, .. }, PartKind::Text) => Some(text.as_str()),
        (Part::Reasoning { text, .. }, PartKind::Reasoning) => Some(text.as_str()),
        _ => None,
    })
}

fn has_tool(m: &UIMessage, call: &str) -> bool {
    m.parts
        .iter()
        .any(|p| p.as_tool().is_some_and(|t| t.tool_call_id == call))
}

fn apply_checked(pi: &mut PiReducer, h: &mut History, ev: PiEvent) {
    let before_mark = pi.watermark();
    let before_rev = h.revision();
    let seq = ev.seq();
    let legacy = matches!(ev, PiEvent::LegacyMessageDelta { .. });
    let turn_start = matches!(ev, PiEvent::TurnStart { .. });
    let probe = ev.clone();
    let mut effects = Vec::new();
    let changed = pi.apply(h, ev, &mut effects);
    assert_eq!(
        changed,
        h.revision() != before_rev,
        "apply's answer for {probe:?}"
    );
    if !turn_start {
        assert!(
            pi.watermark() >= before_mark,
            "watermark went back from {before_mark:?} to {:?} on {probe:?}",
            pi.watermark()
        );
    }
    if let (Some(s), Some(w), false) = (seq, before_mark, legacy) {
        if s <= w {
            assert!(
                !changed,
                "a replayed event (seq {s} ≤ {w}) changed history: {probe:?}"
            );
        }
    }
    check_history(h);
    if !changed {
        return;
    }
    // The message the event changed last: it must hold what the event applied.
    let last = (0..h.len()).find(|&i| h.version(i) == h.revision());
    let holds = |pred: &dyn Fn(&UIMessage) -> bool| {
        let i = last.unwrap_or_else(|| panic!("{probe:?} changed history but no message"));
        assert!(
            pred(&h.messages()[i]),
            "{probe:?} did not land in the message it changed: {:?}",
            h.messages()[i]
        );
    };
    match &probe {
        PiEvent::PartDelta { kind, delta, .. } => {
            holds(&|m| texts_of(m, *kind).any(|t| t.ends_with(delta.as_str())))
        }
        PiEvent::PartStart { kind, .. } => holds(&|m| texts_of(m, *kind).next().is_some()),
        PiEvent::PartEnd {
            kind,
            text: Some(t),
            ..
        } => holds(&|m| texts_of(m, *kind).any(|x| x == t)),
        PiEvent::LegacyMessageDelta { delta, .. } => {
            holds(&|m| texts_of(m, PartKind::Text).any(|t| t.ends_with(delta.as_str())))
        }
        PiEvent::ToolCallStart { tool_call_id, .. }
        | PiEvent::ToolCallDelta { tool_call_id, .. }
        | PiEvent::ToolCallEnd { tool_call_id, .. }
        | PiEvent::ToolResult { tool_call_id, .. } => holds(&|m| has_tool(m, tool_call_id)),
        _ => {}
    }
}

fn steps(data: &[u8]) -> Vec<Step> {
    if data.first().is_none_or(|m| m & 1 == 0) {
        let body = data.get(1..).unwrap_or_default();
        return sse_data(body).into_iter().map(Step::Chunk).collect();
    }
    let mut u = Unstructured::new(&data[1..]);
    let mut ctx = Ctx::default();
    let mut out = Vec::new();
    let mut n = 0;
    while !u.is_empty() && out.len() < 400 {
        match int(&mut u, 0, 40) {
            0 => {
                n += 1;
                let id = format!("local-{n}");
                ctx.local_ids.push(id.clone());
                out.push(Step::ClientTurn(id));
            }
            1 => out.push(Step::NewTurn),
            2 => {
                let list: Vec<UIMessage> = (0..int(&mut u, 0, 3))
                    .filter_map(|_| UIMessage::from_json(message(&mut u, &mut ctx)).ok())
                    .collect();
                out.push(Step::Hydrate(list));
            }
            3 if one_in(&mut u, 4) => out.push(Step::EndOfStream),
            _ => {
                let c = any_chunk(&mut u, &mut ctx);
                out.push(Step::Chunk(chunk_text(&mut u, &c)));
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let steps = steps(data);
    let texts: Vec<&str> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Chunk(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();

    // The pure helper, from text and from parsed values.
    let r = replay_pi_stream(texts.iter().map(|t| ChunkInput::Text(t)));
    let mut h = History::new();
    h.replace_all(r.messages.clone());
    assert_eq!(
        h.len(),
        r.messages.len(),
        "replay_pi_stream gave duplicate ids"
    );
    let values: Vec<Value> = texts
        .iter()
        .filter_map(|t| serde_json::from_str(t).ok())
        .collect();
    let _ = replay_pi_stream(values.into_iter().map(ChunkInput::Value));

    // The reducer itself, with the store's moves in between.
    let mut h = History::new();
    let mut pi = PiReducer::new();
    for step in steps {
        match step {
            Step::Chunk(t) => {
                if let Ok(Chunk::Pi(ev)) = parse_chunk(&t) {
                    apply_checked(&mut pi, &mut h, ev);
                }
            }
            Step::ClientTurn(id) => {
                let mut m = UIMessage::new(id.clone(), Role::User);
                m.parts.push(Part::text("hello", None));
                h.push(m);
                pi.set_pending_user(Some(id));
                pi.new_turn();
                check_history(&h);
            }
            Step::NewTurn => pi.new_turn(),
            Step::Hydrate(list) => {
                h.replace_all(list);
                pi.reset();
                check_history(&h);
            }
            Step::EndOfStream => {
                pi.end_of_stream(&mut h);
                check_history(&h);
            }
        }
    }
    pi.end_of_stream(&mut h);
    check_history(&h);
});
