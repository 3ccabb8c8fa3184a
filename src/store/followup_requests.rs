//! The store's side of the follow-up queue (SPEC §6; the queue itself is
//! `src/machines/followup_queue.rs`): the requests its FIFO poster asks for and their answers,
//! the user's removing and retrying of queued items, and re-sending one as a new message.

use super::*;
use crate::machines::followup_queue::FollowUpPost;

impl ChatStore {
    pub(super) fn on_followup_answer(
        &mut self,
        ticket: Option<u64>,
        outcome: PostOutcome,
        now_ms: u64,
    ) {
        let Some(ticket) = ticket else { return };
        let jitter = self.rng.unit();
        let effect = self
            .session
            .queue
            .handle_response(ticket, outcome, now_ms, jitter);
        self.revisions.touch();
        match effect {
            Some(QueueEffect::Unsupported { item_id }) => {
                // The runtime cannot take follow-ups after all: stop offering them, and give
                // the text back to an empty composer (otherwise the item stays `failed`).
                self.session.runtime.caps.native_follow_up = false;
                if self.draft.text.is_empty() && self.draft.files.is_empty() {
                    if let Some((item, _)) = self.session.queue.take(&item_id) {
                        self.draft.text = item.text;
                        self.draft.files = item.files;
                    }
                }
                let e = ChatError::new(
                    ErrorKind::FollowUpUnsupported,
                    "the runtime does not accept follow-ups",
                );
                self.outbox.events.push_back(StoreEvent::Error { error: e });
            }
            Some(QueueEffect::Failed { item_id }) => {
                if let Some(e) = self
                    .session
                    .queue
                    .get(&item_id)
                    .and_then(|i| i.error.clone())
                {
                    self.outbox.events.push_back(StoreEvent::Error { error: e });
                }
            }
            None => {}
        }
        self.after_followup_answer(now_ms);
        if !self.session.turn.phase.running() {
            // Accepted after the turn ended: the server will not run it in that turn, but may
            // after whatever comes next. Sent again after a natural end, kept after a stop.
            let natural = self.session.turn.send_queue_when_idle;
            self.take_back_stranded(natural, now_ms);
            // The answer the turn's end was waiting for: what is still queued moves on.
            self.send_next_queued(now_ms);
        }
    }

    /// Moves what the follow-up queue wants to post into the request outbox.
    pub(super) fn pump(&mut self, now_ms: u64) {
        if self.outbox.disposed || !self.session.may_post_followups() {
            return;
        }
        while let Some(post) = self.session.queue.poll_request(now_ms) {
            // A copy of it may be on the server again (pi-native posts again, under their
            // nonces, the items a clear of the whole queue took along): taking it back needs
            // a request again.
            self.session.take_backs.posted(&post.client_nonce);
            let (path, body, carried) = self.session.followup_request(&post, &self.opts);
            let body = Some(to_string(&body));
            let id = self.request(RequestKind::FollowUpPost, Method::Post, path, body, now_ms);
            self.outbox.carry(id, carried);
            if let Some(p) = self.outbox.pending.get_mut(&id) {
                p.ticket = Some(post.ticket);
            }
            self.revisions.touch();
        }
    }

    /// Sends a queued item's text as a new message. When the server may hold a copy of it,
    /// the copy is deleted first and the chat POST waits for that answer: the message shows
    /// at once, the turn starts once the copy can no longer run.
    pub(super) fn send_as_new_message(
        &mut self,
        item: FollowUpItem,
        server_may_have_it: bool,
        now_ms: u64,
    ) {
        let options = item.options.map(|o| *o).unwrap_or_default();
        if !server_may_have_it {
            let unposted = (item.client_nonce, item.client_seq);
            self.start_turn(item.text, item.files, options, now_ms);
            if let Phase::Held(h) = &mut self.session.turn.phase {
                h.unposted = Some(unposted);
            }
            return;
        }
        self.take_back(item.client_seq, &item.client_nonce, now_ms);
        self.start_turn(item.text, item.files, options, now_ms);
        if let Phase::Held(h) = &mut self.session.turn.phase {
            h.nonce = Some(item.client_nonce);
            h.texts_before = item.texts_before;
        }
    }
}

impl Session {
    /// The history (read again) holds the user messages of these posted follow-ups, by their
    /// nonce: they ran, and their waiting bubbles go (`true`: the queue may have changed). A
    /// turn whose end was not seen here (`Ending::Unseen`) leaves its accepted follow-ups to
    /// this.
    #[cfg(feature = "pi")]
    pub(super) fn consume_shown_follow_ups(&mut self) -> bool {
        let posted: Vec<&str> = (self.queue.items().iter())
            .filter(|i| i.state == crate::machines::followup_queue::ItemState::Accepted)
            .map(|i| i.client_nonce.as_str())
            .collect();
        if posted.is_empty() {
            return false;
        }
        for nonce in self.committed_of(&posted) {
            self.queue.consume_by_nonce(&nonce);
        }
        true
    }

    /// Follow-ups go out only once the turn's stream has begun: one POSTed while the chat POST
    /// is still on its way could reach the server first and run before the message it follows
    /// (the browser makes the two fetches concurrently). Not after `dispose()` (the router's
    /// to check).
    pub(super) fn may_post_followups(&self) -> bool {
        // pi-native: a clear of the whole queue is out or not decided yet. A POST that lands
        // before the clear is taken along and posted again under a fresh seq, behind the
        // items posted after it: out of the user's order.
        #[cfg(feature = "pi")]
        if self.native.clear_all_open() {
            return false;
        }
        let running = matches!(
            self.turn.phase,
            Phase::Streaming { .. } | Phase::Resuming { .. }
        );
        // The capabilities' follow-up flag (`data-pi-mode` changes only the history's owner).
        running && self.runtime.caps.native_follow_up
    }

