//! [`Part`]: one part of a message, and the table of its plain kinds.
//!
//! A plain kind (a file, a source, a custom or steering part) is a row of
//! [`plain_parts!`]: its JSON type and, per field, the Rust name and type, the JSON key, and
//! how its chunk carries it. From that one row come the variant, the history reader
//! ([`Part::from_json`]), the writer (`Serialize`), the chunk's lenient reader and its strict
//! `uiMessageChunkSchema` check ([`crate::protocol::chunk`]). Adding a field is one row.
//! Text, reasoning, tool and data parts have rules of their own (the text fast path, tool
//! states, data replacement) and are written out.

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chunk::ChunkError;
use super::json::{take, take_str, unknown_keys, Object};
use super::message::{tool_from_json, TextState, ToolPart};
use super::schema::Field;

/// A field's Rust type, by its kind in the table.
macro_rules! field_type {
    (text) => { String };
    (maybe_text) => { Option<String> };
    (maybe_json) => { Option<Value> };
    (list) => { Value };
}

/// A field read from a stored part (history): lenient, absent is the default.
macro_rules! read_part_field {
    (text, $o:ident, $key:literal) => {
        take_str($o, $key).unwrap_or_default()
    };
    (maybe_text, $o:ident, $key:literal) => {
        take_str($o, $key)
    };
    // A JSON `null` stays `null` (it round-trips).
    (maybe_json, $o:ident, $key:literal) => {
        $o.remove($key)
    };
    (list, $o:ident, $key:literal) => {
        $o.remove($key).unwrap_or(Value::Array(Vec::new()))
    };
}

/// A field read from a chunk (the store's lenient reader): only a required one can fail.
macro_rules! read_chunk_field {
    (Str, $o:ident, $t:ident, $key:literal) => {
        take_str($o, $key).ok_or_else(|| ChunkError::missing($t, $key))?
    };
    (OptStr, $o:ident, $t:ident, $key:literal) => {
        take_str($o, $key)
    };
    (OptProviderMetadata, $o:ident, $t:ident, $key:literal) => {
        take($o, $key)
    };
    (SteeringParts, $o:ident, $t:ident, $key:literal) => {
        match $o.remove($key) {
            Some(p @ Value::Array(_)) => p,
            _ => return Err(ChunkError::missing($t, $key)),
        }
    };
    // Not a field of the chunk: the part's default.
    (Unread, $o:ident, $t:ident, $key:literal) => {
        None
    };
}

/// A field written to JSON: optional ones only when present.
macro_rules! write_field {
    (text, $m:ident, $key:literal, $v:ident) => {
        $m.serialize_entry($key, $v)?
    };
    (list, $m:ident, $key:literal, $v:ident) => {
        $m.serialize_entry($key, $v)?
    };
    (maybe_text, $m:ident, $key:literal, $v:ident) => {
        entry_opt($m, $key, $v.as_ref())?
    };
    (maybe_json, $m:ident, $key:literal, $v:ident) => {
        entry_opt($m, $key, $v.as_ref())?
    };
}

