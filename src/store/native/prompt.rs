//! Prompts over pi-native (SPEC §14): a new message is a `POST …/prompt` (the session's
//! creation first when the server has none), sent again with the same bytes after a failure
//! worth a retry, followed as another client's run when refused busy, and known in the
//! history by its `clientNonce` (or its text, where the server names none).

use super::*;

mod answer;
use answer::{Failure, PromptMove};

/// How many sent prompts' optimistic messages are kept for their runs to show up.
const MAX_PROMPTS_KEPT: usize = 32;

/// Busy refusals (409) of a prompt in a row, with no run showing, after which the prompt is
/// given up: the server says busy where its state says idle. The first is followed as another
/// client's run; each further one waits the reconnect backoff (2 s, 4 s, 8 s…, jittered)
/// before the prompt goes again, so at most a few requests a second, then a typed error.
pub const MAX_BUSY_REFUSALS: u32 = 5;

/// How long a prompt (or a session's creation) waits for its receipt: upstream's client's
/// `requestTimeoutMs`. A receipt says only that the command was taken, so it comes at once
/// from a live server.
pub(in crate::store) const COMMAND_DEADLINE_MS: u64 = 15_000;

/// Attempts of one prompt before its turn fails: the user is waiting on a `submitted` turn,
/// and upstream's client gives up after one.
pub const MAX_PROMPT_ATTEMPTS: u32 = 3;

/// A prompt on its way (with the session's creation first, if the server does not have it):
/// sent again with the same bytes, so the same `requestId`, after a failure worth a retry.
/// Each attempt is aborted after [`COMMAND_DEADLINE_MS`] (15 s, or `followup_timeout_ms` if
/// shorter) without an answer; after [`MAX_PROMPT_ATTEMPTS`] (or `retry.max_attempts` if fewer)
/// the turn fails and the prompt is kept for `regenerate()`: a prompt the server never answers
/// is a typed error within 50 s.
#[derive(Debug)]
pub(in crate::store) struct PromptOut {
    pub(super) text: String,
    pub(super) files: Vec<FileAttachment>,
    pub(super) attempts: u32,
    /// A failed attempt is tried again at this time.
    pub(super) retry_at: Option<u64>,
    /// The last attempt was refused because a run is on: a run showing by the retry takes
    /// the message as its follow-up.
    pub(super) met_a_run: bool,
}

impl PromptOut {
    pub(in crate::store) fn retry_at(&self) -> Option<u64> {
        self.retry_at
    }
}

/// A prompt sent from here whose user message the events have not shown yet.
#[derive(Debug)]
pub(in crate::store) struct SentPrompt {
    /// Its `clientNonce`.
    pub(super) nonce: String,
    /// Its optimistic user message.
    pub(super) bubble: UIMessage,
    /// The server's user messages with its text when it was sent: where the server names no
    /// prompt (its `/state` carries no `clientNonce`), one more of them than this (FIFO among
    /// this client's prompts of one text) shows it ran.
    pub(super) texts_before: usize,
}

impl ChatStore {
    /// The next attempt of the prompt on its way: `POST …/sessions` while the server does not
    /// have the session (its `requestId` the prompt's nonce; the prompt goes once the server
    /// named the session), else `POST …/prompt` ([`Turn::client_turn_id`] is its nonce).
    pub(in crate::store) fn post_prompt(&mut self, now_ms: u64) {
        let Some(attempt) = self.session.next_prompt_attempt() else {
            return;
        };
        let (kind, path, body) = match attempt {
            Attempt::Create { nonce } => {
                let agent = self.opts.pi_native.clone().unwrap_or_default();
                // Peeked, not taken: a failed create keeps it for the next send.
                let title = self.sessions.title_later_of(&self.session.id);
                let body = commands::create(&format!("create:{nonce}"), title);
                let path = commands::sessions_path(&agent);
                (RequestKind::NativeCreate, path, body)
            }
            Attempt::Prompt(body) => {
                let base = self.session.native_base(self.opts.native_agent());
                (RequestKind::NativePrompt, format!("{base}/prompt"), body)
            }
        };
        let id = self.request(kind, Method::Post, path, Some(to_string(&body)), now_ms);
        self.session.turn.phase = Phase::Submitted { stream: id };
        self.revisions.touch();
    }

    /// Sends the given-up prompt again, as the same turn: its nonce, its `requestId`, its
    /// optimistic message (still shown, with the error until now).
    pub(in crate::store) fn resend_unsent_prompt(&mut self, now_ms: u64) -> bool {
        if !self.session.can_resend_prompt(self.status().is_busy()) {
            return false;
        }
        let Some((nonce, mut out)) = self.session.native.unsent_prompt.take() else {
            return false;
        };
        (out.attempts, out.retry_at) = (0, None);
        let max_event_bytes = self.opts.limits.max_event_bytes;
        self.session.begin_prompt(nonce, out, max_event_bytes);
        self.post_prompt(now_ms);
        true
    }

