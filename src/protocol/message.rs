//! `UIMessage` and its parts, in the AI SDK's shape (`ai` 5+ `UIMessage`).
//!
//! Serialisation writes exactly the keys the `ai` package writes (absent optional fields are
//! omitted; a JSON `null` stays `null`), so a message round-trips through `GET/PUT …/messages`
//! unchanged. A part of a kind this version does not know is kept verbatim as [`Part::Other`];
//! tool and data parts also keep keys this version does not model.

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compact::Json;
use super::json::{push_json_str, take, take_str, to_string, unknown_keys, Object};
use super::part::entry_opt;
pub use super::part::Part;

/// `role`: who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `system`: instructions to the model.
    System,
    /// `user`: the person at the composer.
    User,
    /// `assistant`: the agent's answer.
    Assistant,
}

impl Role {
    /// The role a `role` string names; `None` for any other string.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
    /// The role's wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct UIMessage {
    /// `id`: the message's id, unique in the history (pi's `messageId` in pi mode).
    pub id: String,
    /// `role`: who the message is from.
    pub role: Role,
    /// `metadata`: the message's metadata (`messageMetadata` of its chunks), any JSON.
    pub metadata: Option<Box<Value>>,
    /// `parts`: the message's content, in order.
    pub parts: Vec<Part>,
}

impl UIMessage {
    /// An empty message: no parts, no metadata.
    pub fn new(id: impl Into<String>, role: Role) -> Self {
        UIMessage {
            id: id.into(),
            role,
            metadata: None,
            parts: Vec::new(),
        }
    }

    /// A user message holding one text part, as `useChat` builds it.
    pub fn user_text(id: impl Into<String>, text: impl Into<String>) -> Self {
        let mut m = UIMessage::new(id, Role::User);
        m.parts.push(Part::text(text, None));
        m
    }

    /// All text parts joined, for hints and tests.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text { text, .. } = p {
                out.push_str(text);
            }
        }
        out
    }

    /// Reads a stored message (history, a `final` snapshot). Fails without a string `id` or a
    /// known `role`, or on a part that cannot be read.
    pub fn from_json(value: Value) -> Result<UIMessage, String> {
        let Value::Object(mut obj) = value else {
            return Err("message is not an object".into());
        };
        let id = take_str(&mut obj, "id").ok_or("message without a string id")?;
        let role = take_str(&mut obj, "role")
            .as_deref()
            .and_then(Role::parse)
            .ok_or("message without a known role")?;
        let metadata = obj.remove("metadata").map(Box::new);
        let parts = match take(&mut obj, "parts") {
            // Sized once: a collected `Result` grows from four slots, and a hydrated history
            // of one-part messages held 4× its parts.
            Some(Value::Array(items)) => {
                let mut parts = Vec::with_capacity(items.len());
                for item in items {
                    parts.push(Part::from_json(item)?);
                }
                parts
            }
            None => Vec::new(),
            Some(_) => return Err("message parts is not an array".into()),
        };
        Ok(UIMessage {
            id,
            role,
            metadata,
            parts,
        })
    }
}

// What `Serialize for UIMessage` (below) writes, in TypeScript.
#[cfg(feature = "ts")]
crate::ts::declared!(
    UIMessage,
    "UIMessage",
    r#"
/** A message in the AI SDK's `UIMessage` shape. */
export interface UIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  metadata?: unknown;
  parts: UIMessagePart[];
}
"#
);

impl Serialize for UIMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("role", &self.role)?;
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        m.serialize_entry("parts", &self.parts)?;
        m.end()
    }
}