/// The plain part kinds, one row each (see the module docs). Fields are written in the
/// order of the row, the order the `ai` package writes them. The doc comments of a row go to
/// its variant, those of a field row to its field.
macro_rules! plain_parts {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $ty:literal {
            $( $(#[$fdoc:meta])* $field:ident: $kind:ident $key:literal $chunk:ident ),* $(,)?
        }
    )*) => {
        /// One part of a message.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Part {
            /// `text`: text the user wrote or the model produced.
            Text {
                /// `text`: the text so far.
                text: String,
                /// `state`: `streaming` or `done`; absent for text that did not stream.
                state: Option<TextState>,
                /// `providerMetadata`: the part's provider-specific data.
                provider_metadata: Option<Value>,
                /// Set by `text-end`.
                citations: Option<Value>,
            },
            /// `reasoning`: the model's reasoning.
            Reasoning {
                /// The `reasoning-start` chunk's id (text parts do not keep theirs).
                id: Option<String>,
                /// `text`: the reasoning so far.
                text: String,
                /// `state`: `streaming` or `done`; absent for reasoning that did not stream.
                state: Option<TextState>,
                /// `providerMetadata`: the part's provider-specific data.
                provider_metadata: Option<Value>,
            },
            /// `tool-NAME` or `dynamic-tool`: a tool call and its outcome.
            Tool(Box<ToolPart>),
            /// `data-NAME`; `name` is without the `data-` prefix.
            Data {
                /// The part's type without `data-`.
                name: String,
                /// `id`: a later data chunk of the same name and id replaces this part.
                id: Option<String>,
                /// `data`: the payload, any JSON.
                data: Value,
                /// The chunk's other keys (`transient: false`, unknown ones): the `ai` package
                /// stores the whole chunk as the part.
                extra: Object,
            },
            $( $(#[$doc])* $variant { $( $(#[$fdoc])* $field: field_type!($kind) ),* }, )*
            /// `step-start`: the parts after it belong to a new step.
            StepStart,
            /// A part kind this version does not model, kept verbatim.
            Other(Value),
        }

        /// A plain kind read from a stored part; `None` for any other type.
        fn read_plain_part(ty: &str, o: &mut Object) -> Option<Part> {
            Some(match ty {
                $( $ty => Part::$variant { $( $field: read_part_field!($kind, o, $key) ),* }, )*
                _ => return None,
            })
        }

        /// The part a plain chunk carries (`t` is its type); `None` for any other type.
        pub(crate) fn plain_chunk(t: &str, o: &mut Object) -> Option<Result<Part, ChunkError>> {
            let read = |o: &mut Object| -> Result<Part, ChunkError> {
                Ok(match t {
                    $( $ty => Part::$variant {
                        $( $field: read_chunk_field!($chunk, o, t, $key) ),*
                    }, )*
                    _ => unreachable!("matched below"),
                })
            };
            match t {
                $( $ty )|* => Some(read(o)),
                _ => None,
            }
        }

        /// A plain chunk's fields in `uiMessageChunkSchema`; `None` for any other type.
        pub(crate) fn plain_chunk_schema(t: &str) -> Option<&'static [(&'static str, Field)]> {
            Some(match t {
                $( $ty => &[ $( ($key, Field::$chunk) ),* ], )*
                _ => return None,
            })
        }

        /// Writes a plain kind's type and fields; `false` for any other part.
        fn write_plain_part<M: SerializeMap>(part: &Part, m: &mut M) -> Result<bool, M::Error> {
            match part {
                $( Part::$variant { $( $field ),* } => {
                    m.serialize_entry("type", $ty)?;
                    $( write_field!($kind, m, $key, $field); )*
                } )*
                _ => return Ok(false),
            }
            Ok(true)
        }
    };
}

plain_parts! {
    /// `file`: a file in the message (an attachment, or one the model made).
    File = "file" {
        /// `mediaType`: the file's MIME type.
        media_type: text "mediaType" Str,
        /// `filename`: the file's name, if known (a `file` chunk does not carry it).
        filename: maybe_text "filename" Unread,
        /// `url`: where the file is, a URL or a `data:` URL.
        url: text "url" Str,
        /// `providerReference`: the file's id at each provider it was uploaded to (the `ai`
        /// package's `uploadFile`), which a model message uses over `url`.
        provider_reference: maybe_json "providerReference" Unread,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: maybe_json "providerMetadata" OptProviderMetadata,
    }
    /// `reasoning-file`: a file the model made while reasoning.
    ReasoningFile = "reasoning-file" {
        /// `mediaType`: the file's MIME type.
        media_type: text "mediaType" Str,
        /// `url`: where the file is, a URL or a `data:` URL.
        url: text "url" Str,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: maybe_json "providerMetadata" OptProviderMetadata,
    }
    /// `source-url`: a web page the answer draws on.
    SourceUrl = "source-url" {
        /// `sourceId`: the source's id.
        source_id: text "sourceId" Str,
        /// `url`: the page's address.
        url: text "url" Str,
        /// `title`: the page's title.
        title: maybe_text "title" OptStr,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: maybe_json "providerMetadata" OptProviderMetadata,
    }
    /// `source-document`: a document the answer draws on.
    SourceDocument = "source-document" {
        /// `sourceId`: the source's id.
        source_id: text "sourceId" Str,
        /// `mediaType`: the document's MIME type.
        media_type: text "mediaType" Str,
        /// `title`: the document's title.
        title: text "title" Str,
        /// `filename`: the document's file name.
        filename: maybe_text "filename" OptStr,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: maybe_json "providerMetadata" OptProviderMetadata,
    }
    /// `custom`: provider content the SDK does not model (`kind` is `provider.name`).
    Custom = "custom" {
        /// `kind`: the content's kind, as `{provider}.{type}`.
        kind: text "kind" Str,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: maybe_json "providerMetadata" OptProviderMetadata,
    }
    /// A user message added to the run by steering; `parts` are text and file parts.
    SteeringMessage = "steering-message" {
        /// `id`: the steering message's id.
        id: text "id" Str,
        /// `parts`: its text and file parts, as JSON.
        parts: list "parts" SteeringParts,
    }
}

