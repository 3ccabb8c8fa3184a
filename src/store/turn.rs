//! A turn's life: starting one (the chat POST), its stream ending, resuming it, stopping
//! it, failing it, and what runs next. The turn's state and its endings are in
//! `turn/machine.rs`; [`ChatStore::end_turn`] is the one way a turn ends.

use super::*;

mod machine;
pub(super) use machine::{Ending, HeldTurn, Phase, SentTurn, Turn};

impl TurnMut<'_> {
    /// Stops the running turn: the stream is aborted, the server is told (`DELETE …/turn`),
    /// and the composer is usable again. Queued items that were never posted stay queued
    /// (a stop is not an invitation to send the next one); accepted ones become `stalled`.
    pub fn stop(&mut self, now_ms: u64) {
        self.store.auto_send.stops = self.store.auto_send.stops.wrapping_add(1);
        if !self.store.status().is_busy() {
            return;
        }
        if let Some(held) = self.store.session.turn.phase.take_held() {
            if let Some(bubble) = &held.bubble {
                self.store.session.conversation.withdraw(&bubble.id);
            }
            let options = Some(Box::new(held.options));
            if let Some((nonce, seq)) = held.unposted {
                // A queued follow-up on its way to be the next message: it waits, `queued`,
                // where it was (a stop sends nothing that is queued, SPEC §6).
                let before = self
                    .store
                    .session
                    .texts_before(&self.store.opts, &held.text);
                let q = &mut self.store.session.queue;
                q.restore_queued(&nonce, seq, held.text, held.files, options);
                if let Some(n) = before {
                    q.set_texts_before(&format!("fu-{nonce}"), n);
                }
            } else if let Some(nonce) = held.nonce {
                // A queued item on its way back as a new message: after a stop it waits,
                // `stalled`, where it was (SPEC §6), not in the composer, which may hold
                // something else.
                (self.store.session.queue).restore_stalled(&nonce, held.text, held.files, options);
            } else if held.bubble.is_some()
                && self.store.draft.text.is_empty()
                && self.store.draft.files.is_empty()
            {
                // Never sent: the message goes back to the composer (if it is empty) rather
                // than stay as if it had been asked.
                self.store.draft.text = held.text;
                self.store.draft.files = held.files;
            }
            return self.store.revisions.touch();
        }
        self.store.stop_on_server(Ending::Stopped, now_ms);
    }
}

impl ChatStore {
    /// Starts a turn with a new user message.
    pub(super) fn start_turn(
        &mut self,
        text: String,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) {
        let id = (self.session).push_user_message(&text, &files, &options, self.rng.as_mut());
        let trigger = "submit-message";
        // The `ai` package's transport names no message on a plain submit.
        let named = (!self.opts.ai_sdk_requests).then(|| id.clone());
        self.start_request_turn(trigger, named, text, files, options, now_ms);
        if let Some(sent) = &mut self.session.turn.sent {
            sent.user_message.get_or_insert_with(|| id.clone());
        }
        if let Phase::Held(h) = &mut self.session.turn.phase {
            h.bubble = self.session.conversation.history().get(&id).cloned();
        }
    }

    /// Starts the held turn once no follow-up DELETE is out: its user message is shown.
    pub(super) fn start_held_turn(&mut self, now_ms: u64) {
        if self.session.take_backs.any_open() {
            return;
        }
        if let Some(h) = self.session.turn.phase.take_held() {
            self.start_request_turn(h.trigger, h.message_id, h.text, h.files, h.options, now_ms);
        }
    }

    /// Sends the chat POST for a turn whose user message (if any) is already in the history.
    pub(super) fn start_request_turn(
        &mut self,
        trigger: &'static str,
        message_id: Option<String>,
        text: String,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) {
        // The answers the last turn let go were shown until now.
        let answers = &mut self.session.answers;
        if !answers.held.is_empty() {
            answers.held.clear();
            answers.held_version += 1;
        }
        if self.session.take_backs.any_open() {
            let s = &mut self.session;
            s.error = None;
            s.turn.send_queue_when_idle = false;
            s.turn.phase = Phase::Held(Box::new(HeldTurn {
                nonce: None,
                bubble: None,
                unposted: None,
                texts_before: 0,
                trigger,
                message_id,
                text,
                files,
                options,
            }));
            return self.revisions.touch();
        }
        self.post_turn(trigger, message_id, text, files, options, now_ms);
    }

