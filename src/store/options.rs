//! The store's options: the server's routes, the limits, the auto-send rule.

use super::*;

/// Path templates of the server routes; `{sessionId}` is replaced (percent-encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routes {
    /// `GET` the capabilities (`/api/v1/agent/capabilities`; `?sessionId=S` is appended).
    pub capabilities: String,
    /// `GET` the tool catalog (`/api/v1/agent/catalog`; `?sessionId=S` is appended).
    pub catalog: String,
    /// `POST` a message that starts a turn (`/api/v1/agent/chat`).
    pub chat: String,
    /// `POST` a follow-up, `DELETE` a posted one (`/api/v1/agent/chat/{sessionId}/followup`).
    pub followup: String,
    /// `GET` the canonical history, `PUT` it in AI SDK mode
    /// (`/api/v1/agent/chat/{sessionId}/messages`).
    pub messages: String,
    /// `GET` a resume of the turn's stream (`/api/v1/agent/chat/{sessionId}/stream`;
    /// `?cursor=C` is appended).
    pub stream: String,
    /// `DELETE` the running turn, to stop it (`/api/v1/agent/chat/{sessionId}/turn`;
    /// `?turnId=T` is appended).
    pub turn: String,
    /// `POST` the answer to an approval a call waits for (pi mode,
    /// `/api/v1/agent/chat/{sessionId}/approval`).
    pub approval: String,
    /// `POST` the answer to a call that waits for the user's input (pi mode,
    /// `/api/v1/agent/chat/{sessionId}/tool-output`).
    pub tool_output: String,
    /// `GET` the session list (`/api/v1/agent/sessions`; `?cursor=C&limit=N&archived=B` is
    /// appended).
    pub sessions: String,
    /// `PATCH` (rename, archive) and `DELETE` one session (`/api/v1/agent/sessions/{sessionId}`,
    /// the session it names in place of `{sessionId}`).
    pub session: String,
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
            approval: "/api/v1/agent/chat/{sessionId}/approval".into(),
            tool_output: "/api/v1/agent/chat/{sessionId}/tool-output".into(),
            sessions: "/api/v1/agent/sessions".into(),
            session: "/api/v1/agent/sessions/{sessionId}".into(),
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
    /// A streamed message larger than this (UTF-16 units of its texts, tool inputs and
    /// outputs, data) stops the turn with a `LimitExceeded` error; at most
    /// [`MAX_MESSAGE_CHARS`].
    pub max_message_chars: usize,
    /// The same for the whole history while a turn streams; at most
    /// [`MAX_HISTORY_CHARS`].
    pub max_history_chars: usize,
    /// The history's `PUT` keeps a file part's `data:` URL up to this long (so the file still
    /// shows after a reload); a longer one is stored without its `url`.
    pub max_stored_data_url_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_bytes: crate::codec::sse::DEFAULT_MAX_EVENT_BYTES,
            max_body_bytes: 64 * 1024 * 1024,
            max_messages: 100_000,
            max_message_chars: 32 << 20,
            max_history_chars: 128 << 20,
            max_stored_data_url_chars: 1 << 20,
        }
    }
}

/// How a store is set up.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// The `sessionId` the store opens.
    pub session_id: String,
    /// A static capabilities override: no capabilities request is made.
    pub capabilities: Option<Capabilities>,
    /// The server's routes (the `routes` option).
    pub routes: Routes,
    /// Bounds on what the server can make the store hold (SPEC §10).
    pub limits: Limits,
    /// The backoff of retryable follow-up POST failures (SPEC §6).
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
    /// A stream that beats (pi-native heartbeats, SSE `:` comments) and then sends nothing for
    /// its beat interval plus this long counts as dropped (`liveness.rs`); `None`: beats are
    /// not watched, only `stream_idle_timeout_ms` holds.
    pub heartbeat_grace_ms: Option<u64>,
    /// Opening a session attaches to a turn the server is running (SPEC §12): the history's
    /// `activeTurn`, else one ask of the stream route. Off: only `resume_stream` does.
    pub attach: bool,
    /// Sessions asked per page of the session list (`limit`).
    pub session_page_size: u32,
    /// Keys merged into every chat and follow-up POST body after the store's own (the
    /// `body` option; a send's own `body` goes over it).
    pub body: serde_json::Map<String, Value>,
    /// AI SDK mode: `PUT` the history after each turn (off for a server that keeps none, as
    /// a plain `useChat` route handler).
    pub persist: bool,
    /// Requests and statuses as the `ai` package's `Chat` makes them: chat POSTs name a
    /// message (`messageId`) only where its transport does (an edit, a named regenerate, a
    /// continuation; not a submit's new user message), a regenerate answers in a new message,
    /// a resume is `submitted` until its first chunk that writes, and a refused resume is an
    /// error.
    pub ai_sdk_requests: bool,
    /// The host has a prepare hook: chat requests carry the body keys it sees.
    pub prepare_hook: bool,
    /// Speak the pi-native protocol (SPEC §14) with this agent type, instead of the routes.
    #[cfg(feature = "pi")]
    pub pi_native: Option<String>,
}

/// The built-in `sendAutomaticallyWhen` predicates of the `ai` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoSend {
    /// No automatic send (`useChat`'s default).
    #[default]
    Never,
    /// `lastAssistantMessageIsCompleteWithToolCalls`: every client tool call of the last step
    /// has its output (or error).
    ToolCallsComplete,
    /// `lastAssistantMessageIsCompleteWithApprovalResponses`: every approval asked in the last
    /// step has an answer.
    ApprovalsAnswered,
    /// The host's own predicate: the store asks it ([`Output::AskAutoSend`]) where `useChat`
    /// would, and is told its answer ([`ChatStore::handle_auto_send`]).
    Host,
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
            AutoSend::Never | AutoSend::Host => false,
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
    /// The defaults for `session_id`: default routes and limits, capabilities fetched, history
    /// hydrated, no automatic send.
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
            heartbeat_grace_ms: Some(5_000),
            attach: true,
            session_page_size: 20,
            body: serde_json::Map::new(),
            persist: true,
            ai_sdk_requests: false,
            prepare_hook: false,
            #[cfg(feature = "pi")]
            pi_native: None,
        }
    }
}