impl Part {
    /// A text part holding `text` in `state`, without metadata or citations.
    pub fn text(text: impl Into<String>, state: Option<TextState>) -> Part {
        Part::Text {
            text: text.into(),
            state,
            provider_metadata: None,
            citations: None,
        }
    }

    /// `step-start`: the parts after the last one are the current step's.
    pub fn is_step_start(&self) -> bool {
        matches!(self, Part::StepStart)
    }

    /// Reads a stored part (history); a type this version does not know is kept as
    /// [`Part::Other`]. Fails for a non-object, a part without `type`, or a tool part without
    /// `toolCallId`.
    pub fn from_json(value: Value) -> Result<Part, String> {
        let Value::Object(mut obj) = value else {
            return Err("part is not an object".into());
        };
        let Some(ty) = take_str(&mut obj, "type") else {
            return Err("part without a type".into());
        };
        if let Some(part) = read_plain_part(&ty, &mut obj) {
            return Ok(part);
        }
        let state = |obj: &mut Object| take_str(obj, "state").as_deref().and_then(TextState::parse);
        let o = &mut obj;
        Ok(match ty.as_str() {
            "text" => Part::Text {
                text: take_str(o, "text").unwrap_or_default(),
                state: state(o),
                provider_metadata: o.remove("providerMetadata"),
                citations: o.remove("citations"),
            },
            "reasoning" => Part::Reasoning {
                id: take_str(o, "id"),
                text: take_str(o, "text").unwrap_or_default(),
                state: state(o),
                provider_metadata: o.remove("providerMetadata"),
            },
            "step-start" => Part::StepStart,
            "dynamic-tool" => tool_from_json(obj, String::new(), true)?,
            t if t.starts_with("tool-") => tool_from_json(obj, t[5..].to_string(), false)?,
            t if t.starts_with("data-") => Part::Data {
                name: t[5..].to_string(),
                id: take_str(o, "id"),
                data: o.remove("data").unwrap_or(Value::Null),
                extra: unknown_keys(obj),
            },
            _ => {
                obj.insert("type".into(), Value::String(ty));
                Part::Other(Value::Object(obj))
            }
        })
    }

    /// The tool part, if this is one.
    pub fn as_tool(&self) -> Option<&ToolPart> {
        match self {
            Part::Tool(t) => Some(t),
            _ => None,
        }
    }
    /// The tool part, if this is one, to change.
    pub fn as_tool_mut(&mut self) -> Option<&mut ToolPart> {
        match self {
            Part::Tool(t) => Some(t),
            _ => None,
        }
    }
}

pub(super) fn entry_opt<M: SerializeMap, T: Serialize + ?Sized>(
    m: &mut M,
    key: &str,
    v: Option<&T>,
) -> Result<(), M::Error> {
    match v {
        Some(v) => m.serialize_entry(key, v),
        None => Ok(()),
    }
}

/// What `Serialize for Part` (below) and the snapshot's tool `ui` (`policy::tool_ui`) write,
/// in TypeScript: the AI SDK's part types, each kind's keys as this impl writes them. A tool
/// or data part also keeps keys this version does not model, and a part of an unknown kind
/// is kept as it came ([`Part::Other`]): neither is typed here.
#[cfg(feature = "ts")]
const PART_TS: &str = r#"
export type ProviderMetadata = Record<string, Record<string, unknown>>;

export interface TextUIPart { type: 'text'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata; citations?: unknown[] }
export interface ReasoningUIPart { type: 'reasoning'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata; id?: string }
export type ToolState =
  | 'input-streaming' | 'input-available' | 'approval-requested' | 'approval-responded'
  | 'output-available' | 'output-error' | 'output-denied';
/**
 * A tool part's resolved UI metadata, each field from the first source that has it: the
 * result's `details` (`details.uiKind` → `rendererId`), a `data-tool-ui` chunk for the call,
 * the catalog entry's `ui`. Never parsed from text.
 */
