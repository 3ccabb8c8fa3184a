//! The busy-send policy of the composer (SPEC §5), as a pure function.
//!
//! `canSend = hasContent && (!busy || nativeFollowUp)`. A refused submit is a no-op that
//! says why; the draft stays exactly as it was.

use serde::Serialize;

use crate::protocol::Capabilities;

/// The chat's status, as `useChat` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChatStatus"))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// `ready`: no turn is running; a send starts one.
    Ready,
    /// `submitted`: the turn's chat POST is out and nothing of its answer is shown yet (busy).
    Submitted,
    /// `streaming`: the turn's stream is being read, or a resume of it is due (busy).
    Streaming,
    /// `error`: the last turn ended in an error; a send starts a new one.
    Error,
}

impl Status {
    /// A turn is on its way: a new message cannot start another turn.
    pub fn is_busy(self) -> bool {
        matches!(self, Status::Submitted | Status::Streaming)
    }
}

/// Why a submit is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SendRefusal"))]
#[serde(rename_all = "camelCase")]
pub enum Refusal {
    /// Nothing to send: no text (after trimming) and no files, or files alone where the
    /// server needs text ([`Capabilities::text_required`]).
    Empty,
    /// Busy, and the runtime cannot take a follow-up.
    Busy,
    /// Busy, follow-ups are possible, but they cannot carry files.
    FilesWhileBusy,
    /// The server keeps the history as a pi projection (`aiSdkOwnsHistory: false`) and this
    /// build has no pi reducer (built without the `pi` feature): nothing it sent could be
    /// shown as the server keeps it.
    PiUnsupported,
}

/// The hint shown while a busy send is refused.
pub const BUSY_HINT: &str = "Wait for the current response to finish.";
/// The hint shown when files cannot ride along with a follow-up.
pub const FILES_WHILE_BUSY_HINT: &str = "Files can be sent when the current response has finished.";
/// The text of a refused send of nothing.
pub const EMPTY_HINT: &str = "Nothing to send.";
/// The hint shown when this build cannot speak to the server at all.
pub const PI_UNSUPPORTED_HINT: &str =
    "This server needs the full build of agent-chat-store (it keeps a pi history).";

impl Refusal {
    /// The words for a refused send, the same wherever a UI shows one.
    pub fn hint(self) -> &'static str {
        match self {
            Refusal::Empty => EMPTY_HINT,
            Refusal::Busy => BUSY_HINT,
            Refusal::FilesWhileBusy => FILES_WHILE_BUSY_HINT,
            Refusal::PiUnsupported => PI_UNSUPPORTED_HINT,
        }
    }
}

/// What the composer may do right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ComposerState {
    /// `canSend`: the draft can be sent now (`hasContent && (!busy || nativeFollowUp)`).
    pub can_send: bool,
    /// `reason`: why a submit of the draft would be refused; `None` when `can_send`.
    pub reason: Option<Refusal>,
    /// `hint`: the words the composer shows, e.g. [`BUSY_HINT`] while busy without follow-ups.
    pub hint: Option<&'static str>,
    /// A send now queues a follow-up for the running turn (the UI may say "Queue").
    pub follow_up: bool,
    /// Whether a text-only message could be sent now, whatever the store's draft holds: for a
    /// composer that keeps its own draft (assistant-ui's).
    pub can_send_text: bool,
    /// The hint for such a composer: shown while a text send is refused.
    pub text_hint: Option<&'static str>,
}

/// What a send would do if it is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendRoute {
    /// Start a new turn with a chat POST.
    Turn,
    /// Queue a follow-up for the running turn.
    FollowUp,
}

/// Decides the composer's state from the chat status, the session's capabilities and the
/// draft. Pure: the store calls it for every snapshot and for every submit.
pub fn composer_state(
    status: Status,
    caps: &Capabilities,
    text: &str,
    files: usize,
) -> ComposerState {
    let text_route = decide(status, caps, "text", 0);
    let follow_up = text_route == Ok(SendRoute::FollowUp);
    let can_send_text = text_route.is_ok();
    let text_hint = text_route.err().map(Refusal::hint);
    match decide(status, caps, text, files) {
        Ok(_) => ComposerState {
            can_send: true,
            reason: None,
            hint: None,
            follow_up,
            can_send_text,
            text_hint,
        },
        Err(reason) => ComposerState {
            can_send: false,
            reason: Some(reason),
            follow_up,
            can_send_text,
            text_hint,
            // "Empty" needs no hint: the disabled button says it. The busy hints show even
            // with an empty draft, so the user knows before typing.
            hint: match (reason, status.is_busy() && !caps.native_follow_up) {
                (Refusal::Empty, true) => Some(BUSY_HINT),
                (Refusal::Empty, false) => None,
                (reason, _) => Some(reason.hint()),
            },
        },
    }
}

