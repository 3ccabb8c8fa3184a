//! The AI SDK UI message stream reducer, natively: the `ai` package's behaviours that the
//! differential test (`tests/js/differential.test.mjs`, against `ai` itself) covers too, kept
//! here so `cargo test` catches a regression without a wasm build; and what only Rust sees
//! (the store's reducer options, effects, the lenient and the strict chunk readers).

#![cfg(feature = "replay")]

use agent_chat_store::{chunk_from_value, strict_ui_chunk, Chunk, ChunkError};
use agent_chat_store::{replay_ui_message_stream, ChunkInput, UiReplay};
use agent_chat_store::{Part, Role, ToolState, UIMessage};
use agent_chat_store::{UiEffect, UiMessageReducer};
use serde_json::{json, Value};

fn replay(chunks: Value) -> UiReplay {
    replay_with(chunks, None, None)
}

fn replay_with(chunks: Value, id: Option<&str>, last: Option<Value>) -> UiReplay {
    let Value::Array(list) = chunks else {
        panic!("an array")
    };
    replay_ui_message_stream(
        list.into_iter().map(ChunkInput::Value),
        id.map(str::to_string),
        last.map(|m| UIMessage::from_json(m).unwrap()),
        false,
    )
}

fn message(r: &UiReplay) -> Value {
    serde_json::to_value(&r.message).unwrap()
}

/// The store's way: lenient chunks into a reducer with `useChat`'s submit options.
fn store_reduce(msg: &mut UIMessage, chunks: Value) -> (Vec<UiEffect>, Option<String>) {
    let mut reducer = UiMessageReducer::new();
    let mut effects = Vec::new();
    for c in chunks.as_array().unwrap() {
        let result = match chunk_from_value(c.clone()).unwrap() {
            Chunk::Ui(c) => reducer.apply(msg, c, &mut effects),
            Chunk::Data(d) => {
                reducer.apply_data(msg, d, &mut effects);
                Ok(())
            }
            other => panic!("{other:?}"),
        };
        if let Err(v) = result {
            return (effects, Some(v.0));
        }
    }
    (effects, None)
}

#[test]
fn a_text_stream_with_steps_metadata_and_finish() {
    let r = replay(json!([
        {"type": "start", "messageId": "m1", "messageMetadata": {"a": {"x": 1, "l": [1, 2]}}},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "r", "providerMetadata": {"p": {"v": 1}}},
        {"type": "reasoning-delta", "id": "r", "delta": "why"},
        {"type": "reasoning-end", "id": "r"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "Hel"},
        {"type": "text-delta", "id": "t", "delta": "lo", "providerMetadata": {"p": {"v": 2}}},
        {"type": "text-end", "id": "t", "citations": [{"source": {"type": "source", "sourceType": "url", "id": "s", "url": "u", "x": 1}}]},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop", "messageMetadata": {"a": {"l": [3]}, "b": null}},
        {"type": "start-step"}
    ]));
    assert_eq!(r.error, None);
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        message(&r),
        json!({"id": "m1", "role": "assistant", "metadata": {"a": {"x": 1, "l": [3]}, "b": null}, "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "id": "r", "text": "why", "state": "done", "providerMetadata": {"p": {"v": 1}}},
            {"type": "text", "text": "Hello", "state": "done", "providerMetadata": {"p": {"v": 2}},
             "citations": [{"source": {"type": "source", "sourceType": "url", "id": "s", "url": "u"}}]},
            {"type": "step-start"}
        ]})
    );
}

