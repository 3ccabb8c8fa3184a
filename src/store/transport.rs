//! The seam between the store's rules and the protocol that carries them: SPEC §2–§13's SSE
//! routes, or §14's pi-native transport (`native/`). Each thing the store asks of a server,
//! and each answer only one protocol gives, is one method here, and this is the one place in
//! the store that asks which protocol runs: a rule of the pi-native transport (its commands,
//! its queue ownership and take-backs, its state reads) lives under `native/`, the SSE routes'
//! beside the rule they serve.

use super::*;
use crate::machines::followup_queue::FollowUpPost;
#[cfg(feature = "pi")]
use crate::machines::native_link::commands;

impl ChatStore {
    /// What opening a session that just became current asks for.
    pub(super) fn open_session(&mut self, now_ms: u64) {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            return self.open_native(now_ms);
        }
        self.open_sse(now_ms);
    }

    /// The request of a new turn whose user message (if any) is shown: a chat POST, whose
    /// answer is the stream, or pi-native's prompt, whose run comes on the events stream.
    pub(super) fn post_turn(
        &mut self,
        trigger: &'static str,
        message_id: Option<String>,
        text: String,
        files: Vec<FileAttachment>,
        options: SendOptions,
        now_ms: u64,
    ) {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            let bubble = message_id;
            let prompt = native::PromptInput::New {
                text,
                files,
                bubble,
            };
            return self.on_prompt(prompt, now_ms);
        }
        self.post_chat(trigger, message_id, text, files, options, now_ms);
    }

    /// Tells the server to stop the running turn, and ends it here as `ending`.
    pub(super) fn stop_on_server(&mut self, ending: turn::Ending, now_ms: u64) {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            return self.stop_native(ending, now_ms);
        }
        (self.session).stop_sse(&self.opts, &mut self.outbox, now_ms);
        self.end_turn(ending, now_ms);
    }

    /// A follow-up POST was answered (after the queue took the answer).
    pub(super) fn after_followup_answer(&mut self, now_ms: u64) {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            self.after_native_post(now_ms);
        }
        let _ = now_ms;
    }

    /// The user removes `item_id`: `Some(done)` where the transport decides it itself
    /// (pi-native keeps the bubble until its server lets the item go), `None` for the shared
    /// way (gone at once, the server's copy deleted).
    pub(super) fn remove_on_server(&mut self, item_id: &str, now_ms: u64) -> Option<bool> {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            return Some(self.remove_native(item_id, now_ms));
        }
        let _ = (item_id, now_ms);
        None
    }

    /// Sends the request that takes the follow-up `(seq, nonce)` back from the server's
    /// queue (its [`TakeBacks`] entry is open).
    pub(super) fn send_take_back(&mut self, seq: u64, nonce: &str, now_ms: u64) {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            return self.take_back_native(Some((seq, nonce)), now_ms);
        }
        // `DELETE …/followup?clientNonce=&clientSeq=` (the SSE routes).
        let path = format!(
            "{}?clientNonce={}&clientSeq={seq}",
            self.opts.route(&self.session.id, |r| &r.followup),
            encode(nonce)
        );
        let kind = RequestKind::FollowUpDelete;
        let id = self.request(kind, Method::Delete, path, None, now_ms);
        self.session.take_backs.sent(nonce, id);
    }

    /// What the answer to the take-back `id` says (over pi-native a `queue/clear` by
    /// selectors, whose `cleared` count says more, of the session that sent it, open or
    /// parked).
    pub(super) fn delete_answer(&mut self, id: RequestId, p: &outbox::Pending) -> DeleteAnswer {
        #[cfg(feature = "pi")]
        if self.opts.native() {
            let s = match p.session == self.session.id {
                true => Some(&mut self.session),
                false => self.parked.get_mut(&p.session),
            };
            if let Some(s) = s {
                return s.native_delete_answer(id, p.status, &p.body);
            }
        }
        let _ = id;
        DeleteAnswer::of(p.status, &p.body)
    }

    /// A follow-up taken back had started on the server while no turn runs here: the
    /// server's run shows it. Over pi-native the state read that settled it showed no run on
    /// (else the store follows it), so what waits behind it goes on as the next messages;
    /// over the SSE routes the history shows the run and attaches to it if it goes on.
    pub(super) fn follow_run_elsewhere(&mut self, now_ms: u64) {
        if self.opts.native() {
            self.session.turn.send_queue_when_idle = true;
            self.send_next_queued(now_ms);
        } else if self.opts.hydrate {
            self.session.hydrate(&self.opts, &mut self.outbox, now_ms);
        } else if self.opts.attach {
            (self.session).probe(&self.opts, &mut self.outbox, now_ms);
        }
    }

    /// A response head of one of the transport's own requests: `true` when it took it.
    pub(super) fn transport_head(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        status: u16,
        now_ms: u64,
    ) -> bool {
        #[cfg(feature = "pi")]
        if kind.is_native() {
            if kind == RequestKind::NativeEvents {
                self.on_native_events(id, native::EventsPart::Head(status), now_ms);
            }
            return true;
        }
        let _ = (id, kind, status, now_ms);
        false
    }
}