impl UIMessage {
    /// The message's JSON, exactly as its `Serialize` writes it through serde_json (the tests
    /// hold it to that), with the texts of its text and reasoning parts written by
    /// `push_json_str`: a history of plain-text messages (the chat POST and the PUT send it
    /// whole) serialises several times faster. Other parts go through `Serialize`.
    pub fn to_json(&self) -> String {
        let texts: usize = (self.parts.iter())
            .map(|p| match p {
                Part::Text { text, .. } | Part::Reasoning { text, .. } => text.len() + 48,
                _ => 64,
            })
            .sum();
        let mut out = String::with_capacity(texts + 64);
        out.push_str(r#"{"id":"#);
        push_json_str(&mut out, &self.id);
        out.push_str(r#","role":""#);
        out.push_str(self.role.as_str());
        out.push('"');
        if let Some(md) = &self.metadata {
            out.push_str(r#","metadata":"#);
            out.push_str(&to_string(md));
        }
        out.push_str(r#","parts":["#);
        for (k, part) in self.parts.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let state = match part {
                Part::Text {
                    text,
                    state,
                    provider_metadata: None,
                    citations: None,
                } => {
                    out.push_str(r#"{"type":"text","text":"#);
                    push_json_str(&mut out, text);
                    state
                }
                Part::Reasoning {
                    id,
                    text,
                    state,
                    provider_metadata: None,
                } => {
                    out.push_str(r#"{"type":"reasoning""#);
                    if let Some(id) = id {
                        out.push_str(r#","id":"#);
                        push_json_str(&mut out, id);
                    }
                    out.push_str(r#","text":"#);
                    push_json_str(&mut out, text);
                    state
                }
                other => {
                    out.push_str(&to_string(other));
                    continue;
                }
            };
            if let Some(state) = state {
                out.push_str(r#","state":""#);
                out.push_str(state.as_str());
                out.push('"');
            }
            out.push('}');
        }
        out.push_str("]}");
        out
    }
}

impl<'de> Deserialize<'de> for UIMessage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        UIMessage::from_json(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// `streaming` while deltas arrive, `done` after the `-end` chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextState {
    /// `streaming`: deltas still arrive.
    Streaming,
    /// `done`: the `-end` chunk came; the text is final.
    Done,
}

impl TextState {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TextState::Streaming => "streaming",
            TextState::Done => "done",
        }
    }
    pub(super) fn parse(s: &str) -> Option<TextState> {
        match s {
            "streaming" => Some(TextState::Streaming),
            "done" => Some(TextState::Done),
            _ => None,
        }
    }
}

/// The states of a tool invocation, as the `ai` package names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// `input-streaming`: the input is still arriving.
    InputStreaming,
    /// `input-available`: the input is complete; the call runs or waits for an answer.
    InputAvailable,
    /// `approval-requested`: the call waits for the user's approval.
    ApprovalRequested,
    /// `approval-responded`: the user answered the approval; the outcome follows.
    ApprovalResponded,
    /// `output-available`: the call returned its output.
    OutputAvailable,
    /// `output-error`: the call, or its input, failed (`errorText` says why).
    OutputError,
    /// `output-denied`: the call was not approved and did not run.
    OutputDenied,
}

impl ToolState {
    /// The state's wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::InputStreaming => "input-streaming",
            ToolState::InputAvailable => "input-available",
            ToolState::ApprovalRequested => "approval-requested",
            ToolState::ApprovalResponded => "approval-responded",
            ToolState::OutputAvailable => "output-available",
            ToolState::OutputError => "output-error",
            ToolState::OutputDenied => "output-denied",
        }
    }
    /// The state a `state` string names; `None` for any other string.
    pub fn parse(s: &str) -> Option<ToolState> {
        Some(match s {
            "input-streaming" => ToolState::InputStreaming,
            "input-available" => ToolState::InputAvailable,
            "approval-requested" => ToolState::ApprovalRequested,
            "approval-responded" => ToolState::ApprovalResponded,
            "output-available" => ToolState::OutputAvailable,
            "output-error" => ToolState::OutputError,
            "output-denied" => ToolState::OutputDenied,
            _ => return None,
        })
    }
    /// The call has an outcome (output, error or denial).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ToolState::OutputAvailable | ToolState::OutputError | ToolState::OutputDenied
        )
    }
}

/// A `tool-NAME` part (static tool) or a `dynamic-tool` part.
///
/// `Some(Value::Null)` is a JSON `null`; `None` is absent (`undefined` in the `ai` package).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPart {
    /// `toolName`: the tool called (a `tool-NAME` part carries it in its `type`).
    pub tool_name: String,
    /// `dynamic-tool` (name in `toolName`) rather than `tool-NAME`.
    pub dynamic: bool,
    /// `toolCallId`: the call, unique within its message.
    pub tool_call_id: String,
    /// `state`: where the call is in its lifecycle.
    pub state: ToolState,
    /// `input`: the call's input (partial while `input-streaming`).
    pub input: Option<Json>,
    /// `output`: the call's result (`output-available`).
    pub output: Option<Json>,
    /// `errorText`: why the call failed (`output-error`).
    pub error_text: Option<String>,
    /// Structured tool-result details (pi `details`, typed tool UI metadata): never parsed
    /// from human text.
    pub details: Option<Json>,
    /// `resultContent`: a pi tool's result content as the model was given it (pi's
    /// `[{type: "text", text}, …]`), kept beside `output` when `output` shows it otherwise.
    /// Without the `pi` feature the key stays in `extra`, as it came.
    #[cfg(feature = "pi")]
    pub result_content: Option<Json>,
    /// The input text streamed so far (`tool-input-delta`).
    pub raw_input: Option<Box<Value>>,
    /// `json` (the default) or `text`: how the input deltas are read.
    pub input_encoding: Option<String>,
    /// `providerExecuted`: the model's provider ran the tool, not the client.
    pub provider_executed: Option<bool>,
    /// `preliminary`: `output` is interim; a later output replaces it.
    pub preliminary: Option<bool>,
    /// `title`: a display title for the call.
    pub title: Option<String>,
    /// `toolMetadata`: the tool's own metadata.
    pub tool_metadata: Option<Box<Value>>,
    /// Provider metadata of the call (`tool-input-*` and approval chunks).
    pub call_provider_metadata: Option<Box<Value>>,
    /// Provider metadata of the result (`tool-output-*` and `tool-input-error` chunks).
    pub result_provider_metadata: Option<Box<Value>>,
    /// `approval`: the approval request and its answer.
    pub approval: Option<Box<super::Approval>>,
    /// `interrupt`: the question an ask-user call waits on (pi), until it is answered.
    pub interrupt: Option<Box<super::Question>>,
    /// Keys this version does not model, kept as they came.
    pub extra: Object,
}