#[test]
fn a_violation_stops_processing_and_the_message_keeps_what_it_had() {
    let r = replay(json!([
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "a"},
        {"type": "text-end", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "b"},
        {"type": "text-start", "id": "never"}
    ]));
    assert_eq!(
        r.error.as_deref(),
        Some("Received text-delta for missing text part with ID \"t\". Ensure a \"text-start\" chunk is sent before any \"text-delta\" chunks.")
    );
    assert_eq!(
        message(&r)["parts"],
        json!([{"type": "text", "text": "a", "state": "done"}])
    );

    for (chunks, text) in [
        (json!([{"type": "tool-output-available", "toolCallId": "x", "output": 1}]), "No tool invocation found for tool call ID \"x\"."),
        (json!([{"type": "tool-input-delta", "toolCallId": "x", "inputTextDelta": "{"}]), "Received tool-input-delta for missing tool call with ID \"x\". Ensure a \"tool-input-start\" chunk is sent before any \"tool-input-delta\" chunks."),
        (json!([{"type": "tool-approval-response", "approvalId": "a", "approved": true}]), "No tool invocation found for approval ID \"a\"."),
        (json!([{"type": "message-metadata", "messageMetadata": 5}, {"type": "message-metadata", "messageMetadata": {"k": 1}}]), "Cannot use 'in' operator to search for 'k' in 5"),
    ] {
        assert_eq!(replay(chunks).error.as_deref(), Some(text));
    }
}

#[test]
fn an_error_chunk_is_reported_not_a_violation() {
    let r =
        replay(json!([{"type": "error", "errorText": "boom"}, {"type": "text-start", "id": "t"}]));
    assert_eq!(r.error, None);
    assert_eq!(r.message.parts.len(), 1);
    let mut m = UIMessage::new("m", Role::Assistant);
    let (effects, err) = store_reduce(
        &mut m,
        json!([{"type": "error", "errorText": "boom"}, {"type": "abort"}]),
    );
    assert_eq!(err, None);
    assert_eq!(effects, vec![UiEffect::Error("boom".into())]);
}

#[test]
fn the_strict_reader_rejects_what_the_ai_chunk_schema_rejects() {
    // The replay (as `useChat`'s HTTP transport): an unknown type, a null optional field, a
    // missing `data` stop the stream.
    for bad in [
        json!({"type": "text-stream", "id": "t"}),
        json!({"type": "start", "messageId": null}),
        json!({"type": "data-x", "id": "d"}),
        json!({"type": "text-start", "id": "t", "providerMetadata": {"p": 1}}),
        json!(5),
    ] {
        let r = replay(
            json!([{"type": "text-start", "id": "a"}, bad, {"type": "text-start", "id": "b"}]),
        );
        assert!(r.error.is_some(), "{bad}");
        assert_eq!(r.message.parts.len(), 1, "{bad}");
    }
    assert!(matches!(
        strict_ui_chunk(json!({"type": "text-stream"})),
        Err(ChunkError::UnknownType(_))
    ));
    // The store's reader is lenient: the unknown type is kept for a diagnostic.
    assert!(matches!(
        chunk_from_value(json!({"type": "text-stream"})),
        Ok(Chunk::Unknown { .. })
    ));
    // SSE text goes through the same strict reader.
    let list = [
        r#"{"type":"text-start","id":"t"}"#,
        r#"{"type":"text-delta","id":"t"}"#,
    ];
    let r = replay_ui_message_stream(list.iter().map(|t| ChunkInput::Text(t)), None, None, false);
    assert_eq!(
        r.error.as_deref(),
        Some("`text-delta` chunk is missing `delta`")
    );
}