impl Session {
    /// What the history held of a follow-up's text when it was queued (the server's messages,
    /// as `ran_per_history` counts them): pi-native's server may name no follow-up it runs,
    /// and that count then tells whether this one ran.
    pub(super) fn texts_before(&self, opts: &StoreOptions, text: &str) -> Option<usize> {
        #[cfg(feature = "pi")]
        if opts.native() {
            return Some(self.server_texts(text));
        }
        let _ = (opts, text);
        None
    }

    /// A follow-up's POST: its path, body, and the request options its send added. Over
    /// pi-native the protocol's own strict body (no attachments, no extra keys), the same
    /// bytes on every retry.
    pub(super) fn followup_request(
        &self,
        post: &FollowUpPost,
        opts: &StoreOptions,
    ) -> (String, Value, Option<Box<SendOptions>>) {
        #[cfg(feature = "pi")]
        if opts.native() {
            let body = commands::followup(&post.client_nonce, post.client_seq, &post.text);
            return (
                format!("{}/followup", self.native_base(opts.native_agent())),
                body,
                None,
            );
        }
        self.followup_request_sse(post, opts)
    }
}

impl SessionsMut<'_> {
    /// The request that asks the server for `change` of session `id`.
    pub(super) fn send_change(
        &mut self,
        id: &str,
        change: crate::machines::session_list::Change,
        now_ms: u64,
    ) {
        #[cfg(feature = "pi")]
        if self.store.opts.native() {
            return self.send_native_change(id, change, now_ms);
        }
        self.send_change_sse(id, change, now_ms);
    }
}

impl Sessions<'_> {
    /// The server keeps archived sessions (pi-native has no archive).
    pub fn archivable(&self) -> bool {
        !self.store.opts.native()
    }
}

impl StoreOptions {
    /// The agent type of a store that speaks the pi-native protocol (always `None` without
    /// the `pi` feature).
    pub(super) fn native_agent(&self) -> Option<&str> {
        #[cfg(feature = "pi")]
        return self.pi_native.as_deref();
        #[cfg(not(feature = "pi"))]
        None
    }

    /// This store speaks the pi-native protocol.
    pub(super) fn native(&self) -> bool {
        self.native_agent().is_some()
    }

    /// The list route, without its query.
    pub(super) fn sessions_route(&self) -> String {
        match self.native_agent() {
            #[cfg(feature = "pi")]
            Some(agent) => commands::sessions_path(agent),
            _ => self.routes.sessions.clone(),
        }
    }

    /// One session's route (rename, archive, delete).
    pub(super) fn session_route(&self, id: &str) -> String {
        match self.native_agent() {
            #[cfg(feature = "pi")]
            Some(agent) => commands::session_path(agent, id),
            _ => replace_all(&self.routes.session, "{sessionId}", &encode(id)),
        }
    }
}
