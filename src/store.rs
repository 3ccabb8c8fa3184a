//! `ChatStore`: the one state machine that owns a chat session's client-side state.
//!
//! It holds the capabilities, the status machine, the history (with the reducer that is its
//! authority), the composer, the per-session follow-up queues and every request in flight.
//! It never does IO and never reads a clock: the host feeds it inputs and drains its outputs.
//!
//! Methods by kind (the quinn-proto / str0m shape):
//! - **getters**: [`ChatStore::status`], [`ChatStore::messages`], [`ChatStore::queued`], …
//! - **user actions**: [`ChatStore::set_draft`], [`ChatStore::submit`], [`ChatStore::send`],
//!   [`ChatStore::stop`], [`ChatStore::switch_session`], [`ChatStore::remove_queued`],
//!   [`ChatStore::retry_queued`], [`ChatStore::regenerate`], [`ChatStore::dispose`];
//! - **inputs**: [`ChatStore::handle_response_head`], [`ChatStore::handle_response_body`],
//!   [`ChatStore::handle_response_end`], [`ChatStore::handle_request_failed`],
//!   [`ChatStore::handle_timeout`];
//! - **outputs**: [`ChatStore::poll_request`], [`ChatStore::poll_abort`],
//!   [`ChatStore::poll_event`], [`ChatStore::poll_timeout`].
//!
//! After every action or input, drain the outputs until they are empty (see the crate docs).

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
use serde_json::{json, Value};

use crate::composer::{self, ComposerState, Refusal, SendRoute, Status};
use crate::followup::{FollowUpItem, FollowUpQueue, PostOutcome, QueueEffect, RetryPolicy};
use crate::protocol::chunk::{parse_chunk, Chunk, PiEvent, UiChunk};
use crate::protocol::json::to_string;
use crate::protocol::{Capabilities, ChatError, ErrorKind, FileAttachment, Part, Role, UIMessage};
use crate::random::{uuid_v4, RandomSource};
use crate::sse::{SseBatch, SseDecoder, SseError};
use crate::stream::fast_chunk::Delta;
use crate::stream::history::{HistoryBodyError, HistoryParser};
use crate::stream::pi::{PiEffect, PiReducer};
use crate::stream::ui_message::{UiEffect, UiMessageReducer, Violation};
use crate::stream::History;
use crate::tool_ui::{self, ToolCatalogEntry, ToolUiUpdate, ToolUiUpdates};

/// Identifies one request for its whole life (the driver hands it back with every answer).
pub type RequestId = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// What a request is for (SPEC §2's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RequestKind {
    Capabilities,
    Catalog,
    Chat,
    FollowUpPost,
    FollowUpDelete,
    MessagesGet,
    MessagesPut,
    StreamResume,
    TurnDelete,
}

impl RequestKind {
    /// The answer is an SSE stream to feed chunk by chunk.
    pub fn is_stream(self) -> bool {
        matches!(self, RequestKind::Chat | RequestKind::StreamResume)
    }
    /// Requests that must not outlive their session: aborted on a switch or dispose. The
    /// DELETEs and the PUT are the server's to finish; their answers are not needed.
    fn aborted_on_switch(self) -> bool {
        !matches!(
            self,
            RequestKind::FollowUpDelete | RequestKind::TurnDelete | RequestKind::MessagesPut
        )
    }
}

/// A request the host must make. `path` is relative to the host's `baseUrl` and already
/// carries its query string; `body` is JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub id: RequestId,
    pub kind: RequestKind,
    pub method: Method,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// Path templates of the server routes; `{sessionId}` is replaced (percent-encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routes {
    pub capabilities: String,
    pub catalog: String,
    pub chat: String,
    pub followup: String,
    pub messages: String,
    pub stream: String,
    pub turn: String,
}

impl Default for Routes {
    fn default() -> Self {
        Routes {
            capabilities: "/api/v1/agent/capabilities".into(),
            catalog: "/api/v1/agent/catalog".into(),
            chat: "/api/v1/agent/chat".into(),
            followup: "/api/v1/agent/chat/{sessionId}/followup".into(),
            messages: "/api/v1/agent/chat/{sessionId}/messages".into(),
            stream: "/api/v1/agent/chat/{sessionId}/stream".into(),
            turn: "/api/v1/agent/chat/{sessionId}/turn".into(),
        }
    }
}

/// Bounds on what the server can make the store hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// One SSE event larger than this is skipped with a `Protocol` error; the stream goes on.
    pub max_event_bytes: usize,
    /// A JSON answer (capabilities, history) larger than this is refused.
    pub max_body_bytes: usize,
    /// Hydrated histories longer than this keep their newest messages.
    pub max_messages: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_bytes: crate::sse::DEFAULT_MAX_EVENT_BYTES,
            max_body_bytes: 64 * 1024 * 1024,
            max_messages: 100_000,
        }
    }
}

/// How a store is set up.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub session_id: String,
    /// A static capabilities override: no capabilities request is made.
    pub capabilities: Option<Capabilities>,
    pub routes: Routes,
    pub limits: Limits,
    pub retry: RetryPolicy,
    /// Load the canonical history when a session opens.
    pub hydrate: bool,
    /// A follow-up POST without an answer after this long is aborted and retried.
    pub followup_timeout_ms: u64,
    /// How often a dropped stream is resumed before the turn counts as failed.
    pub resume_attempts: u32,
    /// The first resume waits this long; each further one twice as long.
    pub resume_delay_ms: u64,
    /// AI SDK mode: continue the conversation on its own once the last assistant message is
    /// complete this way (`sendAutomaticallyWhen` of `useChat`).
    pub send_automatically_when: AutoSend,
    /// A turn's stream silent this long (no byte at all) counts as dropped; `None`: wait
    /// forever.
    pub stream_idle_timeout_ms: Option<u64>,
}

/// The built-in `sendAutomaticallyWhen` predicates of the `ai` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoSend {
    #[default]
    Never,
    /// `lastAssistantMessageIsCompleteWithToolCalls`: every client tool call of the last step
    /// has its output (or error).
    ToolCallsComplete,
    /// `lastAssistantMessageIsCompleteWithApprovalResponses`: every approval asked in the last
    /// step has an answer.
    ApprovalsAnswered,
}

impl AutoSend {
    /// Whether the predicate holds for `messages`, as the `ai` package computes it.
    pub fn holds(self, messages: &[UIMessage]) -> bool {
        use crate::protocol::ToolState as S;
        let Some(last) = messages.last().filter(|m| m.role == Role::Assistant) else {
            return false;
        };
        let start = last
            .parts
            .iter()
            .rposition(|p| matches!(p, Part::StepStart))
            .map_or(0, |i| i + 1);
        let step = &last.parts[start..];
        let done = |t: &crate::protocol::ToolPart| {
            (t.state == S::OutputAvailable && t.preliminary != Some(true))
                || t.state == S::OutputError
        };
        match self {
            AutoSend::Never => false,
            AutoSend::ToolCallsComplete => {
                let client = |p: &Part| {
                    p.as_tool()
                        .is_some_and(|t| t.provider_executed != Some(true))
                };
                let Some(last_tool) = step.iter().rposition(client) else {
                    return false;
                };
                let text_streaming = step[last_tool + 1..]
                    .iter()
                    .any(|p| matches!(p, Part::Text { state, .. } if *state != Some(crate::protocol::TextState::Done)));
                !text_streaming
                    && step
                        .iter()
                        .filter_map(Part::as_tool)
                        .filter(|t| t.provider_executed != Some(true))
                        .all(done)
            }
            AutoSend::ApprovalsAnswered => {
                let tools: Vec<_> = step.iter().filter_map(Part::as_tool).collect();
                tools.iter().any(|t| t.state == S::ApprovalResponded)
                    && tools.iter().all(|t| {
                        done(t) || matches!(t.state, S::OutputDenied | S::ApprovalResponded)
                    })
            }
        }
    }
}

impl StoreOptions {
    pub fn new(session_id: impl Into<String>) -> Self {
        StoreOptions {
            session_id: session_id.into(),
            capabilities: None,
            routes: Routes::default(),
            limits: Limits::default(),
            retry: RetryPolicy::default(),
            hydrate: true,
            followup_timeout_ms: 30_000,
            resume_attempts: 3,
            resume_delay_ms: 500,
            send_automatically_when: AutoSend::Never,
            stream_idle_timeout_ms: Some(300_000),
        }
    }
}

/// Something for the host, besides the snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum StoreEvent {
    /// A `data-*` chunk for `onData` (transient or not, pi or not).
    Data {
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        data: Value,
        transient: bool,
    },
    /// An error for `onError` (also visible in the snapshot when it concerns the turn).
    Error { error: ChatError },
    /// Something odd but survivable in what the server sent.
    Diagnostic { message: String },
    /// The turn's stream finished.
    Finish {
        #[serde(skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
}

/// How a chunk writes the streamed message in `useChat` ([`ChatStore::reduce_streamed`]):
/// whether it puts the answer into `messages` (`places`), whether that write also updates the
/// status (`streams`), and whether it is a `reset-step`, which writes only when it removes parts.
#[derive(Clone, Copy)]
struct Writes {
    places: bool,
    streams: bool,
    reset: bool,
}

impl Writes {
    /// A delta or a data part: always a write, with the status.
    const ALWAYS: Writes = Writes {
        places: true,
        streams: true,
        reset: false,
    };

    /// As `ai` 7.0.173's stream processor calls `write()`: with the status update for every
    /// chunk that changes the message, but without it for a `start` naming the message (id or
    /// metadata). A step's start and end, `error`, `abort`, and a `finish` or
    /// `message-metadata` without metadata do not write; a `reset-step` writes (with the
    /// status) only when it removes parts.
    fn of(c: &UiChunk) -> Writes {
        let streams = match c {
            UiChunk::Start { .. }
            | UiChunk::StartStep
            | UiChunk::FinishStep
            | UiChunk::ResetStep
            | UiChunk::Error { .. }
            | UiChunk::Abort { .. } => false,
            UiChunk::Finish {
                message_metadata, ..
            }
            | UiChunk::MessageMetadata { message_metadata } => message_metadata.is_some(),
            UiChunk::Data(d) => !d.transient,
            _ => true,
        };
        let names = matches!(c, UiChunk::Start { message_id, message_metadata }
            if message_id.is_some() || message_metadata.is_some());
        Writes {
            places: streams || names,
            streams,
            reset: matches!(c, UiChunk::ResetStep),
        }
    }
}

/// What `submit` / `send` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SubmitKind {
    Sent,
    Queued,
    Blocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitResult {
    pub kind: SubmitKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Refusal>,
    /// The words for a refusal (`Refusal::hint`), so a UI that shows one restates no policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

impl SubmitResult {
    fn done(kind: SubmitKind) -> Self {
        SubmitResult {
            kind,
            reason: None,
            hint: None,
        }
    }

    fn blocked(reason: Refusal) -> Self {
        SubmitResult {
            kind: SubmitKind::Blocked,
            reason: Some(reason),
            hint: Some(reason.hint()),
        }
    }
}

/// What the driver learnt from a response's status line and headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub content_type: Option<String>,
    /// `x-turn-id`, which servers of this family send with the chat stream.
    pub turn_id: Option<String>,
}

#[derive(Debug)]
struct Pending {
    session: String,
    generation: u64,
    kind: RequestKind,
    status: Option<u16>,
    /// A JSON answer's body, gathered until the end; of a 2xx stream answer, its first
    /// [`SNIFF_BYTES`] (to tell an answer that was no event stream at all).
    body: Vec<u8>,
    /// `events_seen` when a stream answer's head arrived: none more at its end means the body
    /// held no event.
    events_before: u64,
    /// A 2xx history answer, read as it arrives (the body is not gathered).
    history: Option<Box<HistoryParser>>,
    /// Bytes of `history` received so far.
    received: usize,
    /// The follow-up queue's ticket, for follow-up POSTs.
    ticket: Option<u64>,
    /// When the request counts as timed out.
    deadline: Option<u64>,
}