export interface ToolUi extends ToolUiHints { details?: unknown }
interface ToolFields {
  toolCallId: string;
  /** Always present on exported tool parts (`{}` when nothing is known). */
  ui?: ToolUi;
  state: ToolState;
  title?: string;
  providerExecuted?: boolean;
  input?: unknown;
  rawInput?: unknown;
  output?: unknown;
  errorText?: string;
  /** Structured tool-result details (never parsed from text). */
  details?: unknown;
  /**
   * pi tools: the result's content as the model was given it (`[{type: "text", text}, …]`),
   * beside an `output` that shows it as the tool's output.
   */
  resultContent?: unknown;
  preliminary?: boolean;
  callProviderMetadata?: ProviderMetadata;
  resultProviderMetadata?: ProviderMetadata;
  toolMetadata?: Record<string, unknown>;
  inputEncoding?: 'json' | 'text';
  approval?: {
    id: string;
    approved?: boolean;
    reason?: string;
    descriptor?: unknown;
    inputSchemaInput?: unknown;
    requestReason?: string;
    isAutomatic?: boolean;
    signature?: string;
  };
}
export interface ToolUIPart extends ToolFields { type: `tool-${string}` }
export interface DynamicToolUIPart extends ToolFields { type: 'dynamic-tool'; toolName: string }
/** A data part is the whole chunk: keys other than these (e.g. `transient: false`) are kept. */
export interface DataUIPart { type: `data-${string}`; id?: string; data: unknown; [key: string]: unknown }
export interface FileUIPart { type: 'file'; mediaType: string; filename?: string; url: string; providerReference?: Record<string, string>; providerMetadata?: ProviderMetadata }
export interface SourceUrlUIPart { type: 'source-url'; sourceId: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
export interface SourceDocumentUIPart { type: 'source-document'; sourceId: string; mediaType: string; title: string; filename?: string; providerMetadata?: ProviderMetadata }
export interface StepStartUIPart { type: 'step-start' }
export interface ReasoningFileUIPart { type: 'reasoning-file'; mediaType: string; url: string; providerMetadata?: ProviderMetadata }
/** Provider content the AI SDK does not model (`kind` is `provider.name`). */
export interface CustomUIPart { type: 'custom'; kind: string; providerMetadata?: ProviderMetadata }
/** A user message added to the run by steering. */
export interface SteeringMessageUIPart { type: 'steering-message'; id: string; parts: Array<TextUIPart | FileUIPart> }
export type UIMessagePart =
  | TextUIPart | ReasoningUIPart | ToolUIPart | DynamicToolUIPart | DataUIPart | FileUIPart
  | SourceUrlUIPart | SourceDocumentUIPart | StepStartUIPart | ReasoningFileUIPart | CustomUIPart
  | SteeringMessageUIPart;
"#;
#[cfg(feature = "ts")]
crate::ts::declared!(Part, "UIMessagePart", PART_TS);

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Part::Other(v) = self {
            return v.serialize(s);
        }
        let mut m = s.serialize_map(None)?;
        if write_plain_part(self, &mut m)? {
            return m.end();
        }
        match self {
            Part::Text {
                text,
                state,
                provider_metadata,
                citations,
            } => {
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
                entry_opt(&mut m, "providerMetadata", provider_metadata.as_ref())?;
                entry_opt(&mut m, "state", state.map(TextState::as_str))?;
                entry_opt(&mut m, "citations", citations.as_ref())?;
            }
            Part::Reasoning {
                id,
                text,
                state,
                provider_metadata,
            } => {
                m.serialize_entry("type", "reasoning")?;
                entry_opt(&mut m, "id", id.as_ref())?;
                m.serialize_entry("text", text)?;
                entry_opt(&mut m, "providerMetadata", provider_metadata.as_ref())?;
                entry_opt(&mut m, "state", state.map(TextState::as_str))?;
            }
            Part::Tool(t) => t.write_fields(&mut m)?,
            Part::Data {
                name,
                id,
                data,
                extra,
            } => {
                m.serialize_entry("type", &format!("data-{name}"))?;
                entry_opt(&mut m, "id", id.as_ref())?;
                m.serialize_entry("data", data)?;
                for (k, v) in extra {
                    m.serialize_entry(k, v)?;
                }
            }
            Part::StepStart => m.serialize_entry("type", "step-start")?,
            // Written above.
            _ => {}
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Part::from_json(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
