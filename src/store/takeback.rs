//! Taking posted follow-ups back from the server's queue (SPEC §6): the user's remove, the
//! items stranded at a turn's end or kept across a stop, and the copy a re-sent message
//! replaces. Each DELETE goes until the server answers it: a copy left there runs later,
//! after whatever the user sends next (the real server keeps pi's queue), so a lost DELETE
//! is sent again after a backoff for as long as the session lives.

use super::*;

/// A DELETE that has not been answered yet, or waits to be sent again.
#[derive(Debug)]
struct TakeBack {
    seq: u64,
    nonce: String,
    /// Its text: a server that names no selectors shows the row by it.
    #[cfg_attr(not(feature = "pi"), allow(dead_code))]
    text: String,
    /// In flight; `None` while it waits for `retry_at`.
    request: Option<RequestId>,
    /// pi-native: the server said the item is not queued, which does not say whether it ran:
    /// the state read that follows decides ([`ChatStore::settle_unsure_take_backs`]).
    unsure: bool,
    failures: u32,
    retry_at: Option<u64>,
}

/// One session's take-backs.
#[derive(Debug, Default)]
pub(super) struct TakeBacks {
    open: Vec<TakeBack>,
    /// Nonces whose DELETE the server answered: taking one back again needs no request.
    gone: Vec<String>,
}

/// What the server said to a follow-up DELETE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeleteAnswer {
    /// Any answer below 500 other than [`Started`](Self::Started): the copy is gone (or was
    /// never there) and cannot run.
    Gone,
    /// 409 `followup_already_started`: the server runs it already; it is not sent again.
    Started,
    /// pi-native's 409 `AGENT_REQUEST_CONFLICT` to a clear with both selectors: the item is
    /// not in the server's queue. It may have run, or never have been there (its POST lost or
    /// overtaken, a stop, an earlier clear whose answer was lost): the session's state tells.
    #[cfg(feature = "pi")]
    NotQueued,
    /// pi-native: the server kept the item although it was named by its selectors: it is
    /// taken back with a clear of the whole queue (`native/queue.rs`).
    #[cfg(feature = "pi")]
    ClearAll,
    /// No answer, or a 5xx: the copy may still be there.
    Unanswered,
}

impl DeleteAnswer {
    pub(super) fn of(status: Option<u16>, body: &[u8]) -> DeleteAnswer {
        match status {
            Some(409) if ChatError::from_http(409, body).says("followup_already_started") => {
                DeleteAnswer::Started
            }
            #[cfg(feature = "pi")]
            Some(409) if ChatError::from_http(409, body).says("AGENT_REQUEST_CONFLICT") => {
                DeleteAnswer::NotQueued
            }
            Some(s) if s != 0 && s < 500 => DeleteAnswer::Gone,
            _ => DeleteAnswer::Unanswered,
        }
    }

    /// An answer the store acts on (`settle`), not a failure to show.
    pub(super) fn acted_on(self) -> bool {
        match self {
            DeleteAnswer::Started => true,
            #[cfg(feature = "pi")]
            DeleteAnswer::NotQueued | DeleteAnswer::ClearAll => true,
            _ => false,
        }
    }
}

impl TakeBacks {
    /// The server holds no copy of this one any more: taking it back needs no request.
    #[cfg(feature = "pi")]
    pub(super) fn taken_already(&mut self, nonce: &str) {
        self.open.retain(|t| t.nonce != nonce);
        self.gone.push(nonce.to_string());
    }

    /// pi-native: the take-backs waiting for a request wait for an event now (a follow-up
    /// POST's answer, the clear before theirs decided), not for a time.
    #[cfg(feature = "pi")]
    pub(super) fn wait_for_event(&mut self) {
        for t in self
            .open
            .iter_mut()
            .filter(|t| t.request.is_none() && !t.unsure)
        {
            t.retry_at = None;
        }
    }

    /// pi-native: the take-backs waiting for a request go at `at` (with the clear of the
    /// whole queue that waits for its backoff until then).
    #[cfg(feature = "pi")]
    pub(super) fn wait_until(&mut self, at: u64) {
        for t in self
            .open
            .iter_mut()
            .filter(|t| t.request.is_none() && !t.unsure)
        {
            t.retry_at = Some(at);
        }
    }

    /// A take-back of `nonce` is open (on its way, or waiting to go).
    #[cfg(feature = "pi")]
    pub(super) fn is_open(&self, nonce: &str) -> bool {
        self.open.iter().any(|t| t.nonce == nonce)
    }

