//! What the store shows: the open session's state ([`SessionView`]), its messages and their
//! versions, the composer ([`Composer`]), and the questions a UI asks of it (can it
//! regenerate, edit, does a call wait for the user). Read-only; the snapshot of the wasm shell
//! is built from these.

use super::*;
use crate::reduce::History;

impl ChatStore {
    /// The chat's `status` (SPEC §5): busy while `submitted` or `streaming`.
    pub fn status(&self) -> Status {
        self.session.turn.phase.status()
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

    /// The open session's messages: the one canonical list, display and action eligibility
    /// both read it ([`SessionView::history`] has their versions).
    pub fn messages(&self) -> &[UIMessage] {
        self.session.conversation.history().messages()
    }

    /// Changes whenever anything a snapshot shows changes; equal revisions mean equal
    /// snapshots.
    pub fn revision(&self) -> u64 {
        self.revisions.revision
    }
}

impl<'a> SessionView<'a> {
    /// The open session's id (`sessionId`).
    pub fn id(&self) -> &'a str {
        &self.store.session.id
    }

    /// What the store could not show of this session, newest last (at most 32): the
    /// snapshot's `losses`.
    pub fn losses(&self) -> &'a [Loss] {
        &self.store.session.history.losses
    }

    /// The `error` of the open session's last turn, while it stands.
    pub fn error(&self) -> Option<&'a ChatError> {
        self.store.session.error.as_ref()
    }

    /// The server's id of the running turn (`turnId`, from `x-turn-id` or `data-turn-start`),
    /// for stop and resume.
    pub fn turn_id(&self) -> Option<&'a str> {
        self.store.session.turn.turn_id.as_deref()
    }

    /// A turn was sent and no assistant message shows its answer yet (`useChat`'s `submitted`
    /// before the first chunk that writes): where a UI shows a waiting indicator.
    pub fn awaiting_answer(&self) -> bool {
        self.store.status() == Status::Submitted
            && (self.store.messages().last()).is_none_or(|m| m.role != Role::Assistant)
    }

    /// `capabilitiesLoaded`: given statically, or the capabilities route has answered (or
    /// failed: then the defaults). Until then the defaults apply.
    pub fn capabilities_loaded(&self) -> bool {
        self.store.session.runtime.loaded
    }

    /// The session runtime's tool catalog (empty when the server has none).
    pub fn tools(&self) -> &'a [ToolCatalogEntry] {
        &self.store.session.runtime.tools
    }

    /// `hydrated`: the canonical history (`GET …/messages`) has been answered or has failed, or
    /// hydration is off.
    pub fn hydrated(&self) -> bool {
        self.store.session.history.hydrated
    }

    /// The session's history: its messages with their versions ([`History::version`]), its
    /// revision and where it changed since one ([`History::changed_from`]). A session switch
    /// starts another history: compare it all.
    pub fn history(&self) -> &'a History {
        self.store.session.conversation.history()
    }

    /// Message `i` as the UI gets it: its JSON with the resolved `ui` on every tool part.
    pub fn export_message(&self, i: usize) -> Value {
        let s = &self.store.session;
        tool_ui::export_message(
            &s.conversation.history().messages()[i],
            &s.runtime.tool_ui,
            &s.runtime.tools,
        )
    }

    /// Part `k` of message `i` as the UI gets it, shown as `shown` (the part itself, or it with
    /// placeholders: [`crate::protocol::ToolPart::without_input`]): its JSON, with the resolved
    /// `ui` of the part on a tool part that has one (`export_message(i)["parts"][k]`, without
    /// exporting the other parts). The `ui` does not depend on the fields a placeholder stands
    /// for.
    pub fn export_part_as(&self, i: usize, k: usize, shown: &Part) -> Value {
        let s = &self.store.session;
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
        self.store.revisions.tool_ui
    }

    /// The waiting bubbles, shown after all messages.
    pub fn queued(&self) -> Vec<&'a FollowUpItem> {
        self.store.session.queue.view()
    }

    /// The waiting bubbles as the snapshot shows them: each with what Run Now does for it
    /// ([`FollowUpItem::run_now`], with this store's turn and transport).
    pub fn queued_shown(&self) -> Vec<(&'a FollowUpItem, RunNow)> {
        let items = self.store.session.queue.view();
        items
            .into_iter()
            .map(|i| (i, self.run_now_for(i)))
            .collect()
    }

    /// What Run Now does for the waiting bubble `item_id` (this store's or another client's).
    pub fn run_now_of(&self, item_id: &str) -> Option<RunNow> {
        let items = self.store.session.queue.view();
        let item = items.into_iter().find(|i| i.id == item_id)?;
        Some(self.run_now_for(item))
    }

    fn run_now_for(&self, item: &FollowUpItem) -> RunNow {
        let busy = self.store.status().is_busy();
        #[cfg(feature = "pi")]
        let interruptible = self.store.interruptible(item);
        #[cfg(not(feature = "pi"))]
        let interruptible = false;
        item.run_now(busy, interruptible)
    }

    /// The last `clientSeq` the session's queue gave out (0 before the first): what a host with
    /// storage keeps across reloads ([`FollowUpsMut::raise_client_seq`]).
    pub fn last_client_seq(&self) -> u64 {
        self.store.session.queue.last_seq()
    }
    /// The last turn ended by a stop, not a failure (`snapshot.stopped`): the user's stop, or
    /// its request aborted (an `Aborted` error). False while a turn runs.
    pub fn stopped(&self) -> bool {
        self.store.session.turn.stopped && !self.store.status().is_busy()
    }

    /// Can `regenerate` run now: the AI SDK owns history, nothing is running, and there is a
    /// message to answer again (as `useChat`'s `regenerate`, which also retries a user message
    /// left without an answer by a failed turn). Over pi-native, whose server keeps the
    /// history: a prompt given up without an answer can be sent again, under its nonce.
    pub fn can_regenerate(&self) -> bool {
        #[cfg(feature = "pi")]
        if self.store.opts.native() {
            return self
                .store
                .session
                .can_resend_prompt(self.store.status().is_busy());
        }
        self.can_edit() && !self.store.messages().is_empty()
    }

    /// Can [`TurnMut::retry`] run now: the last turn failed (not stopped: a stop is the user's)
    /// and, where the client owns the history, there is something to ask again.
    pub fn can_retry(&self) -> bool {
        let s = self.store;
        matches!(s.session.turn.phase, Phase::Idle { failed: true })
            && !self.stopped()
            && !s.outbox.disposed
            && (s.session.pi_owns_history() || self.can_regenerate())
    }

    /// A user message can be edited now (`edit`): the client owns the history (AI SDK mode)
    /// and no turn is on its way.
    pub fn can_edit(&self) -> bool {
        let s = self.store;
        !s.outbox.disposed && !s.session.pi_owns_history() && !s.status().is_busy()
    }
}

impl<'a> Composer<'a> {
    /// The draft text (`composer.draft`).
    pub fn draft(&self) -> &'a str {
        &self.store.draft.text
    }

    /// The files attached to the draft (`composer.files`).
    pub fn files(&self) -> &'a [FileAttachment] {
        &self.store.draft.files
    }

    /// What the composer may do now (`composer`, SPEC §5), from the status, the capabilities
    /// and the draft.
    pub fn state(&self) -> ComposerState {
        let s = self.store;
        composer::composer_state(
            s.status(),
            &s.capabilities(),
            &s.draft.text,
            s.draft.files.len(),
        )
    }
}
