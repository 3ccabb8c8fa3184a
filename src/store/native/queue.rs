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

mod clear_all;
pub(in crate::store) use clear_all::ClearAll;

impl ChatStore {
    /// The server's queue (the state's, or the latest `queue-updated`) decides what waits
    /// (SPEC §14): each row is one of this store's items or another client's read-only row.
    /// What the server holds while no run is on was accepted after the last one's end: it is
    /// stranded, and taken back as at a turn's end (SPEC §6).
    pub(in crate::store) fn follow_server_queue(&mut self, read: ServerView, now_ms: u64) {
        let mut changed = self.session.server_queue_shown(&read);
        if self.session.consume_what_ran(&read) {
            // Take-backs of what ran are moot: a message held for them goes.
            self.start_held_turn(now_ms);
            changed = true;
        }
        for (seq, nonce, on_server) in self.session.removals_waiting() {
            if on_server && !self.session.take_backs.is_gone(&nonce) {
                self.take_back(seq, &nonce, now_ms);
            } else {
                // Refused, never sent, or taken back already: nothing runs.
                self.session.queue.take_by_nonce(&nonce);
                self.revisions.touch();
            }
        }
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
            self.revisions.touch();
        }
        self.decide_clear_all(now_ms);
    }

    /// The user removes a waiting bubble. One the server may hold stays, marked, until the
    /// server confirms it gone (a take-back, which a follow-up POST still out waits for);
    /// one it cannot hold goes at once; another client's row is not this store's to remove.
    pub(in crate::store) fn remove_native(&mut self, item_id: &str, now_ms: u64) -> bool {
        let Some(item) = self.session.queue.get(item_id) else {
            // Another client's row: never removed here, and the stock Remove button is never
            // disabled, so the bubble says why rather than nothing happening.
            let not_ours = ChatError::new(
                ErrorKind::Validation,
                "another client's follow-up: only that client can remove it",
            );
            if self.session.queue.note_on_mirror(item_id, not_ours) {
                self.revisions.touch();
            }
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
            self.revisions.touch();
            self.pump(now_ms);
            self.send_next_queued(now_ms);
            return true;
        }
        self.session.queue.mark_removing(item_id, true);
        self.session.queue.note_error(item_id, None);
        if state != ItemState::Posting {
            self.take_back(seq, &nonce, now_ms);
        }
        self.revisions.touch();
        true
    }

    /// A follow-up POST answered: an item removed while it was out is taken back now that
    /// the server has it, and a clear of the whole queue that waited for the answer goes.
    pub(in crate::store) fn after_native_post(&mut self, now_ms: u64) {
        for (seq, nonce, on_server) in self.session.removals_waiting() {
            if on_server && !self.session.take_backs.is_gone(&nonce) {
                self.take_back(seq, &nonce, now_ms);
            } else {
                // Refused, never sent, or taken back already: nothing runs.
                self.session.queue.take_by_nonce(&nonce);
                self.revisions.touch();
            }
        }
        if self.session.native.selective_clear == SelectiveClear::Noop {
            self.take_back_native(None, now_ms);
        }
    }
}

impl Session {
    /// The server's queue was shown (`read`): a clear of the whole queue on its way logs it
    /// (the rows a clear removed are read from it, at the seq it was shown at), and the
    /// queue's items follow its rows. Whether the queue changed.
    pub(in crate::store) fn server_queue_shown(&mut self, read: &ServerView) -> bool {
        let gate = self.native.link.gate();
        if let Some(clear) = self.native.clear_all.as_mut() {
            let shown = match read {
                ServerView::Event(seq, rows) => (*seq, rows.clone()),
                ServerView::State => (gate.seq(), gate.queue().to_vec()),
            };
            clear.log.push(shown);
        }
        let server_rows: Vec<ServerRow<'_>> = gate.queue().iter().map(server_row).collect();
        self.queue.follow_server(&server_rows)
    }

    /// A user message the server committed: the prompt it is, or the follow-up it ran (by
    /// its nonce, its seq, or its text where the server named neither). Whether a follow-up
    /// of this store's ran: a message held for it goes.
    pub(in crate::store) fn on_native_user_message(
        &mut self,
        nonce: Option<&str>,
        seq: Option<u64>,
        text: Option<&str>,
    ) -> bool {
        let q = &mut self.queue;
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
        let Some(item) = consumed else {
            return false;
        };
        // A take-back of it is moot: it ran.
        self.take_backs.ran(&item.client_nonce);
        true
    }

    /// Removals that wait for nothing any more (their POST answered, or aborted with a
    /// session switch), as `(seq, nonce, may be on the server)`: taken back, or, where the
    /// server cannot hold them, done.
    pub(in crate::store) fn removals_waiting(&self) -> Vec<(u64, String, bool)> {
        let in_flight = self.queue.in_flight_item();
        (self.queue.items().iter())
            .filter(|i| i.removing && in_flight != Some(i.id.as_str()))
            .filter(|i| !self.take_backs.is_open(&i.client_nonce))
            .map(|i| (i.client_seq, i.client_nonce.clone(), i.may_be_on_server()))
            .collect()
    }

    /// Items the server may hold that its history shows ran (a state read after a gap that
    /// lost their messages' events): consumed. By nonce always; by the count of their text
    /// after a state read, the only time the events did not say it themselves.
    pub(in crate::store) fn consume_what_ran(&mut self, read: &ServerView) -> bool {
        let candidates: Vec<String> = (self.queue.items().iter())
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
            self.runs_on_server(nonce);
            self.take_backs.ran(nonce);
        }
        !ran.is_empty()
    }

    /// A stranded item whose removal the server kept (another client's rows were in its
    /// queue): the take-back that follows tries that removal again, and the item is not
    /// sent again as a new message.
    pub(in crate::store) fn removal_again(&mut self, nonce: &str) {
        let id = format!("fu-{nonce}");
        if self.queue.get(&id).is_some_and(removal_refused) {
            self.queue.mark_removing(&id, true);
        }
    }

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
