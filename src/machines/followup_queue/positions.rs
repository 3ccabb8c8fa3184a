//! Positions and numbering: the head, lookups, renumbering, and taking an item out.

use super::*;

impl FollowUpQueue {
    /// The first item the server does not have yet: the only one that may be posted.
    pub(super) fn head(&self) -> Option<usize> {
        // One the user removed is not posted again (its take-back decides what it was).
        self.items
            .iter()
            .position(|i| (!i.state.is_settled() || i.resend) && !i.removing)
    }

    pub(super) fn index_of(&self, item_id: &str) -> Option<usize> {
        // The item a request is out for is the head nearly always: one string compare there,
        // instead of one per item ahead of it (a queue of thousands drained one by one).
        if let Some(h) = self.head().filter(|&h| self.items[h].id == item_id) {
            return Some(h);
        }
        self.items.iter().position(|i| i.id == item_id)
    }

    /// The server refused the item at `idx` as `followup_out_of_order`: it holds a higher seq
    /// than this queue knew (a clock behind what it was before a reload, another tab). The
    /// item and the never-posted items behind it get seqs above the refused one by a step
    /// that doubles with each refusal (one second first), and are posted again with their
    /// nonces: past any clock error within a few posts, and never retried unchanged. After
    /// [`MAX_RENUMBERS`] refusals in a row it is `failed` instead (`false`).
    pub(super) fn renumber(&mut self, idx: usize, now_ms: u64) -> bool {
        if self.renumbers >= MAX_RENUMBERS {
            return false;
        }
        let step = 1_000u64 << self.renumbers;
        self.renumbers += 1;
        self.last_seq = self
            .last_seq
            .max(self.items[idx].client_seq)
            .saturating_add(step);
        self.fresh_seqs_from(idx, now_ms);
        let version = self.next_version();
        let item = &mut self.items[idx];
        item.state = ItemState::Queued;
        item.next_attempt_at_ms = None;
        item.needs_fresh_seq = false;
        item.version = version;
        true
    }

    /// New seqs for the item at `idx` and the never-posted items behind it, in queue order:
    /// seq order stays queue order (the server would refuse the smaller ones after it).
    pub(super) fn fresh_seqs_from(&mut self, idx: usize, now_ms: u64) {
        for j in idx..self.items.len() {
            if j == idx || !self.items[j].ever_posted {
                let seq = self.next_seq(now_ms);
                let version = self.next_version();
                let item = &mut self.items[j];
                item.client_seq = seq;
                item.version = version;
            }
        }
    }

    pub(super) fn next_seq(&mut self, now_ms: u64) -> u64 {
        self.last_seq = self.last_seq.saturating_add(1).max(now_ms);
        self.last_seq
    }

    pub(super) fn next_version(&mut self) -> u64 {
        self.version += 1;
        self.version
    }

    /// Takes the item out of the queue. Its request in flight, if any, keeps the slot (one POST
    /// on the wire at a time, whatever became of its item; found by the store fuzz target).
    pub(super) fn detach(&mut self, idx: usize) -> FollowUpItem {
        let mut item = self.items.remove(idx);
        if self.retired.len() == REMEMBERED_NONCES {
            self.retired.pop_front();
        }
        self.retired.push_back(item.client_nonce.clone());
        item.version = self.next_version();
        item.next_attempt_at_ms = None;
        item
    }

    pub(super) fn consume_at(&mut self, idx: usize) -> FollowUpItem {
        for earlier in &mut self.items[..idx] {
            if earlier.state == ItemState::Accepted {
                earlier.passed = true;
            }
        }
        // Its message is one more of its text before the later items of that text.
        let text = self.items[idx].text.clone();
        for later in self.items[idx + 1..].iter_mut().filter(|i| i.text == text) {
            later.texts_before += 1;
        }
        let mut item = self.detach(idx);
        item.state = ItemState::Consumed;
        if self.consumed_nonces.len() == REMEMBERED_NONCES {
            self.consumed_nonces.pop_front();
        }
        self.consumed_nonces.push_back(item.client_nonce.clone());
        item
    }
}
