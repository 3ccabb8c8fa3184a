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
    pub(super) caps: Capabilities,
    pub(super) caps_loaded: bool,
    /// The session runtime's tools (`GET …/catalog`); empty without a catalog.
    pub(super) tools: Vec<ToolCatalogEntry>,
    /// The latest `data-tool-ui` of each tool call.
    pub(super) tool_ui: ToolUiUpdates,
    /// The history and the reducers with authority over it.
    pub(super) conversation: Conversation,
    /// The history's JSON by message, for the bodies of AI SDK mode.
    pub(super) history_json: HistoryJson,
    /// The turn this client follows: what a new turn starts afresh.
    pub(super) turn: TurnState,
    pub(super) queue: FollowUpQueue,
    /// The DELETEs of posted follow-ups not answered yet.
    pub(super) take_backs: TakeBacks,
    /// Where the turn is; the status is derived from it.
    pub(super) phase: Phase,
    /// What the history answer said of a running turn, until the store can act on it (the
    /// capabilities decide which reducer reads the turn).
    pub(super) running_hint: Option<RunningTurn>,
    /// The stream route asked whether a turn runs (no `activeTurn` said): its answer decides.
    pub(super) probe: Option<RequestId>,
    /// The history asked for after a stop: what the server kept, not a turn to attach to (the
    /// stopped one may still be winding down there).
    pub(super) after_stop: bool,
    pub(super) error: Option<ChatError>,
    pub(super) hydrated: bool,
    /// The last turn ended on its own: items still waiting to be posted go out as the next
    /// turn once no follow-up POST is in flight. A stop or a failed turn leaves them waiting
    /// for the user.
    pub(super) send_queue_when_idle: bool,
    /// What the store could not show of this session, newest last ([`Loss`]).
    pub(super) losses: Vec<Loss>,
    /// Made here by `newSession`: the server has nothing of it yet, so opening it asks for no
    /// history and attaches to no turn. Read once, by the first opening.
    pub(super) fresh: bool,
    /// Answers to calls that wait for the user, on their way (SPEC §13, pi mode).
    pub(super) answers: Vec<super::answers::Answer>,
    /// Why the last answer to a waiting call did not get through, by tool call.
    pub(super) answer_errors: Vec<(String, ChatError)>,
    /// pi-native: what is read of the session and when (SPEC §14).
    #[cfg(feature = "pi")]
    pub(super) link: crate::machines::native_link::NativeLink,
    /// pi-native: the read in flight (the state, or the events stream).
    #[cfg(feature = "pi")]
    pub(super) native_read: Option<RequestId>,
    /// The last turn ended unseen (`Ending::Unseen`): what the server accepted is left to
    /// the history, never taken back, until a turn's end is seen again.
    pub(super) end_unseen: bool,
    /// pi-native: the server has no such session (made by `newSession`, or its state read
    /// answered 404): the first send creates one, and the session takes the server's id.
    #[cfg(feature = "pi")]
    pub(super) native_missing: bool,
    /// pi-native: the nonce of a prompt stopped before its run started (its POST may still
    /// have reached the server): if its run shows up, it is stopped.
    #[cfg(feature = "pi")]
    pub(super) stopped_prompt: Option<String>,
    /// pi-native: each prompt sent here whose run the events have not shown yet, with its
    /// optimistic user message: that goes when the server's message shows, and it is kept
    /// across a state read until then (a failed send's message stays, as it would over the
    /// first transport).
    #[cfg(feature = "pi")]
    pub(super) prompts: Vec<super::native::SentPrompt>,
    /// pi-native: the receipt's `cursor` of the prompt on its way: a run that starts at or
    /// after it is that prompt's (the server admits a prompt only when no run is on).
    #[cfg(feature = "pi")]
    pub(super) prompt_cursor: Option<u64>,
    /// pi-native: the prompt of the turn started here, until the server took it.
    #[cfg(feature = "pi")]
    pub(super) native_prompt: Option<super::native::PromptOut>,
    /// pi-native: a prompt given up while its outcome is unknown (never answered, or refused
    /// as busy while the server says idle), with its nonce: `regenerate()` sends it again
    /// under that same `requestId`, so it runs once however often it is tried.
    #[cfg(feature = "pi")]
    pub(super) unsent_prompt: Option<(String, super::native::PromptOut)>,
    /// pi-native: prompts refused as busy (409) in a row with no run showing since.
    #[cfg(feature = "pi")]
    pub(super) busy_refusals: u32,
    /// pi-native: whether the server removes a follow-up named by its selectors.
    #[cfg(feature = "pi")]
    pub(super) selective_clear: super::native::SelectiveClear,
    /// pi-native: the clear of the whole queue on its way or waiting for its events.
    #[cfg(feature = "pi")]
    pub(super) native_clear: Option<super::native::ClearAll>,
}

