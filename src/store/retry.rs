//! Retry after a failed turn: one action for every mode, what asking again means decided here
//! by who owns the history and how the turn failed.

use super::*;

impl TurnMut<'_> {
    /// Retry after a failed turn (assistant-ui's Reload on the error), one action for every
    /// mode, decided here: where the client owns the history (AI SDK mode) the failed turn is
    /// asked again (`regenerate`); where the server owns it, asking again could run the message
    /// twice, so the store looks for what the server has instead: over the SSE routes a lost
    /// connection (`Network`, `StreamStalled`) attaches to a turn the server may still run
    /// (`resume_stream`, a 204 reloads the history), while a turn the server's stream ended
    /// with its error (it ran the message and failed) sends the message's text and files again
    /// as a new message; over pi-native the link reconnects by itself and a prompt given up
    /// unanswered is sent again under its own nonce. Returns false (nothing done) unless
    /// [`SessionView::can_retry`].
    pub fn retry(&mut self, now_ms: u64) -> bool {
        if !self.store.session().can_retry() {
            return false;
        }
        if !self.store.session.pi_owns_history() {
            return self.store.use_chat().regenerate(None, now_ms);
        }
        let connection_lost = self
            .store
            .session
            .error
            .as_ref()
            .is_some_and(|e| matches!(e.kind, ErrorKind::Network | ErrorKind::StreamStalled));
        self.clear_error();
        #[cfg(feature = "pi")]
        if self.store.opts.native() {
            self.store.use_chat().regenerate(None, now_ms);
            return true;
        }
        if connection_lost {
            return self.resume_stream(now_ms);
        }
        // The server's stream ended the turn with its error (it ran the message, and failed):
        // the message goes again, as a new one, as the user would type it again.
        let last_user = (self.store.session.conversation.history().messages())
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| {
                let files = m.parts.iter().filter_map(FileAttachment::of_part).collect();
                (m.text(), files)
            });
        match last_user {
            Some((text, files)) => {
                let options = SendOptions::default();
                self.store.start_turn(text, files, options, now_ms);
                true
            }
            None => self.resume_stream(now_ms),
        }
    }
}
