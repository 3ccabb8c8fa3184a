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
            DeleteAnswer::NotQueued => true,
            _ => false,
        }
    }
}

impl TakeBacks {
    /// The server holds no copy of this one any more: taking it back needs no request.
    #[cfg(feature = "pi")]
    pub(super) fn taken_already(&mut self, nonce: &str) {
        self.gone.push(nonce.to_string());
    }

    /// This page took `nonce` back or is taking it back: the server's copy is not a
    /// waiting bubble any more.
    #[cfg(feature = "pi")]
    pub(super) fn knows(&self, nonce: &str) -> bool {
        self.gone.iter().any(|n| n == nonce) || self.open.iter().any(|t| t.nonce == nonce)
    }

    /// Whether a copy may still be on the server: a new turn waits.
    pub(super) fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// When a DELETE that got no answer is due again.
    pub(super) fn due_at(&self) -> Option<u64> {
        let waiting = self.open.iter().filter(|t| t.request.is_none());
        waiting.filter_map(|t| t.retry_at).min()
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

    /// The answer to `id`, if it is one of these: the nonce it took back and what it says.
    /// An unanswered one waits `backoff(failures)` and goes again.
    fn answered(
        &mut self,
        id: RequestId,
        answer: DeleteAnswer,
        now_ms: u64,
        backoff: impl Fn(u32) -> u64,
    ) -> Option<String> {
        let idx = self.open.iter().position(|t| t.request == Some(id))?;
        #[cfg(feature = "pi")]
        if answer == DeleteAnswer::NotQueued {
            // Open until the state says whether it ran: a turn held for it waits.
            let t = &mut self.open[idx];
            t.request = None;
            t.unsure = true;
            return Some(t.nonce.clone());
        }
        if answer != DeleteAnswer::Unanswered {
            let nonce = self.open.remove(idx).nonce;
            self.gone.push(nonce.clone());
            return Some(nonce);
        }
        let t = &mut self.open[idx];
        t.request = None;
        t.failures += 1;
        t.retry_at = Some(now_ms + backoff(t.failures));
        Some(t.nonce.clone())
    }
}

impl ChatStore {
    /// Deletes the server's copy of a posted follow-up, until the server answers (once: a
    /// copy already taken back is not asked for again).
    pub(super) fn take_back(&mut self, seq: u64, nonce: &str, now_ms: u64) {
        if self.session.take_backs.gone.iter().any(|n| n == nonce) {
            return;
        }
        let open = &mut self.session.take_backs.open;
        let idx = match open.iter().position(|t| t.nonce == nonce) {
            Some(i) if open[i].request.is_some() => return, // on its way already
            Some(i) => i,
            None => {
                open.push(TakeBack {
                    seq,
                    nonce: nonce.to_string(),
                    request: None,
                    unsure: false,
                    failures: 0,
                    retry_at: None,
                });
                open.len() - 1
            }
        };
        let id = self.delete_followup(seq, nonce, now_ms);
        let t = &mut self.session.take_backs.open[idx];
        t.request = Some(id);
        t.retry_at = None;
    }

    fn delete_followup(&mut self, seq: u64, nonce: &str, now_ms: u64) -> RequestId {
        #[cfg(feature = "pi")]
        if self.native() {
            let path = format!("{}/queue/clear", self.native_base());
            let body = crate::native_link::commands::clear_one(nonce, seq);
            return self.request(
                RequestKind::FollowUpDelete,
                Method::Post,
                path,
                Some(to_string(&body)),
                now_ms,
            );
        }
        let path = format!(
            "{}?clientNonce={}&clientSeq={seq}",
            self.route(|r| &r.followup),
            encode(nonce)
        );
        self.request(
            RequestKind::FollowUpDelete,
            Method::Delete,
            path,
            None,
            now_ms,
        )
    }

    /// Sends again what got no answer and is due (`now_ms` of a session just made current:
    /// everything that failed while it was parked).
    pub(super) fn send_due_take_backs(&mut self, now_ms: u64) {
        let due: Vec<(u64, String)> = (self.session.take_backs.open.iter())
            .filter(|t| t.request.is_none() && t.retry_at.is_some_and(|at| at <= now_ms))
            .map(|t| (t.seq, t.nonce.clone()))
            .collect();
        for (seq, nonce) in due {
            self.take_back(seq, &nonce, now_ms);
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
            let Some(nonce) = parked.take_backs.answered(id, answer, now_ms, backoff) else {
                continue;
            };
            parked.take_backs.due_now();
            // An unsure one is settled by the state read that opening the session makes.
            if answer == DeleteAnswer::Started {
                // Reopening the session reads its history, which shows (and attaches to) the run.
                parked.runs_on_server(&nonce);
            }
            return;
        }
    }

    fn after_take_back(&mut self, nonce: &str, answer: DeleteAnswer, now_ms: u64) {
        match answer {
            DeleteAnswer::Unanswered => {}
            #[cfg(feature = "pi")]
            DeleteAnswer::NotQueued => {
                // Its run may be in the history already; else the state is read again.
                match self.committed(nonce) {
                    true => self.settle_unsure_take_backs(now_ms),
                    false => self.reread_state(now_ms),
                }
            }
            // The copy can no longer run: a message waiting for that goes now.
            DeleteAnswer::Gone => self.start_held_turn(now_ms),
            DeleteAnswer::Started => {
                self.diagnostic("a follow-up taken back had already started on the server");
                self.session.runs_on_server(nonce);
                self.touch();
                // Another message waiting goes (a 409 `turn_already_active` attaches it).
                self.start_held_turn(now_ms);
                // Its run is the server's: the history shows it (and attaches if it goes on);
                // without one, the stream route is asked.
                if matches!(self.session.phase, Phase::Idle { .. }) {
                    if self.native() {
                        // The state read that settled it showed no run on (else the store
                        // follows it): what waits behind it goes on as the next messages.
                        self.session.send_queue_when_idle = true;
                        self.send_next_queued(now_ms);
                    } else if self.opts.hydrate {
                        self.hydrate(now_ms);
                    } else if self.opts.attach {
                        self.probe(now_ms);
                    }
                }
            }
        }
    }
}

#[cfg(feature = "pi")]
impl ChatStore {
    /// After a state read (pi-native): each take-back the server answered "not queued" is
    /// settled by the history: its user message there means it ran (as `Started`), none means
    /// the server never had it or dropped it (as `Gone`: a turn held for it goes on).
    pub(super) fn settle_unsure_take_backs(&mut self, now_ms: u64) {
        let unsure: Vec<String> = (self.session.take_backs.open.iter())
            .filter(|t| t.unsure)
            .map(|t| t.nonce.clone())
            .collect();
        for nonce in unsure {
            let tb = &mut self.session.take_backs;
            tb.open.retain(|t| t.nonce != nonce);
            tb.gone.push(nonce.clone());
            let answer = match self.committed(&nonce) {
                true => DeleteAnswer::Started,
                false => DeleteAnswer::Gone,
            };
            self.after_take_back(&nonce, answer, now_ms);
        }
    }
}

impl Session {
    /// The server runs the follow-up `nonce` already: it leaves the queue, and a turn held to
    /// send its text again is dropped with its bubble (the server's run shows it).
    pub(super) fn runs_on_server(&mut self, nonce: &str) {
        self.queue.consume_by_nonce(nonce);
        if matches!(&self.phase, Phase::Held(h) if h.nonce.as_deref() == Some(nonce)) {
            if let Some(bubble) = self.phase.take_held().and_then(|h| h.bubble) {
                self.conversation.withdraw(&bubble);
            }
        }
    }
}
