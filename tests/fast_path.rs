//! The store's delta fast path (`codec::fast_chunk`, applied in place without building the
//! chunk) against the general path, on whole turns: every random stream is run twice, once as
//! servers write it (deltas in their canonical shape take the fast path) and once with a
//! space after each `"type":` (nothing takes it), and the two stores must end the same:
//! messages, status, turn, and every event they reported (errors and violations included).

use crate::common;

use agent_chat_store::RequestKind;
use common::*;

/// Delta texts as JSON string bodies: escapes, multi-byte characters, empty.
const TEXTS: &[&str] = &[
    "Hello ",
    "",
    "größe ",
    r#"a \"quoted\" word"#,
    r"line\nbreak",
    r"\u00e9\ud83d\ude00",
    "😀 ",
    r"back\\slash",
    r"\/",
];
/// Part ids: the ones a stream starts, and one it never does (a violation in AI SDK mode).
const PART_IDS: &[&str] = &["t0", "t1", "r0", "missing"];
const TOOL_DELTAS: &[&str] = &[
    r#"{\"q\":"#,
    r#"\"ab"#,
    r#"c\","#,
    r#"\"n\":[1,"#,
    "2]}",
    " ",
];

/// One random AI SDK turn: parts opened and closed around their deltas, tool input streamed,
/// and (ignored in this mode) pi deltas.
fn ai_sdk_stream(r: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    if r.below(4) > 0 {
        out.push(r#"{"type":"start","messageId":"m-1"}"#.to_string());
    }
    for _ in 0..r.below(60) + 5 {
        let id = r.pick(PART_IDS);
        let text = r.pick(TEXTS);
        let kind = if id.starts_with('r') {
            "reasoning"
        } else {
            "text"
        };
        out.push(match r.below(12) {
            0 => format!(r#"{{"type":"{kind}-start","id":"{id}"}}"#),
            1 => format!(r#"{{"type":"{kind}-end","id":"{id}"}}"#),
            2 => r#"{"type":"start-step"}"#.to_string(),
            3 => r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"search"}"#.into(),
            4 => format!(
                r#"{{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{}"}}"#,
                r.pick(TOOL_DELTAS)
            ),
            5 => format!(
                r#"{{"type":"data-pi-text-delta","data":{{"seq":{},"messageId":"a","partId":"0","delta":"{text}"}}}}"#,
                r.below(50)
            ),
            _ => format!(r#"{{"type":"{kind}-delta","id":"{id}","delta":"{text}"}}"#),
        });
    }
    out.push(r#"{"type":"finish"}"#.into());
    out
}

/// One random pi-mode turn: deltas to two messages and their parts, interleaved, with seqs
/// that sometimes repeat or go back (replays the watermark drops), part ends and message
/// ends, and (ignored in this mode) standard deltas.
fn pi_stream(r: &mut Rng) -> Vec<String> {
    let mut out = vec![
        r#"{"type":"data-pi-mode","data":{"enabled":true}}"#.to_string(),
        r#"{"type":"data-turn-start","data":{"turnId":"turn-1"}}"#.to_string(),
    ];
    let mut seq: u64 = 1;
    for _ in 0..r.below(60) + 5 {
        seq = match r.below(8) {
            0 => seq.saturating_sub(r.below(3) as u64),
            _ => seq + 1,
        };
        let m = r.pick(&["a-1", "a-2"]);
        let part = r.pick(&["0", "1"]);
        let text = r.pick(TEXTS);
        let kind = r.pick(&["text", "reasoning"]);
        out.push(match r.below(10) {
            0 => format!(
                r#"{{"type":"data-pi-message-start","data":{{"seq":{seq},"messageId":"{m}","role":"assistant"}}}}"#
            ),
            1 => format!(
                r#"{{"type":"data-pi-{kind}-end","data":{{"seq":{seq},"messageId":"{m}","partId":"{part}"}}}}"#
            ),
            2 => format!(
                r#"{{"type":"data-pi-message-end","data":{{"seq":{seq},"messageId":"{m}","role":"assistant"}}}}"#
            ),
            3 => format!(r#"{{"type":"text-delta","id":"0","delta":"{text}"}}"#),
            _ => format!(
                r#"{{"type":"data-pi-{kind}-delta","data":{{"seq":{seq},"messageId":"{m}","partId":"{part}","delta":"{text}"}}}}"#
            ),
        });
    }
    out
}

/// Runs one turn on `events` (as SSE, in network chunks of `chunk` bytes) and returns what a
/// user could see of it.
fn run(events: &[String], chunk: usize) -> String {
    let mut h = Harness::new(options());
    h.send("go");
    let chat = h.the_open(RequestKind::Chat).id;
    let mut body = Vec::new();
    for e in events {
        body.extend_from_slice(format!("data: {e}\n\n").as_bytes());
    }
    h.respond(chat, Reply::sse(body).chunked(chunk));
    format!(
        "messages: {}\nstatus: {:?}\nturn: {:?}\nevents: {:?}",
        serde_json::to_string(h.store.messages()).unwrap(),
        h.store.status(),
        h.store.session().turn_id(),
        h.events,
    )
}

#[test]
fn the_fast_path_ends_every_turn_as_the_general_path_does() {
    let (mut fast_deltas, mut violations) = (0, 0);
    for seed in 1..=600u64 {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let events = if seed % 2 == 0 {
            ai_sdk_stream(&mut r)
        } else {
            pi_stream(&mut r)
        };
        let slow: Vec<String> = events
            .iter()
            .map(|e| e.replacen(r#""type":"#, r#""type": "#, 1))
            .collect();
        let chunk = 1 + r.below(300);
        let fast = run(&events, chunk);
        assert_eq!(fast, run(&slow, chunk), "seed {seed}, chunk {chunk}");
        fast_deltas += events
            .iter()
            .filter(|e| agent_chat_store::parse_delta(e).is_some())
            .count();
        violations += usize::from(fast.contains("missing text part"));
    }
    // The corpus does reach both paths and the violations.
    assert!(fast_deltas > 5_000, "{fast_deltas}");
    assert!(violations > 20, "{violations}");
}