    /// What the prompt machine is told (a new message, its attempt's answer or failure, or
    /// the clock), and what the store does of it. A stopped prompt's answer is moot (a
    /// session not made stays missing). A failed attempt is tried again after a backoff with the same `requestId`
    /// while the error is worth it and attempts are left, else the turn fails; given up after
    /// its attempts, a prompt whose fate is unknown (no answer, a 5xx) is kept for
    /// `regenerate()` ([`resend_unsent_prompt`](Self::resend_unsent_prompt)).
    pub(in crate::store) fn on_prompt(&mut self, input: PromptInput<'_>, now_ms: u64) {
        let next = match input {
            PromptInput::New {
                text,
                files,
                bubble,
            } => {
                // A link that gave up follows again with the user's send: its run must be seen.
                if self.session.native.link.gave_up() && !self.session.native.missing {
                    self.session.follow_again();
                    self.pump_native(now_ms);
                }
                let nonce = uuid_v4(self.rng.as_mut());
                let history = self.session.conversation.history();
                if let Some(bubble) = bubble.and_then(|id| history.get(&id).cloned()) {
                    self.session.track_prompt(&nonce, bubble, &text);
                }
                let out = PromptOut {
                    text,
                    files,
                    attempts: 0,
                    retry_at: None,
                    met_a_run: false,
                };
                let max_event_bytes = self.opts.limits.max_event_bytes;
                self.session.begin_prompt(nonce, out, max_event_bytes);
                PromptMove::Post
            }
            PromptInput::Answer(id, kind, answer) => {
                if self.session.turn.phase.stream() != Some(id) {
                    return;
                }
                let rng = self.rng.as_mut();
                self.session
                    .native
                    .prompt_answered(kind, answer, now_ms, rng)
            }
            PromptInput::Clock => match self.session.prompt_due(now_ms) {
                Some(next) => next,
                None => return,
            },
        };
        match next {
            PromptMove::Taken => {}
            PromptMove::Post => self.post_prompt(now_ms),
            PromptMove::Created(session_id) => {
                self.sessions.take_title(&self.session.id);
                // The open session is `session_id` on the server from now on (it named the
                // session this store made): the list, the requests on their way and the host
                // (`onSessionChange`) follow.
                let old = std::mem::replace(&mut self.session.id, session_id.clone());
                if old != session_id {
                    let pending = self.outbox.pending.values_mut();
                    for p in pending.filter(|p| p.session == old) {
                        p.session = session_id.clone();
                    }
                    self.sessions.rekey(&old, &session_id);
                    self.outbox.events.push_back(StoreEvent::SessionChange {
                        session_id,
                        renamed_from: Some(old),
                    });
                }
                self.pump_native(now_ms);
                self.post_prompt(now_ms);
            }
            PromptMove::GiveUp { out, error } => {
                self.session.keep_unsent_prompt(out);
                self.end_turn(Ending::Failed(error), now_ms);
            }
            // Sent as a follow-up of the run that refused it instead.
            PromptMove::FollowUp(error) => {
                let Some(out) = self.session.prompt_to_follow_up() else {
                    return;
                };
                self.session.native.link.reread();
                self.pump_native(now_ms);
                match self.send(&out.text, Vec::new(), now_ms).reason {
                    None | Some(Refusal::Empty) => {}
                    Some(_) if self.draft.text.is_empty() && self.draft.files.is_empty() => {
                        self.draft.text = out.text;
                    }
                    Some(_) => self.outbox.events.push_back(StoreEvent::Error { error }),
                }
                self.revisions.touch();
            }
            PromptMove::Wait(wait) => {
                self.outbox.diagnostic(&format!(
                    "the prompt was refused as busy again; sent again in {wait} ms"
                ));
                // A run the events did not show (started before this client read on) shows
                // in the state.
                self.session.native.link.reread();
                self.pump_native(now_ms);
            }
            PromptMove::Failed { mut error, reread } => {
                if reread {
                    self.session.native.link.reread();
                    self.pump_native(now_ms);
                }
                let jitter = self.rng.unit();
                let policy = self.opts.retry;
                match (self.session.native).attempt_failed(&mut error, &policy, jitter, now_ms) {
                    Failure::Retry => {
                        self.outbox
                            .diagnostic(&format!("the prompt is sent again: {}", error.message));
                        return;
                    }
                    Failure::GiveUp(out) => self.session.keep_unsent_prompt(out),
                    // The server answered no: nothing of the message is there, so nothing of
                    // it stays here, and the composer gets it back (SPEC §5, §14.1). Where
                    // the composer holds something else, the message stays, with the error:
                    // nothing typed is lost.
                    Failure::Fail(Some(out))
                        if self.draft.text.is_empty() && self.draft.files.is_empty() =>
                    {
                        self.session.withdraw_current_prompt();
                        (self.draft.text, self.draft.files) = (out.text, out.files);
                    }
                    Failure::Fail(_) => {}
                }
                self.end_turn(Ending::Failed(error), now_ms);
            }
        }
    }
}