impl ToolPart {
    /// A call in state `input-streaming`, with nothing known beyond its id and tool.
    pub fn new(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        dynamic: bool,
    ) -> Self {
        ToolPart {
            tool_name: tool_name.into(),
            dynamic,
            tool_call_id: tool_call_id.into(),
            state: ToolState::InputStreaming,
            input: None,
            output: None,
            error_text: None,
            details: None,
            #[cfg(feature = "pi")]
            result_content: None,
            raw_input: None,
            input_encoding: None,
            provider_executed: None,
            preliminary: None,
            title: None,
            tool_metadata: None,
            call_provider_metadata: None,
            result_provider_metadata: None,
            approval: None,
            interrupt: None,
            extra: Object::new(),
        }
    }

    /// This part with placeholders for its two long fields, to export it without them: an
    /// `input` shows as `null` and a string `rawInput` as `""` (each keeps its key, and so
    /// its place); a part without them has none.
    pub fn without_input(&self) -> ToolPart {
        let ToolPart {
            tool_name,
            dynamic,
            tool_call_id,
            state,
            input,
            output,
            error_text,
            details,
            #[cfg(feature = "pi")]
            result_content,
            raw_input,
            input_encoding,
            provider_executed,
            preliminary,
            title,
            tool_metadata,
            call_provider_metadata,
            result_provider_metadata,
            approval,
            interrupt,
            extra,
        } = self;
        ToolPart {
            tool_name: tool_name.clone(),
            dynamic: *dynamic,
            tool_call_id: tool_call_id.clone(),
            state: *state,
            input: input.as_ref().map(|_| Json::from(Value::Null)),
            output: output.clone(),
            error_text: error_text.clone(),
            details: details.clone(),
            #[cfg(feature = "pi")]
            result_content: result_content.clone(),
            raw_input: match raw_input.as_deref() {
                Some(Value::String(_)) => Some(Box::new(Value::String(String::new()))),
                _ => raw_input.clone(),
            },
            input_encoding: input_encoding.clone(),
            provider_executed: *provider_executed,
            preliminary: *preliminary,
            title: title.clone(),
            tool_metadata: tool_metadata.clone(),
            call_provider_metadata: call_provider_metadata.clone(),
            result_provider_metadata: result_provider_metadata.clone(),
            approval: approval.clone(),
            interrupt: interrupt.clone(),
            extra: extra.clone(),
        }
    }
}

