//! Follow-ups over the pi-native transport (SPEC §14.1): which rows of the server's queue are
//! this store's, which follow-up a user message of the server is, and taking follow-ups back
//! from a server whose removal by selectors may do nothing.
//!
//! The rules, and why:
//! - **Identity without selectors.** The server often names no `clientNonce` / `clientSeq` on
//!   the user message of a follow-up it runs, nor on `/state`: such a message is the oldest
//!   follow-up of this store with its text that the server may hold (FIFO, as the server
//!   attaches selectors by text itself). Where the history is all there is (a state read
//!   after a gap), counting the messages of that text against what was there before the item
//!   was queued ([`FollowUpItem::texts_before`]) says whether it ran.
//! - **Ownership.** The store posts, takes back, re-sends and retries only what it posted: the
//!   server's rows it cannot match are another client's, shown read-only.
//! - **Take-backs.** A clear by selectors is tried first; a server that answers it with
//!   `cleared: 0` while its queue shows the item does not remove by selectors, and from then
//!   on the store clears the whole queue ([`ClearAll`]) and posts again, in order and under
//!   their nonces, the items of its own that the clear took along. That is safe only while
//!   every row of the server's queue is this store's and no follow-up POST is out (and none
//!   goes until the clear is decided); otherwise the item stays where it is, and the snapshot
//!   says why (a removal it kept is done when the server drops the item: a stop, a clear).
//! - **Exactly once beats at least once.** An item the store cannot place (the server's
//!   answer and its history leave it open whether it ran) is `unsure`, never sent again on
//!   its own.

use super::*;
use crate::machines::followup_queue::{ItemState, ServerRow};
use crate::protocol::pi_native::QueueRow;

/// Whether the server removes a follow-up named by its selectors (the real server at
/// 31361f15 answers `cleared: 0` and keeps it; only a clear of the whole queue works).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::store) enum SelectiveClear {
    /// Not seen yet: selectors are tried.
    #[default]
    Unknown,
    /// It removed one: selectors are used.
    Works,
    /// It answered `cleared: 0` for an item its queue showed: the whole queue is cleared.
    Noop,
}

/// A clear of the server's whole queue, sent to take back this store's follow-ups
/// ([`TakeBacks`] entries point at its request). Which rows it cleared is read from the
/// events, not guessed: the receipt's `cursor` says where the clear happened, and the
/// server's queue as the events showed it just before is what it removed.
#[derive(Debug)]
pub(in crate::store) struct ClearAll {
    /// The request id, kept across retries: the server answers a repeat with the first
    /// receipt, so a lost answer is asked for again without clearing twice.
    pub(in crate::store) request_id: String,
    /// The request in flight, if any.
    pub(in crate::store) request: Option<RequestId>,
    /// The last request sent: the take-backs it serves point at it.
    sent_as: RequestId,
    /// The receipt's `(cursor, cleared)`.
    receipt: Option<(u64, u64)>,
    /// The server's queue since before the clear went, by the seq the events showed it at.
    log: Vec<(u64, Vec<QueueRow>)>,
    /// Failed attempts, for the backoff.
    failures: u32,
    /// The next attempt, after a failure.
    pub(in crate::store) retry_at: Option<u64>,
}

/// Where the server's queue was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::store) enum ServerView {
    /// A `queue-updated` event: its seq and its rows (the gate may be past it already, at
    /// the end of the batch of events it came in).
    Event(u64, Vec<QueueRow>),
    /// A state read (after a gap, a reconnect, the opening): the history may hold messages
    /// whose events this store never saw.
    State,
}

/// Why a take-back cannot go: said on the item's bubble.
const SHARED_QUEUE: &str =
    "the server's queue also holds another client's follow-ups, and this server removes only the whole queue";
/// How the bubble of a removal that cannot go starts: a clear of the whole queue that takes
/// the item along later does what the user asked, and it is not posted again.
const NOT_REMOVED: &str = "not removed: ";

