//! The queue's mirror of the server's own queue rows (pi-native): matching rows to items,
//! foreign rows, forgetting the server's view.

use super::*;

impl FollowUpQueue {
    /// The server's queue is `rows`, in order (pi-native's `queue-updated` or a state read,
    /// SPEC §14.1). Each row is matched to one of this queue's items: by `clientNonce`, else
    /// by `clientSeq`, else (the server often drops both) by text, to the oldest posted item
    /// with that text not matched yet, as the server itself attaches selectors. A matched item
    /// whose POST answer was lost is `accepted` after all; every item learns whether the
    /// server holds it ([`FollowUpItem::held`]). Rows of no item here are another client's:
    /// read-only bubbles. A row naming a nonce this queue saw consumed is a stale selector,
    /// matched by its text. True when anything shown changed.
    pub fn follow_server(&mut self, rows: &[ServerRow<'_>]) -> bool {
        let matched = self.match_rows(rows);
        let mut taken = vec![false; self.items.len()];
        for idx in matched.iter().flatten() {
            taken[*idx] = true;
        }
        let mut changed = false;
        let in_flight = self.in_flight.as_ref().map(|f| f.item_id.clone());
        for (idx, held) in taken.iter().enumerate() {
            let version = self.version + 1;
            let item = &mut self.items[idx];
            item.held = *held;
            // Held by the server, so not lost, refused or in doubt: accepted (one with its
            // request on the way waits for that answer).
            let lost = matches!(
                item.state,
                ItemState::Queued | ItemState::Failed | ItemState::Unsure
            ) && item.ever_posted
                && in_flight.as_deref() != Some(item.id.as_str());
            if *held && lost {
                item.state = ItemState::Accepted;
                item.error = None;
                item.next_attempt_at_ms = None;
                item.version = version;
                self.version = version;
                changed = true;
            }
        }
        let mut mirrors = Vec::new();
        let mut order = Vec::with_capacity(rows.len());
        for (r, row) in rows.iter().enumerate() {
            if let Some(idx) = matched[r] {
                order.push(self.items[idx].id.clone());
                continue;
            }
            // Naming an item of this queue that ran or was taken out: a stale report.
            if row
                .nonce
                .is_some_and(|n| self.is_consumed(n) || self.retired.iter().any(|r| r == n))
            {
                continue;
            }
            let id = match row.nonce {
                Some(n) => format!("fu-{n}"),
                None => format!("server-{}", row.id),
            };
            let kept = (self.mirrors.iter()).find(|m| m.id == id && m.text == row.text);
            let mirror = match kept {
                Some(m) => m.clone(),
                None => {
                    changed = true;
                    let nonce = row.nonce.unwrap_or_default();
                    let seq = row.seq.unwrap_or_default();
                    let mut m =
                        FollowUpItem::new(nonce, seq, row.text.to_string(), Vec::new(), None);
                    (m.id, m.state, m.ever_posted, m.read_only) =
                        (id.clone(), ItemState::Accepted, true, true);
                    m.version = self.next_version();
                    if !self.foreign_texts.iter().any(|t| t == row.text) {
                        if self.foreign_texts.len() == REMEMBERED_NONCES {
                            self.foreign_texts.remove(0);
                        }
                        self.foreign_texts.push(row.text.to_string());
                    }
                    m
                }
            };
            order.push(id);
            mirrors.push(mirror);
        }
        changed |= mirrors.len() != self.mirrors.len() || order != self.server_order;
        if changed {
            self.version += 1;
        }
        (self.mirrors, self.server_order) = (mirrors, order);
        changed
    }

    /// Which item of this queue each row is (see [`follow_server`](Self::follow_server)).
    pub(super) fn match_rows(&self, rows: &[ServerRow<'_>]) -> Vec<Option<usize>> {
        let mut matched: Vec<Option<usize>> = vec![None; rows.len()];
        let mut taken = vec![false; self.items.len()];
        let own = |i: &FollowUpItem| i.may_be_on_server() || i.state == ItemState::Unsure;
        let known = |n: &str| self.is_consumed(n) || self.retired.iter().any(|r| r == n);
        for (r, row) in rows.iter().enumerate() {
            let nonce = row.nonce.filter(|n| !known(n));
            let found = match (nonce, row.seq) {
                (Some(n), _) => self.items.iter().position(|i| i.client_nonce == n),
                (None, Some(seq)) if row.nonce.is_none() => {
                    (self.items.iter()).position(|i| i.ever_posted && i.client_seq == seq)
                }
                _ => None,
            };
            if let Some(idx) = found.filter(|&i| !taken[i]) {
                (matched[r], taken[idx]) = (Some(idx), true);
            }
        }
        for (r, row) in rows.iter().enumerate() {
            let foreign = row.nonce.is_some_and(|n| !known(n));
            if matched[r].is_some() || foreign {
                continue;
            }
            let idx = (self.items.iter().enumerate())
                .position(|(i, item)| !taken[i] && own(item) && item.text == row.text);
            if let Some(idx) = idx {
                (matched[r], taken[idx]) = (Some(idx), true);
            }
        }
        matched
    }

    /// The server's queue holds rows of another client.
    pub fn has_mirrors(&self) -> bool {
        !self.mirrors.is_empty()
    }

    /// Another client's rows have had this text (its message, in the history, may look like
    /// one of ours).
    pub fn foreign_text(&self, text: &str) -> bool {
        self.foreign_texts.iter().any(|t| t == text)
    }

    /// The server keeps `nonce` and runs it in its place: `accepted`, whatever the store had
    /// made of it (stalled to be sent again, removing).
    pub fn keep_accepted(&mut self, nonce: &str) {
        let version = self.next_version();
        if let Some(item) = self.items.iter_mut().find(|i| i.client_nonce == nonce) {
            (item.state, item.resend, item.removing) = (ItemState::Accepted, false, false);
            item.version = version;
        }
    }

    /// The server runs nothing of another client's any more (a session switch, a run that
    /// ended with a dropped queue): its rows go. True when anything shown changed.
    pub fn forget_server(&mut self) -> bool {
        let changed = !self.mirrors.is_empty() || !self.server_order.is_empty();
        self.mirrors.clear();
        self.server_order.clear();
        for item in &mut self.items {
            item.held = false;
        }
        if changed {
            self.version += 1;
        }
        changed
    }
}