    /// A turn's chat POST over the SSE routes: its answer is the turn's stream.
    pub(super) fn post_chat(
        &mut self,
        trigger: &'static str,
        message_id: Option<String>,
        text: String,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) {
        let client_turn_id = uuid_v4(self.rng.as_mut());
        let mut body = json!({
            "id": self.session.id,
            "sessionId": self.session.id,
            "message": text,
            "trigger": trigger,
            "clientTurnId": client_turn_id,
        });
        let shown = (message_id.as_deref())
            .and_then(|id| self.session.conversation.history().get(id))
            .filter(|m| m.role == Role::User)
            .map(|m| m.id.clone());
        if let Some(mid) = message_id {
            body["messageId"] = Value::String(mid);
        }
        if !files.is_empty() {
            body["attachments"] = serde_json::to_value(&files).unwrap_or(Value::Null);
        }
        // The send's own keys over the store's `body` option, neither over the store's keys.
        options.merge_body(&mut body);
        self.use_chat().set_request_options(options.clone());
        let answer_id = options.response_id.clone();
        merge_body(&self.opts.body, &mut body);
        let body = if self.session.pi_owns_history() {
            to_string(&body)
        } else {
            // The whole history, files included, as `useChat` sends it: the model needs the
            // bytes. Only the stored copy (PUT) drops long `data:` URLs.
            let max_url = self.opts.limits.max_stored_data_url_chars;
            let s = &mut self.session;
            s.history.json.refresh(s.conversation.history(), max_url);
            s.history.json.body(&body, false)
        };
        // This client's turn: a question still out about a running one is moot (a running one
        // answers the chat POST with a 409, which attaches).
        self.session.turn.drop_probe(&mut self.outbox);
        self.session.turn.running_hint = None;
        let s = &mut self.session;
        s.turn
            .restart(Some(client_turn_id), self.opts.limits.max_event_bytes);
        s.turn.sent = Some(SentTurn {
            user_message: shown,
            text,
            files,
        });
        s.conversation.new_turn();
        s.conversation
            .answer_as(answer_id, trigger == "regenerate-message");
        s.error = None;
        s.turn.send_queue_when_idle = false;
        let path = self.opts.route(&self.session.id, |r| &r.chat);
        let hooked = self.opts.prepare_hook.then_some(&self.opts.body);
        let options = options.carried(hooked);
        let stream = self.request(RequestKind::Chat, Method::Post, path, Some(body), now_ms);
        self.outbox.carry(stream, options);
        self.session.turn.phase = Phase::Submitted { stream };
        self.revisions.touch();
        self.pump(now_ms);
    }

    /// The turn's stream request ended (a body that reached its end, or an error answer).
    pub(super) fn on_stream_end(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        status: u16,
        body: &[u8],
        no_event: bool,
        now_ms: u64,
    ) {
        if self.session.turn.probe == Some(id) {
            // A probe refused (kept past its head by `on_probe_head`): the resume failed.
            self.session.turn.probe = None;
            return self.end_turn(Ending::Failed(refusal(status, body, "answer")), now_ms);
        }
        if self.session.turn.phase.stream() != Some(id) {
            return;
        }
        let ok = (200..300).contains(&status);
        if kind == RequestKind::StreamResume && (status == 204 || status == 416) {
            // Nothing left to resume (the turn ended meanwhile, or the buffer moved on): the
            // canonical history has what happened, and says which follow-ups ran.
            self.end_turn(Ending::Unseen, now_ms);
            if self.opts.hydrate {
                self.session.hydrate(&self.opts, &mut self.outbox, now_ms);
            }
            return;
        }
        if !ok {
            let e = refusal(status, body, "answer");
            if kind == RequestKind::Chat && e.kind == ErrorKind::TurnAlreadyActive {
                return self.on_turn_already_active(e, body, now_ms);
            }
            self.end_turn(Ending::Failed(e), now_ms);
            return;
        }
        if kind == RequestKind::Chat && no_event && body.is_empty() {
            // No body at all (`useChat` throws "The response body is empty").
            let e = ChatError::protocol(format!("the server answered {status} with no body"));
            return self.end_turn(Ending::Failed(e), now_ms);
        }
        if no_event && !looks_like_sse(body) {
            // A JSON error, a login page served as text/plain…: ending the turn `ready` would
            // hide that nothing answered (the `ai` package does; a user sees a silent no-op).
            let text = String::from_utf8_lossy(&body[..body.len().min(120)]);
            let e = ChatError::protocol(format!(
                "the server answered {status} without an event stream: {}",
                text.trim()
            ));
            return self.end_turn(Ending::Failed(e), now_ms);
        }
        let cut = self.session.turn.decoder.finish();
        if cut && !self.session.turn.stream_done {
            // The body ended mid-event: a dropped connection, not the end of the turn.
            let error = ChatError::network("the stream ended mid-event");
            let turn = &mut self.session.turn;
            if let Err(e) = turn.schedule_resume(error, &self.opts, now_ms, &mut self.outbox) {
                self.end_turn(Ending::Failed(e), now_ms);
            }
            return;
        }
        self.end_turn(Ending::Finished, now_ms);
    }

