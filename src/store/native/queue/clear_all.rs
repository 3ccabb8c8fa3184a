//! A clear of the server's whole queue (the live server removes nothing by selectors,
//! SPEC §14.1): when it is safe to send, what it removed (read from the events at the seq
//! it happened), and the items of this store's it took along, posted again in order.

use super::*;
use crate::machines::followup_queue::RetryPolicy;

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
    pub(super) sent_as: RequestId,
    /// The receipt's `(cursor, cleared)`.
    pub(super) receipt: Option<(u64, u64)>,
    /// The server's queue since before the clear went, by the seq the events showed it at.
    pub(super) log: Vec<(u64, Vec<QueueRow>)>,
    /// Failed attempts, for the backoff.
    pub(super) failures: u32,
    /// The next attempt, after a failure.
    pub(in crate::store) retry_at: Option<u64>,
}

impl ChatStore {
    /// Sends what takes follow-ups back from the server: `one` (`(seq, nonce)`) by its
    /// selectors while the server may remove by them; else (or `None`) every take-back
    /// waiting, by one clear of the whole queue, if that is safe now
    /// ([`Session::clear_all_ready`]).
    pub(in crate::store) fn take_back_native(&mut self, one: Option<(u64, &str)>, now_ms: u64) {
        let base = self.session.native_base(self.opts.native_agent());
        let path = format!("{base}/queue/clear");
        let selective = self.session.native.selective_clear != SelectiveClear::Noop;
        if let Some((seq, nonce)) = one.filter(|_| selective) {
            let body = Some(to_string(&commands::clear_one(nonce, seq)));
            let id = self.request(
                RequestKind::FollowUpDelete,
                Method::Post,
                path,
                body,
                now_ms,
            );
            return self.session.take_backs.sent(nonce, id);
        }
        match self.session.clear_all_ready(now_ms, self.rng.as_mut()) {
            ClearReady::Wait => {}
            ClearReady::Refused => self.revisions.touch(),
            ClearReady::Go(request_id) => {
                let body = Some(to_string(&json!({ "requestId": request_id })));
                let id = self.request(RequestKind::NativeClear, Method::Post, path, body, now_ms);
                self.session.clear_all_sent(request_id, id);
            }
        }
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
            self.outbox
                .diagnostic("the queue clear's effect is not in the events: the state is read");
            self.session.native.link.reread();
            self.pump_native(now_ms);
            // Take-backs that came while it was out wait for a clear of their own.
            return self.take_back_native(None, now_ms);
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
            self.revisions.touch();
        }
        if !requeue.is_empty() {
            self.session.queue.requeue_cleared(&requeue, now_ms);
            self.revisions.touch();
        }
        // The POSTs that waited for the clear go.
        self.pump(now_ms);
        self.send_next_queued(now_ms);
        // What waits for a clear of its own (a removal made while this one was decided).
        self.take_back_native(None, now_ms);
    }
}

impl NativeSession {
    /// A clear of the whole queue is out or not decided yet: no follow-up POST goes. One
    /// that lands before the clear is taken along and posted again under a fresh seq, behind
    /// the items posted after it: out of the user's order.
    pub(in crate::store) fn clear_all_open(&self) -> bool {
        self.clear_all.is_some()
    }
}

/// Whether the clear of the whole queue goes now.
pub(in crate::store) enum ClearReady {
    /// Not now: the take-backs wait (for an answer, an event, a backoff), or none waits.
    Wait,
    /// Never: another client's rows are in the server's queue; the take-backs failed, and
    /// their items say why.
    Refused,
    /// Now, under this request id (the same across retries).
    Go(String),
}

