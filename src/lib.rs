//! agent-chat-store: the client-side state of a browser chat UI for an agent server.
//!
//! The store talks to the server (through requests the host performs), reduces the streamed
//! chunks into one ordered message history, decides what the composer may do, and posts
//! queued follow-up messages in order, exactly once. The UI renders snapshots and calls
//! actions. The contract is `SPEC.md`; this crate is its sans-IO core; the
//! binding crate `crates/wasm` (`agent-chat-store-wasm`) is the thin shell that binds it to JS.
//!
//! # The run loop
//!
//! [`ChatStore`] never does IO and never reads a clock. The host drives it:
//!
//! 1. feed it one input: a user action (`submit`, `stop`, …) or an event of a request it asked
//!    for (`handle_response_head` / `_body` / `_end`, `handle_request_failed`) or the time
//!    (`handle_timeout`), always with the current `now_ms`;
//! 2. then **drain every output until empty**: `while let Some(out) = store.poll_output()`,
//!    in its order: `Output::Request` (start it), `Output::Abort` (abort it), `Output::Event`
//!    (hand it to `onData` / `onError`); `poll_request`, `poll_abort` and `poll_event` give one
//!    kind each, as the example below uses them;
//! 3. arm one timer for `poll_timeout()` and call `handle_timeout` when it fires.
//!
//! An input can produce several outputs, and draining may not be skipped: a follow-up POST
//! queued by `submit` is only made if someone polls for it.
//!
//! ```
//! use agent_chat_store::{ChatStore, Method, ResponseHead, SeededRandom, StoreOptions};
//!
//! let mut store = ChatStore::new(StoreOptions::new("s1"), Box::new(SeededRandom(1)), 0);
//! // Opening the session asks for its capabilities, its tools and its canonical history.
//! let mut asked = Vec::new();
//! while let Some(req) = store.outputs().poll_request() {
//!     asked.push((req.method, req.path.clone()));
//!     // The host performs each request; here the server answers 404 to all.
//!     store.handle_response_head(req.id, ResponseHead { status: 404, ..Default::default() }, 5);
//!     store.handle_response_end(req.id, 5);
//! }
//! assert_eq!(asked[0], (Method::Get, "/api/v1/agent/capabilities?sessionId=s1".to_string()));
//! assert_eq!(asked[1], (Method::Get, "/api/v1/agent/catalog?sessionId=s1".to_string()));
//! assert_eq!(asked[2], (Method::Get, "/api/v1/agent/chat/s1/messages".to_string()));
//! // 404s leave the defaults: a plain AI SDK runtime, no follow-ups, no tools, no history.
//! let session = store.session();
//! assert!(session.capabilities_loaded() && !store.capabilities().native_follow_up);
//! assert!(session.hydrated() && store.messages().is_empty() && session.tools().is_empty());
//!
//! store.composer_mut().set_draft("hello");
//! store.composer_mut().submit(10);
//! let chat = store.outputs().poll_request().expect("the chat POST");
//! assert_eq!(chat.path, "/api/v1/agent/chat");
//! store.handle_response_head(chat.id, ResponseHead { status: 200, ..Default::default() }, 20);
//! store.handle_response_body(chat.id, b"data: {\"type\":\"start\",\"messageId\":\"a1\"}\n\n\
//!     data: {\"type\":\"text-start\",\"id\":\"t\"}\n\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"Hi!\"}\n\n", 21);
//! assert_eq!(store.messages()[1].text(), "Hi!");
//! store.handle_response_end(chat.id, 30);
//! // The AI SDK owns history here, so the completed turn is stored on the server.
//! let put = store.outputs().poll_request().expect("the history PUT");
//! assert_eq!(put.method, Method::Put);
//! while store.outputs().poll_event().is_some() {}
//! assert_eq!(store.poll_timeout(), None);
//! ```
// The package build (scripts/build-pkg.sh, nightly features through RUSTC_BOOTSTRAP) compiles
// the per-event path for speed inside the size-optimised crate: `--cfg optimize_hot_path`.
#![cfg_attr(optimize_hot_path, feature(optimize_attribute))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The folders say what kind of thing lives in them; `docs/architecture.md` maps every rule of
// SPEC.md to the file that decides it.
// First: the other modules use its `declared!`.
#[cfg(feature = "ts")]
pub mod ts;

mod codec;
mod harness;
mod machines;
mod policy;
mod protocol;
mod reduce;
mod store;
mod util;

// The benchmark's scenario driver, for `benches/native.rs` and the wasm bench exports only.
#[cfg(feature = "_internal_bench")]
#[doc(hidden)]
pub use harness::bench_scenarios;