impl ChatStore {
    /// The server's queue (the state's, or the latest `queue-updated`) decides what waits
    /// (SPEC §14): each row is one of this store's items or another client's read-only row.
    /// What the server holds while no run is on was accepted after the last one's end: it is
    /// stranded, and taken back as at a turn's end (SPEC §6).
    pub(in crate::store) fn follow_server_queue(&mut self, read: ServerView, now_ms: u64) {
        if let Some(clear) = self.session.native.clear_all.as_mut() {
            // The queue at the seq it was shown at: the rows a clear removed are read from it.
            let shown = match &read {
                ServerView::Event(seq, rows) => (*seq, rows.clone()),
                ServerView::State => {
                    let gate = self.session.native.link.gate();
                    (gate.seq(), gate.queue().to_vec())
                }
            };
            clear.log.push(shown);
        }
        let rows = self.session.native.link.gate().queue().to_vec();
        let server_rows: Vec<ServerRow<'_>> = rows.iter().map(server_row).collect();
        let mut changed = self.session.queue.follow_server(&server_rows);
        if self.consume_what_ran(&read) {
            // Take-backs of what ran are moot: a message held for them goes.
            self.start_held_turn(now_ms);
            changed = true;
        }
        self.send_removals(now_ms);
        let idle = matches!(self.session.turn.phase, Phase::Idle { .. })
            && self.session.native.link.gate().status() != RunStatus::Running;
        let held = (self.session.queue.items().iter())
            .any(|i| i.held && i.state == ItemState::Accepted && !i.removing);
        if idle && held {
            let natural = self.session.turn.send_queue_when_idle;
            self.take_back_stranded(natural, now_ms);
            self.send_next_queued(now_ms);
            changed = true;
        }
        if changed {
            self.touch();
        }
        self.decide_clear_all(now_ms);
    }

    /// Items the server may hold that its history shows ran (a state read after a gap that
    /// lost their messages' events): consumed. By nonce always; by the count of their text
    /// after a state read, the only time the events did not say it themselves.
    fn consume_what_ran(&mut self, read: &ServerView) -> bool {
        let candidates: Vec<String> = (self.session.queue.items().iter())
            .filter(|i| i.may_be_on_server() && !i.held)
            .map(|i| i.client_nonce.clone())
            .collect();
        if candidates.is_empty() {
            return false;
        }
        let ran = match read {
            ServerView::State => self.ran_per_history(&candidates),
            ServerView::Event(..) => {
                let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
                self.committed_of(&refs)
            }
        };
        for nonce in &ran {
            self.session.runs_on_server(nonce);
            self.session.take_backs.ran(nonce);
        }
        !ran.is_empty()
    }

    /// A user message the server committed: the prompt it is, or the follow-up it ran (by
    /// its nonce, its seq, or its text where the server named neither).
    pub(in crate::store) fn on_native_user_message(
        &mut self,
        nonce: Option<&str>,
        seq: Option<u64>,
        text: Option<&str>,
        now_ms: u64,
    ) {
        let q = &mut self.session.queue;
        // Selectors the server attached by text may name an item that ran already (of two
        // alike, the second's message can carry the first's): those say nothing.
        let nonce = nonce.filter(|n| !q.is_consumed(n));
        let consumed = match (nonce, seq) {
            (Some(n), _) => q.consume_by_nonce(n),
            (None, Some(s)) => q.consume_by_seq(s),
            _ => None,
        };
        // This client's own prompt carries its nonce; a message without one is a follow-up
        // (this store's, or another client's: then none of ours has its text on the server,
        // or the server ran theirs first, FIFO).
        let consumed = match (consumed, nonce) {
            (None, None) => text.and_then(|t| q.consume_oldest_posted_with_text(t)),
            (c, _) => c,
        };
        if let (None, Some(t)) = (&consumed, text) {
            // Not one of the queued items (a prompt, another client's message): one more
            // message of its text before theirs, for a later count of the history.
            q.one_more_text(t);
        }
        if let Some(item) = consumed {
            // A take-back of it is moot: it ran, and a message held for it goes.
            self.session.take_backs.ran(&item.client_nonce);
            self.start_held_turn(now_ms);
            self.touch();
        }
    }

