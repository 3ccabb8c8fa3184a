//! `ChatStore`: the one state machine that owns a chat session's client-side state.
//!
//! It holds the capabilities, the status machine, the history (with the reducer that is its
//! authority), the composer, the per-session follow-up queues and every request in flight.
//! It never does IO and never reads a clock: the host feeds it inputs and drains its outputs.
//!
//! This file is the router: the type, the outputs and the small actions. The rest lives by
//! concern, each file an `impl ChatStore` block over the state it owns:
//! - `handles.rs`: the API's sub-handles; `getters.rs`: what a snapshot shows;
//! - `options.rs`: routes, limits, the auto-send rule;
//! - `outbox.rs`: requests in flight, their generation, aborts; `wire.rs`: paths and bodies;
//! - `inputs.rs`: the host's inputs (response heads, bodies, ends, failures, timeouts);
//! - `session.rs`: one session's state, and opening, parking and switching sessions;
//! - `reduce.rs`: the turn's stream through the conversation's authority gate
//!   (`src/reduce/conversation.rs`, which owns every change of the history), and its effects;
//! - `turn.rs`: a turn's start, end, resume, stop and failure (its state and endings in
//!   `turn/machine.rs`); `followup_requests.rs`: the follow-up queue's POSTs and
//!   answers, removing and retrying its items (SPEC §6); `takeback.rs`: taking follow-ups back;
//! - `answers.rs`: the answers to calls that wait for the user (SPEC §13, pi mode);
//! - `actions.rs`: the `useChat` actions of AI SDK mode;
//! - `native/`: the pi-native transport (SPEC §14): the link and its effects (`mod.rs`),
//!   prompts (`prompt.rs`), the server's queue (`queue.rs`, its clear of the whole queue in
//!   `queue/clear_all.rs`), its per-session state (`state.rs`).
//!
//! Methods by kind (the quinn-proto / str0m shape: what is not the run loop goes through a
//! handle on the sub-state it reads or changes, `handles.rs`):
//! - **A. getters**: [`ChatStore::status`], [`ChatStore::messages`],
//!   [`ChatStore::capabilities`], [`ChatStore::revision`]; the open session's state and the
//!   policy a UI shows through [`ChatStore::session`] ([`SessionView`]: id, error, history,
//!   queued, pending calls, `can_edit`, `can_regenerate`, `stopped`, …), the
//!   composer through [`ChatStore::composer`], the session list through [`ChatStore::sessions`];
//! - **B. user actions**: [`ChatStore::send`], [`ChatStore::send_with`],
//!   [`ChatStore::switch_session`], [`ChatStore::dispose`]; the draft and its `submit` through
//!   [`ChatStore::composer_mut`], the turn (stop, resume, clear its error) through
//!   [`ChatStore::turn_mut`], the waiting bubbles through [`ChatStore::follow_ups_mut`], the
//!   session list through [`ChatStore::sessions_mut`], and regenerate, edit, tool outputs and
//!   approvals through [`ChatStore::use_chat`];
//! - **C. inputs**: [`ChatStore::handle_response_head`], [`ChatStore::handle_response_body`],
//!   [`ChatStore::handle_response_end`], [`ChatStore::handle_request_failed`],
//!   [`ChatStore::handle_timeout`], [`ChatStore::handle_chunk`], [`ChatStore::handle_auto_send`];
//! - **D. outputs**: [`ChatStore::poll_output`] and [`ChatStore::poll_timeout`]; one kind at a
//!   time through [`ChatStore::outputs`].
//!
//! After every action or input, drain the outputs until they are empty (see the crate docs).

mod actions;
mod answers;
mod branches;
mod followup_requests;
mod getters;
mod growth;
mod handles;
mod inputs;
mod liveness;
mod losses;
#[cfg(feature = "pi")]
mod native;
mod options;
mod outbox;
mod reduce;
mod retry;
mod session;
mod session_list;
mod takeback;
mod transport;
mod turn;
mod wire;