/// What a chat POST asked ([`TurnState::sent`]).
#[derive(Debug)]
pub(super) struct SentTurn {
    /// The user message it showed (a new or edited one), if any.
    pub(super) user_message: Option<String>,
    pub(super) text: String,
    pub(super) files: Vec<FileAttachment>,
}

/// What a turn this client follows holds: made anew by each turn it starts
/// ([`TurnState::new`]), so nothing of the last turn leaks into the next. The status, the
/// error and what happens to the queue afterwards belong to the session; a turn's ending is
/// [`ChatStore::end_turn`].
#[derive(Debug)]
pub(super) struct TurnState {
    /// The `clientTurnId` of the turn this client started last.
    pub(super) client_turn_id: Option<String>,
    /// The server's id of the running turn (`x-turn-id`, `data-turn-start`).
    pub(super) turn_id: Option<String>,
    pub(super) decoder: SseDecoder,
    /// Events received in this turn's stream (across resumes): the cursor when the server
    /// sends no ids.
    pub(super) events_seen: u64,
    /// The stream reached `[DONE]`.
    pub(super) stream_done: bool,
    /// An `error` chunk was seen in this turn.
    pub(super) stream_error: bool,
    pub(super) finish_reason: Option<String>,
    pub(super) resume_tries: u32,
    /// What this client's chat POST asked, for a refusal that hands it back (a 409
    /// `turn_already_active`): the user message it showed, its text and files.
    pub(super) sent: Option<SentTurn>,
    /// What the turn's stream made the history hold, against `limits`.
    pub(super) growth: super::growth::Growth,
}