#[test]
fn a_second_start_with_a_new_id_renames_or_with_the_reset_option_starts_over() {
    let chunks = json!([
        {"type": "start", "messageId": "m1", "messageMetadata": {"a": 1}},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "x"},
        {"type": "start", "messageId": "m2"},
        {"type": "text-delta", "id": "t", "delta": "y"}
    ]);
    // `readUIMessageStream` (resetStateOnMessageIdChange): a fresh message, the text part's id
    // forgotten with it.
    let Value::Array(list) = chunks.clone() else {
        unreachable!()
    };
    let r = replay_ui_message_stream(list.into_iter().map(ChunkInput::Value), None, None, true);
    assert_eq!(
        message(&r),
        json!({"id": "m2", "role": "assistant", "parts": []})
    );
    assert!(r.error.unwrap().contains("missing text part"));
    // The processor's default (`useChat` submitting a message), in the replay and the store:
    // the same message, renamed.
    let r = replay(chunks.clone());
    assert_eq!(r.error, None);
    assert_eq!(
        message(&r),
        json!({"id": "m2", "role": "assistant", "metadata": {"a": 1},
               "parts": [{"type": "text", "text": "xy", "state": "streaming"}]})
    );
    let mut m = UIMessage::new("local", Role::Assistant);
    let (effects, err) = store_reduce(&mut m, chunks);
    assert_eq!(err, None);
    assert_eq!(
        effects,
        vec![
            UiEffect::MessageId("m1".into()),
            UiEffect::MessageId("m2".into())
        ]
    );
    assert_eq!(m.text(), "xy");
    assert_eq!(m.metadata.as_deref(), Some(&json!({"a": 1})));
}

#[test]
fn tool_calls_stream_their_input_and_place_provider_metadata() {
    let r = replay(json!([
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "weather", "title": "W",
         "toolMetadata": {"ui": "card"}, "providerMetadata": {"p": {"call": 1}}},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{\"city\":\"Par"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "is\",\"n\":1"}
    ]));
    assert_eq!(
        message(&r)["parts"][1],
        json!({"type": "tool-weather", "toolCallId": "c", "state": "input-streaming", "title": "W",
               "toolMetadata": {"ui": "card"}, "input": {"city": "Paris", "n": 1},
               "rawInput": "{\"city\":\"Paris\",\"n\":1", "callProviderMetadata": {"p": {"call": 1}}})
    );
    let r = replay(json!([
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "mcp", "dynamic": true, "providerExecuted": true},
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "mcp", "input": null, "dynamic": true},
        {"type": "tool-output-available", "toolCallId": "c", "output": 1, "preliminary": true},
        {"type": "tool-output-available", "toolCallId": "c", "output": 2, "providerMetadata": {"p": {"result": 1}}}
    ]));
    assert_eq!(
        message(&r)["parts"][0],
        json!({"type": "dynamic-tool", "toolName": "mcp", "toolCallId": "c", "state": "output-available",
               "providerExecuted": true, "input": null, "output": 2, "resultProviderMetadata": {"p": {"result": 1}}})
    );
}

#[test]
fn approvals_carry_every_field_and_keep_the_first_reason() {
    let r = replay(json!([
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "rm", "input": {}},
        {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c", "approvalDescriptor": {"d": 1},
         "inputSchemaInput": null, "reason": "risky", "isAutomatic": true, "signature": "s"},
        {"type": "tool-approval-response", "approvalId": "a", "approved": false, "reason": "no"},
        {"type": "tool-approval-response", "approvalId": "a", "approved": true, "providerExecuted": true}
    ]));
    let part = &message(&r)["parts"][0];
    assert_eq!(part["state"], "approval-responded");
    assert_eq!(part["providerExecuted"], true);
    assert_eq!(
        part["approval"],
        json!({"id": "a", "descriptor": {"d": 1}, "inputSchemaInput": null, "requestReason": "risky",
               "isAutomatic": true, "signature": "s", "approved": true, "reason": "no"})
    );
}

#[test]
fn data_parts_are_the_chunk_replaced_by_type_and_id_and_transient_ones_only_reach_on_data() {
    let mut m = UIMessage::new("m", Role::Assistant);
    let (effects, _) = store_reduce(
        &mut m,
        json!([
            {"type": "data-w", "id": "d", "data": 1, "transient": false, "extra": "kept"},
            {"type": "start-step"},
            {"type": "data-w", "id": "d", "data": 2},
            {"type": "data-status", "data": "busy", "transient": true}
        ]),
    );
    assert_eq!(
        serde_json::to_value(&m.parts).unwrap(),
        json!([{"type": "data-w", "id": "d", "data": 2, "transient": false, "extra": "kept"}, {"type": "step-start"}])
    );
    assert_eq!(effects.len(), 3);
    assert!(matches!(&effects[2], UiEffect::Data(d) if d.transient && d.name == "status"));
}