    /// `nonce` is posted (again): the server may hold a copy.
    pub(super) fn posted(&mut self, nonce: &str) {
        self.gone.retain(|n| n != nonce);
    }

    /// The server confirmed it holds no copy of `nonce` any more.
    #[cfg(feature = "pi")]
    pub(super) fn is_gone(&self, nonce: &str) -> bool {
        self.gone.iter().any(|n| n == nonce)
    }

    /// Whether a copy may still be on the server: a new turn waits.
    pub(super) fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// When a DELETE that got no answer is due again.
    pub(super) fn due_at(&self) -> Option<u64> {
        let waiting = self
            .open
            .iter()
            .filter(|t| t.request.is_none() && !t.unsure);
        waiting.filter_map(|t| t.retry_at).min()
    }

    /// Take-backs that wait for a request (none out for them), and are due at `now_ms`.
    fn due(&self, now_ms: u64) -> impl Iterator<Item = &TakeBack> {
        (self.open.iter()).filter(move |t| {
            t.request.is_none() && !t.unsure && t.retry_at.is_none_or(|at| at <= now_ms)
        })
    }

    /// The `(seq, nonce)` of the take-backs to send now (`now_ms` of a session just made
    /// current: everything that failed while it was parked).
    pub(super) fn due_keys(&self, now_ms: u64) -> Vec<(u64, String)> {
        (self.due(now_ms).map(|t| (t.seq, t.nonce.clone()))).collect()
    }

    /// A session parked meanwhile: what failed is sent as soon as it is current again.
    fn due_now(&mut self) {
        for t in self
            .open
            .iter_mut()
            .filter(|t| t.request.is_none() && !t.unsure)
        {
            t.retry_at = Some(0);
        }
    }

    /// The nonce the take-back request `id` is out for.
    #[cfg(feature = "pi")]
    pub(super) fn nonce_of(&self, id: RequestId) -> Option<String> {
        let t = self.open.iter().find(|t| t.request == Some(id))?;
        Some(t.nonce.clone())
    }

    /// The request `id` is out for `nonce`.
    pub(super) fn sent(&mut self, nonce: &str, id: RequestId) {
        if let Some(t) = self.open.iter_mut().find(|t| t.nonce == nonce) {
            t.request = Some(id);
            t.retry_at = None;
        }
    }

    /// pi-native: take-backs that wait for a request, due or not.
    #[cfg(feature = "pi")]
    pub(super) fn any_waiting(&self) -> bool {
        (self.open.iter()).any(|t| t.request.is_none() && !t.unsure)
    }

    /// pi-native: one request (a clear of the whole queue) is out for every take-back that
    /// waits.
    #[cfg(feature = "pi")]
    pub(super) fn sent_all(&mut self, id: RequestId) {
        for t in self
            .open
            .iter_mut()
            .filter(|t| t.request.is_none() && !t.unsure)
        {
            t.request = Some(id);
            t.retry_at = None;
        }
    }

    /// pi-native: the request `id` failed: those it was out for go again at `retry_at`.
    #[cfg(feature = "pi")]
    pub(super) fn unsent(&mut self, id: RequestId, retry_at: u64) {
        for t in self.open.iter_mut().filter(|t| t.request == Some(id)) {
            t.request = None;
            t.failures += 1;
            t.retry_at = Some(retry_at);
        }
    }

    /// pi-native: the `(nonce, seq, text)` of the take-backs the request `id` is out for.
    #[cfg(feature = "pi")]
    pub(super) fn served_by(&self, id: RequestId) -> Vec<(String, u64, String)> {
        let served = self.open.iter().filter(|t| t.request == Some(id));
        served
            .map(|t| (t.nonce.clone(), t.seq, t.text.clone()))
            .collect()
    }

    /// pi-native: the take-backs waiting for a request, which cannot be sent: dropped (the
    /// server keeps those items), their nonces returned.
    #[cfg(feature = "pi")]
    pub(super) fn drain_waiting(&mut self) -> Vec<String> {
        let (waiting, rest): (Vec<TakeBack>, Vec<TakeBack>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|t| t.request.is_none() && !t.unsure);
        self.open = rest;
        waiting.into_iter().map(|t| t.nonce).collect()
    }

    /// The server ran `nonce`: a take-back of it is moot.
    #[cfg(feature = "pi")]
    pub(super) fn ran(&mut self, nonce: &str) {
        let before = self.open.len();
        self.open.retain(|t| t.nonce != nonce);
        if self.open.len() != before {
            self.gone.push(nonce.to_string());
        }
    }