pub(super) fn tool_from_json(mut obj: Object, name: String, dynamic: bool) -> Result<Part, String> {
    let tool_name = if dynamic {
        take_str(&mut obj, "toolName").unwrap_or_default()
    } else {
        name
    };
    let tool_call_id = take_str(&mut obj, "toolCallId").ok_or("tool part without toolCallId")?;
    let state = take_str(&mut obj, "state")
        .as_deref()
        .and_then(ToolState::parse)
        .unwrap_or(ToolState::InputAvailable);
    let o = &mut obj;
    let flag = |o: &mut Object, k: &str| o.remove(k).and_then(|v| v.as_bool());
    let part = ToolPart {
        tool_name,
        dynamic,
        tool_call_id,
        state,
        input: o.remove("input").map(Json::compact),
        output: o.remove("output").map(Json::compact),
        error_text: take_str(o, "errorText"),
        details: o.remove("details").map(Json::compact),
        #[cfg(feature = "pi")]
        result_content: o.remove("resultContent").map(Json::compact),
        raw_input: o.remove("rawInput").map(Box::new),
        input_encoding: take_str(o, "inputEncoding"),
        provider_executed: flag(o, "providerExecuted"),
        preliminary: flag(o, "preliminary"),
        title: take_str(o, "title"),
        tool_metadata: o.remove("toolMetadata").map(Box::new),
        call_provider_metadata: o.remove("callProviderMetadata").map(Box::new),
        result_provider_metadata: o.remove("resultProviderMetadata").map(Box::new),
        approval: (o.remove("approval"))
            .and_then(super::Approval::from_value)
            .map(Box::new),
        interrupt: (o.remove("interrupt"))
            .and_then(super::Question::from_value)
            .map(Box::new),
        extra: unknown_keys(obj),
    };
    Ok(Part::Tool(Box::new(part)))
}

impl ToolPart {
    /// Writes the part's type and fields, as the `ai` package orders them.
    pub(super) fn write_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        let t = self;
        if t.dynamic {
            m.serialize_entry("type", "dynamic-tool")?;
            m.serialize_entry("toolName", &t.tool_name)?;
        } else {
            m.serialize_entry("type", &format!("tool-{}", t.tool_name))?;
        }
        m.serialize_entry("toolCallId", &t.tool_call_id)?;
        m.serialize_entry("state", t.state.as_str())?;
        entry_opt(m, "title", t.title.as_ref())?;
        entry_opt(m, "toolMetadata", t.tool_metadata.as_deref())?;
        entry_opt(m, "providerExecuted", t.provider_executed.as_ref())?;
        // `input` is present (possibly undefined) in every state; JSON has no
        // undefined, so an unknown input is omitted.
        entry_opt(m, "input", t.input.as_ref())?;
        entry_opt(m, "inputEncoding", t.input_encoding.as_ref())?;
        entry_opt(m, "rawInput", t.raw_input.as_deref())?;
        entry_opt(m, "output", t.output.as_ref())?;
        entry_opt(m, "errorText", t.error_text.as_ref())?;
        entry_opt(m, "details", t.details.as_ref())?;
        #[cfg(feature = "pi")]
        entry_opt(m, "resultContent", t.result_content.as_ref())?;
        entry_opt(m, "preliminary", t.preliminary.as_ref())?;
        entry_opt(
            m,
            "callProviderMetadata",
            t.call_provider_metadata.as_deref(),
        )?;
        entry_opt(
            m,
            "resultProviderMetadata",
            t.result_provider_metadata.as_deref(),
        )?;
        entry_opt(m, "approval", t.approval.as_deref())?;
        entry_opt(m, "interrupt", t.interrupt.as_deref())?;
        for (k, v) in &t.extra {
            m.serialize_entry(k, v)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `to_json` writes what `Serialize` writes, for every part kind (the fast texts and the
    /// fallback), with and without metadata, and texts holding every escape.
    #[test]
    fn to_json_is_the_serialize_output() {
        let tricky = "q\"b\\s\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}/ größe 😀 </script>";
        let messages = [
            json!({"id":"m1","role":"user","parts":[]}),
            json!({"id":tricky,"role":"system","metadata":{"k":[1,"x"]},"parts":[
                {"type":"text","text":tricky},
                {"type":"text","text":"","state":"streaming"},
                {"type":"text","text":tricky,"state":"done","providerMetadata":{"p":{"q":1}}},
                {"type":"text","text":"c","citations":[{"source":{"id":"1"}}]},
                {"type":"reasoning","text":tricky},
                {"type":"reasoning","id":tricky,"text":"r","state":"done"},
                {"type":"reasoning","text":"r","providerMetadata":{"x":{}},"state":"streaming"},
                {"type":"step-start"},
                {"type":"tool-ls","toolCallId":"c1","state":"output-available","input":{"p":tricky},"output":["a"]},
                {"type":"file","mediaType":"image/png","url":"data:image/png;base64,AA=="},
                {"type":"data-x","data":{"t":tricky}},
                {"type":"future-kind","anything":[1,2]}
            ]}),
            json!({"id":"a","role":"assistant","parts":[{"type":"text","text":"x".repeat(5000)}]}),
        ];
        for v in messages {
            let m = UIMessage::from_json(v).unwrap();
            assert_eq!(m.to_json(), to_string(&m));
        }
    }

    #[test]
    fn every_part_kind_round_trips() {
        let msg = json!({"id":"m1","role":"assistant","metadata":{"a":1},"parts":[
            {"type":"step-start"},
            {"type":"text","text":"hi","state":"done"},
            {"type":"reasoning","text":"why","providerMetadata":{"x":{"y":1}},"state":"streaming"},
            {"type":"tool-ls","toolCallId":"c1","state":"output-available","input":{"p":"."},"output":["a"],"details":{"uiKind":"k"}},
            {"type":"dynamic-tool","toolName":"echo","toolCallId":"c2","state":"output-error","input":{},"errorText":"bad"},
            {"type":"data-weather","id":"w","data":{"t":1}},
            {"type":"file","mediaType":"image/png","filename":"a.png","url":"https://x/a.png"},
            {"type":"source-url","sourceId":"s1","url":"https://x","title":"X"},
            {"type":"source-document","sourceId":"s2","mediaType":"text/plain","title":"T"},
            {"type":"future-kind","anything":[1,2]},
            {"type":"text","text":"c","citations":[{"source":{"type":"source","sourceType":"url","id":"1","url":"u"}}]},
            {"type":"reasoning","id":"r1","text":"r"},
            {"type":"tool-x","toolCallId":"c3","state":"input-streaming","input":null,"rawInput":"{","inputEncoding":"json","toolMetadata":{"k":1},"resultProviderMetadata":{"p":{}},"futureKey":[1]},
            {"type":"data-y","data":null,"transient":false,"other":1},
            {"type":"reasoning-file","mediaType":"image/png","url":"u"},
            {"type":"custom","kind":"p.k","providerMetadata":{"p":{}}},
            {"type":"steering-message","id":"s","parts":[{"type":"text","text":"t"}]}
        ]});
        let parsed = UIMessage::from_json(msg.clone()).unwrap();
        assert_eq!(parsed.parts.len(), 17);
        assert!(matches!(parsed.parts[9], Part::Other(_)));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), msg);
    }