    /// Of the follow-ups `nonces` the server may have held, those its history shows ran:
    /// by nonce where the messages carry one, else by counting the messages of each text
    /// against what the history held before the item was queued (FIFO among items of one
    /// text).
    pub(in crate::store) fn ran_per_history(&self, nonces: &[String]) -> Vec<String> {
        let refs: Vec<&str> = nonces.iter().map(String::as_str).collect();
        let by_nonce = self.committed_of(&refs);
        let mut ran = by_nonce.clone();
        // The server's messages only: a bubble of this client's (a held turn's, a prompt's
        // optimistic copy) of the same text is not one of them, and counting it took a
        // queued item of that text for run.
        let history = self.session.conversation.history().messages();
        let users: Vec<String> = (history.iter())
            .filter(|m| m.role == Role::User && !self.is_local(&m.id))
            .map(UIMessage::text)
            .collect();
        let items = self.session.queue.items();
        for nonce in nonces.iter().filter(|n| !by_nonce.contains(n)) {
            let Some(item) = items.iter().find(|i| &i.client_nonce == nonce) else {
                // Out of the queue, held as the next message: the server's messages of its
                // text (not the held bubble) say whether the server's copy ran.
                if let Phase::Held(h) = &self.session.turn.phase {
                    let held = h.nonce.as_deref() == Some(nonce.as_str());
                    if held && self.server_texts(&h.text) > h.texts_before {
                        ran.push(nonce.clone());
                    }
                }
                continue;
            };
            // Items of the same text ahead of it run before it.
            let ahead = (items.iter())
                .take_while(|i| i.client_nonce != item.client_nonce)
                .filter(|i| i.text == item.text && !i.read_only)
                .count();
            let count = users.iter().filter(|t| **t == item.text).count();
            if count > item.texts_before + ahead {
                ran.push(nonce.clone());
            }
        }
        ran
    }

    /// The server's user message count the item queued now with `text` starts from (this
    /// client's own bubbles left out, as [`Self::ran_per_history`] counts).
    pub(in crate::store) fn texts_in_history(&self, text: &str) -> usize {
        self.server_texts(text)
    }

    /// The user removes a waiting bubble. One the server may hold stays, marked, until the
    /// server confirms it gone (a take-back, which a follow-up POST still out waits for);
    /// one it cannot hold goes at once; another client's row is not this store's to remove.
    pub(in crate::store) fn remove_native(&mut self, item_id: &str, now_ms: u64) -> bool {
        let Some(item) = self.session.queue.get(item_id) else {
            return false;
        };
        let (seq, nonce, state) = (item.client_seq, item.client_nonce.clone(), item.state);
        let on_its_way = state == ItemState::Posting || self.session.take_backs.is_open(&nonce);
        if item.removing && on_its_way {
            return true;
        }
        // Taken back already (a stranded item waiting to be sent again, one a stop dropped):
        // the server has it no more.
        let on_server = item.may_be_on_server() && !self.session.take_backs.is_gone(&nonce);
        if !on_server {
            self.session.queue.remove(item_id);
            self.touch();
            self.pump(now_ms);
            self.send_next_queued(now_ms);
            return true;
        }
        self.session.queue.mark_removing(item_id, true);
        self.session.queue.note_error(item_id, None);
        if state != ItemState::Posting {
            self.take_back(seq, &nonce, now_ms);
        }
        self.touch();
        true
    }

