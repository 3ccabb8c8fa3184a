//! One session's state (capabilities, tools, history, queue, turn), and opening, parking
//! and switching sessions: capabilities, catalog and history answers.

use super::*;

/// Everything that belongs to one session. The current one is live; others are parked with
/// their queue (which resumes when the session is current again) and their history.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) id: String,
    /// What the last chat POST's send added (body keys, headers, request metadata): the
    /// turns that continue on their own send it again, as `useChat`'s automatic sends do.
    pub(super) last_request: SendOptions,
    /// What the session's runtime said of itself: capabilities, tools, tool UI.
    pub(super) runtime: Runtime,
    /// The history and the reducers with authority over it.
    pub(super) conversation: Conversation,
    /// AI SDK mode: what left the history, kept as branches beside it.
    pub(super) tree: super::branches::MessageTree,
    /// How the history was read and what of it could not be shown.
    pub(super) history: HistoryRead,
    /// The turn this client follows: where it is, and what a new turn starts afresh.
    pub(super) turn: Turn,
    pub(super) queue: FollowUpQueue,
    /// The DELETEs of posted follow-ups not answered yet.
    pub(super) take_backs: TakeBacks,
    /// The error the session shows (`snapshot.error`).
    pub(super) error: Option<ChatError>,
    /// Answers to calls that wait for the user, on their way (SPEC §13, pi mode).
    pub(super) answers: Answers,
    /// pi-native: the session's link, prompts and take-backs by clear (SPEC §14).
    #[cfg(feature = "pi")]
    pub(super) native: super::native::NativeSession,
}

/// What the session's runtime said of itself (SPEC §4, §13).
#[derive(Debug)]
pub(super) struct Runtime {
    pub(super) caps: Capabilities,
    /// The capabilities are the server's (answered, or given as an option), not defaults.
    pub(super) loaded: bool,
    /// The session runtime's tools (`GET …/catalog`); empty without a catalog.
    pub(super) tools: Vec<ToolCatalogEntry>,
    /// The latest `data-tool-ui` of each tool call.
    pub(super) tool_ui: ToolUiUpdates,
    /// The interval of the `:` comment beats the server says its SSE routes send (the
    /// capabilities' `heartbeatMs`): the watchdog holds from a stream's first beat.
    pub(super) heartbeat_ms: Option<u64>,
}

/// How the session's history was read (SPEC §12), and what of it could not be shown.
#[derive(Debug, Default)]
pub(super) struct HistoryRead {
    /// The history's JSON by message, for the bodies of AI SDK mode.
    pub(super) json: HistoryJson,
    /// The history was read (or there is none to read).
    pub(super) hydrated: bool,
    /// Made here by `newSession`: the server has nothing of it yet, so opening it asks for no
    /// history and attaches to no turn. Read once, by the first opening.
    pub(super) fresh: bool,
    /// What the store could not show of this session, newest last ([`Loss`]).
    pub(super) losses: Vec<Loss>,
}

impl Session {
    pub(super) fn new(
        id: String,
        caps: Option<Capabilities>,
        limits: &Limits,
        retry: RetryPolicy,
    ) -> Self {
        Session {
            id,
            runtime: Runtime {
                caps: caps.unwrap_or_default(),
                loaded: caps.is_some(),
                tools: Vec::new(),
                tool_ui: ToolUiUpdates::new(),
                heartbeat_ms: None,
            },
            conversation: Conversation::new(!caps.unwrap_or_default().ai_sdk_owns_history),
            tree: Default::default(),
            history: HistoryRead::default(),
            turn: Turn::new(None, limits.max_event_bytes),
            queue: FollowUpQueue::new(retry),
            error: None,
            last_request: SendOptions::default(),
            take_backs: TakeBacks::default(),
            answers: Answers::default(),
            #[cfg(feature = "pi")]
            native: super::native::NativeSession::new(limits.max_event_bytes),
        }
    }

    pub(super) fn pi_owns_history(&self) -> bool {
        self.conversation.pi_owns_history()
    }

