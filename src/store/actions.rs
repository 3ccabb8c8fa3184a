//! The `useChat` actions of AI SDK mode: regenerate, edit, tool outputs and approvals, and
//! continuing the conversation when `sendAutomaticallyWhen` holds.

use super::*;

/// The store's side of the host's `sendAutomaticallyWhen` predicate: a question not handed
/// out yet, the one the answer must be for, and the counters that make older answers moot.
#[derive(Debug, Default)]
pub(super) struct AutoSendState {
    /// A question not yet handed out.
    pub(super) ask: bool,
    /// The question the host's answer must be for: only the newest counts.
    pub(super) asked: Option<AutoSendQuestion>,
    /// Questions asked so far (the last token given).
    pub(super) tokens: u64,
    /// `stop()` calls so far: an answer asked before a stop continues nothing.
    pub(super) stops: u32,
}

/// A question to the host's auto-send predicate: what its answer is about. Its token is
/// [`AutoSendState::tokens`] when it was asked.
#[derive(Debug)]
pub(super) struct AutoSendQuestion {
    pub(super) session: String,
    pub(super) messages_revision: u64,
    pub(super) stops: u32,
}

impl UseChat<'_> {
    /// Regenerates an assistant message (the last one by default) in AI SDK mode: the history
    /// is trimmed after the user message before it and the turn is requested again with the
    /// trigger `regenerate-message`. Returns false when not possible (busy, pi mode, nothing
    /// to regenerate). Over pi-native it sends a prompt given up without an answer again,
    /// under its own `requestId` (the server runs it once).
    pub fn regenerate(&mut self, message_id: Option<&str>, now_ms: u64) -> bool {
        self.regenerate_with(message_id, SendOptions::default(), now_ms)
    }

    /// [`regenerate`](Self::regenerate) with a request's body keys, headers and metadata.
    pub fn regenerate_with(
        &mut self,
        message_id: Option<&str>,
        options: SendOptions,
        now_ms: u64,
    ) -> bool {
        // pi-native: the server keeps the history; what can be asked again is a prompt given
        // up unanswered, under its own nonce.
        #[cfg(feature = "pi")]
        if self.store.opts.native() {
            return self.store.resend_unsent_prompt(now_ms);
        }
        if !self.store.session().can_regenerate() {
            return false;
        }
        let h = self.store.session.conversation.history();
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
        let named = (message_id.is_some() || assistant && !self.store.opts.ai_sdk_requests)
            .then(|| h.messages()[i].id.clone());
        // The old answer stays, a sibling of the new one.
        self.store.keep_branches(keep);
        self.store.session.conversation.truncate(keep);
        self.store.start_request_turn(
            "regenerate-message",
            named,
            String::new(),
            Vec::new(),
            options,
            now_ms,
        );
        true
    }

    /// Replaces the messages, as `useChat`'s `setMessages`: the list a UI shows, and in AI
    /// SDK mode what the next chat POST sends (and the next PUT stores). Refused (false, nothing
    /// changed) while a turn runs, whose stream writes into the last message; in pi mode the
    /// next hydration shows the server's history again.
    pub fn set_messages(&mut self, messages: Vec<UIMessage>) -> bool {
        if self.store.outbox.disposed || self.store.status().is_busy() {
            return false;
        }
        // A list that only cuts the path short (a message deleted with what follows, a stop's
        // unanswered message taken back to the composer) keeps the branches; any other is a
        // conversation of its own, from which no branch of the old one hangs.
        let path = self.store.session.conversation.history().messages();
        let cut =
            messages.len() <= path.len() && messages.iter().zip(path).all(|(a, b)| a.id == b.id);
        if !cut {
            self.store.session.tree.clear();
        }
        self.store.session.conversation.hydrate(messages, false);
        self.store.revisions.touch();
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
        self.edit_with(message_id, text, files, SendOptions::default(), now_ms)
    }

    /// [`edit`](Self::edit) with what this send adds (as [`ChatStore::send_with`]).
    pub fn edit_with(
        &mut self,
        message_id: &str,
        text: &str,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) -> SubmitResult {
        let i = match self.editable(message_id, text, files.len()) {
            Ok(i) => i,
            Err(reason) => return SubmitResult::blocked(reason),
        };
        // Replaced in place (same id): the old answers answered another text, and go.
        self.store.session.tree.drop_below(message_id);
        let c = &mut self.store.session.conversation;
        c.truncate(i);
        let mut msg = UIMessage::new(message_id, Role::User);
        msg.metadata = options.message_metadata.clone().map(Box::new);
        msg.parts.extend(files.iter().map(FileAttachment::to_part));
        if !text.is_empty() {
            msg.parts.push(Part::text(text, None));
        }
        c.push_user_message(msg);
        self.store.start_request_turn(
            "submit-message",
            Some(message_id.to_string()),
            text.to_string(),
            files,
            options,
            now_ms,
        );
        SubmitResult::done(SubmitKind::Sent)
    }

    /// Edits a user message as assistant-ui's own AI SDK runtime does (AI SDK mode, nothing
    /// running): the edit is a new user message (a new id, or `options.message_id`) under the
    /// edited one's parent, and the edited one stays with its answers as a sibling branch. The
    /// chat POST carries the new path (trigger `submit-message`). Refused as
    /// [`edit`](Self::edit) is.
    pub fn edit_as_branch(
        &mut self,
        message_id: &str,
        text: &str,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) -> SubmitResult {
        let i = match self.editable(message_id, text, files.len()) {
            Ok(i) => i,
            Err(reason) => return SubmitResult::blocked(reason),
        };
        self.store.keep_branches(i);
        self.store.session.conversation.truncate(i);
        self.store
            .start_turn(text.to_string(), files, options, now_ms);
        SubmitResult::done(SubmitKind::Sent)
    }

    /// Where user message `message_id` is, when an edit of it to `text` (and files) may be
    /// sent now; else why not.
    fn editable(&self, message_id: &str, text: &str, files: usize) -> Result<usize, Refusal> {
        let store = &*self.store;
        composer::decide(store.status(), &store.capabilities(), text, files)?;
        let h = store.session.conversation.history();
        let at = h
            .position(message_id)
            .filter(|&i| h.messages()[i].role == Role::User);
        at.filter(|_| store.session().can_edit())
            .ok_or(Refusal::Busy)
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
        if self.store.outbox.disposed {
            return false;
        }
        if self.store.session.pi_owns_history() {
            let answered = (self.store.session).answer_question(tool_call_id, output, now_ms);
            return self.store.after_answer(answered, now_ms);
        }
        // A call whose input still streams cannot take an output yet: held until it can.
        if let super::answers::Answered::Held =
            (self.store.session).hold_answer(tool_call_id, output.clone(), false)
        {
            return self
                .store
                .after_answer(super::answers::Answered::Held, now_ms);
        }
        if !self
            .store
            .session
            .conversation
            .add_tool_output(tool_call_id, &output)
        {
            return false;
        }
        self.store.revisions.touch();
        self.store.send_automatically(now_ms);
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
        if self.store.outbox.disposed {
            return false;
        }
        if self.store.session.pi_owns_history() {
            let answered =
                (self.store.session).answer_approval(approval_id, approved, reason, now_ms);
            return self.store.after_answer(answered, now_ms);
        }
        let c = &mut self.store.session.conversation;
        if !c.add_tool_approval_response(approval_id, approved, reason.as_deref()) {
            return false;
        }
        self.store.revisions.touch();
        self.store.send_automatically(now_ms);
        true
    }

    /// The body keys, headers and metadata the next automatic continuation sends (`useChat`'s
    /// `addToolOutput({…, options})`), in place of the last request's.
    pub fn set_request_options(&mut self, options: SendOptions) {
        self.store.session.last_request = SendOptions {
            message_id: None,
            message_metadata: None,
            response_id: None,
            ..options
        };
    }

    /// Continues the conversation from the last assistant message (AI SDK mode, nothing
    /// running): the request `useChat` makes after tool outputs or approvals. Hosts with their
    /// own `sendAutomaticallyWhen` predicate call it; the built-in ones call it themselves.
    pub fn continue_turn(&mut self, now_ms: u64) -> bool {
        let options = self.store.session.last_request.clone();
        self.continue_turn_with(options, now_ms)
    }

    /// [`continue_turn`](Self::continue_turn) with a request's body keys, headers and
    /// metadata (`useChat`'s `sendMessage(undefined, options)`).
    pub fn continue_turn_with(&mut self, options: SendOptions, now_ms: u64) -> bool {
        let last = self
            .store
            .messages()
            .last()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.id.clone());
        if !self.store.session().can_edit() || last.is_none() {
            return false;
        }
        self.store.start_request_turn(
            "submit-message",
            last,
            String::new(),
            Vec::new(),
            options,
            now_ms,
        );
        true
    }
}