    /// A follow-up POST answered: an item removed while it was out is taken back now that
    /// the server has it, and a clear of the whole queue that waited for the answer goes.
    pub(in crate::store) fn after_native_post(&mut self, now_ms: u64) {
        self.send_removals(now_ms);
        if self.session.native.selective_clear == SelectiveClear::Noop {
            self.clear_all(now_ms);
        }
    }

    /// Removals that wait for nothing any more (their POST answered, or aborted with a
    /// session switch): taken back, or, where the server cannot hold them, done.
    fn send_removals(&mut self, now_ms: u64) {
        let in_flight = self.session.queue.in_flight_item().map(str::to_string);
        let waiting: Vec<(u64, String, bool)> = (self.session.queue.items().iter())
            .filter(|i| i.removing && in_flight.as_deref() != Some(i.id.as_str()))
            .filter(|i| !self.session.take_backs.is_open(&i.client_nonce))
            .map(|i| (i.client_seq, i.client_nonce.clone(), i.may_be_on_server()))
            .collect();
        for (seq, nonce, on_server) in waiting {
            if on_server && !self.session.take_backs.is_gone(&nonce) {
                self.take_back(seq, &nonce, now_ms);
            } else {
                // Refused, never sent, or taken back already: nothing runs.
                self.session.queue.take_by_nonce(&nonce);
                self.touch();
            }
        }
    }

    /// Takes a follow-up back from the server: by its selectors while the server may remove
    /// by them, else by a clear of the whole queue (several take-backs share one).
    pub(in crate::store) fn take_back_native(&mut self, seq: u64, nonce: &str, now_ms: u64) {
        if self.session.native.selective_clear != SelectiveClear::Noop {
            let path = format!("{}/queue/clear", self.native_base());
            let body = commands::clear_one(nonce, seq);
            let id = self.request(
                RequestKind::FollowUpDelete,
                Method::Post,
                path,
                Some(to_string(&body)),
                now_ms,
            );
            return self.session.take_backs.sent(nonce, id);
        }
        self.clear_all(now_ms);
    }

    /// A stranded item whose removal the server kept (another client's rows were in its
    /// queue): the take-back that follows tries that removal again, and the item is not
    /// sent again as a new message.
    pub(in crate::store) fn removal_again(&mut self, nonce: &str) {
        let id = format!("fu-{nonce}");
        if self.session.queue.get(&id).is_some_and(removal_refused) {
            self.session.queue.mark_removing(&id, true);
        }
    }

    /// A clear of the whole queue is out or not decided yet: no follow-up POST goes. One
    /// that lands before the clear is taken along and posted again under a fresh seq, behind
    /// the items posted after it: out of the user's order.
    pub(in crate::store) fn clear_all_open(&self) -> bool {
        self.session.native.clear_all.is_some()
    }

    /// Sends the clear of the whole queue for the take-backs open, if it is safe now: no
    /// follow-up POST of this store is out (its item could land after the clear, or be
    /// taken along unseen), and every row of the server's queue is this store's (another
    /// client's would be lost). A POST out makes it wait for that answer; another client's
    /// rows make the take-backs fail: the items stay, and say why.
    pub(in crate::store) fn clear_all(&mut self, now_ms: u64) {
        if !self.session.take_backs.any_waiting() {
            return;
        }
        if let Some(clear) = &self.session.native.clear_all {
            if let Some(at) = clear.retry_at.filter(|at| *at > now_ms) {
                // Sent again when its backoff is over, for these too: they wait until then.
                return self.session.take_backs.wait_until(at);
            }
            if clear.request.is_some() || clear.receipt.is_some() {
                // Its answer covers these too; one waiting for its events is decided first,
                // and a new clear follows for what it did not serve.
                return self.session.take_backs.wait_for_event();
            }
        }
        if self.session.queue.in_flight().is_some() {
            // The follow-up POST's answer calls again.
            return self.session.take_backs.wait_for_event();
        }
        if self.session.queue.has_mirrors() {
            return self.take_backs_refused(SHARED_QUEUE);
        }
        let seq = self.session.native.link.gate().seq();
        let rows = self.session.native.link.gate().queue().to_vec();
        let request_id = match &self.session.native.clear_all {
            Some(c) => c.request_id.clone(),
            None => format!("clear:{}", uuid_v4(self.rng.as_mut())),
        };
        let path = format!("{}/queue/clear", self.native_base());
        let body = to_string(&json!({ "requestId": request_id }));
        let id = self.request(
            RequestKind::NativeClear,
            Method::Post,
            path,
            Some(body),
            now_ms,
        );
        let clear = self
            .session
            .native
            .clear_all
            .get_or_insert_with(|| ClearAll {
                request_id,
                request: None,
                sent_as: id,
                receipt: None,
                log: vec![(seq, rows)],
                failures: 0,
                retry_at: None,
            });
        (clear.request, clear.sent_as, clear.retry_at) = (Some(id), id, None);
        self.session.take_backs.sent_all(id);
    }