    /// The resume cursor: the last event id the server gave, else the index of the last event
    /// received (`-1` for none).
    pub(super) fn cursor(&self) -> String {
        match self.turn.decoder.last_event_id() {
            Some(id) => id.to_string(),
            None => (self.turn.events_seen as i64 - 1).to_string(),
        }
    }
}

impl ChatStore {
    /// Makes `session_id` the current session. The old session's in-flight requests are
    /// aborted (their late answers ignored); its queue and history are parked and resume when
    /// it is current again, with the same seqs and nonces.
    pub fn switch_session(&mut self, session_id: &str, now_ms: u64) {
        self.open(session_id, false, now_ms);
    }

    /// [`switch_session`](Self::switch_session); `fresh`: a session just made here, which the
    /// server cannot have yet.
    pub(super) fn open(&mut self, session_id: &str, fresh: bool, now_ms: u64) {
        if self.outbox.disposed || session_id == self.session.id {
            return;
        }
        let left_a_turn = self.status().is_busy();
        self.outbox.bump_generation();
        self.session.requests_dropped();
        self.revisions.version_floor = self
            .revisions
            .version_floor
            .max(self.session.conversation.history().revision());
        let next = self.parked.remove(session_id).unwrap_or_else(|| {
            Session::new(
                session_id.to_string(),
                self.opts.capabilities,
                &self.opts.limits,
                self.opts.retry,
            )
        });
        let old = std::mem::replace(&mut self.session, next);
        self.parked.insert(old.id.clone(), old);
        self.session.history.fresh = fresh;
        self.session
            .conversation
            .advance_clock(self.revisions.version_floor);
        self.revisions.tool_ui += 1;
        self.sessions.opened(session_id, fresh);
        self.outbox.events.push_back(StoreEvent::SessionChange {
            session_id: session_id.to_string(),
            renamed_from: None,
        });
        self.open_session(now_ms);
        // Left while its turn ran (the server goes on with it): the list, once loaded, is
        // asked again now, to show that session running.
        if left_a_turn && self.sessions.loaded(false) {
            self.sessions.watch_at = Some(now_ms);
        }
        self.revisions.touch();
    }

    /// Opening a session over the SSE routes: its capabilities, catalog and history.
    pub(super) fn open_sse(&mut self, now_ms: u64) {
        #[cfg(not(feature = "pi"))]
        if self.opts.capabilities.is_some() {
            if let Some(error) = self.session.runtime.server_history_refusal() {
                self.refuse_turn(error, now_ms);
            }
        }
        if self.opts.capabilities.is_none() {
            self.session.runtime.loaded = false;
            let path = format!(
                "{}?sessionId={}",
                self.opts.route(&self.session.id, |r| &r.capabilities),
                encode(&self.session.id)
            );
            self.request(RequestKind::Capabilities, Method::Get, path, None, now_ms);
        }
        // The tools are the runtime's, which can differ per session: fetched for each one,
        // under the same generation guard as the capabilities. An empty route: a server
        // without a catalog (a plain `useChat` route handler), never asked.
        if !self.opts.routes.catalog.is_empty() {
            let path = format!(
                "{}?sessionId={}",
                self.opts.route(&self.session.id, |r| &r.catalog),
                encode(&self.session.id)
            );
            self.request(RequestKind::Catalog, Method::Get, path, None, now_ms);
        }
        if let Phase::Resuming { at } = &mut self.session.turn.phase {
            // Parked mid-turn: pick the stream up where it was left.
            *at = Some(now_ms);
            self.session.turn.resume_tries = 0;
            self.handle_timeout(now_ms);
        } else {
            // DELETEs that got no answer while it was parked go again; a held turn's user
            // message is shown, and it starts once its DELETE has been answered.
            for (seq, nonce) in self.session.take_backs.due_keys(now_ms) {
                self.take_back(seq, &nonce, now_ms);
            }
            self.start_held_turn(now_ms);
            if self.opts.hydrate && !std::mem::take(&mut self.session.history.fresh) {
                self.session.hydrate(&self.opts, &mut self.outbox, now_ms);
            } else {
                self.session.history.hydrated = true;
            }
            // Parked after its turn ended, with the answer to a follow-up POST still out (the
            // switch aborted it): the server may hold that one, so it is taken back like the
            // rest, and what waited for that answer moves on now.
            if matches!(self.session.turn.phase, Phase::Idle { .. }) {
                let natural = self.session.turn.send_queue_when_idle;
                self.take_back_stranded(natural, now_ms);
            }
            self.send_next_queued(now_ms);
        }
        (self.session).send_due_answers(&self.opts, &mut self.outbox, now_ms);
    }

