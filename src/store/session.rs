//! One session's state (capabilities, tools, history, queue, turn), and opening, parking
//! and switching sessions: capabilities, catalog and history answers.

use super::*;

/// How many of the newest messages a `data-tool-ui` chunk looks through for its tool call.
pub(super) const TOOL_UI_SEARCH: usize = 64;

/// The AI SDK reducer's hold on the message of the running turn.
#[derive(Debug, Default)]
pub(super) struct UiTurn {
    pub(super) reducer: UiMessageReducer,
    /// The streamed message's id in the history, once it has one.
    pub(super) message_id: Option<String>,
    /// The message the turn streams into before its first write ([`ChatStore::ui_target`]):
    /// a new one, or a copy of the assistant message it continues.
    pub(super) pending: Option<UIMessage>,
}

/// Everything that belongs to one session. The current one is live; others are parked with
/// their queue (which resumes when the session is current again) and their history.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) id: String,
    pub(super) caps: Capabilities,
    pub(super) caps_loaded: bool,
    /// The session runtime's tools (`GET …/catalog`); empty without a catalog.
    pub(super) tools: Vec<ToolCatalogEntry>,
    /// The latest `data-tool-ui` of each tool call.
    pub(super) tool_ui: ToolUiUpdates,
    /// `data-pi-mode` was seen: the pi projection owns history whatever was fetched.
    pub(super) pi_mode: bool,
    pub(super) history: History,
    /// The history's JSON by message, for the bodies of AI SDK mode.
    pub(super) history_json: HistoryJson,
    pub(super) pi: PiReducer,
    /// The turn this client follows: what a new turn starts afresh.
    pub(super) turn: TurnState,
    pub(super) queue: FollowUpQueue,
    /// Where the turn is; the status is derived from it.
    pub(super) phase: Phase,
    pub(super) error: Option<ChatError>,
    pub(super) hydrated: bool,
    /// The last turn ended on its own: items still waiting to be posted go out as the next
    /// turn once no follow-up POST is in flight. A stop or a failed turn leaves them waiting
    /// for the user.
    pub(super) send_queue_when_idle: bool,
    /// The turn the reducers last started (`data-turn-start`), running or not: a repeated
    /// turn-start of it (a replay from the start of the server's buffer) is not a new turn.
    pub(super) reducer_turn: Option<String>,
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
    /// This turn's user message-start came while the AI SDK reducer had authority, so it was
    /// not applied. A later hand-off to the pi projection must then not let the next user
    /// message-start (a follow-up's) adopt the optimistic message.
    pub(super) ignored_user_start: bool,
    /// The AI SDK reducer's hold on the turn's message.
    pub(super) ui: UiTurn,
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
            ignored_user_start: false,
            ui: UiTurn::default(),
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
            pi_mode: false,
            history: History::new(),
            history_json: HistoryJson::default(),
            pi: PiReducer::new(),
            turn: TurnState::new(None, limits.max_event_bytes),
            queue: FollowUpQueue::new(retry),
            phase: Phase::IDLE,
            error: None,
            hydrated: false,
            send_queue_when_idle: false,
            reducer_turn: None,
        }
    }

    pub(super) fn pi_owns_history(&self) -> bool {
        self.pi_mode || !self.caps.ai_sdk_owns_history
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
        if self.disposed || session_id == self.session.id {
            return;
        }
        self.bump_generation();
        self.version_floor = self.version_floor.max(self.session.history.revision());
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
        self.session.history.advance_clock(self.version_floor);
        self.tool_ui_version += 1;
        self.open_session(now_ms);
        self.touch();
    }

    /// Asks for what a session that just became current needs.
    pub(super) fn open_session(&mut self, now_ms: u64) {
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
        // under the same generation guard as the capabilities.
        let path = format!(
            "{}?sessionId={}",
            self.route(|r| &r.catalog),
            encode(&self.session.id)
        );
        self.request(RequestKind::Catalog, Method::Get, path, None, now_ms);
        if let Phase::Resuming { at } = &mut self.session.phase {
            // Parked mid-turn: pick the stream up where it was left.
            *at = Some(now_ms);
            self.session.turn.resume_tries = 0;
            self.handle_timeout(now_ms);
        } else {
            if let Phase::Held(held) = &self.session.phase {
                // Its user message is shown; the turn starts as soon as the DELETE it waits
                // for has been answered (perhaps while the session was parked).
                if held.delete.is_none() {
                    self.start_held_turn(now_ms);
                }
            }
            if self.opts.hydrate {
                self.hydrate(now_ms);
            } else {
                self.session.hydrated = true;
            }
            // Parked after its turn ended, with the answer to a follow-up POST still out (the
            // switch aborted it): what waited for that answer moves on now.
            self.send_next_queued(now_ms);
        }
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
            self.touch_tool_messages(|_| true);
        }
        self.touch();
    }

    /// Bumps the version of every message with a tool part `pick` selects (their exported
    /// `ui` depends on more than the message).
    pub(super) fn touch_tool_messages(&mut self, pick: impl Fn(&str) -> bool) {
        let h = &mut self.session.history;
        for i in 0..h.len() {
            let hit = h.messages()[i]
                .parts
                .iter()
                .any(|p| p.as_tool().is_some_and(|t| pick(&t.tool_call_id)));
            if hit {
                h.at_mut(i);
            }
        }
    }

    /// A `data-tool-ui` chunk: remembered for its tool call (in both modes: in pi mode it is
    /// not history, yet the part shows it).
    pub(super) fn on_tool_ui(&mut self, data: &Value) {
        let Some((call, update)) = ToolUiUpdate::from_data(data) else {
            return self.diagnostic("data-tool-ui without a toolCallId");
        };
        self.session.tool_ui.insert(call.clone(), update);
        self.tool_ui_version += 1;
        // The message holding the call is the running turn's, the last one or near it. The
        // search stops after TOOL_UI_SEARCH messages: a chunk naming a call no message has
        // (hostile, or a stale progress update) would otherwise cost the whole history per
        // chunk. An older message shows the update the next time it changes.
        let h = &mut self.session.history;
        if let Some(i) = (0..h.len())
            .rev()
            .take(TOOL_UI_SEARCH)
            .find(|&i| tool_ui::has_call(&h.messages()[i], &call))
        {
            h.at_mut(i);
        }
        self.touch();
    }

    pub(super) fn on_capabilities(&mut self, body: Option<&[u8]>) {
        let caps = match body.map(Capabilities::from_json) {
            Some(Some(c)) => c,
            Some(None) => {
                self.diagnostic("capabilities answer is not a JSON object; using defaults");
                Capabilities::default()
            }
            None => Capabilities::default(),
        };
        let pi_owned = self.session.pi_owns_history();
        self.session.caps = caps;
        self.session.caps_loaded = true;
        if !pi_owned && self.session.pi_owns_history() && self.status().is_busy() {
            // A first send went ahead on the defaults: its turn is the projection's now.
            self.hand_history_to_pi();
        }
        self.touch();
    }

    pub(super) fn on_history(
        &mut self,
        status: u16,
        body: &[u8],
        parser: Option<Box<HistoryParser>>,
    ) {
        self.session.hydrated = true;
        self.touch();
        if status == 404 {
            return; // a session the server has no history for yet
        }
        if !(200..300).contains(&status) {
            let error = if status == 0 {
                ChatError::protocol("history answer too large")
            } else {
                ChatError::from_http(status, body)
            };
            self.events.push_back(StoreEvent::Error { error });
            return;
        }
        let parser = parser.unwrap_or_else(|| {
            // The body came before any status (or not at all): read it now.
            let mut p = Box::new(HistoryParser::new(self.opts.limits.max_messages));
            p.push(body);
            p
        });
        let (mut messages, skipped) = match parser.finish() {
            Ok(list) => list,
            Err(HistoryBodyError::NoMessagesList) => {
                return self.diagnostic("history answer has no messages list")
            }
            Err(HistoryBodyError::NotJson) => return self.diagnostic("history answer is not JSON"),
        };
        for e in skipped {
            self.diagnostic(&format!("history message skipped: {e}"));
        }
        if !matches!(self.session.phase, Phase::Idle { .. }) {
            // A turn started before the history came: canonical first, then what this client
            // added that the server does not list yet. A message both have keeps the local
            // copy, the one being streamed into; and the reducers keep their bookkeeping
            // (the optimistic user message to adopt, the open messages, part positions), all
            // keyed by message id and still true of those copies. Resetting it mid-turn split
            // the streaming text part in two and duplicated the user's message.
            let local = self.session.history.messages();
            let by_id: HashMap<&str, usize> = local
                .iter()
                .enumerate()
                .map(|(i, m)| (m.id.as_str(), i))
                .collect();
            let mut listed = vec![false; local.len()];
            for c in messages.iter_mut() {
                if let Some(&i) = by_id.get(c.id.as_str()) {
                    listed[i] = true;
                    c.clone_from(&local[i]);
                }
            }
            let extra = local.iter().zip(listed).filter(|(_, l)| !l).map(|(m, _)| m);
            let merged: Vec<UIMessage> = messages.into_iter().chain(extra.cloned()).collect();
            self.session.history.replace_all(merged);
            self.session.history_json.clear();
            return;
        }
        self.session.history.replace_all(messages);
        // Every message has a new version: the old JSON would only be replaced.
        self.session.history_json.clear();
        self.session.pi.reset();
        self.session.turn.ui = UiTurn::default();
    }
}