/// The AI SDK reducer's hold on the message of the running turn.
#[derive(Debug, Default)]
struct UiTurn {
    reducer: UiMessageReducer,
    /// The streamed message's id in the history, once it has one.
    message_id: Option<String>,
    /// The message the turn streams into before its first write ([`ChatStore::ui_target`]):
    /// a new one, or a copy of the assistant message it continues.
    pending: Option<UIMessage>,
}

/// Everything that belongs to one session. The current one is live; others are parked with
/// their queue (which resumes when the session is current again) and their history.
#[derive(Debug)]
struct Session {
    id: String,
    caps: Capabilities,
    caps_loaded: bool,
    /// The session runtime's tools (`GET …/catalog`); empty without a catalog.
    tools: Vec<ToolCatalogEntry>,
    /// The latest `data-tool-ui` of each tool call.
    tool_ui: ToolUiUpdates,
    /// `data-pi-mode` was seen: the pi projection owns history whatever was fetched.
    pi_mode: bool,
    history: History,
    /// The history's JSON by message, for the bodies of AI SDK mode.
    history_json: HistoryJson,
    pi: PiReducer,
    ui: UiTurn,
    queue: FollowUpQueue,
    status: Status,
    error: Option<ChatError>,
    /// The `clientTurnId` of the turn this client started last.
    client_turn_id: Option<String>,
    turn_id: Option<String>,
    hydrated: bool,
    /// The chat POST or stream resume whose body is the turn's stream.
    stream: Option<RequestId>,
    decoder: SseDecoder,
    /// Events received in this turn's stream (across resumes): the cursor when the server
    /// sends no ids.
    events_seen: u64,
    /// The server may still be running a turn for this session.
    turn_active: bool,
    /// The stream reached `[DONE]`.
    stream_done: bool,
    /// An `error` chunk was seen in this turn.
    stream_error: bool,
    finish_reason: Option<String>,
    resume_tries: u32,
    resume_at: Option<u64>,
    /// The last turn ended on its own: items still waiting to be posted go out as the next
    /// turn once no follow-up POST is in flight. A stop or a failed turn leaves them waiting
    /// for the user.
    send_queue_when_idle: bool,
    /// This turn's user message-start came while the AI SDK reducer had authority, so it was
    /// not applied. A later hand-off to the pi projection must then not let the next user
    /// message-start (a follow-up's) adopt the optimistic message.
    ignored_user_start: bool,
    /// The turn the reducers last started (`data-turn-start`), running or not: a repeated
    /// turn-start of it (a replay from the start of the server's buffer) is not a new turn.
    reducer_turn: Option<String>,
    /// A follow-up being re-sent as a new message after a DELETE of the server's copy: the
    /// chat POST waits for the DELETE's answer, or the copy could still run first (a POST
    /// that reached the server late would make it run twice).
    held_turn: Option<HeldTurn>,
}

/// A turn whose user message is already shown, waiting for a DELETE to be answered.
#[derive(Debug)]
struct HeldTurn {
    /// The DELETE in flight; `None` once answered (the session was parked meanwhile).
    delete: Option<RequestId>,
    message_id: String,
    text: String,
    files: Vec<FileAttachment>,
}

impl Session {
    fn new(id: String, caps: Option<Capabilities>, limits: &Limits, retry: RetryPolicy) -> Self {
        Session {
            id,
            caps: caps.unwrap_or_default(),
            caps_loaded: caps.is_some(),
            tools: Vec::new(),
            tool_ui: ToolUiUpdates::new(),
            pi_mode: false,
            history: History::new(),
            history_json: HistoryJson::default(),
            pi: PiReducer::new(),
            ui: UiTurn::default(),
            queue: FollowUpQueue::new(retry),
            status: Status::Ready,
            error: None,
            turn_id: None,
            client_turn_id: None,
            hydrated: false,
            stream: None,
            decoder: SseDecoder::with_max_event_bytes(limits.max_event_bytes),
            events_seen: 0,
            turn_active: false,
            stream_done: false,
            stream_error: false,
            finish_reason: None,
            resume_tries: 0,
            resume_at: None,
            send_queue_when_idle: false,
            ignored_user_start: false,
            reducer_turn: None,
            held_turn: None,
        }
    }

    fn pi_owns_history(&self) -> bool {
        self.pi_mode || !self.caps.ai_sdk_owns_history
    }

    /// The resume cursor: the last event id the server gave, else the index of the last event
    /// received (`-1` for none).
    fn cursor(&self) -> String {
        match self.decoder.last_event_id() {
            Some(id) => id.to_string(),
            None => (self.events_seen as i64 - 1).to_string(),
        }
    }
}

/// The chat store. See the module docs for the shape of its API.
pub struct ChatStore {
    opts: StoreOptions,
    rng: Box<dyn RandomSource>,
    session: Session,
    parked: HashMap<String, Session>,
    /// Bumped by a session switch, a dispose or a reset: answers of older generations are
    /// ignored, whatever they say.
    generation: u64,
    next_request: RequestId,
    pending: HashMap<RequestId, Pending>,
    requests: VecDeque<Request>,
    aborts: VecDeque<RequestId>,
    events: VecDeque<StoreEvent>,
    draft: String,
    draft_files: Vec<FileAttachment>,
    /// Changes whenever anything a snapshot shows changes.
    revision: u64,
    /// The largest message version any session's history has used, so versions never repeat
    /// across sessions (the shell caches exported messages by id and version).
    version_floor: u64,
    /// Bumped whenever the resolved `ui` of a tool part may change without the part changing
    /// (a `data-tool-ui`, a new catalog, another session).
    tool_ui_version: u64,
    disposed: bool,
    scratch: SseBatch,
    /// The AI SDK reducer's effects of one chunk, reused: a new `Vec` per text delta cost its
    /// drop call on the hot path ([`reduce_streamed`](Self::reduce_streamed)).
    ui_effects: Vec<UiEffect>,
}

impl std::fmt::Debug for ChatStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatStore")
            .field("session", &self.session.id)
            .field("status", &self.session.status)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// Percent-encodes a path segment or query value (everything but RFC 3986's unreserved set).
/// How many of the newest messages a `data-tool-ui` chunk looks through for its tool call.
const TOOL_UI_SEARCH: usize = 64;

/// How much of a 2xx stream answer is kept to tell what it was when it held no event.
const SNIFF_BYTES: usize = 256;

/// Whether the start of a body that yielded no event reads as an event stream (empty, only
/// comments and keep-alives, or a field line cut before its event ended) rather than a page
/// or a JSON document. Only the first non-blank line is looked at.
fn looks_like_sse(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let Some(line) = body
        .split(|&b| b == b'\n' || b == b'\r')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
    else {
        return true;
    };
    if line.starts_with(b":") {
        return true;
    }
    const FIELDS: [&[u8]; 4] = [b"data", b"event", b"id", b"retry"];
    let field = line.split(|&b| b == b':').next().unwrap_or(line);
    if FIELDS.contains(&field) {
        return true;
    }
    // The kept bytes may end inside the first field name (a body padded with blank lines):
    // an unterminated line that begins a field name still reads as a stream.
    let end = line.as_ptr() as usize - body.as_ptr() as usize + line.len();
    end == body.len() && FIELDS.iter().any(|f| f.starts_with(line))
}