    pub(super) fn on_capabilities(&mut self, body: Option<&[u8]>, now_ms: u64) {
        let caps = match body.map(Capabilities::from_json) {
            Some(Some(c)) => c,
            Some(None) => {
                self.outbox
                    .diagnostic("capabilities answer is not a JSON object; using defaults");
                Capabilities::default()
            }
            None => Capabilities::default(),
        };
        let busy = self.status().is_busy();
        let s = &mut self.session;
        s.runtime.caps = caps;
        s.runtime.loaded = true;
        // Read beside the capabilities (SPEC §4 ignores unknown fields): a server that names
        // no interval is learned from its beats (`liveness.rs`).
        s.runtime.heartbeat_ms = body.and_then(declared_heartbeat_ms);
        // A first send that went ahead on the defaults is the projection's now.
        s.conversation
            .set_server_owns_history(!caps.ai_sdk_owns_history, busy);
        #[cfg(not(feature = "pi"))]
        if let Some(error) = self.session.runtime.server_history_refusal() {
            self.refuse_turn(error, now_ms);
        }
        self.revisions.touch();
        self.maybe_attach(now_ms);
    }

    pub(super) fn on_history(
        &mut self,
        status: u16,
        body: &[u8],
        parser: Option<Box<HistoryParser>>,
        now_ms: u64,
    ) {
        let after_stop = std::mem::take(&mut self.session.turn.after_stop);
        let first = !std::mem::replace(&mut self.session.history.hydrated, true);
        self.revisions.touch();
        if status == 404 {
            return; // a session the server has no history for yet
        }
        if !(200..300).contains(&status) {
            let error = refusal(status, body, "history answer");
            self.outbox.events.push_back(StoreEvent::Error { error });
            return;
        }
        let parser = parser.unwrap_or_else(|| {
            // The body came before any status (or not at all): read it now.
            let mut p = Box::new(HistoryParser::new(self.opts.limits.max_messages));
            p.push(body);
            p
        });
        let HistoryAnswer {
            messages,
            skipped,
            running,
            tree,
        } = match parser.finish_answer() {
            Ok(answer) => answer,
            Err(HistoryBodyError::NoMessagesList) => {
                return self
                    .outbox
                    .diagnostic("history answer has no messages list")
            }
            Err(HistoryBodyError::NotJson) => {
                return self.outbox.diagnostic("history answer is not JSON")
            }
        };
        for e in skipped {
            let m = format!("history message skipped: {e}");
            (self.session).lose(LossCode::HistorySkipped, m, None, false, &mut self.outbox);
            self.revisions.touch();
        }
        if after_stop && messages.len() < self.session.conversation.history().len() {
            // The server has not written what the stopped turn streamed yet: what is shown is
            // more than it lists, and stays.
            return self
                .outbox
                .diagnostic("history after the stop is behind what was streamed; kept");
        }
        // A turn started before the history came, running or already ended (a first history
        // that finds messages found this client's own): the conversation merges.
        let merge = !matches!(self.session.turn.phase, Phase::Idle { .. })
            || (first && !self.session.conversation.history().is_empty());
        self.session.conversation.hydrate(messages, merge);
        // The server's branches; a server that keeps none leaves this client's as they are.
        if let Some(tree) = tree.filter(|_| self.branches_on()) {
            let path = self.session.conversation.history().messages();
            let budget = self.opts.limits.max_messages.saturating_sub(path.len());
            self.session.tree.load(path, tree);
            self.session.tree.trim(budget);
        }
        // Every message has a new version: the old JSON would only be replaced.
        self.session.history.json.clear();
        #[cfg(feature = "pi")]
        if self.session.consume_shown_follow_ups() {
            self.revisions.touch();
        }
        if self.opts.attach && !after_stop {
            self.session.turn.running_hint = Some(running);
            self.maybe_attach(now_ms);
        }
    }