    /// A follow-up's POST over the SSE routes: its path, its body (`{message, clientSeq,
    /// clientNonce, attachments?}` with what its send added) and its send's request options.
    pub(super) fn followup_request_sse(
        &self,
        post: &FollowUpPost,
        opts: &StoreOptions,
    ) -> (String, Value, Option<Box<SendOptions>>) {
        let mut body = json!({
            "message": post.text,
            "clientSeq": post.client_seq,
            "clientNonce": post.client_nonce,
        });
        if !post.files.is_empty() {
            body["attachments"] = serde_json::to_value(&post.files).unwrap_or(Value::Null);
        }
        let options = self
            .queue
            .get(&post.item_id)
            .and_then(|i| i.options.as_deref());
        if let Some(o) = options {
            o.merge_body(&mut body);
        }
        let carried = options.and_then(|o| o.carried(None));
        merge_body(&opts.body, &mut body);
        (opts.route(&self.id, |r| &r.followup), body, carried)
    }
}

impl FollowUpsMut<'_> {
    /// Removes a waiting bubble. One the server may have is also deleted there.
    pub fn remove(&mut self, item_id: &str, now_ms: u64) -> bool {
        if self.store.outbox.disposed {
            return false;
        }
        let posting = self
            .store
            .session
            .queue
            .get(item_id)
            .is_some_and(|i| i.state == crate::machines::followup_queue::ItemState::Posting);
        if let Some(native) = self.store.remove_on_server(item_id, now_ms) {
            return native;
        }
        match self.store.session.queue.remove(item_id) {
            None => false,
            Some(server_keys) => {
                if let Some((seq, nonce)) = server_keys {
                    self.store.take_back(seq, &nonce, now_ms);
                }
                self.store.revisions.touch();
                self.store.pump(now_ms);
                // The removed item may have been the `failed` head that kept the items behind
                // it waiting after the turn ended: they move on now, as they would have at the
                // turn's end (without this they stayed `queued` forever; found by
                // tests/fault_schedules.rs). A `posting` one's POST is still out: its answer
                // (or timeout) moves them on, so the next turn cannot overtake it on the wire.
                if !posting {
                    self.store.send_next_queued(now_ms);
                }
                true
            }
        }
    }

    /// Retries a waiting bubble: a `failed` one is posted again (same seq and nonce); a
    /// `stalled` one, or any item while no turn runs, is sent as a new message (after deleting
    /// the server's copy, so it cannot run twice).
    pub fn retry(&mut self, item_id: &str, now_ms: u64) -> bool {
        if self.store.outbox.disposed {
            return false;
        }
        let Some(item) = self.store.session.queue.get(item_id) else {
            return false;
        };
        let state = item.state;
        let as_new_message = state.waits_for_user() || !self.store.status().is_busy();
        if !as_new_message {
            let ok = self.store.session.queue.retry(item_id, now_ms);
            self.store.revisions.touch();
            self.store.pump(now_ms);
            return ok;
        }
        if self.store.status().is_busy() {
            return false; // a stalled item waits for the turn to end
        }
        let Some((item, server_has_it)) = self.store.session.queue.take(item_id) else {
            return false;
        };
        self.store.send_as_new_message(item, server_has_it, now_ms);
        true
    }

    /// "Run Now" on a waiting bubble (`runQueuedNow`), as its `runNow` says: a `failed`,
    /// `stalled` or `unsure` one is retried (as [`retry`](Self::retry)); on pi-native the
    /// first row of the server's queue, while a run is on, is run now by an interrupt (the
    /// running answer stops); elsewhere it runs after the current answer, and nothing is sent.
    pub fn run_now(&mut self, item_id: &str, now_ms: u64) -> RunNowOutcome {
        if self.store.outbox.disposed {
            return RunNowOutcome::NotFound;
        }
        let Some(run_now) = self.store.session().run_now_of(item_id) else {
            return RunNowOutcome::NotFound;
        };
        match run_now {
            RunNow::Retry if self.retry(item_id, now_ms) => RunNowOutcome::Retried,
            #[cfg(feature = "pi")]
            RunNow::Interrupt if self.store.interrupt_native(item_id, now_ms) => {
                RunNowOutcome::Interrupting
            }
            RunNow::AfterCurrent => RunNowOutcome::AfterCurrent,
            _ => RunNowOutcome::NotNow,
        }
    }

    /// Queues `text` as a follow-up of the running turn (a waiting bubble).
    pub(super) fn enqueue(
        &mut self,
        text: &str,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) {
        // pi-native's server may name no follow-up it runs: what its history held of the
        // text before is what tells whether this one ran (`native/queue.rs`).
        let texts_before = self.store.session.texts_before(&self.store.opts, text);
        let q = &mut self.store.session.queue;
        let options = (!options.is_empty()).then(|| Box::new(options));
        let item = q.enqueue_with(
            text.to_string(),
            files,
            options,
            now_ms,
            self.store.rng.as_mut(),
        );
        if let Some(n) = texts_before {
            let id = item.id.clone();
            q.set_texts_before(&id, n);
        }
        self.store.revisions.touch();
        self.store.pump(now_ms);
    }

    /// The current session's next `clientSeq` is above `seq`: a host's stored last seq, so a
    /// clock behind what it was before a reload cannot fall below what the server accepted
    /// (SPEC §6; a refusal is renumbered anyway, this saves the round trips).
    pub fn raise_client_seq(&mut self, seq: u64) {
        self.store.session.queue.raise_seq(seq);
    }
}