/// `s.replace(pat, with)` for a non-empty `pat`, without `str::replace`: its two-way
/// substring searcher costs 2.7 KB of wasm, for routes a few dozen bytes long.
fn replace_all(s: &str, pat: &str, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let (mut i, mut from) = (0, 0);
    while i < s.len() {
        if s.as_bytes()[i..].starts_with(pat.as_bytes()) {
            // A match starts on a char boundary: `pat` is UTF-8, so its first byte leads.
            out.push_str(&s[from..i]);
            out.push_str(with);
            i += pat.len();
            from = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[from..]);
    out
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The history as the server stores it: `data:` URLs are stripped from file parts (they are
/// the bytes themselves, often megabytes; the server keeps its own copy of attachments).
pub fn history_for_storage(messages: &[UIMessage]) -> Value {
    Value::Array(messages.iter().map(message_for_storage).collect())
}

/// One message as the server stores it (see [`history_for_storage`]).
fn message_for_storage(m: &UIMessage) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Some(parts) = v.get_mut("parts").and_then(Value::as_array_mut) {
        for p in parts.iter_mut().filter(|p| is_data_url_file(p)) {
            if let Some(obj) = p.as_object_mut() {
                obj.remove("url");
            }
        }
    }
    v
}

/// A part's JSON is a file part whose `url` is a `data:` URL.
fn is_data_url_file(p: &Value) -> bool {
    p.get("type").and_then(Value::as_str) == Some("file")
        && p.get("url")
            .and_then(Value::as_str)
            .is_some_and(|u| u.starts_with("data:"))
}

/// Whether the stored form of `m` differs from what the chat POST sends: it has a file part
/// with a `data:` URL.
fn has_data_url(m: &UIMessage) -> bool {
    m.parts.iter().any(|p| match p {
        Part::File { url, .. } => url.starts_with("data:"),
        Part::Other(v) => is_data_url_file(v),
        _ => false,
    })
}

/// The history's JSON, message by message, each kept with the version it was written at. The
/// chat POST and the PUT of AI SDK mode carry the whole history: with this, a turn after a long
/// history serialises only the messages that changed, then concatenates.
#[derive(Debug, Default)]
struct HistoryJson {
    /// By position in the history.
    entries: Vec<MessageJson>,
}

#[derive(Debug)]
struct MessageJson {
    /// The message's version when `sent` was written (versions are never reused in a store).
    version: u64,
    /// The message as the chat POST sends it.
    sent: String,
    /// As the PUT stores it, when that differs (`data:` URLs stripped).
    stored: Option<String>,
}

impl MessageJson {
    fn new(m: &UIMessage, version: u64) -> Self {
        MessageJson {
            version,
            // Straight to text (no `Value` tree), texts escaped by runs.
            sent: m.to_json(),
            stored: has_data_url(m).then(|| to_string(&message_for_storage(m))),
        }
    }
}

impl HistoryJson {
    /// Brings every entry up to date with `history`: only messages whose version moved are
    /// serialised again.
    fn refresh(&mut self, history: &History) {
        let messages = history.messages();
        self.entries.truncate(messages.len());
        for (i, (m, &v)) in messages.iter().zip(history.versions()).enumerate() {
            match self.entries.get_mut(i) {
                Some(e) if e.version == v => {}
                Some(e) => *e = MessageJson::new(m, v),
                None => self.entries.push(MessageJson::new(m, v)),
            }
        }
    }

    /// `fields` (a JSON object) as text with `"messages"`: the history as sent (`stored`:
    /// as stored) added last. Call [`HistoryJson::refresh`] first.
    fn body(&self, fields: &Value, stored: bool) -> String {
        let head = to_string(fields);
        fn pick(e: &MessageJson, stored: bool) -> &str {
            match (&e.stored, stored) {
                (Some(s), true) => s,
                _ => &e.sent,
            }
        }
        let len: usize = self.entries.iter().map(|e| pick(e, stored).len() + 1).sum();
        let mut out = String::with_capacity(head.len() + len + 16);
        out.push_str(head.strip_suffix('}').unwrap_or("{"));
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str("\"messages\":[");
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(pick(e, stored));
        }
        out.push_str("]}");
        out
    }

    fn clear(&mut self) {
        self.entries = Vec::new();
    }
}

impl ChatStore {
    /// Creates a store and asks for what opening its session needs (capabilities, history).
    /// Drain the outputs afterwards.
    pub fn new(opts: StoreOptions, rng: Box<dyn RandomSource>, now_ms: u64) -> Self {
        let session = Session::new(
            opts.session_id.clone(),
            opts.capabilities,
            &opts.limits,
            opts.retry,
        );
        let mut store = ChatStore {
            opts,
            rng,
            session,
            parked: HashMap::new(),
            generation: 1,
            next_request: 1,
            pending: HashMap::new(),
            requests: VecDeque::new(),
            aborts: VecDeque::new(),
            events: VecDeque::new(),
            draft: String::new(),
            draft_files: Vec::new(),
            revision: 1,
            version_floor: 0,
            tool_ui_version: 0,
            disposed: false,
            scratch: SseBatch::default(),
            ui_effects: Vec::new(),
        };
        store.open_session(now_ms);
        store
    }

    // ----- getters -------------------------------------------------------------------------

    pub fn session_id(&self) -> &str {
        &self.session.id
    }
    pub fn status(&self) -> Status {
        self.session.status
    }
    pub fn error(&self) -> Option<&ChatError> {
        self.session.error.as_ref()
    }
    pub fn capabilities(&self) -> Capabilities {
        let mut c = self.session.caps;
        if self.session.pi_mode {
            c.ai_sdk_owns_history = false;
        }
        c
    }
    pub fn capabilities_loaded(&self) -> bool {
        self.session.caps_loaded
    }
    /// The session runtime's tool catalog (empty when the server has none).
    pub fn tools(&self) -> &[ToolCatalogEntry] {
        &self.session.tools
    }
    /// Message `i` as the UI gets it: its JSON with the resolved `ui` on every tool part.
    pub fn export_message(&self, i: usize) -> Value {
        let s = &self.session;
        tool_ui::export_message(&s.history.messages()[i], &s.tool_ui, &s.tools)
    }
    /// Part `k` of message `i` as the UI gets it, shown as `shown` (the part itself, or it with
    /// placeholders: [`crate::protocol::ToolPart::without_input`]): its JSON, with the resolved `ui` of the
    /// part on a tool part (`export_message(i)["parts"][k]`, without exporting the other
    /// parts). The `ui` does not depend on the fields a placeholder stands for.
    pub fn export_part_as(&self, i: usize, k: usize, shown: &Part) -> Value {
        let s = &self.session;
        let part = &s.history.messages()[i].parts[k];
        let mut v = serde_json::to_value(shown).unwrap_or(Value::Null);
        if let (Part::Tool(t), Some(obj)) = (part, v.as_object_mut()) {
            obj.insert("ui".into(), tool_ui::resolve(t, &s.tool_ui, &s.tools));
        }
        v
    }
    /// Changes whenever the resolved `ui` of a tool part may change while the part itself
    /// does not: an unchanged tool part exported at the same `tool_ui_version` exports the same.
    pub fn tool_ui_version(&self) -> u64 {
        self.tool_ui_version
    }
    /// The one canonical list: display and action eligibility both read it.
    pub fn messages(&self) -> &[UIMessage] {
        self.session.history.messages()
    }
    /// The version of message `i`: it changes exactly when that message changes.
    pub fn message_version(&self, i: usize) -> u64 {
        self.session.history.version(i)
    }
    /// The version of the last change of message `i` other than appends to its texts: while
    /// it is not newer than a version seen, its texts only grew since.
    pub fn message_reshaped(&self, i: usize) -> u64 {
        self.session.history.reshaped(i)
    }
    /// Every message's version, by position ([`ChatStore::message_version`] of each).
    pub fn message_versions(&self) -> &[u64] {
        self.session.history.versions()
    }
    /// The current session's history revision: with [`messages_changed_from`]
    /// (Self::messages_changed_from), a consumer that keeps the versions it saw learns where to
    /// compare them from. A session switch starts another history: compare it all.
    pub fn messages_revision(&self) -> u64 {
        self.session.history.revision()
    }
    /// The lowest position whose message may have changed since the current session's history
    /// was at revision `since` ([`History::changed_from`]).
    pub fn messages_changed_from(&self, since: u64) -> usize {
        self.session.history.changed_from(since)
    }
    /// The waiting bubbles, shown after all messages.
    pub fn queued(&self) -> &[FollowUpItem] {
        self.session.queue.items()
    }
    pub fn draft(&self) -> &str {
        &self.draft
    }
    pub fn draft_files(&self) -> &[FileAttachment] {
        &self.draft_files
    }
    pub fn composer(&self) -> ComposerState {
        composer::composer_state(
            self.status(),
            &self.capabilities(),
            &self.draft,
            self.draft_files.len(),
        )
    }
    pub fn turn_id(&self) -> Option<&str> {
        self.session.turn_id.as_deref()
    }
    pub fn hydrated(&self) -> bool {
        self.session.hydrated
    }
    /// Changes whenever anything a snapshot shows changes; equal revisions mean equal
    /// snapshots.
    pub fn revision(&self) -> u64 {
        self.revision
    }
    /// Can `regenerate` run now: the AI SDK owns history, nothing is running, and there is a
    /// message to answer again (as `useChat`'s `regenerate`, which also retries a user message
    /// left without an answer by a failed turn).
    pub fn can_regenerate(&self) -> bool {
        self.can_edit() && !self.messages().is_empty()
    }

    /// A user message can be edited now (`edit`): the client owns the history (AI SDK mode)
    /// and no turn is on its way.
    pub fn can_edit(&self) -> bool {
        !self.disposed && !self.session.pi_owns_history() && !self.status().is_busy()
    }

    /// A turn was sent and no assistant message shows its answer yet (`useChat`'s `submitted`
    /// before the first chunk that writes): where a UI shows a waiting indicator.
    pub fn awaiting_answer(&self) -> bool {
        self.status() == Status::Submitted
            && self
                .session
                .history
                .messages()
                .last()
                .is_none_or(|m| m.role != Role::Assistant)
    }

    // ----- outputs -------------------------------------------------------------------------

    /// The next request to make.
    pub fn poll_request(&mut self) -> Option<Request> {
        self.requests.pop_front()
    }
    /// The next in-flight request to abort (its late answer is ignored anyway).
    pub fn poll_abort(&mut self) -> Option<RequestId> {
        self.aborts.pop_front()
    }
    /// The next event for the host (`onData`, `onError`, diagnostics).
    pub fn poll_event(&mut self) -> Option<StoreEvent> {
        self.events.pop_front()
    }
    /// When to call [`ChatStore::handle_timeout`] next (absolute, in the host's ms clock).
    pub fn poll_timeout(&self) -> Option<u64> {
        let deadlines = self.pending.values().filter_map(|p| p.deadline);
        let queue = if self.may_post_followups() {
            self.session.queue.poll_timeout()
        } else {
            None
        };
        deadlines.chain(queue).chain(self.session.resume_at).min()
    }

    // ----- user actions --------------------------------------------------------------------

    pub fn set_draft(&mut self, text: &str) {
        if self.draft != text {
            self.draft = text.to_string();
            self.touch();
        }
    }

    pub fn set_draft_files(&mut self, files: Vec<FileAttachment>) {
        if self.draft_files != files {
            self.draft_files = files;
            self.touch();
        }
    }

    /// Sends the draft: a new turn when ready, a queued follow-up when busy and the runtime
    /// takes them; otherwise a no-op that says why, with the draft untouched. The draft is
    /// cleared only when the message was accepted.
    pub fn submit(&mut self, now_ms: u64) -> SubmitResult {
        let text = self.draft.clone();
        let files = self.draft_files.clone();
        let result = self.send(&text, files, now_ms);
        if result.kind != SubmitKind::Blocked {
            self.draft.clear();
            self.draft_files.clear();
            self.touch();
        }
        result
    }

    /// Sends `text` (and files) as [`ChatStore::submit`] would, leaving the draft alone.
    pub fn send(&mut self, text: &str, files: Vec<FileAttachment>, now_ms: u64) -> SubmitResult {
        if self.disposed {
            return SubmitResult::blocked(Refusal::Busy);
        }
        match composer::decide(self.status(), &self.capabilities(), text, files.len()) {
            Err(reason) => SubmitResult::blocked(reason),
            Ok(SendRoute::Turn) => {
                self.start_turn(text.to_string(), files, "submit-message", now_ms);
                SubmitResult::done(SubmitKind::Sent)
            }
            Ok(SendRoute::FollowUp) => {
                self.session
                    .queue
                    .enqueue(text.to_string(), files, now_ms, self.rng.as_mut());
                self.touch();
                self.pump(now_ms);
                SubmitResult::done(SubmitKind::Queued)
            }
        }
    }

    /// Clears the error of a failed turn, as `useChat`'s `clearError`: status `error` becomes
    /// `ready` and `error` goes; in any other status it does nothing. Nothing else changes (the
    /// messages stay as they are).
    pub fn clear_error(&mut self) {
        // Only a failed turn's error: while a turn runs, its error decides how it ends.
        let s = &mut self.session;
        if s.status != Status::Error {
            return;
        }
        s.status = Status::Ready;
        s.error = None;
        self.touch();
    }

    /// Stops the running turn: the stream is aborted, the server is told (`DELETE …/turn`),
    /// and the composer is usable again. Queued items that were never posted stay queued
    /// (a stop is not an invitation to send the next one); accepted ones become `stalled`.
    pub fn stop(&mut self, now_ms: u64) {
        if !self.status().is_busy() {
            return;
        }
        if let Some(held) = self.session.held_turn.take() {
            // Never sent: the message goes back to the composer (if it is empty) rather than
            // stay as if it had been asked.
            if let Some(i) = self.session.history.position(&held.message_id) {
                self.session.history.remove(i);
            }
            if self.draft.is_empty() && self.draft_files.is_empty() {
                self.draft = held.text;
                self.draft_files = held.files;
            }
            self.session.status = Status::Ready;
            self.touch();
            return;
        }
        if let Some(id) = self.session.stream.take() {
            self.abort(id);
        }
        // Before the server named the turn (no `x-turn-id`, no `data-turn-start` yet) the
        // client's own turn id is the only handle; servers of this family accept either.
        let turn = self
            .session
            .turn_id
            .clone()
            .or_else(|| self.session.client_turn_id.clone());
        if let Some(turn) = turn {
            let path = format!("{}?turnId={}", self.route(|r| &r.turn), encode(&turn));
            self.request(RequestKind::TurnDelete, Method::Delete, path, None, now_ms);
        }
        let s = &mut self.session;
        s.pi.end_of_stream(&mut s.history);
        s.turn_active = false;
        s.turn_id = None;
        s.resume_at = None;
        s.status = Status::Ready;
        s.send_queue_when_idle = false;
        s.queue.mark_stalled_after_turn();
        self.after_ai_sdk_turn(now_ms);
        self.touch();
    }

    /// Makes `session_id` the current session. The old session's in-flight requests are
    /// aborted (their late answers ignored); its queue and history are parked and resume when
    /// it is current again, with the same seqs and nonces.
    pub fn switch_session(&mut self, session_id: &str, now_ms: u64) {
        if self.disposed || session_id == self.session.id {
            return;
        }
        self.bump_generation();
        self.version_floor = self.version_floor.max(self.session.history.revision());
        let next = self.parked.remove(session_id).unwrap_or_else(|| {
            Session::new(
                session_id.to_string(),
                self.opts.capabilities,
                &self.opts.limits,
                self.opts.retry,
            )
        });
        let old = std::mem::replace(&mut self.session, next);
        self.parked.insert(old.id.clone(), old);
        self.session.history.advance_clock(self.version_floor);
        self.tool_ui_version += 1;
        self.open_session(now_ms);
        self.touch();
    }

    /// Removes a waiting bubble. One the server may have is also deleted there.
    pub fn remove_queued(&mut self, item_id: &str, now_ms: u64) -> bool {
        if self.disposed {
            return false;
        }
        let posting = self
            .session
            .queue
            .get(item_id)
            .is_some_and(|i| i.state == crate::followup::ItemState::Posting);
        match self.session.queue.remove(item_id) {
            None => false,
            Some(server_keys) => {
                if let Some((seq, nonce)) = server_keys {
                    self.delete_followup(seq, &nonce, now_ms);
                }
                self.touch();
                self.pump(now_ms);
                // The removed item may have been the `failed` head that kept the items behind
                // it waiting after the turn ended: they move on now, as they would have at the
                // turn's end (without this they stayed `queued` forever; found by
                // tests/fault_schedules.rs). A `posting` one's POST is still out: its answer
                // (or timeout) moves them on, so the next turn cannot overtake it on the wire.
                if !posting {
                    self.send_next_queued(now_ms);
                }
                true
            }
        }
    }

    /// Retries a waiting bubble: a `failed` one is posted again (same seq and nonce); a
    /// `stalled` one, or any item while no turn runs, is sent as a new message (after deleting
    /// the server's copy, so it cannot run twice).
    pub fn retry_queued(&mut self, item_id: &str, now_ms: u64) -> bool {
        if self.disposed {
            return false;
        }
        let Some(item) = self.session.queue.get(item_id) else {
            return false;
        };
        let state = item.state;
        use crate::followup::ItemState;
        let as_new_message = state == ItemState::Stalled || !self.status().is_busy();
        if !as_new_message {
            let ok = self.session.queue.retry(item_id, now_ms);
            self.touch();
            self.pump(now_ms);
            return ok;
        }
        if self.status().is_busy() {
            return false; // a stalled item waits for the turn to end
        }
        let Some((item, server_has_it)) = self.session.queue.take(item_id) else {
            return false;
        };
        self.send_as_new_message(item, server_has_it, now_ms);
        true
    }

    /// Regenerates an assistant message (the last one by default) in AI SDK mode: the history
    /// is trimmed after the user message before it and the turn is requested again with the
    /// trigger `regenerate-message`. Returns false when not possible (busy, pi mode, nothing
    /// to regenerate).
    pub fn regenerate(&mut self, message_id: Option<&str>, now_ms: u64) -> bool {
        if !self.can_regenerate() {
            return false;
        }
        let h = &self.session.history;
        // The named message, else the last one, as `useChat` does: after a failed turn the last
        // message is the user's, which is asked again (the usual Retry button).
        let target = match message_id {
            Some(id) => h.position(id),
            None => h.len().checked_sub(1),
        };
        let Some(i) = target else { return false };
        // Keep everything before the assistant message (a user message: keep it and cut after).
        let assistant = h.messages()[i].role == Role::Assistant;
        let keep = if assistant { i } else { i + 1 };
        // The body names the answer to replace; a retried user message names none unless it
        // was named (`useChat` sends the `messageId` it was given).
        let named = (assistant || message_id.is_some()).then(|| h.messages()[i].id.clone());
        self.session.history.truncate(keep);
        self.start_request_turn(
            "regenerate-message",
            named,
            String::new(),
            Vec::new(),
            now_ms,
        );
        true
    }

    /// Edits a user message (AI SDK mode, nothing running): `send` with a `messageId`. The
    /// message is replaced (same id), everything after it is dropped, and the turn is asked
    /// again with that message. Refused in pi mode (the server owns history) and for ids that
    /// are not user messages.
    pub fn edit(
        &mut self,
        message_id: &str,
        text: &str,
        files: Vec<FileAttachment>,
        now_ms: u64,
    ) -> SubmitResult {
        if let Err(reason) =
            composer::decide(self.status(), &self.capabilities(), text, files.len())
        {
            return SubmitResult::blocked(reason);
        }
        let editable = self.can_edit()
            && self
                .session
                .history
                .get(message_id)
                .is_some_and(|m| m.role == Role::User);
        if !editable {
            return SubmitResult::blocked(Refusal::Busy);
        }
        let i = self.session.history.position(message_id).unwrap_or(0);
        self.session.history.truncate(i);
        let mut msg = UIMessage::new(message_id, Role::User);
        msg.parts.extend(files.iter().map(FileAttachment::to_part));
        if !text.is_empty() {
            msg.parts.push(Part::text(text, None));
        }
        self.session.history.push(msg);
        self.start_request_turn(
            "submit-message",
            Some(message_id.to_string()),
            text.to_string(),
            files,
            now_ms,
        );
        SubmitResult::done(SubmitKind::Sent)
    }

    /// The client's result for a tool call (a tool the browser runs): the part becomes
    /// `output-available` (or `output-error` with `error_text`), keeping a granted approval.
    /// Then, when `send_automatically_when` holds and nothing runs, the conversation goes on.
    pub fn add_tool_output(
        &mut self,
        tool_call_id: &str,
        output: Result<Value, String>,
        now_ms: u64,
    ) -> bool {
        use crate::protocol::ToolState;
        let set = |m: &mut UIMessage| {
            for p in &mut m.parts {
                let Some(t) = p.as_tool_mut().filter(|t| t.tool_call_id == tool_call_id) else {
                    continue;
                };
                // Output states keep only an approval that was granted.
                let granted = t
                    .approval
                    .as_ref()
                    .and_then(|a| a.get("approved"))
                    .and_then(Value::as_bool)
                    == Some(true);
                if !granted {
                    t.approval = None;
                }
                match &output {
                    Ok(v) => {
                        t.state = ToolState::OutputAvailable;
                        t.output = Some(v.clone());
                        t.error_text = None;
                    }
                    Err(e) => {
                        t.state = ToolState::OutputError;
                        t.output = None;
                        t.error_text = Some(e.clone());
                    }
                }
            }
        };
        let h = &self.session.history;
        let Some(i) = (0..h.len()).find(|&i| tool_ui::has_call(&h.messages()[i], tool_call_id))
        else {
            return false;
        };
        self.edit_answered(i, set);
        self.touch();
        self.send_automatically(now_ms);
        true
    }

    /// The user's answer to a tool approval request: the part becomes `approval-responded`.
    /// Then, when `send_automatically_when` holds and nothing runs, the conversation goes on.
    pub fn add_tool_approval_response(
        &mut self,
        approval_id: &str,
        approved: bool,
        reason: Option<String>,
        now_ms: u64,
    ) -> bool {
        use crate::protocol::ToolState;
        let asks = |p: &Part| {
            p.as_tool().is_some_and(|t| {
                t.state == ToolState::ApprovalRequested
                    && t.approval
                        .as_ref()
                        .and_then(|a| a.get("id"))
                        .and_then(Value::as_str)
                        == Some(approval_id)
            })
        };
        let set = |m: &mut UIMessage| {
            for p in &mut m.parts {
                if !asks(p) {
                    continue;
                }
                if let Some(t) = p.as_tool_mut() {
                    t.state = ToolState::ApprovalResponded;
                    let mut approval = match t.approval.take() {
                        Some(Value::Object(o)) => o,
                        _ => serde_json::Map::new(),
                    };
                    approval.insert("id".into(), Value::String(approval_id.to_string()));
                    approval.insert("approved".into(), Value::Bool(approved));
                    match &reason {
                        Some(r) => approval.insert("reason".into(), Value::String(r.clone())),
                        None => approval.remove("reason"),
                    };
                    t.approval = Some(Value::Object(approval));
                }
            }
        };
        let h = &self.session.history;
        let Some(i) = (0..h.len()).find(|&i| h.messages()[i].parts.iter().any(asks)) else {
            return false;
        };
        self.edit_answered(i, set);
        self.touch();
        self.send_automatically(now_ms);
        true
    }

    /// The user's answer (a tool output, an approval) applied by `set` to the message at `i`,
    /// and to the pending copy of a continued answer too, as `useChat` updates its active
    /// response's message: that copy's first write would put the call back unanswered.
    fn edit_answered(&mut self, i: usize, set: impl Fn(&mut UIMessage)) {
        set(self.session.history.at_mut(i));
        if let Some(m) = self.session.ui.pending.as_mut() {
            set(m);
        }
    }

    /// Continues the conversation from the last assistant message (AI SDK mode, nothing
    /// running): the request `useChat` makes after tool outputs or approvals. Hosts with their
    /// own `sendAutomaticallyWhen` predicate call it; the built-in ones call it themselves.
    pub fn continue_turn(&mut self, now_ms: u64) -> bool {
        let last = self
            .messages()
            .last()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.id.clone());
        if self.disposed
            || self.session.pi_owns_history()
            || self.status().is_busy()
            || last.is_none()
        {
            return false;
        }
        self.start_request_turn("submit-message", last, String::new(), Vec::new(), now_ms);
        true
    }

    fn send_automatically(&mut self, now_ms: u64) {
        if self.opts.send_automatically_when.holds(self.messages()) {
            self.continue_turn(now_ms);
        }
    }

    /// Ends the store: every request is aborted, nothing more is asked for, and late answers
    /// are ignored.
    pub fn dispose(&mut self) {
        if self.disposed {
            return;
        }
        self.bump_generation();
        self.disposed = true;
        let s = &mut self.session;
        // The store no longer follows any turn (bump_generation set a busy status `ready`).
        s.resume_at = None;
        s.turn_active = false;
        s.turn_id = None;
        s.held_turn = None;
        self.requests.clear();
        self.touch();
    }

    // ----- inputs --------------------------------------------------------------------------

    /// A response's status line and headers arrived.
    pub fn handle_response_head(&mut self, id: RequestId, head: ResponseHead, now_ms: u64) {
        let events_seen = self.session.events_seen;
        let Some(p) = self.live(id) else { return };
        p.status = Some(head.status);
        p.events_before = events_seen;
        let kind = p.kind;
        if !kind.is_stream() {
            return;
        }
        let ok = (200..300).contains(&head.status);
        if !ok || head.status == 204 {
            return; // the body (an error, or nothing) is read to the end first
        }
        let is_html = head.content_type.as_deref().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/html")
        });
        if is_html {
            // A proxy's or a dev server's page instead of the stream: nothing in it is a chunk.
            self.pending.remove(&id);
            self.abort(id);
            let e = ChatError::protocol("the server answered HTML instead of an event stream");
            self.fail_turn(e, now_ms);
            return;
        }
        if let Some(turn) = head.turn_id {
            if self.session.turn_id.is_none() {
                self.session.turn_id = Some(turn);
                self.touch();
            }
        }
        self.session.resume_tries = 0;
    }

    /// Bytes of a response body arrived (any split: the SSE decoder reassembles events).
    pub fn handle_response_body(&mut self, id: RequestId, bytes: &[u8], now_ms: u64) {
        let limit = self.opts.limits.max_body_bytes;
        let max_messages = self.opts.limits.max_messages;
        let idle = self.opts.stream_idle_timeout_ms;
        let Some(p) = self.live(id) else { return };
        if p.kind.is_stream() {
            p.deadline = idle.map(|t| now_ms + t);
        }
        let ok = p.status.is_some_and(|s| (200..300).contains(&s));
        if p.kind == RequestKind::MessagesGet && ok {
            // Converted message by message as it arrives: the body is never held whole.
            p.received += bytes.len();
            if p.received > limit {
                p.history = None;
                p.status = Some(0); // marks the answer unusable; reported at the end
            } else {
                p.history
                    .get_or_insert_with(|| Box::new(HistoryParser::new(max_messages)))
                    .push(bytes);
            }
            return;
        }
        let streaming = p.kind.is_stream() && ok;
        if !streaming {
            if p.body.len() + bytes.len() > limit {
                p.body.clear();
                p.status = Some(0); // marks the answer unusable; reported at the end
            } else if p.status != Some(0) {
                p.body.extend_from_slice(bytes);
            }
            return;
        }
        if p.body.len() < SNIFF_BYTES {
            let n = bytes.len().min(SNIFF_BYTES - p.body.len());
            p.body.extend_from_slice(&bytes[..n]);
        }
        if self.session.stream != Some(id) {
            return;
        }
        // pi mode streams from the first byte; the AI SDK's status waits for the first chunk
        // that changes the message (`begin_streaming`).
        if self.session.status == Status::Submitted && self.session.pi_owns_history() {
            self.session.status = Status::Streaming;
            self.touch();
            // Follow-ups queued while the chat POST was on its way may go now.
            self.pump(now_ms);
        }
        let mut batch = std::mem::take(&mut self.scratch);
        self.session.decoder.push_into(bytes, &mut batch);
        self.apply_events(&batch, now_ms);
        batch.clear();
        self.scratch = batch;
    }

    /// The response ended normally.
    pub fn handle_response_end(&mut self, id: RequestId, now_ms: u64) {
        let Some(p) = self.settle(id, now_ms) else {
            return;
        };
        let status = p.status.unwrap_or(0);
        let ok = (200..300).contains(&status);
        match p.kind {
            RequestKind::Capabilities => self.on_capabilities(ok.then_some(&p.body[..])),
            RequestKind::Catalog => self.on_catalog(status, &p.body),
            RequestKind::MessagesGet => self.on_history(status, &p.body, p.history),
            RequestKind::FollowUpPost => {
                let outcome = if ok {
                    match serde_json::from_slice::<Value>(&p.body) {
                        Ok(v)
                            if v.get("deleted").and_then(Value::as_bool) == Some(true)
                                && v.get("queued").and_then(Value::as_bool) != Some(true) =>
                        {
                            PostOutcome::Deleted
                        }
                        Ok(v) => PostOutcome::Accepted {
                            duplicate: v.get("duplicate").and_then(Value::as_bool).unwrap_or(false),
                        },
                        // A 2xx is the server's yes, whatever its body says.
                        Err(_) => PostOutcome::Accepted { duplicate: false },
                    }
                } else if status == 0 {
                    PostOutcome::Failed(ChatError::protocol("follow-up answer too large"))
                } else {
                    PostOutcome::Failed(ChatError::from_http(status, &p.body))
                };
                self.on_followup_answer(p.ticket, outcome, now_ms);
            }
            RequestKind::FollowUpDelete | RequestKind::TurnDelete | RequestKind::MessagesPut => {
                if !ok {
                    let e = ChatError::from_http(status, &p.body);
                    self.events.push_back(StoreEvent::Error { error: e });
                }
            }
            RequestKind::Chat | RequestKind::StreamResume => {
                let no_event = self.session.events_seen == p.events_before;
                self.on_stream_end(id, p.kind, status, &p.body, no_event, now_ms)
            }
        }
        self.pump(now_ms);
    }

    /// The request failed without an answer (network error, CORS, DNS…), or the body broke
    /// off. An abort the store asked for is not reported here (its record is gone already).
    pub fn handle_request_failed(&mut self, id: RequestId, message: &str, now_ms: u64) {
        let Some(p) = self.settle(id, now_ms) else {
            return;
        };
        let error = ChatError::network(message);
        match p.kind {
            RequestKind::Capabilities => self.on_capabilities(None),
            RequestKind::Catalog => self.on_catalog(0, &[]),
            RequestKind::MessagesGet => {
                self.session.hydrated = true;
                self.events.push_back(StoreEvent::Error { error });
                self.touch();
            }
            RequestKind::FollowUpPost => {
                self.on_followup_answer(p.ticket, PostOutcome::Failed(error), now_ms)
            }
            RequestKind::FollowUpDelete | RequestKind::TurnDelete | RequestKind::MessagesPut => {
                self.events.push_back(StoreEvent::Error { error });
            }
            RequestKind::Chat | RequestKind::StreamResume => {
                if self.session.stream != Some(id) {
                    return;
                }
                self.session.stream = None;
                let streaming = p.status.is_some_and(|s| (200..300).contains(&s));
                if streaming || p.kind == RequestKind::StreamResume {
                    // The body broke off: resume from the last chunk received.
                    self.session.decoder.finish();
                    self.schedule_resume(error, now_ms);
                } else {
                    self.fail_turn(error, now_ms);
                }
            }
        }
        self.pump(now_ms);
    }

    /// A request is over (answered or failed): its record goes, a held turn waiting for it
    /// (of any session) moves on, and the record comes back only if the answer still matters
    /// (same generation, same session).
    fn settle(&mut self, id: RequestId, now_ms: u64) -> Option<Pending> {
        let p = self.pending.remove(&id)?;
        if p.kind == RequestKind::FollowUpDelete && !self.disposed {
            self.on_delete_answered(id, now_ms);
        }
        (p.generation == self.generation && p.session == self.session.id).then_some(p)
    }

    /// Time passed: backoffs end, timeouts expire, resumes start.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now_ms))
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            // Abort the fetch but keep the record for handle_request_failed to classify:
            // `abort()` would drop it, and the follow-up queue would then wait for an answer
            // to its request in flight forever.
            self.aborts.push_back(id);
            if let Some(p) = self.pending.get_mut(&id) {
                p.deadline = None;
            }
            self.handle_request_failed(id, "timed out", now_ms);
            self.pending.remove(&id);
        }
        if self.session.resume_at.is_some_and(|t| t <= now_ms) {
            self.session.resume_at = None;
            let path = format!(
                "{}?cursor={}",
                self.route(|r| &r.stream),
                encode(&self.session.cursor())
            );
            self.session.ui.reducer.resumed();
            let id = self.request(RequestKind::StreamResume, Method::Get, path, None, now_ms);
            self.session.stream = Some(id);
        }
        self.pump(now_ms);
    }

    // ----- the pure helpers' entry: feeding chunks without IO -------------------------------

    /// Applies one already-parsed chunk to the current session as if it came from the turn's
    /// stream. Hosts with their own transport (and tests) use it.
    pub fn handle_chunk(&mut self, chunk: Chunk, now_ms: u64) {
        if self.disposed {
            return;
        }
        let before = self.session.history.revision();
        self.apply_chunk(chunk, now_ms);
        if self.session.history.revision() != before {
            self.touch();
        }
        self.pump(now_ms);
    }

    // ----- internals -----------------------------------------------------------------------

    fn touch(&mut self) {
        self.revision += 1;
    }

    fn route(&self, pick: impl Fn(&Routes) -> &String) -> String {
        replace_all(
            pick(&self.opts.routes),
            "{sessionId}",
            &encode(&self.session.id),
        )
    }

    fn request(
        &mut self,
        kind: RequestKind,
        method: Method,
        path: String,
        body: Option<String>,
        now_ms: u64,
    ) -> RequestId {
        // Every action that leads here refuses after `dispose()`: the shell has stopped.
        debug_assert!(!self.disposed, "{kind:?} request after dispose");
        let id = self.next_request;
        self.next_request += 1;
        let deadline = match kind {
            RequestKind::FollowUpPost => Some(now_ms + self.opts.followup_timeout_ms),
            // A stream that says nothing (not even a keep-alive comment) for this long is
            // treated as dropped: resumed if it had started, failed if it never answered.
            RequestKind::Chat | RequestKind::StreamResume => {
                self.opts.stream_idle_timeout_ms.map(|t| now_ms + t)
            }
            _ => None,
        };
        self.pending.insert(
            id,
            Pending {
                session: self.session.id.clone(),
                generation: self.generation,
                kind,
                status: None,
                body: Vec::new(),
                events_before: 0,
                history: None,
                received: 0,
                ticket: None,
                deadline,
            },
        );
        self.requests.push_back(Request {
            id,
            kind,
            method,
            path,
            body,
        });
        id
    }

    /// The pending record of `id` if its answer still matters.
    fn live(&mut self, id: RequestId) -> Option<&mut Pending> {
        let current = (self.generation, self.session.id.as_str());
        match self.pending.get_mut(&id) {
            Some(p) if (p.generation, p.session.as_str()) == current => Some(p),
            _ => None,
        }
    }

    fn abort(&mut self, id: RequestId) {
        if self.pending.remove(&id).is_some() || !self.aborts.contains(&id) {
            self.aborts.push_back(id);
        }
    }

    fn bump_generation(&mut self) {
        self.generation += 1;
        let ids: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.kind.aborted_on_switch())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.pending.remove(&id);
            self.aborts.push_back(id);
        }
        // Requests not yet handed out belong to the old generation too.
        self.requests.retain(|r| !r.kind.aborted_on_switch());
        self.session.queue.abort_in_flight();
        if self.session.stream.take().is_some() {
            // The body was dropped wherever it was, maybe mid-event: the resume's body must
            // not be read as the rest of that event.
            self.session.decoder.finish();
        }
        if self.session.status.is_busy() {
            // The server's turn may go on; switching back resumes its stream.
            self.session.status = Status::Ready;
        }
        self.session.resume_at = None;
    }

    /// Asks for what a session that just became current needs.
    fn open_session(&mut self, now_ms: u64) {
        if self.opts.capabilities.is_none() {
            self.session.caps_loaded = false;
            let path = format!(
                "{}?sessionId={}",
                self.route(|r| &r.capabilities),
                encode(&self.session.id)
            );
            self.request(RequestKind::Capabilities, Method::Get, path, None, now_ms);
        }
        // The tools are the runtime's, which can differ per session: fetched for each one,
        // under the same generation guard as the capabilities.
        let path = format!(
            "{}?sessionId={}",
            self.route(|r| &r.catalog),
            encode(&self.session.id)
        );
        self.request(RequestKind::Catalog, Method::Get, path, None, now_ms);
        if self.session.turn_active {
            // Parked mid-turn: pick the stream up where it was left.
            self.session.status = Status::Streaming;
            self.session.resume_tries = 0;
            self.session.resume_at = Some(now_ms);
            self.handle_timeout(now_ms);
        } else {
            if let Some(held) = &self.session.held_turn {
                // Its user message is shown; the turn starts as soon as the DELETE it waits
                // for has been answered (perhaps while the session was parked).
                self.session.status = Status::Submitted;
                if held.delete.is_none() {
                    if let Some(h) = self.session.held_turn.take() {
                        self.start_request_turn(
                            "submit-message",
                            Some(h.message_id),
                            h.text,
                            h.files,
                            now_ms,
                        );
                    }
                }
            }
            if self.opts.hydrate {
                self.hydrate(now_ms);
            } else {
                self.session.hydrated = true;
            }
            // Parked after its turn ended, with the answer to a follow-up POST still out (the
            // switch aborted it): what waited for that answer moves on now.
            self.send_next_queued(now_ms);
        }
    }

    fn hydrate(&mut self, now_ms: u64) {
        let path = self.route(|r| &r.messages);
        self.request(RequestKind::MessagesGet, Method::Get, path, None, now_ms);
    }

    /// The catalog answer. 404 means the server has no catalog: no tools, not an error.
    fn on_catalog(&mut self, status: u16, body: &[u8]) {
        let tools = if (200..300).contains(&status) {
            match tool_ui::parse_catalog(body) {
                Some((tools, skipped)) => {
                    if skipped > 0 {
                        self.diagnostic(&format!(
                            "{skipped} catalog entries without a name skipped"
                        ));
                    }
                    tools
                }
                None => {
                    self.diagnostic("catalog answer has no tools list");
                    Vec::new()
                }
            }
        } else {
            if status != 404 {
                self.diagnostic(&format!("catalog unavailable (HTTP {status})"));
            }
            Vec::new()
        };
        if tools != self.session.tools {
            self.session.tools = tools;
            self.tool_ui_version += 1;
            // The tool parts' resolved `ui` may change with it.
            self.touch_tool_messages(|_| true);
        }
        self.touch();
    }

    /// Bumps the version of every message with a tool part `pick` selects (their exported
    /// `ui` depends on more than the message).
    fn touch_tool_messages(&mut self, pick: impl Fn(&str) -> bool) {
        let h = &mut self.session.history;
        for i in 0..h.len() {
            let hit = h.messages()[i]
                .parts
                .iter()
                .any(|p| p.as_tool().is_some_and(|t| pick(&t.tool_call_id)));
            if hit {
                h.at_mut(i);
            }
        }
    }

    /// A `data-tool-ui` chunk: remembered for its tool call (in both modes: in pi mode it is
    /// not history, yet the part shows it).
    fn on_tool_ui(&mut self, data: &Value) {
        let Some((call, update)) = ToolUiUpdate::from_data(data) else {
            return self.diagnostic("data-tool-ui without a toolCallId");
        };
        self.session.tool_ui.insert(call.clone(), update);
        self.tool_ui_version += 1;
        // The message holding the call is the running turn's, the last one or near it. The
        // search stops after TOOL_UI_SEARCH messages: a chunk naming a call no message has
        // (hostile, or a stale progress update) would otherwise cost the whole history per
        // chunk. An older message shows the update the next time it changes.
        let h = &mut self.session.history;
        if let Some(i) = (0..h.len())
            .rev()
            .take(TOOL_UI_SEARCH)
            .find(|&i| tool_ui::has_call(&h.messages()[i], &call))
        {
            h.at_mut(i);
        }
        self.touch();
    }

    fn on_capabilities(&mut self, body: Option<&[u8]>) {
        let caps = match body.map(Capabilities::from_json) {
            Some(Some(c)) => c,
            Some(None) => {
                self.diagnostic("capabilities answer is not a JSON object; using defaults");
                Capabilities::default()
            }
            None => Capabilities::default(),
        };
        let pi_owned = self.session.pi_owns_history();
        self.session.caps = caps;
        self.session.caps_loaded = true;
        if !pi_owned && self.session.pi_owns_history() && self.session.status.is_busy() {
            // A first send went ahead on the defaults: its turn is the projection's now.
            self.hand_history_to_pi();
        }
        self.touch();
    }

    fn on_history(&mut self, status: u16, body: &[u8], parser: Option<Box<HistoryParser>>) {
        self.session.hydrated = true;
        self.touch();
        if status == 404 {
            return; // a session the server has no history for yet
        }
        if !(200..300).contains(&status) {
            let error = if status == 0 {
                ChatError::protocol("history answer too large")
            } else {
                ChatError::from_http(status, body)
            };
            self.events.push_back(StoreEvent::Error { error });
            return;
        }
        let parser = parser.unwrap_or_else(|| {
            // The body came before any status (or not at all): read it now.
            let mut p = Box::new(HistoryParser::new(self.opts.limits.max_messages));
            p.push(body);
            p
        });
        let (mut messages, skipped) = match parser.finish() {
            Ok(list) => list,
            Err(HistoryBodyError::NoMessagesList) => {
                return self.diagnostic("history answer has no messages list")
            }
            Err(HistoryBodyError::NotJson) => return self.diagnostic("history answer is not JSON"),
        };
        for e in skipped {
            self.diagnostic(&format!("history message skipped: {e}"));
        }
        if self.session.status.is_busy() || self.session.turn_active {
            // A turn started before the history came: canonical first, then what this client
            // added that the server does not list yet. A message both have keeps the local
            // copy, the one being streamed into; and the reducers keep their bookkeeping
            // (the optimistic user message to adopt, the open messages, part positions), all
            // keyed by message id and still true of those copies. Resetting it mid-turn split
            // the streaming text part in two and duplicated the user's message.
            let local = self.session.history.messages();
            let by_id: HashMap<&str, usize> = local
                .iter()
                .enumerate()
                .map(|(i, m)| (m.id.as_str(), i))
                .collect();
            let mut listed = vec![false; local.len()];
            for c in messages.iter_mut() {
                if let Some(&i) = by_id.get(c.id.as_str()) {
                    listed[i] = true;
                    c.clone_from(&local[i]);
                }
            }
            let extra = local.iter().zip(listed).filter(|(_, l)| !l).map(|(m, _)| m);
            let merged: Vec<UIMessage> = messages.into_iter().chain(extra.cloned()).collect();
            self.session.history.replace_all(merged);
            self.session.history_json.clear();
            return;
        }
        self.session.history.replace_all(messages);
        // Every message has a new version: the old JSON would only be replaced.
        self.session.history_json.clear();
        self.session.pi.reset();
        self.session.ui = UiTurn::default();
    }

    fn on_followup_answer(&mut self, ticket: Option<u64>, outcome: PostOutcome, now_ms: u64) {
        let Some(ticket) = ticket else { return };
        let jitter = self.rng.unit();
        let effect = self
            .session
            .queue
            .handle_response(ticket, outcome, now_ms, jitter);
        self.touch();
        match effect {
            Some(QueueEffect::Unsupported { item_id }) => {
                // The runtime cannot take follow-ups after all: stop offering them, and give
                // the text back to an empty composer (otherwise the item stays `failed`).
                self.session.caps.native_follow_up = false;
                if self.draft.is_empty() && self.draft_files.is_empty() {
                    if let Some((item, _)) = self.session.queue.take(&item_id) {
                        self.draft = item.text;
                        self.draft_files = item.files;
                    }
                }
                let e = ChatError::new(
                    ErrorKind::FollowUpUnsupported,
                    "the runtime does not accept follow-ups",
                );
                self.events.push_back(StoreEvent::Error { error: e });
            }
            Some(QueueEffect::Failed { item_id }) => {
                if let Some(e) = self
                    .session
                    .queue
                    .get(&item_id)
                    .and_then(|i| i.error.clone())
                {
                    self.events.push_back(StoreEvent::Error { error: e });
                }
            }
            None => {}
        }
        if !self.session.turn_active {
            // Accepted after the turn ended: the server will not run it in that turn.
            self.session.queue.mark_stalled_after_turn();
            // The answer the turn's end was waiting for: what is still queued moves on.
            self.send_next_queued(now_ms);
        }
    }

    fn delete_followup(&mut self, seq: u64, nonce: &str, now_ms: u64) -> RequestId {
        let path = format!(
            "{}?clientNonce={}&clientSeq={seq}",
            self.route(|r| &r.followup),
            encode(nonce)
        );
        self.request(
            RequestKind::FollowUpDelete,
            Method::Delete,
            path,
            None,
            now_ms,
        )
    }

    /// Follow-ups go out only once the turn's stream has begun: one POSTed while the chat POST
    /// is still on its way could reach the server first and run before the message it follows
    /// (the browser makes the two fetches concurrently).
    fn may_post_followups(&self) -> bool {
        !self.disposed
            && self.session.turn_active
            && self.session.status == Status::Streaming
            && self.capabilities().native_follow_up
    }

    /// Moves what the follow-up queue wants to post into the request outbox.
    fn pump(&mut self, now_ms: u64) {
        if !self.may_post_followups() {
            return;
        }
        while let Some(post) = self.session.queue.poll_request(now_ms) {
            let mut body = json!({
                "message": post.text,
                "clientSeq": post.client_seq,
                "clientNonce": post.client_nonce,
            });
            if !post.files.is_empty() {
                body["attachments"] = serde_json::to_value(&post.files).unwrap_or(Value::Null);
            }
            let path = self.route(|r| &r.followup);
            let id = self.request(
                RequestKind::FollowUpPost,
                Method::Post,
                path,
                Some(to_string(&body)),
                now_ms,
            );
            if let Some(p) = self.pending.get_mut(&id) {
                p.ticket = Some(post.ticket);
            }
            self.touch();
        }
    }

    /// Starts a turn with a new user message.
    fn start_turn(&mut self, text: String, files: Vec<FileAttachment>, trigger: &str, now_ms: u64) {
        let id = self.push_user_message(&text, &files);
        self.start_request_turn(trigger, Some(id), text, files, now_ms);
    }

    /// Sends a queued item's text as a new message. When the server may hold a copy of it,
    /// the copy is deleted first and the chat POST waits for that answer: the message shows
    /// at once, the turn starts once the copy can no longer run.
    fn send_as_new_message(&mut self, item: FollowUpItem, server_may_have_it: bool, now_ms: u64) {
        if !server_may_have_it {
            return self.start_turn(item.text, item.files, "submit-message", now_ms);
        }
        let delete = self.delete_followup(item.client_seq, &item.client_nonce, now_ms);
        let message_id = self.push_user_message(&item.text, &item.files);
        let s = &mut self.session;
        s.status = Status::Submitted;
        s.error = None;
        s.held_turn = Some(HeldTurn {
            delete: Some(delete),
            message_id,
            text: item.text,
            files: item.files,
        });
        self.touch();
    }

    /// The DELETE a held turn waits for was answered (whatever it said: a failed DELETE
    /// leaves nothing better to do than send).
    fn on_delete_answered(&mut self, id: RequestId, now_ms: u64) {
        let current = &mut self.session.held_turn;
        if current.as_ref().and_then(|h| h.delete) == Some(id) {
            if let Some(h) = current.take() {
                self.start_request_turn(
                    "submit-message",
                    Some(h.message_id),
                    h.text,
                    h.files,
                    now_ms,
                );
            }
            return;
        }
        for parked in self.parked.values_mut() {
            if let Some(h) = parked.held_turn.as_mut().filter(|h| h.delete == Some(id)) {
                h.delete = None; // sent when the session is current again
            }
        }
    }

    /// Adds the optimistic user message of a new turn; returns its id.
    fn push_user_message(&mut self, text: &str, files: &[FileAttachment]) -> String {
        let id = uuid_v4(self.rng.as_mut());
        let mut msg = UIMessage::new(id.clone(), Role::User);
        // `useChat` puts files before the text.
        msg.parts.extend(files.iter().map(FileAttachment::to_part));
        if !text.is_empty() {
            msg.parts.push(Part::text(text, None));
        }
        self.session.history.push(msg);
        if self.session.pi_owns_history() {
            self.session.pi.set_pending_user(Some(id.clone()));
        }
        id
    }

    /// Sends the chat POST for a turn whose user message (if any) is already in the history.
    fn start_request_turn(
        &mut self,
        trigger: &str,
        message_id: Option<String>,
        text: String,
        files: Vec<FileAttachment>,
        now_ms: u64,
    ) {
        let client_turn_id = uuid_v4(self.rng.as_mut());
        let mut body = json!({
            "id": self.session.id,
            "sessionId": self.session.id,
            "message": text,
            "trigger": trigger,
            "clientTurnId": client_turn_id,
        });
        if let Some(mid) = message_id {
            body["messageId"] = Value::String(mid);
        }
        if !files.is_empty() {
            body["attachments"] = serde_json::to_value(&files).unwrap_or(Value::Null);
        }
        let body = if self.session.pi_owns_history() {
            to_string(&body)
        } else {
            // The whole history, files included, as `useChat` sends it: the model needs the
            // bytes. Only the stored copy (PUT) drops `data:` URLs.
            let s = &mut self.session;
            s.history_json.refresh(&s.history);
            s.history_json.body(&body, false)
        };
        let s = &mut self.session;
        s.client_turn_id = Some(client_turn_id);
        s.pi.new_turn();
        s.ui = UiTurn::default();
        s.status = Status::Submitted;
        s.error = None;
        s.turn_id = None;
        s.turn_active = true;
        s.stream_done = false;
        s.stream_error = false;
        s.finish_reason = None;
        s.events_seen = 0;
        s.resume_tries = 0;
        s.resume_at = None;
        s.send_queue_when_idle = false;
        s.ignored_user_start = false;
        s.decoder = SseDecoder::with_max_event_bytes(self.opts.limits.max_event_bytes);
        let path = self.route(|r| &r.chat);
        let id = self.request(RequestKind::Chat, Method::Post, path, Some(body), now_ms);
        self.session.stream = Some(id);
        self.touch();
        self.pump(now_ms);
    }

    fn apply_events(&mut self, batch: &SseBatch, now_ms: u64) {
        let before = self.session.history.revision();
        let stream = self.session.stream;
        for item in batch.iter() {
            if self.session.stream != stream {
                // A violation failed the turn (or an error ended it) mid-read: the `ai` package
                // stops processing there, and so does the store — the rest of the read is
                // dropped with the stream (found by the store fuzz target).
                break;
            }
            self.session.events_seen += 1;
            match item {
                Ok("[DONE]") => self.session.stream_done = true,
                // Deltas in their canonical shape are applied in place, without the `Value`
                // tree or the chunk (most of the per-event cost of a long stream); anything
                // else takes the full parser.
                Ok(data) => match crate::stream::fast_chunk::parse_delta(data) {
                    Some(delta) => self.apply_delta(delta, now_ms),
                    None => match parse_chunk(data) {
                        Ok(chunk) => self.apply_chunk(chunk, now_ms),
                        Err(e) => {
                            let error = ChatError::protocol(e.to_string());
                            self.events.push_back(StoreEvent::Error { error });
                        }
                    },
                },
                Err(SseError::EventTooLarge { limit }) => {
                    let error = ChatError::protocol(format!(
                        "an event larger than {limit} bytes was skipped"
                    ));
                    self.events.push_back(StoreEvent::Error { error });
                }
            }
        }
        if self.session.history.revision() != before {
            self.touch();
        }
    }

    /// What [`apply_chunk`](Self::apply_chunk) does with a delta's chunk, without building it:
    /// the same authority gate, and the reducers' own entry points for a delta read in place.
    fn apply_delta(&mut self, delta: Delta<'_>, now_ms: u64) {
        let pi_owns = self.session.pi_owns_history();
        match delta {
            Delta::Pi {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            } if pi_owns => {
                let mut effects = Vec::new();
                let s = &mut self.session;
                let ids = (&*message_id, &*part_id);
                s.pi.apply_delta(&mut s.history, seq, kind, ids, &delta, &mut effects);
                for e in effects {
                    self.on_pi_effect(e, now_ms);
                }
            }
            // AI SDK mode ignores the projection's deltas; pi mode the standard ones.
            Delta::Pi { .. } => {}
            _ if pi_owns => {}
            // The reducer's delta entry only appends to a text (`append_only`).
            Delta::Part { kind, id, delta } => self.reduce_streamed(
                Writes::ALWAYS,
                true,
                |r, m, _| r.apply_delta(m, kind, &id, &delta),
                now_ms,
            ),
            // Tool input deltas cost their parse, not their chunk: the general path.
            d @ Delta::ToolInput { .. } => self.apply_chunk(d.into_chunk(), now_ms),
        }
    }

    /// The one place a chunk meets the history: the authority gate of SPEC §8.
    fn apply_chunk(&mut self, chunk: Chunk, now_ms: u64) {
        if let Chunk::Data(d) = &chunk {
            if d.name == "tool-ui" {
                // Typed tool UI metadata for a call; the chunk then goes where any data chunk
                // goes (onData, and history in AI SDK mode).
                self.on_tool_ui(&d.data);
            }
        }
        let pi_owns = self.session.pi_owns_history();
        match chunk {
            Chunk::Pi(PiEvent::Mode { enabled }) => {
                if enabled && !self.session.pi_mode {
                    self.enter_pi_mode();
                    // pi mode streams from the first byte, which came with this chunk (the
                    // AI SDK's rule had kept the status `submitted` until a write).
                    self.begin_streaming(now_ms);
                }
            }
            Chunk::Pi(PiEvent::TurnStart { turn_id }) => {
                // Meaningful in both modes: stop and resume need the turn id. The turn-start
                // of the turn already running (a resume that replays from the start of the
                // server's buffer) is not a new turn: resetting the seq watermark would apply
                // the replayed deltas a second time.
                let s = &mut self.session;
                let id = Some(turn_id.as_str());
                if s.turn_id.as_deref() != id && s.reducer_turn.as_deref() != id {
                    s.pi.new_turn();
                    s.reducer_turn = Some(turn_id.clone());
                }
                // `turnId` names the running turn: a chunk fed while none runs (a host's own
                // transport through `handle_chunk`) starts the reducers' turn only.
                if s.turn_active && s.turn_id.as_deref() != id {
                    s.turn_id = Some(turn_id);
                    self.touch();
                }
                // A data chunk to `useChat`, which writes it (its status turns `streaming`).
                self.begin_streaming(now_ms);
            }
            Chunk::Pi(ev) if pi_owns => {
                let mut effects = Vec::new();
                let s = &mut self.session;
                s.pi.apply(&mut s.history, ev, &mut effects);
                for e in effects {
                    self.on_pi_effect(e, now_ms);
                }
            }
            // AI SDK mode: the pi projection is not the authority.
            Chunk::Pi(ev) => {
                if let PiEvent::MessageStart {
                    role: Role::User,
                    client_nonce: None,
                    ..
                } = ev
                {
                    self.session.ignored_user_start = true;
                }
            }
            Chunk::Ui(c) if pi_owns => match c {
                // pi mode: standard chunks duplicate what the projection says; only the
                // turn-level ones count.
                UiChunk::Error { error_text } => self.stream_error(error_text),
                UiChunk::Finish { finish_reason, .. } => self.session.finish_reason = finish_reason,
                _ => {}
            },
            Chunk::Ui(c) => {
                let error = matches!(c, UiChunk::Error { .. });
                let writes = Writes::of(&c);
                self.reduce_streamed(writes, false, |r, m, e| r.apply(m, c, e), now_ms);
                // `useChat` stops at an `error` chunk (its stream processor throws it): the
                // turn ends there, failed, and nothing after it in the stream is applied. The
                // replay helpers, like `readUIMessageStream`, go on.
                if error {
                    if let Some(id) = self.session.stream.take() {
                        self.abort(id);
                        self.finish_turn(now_ms);
                    }
                }
            }
            Chunk::Data(d) if pi_owns => self.events.push_back(StoreEvent::Data {
                name: d.name,
                id: d.id,
                data: d.data,
                transient: d.transient,
            }),
            Chunk::Data(d) => {
                let mut effects = Vec::new();
                if d.transient {
                    self.session.ui.reducer.apply_data(
                        &mut UIMessage::new("", Role::Assistant),
                        d,
                        &mut effects,
                    );
                    self.on_ui_effects(usize::MAX, &mut effects);
                } else {
                    let data = |r: &mut UiMessageReducer, m: &mut UIMessage, e: &mut Vec<_>| {
                        r.apply_data(m, d, e);
                        Ok(())
                    };
                    self.reduce_streamed(Writes::ALWAYS, false, data, now_ms);
                }
            }
            Chunk::Unknown { chunk_type, .. } => {
                self.diagnostic(&format!("unknown chunk type {chunk_type}"))
            }
        }
    }

    /// Where the AI SDK reducer applies a chunk: the streamed message's position once it is in
    /// the history; else `None`, and the chunk goes to the turn's pending message (made here:
    /// a new one, or a copy of the assistant message the turn continues). As in `useChat`, the
    /// message enters the history at the first chunk that writes it ([`place_pending`]
    /// (Self::place_pending)). Until then a continued message shows as it was, and a stream
    /// that writes nothing (a bare `start` and `finish`, an `error` at once) leaves no empty
    /// answer behind.
    fn ui_placed(&mut self) -> Option<usize> {
        let s = &mut self.session;
        if let Some(i) =
            s.ui.message_id
                .as_deref()
                .and_then(|id| s.history.position(id))
        {
            return Some(i);
        }
        if s.ui.pending.is_none() {
            let continued = s.history.last().filter(|m| m.role == Role::Assistant);
            s.ui.pending = Some(match continued {
                Some(m) => m.clone(),
                None => UIMessage::new(uuid_v4(self.rng.as_mut()), Role::Assistant),
            });
        }
        None
    }

    /// The pending message's first write: it enters the history (`push` replaces the message
    /// of the same id in place: the continued one) and is streamed into there from now on.
    fn place_pending(&mut self) -> Option<usize> {
        let s = &mut self.session;
        let i = s.history.push(s.ui.pending.take()?);
        s.ui.message_id = Some(s.history.messages()[i].id.clone());
        Some(i)
    }

    /// One step of the AI SDK reducer on the streamed message, as `useChat` writes it.
    /// `reduce` runs on the message in the history (`append_only`: the delta entry, which only
    /// appends to a text), or on the turn's pending answer. That answer enters the history at
    /// the first chunk that writes, not at all when the reducer refuses it (the processor throws
    /// before writing). Then the effects are handled, a refusal fails the turn, and a write that
    /// updates the status ends `submitted`. The fast and the general path both come here.
    fn reduce_streamed(
        &mut self,
        writes: Writes,
        append_only: bool,
        reduce: impl FnOnce(
            &mut UiMessageReducer,
            &mut UIMessage,
            &mut Vec<UiEffect>,
        ) -> Result<(), Violation>,
        now_ms: u64,
    ) {
        let placed = self.ui_placed();
        let s = &mut self.session;
        let msg = match (placed, s.ui.pending.as_mut()) {
            (Some(i), _) if append_only => s.history.append_mut(i),
            (Some(i), _) => s.history.at_mut(i),
            (None, Some(m)) => m,
            (None, None) => return,
        };
        let before = msg.parts.len();
        let result = reduce(&mut s.ui.reducer, msg, &mut self.ui_effects);
        // A `reset-step` writes (with the status) when the step had parts to remove.
        let removed = writes.reset && msg.parts.len() < before;
        let applied = result.is_ok();
        let target = match placed {
            None if applied && (writes.places || removed) => self.place_pending(),
            _ => placed,
        };
        // (None for a text delta: its entry has no effects, and the calls are not free per delta.)
        if !self.ui_effects.is_empty() {
            let mut effects = std::mem::take(&mut self.ui_effects);
            self.on_ui_effects(target.unwrap_or(usize::MAX), &mut effects);
            self.ui_effects = effects;
        }
        self.on_ui_result(result, now_ms);
        if applied && (writes.streams || removed) {
            self.begin_streaming(now_ms);
        }
    }

    /// `useChat`'s status goes from `submitted` to `streaming` at the first chunk that changes
    /// the message ([`Writes::of`]), not at the first byte: a UI shows its waiting indicator
    /// until then, and no empty answer.
    fn begin_streaming(&mut self, now_ms: u64) {
        if self.session.status == Status::Submitted && self.session.stream.is_some() {
            self.session.status = Status::Streaming;
            self.touch();
            self.pump(now_ms);
        }
    }

    /// A protocol violation fails the turn: the `ai` package stops processing there.
    fn on_ui_result(&mut self, result: Result<(), Violation>, now_ms: u64) {
        if let Err(v) = result {
            if let Some(id) = self.session.stream.take() {
                self.abort(id);
            }
            self.fail_turn(ChatError::protocol(v.0), now_ms);
        }
    }

    /// Handles (and empties) the AI SDK reducer's effects for the message at `i`.
    fn on_ui_effects(&mut self, i: usize, effects: &mut Vec<UiEffect>) {
        for e in effects.drain(..) {
            match e {
                UiEffect::MessageId(id) => {
                    // A second `start` renames the same message: never a second bubble.
                    if i < self.session.history.len() {
                        self.session.history.rename(i, &id);
                        self.session.ui.message_id =
                            Some(self.session.history.messages()[i].id.clone());
                    }
                }
                UiEffect::Data(d) => self.events.push_back(StoreEvent::Data {
                    name: d.name,
                    id: d.id,
                    data: d.data,
                    transient: d.transient,
                }),
                UiEffect::Error(text) => self.stream_error(text),
                UiEffect::Finish(reason) => self.session.finish_reason = reason,
                UiEffect::Abort => {}
            }
        }
    }

    fn on_pi_effect(&mut self, e: PiEffect, now_ms: u64) {
        match e {
            PiEffect::Mode(_) | PiEffect::TurnStart(_) => {} // handled before the reducer
            PiEffect::UserMessage {
                client_nonce: Some(nonce),
                ..
            } => {
                if self.session.queue.consume_by_nonce(&nonce).is_some() {
                    self.touch();
                }
            }
            PiEffect::UserMessage {
                client_nonce: None, ..
            } => {}
            PiEffect::FollowUpConsumed {
                client_nonce,
                client_seq,
            } => {
                let q = &mut self.session.queue;
                let consumed = match (client_nonce, client_seq) {
                    (Some(n), _) => q.consume_by_nonce(&n),
                    (None, Some(seq)) => q.consume_by_seq(seq),
                    // Older servers say only that one was consumed: the oldest posted one,
                    // FIFO, never matched by text.
                    (None, None) => q.consume_oldest_posted(),
                };
                if consumed.is_some() {
                    self.touch();
                }
            }
            PiEffect::Data { name, data } => self.events.push_back(StoreEvent::Data {
                name,
                id: None,
                data,
                transient: true,
            }),
            PiEffect::Diagnostic(m) => self.diagnostic(&m),
        }
        let _ = now_ms;
    }

    /// `data-pi-mode`: from here on the pi projection owns this session's history.
    fn enter_pi_mode(&mut self) {
        self.session.pi_mode = true;
        self.hand_history_to_pi();
    }

    /// The pi projection took over history from the AI SDK reducer (`data-pi-mode`, or a
    /// capabilities answer that came after a send made on the defaults). A message the AI
    /// SDK reducer started in this turn is dropped: the projection rebuilds it.
    fn hand_history_to_pi(&mut self) {
        let s = &mut self.session;
        s.ui.pending = None;
        if let Some(i) =
            s.ui.message_id
                .take()
                .and_then(|id| s.history.position(&id))
        {
            if s.history.messages()[i].role == Role::Assistant {
                s.history.remove(i);
            }
        }
        // The optimistic user message of this turn is adopted by the projection's first
        // user message-start, unless that one went by already.
        if s.status.is_busy() && !s.ignored_user_start {
            let last_user = s
                .history
                .messages()
                .iter()
                .rposition(|m| m.role == Role::User);
            s.pi.set_pending_user(last_user.map(|i| s.history.messages()[i].id.clone()));
        }
        self.touch();
    }

    fn stream_error(&mut self, text: String) {
        self.session.stream_error = true;
        let e = ChatError::new(ErrorKind::Server, text);
        self.session.error = Some(e.clone());
        self.events.push_back(StoreEvent::Error { error: e });
        self.touch();
    }

    fn diagnostic(&mut self, message: &str) {
        self.events.push_back(StoreEvent::Diagnostic {
            message: message.to_string(),
        });
    }

    /// The turn's stream request ended (a body that reached its end, or an error answer).
    fn on_stream_end(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        status: u16,
        body: &[u8],
        no_event: bool,
        now_ms: u64,
    ) {
        if self.session.stream != Some(id) {
            return;
        }
        self.session.stream = None;
        let ok = (200..300).contains(&status);
        if kind == RequestKind::StreamResume && (status == 204 || status == 416) {
            // Nothing left to resume (the turn ended meanwhile, or the buffer moved on): the
            // canonical history has what happened.
            self.finish_turn(now_ms);
            if self.opts.hydrate {
                self.hydrate(now_ms);
            }
            return;
        }
        if !ok {
            let e = if status == 0 {
                ChatError::protocol("answer too large")
            } else {
                ChatError::from_http(status, body)
            };
            self.fail_turn(e, now_ms);
            return;
        }
        if no_event && !looks_like_sse(body) {
            // A JSON error, a login page served as text/plain…: ending the turn `ready` would
            // hide that nothing answered (the `ai` package does; a user sees a silent no-op).
            let text = String::from_utf8_lossy(&body[..body.len().min(120)]);
            let e = ChatError::protocol(format!(
                "the server answered {status} without an event stream: {}",
                text.trim()
            ));
            return self.fail_turn(e, now_ms);
        }
        let cut = self.session.decoder.finish();
        if cut && !self.session.stream_done {
            // The body ended mid-event: a dropped connection, not the end of the turn.
            return self.schedule_resume(ChatError::network("the stream ended mid-event"), now_ms);
        }
        self.finish_turn(now_ms);
    }

    fn schedule_resume(&mut self, error: ChatError, now_ms: u64) {
        let s = &mut self.session;
        if s.resume_tries >= self.opts.resume_attempts {
            return self.fail_turn(error, now_ms);
        }
        let delay = self
            .opts
            .resume_delay_ms
            .saturating_mul(1 << s.resume_tries.min(16));
        s.resume_tries += 1;
        s.resume_at = Some(now_ms + delay);
        self.diagnostic(&format!("stream dropped ({}); resuming", error.message));
    }

    /// A turn completed: status back to ready (or error), queued items move on, and in AI SDK
    /// mode the history is stored.
    fn finish_turn(&mut self, now_ms: u64) {
        let s = &mut self.session;
        s.pi.end_of_stream(&mut s.history);
        s.turn_active = false;
        // `turnId` names the running turn: none runs now.
        s.turn_id = None;
        s.resume_at = None;
        s.status = if s.stream_error {
            Status::Error
        } else {
            Status::Ready
        };
        let finish_reason = s.finish_reason.take();
        s.queue.mark_stalled_after_turn();
        self.events.push_back(StoreEvent::Finish { finish_reason });
        self.after_ai_sdk_turn(now_ms);
        self.touch();
        self.session.send_queue_when_idle = !self.session.stream_error;
        self.send_next_queued(now_ms);
        // Tool outputs that arrived while it streamed may complete the message (useChat's
        // check when a response ends).
        if self.session.status == Status::Ready {
            self.send_automatically(now_ms);
        }
    }

    /// Items queued during a turn that ended, which the server never accepted: the first
    /// becomes the next turn, the rest follow it as follow-ups (SPEC §6). It waits while a
    /// follow-up POST is in flight, whose answer decides first (FIFO); the store calls it
    /// again when that answer comes.
    fn send_next_queued(&mut self, now_ms: u64) {
        use crate::followup::ItemState;
        let s = &mut self.session;
        if self.disposed || !s.send_queue_when_idle || s.turn_active || s.status.is_busy() {
            return;
        }
        let q = &mut s.queue;
        if q.in_flight().is_some() {
            return;
        }
        let (item, server_may_have_it) = match q.take_first_unposted() {
            Some(item) => (item, false),
            // A head that was posted but failed, with its retry still pending: the turn it
            // was meant for is over, so it is sent as a new message as well. Left alone it
            // would wait for a turn that never comes, and block everything behind it.
            None => match q.items().iter().find(|i| i.state != ItemState::Stalled) {
                Some(head) if head.state == ItemState::Queued => {
                    let id = head.id.clone();
                    match q.take(&id) {
                        Some(taken) => taken,
                        None => return,
                    }
                }
                _ => return,
            },
        };
        // A lost answer may have left a copy on the server: it is cancelled before the turn
        // starts, so it cannot run a second time.
        self.send_as_new_message(item, server_may_have_it, now_ms);
    }

    /// In AI SDK mode the client owns history: store it after every completed turn.
    fn after_ai_sdk_turn(&mut self, now_ms: u64) {
        if self.session.pi_owns_history() || self.session.history.is_empty() {
            return;
        }
        let s = &mut self.session;
        s.history_json.refresh(&s.history);
        let body = s.history_json.body(&json!({}), true);
        let path = self.route(|r| &r.messages);
        self.request(
            RequestKind::MessagesPut,
            Method::Put,
            path,
            Some(body),
            now_ms,
        );
    }

    fn fail_turn(&mut self, error: ChatError, now_ms: u64) {
        let s = &mut self.session;
        // A turn held for a DELETE's answer fails with it (its user message stays, as after a
        // failed chat POST): kept, the answer would start it beside a turn the user sends
        // next (found by the store fuzz target's long run).
        s.held_turn = None;
        s.stream = None;
        s.turn_active = false;
        s.turn_id = None;
        s.resume_at = None;
        s.status = Status::Error;
        s.send_queue_when_idle = false;
        s.error = Some(error.clone());
        s.queue.mark_stalled_after_turn();
        self.events.push_back(StoreEvent::Error { error });
        self.touch();
        let _ = now_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `replace_all` is `str::replace` (for the non-empty patterns it is given).
    #[test]
    fn replace_all_is_str_replace() {
        for s in [
            "",
            "{sessionId}",
            "/api/{sessionId}/x/{sessionId}",
            "{{sessionId}}",
            "{sessionI{sessionId}d}",
            "é{sessionId}ü{session",
            "no placeholder",
        ] {
            for with in ["", "s%201", "{sessionId}"] {
                assert_eq!(
                    replace_all(s, "{sessionId}", with),
                    s.replace("{sessionId}", with)
                );
            }
        }
    }

    fn message(id: &str, n: usize) -> UIMessage {
        let v = json!({"id": id, "role": if n.is_multiple_of(2) { "user" } else { "assistant" },
        "metadata": if n.is_multiple_of(3) { json!({"z": 1, "a": [n]}) } else { Value::Null },
        "parts": [
            {"type": "text", "text": format!("t{n} \"q\" \u{e9}"), "state": "done"},
            {"type": "file", "mediaType": "image/png",
             "url": if n.is_multiple_of(4) { "data:image/png;base64,AAAA" } else { "https://x/a.png" }},
            {"type": "tool-x", "toolCallId": format!("c{n}"), "state": "output-available",
             "input": {"b": 1, "a": 2}, "output": null, "futureKey": [n]},
            {"type": "data-y", "data": {"k": n}, "transient": false},
            {"type": "future-kind", "url": "data:x", "type2": 1},
        ]});
        let mut m = UIMessage::from_json(v).unwrap();
        if n.is_multiple_of(4) {
            m.metadata = None;
        }
        m
    }

    /// The bodies as they were built before the cache: through one `Value`.
    fn expected(h: &History, fields: &Value, stored: bool) -> Value {
        let mut body = fields.clone();
        body["messages"] = if stored {
            history_for_storage(h.messages())
        } else {
            serde_json::to_value(h.messages()).unwrap()
        };
        body
    }

    fn check(cache: &mut HistoryJson, h: &History) {
        cache.refresh(h);
        let fields = json!({"id": "s", "trigger": "submit-message", "message": "m"});
        for (fields, stored) in [(fields, false), (json!({}), true)] {
            let text = cache.body(&fields, stored);
            let got: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(got, expected(h, &fields, stored), "stored: {stored}");
        }
    }

    #[test]
    fn cached_history_bodies_are_the_history() {
        let mut h = History::new();
        let mut cache = HistoryJson::default();
        check(&mut cache, &h);
        for n in 0..12 {
            h.push(message(&format!("m{n}"), n));
        }
        check(&mut cache, &h);
        // A change in the middle, a rename, a removal, a truncation, a replacement.
        h.at_mut(3).parts.push(Part::StepStart);
        h.rename(5, "renamed");
        check(&mut cache, &h);
        assert_eq!(cache.entries[3].version, h.version(3));
        h.remove(1);
        check(&mut cache, &h);
        h.truncate(7);
        h.push(message("m4", 4));
        check(&mut cache, &h);
        h.replace_all((0..5).map(|n| message(&format!("r{n}"), n + 1)).collect());
        check(&mut cache, &h);
    }

    #[test]
    fn unchanged_messages_are_not_serialised_again() {
        let mut h = History::new();
        for n in 0..4 {
            h.push(message(&format!("m{n}"), n));
        }
        let mut cache = HistoryJson::default();
        cache.refresh(&h);
        let before: Vec<*const u8> = cache.entries.iter().map(|e| e.sent.as_ptr()).collect();
        h.at_mut(2);
        cache.refresh(&h);
        let after: Vec<*const u8> = cache.entries.iter().map(|e| e.sent.as_ptr()).collect();
        assert_eq!(before[..2], after[..2]);
        assert_eq!(before[3], after[3]);
    }
}