/// What the prompt machine is told.
pub(in crate::store) enum PromptInput<'a> {
    /// A new message over this protocol (`bubble`: its optimistic message's id, if shown):
    /// tracked, its turn started, its first attempt sent.
    New {
        text: String,
        files: Vec<FileAttachment>,
        bubble: Option<String>,
    },
    /// The answer to its attempt `id` of this kind (the prompt's, or the session's
    /// creation), or the attempt's failure.
    Answer(RequestId, RequestKind, NativeAnswer<'a>),
    /// The clock moved: a failed attempt may be due again.
    Clock,
}

/// The next attempt of the prompt on its way, for the store to send.
pub(in crate::store) enum Attempt {
    /// `POST …/sessions`: the server does not have the session yet.
    Create { nonce: String },
    /// `POST …/prompt`, this body.
    Prompt(Value),
}

/// The prompts' tracking: which run is this client's prompt's, and their optimistic messages.
impl Session {
    /// The prompt `out` with the nonce `nonce` is the next turn's (a new message, or a given-up
    /// one sent again): the turn starts afresh, `submitted` once its attempt goes.
    pub(in crate::store) fn begin_prompt(
        &mut self,
        nonce: String,
        out: PromptOut,
        max_event_bytes: usize,
    ) {
        self.native.prompt_cursor = None;
        self.turn.restart(Some(nonce), max_event_bytes);
        self.error = None;
        self.turn.send_queue_when_idle = false;
        self.native.stopped_prompt = None;
        // A new message instead of the given-up one: that one stays as it is, failed.
        self.native.unsent_prompt = None;
        self.native.prompt = Some(out);
    }

    /// The optimistic message `bubble` of the prompt `nonce` (of `text`) is kept until its
    /// run shows it, with the count of the server's messages of its text so far.
    pub(in crate::store) fn track_prompt(&mut self, nonce: &str, bubble: UIMessage, text: &str) {
        if self.native.prompts.len() >= MAX_PROMPTS_KEPT {
            self.native.prompts.remove(0);
        }
        self.native.prompts.push(SentPrompt {
            nonce: nonce.to_string(),
            bubble,
            texts_before: 0,
        });
        // Counted once it is tracked: its own bubble is not one of the server's messages.
        let texts_before = self.server_texts(text);
        if let Some(p) = self.native.prompts.last_mut() {
            p.texts_before = texts_before;
        }
    }

    /// The clock moved: what the prompt's failed attempt, due again, leads to. Only while its
    /// turn waits for it: a stop, or its run showing (a state read can say so too), ended
    /// that, and the attempt is dropped with its timer.
    pub(in crate::store) fn prompt_due(&mut self, now_ms: u64) -> Option<PromptMove> {
        let out = self.native.prompt.as_ref();
        let due = out.and_then(PromptOut::retry_at);
        let met_a_run = out.is_some_and(|o| o.met_a_run);
        if !matches!(self.turn.phase, Phase::Submitted { .. }) {
            self.native.prompt = None;
            return None;
        }
        if due.is_none_or(|t| t > now_ms) {
            return None;
        }
        if met_a_run && self.native.link.gate().status() == RunStatus::Running {
            // Refused as busy, and the state read since shows the run that refused it.
            let error = ChatError::new(ErrorKind::TurnAlreadyActive, "a run is on");
            return Some(PromptMove::FollowUp(error));
        }
        Some(PromptMove::Post)
    }

    /// The prompt on its way goes as a follow-up of the run that refused it: taken (`None`:
    /// none is on its way), its bubble gone (the follow-up shows as a waiting bubble, then as
    /// the server's), and that run followed.
    pub(in crate::store) fn prompt_to_follow_up(&mut self) -> Option<PromptOut> {
        let out = self.native.prompt.take()?;
        self.withdraw_current_prompt();
        let stream = self.native.read.unwrap_or(0);
        self.turn.phase = Phase::Streaming { stream };
        Some(out)
    }

    /// The prompt on its way goes once more (`None`: none is on its way): its attempt counted,
    /// its retry and busy flag cleared.
    pub(in crate::store) fn next_prompt_attempt(&mut self) -> Option<Attempt> {
        let out = self.native.prompt.as_mut()?;
        out.attempts += 1;
        out.retry_at = None;
        out.met_a_run = false;
        let nonce = self.turn.client_turn_id.clone().unwrap_or_default();
        if self.native.missing {
            return Some(Attempt::Create { nonce });
        }
        Some(Attempt::Prompt(commands::prompt(
            &nonce, &out.text, &out.files,
        )))
    }

