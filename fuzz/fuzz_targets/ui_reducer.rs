//! The AI SDK reducer on arbitrary chunk sequences.
//!
//! Input: `[mode][…]`. Mode bit 0 clear: the rest is an SSE body (fixture seeds). Set: the rest
//! drives a generator of UI message chunks (and data, pi and unknown ones, and junk), plus the
//! message a replay continues. Paths:
//! - `replay_ui_message_stream` (the strict reader, as the `ai` package's transport);
//! - a `UiMessageReducer` fed the store's lenient chunks, as the store feeds it (stopping at
//!   the first violation, as the store fails the turn there), with resumes in between.
//!
//! Invariants: never panics; an error stops processing: the replay of the chunks up to the
//! one that failed equals the replay of all of them (nothing after it counts), and chunks
//! appended after it change nothing.
#![no_main]

use agent_chat_store::Role;
use agent_chat_store::UIMessage;
use agent_chat_store::UiMessageReducer;
use agent_chat_store::{parse_chunk, Chunk};
use agent_chat_store::{replay_ui_message_stream, sse_data, ChunkInput, UiReplay};
use agent_chat_store_fuzz::{any_chunk, chunk_text, message, one_in, ui_chunk, Ctx};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

struct Input {
    texts: Vec<String>,
    /// Indices after which the lenient run resumes (a dropped stream picked up again).
    resumes: Vec<usize>,
    message_id: Option<String>,
    last_message: Option<UIMessage>,
    /// `readUIMessageStream`'s reset on a new message id, or the processor's rename.
    reset: bool,
}

fn input(data: &[u8]) -> Input {
    let reset = data.first().is_some_and(|m| m & 2 != 0);
    if data.first().is_none_or(|m| m & 1 == 0) {
        let body = data.get(1..).unwrap_or_default();
        return Input {
            texts: sse_data(body),
            resumes: Vec::new(),
            message_id: None,
            last_message: None,
            reset,
        };
    }
    let mut u = Unstructured::new(&data[1..]);
    let mut ctx = Ctx::default();
    let message_id = one_in(&mut u, 2).then(|| "m0".to_string());
    let last_message = if one_in(&mut u, 3) {
        UIMessage::from_json(message(&mut u, &mut ctx)).ok()
    } else {
        None
    };
    let mut texts = Vec::new();
    let mut resumes = Vec::new();
    while !u.is_empty() && texts.len() < 300 {
        if one_in(&mut u, 40) {
            resumes.push(texts.len());
        }
        let c = if one_in(&mut u, 6) {
            any_chunk(&mut u, &mut ctx)
        } else {
            ui_chunk(&mut u, &mut ctx)
        };
        texts.push(chunk_text(&mut u, &c));
    }
    Input {
        texts,
        resumes,
        message_id,
        last_message,
        reset,
    }
}

fn replay(texts: &[String], i: &Input) -> UiReplay {
    replay_ui_message_stream(
        texts.iter().map(|t| ChunkInput::Text(t)),
        i.message_id.clone(),
        i.last_message.clone(),
        i.reset,
    )
}

fuzz_target!(|data: &[u8]| {
    let i = input(data);
    let full = replay(&i.texts, &i);
    // The same through parsed values.
    let values: Vec<Value> = i
        .texts
        .iter()
        .filter_map(|t| serde_json::from_str(t).ok())
        .collect();
    let _ = replay_ui_message_stream(
        values.into_iter().map(ChunkInput::Value),
        i.message_id.clone(),
        i.last_message.clone(),
        i.reset,
    );
    if full.error.is_some() {
        // The shortest prefix that fails (failing is monotone in the prefix): nothing after
        // its last chunk may count.
        let (mut lo, mut hi) = (1, i.texts.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if replay(&i.texts[..mid], &i).error.is_some() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let prefix = replay(&i.texts[..lo], &i);
        assert_eq!(prefix, full, "chunks after the error at {} counted", lo - 1);
        let mut more = i.texts.clone();
        more.push(r#"{"type":"text-start","id":"after"}"#.into());
        more.push(r#"{"type":"finish","finishReason":"stop"}"#.into());
        assert_eq!(replay(&more, &i), full, "chunks after an error counted");
    }

    // The store's path: lenient chunks into one message, resumes in between.
    let mut reducer = UiMessageReducer::new();
    let mut msg = i
        .last_message
        .clone()
        .filter(|m| m.role == Role::Assistant)
        .unwrap_or_else(|| UIMessage::new("local", Role::Assistant));
    let mut effects = Vec::new();
    for (n, t) in i.texts.iter().enumerate() {
        if i.resumes.contains(&n) {
            reducer.resumed();
        }
        let result = match parse_chunk(t) {
            Ok(Chunk::Ui(c)) => reducer.apply(&mut msg, c, &mut effects),
            Ok(Chunk::Data(d)) => {
                reducer.apply_data(&mut msg, d, &mut effects);
                Ok(())
            }
            _ => Ok(()),
        };
        effects.clear();
        if result.is_err() {
            break;
        }
    }
    let _ = serde_json::to_string(&msg).expect("the message serialises");
});