use answers::Answers;
pub use answers::{HeldAnswer, PendingCall};
pub use branches::{BranchItem, BranchRefusal, Branches};
pub use growth::{message_chars, MAX_HISTORY_CHARS, MAX_MESSAGE_CHARS};
pub use handles::{
    Composer, ComposerMut, FollowUpsMut, Outputs, SessionView, Sessions, SessionsMut, TurnMut,
    UseChat,
};
pub use losses::{Loss, LossCode};
#[cfg(feature = "pi")]
pub use native::MAX_PROMPT_ATTEMPTS;

use std::collections::VecDeque;

use crate::util::hash::VecMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::codec::sse::{SseBatch, SseDecoder};
use crate::machines::followup_queue::{
    FollowUpItem, FollowUpQueue, PostOutcome, QueueEffect, RetryPolicy, RunNow, RunNowOutcome,
};
use crate::machines::session_list::SessionList;
use crate::policy::composer::{self, ComposerState, Refusal, SendRoute, Status};
use crate::policy::tool_ui::{self, ToolCatalogEntry, ToolUiUpdates};
use crate::protocol::chunk::{parse_chunk, Chunk};
use crate::protocol::json::to_string;
use crate::protocol::request::merge_body;
use crate::protocol::{
    Capabilities, ChatError, ErrorKind, FileAttachment, Part, Role, SendOptions, UIMessage,
};
use crate::reduce::conversation::{Conversation, Effect};
use crate::reduce::history::{HistoryAnswer, HistoryBodyError, HistoryParser, RunningTurn};
pub use crate::reduce::ui_message::ToolCall;
use crate::util::random::{uuid_v4, RandomSource};

use actions::AutoSendState;
pub use options::{AutoSend, Limits, Routes, StoreOptions};
use outbox::Outbox;
pub use outbox::{Method, Request, RequestId, RequestKind, ResponseHead};
use session::Session;
use takeback::{DeleteAnswer, TakeBacks};
use turn::{Ending, Phase, Turn};
pub use wire::history_for_storage;
use wire::{encode, looks_like_sse, refusal, replace_all, HistoryJson, SNIFF_BYTES};

/// One output of [`ChatStore::poll_output`].
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Abort this request (its late answer changes nothing anyway).
    Abort(RequestId),
    /// Make this request and feed its answer back with the `handle_response_*` inputs.
    Request(Request),
    /// Hand this to the host's callbacks (`onData`, `onError`, the finish event).
    Event(StoreEvent),
    /// Ask the host's `sendAutomaticallyWhen` predicate about the current messages, and tell
    /// [`ChatStore::handle_auto_send`] its answer with this token (whenever it comes).
    AskAutoSend {
        /// The question's token: only the answer to the newest one counts.
        token: u64,
    },
}

/// Something for the host, besides the snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StoreEvent {
    /// A `data-*` chunk for `onData` (transient or not, pi or not).
    Data {
        /// The chunk's name without `data-` (`status` for `data-status`).
        name: String,
        /// The chunk's `id`, if it had one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The chunk's `data`.
        data: Value,
        /// `transient`: the chunk is not stored in the history.
        transient: bool,
    },
    /// An error for `onError` (also visible in the snapshot when it concerns the turn).
    Error {
        /// The normalised error: its kind, with the server's raw code and message.
        error: ChatError,
    },
    /// Something odd but survivable in what the server sent.
    Diagnostic {
        /// What was odd, in words for a log.
        message: String,
    },
    /// The open session changed (`switchSession`, `newSession`, deleting the open one): for
    /// `onSessionChange`, so a host can keep the id in its URL.
    SessionChange {
        /// The session now open.
        session_id: String,
        /// The id the same session had until the server named it (pi-native creates the
        /// sessions `newSession` makes): not a switch, so a host replaces its URL entry.
        renamed_from: Option<String>,
    },
    /// A tool call for the client to run (`onToolCall`): answer with `add_tool_output`.
    ToolCall {
        /// The call.
        #[serde(flatten)]
        call: ToolCall,
    },
    /// A turn this client followed ended, however it ended (`useChat`'s `onFinish`).
    Finish {
        /// The `finishReason` of the stream's `finish` chunk, if it gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        /// The assistant message the turn answered into (the history's last message, when it
        /// is an assistant's); `None` when nothing answered.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// The user stopped it.
        is_abort: bool,
        /// Its stream was lost and could not be resumed (a network error).
        is_disconnect: bool,
        /// It failed: an `error` chunk, or a request of it failed.
        is_error: bool,
    },
}

