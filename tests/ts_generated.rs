//! The package's TypeScript types of the core's serialised Rust types are generated from
//! those types (`agent_chat_store::ts::declarations`, feature `ts`) into the committed
//! `crates/wasm/src/generated.d.ts`, which the wasm's `.d.ts` includes beside the hand-kept
//! `types.d.ts`. The first test fails when the file differs from what the types generate now:
//! `UPDATE_TS=1 cargo test --features ts --test ts_generated` rewrites it. The others
//! serialise samples of each type and hold the declarations to what serde really writes:
//! every key written is declared, every required key declared is written (what ts-rs reads
//! of the serde attributes, and the hand-stated part and message types, cannot drift), and
//! the hand-kept shapes over a Rust type (`PendingApproval`, `PendingQuestion`) declare
//! every key theirs writes.
#![cfg(feature = "ts")]

use agent_chat_store::{composer_state, Status};
use agent_chat_store::{Capabilities, ChatError, ErrorKind, FileAttachment, UIMessage};
use agent_chat_store::{FollowUpQueue, RetryPolicy, SeededRandom};
use agent_chat_store::{Loss, LossCode, SubmitKind, SubmitResult};
use serde_json::{json, Value};

const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/wasm/src/generated.d.ts"
);
const HAND: &str = include_str!("../crates/wasm/src/types.d.ts");

#[test]
fn generated_declarations_are_committed() {
    let generated = agent_chat_store::ts::declarations();
    if std::env::var_os("UPDATE_TS").is_some_and(|v| v == "1") {
        std::fs::write(FILE, &generated).expect("write generated.d.ts");
        return;
    }
    let committed = std::fs::read_to_string(FILE).unwrap_or_default();
    assert!(
        committed == generated,
        "crates/wasm/src/generated.d.ts differs from what the Rust types generate; \
         regenerate it with `UPDATE_TS=1 cargo test --features ts --test ts_generated`"
    );
}