impl TurnState {
    /// A turn as it starts (`client_turn_id` when this client started it), or none at all
    /// (a new session).
    pub(super) fn new(client_turn_id: Option<String>, max_event_bytes: usize) -> Self {
        TurnState {
            client_turn_id,
            turn_id: None,
            decoder: SseDecoder::with_max_event_bytes(max_event_bytes),
            events_seen: 0,
            stream_done: false,
            stream_error: false,
            finish_reason: None,
            resume_tries: 0,
            sent: None,
            growth: Default::default(),
        }
    }
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
            caps: caps.unwrap_or_default(),
            caps_loaded: caps.is_some(),
            tools: Vec::new(),
            tool_ui: ToolUiUpdates::new(),
            conversation: Conversation::new(!caps.unwrap_or_default().ai_sdk_owns_history),
            history_json: HistoryJson::default(),
            turn: TurnState::new(None, limits.max_event_bytes),
            queue: FollowUpQueue::new(retry),
            phase: Phase::IDLE,
            running_hint: None,
            probe: None,
            after_stop: false,
            error: None,
            hydrated: false,
            send_queue_when_idle: false,
            last_request: SendOptions::default(),
            take_backs: TakeBacks::default(),
            losses: Vec::new(),
            fresh: false,
            answers: Vec::new(),
            answer_errors: Vec::new(),
            #[cfg(feature = "pi")]
            link: crate::machines::native_link::NativeLink::with_max_line_bytes(
                limits.max_event_bytes,
            ),
            #[cfg(feature = "pi")]
            native_read: None,
            end_unseen: false,
            #[cfg(feature = "pi")]
            native_missing: false,
            #[cfg(feature = "pi")]
            stopped_prompt: None,
            #[cfg(feature = "pi")]
            prompts: Vec::new(),
            #[cfg(feature = "pi")]
            prompt_cursor: None,
            #[cfg(feature = "pi")]
            native_prompt: None,
            #[cfg(feature = "pi")]
            unsent_prompt: None,
            #[cfg(feature = "pi")]
            busy_refusals: 0,
            #[cfg(feature = "pi")]
            selective_clear: Default::default(),
            #[cfg(feature = "pi")]
            native_clear: None,
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
        if self.disposed || session_id == self.session.id {
            return;
        }
        self.bump_generation();
        self.version_floor = self
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
        self.session.fresh = fresh;
        self.session.conversation.advance_clock(self.version_floor);
        self.tool_ui_version += 1;
        self.sessions.opened(session_id, fresh);
        self.events.push_back(StoreEvent::SessionChange {
            session_id: session_id.to_string(),
            renamed_from: None,
        });
        self.open_session(now_ms);
        self.touch();
    }

    /// Opening a session over the SSE routes: its capabilities, catalog and history.
    pub(super) fn open_sse(&mut self, now_ms: u64) {
        #[cfg(not(feature = "pi"))]
        if self.opts.capabilities.is_some() {
            self.refuse_server_history(now_ms);
        }
        if self.opts.capabilities.is_none() {
            self.session.caps_loaded = false;
            let path = format!(
                "{}?sessionId={}",
                self.route(|r| &r.capabilities),
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
                self.route(|r| &r.catalog),
                encode(&self.session.id)
            );
            self.request(RequestKind::Catalog, Method::Get, path, None, now_ms);
        }
        if let Phase::Resuming { at } = &mut self.session.phase {
            // Parked mid-turn: pick the stream up where it was left.
            *at = Some(now_ms);
            self.session.turn.resume_tries = 0;
            self.handle_timeout(now_ms);
        } else {
            // DELETEs that got no answer while it was parked go again; a held turn's user
            // message is shown, and it starts once its DELETE has been answered.
            self.send_due_take_backs(now_ms);
            self.start_held_turn(now_ms);
            if self.opts.hydrate && !std::mem::take(&mut self.session.fresh) {
                self.hydrate(now_ms);
            } else {
                self.session.hydrated = true;
            }
            // Parked after its turn ended, with the answer to a follow-up POST still out (the
            // switch aborted it): the server may hold that one, so it is taken back like the
            // rest, and what waited for that answer moves on now.
            if matches!(self.session.phase, Phase::Idle { .. }) {
                let natural = self.session.send_queue_when_idle;
                self.take_back_stranded(natural, now_ms);
            }
            self.send_next_queued(now_ms);
        }
        self.send_due_answers(now_ms);
    }

    pub(super) fn hydrate(&mut self, now_ms: u64) {
        let path = self.route(|r| &r.messages);
        self.request(RequestKind::MessagesGet, Method::Get, path, None, now_ms);
    }

    /// The catalog answer. 404 means the server has no catalog: no tools, not an error.
    pub(super) fn on_catalog(&mut self, status: u16, body: &[u8]) {
        let tools = if (200..300).contains(&status) {
            match tool_ui::parse_catalog(body) {
                Some((tools, skipped)) => {
                    if skipped > 0 {
                        self.diagnostic(&format!(
                            "{skipped} catalog entries without a name skipped"
                        ));
                    }
                    tools
                }
                None => {
                    self.diagnostic("catalog answer has no tools list");
                    Vec::new()
                }
            }
        } else {
            if status != 404 {
                self.diagnostic(&format!("catalog unavailable (HTTP {status})"));
            }
            Vec::new()
        };
        if tools != self.session.tools {
            self.session.tools = tools;
            self.tool_ui_version += 1;
            // The tool parts' resolved `ui` may change with it.
            self.session.conversation.touch_tool_messages(|_| true);
        }
        self.touch();
    }

    pub(super) fn on_capabilities(&mut self, body: Option<&[u8]>, now_ms: u64) {
        let caps = match body.map(Capabilities::from_json) {
            Some(Some(c)) => c,
            Some(None) => {
                self.diagnostic("capabilities answer is not a JSON object; using defaults");
                Capabilities::default()
            }
            None => Capabilities::default(),
        };
        let busy = self.status().is_busy();
        let s = &mut self.session;
        s.caps = caps;
        s.caps_loaded = true;
        // A first send that went ahead on the defaults is the projection's now.
        s.conversation
            .set_server_owns_history(!caps.ai_sdk_owns_history, busy);
        #[cfg(not(feature = "pi"))]
        self.refuse_server_history(now_ms);
        self.touch();
        self.maybe_attach(now_ms);
    }

    /// A build without the `pi` feature cannot follow a server that keeps the history as a
    /// pi projection (`aiSdkOwnsHistory: false`, SPEC §4): refused where the store learns it
    /// (the capabilities answer, or the static option at opening), not at construction, so
    /// the error names what the server said. Refused as a bound passed is: a turn that went
    /// ahead on the defaults is stopped, and the session fails with a `Protocol` error on
    /// `aiSdkOwnsHistory`. After it the composer refuses every send
    /// ([`Refusal::PiUnsupported`](crate::Refusal)), no turn is attached to and the history
    /// is never `PUT`.
    #[cfg(not(feature = "pi"))]
    fn refuse_server_history(&mut self, now_ms: u64) {
        if self.session.caps.ai_sdk_owns_history {
            return;
        }
        if self.status().is_busy() {
            self.stop(now_ms);
        }
        let mut error = ChatError::protocol(
            "the server keeps the history as a pi projection (aiSdkOwnsHistory: false), and \
             this build of agent-chat-store has no pi reducer: use the full build",
        );
        error.field = Some("aiSdkOwnsHistory".into());
        let s = &mut self.session;
        s.phase = Phase::Idle { failed: true };
        s.error = Some(error.clone());
        self.events.push_back(StoreEvent::Error { error });
        self.touch();
    }

    pub(super) fn on_history(
        &mut self,
        status: u16,
        body: &[u8],
        parser: Option<Box<HistoryParser>>,
        now_ms: u64,
    ) {
        let after_stop = std::mem::take(&mut self.session.after_stop);
        let first = !std::mem::replace(&mut self.session.hydrated, true);
        self.touch();
        if status == 404 {
            return; // a session the server has no history for yet
        }
        if !(200..300).contains(&status) {
            let error = refusal(status, body, "history answer");
            self.events.push_back(StoreEvent::Error { error });
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
        } = match parser.finish_answer() {
            Ok(answer) => answer,
            Err(HistoryBodyError::NoMessagesList) => {
                return self.diagnostic("history answer has no messages list")
            }
            Err(HistoryBodyError::NotJson) => return self.diagnostic("history answer is not JSON"),
        };
        for e in skipped {
            self.lose(
                LossCode::HistorySkipped,
                format!("history message skipped: {e}"),
                false,
            );
        }
        if after_stop && messages.len() < self.session.conversation.history().len() {
            // The server has not written what the stopped turn streamed yet: what is shown is
            // more than it lists, and stays.
            return self.diagnostic("history after the stop is behind what was streamed; kept");
        }
        // A turn started before the history came, running or already ended (a first history
        // that finds messages found this client's own): the conversation merges.
        let merge = !matches!(self.session.phase, Phase::Idle { .. })
            || (first && !self.session.conversation.history().is_empty());
        self.session.conversation.hydrate(messages, merge);
        // Every message has a new version: the old JSON would only be replaced.
        self.session.history_json.clear();
        #[cfg(feature = "pi")]
        self.consume_shown_follow_ups();
        if self.opts.attach && !after_stop {
            self.session.running_hint = Some(running);
            self.maybe_attach(now_ms);
        }
    }

    /// The server took the stop: in pi mode the history shown becomes the one it kept (the
    /// words it streamed before it took the abort, which the cut stream may not have brought).
    pub(super) fn after_stop(&mut self, now_ms: u64) {
        let s = &self.session;
        if self.disposed || !self.opts.hydrate || !s.pi_owns_history() {
            return;
        }
        if !matches!(s.phase, Phase::Idle { .. }) {
            return; // a new turn started meanwhile: its own history comes with it
        }
        self.session.after_stop = true;
        self.hydrate(now_ms);
    }

    /// Acts on what the history said of a running turn, once the capabilities are known (they
    /// decide which reducer reads it) and while this client runs no turn of its own (its chat
    /// POST would meet a running turn as a 409, which attaches too).
    pub(super) fn maybe_attach(&mut self, now_ms: u64) {
        let s = &self.session;
        if self.disposed || !s.caps_loaded || !matches!(s.phase, Phase::Idle { .. }) {
            return;
        }
        // Nothing to follow it with (`refuse_server_history`).
        if !cfg!(feature = "pi") && !s.caps.ai_sdk_owns_history {
            return;
        }
        match self.session.running_hint.take() {
            Some(RunningTurn::Turn { turn_id, cursor }) => {
                self.attach(Some(turn_id), cursor, now_ms)
            }
            Some(RunningTurn::Unsaid) => self.probe(now_ms),
            Some(RunningTurn::Nothing) | None => {}
        }
    }

    /// Follows the server's running turn: its stream from `cursor` (the whole turn without
    /// one), status `streaming`.
    pub(super) fn attach(&mut self, turn_id: Option<String>, cursor: Option<String>, now_ms: u64) {
        self.drop_probe();
        let path = self.stream_path(cursor.as_deref().unwrap_or("-1"));
        let stream = self.request(RequestKind::StreamResume, Method::Get, path, None, now_ms);
        self.follow_attached(stream, turn_id, cursor.as_deref());
        self.pump(now_ms);
    }

    /// Asks the stream route whether a turn runs (`cursor=-1`): a 2xx stream is attached to
    /// ([`on_probe_head`](Self::on_probe_head)), a 204 means nothing runs. The status stays
    /// `ready` meanwhile.
    pub(super) fn probe(&mut self, now_ms: u64) {
        self.drop_probe();
        let path = self.stream_path("-1");
        let id = self.request(RequestKind::StreamResume, Method::Get, path, None, now_ms);
        self.session.probe = Some(id);
    }

    /// The probe's answer began: a stream (and no turn of this client's since) is the running
    /// turn, read from its start.
    pub(super) fn on_probe_head(&mut self, id: RequestId, status: u16) -> bool {
        self.session.probe = None;
        let running = (200..300).contains(&status) && status != 204;
        if !running {
            if self.opts.ai_sdk_requests && status >= 300 {
                // The `ai` package's resume fails with such an answer: its end says why
                // (`on_stream_end`), the status going from `ready` to `error`.
                self.session.probe = Some(id);
            }
            return false;
        }
        if !matches!(self.session.phase, Phase::Idle { .. }) {
            // This client's own turn is on its way (a held one): the answer is not read.
            self.abort(id);
            return false;
        }
        self.follow_attached(id, None, None);
        true
    }

    /// The turn read through `stream` is the one this client follows now, afresh: its id if
    /// known, the resume cursor counting on from `cursor` (the whole turn without one).
    fn follow_attached(
        &mut self,
        stream: RequestId,
        turn_id: Option<String>,
        cursor: Option<&str>,
    ) {
        let s = &mut self.session;
        s.turn = TurnState::new(None, self.opts.limits.max_event_bytes);
        s.turn.turn_id = turn_id;
        if let Some(c) = cursor.and_then(|c| c.parse::<i64>().ok()) {
            s.turn.events_seen = (c + 1).max(0) as u64;
        }
        s.conversation.attach(cursor.is_none());
        s.error = None;
        // As the `ai` package's resume: `submitted` until the first chunk that writes.
        s.phase = match self.opts.ai_sdk_requests && !s.pi_owns_history() {
            true => Phase::Submitted { stream },
            false => Phase::Streaming { stream },
        };
        self.touch();
    }

    /// A probe no longer wanted (a turn of this client's, an attach): aborted.
    pub(super) fn drop_probe(&mut self) {
        if let Some(id) = self.session.probe.take() {
            self.abort(id);
        }
    }
}