/// What `submit` / `send` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SubmitKind {
    /// Sent as a new turn (a chat POST).
    Sent,
    /// Queued as a follow-up of the running turn: a waiting bubble in `queued`.
    Queued,
    /// Refused: nothing changed, and `reason` says why.
    Blocked,
}

/// What [`ComposerMut::submit`] / [`ChatStore::send`] did with the message, and why not when
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SubmitResult {
    /// What happened to the message.
    #[cfg_attr(feature = "ts", ts(inline))]
    pub kind: SubmitKind,
    /// Why it was refused (`empty`, `busy`, `filesWhileBusy`); only when `Blocked`.
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

/// The composer's draft: what the user is typing, and the files with it.
#[derive(Debug, Default)]
struct Draft {
    text: String,
    files: Vec<FileAttachment>,
}

/// Counters a snapshot's readers cache by.
#[derive(Debug)]
struct Revisions {
    /// Changes whenever anything a snapshot shows changes.
    revision: u64,
    /// The largest message version any session's history has used, so versions never repeat
    /// across sessions (the shell caches exported messages by id and version).
    version_floor: u64,
    /// Bumped whenever the resolved `ui` of a tool part may change without the part changing
    /// (a `data-tool-ui`, a new catalog, another session).
    tool_ui: u64,
}

impl Revisions {
    /// Something a snapshot shows changed.
    fn touch(&mut self) {
        self.revision += 1;
    }
}

/// Buffers reused across chunks: a new `Vec` per text delta cost its drop call on the hot
/// path.
#[derive(Debug, Default)]
struct Scratch {
    sse: SseBatch,
    /// The conversation's effects of one chunk.
    effects: Vec<Effect>,
}

/// The chat store. See the module docs for the shape of its API.
pub struct ChatStore {
    opts: StoreOptions,
    rng: Box<dyn RandomSource>,
    session: Session,
    parked: VecMap<String, Session>,
    /// The session list (SPEC §11).
    sessions: SessionList,
    /// The requests in flight and the outputs not drained yet (`outbox.rs`).
    outbox: Outbox,
    /// The composer's draft.
    draft: Draft,
    /// Counters a snapshot's readers cache by.
    revisions: Revisions,
    /// The host's `sendAutomaticallyWhen` questions (`actions.rs`).
    auto_send: AutoSendState,
    /// Buffers reused across chunks (the hot path).
    scratch: Scratch,
}

impl std::fmt::Debug for ChatStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatStore")
            .field("session", &self.session.id)
            .field("status", &self.session.turn.phase)
            .field("generation", &self.outbox.generation)
            .finish_non_exhaustive()
    }
}

impl ChatStore {
    /// Creates a store and asks for what opening its session needs (capabilities, history).
    /// Drain the outputs afterwards.
    #[cfg_attr(not(feature = "pi"), allow(unused_mut))]
    pub fn new(mut opts: StoreOptions, rng: Box<dyn RandomSource>, now_ms: u64) -> Self {
        #[cfg(feature = "pi")]
        if opts.pi_native.is_some() {
            // Fixed by the protocol: native follow-ups (text only), server-owned history, read
            // through `/state` (no capabilities, catalog or messages route), and a prompt's
            // `content` is required (files ride along with text, never alone).
            opts.capabilities = Some(Capabilities {
                native_follow_up: true,
                ai_sdk_owns_history: false,
                follow_up_attachments: false,
                text_required: true,
            });
            opts.hydrate = false;
            opts.attach = false;
        }
        let session = Session::new(
            opts.session_id.clone(),
            opts.capabilities,
            &opts.limits,
            opts.retry,
        );
        let sessions = SessionList::new(&session.id);
        let mut store = ChatStore {
            opts,
            rng,
            session,
            parked: VecMap::default(),
            sessions,
            outbox: Outbox::new(),
            draft: Draft::default(),
            revisions: Revisions {
                revision: 1,
                version_floor: 0,
                tool_ui: 0,
            },
            auto_send: AutoSendState::default(),
            scratch: Scratch::default(),
        };
        store.open_session(now_ms);
        store
    }