/// Both declaration texts, without their comments.
fn declarations() -> String {
    let all = agent_chat_store::ts::declarations() + HAND;
    let mut out = String::with_capacity(all.len());
    let mut rest = all.as_str();
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        rest = &rest[rest.find("*/").expect("closed comment") + 2..];
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The keys the object type `name` declares (`type NAME = {…}` or `interface NAME … {…}`,
/// with the interfaces it extends), each with whether it is optional.
fn keys(name: &str) -> Vec<(String, bool)> {
    let text = declarations();
    let start = [format!("type {name} = {{"), format!("interface {name} ")]
        .iter()
        .find_map(|h| text.find(h.as_str()))
        .unwrap_or_else(|| panic!("{name} is not declared"));
    let open = start + text[start..].find('{').unwrap();
    let head = &text[start..open];
    let mut out = Vec::new();
    if let Some(ext) = head.split(" extends ").nth(1) {
        // `Error` is the JS built-in.
        for base in ext.split(',').map(str::trim).filter(|b| *b != "Error") {
            out.extend(keys(base));
        }
    }
    let (mut depth, mut word, mut optional) = (0, String::new(), false);
    for c in text[open..].chars() {
        match c {
            '{' | '(' | '[' | '<' => depth += 1,
            '}' | ')' | ']' | '>' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        if depth != 1 {
            word.clear();
            continue;
        }
        match c {
            c if c.is_alphanumeric() || c == '_' => word.push(c),
            '?' if !word.is_empty() => optional = true,
            ':' if !word.is_empty() => {
                out.push((std::mem::take(&mut word), optional));
                optional = false;
            }
            _ => {
                word.clear();
                optional = false;
            }
        }
    }
    out
}

/// `value` (an object) writes only keys `name` declares, and every key it declares required.
fn assert_shape(name: &str, value: &Value) {
    let declared = keys(name);
    assert!(!declared.is_empty(), "{name} declares no key");
    let obj = value.as_object().expect("an object");
    for key in obj.keys() {
        assert!(
            declared.iter().any(|(k, _)| k == key),
            "{name}.{key} is serialised but not declared: {value}"
        );
    }
    for (key, optional) in &declared {
        assert!(
            *optional || obj.contains_key(key),
            "{name}.{key} is declared required but not serialised: {value}"
        );
    }
}

/// The string literals of the union type `name`.
fn literals(name: &str) -> Vec<String> {
    let text = declarations();
    let start = text
        .find(&format!("type {name} = "))
        .unwrap_or_else(|| panic!("{name} is not declared"));
    let decl = &text[start..start + text[start..].find(';').unwrap()];
    decl.split(['"', '\''])
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn to_value(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn capabilities_files_and_errors() {
    assert_shape("Capabilities", &to_value(Capabilities::default()));
    let full = FileAttachment {
        media_type: "a/b".into(),
        filename: Some("f".into()),
        url: "u".into(),
        provider_reference: Some(json!({"openai": "file-1"})),
        provider_metadata: Some(json!({"openai": {"detail": "high"}})),
    };
    assert_shape("FileAttachment", &to_value(&full));
    let bare = FileAttachment {
        filename: None,
        provider_reference: None,
        provider_metadata: None,
        ..full
    };
    assert_shape("FileAttachment", &to_value(bare));
    let mut e = ChatError::from_http(400, br#"{"error":{"code":"c","message":"m","field":"x"}}"#);
    e.kind = ErrorKind::Validation;
    let v = to_value(&e);
    assert!(v.get("status").is_some() && v.get("field").is_some());
    assert_shape("ChatStoreErrorShape", &v);
    assert_shape(
        "ChatStoreErrorShape",
        &to_value(ChatError::new(ErrorKind::Network, "m")),
    );
    // The JS error carries `kind` as `code`; everything else by its own name.
    let js_error = keys("ChatStoreError");
    for k in ["status", "serverCode", "field"] {
        assert!(js_error.contains(&(k.to_string(), true)), "{k}");
    }
    let codes = literals("ChatErrorCode");
    for kind in [
        ErrorKind::FollowUpUnsupported,
        ErrorKind::FollowUpOutOfOrder,
        ErrorKind::SessionNotReady,
        ErrorKind::TurnAlreadyActive,
        ErrorKind::Validation,
        ErrorKind::Network,
        ErrorKind::Server,
        ErrorKind::Protocol,
        ErrorKind::Aborted,
        ErrorKind::LimitExceeded,
        ErrorKind::StreamStalled,
        ErrorKind::NotAsked,
    ] {
        let written = to_value(kind);
        assert!(codes.iter().any(|c| written == *c), "{written}");
        assert_eq!(written, kind.as_str());
    }
    assert_eq!(codes.len(), 12);
}

#[test]
fn queued_items_composer_and_submit_results() {
    let mut q = FollowUpQueue::new(RetryPolicy::default());
    let item = q
        .enqueue("t".into(), vec![], 1, &mut SeededRandom(1))
        .clone();
    let v = to_value(&item);
    assert_shape("QueuedItem", &v);
    assert!(literals("QueuedState").contains(&v["state"].as_str().unwrap().to_string()));
    let mut failed = item.clone();
    failed.error = Some(ChatError::new(ErrorKind::Server, "m"));
    assert_shape("ChatStoreErrorShape", &to_value(&failed)["error"]);
    let blocked = to_value(SubmitResult {
        kind: SubmitKind::Blocked,
        reason: Some(agent_chat_store::Refusal::FilesWhileBusy),
        hint: Some(agent_chat_store::FILES_WHILE_BUSY_HINT),
    });
    assert_shape("SubmitResult", &blocked);
    assert!(literals("SendRefusal").contains(&"filesWhileBusy".to_string()));
    let sent = to_value(SubmitResult {
        kind: SubmitKind::Sent,
        reason: None,
        hint: None,
    });
    assert_shape("SubmitResult", &sent);
    assert!(literals("SubmitResult").contains(&"sent".to_string()));
    for status in [Status::Ready, Status::Streaming] {
        let c = to_value(composer_state(status, &Capabilities::default(), "x", 0));
        assert_shape("ComposerState", &c);
        assert!(literals("ChatStatus").contains(&to_value(status).as_str().unwrap().into()));
    }
    // The snapshot's composer adds the draft and its files (crates/wasm/src/snapshot.rs).
    let composer = keys("ComposerSnapshot");
    assert!(composer.contains(&("draft".into(), false)) && composer.len() == 8);
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
    let v = to_value(&msg);
    assert_shape("UIMessage", &v);
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
        assert_shape(name, part);
    }
}

#[test]
fn catalog_sessions_and_losses() {
    use agent_chat_store::{ToolCatalogEntry, ToolUiHints};
    let tools = [
        ToolCatalogEntry {
            name: "a".into(),
            description: Some("d".into()),
            input_schema: Some(json!({})),
            ui: Some(ToolUiHints {
                renderer_id: Some("r".into()),
                display_group: Some("g".into()),
                icon: Some("i".into()),
            }),
        },
        ToolCatalogEntry {
            name: "b".into(),
            description: None,
            input_schema: None,
            ui: None,
        },
    ];
    for t in &tools {
        assert_shape("ToolCatalogEntry", &to_value(t));
    }
    assert_shape("ToolUiHints", &to_value(&tools[0])["ui"]);
    let body = json!({"sessions": [
        {"id": "s", "title": "t", "createdAt": "a", "updatedAt": 1, "running": true, "archived": true},
        {"id": "u"}
    ]});
    let page = agent_chat_store::parse_session_page(body.to_string().as_bytes()).unwrap();
    assert_eq!(to_value(&page.items[0]).as_object().unwrap().len(), 7);
    for item in &page.items {
        assert_shape("SessionItem", &to_value(item));
    }
    let loss = Loss {
        code: LossCode::NotApplied,
        message: "m".into(),
        message_id: None,
        tool_call_id: Some("c".into()),
    };
    assert_shape("ChatStoreLoss", &to_value(&loss));
    assert!(literals("ChatStoreLoss").contains(&"NotApplied".to_string()));
}

#[test]
fn pending_calls() {
    let v = to_value(agent_chat_store::PendingCall {
        approval_id: Some("a".into()),
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        input: Some(json!({}).into()),
        message_id: "m".into(),
        question: None,
        options: None,
        error: Some(ChatError::from_http(404, b"")),
    });
    assert_shape("PendingApproval", &v);
    assert_shape("ChatStoreErrorShape", &v["error"]);
    let q = to_value(agent_chat_store::PendingCall {
        approval_id: None,
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        input: None,
        message_id: "m".into(),
        question: Some("q".into()),
        options: Some(json!(["a"])),
        error: None,
    });
    assert_shape("PendingQuestion", &q);
}

/// `runQueuedNow` answers `RunNowOutcome::as_str`, written by hand: the declared union's names.
#[test]
fn run_now_outcomes_are_the_declared_names() {
    use agent_chat_store::RunNowOutcome::*;
    let names: Vec<String> = [Retried, Interrupting, AfterCurrent, NotNow, NotFound]
        .iter()
        .map(|o| format!("\"{}\"", o.as_str()))
        .collect();
    let declared = format!("export type RunNowOutcome = {};", names.join(" | "));
    assert!(declarations().contains(&declared), "{declared}");
}