    /// The chat POST met a turn this client did not know of (a reload, another tab): not a
    /// failure of the message (SPEC §6). Its bubble goes, the store attaches to that turn
    /// (SPEC §12), and the message is posted to it as a follow-up where the policy allows
    /// one, else it goes back to the composer (reason `busy`).
    fn on_turn_already_active(&mut self, error: ChatError, body: &[u8], now_ms: u64) {
        let turn_id = crate::protocol::json::from_slice(body).ok().and_then(|v| {
            let id = v.get("error")?.get("turnId")?.as_str()?;
            Some(id.to_string())
        });
        let sent = self.session.turn.sent.take();
        let (opts, out) = (&self.opts, &mut self.outbox);
        self.session.attach(turn_id, None, opts, out, now_ms);
        self.revisions.touch();
        self.pump(now_ms);
        let Some(sent) = sent else { return };
        if let Some(id) = &sent.user_message {
            self.session.conversation.withdraw(id);
        }
        // As the user's own send now would: the composer policy, on the attached turn.
        match self.send(&sent.text, sent.files.clone(), now_ms).reason {
            None | Some(Refusal::Empty) => {}
            Some(_) if self.draft.text.is_empty() && self.draft.files.is_empty() => {
                self.draft.text = sent.text;
                self.draft.files = sent.files;
            }
            // The composer holds something new: the refusal is said, not hidden.
            Some(_) => self.outbox.events.push_back(StoreEvent::Error { error }),
        }
        self.revisions.touch();
    }

    /// The one ending of a turn. Every way shares what it means that none runs now (no turn
    /// id, no resume, the accepted follow-ups it did not run stalled); each adds its own
    /// status and what runs next. A session switch parks the turn instead (the server's turn
    /// may go on, and switching back resumes it: `bump_generation`); `dispose` stops following
    /// it for good.
    pub(super) fn end_turn(&mut self, ending: Ending, now_ms: u64) {
        // A failure after the watchdog found the stream silent (and the resume failed too)
        // is that stall, whatever the resume met (a proxy's 500, a refused connection).
        let ending = match ending {
            Ending::Failed(e) if self.session.turn.beats.stalled => {
                Ending::Failed(liveness::stalled_error(e))
            }
            ending => ending,
        };
        let finished = matches!(ending, Ending::Finished | Ending::Unseen);
        // What the turn's calls were not asked before it ended they never will be.
        self.drop_held_answers(now_ms);
        let natural = self.session.turn_ends(&ending);
        self.take_back_stranded(natural, now_ms);
        let store = self.session.turn_ended(ending, &mut self.outbox);
        // The turn grew the path: the kept branches make room.
        let shown = self.session.conversation.history().len();
        (self.session.tree).trim(self.opts.limits.max_messages.saturating_sub(shown));
        if store {
            self.store_history(now_ms);
        }
        self.revisions.touch();
        self.sessions_mut().after_turn(now_ms);
        if finished {
            self.session.turn.send_queue_when_idle = !self.session.turn.stream_error;
            self.send_next_queued(now_ms);
            // Tool outputs that arrived while it streamed may complete the message (useChat's
            // check when a response ends).
            if self.session.turn.phase.status() == Status::Ready {
                self.send_automatically(now_ms);
            }
        }
    }

    /// Stores the history on the server (`PUT …/messages`) where this client owns it.
    pub(super) fn store_history(&mut self, now_ms: u64) {
        if let Some(body) = self.session.history_to_store(&self.opts) {
            let path = self.opts.route(&self.session.id, |r| &r.messages);
            let kind = RequestKind::MessagesPut;
            self.request(kind, Method::Put, path, Some(body), now_ms);
        }
    }