    /// Every take-back waiting: it cannot go (`why`). The server keeps those items and runs
    /// them when it runs its queue: they are shown as waiting there, with the reason.
    fn take_backs_refused(&mut self, why: &str) {
        let nonces = self.session.take_backs.drain_waiting();
        for nonce in nonces {
            let id = format!("fu-{nonce}");
            let removal = self.session.queue.get(&id).is_some_and(|i| i.removing);
            self.kept_on_server(&nonce);
            let why = match removal {
                true => format!("{NOT_REMOVED}{why}"),
                false => why.to_string(),
            };
            let error = ChatError::new(ErrorKind::Validation, why);
            self.session.queue.note_error(&id, Some(error));
        }
        self.touch();
    }

    /// The server keeps the follow-up `nonce` and will run it: its bubble waits as
    /// `accepted` (a removal or a re-send of it is off), and a turn held to send its text
    /// again is dropped.
    fn kept_on_server(&mut self, nonce: &str) {
        self.session.queue.keep_accepted(nonce);
        let s = &mut self.session;
        if matches!(&s.turn.phase, Phase::Held(h) if h.nonce.as_deref() == Some(nonce)) {
            if let Some(bubble) = s.turn.phase.take_held().and_then(|h| h.bubble) {
                s.conversation.withdraw(&bubble.id);
            }
        }
    }

    /// The clear of the whole queue answered (or failed: `None`).
    pub(in crate::store) fn on_clear_all_answer(
        &mut self,
        id: RequestId,
        answer: Option<(u16, &[u8])>,
        now_ms: u64,
    ) {
        let Some(clear) = self.session.native.clear_all.as_mut() else {
            return;
        };
        if clear.request != Some(id) {
            return;
        }
        clear.request = None;
        let receipt = answer
            .filter(|(status, _)| (200..300).contains(status))
            .and_then(|(_, body)| crate::protocol::json::from_slice(body).ok())
            .and_then(|v| Some((v.get("cursor")?.as_u64()?, v.get("cleared")?.as_u64()?)));
        match receipt {
            Some(r) => clear.receipt = Some(r),
            None => {
                // Asked again under the same request id: a clear that happened answers its
                // first receipt, one that did not happens then.
                clear.failures += 1;
                let jitter = self.rng.unit();
                let delay = self.opts.retry.backoff_ms(clear.failures, jitter);
                clear.retry_at = Some(now_ms + delay);
                self.session.take_backs.unsent(id, now_ms + delay);
                if let Some((status, body)) = answer {
                    let error = refusal(status, body, "queue clear answer");
                    self.diagnostic(&format!("the queue clear failed: {}", error.message));
                }
                return;
            }
        }
        self.decide_clear_all(now_ms);
    }