/// The route a send takes, or why it is refused.
pub fn decide(
    status: Status,
    caps: &Capabilities,
    text: &str,
    files: usize,
) -> Result<SendRoute, Refusal> {
    // Before anything else: a composer shows why it will never send, with or without a draft.
    if !cfg!(feature = "pi") && !caps.ai_sdk_owns_history {
        return Err(Refusal::PiUnsupported);
    }
    if text.trim().is_empty() && (files == 0 || caps.text_required) {
        return Err(Refusal::Empty);
    }
    if !status.is_busy() {
        return Ok(SendRoute::Turn);
    }
    if !caps.native_follow_up {
        return Err(Refusal::Busy);
    }
    if files > 0 && !caps.follow_up_attachments {
        return Err(Refusal::FilesWhileBusy);
    }
    Ok(SendRoute::FollowUp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "pi")]
    const PI: Capabilities = Capabilities {
        native_follow_up: true,
        ai_sdk_owns_history: false,
        follow_up_attachments: false,
        text_required: false,
    };

    #[test]
    fn ready_sends_a_turn_and_empty_is_refused() {
        let d = Capabilities::default();
        assert_eq!(decide(Status::Ready, &d, "hi", 0), Ok(SendRoute::Turn));
        assert_eq!(decide(Status::Error, &d, "hi", 0), Ok(SendRoute::Turn));
        assert_eq!(decide(Status::Ready, &d, "  \n", 0), Err(Refusal::Empty));
        assert_eq!(decide(Status::Ready, &d, "", 1), Ok(SendRoute::Turn));
        let s = composer_state(Status::Ready, &d, "", 0);
        assert!(!s.can_send);
        assert_eq!(s.hint, None);
    }

    #[test]
    fn busy_without_native_follow_up_is_refused_with_the_hint() {
        let d = Capabilities::default();
        for st in [Status::Submitted, Status::Streaming] {
            let s = composer_state(st, &d, "more", 0);
            assert!(!s.can_send);
            assert_eq!(s.reason, Some(Refusal::Busy));
            assert_eq!(s.hint, Some(BUSY_HINT));
            // The hint shows before anything is typed too.
            assert_eq!(composer_state(st, &d, "", 0).hint, Some(BUSY_HINT));
        }
    }

    #[test]
    #[cfg(feature = "pi")]
    fn busy_with_native_follow_up_queues_text_but_not_files() {
        assert_eq!(
            decide(Status::Streaming, &PI, "more", 0),
            Ok(SendRoute::FollowUp)
        );
        assert_eq!(
            decide(Status::Streaming, &PI, "more", 2),
            Err(Refusal::FilesWhileBusy)
        );
        let with_files = Capabilities {
            follow_up_attachments: true,
            ..PI
        };
        assert_eq!(
            decide(Status::Submitted, &with_files, "", 1),
            Ok(SendRoute::FollowUp)
        );
        let s = composer_state(Status::Streaming, &PI, "more", 0);
        assert!(s.can_send);
        assert_eq!(s.hint, None);
        assert!(s.follow_up);
    }

    #[test]
    fn files_alone_are_empty_where_the_server_needs_text() {
        let caps = Capabilities {
            text_required: true,
            ..Capabilities::default()
        };
        // pi-native's prompt requires its `content` (SPEC §14.1, §5): blank text with a file
        // is refused before it goes, as `empty`, the draft kept.
        assert_eq!(decide(Status::Ready, &caps, "  ", 1), Err(Refusal::Empty));
        assert_eq!(decide(Status::Ready, &caps, "look", 1), Ok(SendRoute::Turn));
        let d = Capabilities::default();
        assert_eq!(decide(Status::Ready, &d, "", 1), Ok(SendRoute::Turn));
    }

    #[test]
    #[cfg(feature = "pi")]
    fn a_composer_with_its_own_draft_gets_the_text_policy() {
        let d = Capabilities::default();
        // Idle: text goes, as a turn; the store's own empty draft does not matter.
        let s = composer_state(Status::Ready, &d, "", 0);
        assert!(!s.can_send && s.can_send_text && !s.follow_up && s.text_hint.is_none());
        // Busy without follow-ups: refused, with the busy hint.
        let s = composer_state(Status::Streaming, &d, "", 0);
        assert!(!s.can_send_text && !s.follow_up);
        assert_eq!(s.text_hint, Some(BUSY_HINT));
        // Busy with follow-ups: text is queued even while the store's draft holds files.
        let s = composer_state(Status::Submitted, &PI, "x", 1);
        assert_eq!(s.reason, Some(Refusal::FilesWhileBusy));
        assert_eq!(s.hint, Some(FILES_WHILE_BUSY_HINT));
        assert!(s.can_send_text && s.follow_up && s.text_hint.is_none());
    }

    #[test]
    fn every_refusal_has_its_words() {
        assert_eq!(Refusal::Empty.hint(), EMPTY_HINT);
        assert_eq!(Refusal::Busy.hint(), BUSY_HINT);
        assert_eq!(Refusal::FilesWhileBusy.hint(), FILES_WHILE_BUSY_HINT);
        assert_eq!(Refusal::PiUnsupported.hint(), PI_UNSUPPORTED_HINT);
    }

    #[test]
    #[cfg(not(feature = "pi"))]
    fn without_pi_a_server_that_owns_history_gets_nothing_sent() {
        let caps = Capabilities {
            ai_sdk_owns_history: false,
            ..Capabilities::default()
        };
        for st in [Status::Ready, Status::Streaming] {
            let s = composer_state(st, &caps, "", 0);
            assert_eq!(s.reason, Some(Refusal::PiUnsupported));
            assert_eq!(s.hint, Some(PI_UNSUPPORTED_HINT));
            assert!(!s.can_send_text);
        }
    }
}