// The store and what crosses its boundary.
// The composer's busy-send policy (SPEC §5), as pure functions the store calls.
pub use machines::followup_queue::{
    FollowUpItem, ItemState, QueuedItemJson, RetryPolicy, RunNow, RunNowOutcome,
};
pub use policy::composer::{
    composer_state, decide, ComposerState, Refusal, SendRoute, Status, BUSY_HINT, EMPTY_HINT,
    FILES_WHILE_BUSY_HINT, PI_UNSUPPORTED_HINT,
};
// The exactly-once FIFO poster of SPEC §6, as a sans-IO machine of its own.
pub use machines::followup_queue::{
    FollowUpPost, FollowUpQueue, PostOutcome, QueueEffect, MAX_RENUMBERS,
};
pub use store::{
    history_for_storage, AutoSend, ChatStore, HeldAnswer, Limits, Method, Output, PendingCall,
    Request, RequestId, RequestKind, ResponseHead, Routes, StoreEvent, StoreOptions, SubmitKind,
    SubmitResult, ToolCall,
};
// The size bounds of a stream (SPEC §10): what `Limits` counts, and its hard ceilings.
pub use store::{
    message_chars, BranchItem, BranchRefusal, Branches, Loss, LossCode, MAX_HISTORY_CHARS,
    MAX_MESSAGE_CHARS,
};
// How often a pi-native prompt the server does not answer is sent before its turn fails.
pub use policy::tool_ui::{ToolCatalogEntry, ToolUiHints, ToolUiUpdate, ToolUiUpdates};
#[cfg(feature = "pi")]
pub use store::MAX_PROMPT_ATTEMPTS;

// The wire types.
pub use protocol::chunk::{
    chunk_from_value, parse_chunk, strict_ui_chunk, Chunk, ChunkError, DataChunk, PartKind,
    PiEvent, ToolChunk, UiChunk,
};
pub use protocol::json::{from_slice as parse_json, JsonError, MARKERS as LONE_SURROGATE_MARKERS};
pub use protocol::{
    Capabilities, ChatError, ErrorKind, FileAttachment, Part, Role, SendOptions, TextState,
    ToolPart, ToolState, UIMessage,
};

// The pieces the store is made of, for hosts with their own transport, tests and fuzzing:
// the SSE decoder, the reducers and the history they write, the replay helpers.
#[cfg(all(feature = "replay", feature = "pi"))]
pub use harness::replay::{replay_pi_native_events, replay_pi_stream, PiNativeReplay, PiReplay};
#[cfg(feature = "replay")]
pub use harness::replay::{replay_ui_message_stream, sse_data, ChunkInput, UiReplay};
pub use util::random::{RandomSource, SeededRandom};
// The pi-native transport of SPEC §14: its line splitter, its wire shapes, its session.
#[cfg(feature = "pi")]
pub use codec::ndjson::{LineError, NdjsonDecoder};
#[cfg(feature = "pi")]
pub use machines::native_link::{
    backoff_ms, commands as native_commands, Ask, LineLoss, LineLossKind, LinkNote, NativeLink,
    Read, MAX_LINE_BYTES, MAX_STRIKES, QUIET_MS, READ_DEADLINE_MS,
};
#[cfg(feature = "pi")]
pub use protocol::pi_native::{
    classify_events_error, message_from_native, parse_frame as parse_native_frame,
    parse_line as parse_native_line, parse_state as parse_native_state,
    read_frame_head as read_native_frame_head, EndStatus, EventKind, EventRef, Frame, FrameError,
    FrameHead, NativeEvent, QueueRow, RangeError, StateDoc, MAX_SEQ as MAX_NATIVE_SEQ,
};
#[cfg(feature = "pi")]
pub use reduce::pi_native::{Gate, NativeEffect, NativeGate, NativeSession, RunStatus};
// The session list of SPEC §11, as a sans-IO model of its own.
pub use codec::fast_chunk::{parse_delta, Delta};
pub use codec::partial_json::{ParseState, PartialJson, MAX_DEPTH as PARTIAL_JSON_MAX_DEPTH};
pub use codec::sse::{SseBatch, SseDecoder, SseError, SseEvent, SseItem, DEFAULT_MAX_EVENT_BYTES};
pub use machines::session_list::{
    derived_title, parse_item as parse_session_item, parse_page as parse_session_page,
    Change as SessionChange, Held as HeldSession, Page as SessionPage, PageAsk, PageOutcome,
    SessionItem, SessionList, Shown as SessionListPart, MAX_TITLE_CHARS, SESSION_WATCH_MS,
};
pub use reduce::conversation::{Conversation, Effect, TurnView};
#[cfg(feature = "pi")]
pub use reduce::pi::{PiEffect, PiReducer};
pub use reduce::ui_message::{UiEffect, UiMessageReducer, Violation};
pub use reduce::History;

// What the wasm shell (crates/wasm, the npm package's `JsChatStore`) needs beyond the API above:
// the JSON helpers every value crossing to JS goes through, and a message as JS is shown it.
// Not part of the library's API.
#[doc(hidden)]
pub use codec::scan::starts_with as shell_starts_with;
#[doc(hidden)]
pub use policy::tool_ui::export_message as shell_export_message;
#[doc(hidden)]
pub use protocol::json as shell_json;