    // ----- outputs -------------------------------------------------------------------------

    /// The next output, in the order a host acts on them: requests, then aborts (so a request
    /// made and aborted by the same input is started and then aborted, never left running),
    /// then events, then a question for the host's `sendAutomaticallyWhen` (asked about what
    /// the events told). `None` once drained; then arm one timer for
    /// [`poll_timeout`](Self::poll_timeout). The one drain every host writes:
    /// `while let Some(out) = store.poll_output() { … }` after every input.
    pub fn poll_output(&mut self) -> Option<Output> {
        if let Some(request) = self.outbox.requests.pop_front() {
            return Some(Output::Request(request));
        }
        if let Some(id) = self.outbox.aborts.pop_front() {
            return Some(Output::Abort(id));
        }
        if let Some(e) = self.outbox.events.pop_front() {
            return Some(Output::Event(e));
        }
        let token = self.auto_send.tokens;
        std::mem::take(&mut self.auto_send.ask).then_some(Output::AskAutoSend { token })
    }

    /// When to call [`ChatStore::handle_timeout`] next (absolute, in the host's ms clock).
    pub fn poll_timeout(&self) -> Option<u64> {
        let deadlines = self.outbox.pending.values().filter_map(|p| p.deadline);
        if self.outbox.disposed {
            // Nothing is sent after `dispose()` (a retry's due time would wake a driver again
            // and again): only the requests still out can time out.
            return deadlines.min();
        }
        let queue = if self.session.may_post_followups() {
            self.session.queue.poll_timeout()
        } else {
            None
        };
        let deadlines = deadlines
            .chain(queue)
            .chain(self.session.turn.phase.resume_at())
            .chain(self.session.take_backs.due_at())
            .chain(self.session.answers.due_at())
            .chain(self.sessions.watch_at);
        #[cfg(feature = "pi")]
        let deadlines = deadlines
            .chain(self.session.native.link.poll_timeout())
            .chain(
                self.session
                    .native
                    .prompt
                    .as_ref()
                    .and_then(|p| p.retry_at()),
            );
        deadlines.min()
    }

    // ----- user actions --------------------------------------------------------------------

    /// Sends `text` (and files) as [`ComposerMut::submit`] would, leaving the draft alone.
    pub fn send(&mut self, text: &str, files: Vec<FileAttachment>, now_ms: u64) -> SubmitResult {
        self.send_with(text, files, SendOptions::default(), now_ms)
    }

    /// [`send`](Self::send) with what this send adds: body keys, headers, request metadata,
    /// the user message's id and metadata (`useChat`'s `sendMessage(message, options)`). A
    /// follow-up keeps them for its POST, and for the turn it may become.
    pub fn send_with(
        &mut self,
        text: &str,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) -> SubmitResult {
        if self.outbox.disposed {
            return SubmitResult::blocked(Refusal::Busy);
        }
        match composer::decide(self.status(), &self.capabilities(), text, files.len()) {
            Err(reason) => SubmitResult::blocked(reason),
            // Waiting bubbles that go out as the next turn on their own (the turn's end waits
            // for a follow-up POST's answer, or a DELETE's): a new message queues behind them,
            // in the user's order.
            Ok(SendRoute::Turn)
                if self.session.turn.send_queue_when_idle && self.session.queue.has_next() =>
            {
                self.follow_ups_mut().enqueue(text, files, options, now_ms);
                self.send_next_queued(now_ms);
                SubmitResult::done(SubmitKind::Queued)
            }
            Ok(SendRoute::Turn) => {
                self.start_turn(text.to_string(), files, options, now_ms);
                SubmitResult::done(SubmitKind::Sent)
            }
            Ok(SendRoute::FollowUp) => {
                self.follow_ups_mut().enqueue(text, files, options, now_ms);
                SubmitResult::done(SubmitKind::Queued)
            }
        }
    }