#[test]
fn a_continued_message_goes_on_from_its_streaming_tool_input() {
    let last = json!({"id": "m1", "role": "assistant", "parts": [
        {"type": "tool-old", "toolCallId": "o", "state": "input-streaming", "rawInput": "{"},
        {"type": "step-start"},
        {"type": "tool-t", "toolCallId": "c", "state": "input-streaming", "title": "T",
         "input": {"city": "Par"}, "rawInput": "{\"city\":\"Par"},
        {"type": "future-kind", "kept": [1]}
    ]});
    let chunks = json!([
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "is\"}"},
        {"type": "tool-output-available", "toolCallId": "c", "output": "sunny"}
    ]);
    let r = replay_with(chunks.clone(), None, Some(last.clone()));
    assert_eq!(r.error, None);
    let v = message(&r);
    assert_eq!(v["parts"][2]["input"], json!({"city": "Paris"}));
    assert_eq!(v["parts"][2]["state"], "output-available");
    assert_eq!(v["parts"][2]["title"], "T");
    assert_eq!(v["parts"][3], json!({"type": "future-kind", "kept": [1]}));
    // Only the current step's calls go on.
    let r = replay_with(
        json!([{"type": "tool-input-delta", "toolCallId": "o", "inputTextDelta": "}"}]),
        None,
        Some(last.clone()),
    );
    assert!(r.error.unwrap().contains("missing tool call with ID \"o\""));
    // The store's reducer rebuilds them on the first chunk that touches the message, not on a
    // transient data chunk applied to a stand-in.
    let mut reducer = UiMessageReducer::new();
    let mut effects = Vec::new();
    let transient = chunk_from_value(json!({"type": "data-s", "data": 1, "transient": true}));
    let Ok(Chunk::Data(d)) = transient else {
        panic!()
    };
    reducer.apply_data(&mut UIMessage::new("", Role::Assistant), d, &mut effects);
    let mut m = UIMessage::from_json(last).unwrap();
    for c in chunks.as_array().unwrap() {
        let Ok(Chunk::Ui(c)) = chunk_from_value(c.clone()) else {
            panic!()
        };
        reducer.apply(&mut m, c, &mut effects).unwrap();
    }
    assert_eq!(serde_json::to_value(&m).unwrap(), v);
}

#[test]
fn reset_step_removes_the_current_step() {
    let r = replay(json!([
        {"type": "start-step"},
        {"type": "text-start", "id": "a"}, {"type": "text-end", "id": "a"},
        {"type": "start-step"},
        {"type": "text-start", "id": "b"},
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
        {"type": "reset-step"}
    ]));
    assert_eq!(r.message.parts.len(), 3);
    assert!(matches!(r.message.parts[2], Part::StepStart));
}

#[test]
fn a_long_streamed_input_appends_to_its_raw_input() {
    // 5,000 deltas spelling a 20 KB input: the part's `rawInput` grows in place and the
    // parser keeps the value up to date, so the whole stream is a few milliseconds.
    let body: String = (0..5000).map(|i| format!("{:04}", i % 10000)).collect();
    let text = format!("{{\"content\":\"{body}\"}}");
    let mut chunks =
        vec![json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "write"})];
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let (d, r) = rest.split_at(rest.len().min(4));
        chunks.push(json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": d}));
        rest = r;
    }
    let started = std::time::Instant::now();
    let r = replay(Value::Array(chunks));
    let t = r.message.parts[0].as_tool().unwrap();
    assert_eq!(t.state, ToolState::InputStreaming);
    assert_eq!(t.raw_input.as_deref(), Some(&Value::String(text.clone())));
    assert_eq!(
        t.input.as_ref().map(|i| i.value().into_owned()),
        Some(json!({"content": body}))
    );
    // Generous: a quadratic copy of the text would still pass; this catches a re-parse.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}