    /// Acts on what the history said of a running turn, once the capabilities are known (they
    /// decide which reducer reads it) and while this client runs no turn of its own (its chat
    /// POST would meet a running turn as a 409, which attaches too).
    pub(super) fn maybe_attach(&mut self, now_ms: u64) {
        let s = &self.session;
        if self.outbox.disposed || !s.runtime.loaded || !matches!(s.turn.phase, Phase::Idle { .. })
        {
            return;
        }
        // Nothing to follow it with (`Runtime::server_history_refusal`).
        if !cfg!(feature = "pi") && !s.runtime.caps.ai_sdk_owns_history {
            return;
        }
        match self.session.turn.running_hint.take() {
            Some(RunningTurn::Turn { turn_id, cursor }) => {
                let (opts, out) = (&self.opts, &mut self.outbox);
                self.session
                    .attach(Some(turn_id), cursor, opts, out, now_ms);
                self.revisions.touch();
                self.pump(now_ms);
            }
            Some(RunningTurn::Unsaid) => (self.session).probe(&self.opts, &mut self.outbox, now_ms),
            Some(RunningTurn::Nothing) | None => {}
        }
    }
}

impl Session {
    /// Asks for the session's history (SPEC §12).
    pub(super) fn hydrate(&self, opts: &StoreOptions, out: &mut Outbox, now_ms: u64) {
        let path = opts.route(&self.id, |r| &r.messages);
        let kind = RequestKind::MessagesGet;
        out.push(
            &self.id,
            kind,
            Method::Get,
            path,
            None,
            opts.deadline(kind, now_ms),
        );
    }

    /// The server took the stop: in pi mode the history shown becomes the one it kept (the
    /// words it streamed before it took the abort, which the cut stream may not have brought).
    pub(super) fn after_stop(&mut self, opts: &StoreOptions, out: &mut Outbox, now_ms: u64) {
        if out.disposed || !opts.hydrate || !self.pi_owns_history() {
            return;
        }
        if !matches!(self.turn.phase, Phase::Idle { .. }) {
            return; // a new turn started meanwhile: its own history comes with it
        }
        self.turn.after_stop = true;
        self.hydrate(opts, out, now_ms);
    }

    /// Follows the server's running turn: its stream from `cursor` (the whole turn without
    /// one), status `streaming`. The router then bumps the revision and lets follow-ups go.
    pub(super) fn attach(
        &mut self,
        turn_id: Option<String>,
        cursor: Option<String>,
        opts: &StoreOptions,
        out: &mut Outbox,
        now_ms: u64,
    ) {
        self.turn.drop_probe(out);
        let path = opts.stream_path(&self.id, cursor.as_deref().unwrap_or("-1"));
        let kind = RequestKind::StreamResume;
        let deadline = opts.deadline(kind, now_ms);
        let stream = out.push(&self.id, kind, Method::Get, path, None, deadline);
        self.follow_attached(stream, turn_id, cursor.as_deref(), opts);
    }

    /// Asks the stream route whether a turn runs (`cursor=-1`): a 2xx stream is attached to
    /// ([`on_probe_head`](Self::on_probe_head)), a 204 means nothing runs. The status stays
    /// `ready` meanwhile.
    pub(super) fn probe(&mut self, opts: &StoreOptions, out: &mut Outbox, now_ms: u64) {
        self.turn.drop_probe(out);
        let path = opts.stream_path(&self.id, "-1");
        let kind = RequestKind::StreamResume;
        let deadline = opts.deadline(kind, now_ms);
        self.turn.probe = Some(out.push(&self.id, kind, Method::Get, path, None, deadline));
    }

    /// The probe's answer began: a stream (and no turn of this client's since) is the running
    /// turn, read from its start (`true`: what a snapshot shows changed).
    pub(super) fn on_probe_head(
        &mut self,
        id: RequestId,
        status: u16,
        opts: &StoreOptions,
        out: &mut Outbox,
    ) -> bool {
        self.turn.probe = None;
        let running = (200..300).contains(&status) && status != 204;
        if !running {
            if opts.ai_sdk_requests && status >= 300 {
                // The `ai` package's resume fails with such an answer: its end says why
                // (`on_stream_end`), the status going from `ready` to `error`.
                self.turn.probe = Some(id);
            }
            return false;
        }
        if !matches!(self.turn.phase, Phase::Idle { .. }) {
            // This client's own turn is on its way (a held one): the answer is not read.
            out.abort(id);
            return false;
        }
        self.follow_attached(id, None, None, opts);
        true
    }