impl ChatStore {
    /// Where `useChat` asks its `sendAutomaticallyWhen`: after a tool output or an approval
    /// answer, and when a turn ended without an error. A built-in predicate is computed here;
    /// the host's own is asked (`Output::AskAutoSend`).
    pub(super) fn send_automatically(&mut self, now_ms: u64) {
        match self.opts.send_automatically_when {
            AutoSend::Host => {
                // Never reused: an answer to a question asked earlier (a promise still pending)
                // must not count for one asked later.
                self.auto_send.tokens += 1;
                self.auto_send.asked = Some(AutoSendQuestion {
                    session: self.session.id.clone(),
                    messages_revision: self.session().history().revision(),
                    stops: self.auto_send.stops,
                });
                self.auto_send.ask = true;
            }
            rule => {
                if rule.holds(self.messages()) {
                    self.use_chat().continue_turn(now_ms);
                }
            }
        }
    }

    /// The host's `sendAutomaticallyWhen` answered the question `token` (at once, or when its
    /// promise settled). A yes continues the conversation only if the answer is still about
    /// what it was asked about: the newest question, the same session and messages, no stop
    /// since (as the `ai` package ignores a promise that settles after a stop). Returns
    /// whether a turn started.
    pub fn handle_auto_send(&mut self, token: u64, yes: bool, now_ms: u64) -> bool {
        let newest = token == self.auto_send.tokens;
        let Some(q) = self.auto_send.asked.as_ref().filter(|_| newest) else {
            return false;
        };
        let current = q.session == self.session.id
            && q.messages_revision == self.session().history().revision()
            && q.stops == self.auto_send.stops;
        self.auto_send.asked = None;
        yes && current && self.use_chat().continue_turn(now_ms)
    }
}
