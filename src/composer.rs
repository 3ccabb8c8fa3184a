//! The busy-send policy of the composer (SPEC §5), as a pure function.
//!
//! `canSend = hasContent && (!busy || nativeFollowUp)`. A refused submit is a no-op that
//! says why; the draft stays exactly as it was.

use serde::Serialize;

use crate::protocol::Capabilities;

/// The chat's status, as `useChat` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ready,
    Submitted,
    Streaming,
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
#[serde(rename_all = "camelCase")]
pub enum Refusal {
    /// Nothing to send: no text (after trimming) and no files.
    Empty,
    /// Busy, and the runtime cannot take a follow-up.
    Busy,
    /// Busy, follow-ups are possible, but they cannot carry files.
    FilesWhileBusy,
}

/// The hint shown while a busy send is refused.
pub const BUSY_HINT: &str = "Wait for the current response to finish.";
/// The hint shown when files cannot ride along with a follow-up.
pub const FILES_WHILE_BUSY_HINT: &str = "Files can be sent when the current response has finished.";

/// What the composer may do right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComposerState {
    pub can_send: bool,
    pub reason: Option<Refusal>,
    pub hint: Option<&'static str>,
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
    match decide(status, caps, text, files) {
        Ok(_) => ComposerState {
            can_send: true,
            reason: None,
            hint: None,
        },
        Err(reason) => ComposerState {
            can_send: false,
            reason: Some(reason),
            // "Empty" needs no hint: the disabled button says it. The busy hints show even
            // with an empty draft, so the user knows before typing.
            hint: match (reason, status.is_busy() && !caps.native_follow_up) {
                (Refusal::Busy, _) | (Refusal::Empty, true) => Some(BUSY_HINT),
                (Refusal::FilesWhileBusy, _) => Some(FILES_WHILE_BUSY_HINT),
                (Refusal::Empty, false) => None,
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
    if text.trim().is_empty() && files == 0 {
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

    const PI: Capabilities = Capabilities {
        native_follow_up: true,
        ai_sdk_owns_history: false,
        follow_up_attachments: false,
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
    }
}