impl Session {
    /// Whether the clear of the whole queue can go now for the take-backs waiting: no
    /// follow-up POST of this store is out (its item could land after the clear, or be
    /// taken along unseen), and every row of the server's queue is this store's (another
    /// client's would be lost). A POST out makes it wait for that answer; another client's
    /// rows make the take-backs fail: the items stay, and say why. A new clear's request id
    /// is drawn from `rng`.
    pub(in crate::store) fn clear_all_ready(
        &mut self,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> ClearReady {
        if !self.take_backs.any_waiting() {
            return ClearReady::Wait;
        }
        if let Some(clear) = &self.native.clear_all {
            if let Some(at) = clear.retry_at.filter(|at| *at > now_ms) {
                // Sent again when its backoff is over, for these too: they wait until then.
                self.take_backs.wait_until(at);
                return ClearReady::Wait;
            }
            if clear.request.is_some() || clear.receipt.is_some() {
                // Its answer covers these too; one waiting for its events is decided first,
                // and a new clear follows for what it did not serve.
                self.take_backs.wait_for_event();
                return ClearReady::Wait;
            }
        }
        if self.queue.in_flight().is_some() {
            // The follow-up POST's answer calls again.
            self.take_backs.wait_for_event();
            return ClearReady::Wait;
        }
        if self.queue.has_mirrors() {
            self.take_backs_refused(SHARED_QUEUE);
            return ClearReady::Refused;
        }
        ClearReady::Go(match &self.native.clear_all {
            Some(c) => c.request_id.clone(),
            None => format!("clear:{}", uuid_v4(rng)),
        })
    }

    /// The clear `request_id` went as the request `id`, for every take-back waiting. A first
    /// one starts the log of the server's queue from what the events show now.
    pub(in crate::store) fn clear_all_sent(&mut self, request_id: String, id: RequestId) {
        let gate = self.native.link.gate();
        let shown = (gate.seq(), gate.queue().to_vec());
        let clear = self.native.clear_all.get_or_insert_with(|| ClearAll {
            request_id,
            request: None,
            sent_as: id,
            receipt: None,
            log: vec![shown],
            failures: 0,
            retry_at: None,
        });
        (clear.request, clear.sent_as, clear.retry_at) = (Some(id), id, None);
        self.take_backs.sent_all(id);
    }

    /// The clear of the whole queue answered (or failed: `None`): `Ok` once its receipt is
    /// in (what it removed is decided when the events reach its cursor); `Err` when it is
    /// asked again after a backoff (`policy`), with the server's refusal if it answered one.
    /// `None`: not the clear's request in flight.
    pub(in crate::store) fn clear_all_answered(
        &mut self,
        id: RequestId,
        answer: Option<(u16, &[u8])>,
        policy: &RetryPolicy,
        rng: &mut dyn RandomSource,
        now_ms: u64,
    ) -> Option<Result<(), Option<ChatError>>> {
        let clear = self.native.clear_all.as_mut()?;
        if clear.request != Some(id) {
            return None;
        }
        clear.request = None;
        let receipt = answer
            .filter(|(status, _)| (200..300).contains(status))
            .and_then(|(_, body)| crate::protocol::json::from_slice(body).ok())
            .and_then(|v| Some((v.get("cursor")?.as_u64()?, v.get("cleared")?.as_u64()?)));
        if let Some(receipt) = receipt {
            clear.receipt = Some(receipt);
            return Some(Ok(()));
        }
        // Asked again under the same request id: a clear that happened answers its first
        // receipt, one that did not happens then.
        clear.failures += 1;
        let delay = policy.backoff_ms(clear.failures, rng.unit());
        clear.retry_at = Some(now_ms + delay);
        self.take_backs.unsent(id, now_ms + delay);
        let refused = answer.map(|(status, body)| refusal(status, body, "queue clear answer"));
        Some(Err(refused))
    }

    /// Every take-back waiting: it cannot go (`why`). The server keeps those items and runs
    /// them when it runs its queue: they are shown as waiting there, with the reason.
    pub(in crate::store) fn take_backs_refused(&mut self, why: &str) {
        let nonces = self.take_backs.drain_waiting();
        for nonce in nonces {
            let id = format!("fu-{nonce}");
            let removal = self.queue.get(&id).is_some_and(|i| i.removing);
            self.kept_on_server(&nonce);
            let why = match removal {
                true => format!("{NOT_REMOVED}{why}"),
                false => why.to_string(),
            };
            let error = ChatError::new(ErrorKind::Validation, why);
            self.queue.note_error(&id, Some(error));
        }
    }

    /// The server keeps the follow-up `nonce` and will run it: its bubble waits as
    /// `accepted` (a removal or a re-send of it is off), and a turn held to send its text
    /// again is dropped.
    pub(in crate::store) fn kept_on_server(&mut self, nonce: &str) {
        self.queue.keep_accepted(nonce);
        let s = self;
        if matches!(&s.turn.phase, Phase::Held(h) if h.nonce.as_deref() == Some(nonce)) {
            if let Some(bubble) = s.turn.phase.take_held().and_then(|h| h.bubble) {
                s.conversation.withdraw(&bubble.id);
            }
        }
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