    /// Once the receipt is in and the events reached its cursor: the rows the clear removed
    /// are the server's queue just before it emptied. Of the take-backs it served, those
    /// rows are gone (a removal is done, a stranded item is sent again), the others were
    /// not in the queue any more (they ran, or the history decides). This store's items the
    /// clear took along without being asked are posted again, in their order.
    pub(in crate::store) fn decide_clear_all(&mut self, now_ms: u64) {
        let seq = self.session.native.link.gate().seq();
        let Some(clear) = self.session.native.clear_all.as_ref() else {
            return;
        };
        let Some((cursor, cleared)) = clear.receipt else {
            return;
        };
        if seq < cursor {
            return; // the events up to the clear are still on their way
        }
        let clear = self.session.native.clear_all.take().expect("checked above");
        let removed = rows_cleared(&clear.log, cursor, cleared);
        let served = self.session.take_backs.served_by(clear.sent_as);
        let Some(removed) = removed else {
            // The events do not show the clear (rows missing, a restart): the state decides.
            for (nonce, _, _) in &served {
                (self.session.take_backs).resolve(nonce, DeleteAnswer::NotQueued, now_ms, |_| 0);
            }
            self.diagnostic("the queue clear's effect is not in the events: the state is read");
            self.reread_state(now_ms);
            // Take-backs that came while it was out wait for a clear of their own.
            return self.clear_all(now_ms);
        };
        // Who the cleared rows were: the take-backs it served (their items may be out of the
        // queue already, on their way back as messages), then this store's other items.
        let mut candidates = served.clone();
        for i in self.session.queue.items() {
            if i.may_be_on_server() && !served.iter().any(|(n, _, _)| *n == i.client_nonce) {
                candidates.push((i.client_nonce.clone(), i.client_seq, i.text.clone()));
            }
        }
        let taken = match_rows(&removed, &candidates);
        let requeue: Vec<String> = (taken.iter())
            .filter(|n| !served.iter().any(|(s, _, _)| s == *n))
            .cloned()
            .collect();
        for (nonce, _, _) in served {
            let answer = match taken.contains(&nonce) {
                true => DeleteAnswer::Gone,
                false => DeleteAnswer::NotQueued,
            };
            (self.session.take_backs).resolve(&nonce, answer, now_ms, |_| 0);
            self.after_take_back(&nonce, answer, now_ms);
        }
        let (removed, requeue): (Vec<String>, Vec<String>) = (requeue.into_iter()).partition(|n| {
            (self.session.queue.items().iter()).any(|i| i.client_nonce == *n && removal_refused(i))
        });
        for nonce in &removed {
            self.session.queue.take_by_nonce(nonce);
            self.touch();
        }
        if !requeue.is_empty() {
            self.session.queue.requeue_cleared(&requeue, now_ms);
            self.touch();
        }
        // The POSTs that waited for the clear go.
        self.pump(now_ms);
        self.send_next_queued(now_ms);
        // What waits for a clear of its own (a removal made while this one was decided).
        self.clear_all(now_ms);
    }
}

impl Session {
    /// The answer to the selective clear `id` (a [`RequestKind::FollowUpDelete`] over this
    /// protocol) of this session: 202 with `cleared` ≥ 1 removed it; `cleared: 0` for an item
    /// the server's queue shows means this server does not remove by selectors (the whole
    /// queue is cleared instead); otherwise as [`DeleteAnswer::of`].
    pub(in crate::store) fn native_delete_answer(
        &mut self,
        id: RequestId,
        status: Option<u16>,
        body: &[u8],
    ) -> DeleteAnswer {
        let ok = status.is_some_and(|s| (200..300).contains(&s));
        if !ok {
            return DeleteAnswer::of(status, body);
        }
        let nonce = self.take_backs.nonce_of(id);
        let cleared = crate::protocol::json::from_slice(body)
            .ok()
            .and_then(|v| v.get("cleared")?.as_u64());
        match cleared {
            Some(0) => {
                if nonce.is_some_and(|n| self.server_holds(&n)) {
                    self.native.selective_clear = SelectiveClear::Noop;
                    DeleteAnswer::ClearAll
                } else {
                    DeleteAnswer::NotQueued
                }
            }
            _ => {
                if cleared.is_some() {
                    self.native.selective_clear = SelectiveClear::Works;
                }
                DeleteAnswer::Gone
            }
        }
    }

