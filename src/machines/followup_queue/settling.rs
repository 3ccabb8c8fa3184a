//! Settling items from what the stream and the server said: consuming by nonce or seq,
//! re-queueing cleared items, marking, stranding and re-sending.

use super::*;

impl FollowUpQueue {
    /// The server's queue holds the follow-up `(nonce, seq, text)` (pi-native's
    /// `queue-updated`, SPEC §14, which is authoritative for the waiting bubbles): one of ours
    /// whose answer was lost or refused is `accepted` after all (one with a request on its way
    /// waits for that answer), and one this queue does not hold (sent by another tab, or
    /// before a reload) is shown, `accepted`, so the user sees it wait and can remove it by
    /// its selectors. A nonce consumed already changes nothing. True when the queue changed.
    pub fn server_holds(&mut self, nonce: &str, seq: u64, text: &str) -> bool {
        if self.is_consumed(nonce) {
            return false;
        }
        let in_flight = self.in_flight.as_ref().map(|f| f.item_id.clone());
        let version = self.next_version();
        if let Some(item) = self.items.iter_mut().find(|i| i.client_nonce == nonce) {
            let lost = matches!(item.state, ItemState::Queued | ItemState::Failed)
                && item.ever_posted
                && in_flight.as_deref() != Some(item.id.as_str());
            if lost {
                item.state = ItemState::Accepted;
                item.error = None;
                item.next_attempt_at_ms = None;
                item.version = version;
            }
            return lost;
        }
        self.raise_seq(seq);
        let mut item = FollowUpItem::new(nonce, seq, text.to_string(), Vec::new(), None);
        (item.state, item.ever_posted, item.version) = (ItemState::Accepted, true, version);
        self.items.push(item);
        true
    }

    /// The server turned the follow-up with this nonce into a message (a user `message-start`
    /// with `clientNonce`, or `data-followup-consumed` with `clientNonce`): it leaves the queue
    /// and comes back in state `consumed`. The nonce is remembered, so a repeated signal is a
    /// no-op. A request in flight for it keeps the slot until its answer.
    pub fn consume_by_nonce(&mut self, nonce: &str) -> Option<FollowUpItem> {
        if self.is_consumed(nonce) {
            return None;
        }
        let idx = self.items.iter().position(|i| i.client_nonce == nonce)?;
        Some(self.consume_at(idx))
    }

    /// `data-followup-consumed` with a `clientSeq` but no nonce: the posted item with that seq.
    /// Items never posted cannot have been consumed, so they never match.
    pub fn consume_by_seq(&mut self, seq: u64) -> Option<FollowUpItem> {
        let idx = self
            .items
            .iter()
            .position(|i| i.ever_posted && i.client_seq == seq)?;
        Some(self.consume_at(idx))
    }

    /// `data-followup-consumed` without any key (older servers): the oldest item the server may
    /// have (`ever_posted`), FIFO as the server runs them; never matched by text, since two
    /// items may say the same thing. The store should use it only for servers that do not send
    /// nonces, or one consumption reported both ways would consume two items.
    pub fn consume_oldest_posted(&mut self) -> Option<FollowUpItem> {
        let idx = self.items.iter().position(|i| i.ever_posted)?;
        Some(self.consume_at(idx))
    }

    /// A user message with this text and no selectors (pi-native's server drops them on the
    /// follow-ups it runs, SPEC §14.1): the oldest item with that text the server may hold,
    /// FIFO, as the server matches texts itself. Items never posted, and another client's
    /// rows, never match.
    pub fn consume_oldest_posted_with_text(&mut self, text: &str) -> Option<FollowUpItem> {
        let idx = self.items.iter().position(|i| {
            i.text == text && (i.may_be_on_server() || i.state == ItemState::Unsure)
        })?;
        Some(self.consume_at(idx))
    }

    /// The server's queue lost the follow-ups `nonces` to a clear of the whole queue that
    /// was not meant for them (pi-native's server removes only all at once): each is queued
    /// again, in its place, to be posted again with its nonce under a fresh `clientSeq` (a
    /// fresh request id: the old one's receipt would be replayed and nothing queued).
    pub fn requeue_cleared(&mut self, nonces: &[String], now_ms: u64) {
        let mut first = None;
        for idx in 0..self.items.len() {
            if !nonces.contains(&self.items[idx].client_nonce) {
                continue;
            }
            first.get_or_insert(idx);
            let version = self.next_version();
            let item = &mut self.items[idx];
            (item.state, item.ever_posted, item.held) = (ItemState::Queued, false, false);
            (item.attempts, item.error, item.resend) = (0, None, false);
            item.next_attempt_at_ms = None;
            item.version = version;
        }
        if let Some(idx) = first {
            self.fresh_seqs_from(idx, now_ms);
        }
    }

    /// The item `nonce` is in doubt: the server may have run it or dropped it
    /// ([`ItemState::Unsure`]). Nothing goes out for it until the user decides.
    pub fn mark_unsure(&mut self, nonce: &str) -> bool {
        let version = self.next_version();
        let Some(item) = (self.items.iter_mut()).find(|i| i.client_nonce == nonce) else {
            return false;
        };
        (item.state, item.resend, item.held) = (ItemState::Unsure, false, false);
        item.next_attempt_at_ms = None;
        item.version = version;
        true
    }