    /// What the server accepted and the ended turn did not run may still sit in its queue, to
    /// run after whatever comes next: out of order, or after a stop unasked (SPEC §6). Each is
    /// taken back with a DELETE and shows `stalled`; after a natural end (`natural`) they are
    /// also sent again as the next messages, in order, the first with its DELETE answered
    /// before its chat POST ([`send_as_new_message`](Self::send_as_new_message)).
    pub(super) fn take_back_stranded(&mut self, natural: bool, now_ms: u64) {
        // All at once: the first may wait for a follow-up POST's answer before it goes out,
        // and its copy could run meanwhile, after another client's message.
        if self.session.turn.end_unseen {
            // The server may run them still (`Ending::Unseen`): the history says.
            return;
        }
        for (seq, nonce) in self.session.queue.strand(natural) {
            #[cfg(feature = "pi")]
            self.session.removal_again(&nonce);
            self.take_back(seq, &nonce, now_ms);
        }
    }

    /// Items queued during a turn that ended, which the server never accepted: the first
    /// becomes the next turn, the rest follow it as follow-ups (SPEC §6). It waits while a
    /// follow-up POST is in flight, whose answer decides first (FIFO); the store calls it
    /// again when that answer comes.
    pub(super) fn send_next_queued(&mut self, now_ms: u64) {
        if self.outbox.disposed {
            return;
        }
        // A lost answer may have left a copy on the server (`server_may_have_it`): it is
        // cancelled before the turn starts, so it cannot run a second time.
        if let Some((item, server_may_have_it)) = self.session.next_queued() {
            self.send_as_new_message(item, server_may_have_it, now_ms);
        }
    }
}

impl Session {
    /// The queued item that goes out next as a new message, taken from the queue, and whether
    /// the server may hold a copy of it: none while a turn runs or one waits for a
    /// follow-up POST's answer.
    fn next_queued(&mut self) -> Option<(FollowUpItem, bool)> {
        use crate::machines::followup_queue::ItemState;
        let idle = matches!(self.turn.phase, Phase::Idle { .. });
        if !self.turn.send_queue_when_idle || !idle {
            return None;
        }
        let q = &mut self.queue;
        if q.in_flight().is_some() {
            return None;
        }
        // Taken back at a turn's end, never run: they go first, in their order.
        if let Some(item) = q.take_first_resend() {
            return Some((item, true));
        }
        if let Some(item) = q.take_first_unposted() {
            return Some((item, false));
        }
        // A head that was posted but failed, with its retry still pending: the turn it was
        // meant for is over, so it is sent as a new message as well. Left alone it would wait
        // for a turn that never comes, and block everything behind it.
        match q.items().iter().find(|i| !i.state.waits_for_user()) {
            Some(head) if head.state == ItemState::Queued => {
                let id = head.id.clone();
                q.take(&id)
            }
            _ => None,
        }
    }

    /// The first half of a turn's end, before what it stranded is taken back: what the
    /// projection holds open is final (unless it failed) and no turn runs. `true`: a natural
    /// end, whose stranded follow-ups are sent again.
    fn turn_ends(&mut self, ending: &Ending) -> bool {
        let finished = matches!(ending, Ending::Finished | Ending::Unseen);
        if !matches!(ending, Ending::Failed(_)) {
            // What the projection still holds open is final now.
            self.conversation.end_of_stream();
        }
        // `turnId` names the running turn: none runs now.
        self.turn.turn_id = None;
        self.turn.send_queue_when_idle = false;
        self.turn.end_unseen = matches!(ending, Ending::Unseen);
        // An interrupt (Run Now) served this turn: its answer is moot now.
        #[cfg(feature = "pi")]
        {
            self.native.interrupt = None;
        }
        finished && !self.turn.stream_error
    }

