//! One session's pi-native state (SPEC §14), owned by the session: the link, the prompts
//! on their way, and the clear of the whole queue.

use super::*;
use crate::machines::native_link::NativeLink;

/// One session's pi-native state (SPEC §14): what is read of it and when, the prompts on
/// their way, and the take-backs a server that removes nothing by selectors needs.
#[derive(Debug)]
pub(in crate::store) struct NativeSession {
    /// What is read of the session and when: the state, the events, their backoff.
    pub(in crate::store) link: NativeLink,
    /// The read in flight (the state, or the events stream).
    pub(in crate::store) read: Option<RequestId>,
    /// The server has no such session (made by `newSession`, or its state read
    /// Answered 404): the first send creates one, and the session takes the server's id.
    pub(in crate::store) missing: bool,
    /// The nonce of a prompt stopped before its run started (its POST may still
    /// Have reached the server): if its run shows up, it is stopped.
    pub(in crate::store) stopped_prompt: Option<String>,
    /// Each prompt sent here whose run the events have not shown yet, with its
    /// Optimistic user message: that goes when the server's message shows, and it is kept
    /// Across a state read until then (a failed send's message stays, as it would over the
    /// First transport).
    pub(in crate::store) prompts: Vec<SentPrompt>,
    /// The receipt's `cursor` of the prompt on its way: a run that starts at or
    /// After it is that prompt's (the server admits a prompt only when no run is on).
    pub(in crate::store) prompt_cursor: Option<u64>,
    /// The prompt of the turn started here, until the server took it.
    pub(in crate::store) prompt: Option<PromptOut>,
    /// A prompt given up while its outcome is unknown (never answered, or refused
    /// As busy while the server says idle), with its nonce: `regenerate()` sends it again
    /// Under that same `requestId`, so it runs once however often it is tried.
    pub(in crate::store) unsent_prompt: Option<(String, PromptOut)>,
    /// Prompts refused as busy (409) in a row with no run showing since.
    pub(in crate::store) busy_refusals: u32,
    /// Whether the server removes a follow-up named by its selectors.
    pub(in crate::store) selective_clear: SelectiveClear,
    /// The clear of the whole queue on its way or waiting for its events.
    pub(in crate::store) clear_all: Option<ClearAll>,
    /// Run Now's interrupt on its way, until the run it starts shows.
    pub(in crate::store) interrupt: Option<super::interrupt::Interrupt>,
    /// The events stream's heartbeats, for the watchdog (`liveness.rs`).
    pub(in crate::store) beats: crate::store::liveness::Beats,
}

impl NativeSession {
    pub(in crate::store) fn new(max_event_bytes: usize) -> Self {
        NativeSession {
            link: NativeLink::with_max_line_bytes(max_event_bytes),
            read: None,
            missing: false,
            stopped_prompt: None,
            prompts: Vec::new(),
            prompt_cursor: None,
            prompt: None,
            unsent_prompt: None,
            busy_refusals: 0,
            selective_clear: Default::default(),
            clear_all: None,
            interrupt: None,
            beats: Default::default(),
        }
    }
}