    /// The request `id`'s answer, if it is one of these: the nonce it took back. See
    /// [`resolve`](Self::resolve).
    fn answered(
        &mut self,
        id: RequestId,
        answer: DeleteAnswer,
        now_ms: u64,
        backoff: impl Fn(u32) -> u64,
    ) -> Option<String> {
        let nonce = self
            .open
            .iter()
            .find(|t| t.request == Some(id))?
            .nonce
            .clone();
        self.resolve(&nonce, answer, now_ms, backoff);
        Some(nonce)
    }

    /// What the server said of the take-back of `nonce`: gone or started ends it; not
    /// queued leaves it open until the state says whether it ran; a clear of the whole queue
    /// is due for it at once; no answer sends it again after `backoff(failures)`.
    pub(super) fn resolve(
        &mut self,
        nonce: &str,
        answer: DeleteAnswer,
        now_ms: u64,
        backoff: impl Fn(u32) -> u64,
    ) {
        let Some(idx) = self.open.iter().position(|t| t.nonce == nonce) else {
            return;
        };
        let t = &mut self.open[idx];
        t.request = None;
        match answer {
            DeleteAnswer::Gone | DeleteAnswer::Started => {
                let nonce = self.open.remove(idx).nonce;
                self.gone.push(nonce);
            }
            // Open until the state says whether it ran: a turn held for it waits.
            #[cfg(feature = "pi")]
            DeleteAnswer::NotQueued => t.unsure = true,
            #[cfg(feature = "pi")]
            DeleteAnswer::ClearAll => t.retry_at = None,
            DeleteAnswer::Unanswered => {
                t.failures += 1;
                t.retry_at = Some(now_ms + backoff(t.failures));
            }
        }
    }
}

impl ChatStore {
    /// Deletes the server's copy of a posted follow-up, until the server answers (once: a
    /// copy already taken back is not asked for again).
    pub(super) fn take_back(&mut self, seq: u64, nonce: &str, now_ms: u64) {
        if self.session.open_take_back(seq, nonce) {
            self.send_take_back(seq, nonce, now_ms);
        }
    }

    /// A follow-up DELETE came back (of this session or a parked one).
    pub(super) fn on_delete_answered(&mut self, id: RequestId, answer: DeleteAnswer, now_ms: u64) {
        let jitter = self.rng.unit();
        let retry = self.opts.retry;
        let backoff = |failures| retry.backoff_ms(failures, jitter);
        let current = &mut self.session;
        if let Some(nonce) = current.take_backs.answered(id, answer, now_ms, backoff) {
            return self.after_take_back(&nonce, answer, now_ms);
        }
        for parked in self.parked.values_mut() {
            if parked.parked_delete_answered(id, answer, now_ms, backoff) {
                return;
            }
        }
    }

    pub(super) fn after_take_back(&mut self, nonce: &str, answer: DeleteAnswer, now_ms: u64) {
        match answer {
            DeleteAnswer::Unanswered => {}
            #[cfg(feature = "pi")]
            DeleteAnswer::ClearAll => self.take_back_native(None, now_ms),
            #[cfg(feature = "pi")]
            DeleteAnswer::NotQueued => {
                // Its run may be in the history already; else the state is read again.
                match self
                    .session
                    .ran_per_history(&[nonce.to_string()])
                    .is_empty()
                {
                    false => self.settle_unsure_take_backs(now_ms),
                    true => {
                        self.session.native.link.reread();
                        self.pump_native(now_ms)
                    }
                }
            }
            DeleteAnswer::Gone => {
                // A removal the server confirmed: the bubble kept until then goes.
                if self
                    .session
                    .queue
                    .items()
                    .iter()
                    .any(|i| i.client_nonce == nonce && i.removing)
                {
                    self.session.queue.take_by_nonce(nonce);
                    self.revisions.touch();
                }
                // The copy can no longer run: a message waiting for that goes now.
                self.start_held_turn(now_ms)
            }
            DeleteAnswer::Started => {
                self.outbox
                    .diagnostic("a follow-up taken back had already started on the server");
                self.session.runs_on_server(nonce);
                self.revisions.touch();
                // Another message waiting goes (a 409 `turn_already_active` attaches it).
                self.start_held_turn(now_ms);
                // Its run is the server's: the history shows it (and attaches if it goes on);
                // without one, the stream route is asked.
                if matches!(self.session.turn.phase, Phase::Idle { .. }) {
                    self.follow_run_elsewhere(now_ms);
                }
            }
        }
    }
}

