//! The package's TypeScript declarations (`crates/wasm/src/types.d.ts`) mirror the Rust types' serde
//! shapes. This test serialises every exported Rust type and checks that each key it writes
//! is declared in the interface of that name, so a field renamed or added in Rust cannot
//! silently leave the `.d.ts` behind.

use agent_chat_store::SeededRandom;
use agent_chat_store::{composer_state, Status};
use agent_chat_store::{Capabilities, ChatError, ErrorKind, FileAttachment, UIMessage};
use agent_chat_store::{FollowUpQueue, RetryPolicy};
use agent_chat_store::{SubmitKind, SubmitResult};
use serde_json::{json, Value};

const TS: &str = include_str!("../crates/wasm/src/types.d.ts");

/// The body of `interface NAME … { … }` (up to its closing brace at line start).
fn interface(name: &str) -> &'static str {
    let start = TS
        .find(&format!("interface {name} "))
        .unwrap_or_else(|| panic!("interface {name} missing from types.d.ts"));
    let rest = &TS[start..];
    let end = rest.find("\n}").map(|e| e + 2).unwrap_or(rest.len());
    &rest[..end]
}

fn assert_keys(name: &str, value: &Value) {
    let decl = interface(name);
    for key in value.as_object().expect("an object").keys() {
        assert!(
            decl.contains(&format!(" {key}:")) || decl.contains(&format!(" {key}?:")),
            "{name}.{key} is serialised by Rust but not declared in types.d.ts"
        );
    }
}

#[test]
fn capabilities_files_and_errors() {
    assert_keys(
        "Capabilities",
        &serde_json::to_value(Capabilities::default()).unwrap(),
    );
    let f = FileAttachment {
        media_type: "a/b".into(),
        filename: Some("f".into()),
        url: "u".into(),
        provider_reference: Some(serde_json::json!({"openai": "file-1"})),
        provider_metadata: Some(serde_json::json!({"openai": {"detail": "high"}})),
    };
    assert_keys("FileAttachment", &serde_json::to_value(f).unwrap());
    let mut e = ChatError::from_http(400, br#"{"error":{"code":"c","message":"m","field":"x"}}"#);
    e.kind = ErrorKind::Validation;
    let v = serde_json::to_value(&e).unwrap();
    // The JS error carries `kind` as `code`; everything else by its own name.
    for k in ["status", "serverCode", "field"] {
        assert!(v.get(k).is_some());
        assert!(
            interface("ChatStoreError").contains(&format!(" {k}?:")),
            "{k}"
        );
    }
}

#[test]
fn queued_items_and_submit_results() {
    let mut q = FollowUpQueue::new(RetryPolicy::default());
    let item = q
        .enqueue("t".into(), vec![], 1, &mut SeededRandom(1))
        .clone();
    assert_keys("QueuedItem", &serde_json::to_value(item).unwrap());
    let r = SubmitResult {
        kind: SubmitKind::Blocked,
        reason: Some(agent_chat_store::Refusal::FilesWhileBusy),
        hint: Some(agent_chat_store::FILES_WHILE_BUSY_HINT),
    };
    let v = serde_json::to_value(r).unwrap();
    assert_keys("SubmitResult", &v);
    assert!(TS.contains(&format!("'{}'", v["reason"].as_str().unwrap())));
    let c = composer_state(Status::Streaming, &Capabilities::default(), "x", 0);
    let v = serde_json::to_value(c).unwrap();
    assert_keys("ComposerSnapshot", &v);
}

#[test]
fn every_part_kind() {
    let msg = UIMessage::from_json(json!({"id":"m","role":"assistant","metadata":{},"parts":[
        {"type":"text","text":"a","state":"done","providerMetadata":{}},
        {"type":"reasoning","text":"a","state":"done","providerMetadata":{}},
        {"type":"dynamic-tool","toolName":"t","toolCallId":"c","state":"output-available","input":{},"output":1,"details":{},"title":"T","providerExecuted":true,"preliminary":false,"callProviderMetadata":{},"approval":{"id":"a"},"rawInput":1,"errorText":"e"},
        {"type":"data-x","id":"d","data":1},
        {"type":"file","mediaType":"m","filename":"f","url":"u","providerMetadata":{}},
        {"type":"source-url","sourceId":"s","url":"u","title":"t","providerMetadata":{}},
        {"type":"source-document","sourceId":"s","mediaType":"m","title":"t","filename":"f","providerMetadata":{}},
        {"type":"step-start"}
    ]}))
    .unwrap();
    let v = serde_json::to_value(&msg).unwrap();
    assert_keys("UIMessage", &v);
    let names = [
        "TextUIPart",
        "ReasoningUIPart",
        "DynamicToolUIPart",
        "DataUIPart",
        "FileUIPart",
        "SourceUrlUIPart",
        "SourceDocumentUIPart",
        "StepStartUIPart",
    ];
    for (part, name) in v["parts"].as_array().unwrap().iter().zip(names) {
        let mut decl = interface(name).to_string();
        if name == "DynamicToolUIPart" {
            decl.push_str(interface("ToolFields"));
        }
        for key in part.as_object().unwrap().keys() {
            assert!(
                decl.contains(&format!(" {key}:")) || decl.contains(&format!(" {key}?:")),
                "{name}.{key} not declared"
            );
        }
    }
    for state in ["ready", "submitted", "streaming", "error"] {
        assert!(
            interface("ChatSnapshot").contains("status: ChatStatus")
                && TS.contains(&format!("'{state}'"))
        );
    }
}

#[test]
fn session_items() {
    let body = json!({"sessions": [{"id": "s", "title": "t", "createdAt": "a", "updatedAt": 1, "running": true, "archived": true}]});
    let page = agent_chat_store::parse_session_page(body.to_string().as_bytes()).unwrap();
    let v = serde_json::to_value(&page.items[0]).unwrap();
    assert_eq!(
        v.as_object().unwrap().len(),
        7,
        "every field is written: {v}"
    );
    assert_keys("SessionItem", &v);
}

#[test]
fn pending_calls() {
    let v = serde_json::to_value(agent_chat_store::PendingCall {
        approval_id: Some("a".into()),
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        input: Some(json!({}).into()),
        message_id: "m".into(),
        question: None,
        options: None,
        error: Some(ChatError::from_http(404, b"")),
    })
    .unwrap();
    assert_keys("PendingApproval", &v);
    let q = serde_json::to_value(agent_chat_store::PendingCall {
        approval_id: None,
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        input: None,
        message_id: "m".into(),
        question: Some("q".into()),
        options: Some(json!(["a"])),
        error: None,
    })
    .unwrap();
    assert_keys("PendingQuestion", &q);
    assert_keys("ChatStoreErrorShape", &v["error"]);
}