    /// The server's queue, as last reported, holds the follow-up `nonce` of this store's: a
    /// row names it, or (no selectors) its item is matched to one. Its item may be out of the
    /// queue already, on its way back as a new message (the held turn has its text).
    pub(in crate::store) fn server_holds(&self, nonce: &str) -> bool {
        let rows = self.native.link.gate().queue();
        if rows
            .iter()
            .any(|r| r.client_nonce.as_deref() == Some(nonce))
        {
            return true;
        }
        let item = self.queue.items().iter().find(|i| i.client_nonce == nonce);
        if let Some(item) = item {
            return item.held;
        }
        let held_text = match &self.turn.phase {
            Phase::Held(h) if h.nonce.as_deref() == Some(nonce) => Some(h.text.as_str()),
            _ => None,
        };
        held_text.is_some_and(|t| {
            rows.iter()
                .any(|r| r.client_nonce.is_none() && r.client_seq.is_none() && r.text == t)
        })
    }
}

/// The rows a clear of the whole queue removed: the queue as the events showed it just
/// before it last emptied at or before the receipt's `cursor`. `None` when the events
/// show no such change of `cleared` rows.
fn rows_cleared(log: &[(u64, Vec<QueueRow>)], cursor: u64, cleared: u64) -> Option<Vec<QueueRow>> {
    if cleared == 0 {
        return Some(Vec::new());
    }
    let upto: Vec<&(u64, Vec<QueueRow>)> = log.iter().filter(|(s, _)| *s <= cursor).collect();
    let emptied = (1..upto.len())
        .rev()
        .find(|&i| upto[i].1.is_empty() && !upto[i - 1].1.is_empty())?;
    let rows = &upto[emptied - 1].1;
    (rows.len() as u64 == cleared).then(|| rows.clone())
}

/// The nonces among `candidates` (`(nonce, seq, text)`, oldest first) that `rows` name: by
/// nonce, else by seq, else by text, FIFO, as the server attaches selectors.
fn match_rows(rows: &[QueueRow], candidates: &[(String, u64, String)]) -> Vec<String> {
    let mut taken = vec![false; candidates.len()];
    let mut rest = Vec::new();
    for row in rows {
        let by_selector = candidates.iter().position(|(n, s, _)| {
            row.client_nonce.as_deref() == Some(n.as_str())
                || (row.client_nonce.is_none() && row.client_seq == Some(*s))
        });
        match by_selector {
            Some(i) if !taken[i] => taken[i] = true,
            _ => rest.push(row),
        }
    }
    for row in rest {
        let by_text =
            (candidates.iter().enumerate()).position(|(i, (_, _, t))| !taken[i] && *t == row.text);
        if let Some(i) = by_text {
            taken[i] = true;
        }
    }
    let names = candidates.iter().zip(taken).filter(|(_, t)| *t);
    names.map(|((n, _, _), _)| n.clone()).collect()
}

/// The user removed `item`, which the server kept (its bubble says why): once the server
/// drops it (a clear of the whole queue, a stop), the removal is done.
pub(in crate::store) fn removal_refused(
    item: &crate::machines::followup_queue::FollowUpItem,
) -> bool {
    (item.error.as_ref()).is_some_and(|e| e.message.starts_with(NOT_REMOVED))
}

fn server_row(row: &QueueRow) -> ServerRow<'_> {
    ServerRow {
        id: &row.id,
        text: &row.text,
        nonce: row.client_nonce.as_deref(),
        seq: row.client_seq,
    }
}
