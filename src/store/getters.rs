//! What the store shows: the open session's state, its messages and their versions, the
//! composer's policy, and the questions a UI asks of it (can it regenerate, edit, does a call
//! wait for the user). Read-only; the snapshot of the wasm shell is built from these.

use super::*;

impl ChatStore {
    /// The open session's id (`sessionId`).
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// What the store could not show of this session, newest last (at most 32): the
    /// snapshot's `losses`.
    pub fn losses(&self) -> &[Loss] {
        &self.session.history.losses
    }

    /// The chat's `status` (SPEC §5): busy while `submitted` or `streaming`.
    pub fn status(&self) -> Status {
        self.session.turn.phase.status()
    }

    /// The `error` of the open session's last turn, while it stands.
    pub fn error(&self) -> Option<&ChatError> {
        self.session.error.as_ref()
    }

    /// The session's `capabilities` (SPEC §4): as resolved, with `aiSdkOwnsHistory: false` once
    /// a `data-pi-mode` chunk was seen.
    pub fn capabilities(&self) -> Capabilities {
        let mut c = self.session.runtime.caps;
        if self.session.conversation.pi_mode() {
            c.ai_sdk_owns_history = false;
        }
        c
    }

    /// `capabilitiesLoaded`: given statically, or the capabilities route has answered (or
    /// failed: then the defaults). Until then the defaults apply.
    pub fn capabilities_loaded(&self) -> bool {
        self.session.runtime.loaded
    }

    /// The session runtime's tool catalog (empty when the server has none).
    pub fn tools(&self) -> &[ToolCatalogEntry] {
        &self.session.runtime.tools
    }

    /// Message `i` as the UI gets it: its JSON with the resolved `ui` on every tool part.
    pub fn export_message(&self, i: usize) -> Value {
        let s = &self.session;
        tool_ui::export_message(
            &s.conversation.history().messages()[i],
            &s.runtime.tool_ui,
            &s.runtime.tools,
        )
    }

    /// Part `k` of message `i` as the UI gets it, shown as `shown` (the part itself, or it with
    /// placeholders: [`crate::protocol::ToolPart::without_input`]): its JSON, with the resolved `ui` of the
    /// part on a tool part that has one (`export_message(i)["parts"][k]`, without exporting the other
    /// parts). The `ui` does not depend on the fields a placeholder stands for.
    pub fn export_part_as(&self, i: usize, k: usize, shown: &Part) -> Value {
        let s = &self.session;
        let part = &s.conversation.history().messages()[i].parts[k];
        let mut v = serde_json::to_value(shown).unwrap_or(Value::Null);
        if let (Part::Tool(t), Some(obj)) = (part, v.as_object_mut()) {
            tool_ui::put_ui(obj, t, &s.runtime.tool_ui, &s.runtime.tools);
        }
        v
    }

    /// Changes whenever the resolved `ui` of a tool part may change while the part itself
    /// does not: an unchanged tool part exported at the same `tool_ui_version` exports the same.
    pub fn tool_ui_version(&self) -> u64 {
        self.revisions.tool_ui
    }

    /// The one canonical list: display and action eligibility both read it.
    pub fn messages(&self) -> &[UIMessage] {
        self.session.conversation.history().messages()
    }

    /// The version of message `i`: it changes exactly when that message changes.
    pub fn message_version(&self, i: usize) -> u64 {
        self.session.conversation.history().version(i)
    }

    /// The version of the last change of message `i` other than appends to its texts: while
    /// it is not newer than a version seen, its texts only grew since.
    pub fn message_reshaped(&self, i: usize) -> u64 {
        self.session.conversation.history().reshaped(i)
    }

    /// Every message's version, by position ([`ChatStore::message_version`] of each).
    pub fn message_versions(&self) -> &[u64] {
        self.session.conversation.history().versions()
    }

    /// The current session's history revision: with
    /// [`messages_changed_from`](Self::messages_changed_from), a consumer that keeps the versions it saw learns where to
    /// compare them from. A session switch starts another history: compare it all.
    pub fn messages_revision(&self) -> u64 {
        self.session.conversation.history().revision()
    }

    /// The lowest position whose message may have changed since the current session's history
    /// was at revision `since` ([`crate::History::changed_from`]).
    pub fn messages_changed_from(&self, since: u64) -> usize {
        self.session.conversation.history().changed_from(since)
    }

    /// The waiting bubbles, shown after all messages.
    pub fn queued(&self) -> Vec<&FollowUpItem> {
        self.session.queue.view()
    }

    /// The composer's draft text (`composer.draft`).
    pub fn draft(&self) -> &str {
        &self.draft.text
    }

    /// The files attached to the draft (`composer.files`).
    pub fn draft_files(&self) -> &[FileAttachment] {
        &self.draft.files
    }

    /// What the composer may do now (`composer`, SPEC §5), from the status, the capabilities
    /// and the draft.
    pub fn composer(&self) -> ComposerState {
        composer::composer_state(
            self.status(),
            &self.capabilities(),
            &self.draft.text,
            self.draft.files.len(),
        )
    }

    /// The server's id of the running turn (`turnId`, from `x-turn-id` or `data-turn-start`),
    /// for stop and resume.
    pub fn turn_id(&self) -> Option<&str> {
        self.session.turn.turn_id.as_deref()
    }

    /// `hydrated`: the canonical history (`GET …/messages`) has been answered or has failed, or
    /// hydration is off.
    pub fn hydrated(&self) -> bool {
        self.session.history.hydrated
    }

    /// Changes whenever anything a snapshot shows changes; equal revisions mean equal
    /// snapshots.
    pub fn revision(&self) -> u64 {
        self.revisions.revision
    }

    /// Can `regenerate` run now: the AI SDK owns history, nothing is running, and there is a
    /// message to answer again (as `useChat`'s `regenerate`, which also retries a user message
    /// left without an answer by a failed turn). Over pi-native, whose server keeps the
    /// history: a prompt given up without an answer can be sent again, under its nonce.
    pub fn can_regenerate(&self) -> bool {
        #[cfg(feature = "pi")]
        if self.native() {
            return self.session.can_resend_prompt(self.status().is_busy());
        }
        self.can_edit() && !self.messages().is_empty()
    }

    /// A user message can be edited now (`edit`): the client owns the history (AI SDK mode)
    /// and no turn is on its way.
    pub fn can_edit(&self) -> bool {
        !self.outbox.disposed && !self.session.pi_owns_history() && !self.status().is_busy()
    }

    /// A turn was sent and no assistant message shows its answer yet (`useChat`'s `submitted`
    /// before the first chunk that writes): where a UI shows a waiting indicator.
    pub fn awaiting_answer(&self) -> bool {
        self.status() == Status::Submitted
            && self
                .session
                .conversation
                .history()
                .messages()
                .last()
                .is_none_or(|m| m.role != Role::Assistant)
    }

    /// The last turn ended by a stop, not a failure (`snapshot.stopped`): the user's stop, or
    /// its request aborted (an `Aborted` error). False while a turn runs.
    pub fn stopped(&self) -> bool {
        self.session.turn.stopped && !self.status().is_busy()
    }
}