    /// The catalog answer. 404 means the server has no catalog: no tools, not an error.
    /// `true` when the tools changed (the resolved `ui` of tool parts may change with them).
    pub(super) fn on_catalog(&mut self, status: u16, body: &[u8], out: &mut Outbox) -> bool {
        let tools = if (200..300).contains(&status) {
            match tool_ui::parse_catalog(body) {
                Some((tools, skipped)) => {
                    if skipped > 0 {
                        out.diagnostic(&format!(
                            "{skipped} catalog entries without a name skipped"
                        ));
                    }
                    tools
                }
                None => {
                    out.diagnostic("catalog answer has no tools list");
                    Vec::new()
                }
            }
        } else {
            if status != 404 {
                out.diagnostic(&format!("catalog unavailable (HTTP {status})"));
            }
            Vec::new()
        };
        if tools == self.runtime.tools {
            return false;
        }
        self.runtime.tools = tools;
        // The tool parts' resolved `ui` may change with it.
        self.conversation.touch_tool_messages(|_| true);
        true
    }

    /// The turn read through `stream` is the one this client follows now, afresh: its id if
    /// known, the resume cursor counting on from `cursor` (the whole turn without one).
    fn follow_attached(
        &mut self,
        stream: RequestId,
        turn_id: Option<String>,
        cursor: Option<&str>,
        opts: &StoreOptions,
    ) {
        let s = self;
        s.turn.restart(None, opts.limits.max_event_bytes);
        s.turn.turn_id = turn_id;
        if let Some(c) = cursor.and_then(|c| c.parse::<i64>().ok()) {
            s.turn.events_seen = (c + 1).max(0) as u64;
        }
        s.conversation.attach(cursor.is_none());
        s.error = None;
        // As the `ai` package's resume: `submitted` until the first chunk that writes.
        s.turn.phase = match opts.ai_sdk_requests && !s.pi_owns_history() {
            true => Phase::Submitted { stream },
            false => Phase::Streaming { stream },
        };
    }
}

impl Runtime {
    /// A build without the `pi` feature cannot follow a server that keeps the history as a
    /// pi projection (`aiSdkOwnsHistory: false`, SPEC §4): refused where the store learns it
    /// (the capabilities answer, or the static option at opening), not at construction, so
    /// the error names what the server said ([`ChatStore::refuse_turn`]). Refused as a bound passed is: a turn that went
    /// ahead on the defaults is stopped, and the session fails with a `Protocol` error on
    /// `aiSdkOwnsHistory`. After it the composer refuses every send
    /// ([`Refusal::PiUnsupported`](crate::Refusal)), no turn is attached to and the history
    /// is never `PUT`.
    #[cfg(not(feature = "pi"))]
    pub(super) fn server_history_refusal(&self) -> Option<ChatError> {
        if self.caps.ai_sdk_owns_history {
            return None;
        }
        let mut error = ChatError::protocol(
            "the server keeps the history as a pi projection (aiSdkOwnsHistory: false), and \
             this build of agent-chat-store has no pi reducer: use the full build",
        );
        error.field = Some("aiSdkOwnsHistory".into());
        Some(error)
    }
}

impl Turn {
    /// A probe no longer wanted (a turn of this client's, an attach): aborted.
    pub(super) fn drop_probe(&mut self, out: &mut Outbox) {
        if let Some(id) = self.probe.take() {
            out.abort(id);
        }
    }
}

/// The capabilities' `heartbeatMs`: a positive whole number of milliseconds, else `None`.
fn declared_heartbeat_ms(body: &[u8]) -> Option<u64> {
    let value: Value = crate::protocol::json::from_slice(body).ok()?;
    value.get("heartbeatMs")?.as_u64().filter(|&ms| ms > 0)
}