    #[test]
    fn bad_messages_are_typed_errors() {
        assert!(UIMessage::from_json(json!({"role":"user"})).is_err());
        assert!(UIMessage::from_json(json!({"id":"x","role":"robot"})).is_err());
        assert!(
            UIMessage::from_json(json!({"id":"x","role":"user","parts":[{"type":"tool-a"}]}))
                .is_err()
        );
    }
}

/// A file the user attaches to a message (`attachments` of the chat and follow-up POSTs, and
/// the `file` part it becomes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct FileAttachment {
    /// `mediaType`: the file's MIME type.
    pub media_type: String,
    /// `filename`: the file's name, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// `url`: where the file is, often a `data:` URL.
    pub url: String,
    /// `providerReference`: the file's id at each provider it was uploaded to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, string>"))]
    pub provider_reference: Option<Value>,
    /// `providerMetadata`: the part's provider-specific data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "ProviderMetadata"))]
    pub provider_metadata: Option<Value>,
}

impl FileAttachment {
    /// The attachment a `file` part of a message was made from (`None` for other parts).
    pub fn of_part(part: &Part) -> Option<FileAttachment> {
        match part {
            Part::File {
                media_type,
                filename,
                url,
                provider_reference,
                provider_metadata,
            } => Some(FileAttachment {
                media_type: media_type.clone(),
                filename: filename.clone(),
                url: url.clone(),
                provider_reference: provider_reference.clone(),
                provider_metadata: provider_metadata.clone(),
            }),
            _ => None,
        }
    }

    /// The `file` part this attachment becomes in its message.
    pub fn to_part(&self) -> Part {
        Part::File {
            media_type: self.media_type.clone(),
            filename: self.filename.clone(),
            url: self.url.clone(),
            provider_reference: self.provider_reference.clone(),
            provider_metadata: self.provider_metadata.clone(),
        }
    }
}