#[cfg(feature = "pi")]
impl ChatStore {
    /// After a state read (pi-native): each take-back the server answered "not queued" is
    /// settled by the history and the state's queue: its message in the history means it
    /// ran (as `Started`); still in the queue, it is taken back again; neither, the server
    /// dropped it or never had it (as `Gone`: a turn held for it goes on). Where another
    /// client's message may be the one the history shows, the store cannot tell: the item is
    /// `unsure`, for the user, and nothing is sent for it.
    pub(super) fn settle_unsure_take_backs(&mut self, now_ms: u64) {
        let unsure: Vec<(u64, String)> = (self.session.take_backs.open.iter())
            .filter(|t| t.unsure)
            .map(|t| (t.seq, t.nonce.clone()))
            .collect();
        let nonces: Vec<String> = unsure.iter().map(|(_, n)| n.clone()).collect();
        let ran = self.session.ran_per_history(&nonces);
        for (seq, nonce) in unsure {
            let item = self
                .session
                .queue
                .items()
                .iter()
                .find(|i| i.client_nonce == nonce);
            // Still in the state's queue (its item may be out of the store's queue already,
            // a held turn about to send its text): taken back again.
            let held = item.is_some_and(|i| i.held) || self.session.server_holds(&nonce);
            let doubt = item.is_some_and(|i| self.session.queue.foreign_text(&i.text));
            let tb = &mut self.session.take_backs;
            if held {
                if let Some(t) = tb.open.iter_mut().find(|t| t.nonce == nonce) {
                    (t.unsure, t.retry_at) = (false, None);
                }
                self.take_back(seq, &nonce, now_ms);
                continue;
            }
            tb.open.retain(|t| t.nonce != nonce);
            tb.gone.push(nonce.clone());
            if ran.contains(&nonce) && doubt {
                self.session.queue.mark_unsure(&nonce);
                self.revisions.touch();
                self.start_held_turn(now_ms);
                continue;
            }
            let answer = match ran.contains(&nonce) {
                true => DeleteAnswer::Started,
                false => DeleteAnswer::Gone,
            };
            self.after_take_back(&nonce, answer, now_ms);
        }
    }
}

impl Session {
    /// Opens the take-back of the posted follow-up `(seq, nonce)`: `true` when its request
    /// is to be sent (not one already taken back, nor one on its way).
    pub(super) fn open_take_back(&mut self, seq: u64, nonce: &str) -> bool {
        if self.take_backs.gone.iter().any(|n| n == nonce) {
            return false;
        }
        let text_of = |s: &Session, nonce: &str| {
            let item = s.queue.items().iter().find(|i| i.client_nonce == nonce);
            let held = match &s.turn.phase {
                Phase::Held(h) if h.nonce.as_deref() == Some(nonce) => Some(h.text.clone()),
                _ => None,
            };
            item.map(|i| i.text.clone()).or(held).unwrap_or_default()
        };
        let text = text_of(self, nonce);
        let open = &mut self.take_backs.open;
        match open.iter().position(|t| t.nonce == nonce) {
            Some(i) if open[i].request.is_some() => return false, // on its way already
            Some(_) => {}
            None => open.push(TakeBack {
                seq,
                nonce: nonce.to_string(),
                text,
                request: None,
                unsure: false,
                failures: 0,
                retry_at: None,
            }),
        }
        true
    }

    /// A follow-up DELETE of this session, parked, came back: `true` when it was one of its
    /// own. What failed goes again when the session opens.
    fn parked_delete_answered(
        &mut self,
        id: RequestId,
        answer: DeleteAnswer,
        now_ms: u64,
        backoff: impl Fn(u32) -> u64,
    ) -> bool {
        let Some(nonce) = self.take_backs.answered(id, answer, now_ms, backoff) else {
            return false;
        };
        self.take_backs.due_now();
        // An unsure one is settled by the state read that opening the session makes.
        if answer == DeleteAnswer::Started {
            // Reopening the session reads its history, which shows (and attaches to) the run.
            self.runs_on_server(&nonce);
        }
        true
    }

    /// The server runs the follow-up `nonce` already: it leaves the queue, and a turn held to
    /// send its text again is dropped with its bubble (the server's run shows it).
    pub(super) fn runs_on_server(&mut self, nonce: &str) {
        self.queue.consume_by_nonce(nonce);
        if matches!(&self.turn.phase, Phase::Held(h) if h.nonce.as_deref() == Some(nonce)) {
            if let Some(bubble) = self.turn.phase.take_held().and_then(|h| h.bubble) {
                self.conversation.withdraw(&bubble.id);
            }
        }
    }
}