    /// Ends the store: every request is aborted, nothing more is asked for, and late answers
    /// are ignored.
    pub fn dispose(&mut self) {
        if self.outbox.disposed {
            return;
        }
        self.outbox.bump_generation();
        self.session.requests_dropped();
        self.outbox.disposed = true;
        // The list's requests outlive a switch, not the store.
        let list: Vec<RequestId> = (self.outbox.pending.iter())
            .filter(|(_, p)| p.kind.of_session_list())
            .map(|(id, _)| *id)
            .collect();
        for id in list {
            self.outbox.abort(id);
        }
        let s = &mut self.session;
        // The store follows no turn any more: it is not ended (the server's may go on), only
        // let go of.
        if !matches!(s.turn.phase, Phase::Idle { .. }) {
            s.turn.phase = Phase::IDLE;
        }
        s.turn.turn_id = None;
        self.outbox.requests.clear();
        self.revisions.touch();
    }

    // ----- internals -----------------------------------------------------------------------
}

impl Outputs<'_> {
    /// The next request to make (only the requests; [`ChatStore::poll_output`] gives
    /// every output in order).
    pub fn poll_request(&mut self) -> Option<Request> {
        self.store.outbox.requests.pop_front()
    }

    /// The next in-flight request to abort (its late answer is ignored anyway).
    pub fn poll_abort(&mut self) -> Option<RequestId> {
        self.store.outbox.aborts.pop_front()
    }

    /// The next event for the host (`onData`, `onError`, diagnostics).
    pub fn poll_event(&mut self) -> Option<StoreEvent> {
        self.store.outbox.events.pop_front()
    }
}

impl ComposerMut<'_> {
    /// Sends the draft: a new turn when ready, a queued follow-up when busy and the runtime
    /// takes them; otherwise a no-op that says why, with the draft untouched. The draft is
    /// cleared only when the message was accepted.
    pub fn submit(&mut self, now_ms: u64) -> SubmitResult {
        let text = self.store.draft.text.clone();
        let files = self.store.draft.files.clone();
        let result = self.store.send(&text, files, now_ms);
        if result.kind != SubmitKind::Blocked {
            self.store.draft.text.clear();
            self.store.draft.files.clear();
            self.store.revisions.touch();
        }
        result
    }

    /// Sets the draft text (`setDraft`).
    pub fn set_draft(&mut self, text: &str) {
        if self.store.draft.text != text {
            self.store.draft.text = text.to_string();
            self.store.revisions.touch();
        }
    }

    /// Sets the files attached to the draft (`setDraftFiles`).
    pub fn set_files(&mut self, files: Vec<FileAttachment>) {
        if self.store.draft.files != files {
            self.store.draft.files = files;
            self.store.revisions.touch();
        }
    }
}

impl TurnMut<'_> {
    /// Attaches to a turn the server is running, as `useChat`'s `resumeStream` (SPEC §12): the
    /// stream route is asked from the turn's start (`cursor=-1`); a 204 means nothing runs.
    /// What opening a session does by itself unless the `attach` option is off. Returns false
    /// when this client already follows a turn (or the store is disposed).
    pub fn resume_stream(&mut self, now_ms: u64) -> bool {
        if self.store.outbox.disposed
            || !matches!(self.store.session.turn.phase, Phase::Idle { .. })
        {
            return false;
        }
        let s = &mut *self.store;
        (s.session).probe(&s.opts, &mut s.outbox, now_ms);
        true
    }

    /// Clears the error of a failed turn, as `useChat`'s `clearError`: status `error` becomes
    /// `ready` and `error` goes; in any other status it does nothing. Nothing else changes (the
    /// messages stay as they are).
    pub fn clear_error(&mut self) {
        // Only a failed turn's error: while a turn runs, its error decides how it ends.
        let s = &mut self.store.session;
        if !matches!(s.turn.phase, Phase::Idle { failed: true }) {
            return;
        }
        s.turn.phase = Phase::IDLE;
        s.error = None;
        self.store.revisions.touch();
    }
}