    /// The run `turn_id` is on: this client's prompt's, or one it follows.
    pub(in crate::store) fn prompt_runs(&mut self, turn_id: Option<String>) {
        // The server has the prompt: an attempt still due (its answer was lost) is moot.
        self.native.prompt = None;
        self.native.busy_refusals = 0;
        self.turn.growth.run_started();
        self.turn.turn_id = turn_id;
        if !matches!(self.turn.phase, Phase::Streaming { .. }) {
            let stream = self.native.read.unwrap_or(0);
            self.turn.phase = Phase::Streaming { stream };
            self.error = None;
        }
    }

    /// [`Self::prompt_runs`] in the run the events show now.
    pub(in crate::store) fn prompt_runs_in_shown_run(&mut self) {
        let link = &self.native.link;
        let turn_id = link.gate().turn_id().map(str::to_string);
        self.prompt_runs(turn_id);
    }

    /// The optimistic message of the prompt on its way goes (refused, or a follow-up now).
    pub(in crate::store) fn withdraw_current_prompt(&mut self) {
        let nonce = self.turn.client_turn_id.as_deref();
        if let Some(i) = self
            .native
            .prompts
            .iter()
            .position(|p| Some(p.nonce.as_str()) == nonce)
        {
            let bubble = self.native.prompts.remove(i).bubble;
            self.conversation.withdraw(&bubble.id);
        }
    }

    /// The server's user message `message_id` with `nonce` is in the history: the optimistic
    /// copy of that prompt goes, unless it became that message (the reducer adopts the last
    /// one shown; a stopped or failed prompt's run can come after another was sent).
    pub(in crate::store) fn server_shows_prompt(&mut self, message_id: &str, nonce: Option<&str>) {
        let Some(i) = nonce.and_then(|n| self.native.prompts.iter().position(|p| p.nonce == n))
        else {
            return;
        };
        let bubble = self.native.prompts.remove(i).bubble;
        if bubble.id != message_id && self.conversation.history().get(&bubble.id).is_some() {
            self.conversation.withdraw(&bubble.id);
        }
    }

    /// After a state read: a prompt the state shows ran leaves the list; the optimistic
    /// message of one it does not show is shown again, after the server's messages, and so
    /// is the message of a turn held for a take-back (not sent yet).
    pub(in crate::store) fn keep_unshown_prompts(&mut self) {
        if let Phase::Held(h) = &self.turn.phase {
            let shown = |m: &UIMessage| self.conversation.history().get(&m.id).is_some();
            if let Some(bubble) = h.bubble.as_ref().filter(|m| !shown(m)) {
                self.conversation.keep_local(bubble.clone());
            }
        }
        let shown: Vec<Option<String>> = (0..self.native.prompts.len())
            .map(|i| self.prompt_message(i))
            .collect();
        let prompts = std::mem::take(&mut self.native.prompts);
        for (prompt, shown) in prompts.into_iter().zip(shown) {
            if let Some(id) = shown {
                // The server's message is this prompt's from now on, whatever it names.
                let nonce = Value::String(prompt.nonce);
                self.conversation.edit_message(&id, |m| {
                    let meta = m.metadata.get_or_insert_with(|| Box::new(json!({})));
                    if let Some(o) = meta.as_object_mut() {
                        o.entry("clientNonce").or_insert(nonce);
                    }
                });
                continue;
            }
            let history = self.conversation.history();
            if history.get(&prompt.bubble.id).is_none() {
                self.conversation.keep_local(prompt.bubble.clone());
            }
            self.native.prompts.push(prompt);
        }
    }

    /// A prompt given up (its turn fails) is kept, with its nonce, for `regenerate()`: the
    /// server may have it, and only the same `requestId` cannot run it twice.
    pub(in crate::store) fn keep_unsent_prompt(&mut self, out: Option<PromptOut>) {
        let nonce = self.turn.client_turn_id.clone();
        if let (Some(nonce), Some(out)) = (nonce, out) {
            self.native.unsent_prompt = Some((nonce, out));
        }
    }

    /// A given-up prompt can be sent again now (`regenerate()` over this transport): no turn
    /// is on, and its message has not shown up on the server.
    /// `busy` is the store's status: a turn is on.
    pub(in crate::store) fn can_resend_prompt(&self, busy: bool) -> bool {
        let unsent = self.native.unsent_prompt.as_ref();
        !busy && unsent.is_some_and(|(nonce, _)| !self.committed(nonce))
    }
}