    /// The second half: the status and error the ending leaves, told to the host with the
    /// finish event. `true` when the history is stored after it (AI SDK mode): after every
    /// completed turn (a refused one is stopped as the user stops a turn: what it showed is
    /// kept, and stored as a stopped turn's is); a failed one is not.
    fn turn_ended(&mut self, ending: Ending, out: &mut Outbox) -> bool {
        let (is_abort, is_error, is_disconnect) = match &ending {
            Ending::Finished | Ending::Unseen => (false, self.turn.stream_error, false),
            Ending::Stopped => (true, false, false),
            Ending::Refused(_) => (false, true, false),
            Ending::Failed(e) => (
                e.kind == ErrorKind::Aborted,
                e.kind != ErrorKind::Aborted,
                e.kind == ErrorKind::Network,
            ),
        };
        // What the snapshot's `stopped` says until the next turn (a stop is not a failure).
        self.turn.stopped = is_abort;
        let finish_reason = self.turn.finish_reason.take();
        let store = !matches!(ending, Ending::Failed(_));
        match ending {
            Ending::Finished | Ending::Unseen => {
                self.turn.phase = Phase::Idle {
                    failed: self.turn.stream_error,
                };
            }
            Ending::Stopped => self.turn.phase = Phase::IDLE,
            // A turn held for a DELETE's answer fails with it (its user message stays, as
            // after a failed chat POST): kept, the answer would start it beside a turn the
            // user sends next.
            Ending::Refused(error) | Ending::Failed(error) => {
                self.turn.phase = Phase::Idle { failed: true };
                self.error = Some(error.clone());
                out.events.push_back(StoreEvent::Error { error });
            }
        }
        let message_id = (self.conversation.history().messages().last())
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.id.clone());
        out.events.push_back(StoreEvent::Finish {
            finish_reason,
            message_id,
            is_abort,
            is_disconnect,
            is_error,
        });
        store
    }

    /// `stop()` over the SSE routes: the stream aborted, the answers on their way let go,
    /// `DELETE …/turn`. The router then ends the turn.
    pub(super) fn stop_sse(&mut self, opts: &StoreOptions, out: &mut Outbox, now_ms: u64) {
        if let Some(id) = self.turn.phase.stream() {
            out.abort(id);
        }
        self.answers.drop_all(out);
        // Before the server named the turn (no `x-turn-id`, no `data-turn-start` yet) the
        // client's own turn id is the only handle; servers of this family accept either.
        let turn = &self.turn;
        let turn = turn.turn_id.clone().or_else(|| turn.client_turn_id.clone());
        // An empty route: a server whose turn ends with its request (a plain `useChat` route
        // handler, which the aborted stream stops).
        let told = !opts.routes.turn.is_empty();
        if let Some(turn) = turn.filter(|_| told) {
            let route = opts.route(&self.id, |r| &r.turn);
            let path = format!("{route}?turnId={}", encode(&turn));
            let kind = RequestKind::TurnDelete;
            let deadline = opts.deadline(kind, now_ms);
            out.push(&self.id, kind, Method::Delete, path, None, deadline);
        }
    }

    /// Adds the optimistic user message of a new turn; returns its id.
    pub(super) fn push_user_message(
        &mut self,
        text: &str,
        files: &[FileAttachment],
        options: &SendOptions,
        rng: &mut dyn RandomSource,
    ) -> String {
        // A host's id, unless the history has it already (ids name one message).
        let id = (options.message_id.clone())
            .filter(|id| !id.is_empty() && self.conversation.history().get(id).is_none())
            .unwrap_or_else(|| uuid_v4(rng));
        let mut msg = UIMessage::new(id.clone(), Role::User);
        msg.metadata = options.message_metadata.clone().map(Box::new);
        // `useChat` puts files before the text.
        msg.parts.extend(files.iter().map(FileAttachment::to_part));
        if !text.is_empty() {
            msg.parts.push(Part::text(text, None));
        }
        self.conversation.push_user_message(msg);
        id
    }
}

impl Session {
    /// The body of the history's `PUT` after a turn, where the client owns the history (AI
    /// SDK mode, `persist`) and has some.
    fn history_to_store(&mut self, opts: &StoreOptions) -> Option<String> {
        // The capabilities as well as the projection: without the `pi` feature nothing owns
        // the history here, and a server that keeps its own must never get a PUT over it.
        let server_owns = self.pi_owns_history() || !self.runtime.caps.ai_sdk_owns_history;
        if !opts.persist || server_owns || self.conversation.history().is_empty() {
            return None;
        }
        let max_url = opts.limits.max_stored_data_url_chars;
        self.history
            .json
            .refresh(self.conversation.history(), max_url);
        // The branches beside the visible path, when there are any (the reference server
        // keeps them; another one ignores the keys).
        let path = self.conversation.history().messages();
        let fields = match self.tree.kept_len() {
            0 => json!({}),
            _ => json!({
                "headId": path.last().map(|m| &m.id),
                "tree": self.tree.for_storage(path, max_url),
            }),
        };
        Some(self.history.json.body(&fields, true))
    }
}
