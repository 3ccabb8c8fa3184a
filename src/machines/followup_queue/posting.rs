//! Posting: the next request, its timer, its answer, and restoring what a reload left.

use super::*;

impl FollowUpQueue {
    /// The next POST to make, if any. Only when nothing is in flight, and strictly FIFO: the
    /// first item the server does not have yet is the only candidate, taken when it is `queued`
    /// and its backoff has ended. A `failed` head blocks everything behind it. The item becomes
    /// `posting`, its attempt is counted, and the request gets a fresh ticket.
    pub fn poll_request(&mut self, now_ms: u64) -> Option<FollowUpPost> {
        if self.in_flight.is_some() {
            return None;
        }
        let idx = self.head()?;
        let item = &self.items[idx];
        // A taken-back item ahead is sent as a new message first: nothing passes it.
        if item.state != ItemState::Queued || item.next_attempt_at_ms.is_some_and(|t| t > now_ms) {
            return None;
        }
        self.last_ticket += 1;
        let ticket = self.last_ticket;
        let version = self.next_version();
        let item = &mut self.items[idx];
        item.state = ItemState::Posting;
        item.attempts = item.attempts.saturating_add(1);
        item.ever_posted = true;
        item.next_attempt_at_ms = None;
        item.version = version;
        self.in_flight = Some(InFlight {
            ticket,
            item_id: item.id.clone(),
        });
        Some(FollowUpPost {
            ticket,
            item_id: item.id.clone(),
            client_seq: item.client_seq,
            client_nonce: item.client_nonce.clone(),
            text: item.text.clone(),
            files: item.files.clone(),
        })
    }

    /// When the next [`poll_request`](Self::poll_request) could yield something because a
    /// backoff ends. `None` when nothing waits on time: a request is in flight, the head is due
    /// at once (poll now), blocked, or there is nothing to post.
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.in_flight.is_some() {
            return None;
        }
        let item = &self.items[self.head()?];
        if item.state != ItemState::Queued {
            return None;
        }
        item.next_attempt_at_ms
    }

    // ----- inputs -----

    /// The answer for `ticket`. An answer for anything but the request in flight (a late answer
    /// of an aborted request, an item removed or consumed meanwhile) changes nothing: `None`.
    ///
    /// - `Accepted` (duplicate or not) → `accepted`, error cleared.
    /// - `Deleted` → the item leaves the queue: the user already cancelled it.
    /// - `Aborted` → back to `queued`, the attempt not counted, due at once; re-posting with the
    ///   same seq and nonce is safe because the server deduplicates by nonce.
    /// - `Failed`: `FollowUpUnsupported` → `failed` + [`QueueEffect::Unsupported`];
    ///   `FollowUpOutOfOrder` → renumbered above the refused seq and `queued` again, due at
    ///   once (SPEC §6), up to [`MAX_RENUMBERS`] times in a row; then `failed` +
    ///   [`QueueEffect::Failed`] (retry gives it a fresh seq);
    ///   retryable with attempts left → `queued`, due after [`RetryPolicy::backoff_ms`];
    ///   otherwise → `failed` + [`QueueEffect::Failed`].
    pub fn handle_response(
        &mut self,
        ticket: u64,
        outcome: PostOutcome,
        now_ms: u64,
        jitter: f64,
    ) -> Option<QueueEffect> {
        if self.in_flight() != Some(ticket) {
            return None;
        }
        let InFlight { item_id, .. } = self.in_flight.take()?;
        // An item removed or consumed while its POST was out is gone: the answer only frees
        // the slot.
        let idx = self.index_of(&item_id)?;
        let outcome = match outcome {
            PostOutcome::Failed(e) if e.kind == ErrorKind::Aborted => PostOutcome::Aborted,
            PostOutcome::Failed(e) if e.kind == ErrorKind::FollowUpOutOfOrder => {
                if self.renumber(idx, now_ms) {
                    return None;
                }
                PostOutcome::Failed(e)
            }
            other => other,
        };
        let version = self.next_version();
        let max_attempts = self.policy.max_attempts.max(1);
        let item = &mut self.items[idx];
        item.version = version;
        match outcome {
            PostOutcome::Accepted { .. } => {
                item.state = ItemState::Accepted;
                item.error = None;
                self.renumbers = 0;
                None
            }
            PostOutcome::Deleted => {
                self.items.remove(idx);
                None
            }
            PostOutcome::Aborted => {
                item.state = ItemState::Queued;
                item.attempts = item.attempts.saturating_sub(1);
                item.next_attempt_at_ms = None;
                None
            }
            PostOutcome::Failed(error) => {
                let kind = error.kind;
                let retryable = error.is_retryable();
                item.error = Some(error);
                match kind {
                    ErrorKind::FollowUpUnsupported => {
                        item.state = ItemState::Failed;
                        Some(QueueEffect::Unsupported { item_id })
                    }
                    ErrorKind::FollowUpOutOfOrder => {
                        item.state = ItemState::Failed;
                        item.needs_fresh_seq = true;
                        Some(QueueEffect::Failed { item_id })
                    }
                    _ if retryable && item.attempts < max_attempts => {
                        item.state = ItemState::Queued;
                        let delay = self.policy.backoff_ms(item.attempts, jitter);
                        item.next_attempt_at_ms = Some(now_ms.saturating_add(delay));
                        None
                    }
                    _ => {
                        item.state = ItemState::Failed;
                        Some(QueueEffect::Failed { item_id })
                    }
                }
            }
        }
    }

    /// Forgets the request in flight (session switch, dispose): its item goes back to `queued`
    /// with the attempt not counted and due at once, and a late answer under the old ticket is
    /// ignored. Returns the aborted ticket so the store can abort the fetch.
    pub fn abort_in_flight(&mut self) -> Option<u64> {
        let InFlight { ticket, item_id } = self.in_flight.take()?;
        if let Some(idx) = self.index_of(&item_id) {
            let version = self.next_version();
            let item = &mut self.items[idx];
            item.state = ItemState::Queued;
            item.attempts = item.attempts.saturating_sub(1);
            item.next_attempt_at_ms = None;
            item.version = version;
        }
        Some(ticket)
    }

    /// A stalled item back at the head of the queue: one taken out to be sent again as a new
    /// message (its server copy taken back) whose send the user stopped before it went.
    pub fn restore_stalled(
        &mut self,
        nonce: &str,
        text: String,
        files: Vec<FileAttachment>,
        options: Option<Box<SendOptions>>,
    ) {
        let mut item = FollowUpItem::new(nonce, 0, text, files, options);
        (item.state, item.ever_posted) = (ItemState::Stalled, true);
        item.version = self.next_version();
        self.items.insert(0, item);
    }

    /// A follow-up never posted back at the head of the queue, `queued` under its nonce and
    /// seq: one taken out to be sent as the next message whose send the user stopped before
    /// it went (a stop sends nothing that is queued, and keeps it).
    pub fn restore_queued(
        &mut self,
        nonce: &str,
        seq: u64,
        text: String,
        files: Vec<FileAttachment>,
        options: Option<Box<SendOptions>>,
    ) {
        self.retired.retain(|n| n != nonce);
        let mut item = FollowUpItem::new(nonce, seq, text, files, options);
        item.version = self.next_version();
        self.items.insert(0, item);
    }
}