    /// The user removed `item_id`, which the server may still run: its bubble stays, marked,
    /// until the server's queue no longer holds it. False for another client's row.
    pub fn mark_removing(&mut self, item_id: &str, removing: bool) -> bool {
        let version = self.next_version();
        let Some(item) = self.items.iter_mut().find(|i| i.id == item_id) else {
            return false;
        };
        if item.removing != removing {
            item.removing = removing;
            item.version = version;
        }
        // Removed: not sent again as a message either.
        item.resend &= !removing;
        true
    }

    /// The item `nonce`, taken out (a removal the server confirmed).
    pub fn take_by_nonce(&mut self, nonce: &str) -> Option<FollowUpItem> {
        let idx = self.items.iter().position(|i| i.client_nonce == nonce)?;
        Some(self.detach(idx))
    }

    /// Sets an item's error (shown with its bubble) without changing its state.
    pub fn note_error(&mut self, item_id: &str, error: Option<ChatError>) {
        let version = self.next_version();
        if let Some(item) = self.items.iter_mut().find(|i| i.id == item_id) {
            item.error = error;
            item.version = version;
        }
    }

    /// Another client's row `item_id` says why the user's action on it did nothing (shown
    /// with its bubble while the server's queue shows it). True when it is such a row.
    #[cfg(feature = "pi")]
    pub fn note_on_mirror(&mut self, item_id: &str, error: ChatError) -> bool {
        let version = self.next_version();
        let Some(m) = self.mirrors.iter_mut().find(|m| m.id == item_id) else {
            return false;
        };
        (m.error, m.version) = (Some(error), version);
        true
    }

    /// The turn ended without consuming what the server may hold: items it accepted, and
    /// items whose POST left but got no answer (a retry pending, or failed after the last
    /// try; one the server refused stays `failed`). Those become
    /// `stalled` (visible, for retry-as-new-message or remove; idempotent: called again when an
    /// answer arrives after the turn ended); with `resend` (a natural end) those the server
    /// accepted or may have are also to be sent again as new messages, in their order, before
    /// anything behind them (a `failed` one waits for the user, as it would have). Returns the
    /// `(clientSeq, clientNonce)` of each, for the DELETE that takes it back from the server's
    /// queue: a copy left there runs after the next message, out of the user's order; and a
    /// retried POST after that DELETE would only be told `deleted`.
    pub fn strand(&mut self, resend: bool) -> Vec<(u64, String)> {
        let mut taken = Vec::new();
        for idx in 0..self.items.len() {
            let item = &self.items[idx];
            let maybe_there = matches!(item.state, ItemState::Queued | ItemState::Failed)
                && item.may_be_on_server();
            if item.state == ItemState::Accepted || maybe_there {
                let version = self.next_version();
                let item = &mut self.items[idx];
                let failed = item.state == ItemState::Failed;
                item.state = ItemState::Stalled;
                item.next_attempt_at_ms = None;
                // Sent again only where that keeps the user's order.
                item.resend = resend && !item.passed && !failed;
                item.version = version;
                taken.push((item.client_seq, item.client_nonce.clone()));
            }
        }
        taken
    }

    /// The first item to send again as a new message ([`strand`](Self::strand) with
    /// `resend`), if it is the queue's head (only `stalled` items the user decides on before
    /// it): it leaves the queue.
    pub fn take_first_resend(&mut self) -> Option<FollowUpItem> {
        if self.in_flight.is_some() {
            return None;
        }
        let idx = self.first_resend()?;
        Some(self.detach(idx))
    }

    /// Whether an item goes out on its own once nothing is in flight: the queue's head (past
    /// the `stalled` items that wait for the user) is to be sent again, still queued, or on its
    /// way. A `failed` head waits for the user.
    pub fn has_next(&self) -> bool {
        let mut live =
            (self.items.iter()).filter(|i| (!i.state.waits_for_user() || i.resend) && !i.removing);
        live.next().is_some_and(|i| i.state != ItemState::Failed)
    }

    /// The nonce of the item [`take_first_resend`](Self::take_first_resend) would take.
    pub fn next_resend(&self) -> Option<&str> {
        let idx = self.first_resend()?;
        Some(&self.items[idx].client_nonce)
    }

    pub(super) fn first_resend(&self) -> Option<usize> {
        let idx = (self.items.iter())
            .position(|i| (!i.state.waits_for_user() || i.resend) && !i.removing)?;
        self.items[idx].resend.then_some(idx)
    }

    /// The turn ended and nothing is in flight: if the head of the queue is `queued` and was
    /// never posted, it leaves the queue and the store sends it as a normal chat message (the
    /// rest keep waiting and follow as follow-ups). `stalled` items in front are skipped: the
    /// server will not run them, they wait for the user. An `accepted` item in front (the turn
    /// end not yet applied with [`strand`](Self::strand)), a
    /// `failed` head, or one the server may already have yield `None`.
    pub fn take_first_unposted(&mut self) -> Option<FollowUpItem> {
        if self.in_flight.is_some() {
            return None;
        }
        let idx = self
            .items
            .iter()
            .position(|i| !i.state.waits_for_user() && !i.removing)?;
        let item = &self.items[idx];
        if item.state != ItemState::Queued || item.ever_posted {
            return None;
        }
        Some(self.detach(idx))
    }

    // ----- internals -----
}
