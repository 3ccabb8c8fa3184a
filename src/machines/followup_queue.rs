//! The follow-up poster (SPEC §6) as a pure state machine: it asks for requests
//! ([`FollowUpQueue::poll_request`]), it is told their results
//! ([`FollowUpQueue::handle_response`]) and what the stream said about them (the `consume_*`
//! methods), and it never does IO or reads a clock.
//!
//! The store owns one queue per session and lets only the current session's queue post. The
//! rules it keeps, and why:
//!
//! - **One request in flight, strictly FIFO.** The server runs follow-ups in arrival order, so a
//!   later item must never overtake an earlier one that is not settled yet. An item that failed
//!   for good therefore *blocks* the items behind it until the user retries or removes it.
//! - **Same seq and nonce on every retry.** The server deduplicates by `clientNonce`, which makes
//!   re-posting after a lost answer safe; a new nonce would make it a second message. The only
//!   time `clientSeq` changes is after the server said `followup_out_of_order`, where the old
//!   seq can never be accepted.
//! - **Nothing disappears silently.** Items leave the queue only when the server consumed them,
//!   when the server said it has them cancelled, or when the store takes them out explicitly
//!   (remove, send as a normal message, retry as a new message) and gets them back.
//! - **Every change bumps a version** drawn from one counter per queue, so the JS snapshot can
//!   re-export exactly the items that changed and versions never repeat.

use std::collections::VecDeque;

use serde::Serialize;

use crate::protocol::{ChatError, ErrorKind, FileAttachment, SendOptions};
use crate::util::random::{uuid_v4, RandomSource};

mod positions;

mod settling;

mod posting;

mod server_rows;

mod shown;
pub use shown::{QueuedItemJson, RunNow, RunNowOutcome};

/// How many consumed nonces a queue remembers, so that a replayed consumption signal (a resumed
/// stream repeats chunks) stays a no-op without the memory growing for the session's lifetime.
const REMEMBERED_NONCES: usize = 256;

/// Where a queued follow-up is in its life. Serialized in lowercase for the JS snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "QueuedState"))]
#[serde(rename_all = "lowercase")]
pub enum ItemState {
    /// Waiting for its turn to be posted (or for its backoff to end).
    Queued,
    /// Its POST is in flight.
    Posting,
    /// The server has it (202) and will run it when the current turn reaches it.
    Accepted,
    /// The server turned it into a message. Consumed items leave the queue; the state is only
    /// seen on the item handed back by the `consume_*` methods (never in a snapshot's queue,
    /// so not in the TypeScript type).
    #[cfg_attr(feature = "ts", ts(skip))]
    Consumed,
    /// It will not be posted again on its own: retries exhausted or an error that retrying
    /// cannot fix. Visible, and it blocks the items behind it until retried or removed.
    Failed,
    /// The server accepted it but the turn ended without consuming it. Visible, so the user can
    /// send it as a new message or remove it.
    Stalled,
    /// The store cannot tell whether the server ran it or dropped it (pi-native: a take-back
    /// answered "not queued" that the history does not settle). It is never sent again on its
    /// own, which could run it twice: the user retries it (a new message) or removes it.
    Unsure,
}

impl ItemState {
    /// The server has the item: it no longer takes part in the FIFO posting.
    fn is_settled(self) -> bool {
        matches!(
            self,
            ItemState::Accepted | ItemState::Stalled | ItemState::Consumed | ItemState::Unsure
        )
    }

    /// It waits for the user (retry or remove), not for the server: nothing goes out for it
    /// on its own, and it does not hold back the items behind it.
    pub fn waits_for_user(self) -> bool {
        matches!(self, ItemState::Stalled | ItemState::Unsure)
    }
}

/// One queued follow-up: the waiting bubble the UI shows after all messages. Serialized for
/// the JS snapshot with what the user may do with it ([`FollowUpItem::can_retry`],
/// [`FollowUpItem::can_remove`]), so a UI restates no rule.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowUpItem {
    /// The local id, stable for the item's whole life (`"fu-" + clientNonce`).
    pub id: String,
    /// A random v4 UUID: the server's idempotency key for this item.
    pub client_nonce: String,
    /// `max(last + 1, now_ms)`: strictly increasing per queue, and across page reloads without
    /// any storage, because the clock has moved on by the time a reloaded page enqueues.
    pub client_seq: u64,
    /// The message text, posted as `message`.
    pub text: String,
    /// The attachments, posted as `attachments`.
    pub files: Vec<FileAttachment>,
    /// Where the item is in its life (`queued`, `posting`, `accepted`, `failed`, `stalled`).
    pub state: ItemState,
    /// POST attempts made for the current try (reset by [`FollowUpQueue::retry`]).
    pub attempts: u32,
    /// The last failure, for display. Kept while a retry is pending so the UI can say why.
    pub error: Option<ChatError>,
    /// A request for it left for the server at least once, so the server may have it: removing
    /// it needs a DELETE, and a nonce-less consumption signal may refer to it.
    pub ever_posted: bool,
    /// A row of the server's queue that another client posted (another tab, this page before
    /// a reload): shown as a waiting bubble, never posted, taken back, retried or removed here
    /// (pi-native, SPEC §14.1).
    pub read_only: bool,
    /// The user removed it and the server may still run it: the bubble stays until the server's
    /// queue no longer holds it (pi-native, whose only dependable removal may be a clear of the
    /// whole queue).
    pub removing: bool,
    /// The server's queue, as last reported, holds it (pi-native): at a turn's end it is
    /// stranded there and must be taken back; an accepted item it does not hold was dropped.
    pub held: bool,
    /// How many user messages with its text the history held before this item's own (set
    /// by the store when it is queued, one more for each earlier item of the same text
    /// consumed): where the server names no follow-up (pi-native's `/state`), a history with
    /// more of them than that shows this one ran.
    pub texts_before: usize,
    /// Bumped on every change of the item; unique within its queue.
    pub version: u64,
    /// When the pending retry may start; `None` means at once.
    next_attempt_at_ms: Option<u64>,
    /// It failed with `followup_out_of_order`: its seq can never be accepted, so the next
    /// [`FollowUpQueue::retry`] gives it a fresh one.
    needs_fresh_seq: bool,
    /// `stalled` at a turn's natural end and taken back from the server: it is sent again as
    /// a new message, in its place (SPEC §6), and nothing behind it is posted before it.
    resend: bool,
    /// The server ran an item queued after this one while it held this one: sending it now
    /// would put it after that one, so a turn's end leaves it `stalled` for the user.
    passed: bool,
    /// What its send added (body keys, headers, metadata), for its POST and the turn it may
    /// become.
    pub options: Option<Box<SendOptions>>,
}

impl FollowUpItem {
    /// Retry applies: a `failed` one is posted again, a `stalled` or `unsure` one is sent as
    /// a new message once no turn runs. Never for another client's row or a removal on its
    /// way.
    pub fn can_retry(&self) -> bool {
        !self.read_only
            && !self.removing
            && matches!(
                self.state,
                ItemState::Failed | ItemState::Stalled | ItemState::Unsure
            )
    }

    /// Remove applies: any item of this store's, not already being removed.
    pub fn can_remove(&self) -> bool {
        !self.read_only && !self.removing
    }

    /// A `queued` item never posted, under `nonce` and `seq`.
    fn new(
        nonce: &str,
        seq: u64,
        text: String,
        files: Vec<FileAttachment>,
        options: Option<Box<SendOptions>>,
    ) -> Self {
        FollowUpItem {
            id: format!("fu-{nonce}"),
            client_nonce: nonce.to_string(),
            client_seq: seq,
            text,
            files,
            state: ItemState::Queued,
            attempts: 0,
            error: None,
            ever_posted: false,
            read_only: false,
            removing: false,
            held: false,
            texts_before: 0,
            version: 0,
            next_attempt_at_ms: None,
            needs_fresh_seq: false,
            resend: false,
            passed: false,
            options,
        }
    }

    /// The server may hold it: accepted, on its way, or posted with no answer that says the
    /// server refused it (a lost answer, a 5xx, a timeout).
    pub fn may_be_on_server(&self) -> bool {
        match self.state {
            ItemState::Accepted | ItemState::Stalled | ItemState::Posting => true,
            ItemState::Queued | ItemState::Failed => {
                self.ever_posted && self.error.as_ref().is_none_or(ChatError::is_retryable)
            }
            ItemState::Consumed | ItemState::Unsure => false,
        }
    }
}

/// How many `followup_out_of_order` refusals in a row are renumbered before the item is
/// `failed`: the step doubles from one second, so the last one jumps far past any clock error.
pub const MAX_RENUMBERS: u32 = 32;

/// Bounded exponential backoff for retryable failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// POST attempts per try, the first included; after the last one the item is `failed`.
    /// Zero is treated as one: every item gets at least one attempt.
    pub max_attempts: u32,
    /// The nominal wait after the first failed attempt; it doubles with each further one.
    pub base_delay_ms: u64,
    /// The cap of the nominal wait (before jitter).
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay_ms: 500,
            max_delay_ms: 15_000,
        }
    }
}

impl RetryPolicy {
    /// The wait after the `attempts`-th failed attempt:
    /// `min(max_delay, base * 2^(attempts-1))` scaled by `0.5 + 0.5 * jitter`, so retries of many
    /// clients spread out but never wait less than half the nominal delay. `jitter` is clamped to
    /// `[0, 1]`; a non-finite one counts as 0.
    pub fn backoff_ms(&self, attempts: u32, jitter: f64) -> u64 {
        let exp = attempts.saturating_sub(1).min(63);
        let nominal = self
            .base_delay_ms
            .saturating_mul(1u64 << exp)
            .min(self.max_delay_ms);
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        (nominal as f64 * (0.5 + 0.5 * jitter)) as u64
    }
}

/// A POST the store must make: `POST …/chat/S/followup` with
/// `{message: text, clientSeq, clientNonce, attachments: files}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUpPost {
    /// Hand it back with the answer; an answer under any other ticket is ignored.
    pub ticket: u64,
    /// The [`FollowUpItem::id`] of the item posted.
    pub item_id: String,
    /// The body's `clientSeq`.
    pub client_seq: u64,
    /// The body's `clientNonce`.
    pub client_nonce: String,
    /// The body's `message`.
    pub text: String,
    /// The body's `attachments`.
    pub files: Vec<FileAttachment>,
}

/// What came back for a [`FollowUpPost`], as the store classified it.
#[derive(Debug, Clone, PartialEq)]
pub enum PostOutcome {
    /// 202 `{queued:true}`, or `{queued:true, duplicate:true}` for a retry that had already
    /// landed: both mean the server has it.
    Accepted {
        /// `duplicate:true`: a retry that had already landed.
        duplicate: bool,
    },
    /// 202 `{queued:false, deleted:true}`: the server has it cancelled (an earlier DELETE won).
    Deleted,
    /// Any error. Retryable ones (network, 429, 5xx, session not ready) per
    /// [`ChatError::is_retryable`]; an error of kind `Aborted` counts as [`PostOutcome::Aborted`].
    Failed(ChatError),
    /// The store aborted the request itself (session switch, dispose): not the server's answer.
    Aborted,
}

/// What the store must act on after [`FollowUpQueue::handle_response`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueEffect {
    /// The server does not take follow-ups: the store turns `nativeFollowUp` off and may move
    /// the item's text back into an empty composer. The item is `failed`.
    Unsupported {
        /// The item the server refused.
        item_id: String,
    },
    /// The item became `failed` (retries exhausted or an error retrying cannot fix).
    Failed {
        /// The item that became `failed`.
        item_id: String,
    },
}

/// One row of the server's own follow-up queue (pi-native's `queue.followUps[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerRow<'a> {
    /// The row's id: positional on the server, not an identity.
    pub id: &'a str,
    /// Its display text.
    pub text: &'a str,
    /// `clientNonce`, where the server attached it.
    pub nonce: Option<&'a str>,
    /// `clientSeq`, where the server attached it.
    pub seq: Option<u64>,
}

#[derive(Debug, Clone)]
struct InFlight {
    ticket: u64,
    item_id: String,
}

/// The per-session FIFO follow-up poster.
///
/// Methods by kind, in the crate's sans-IO shape: getters ([`items`](Self::items),
/// [`in_flight`](Self::in_flight), [`last_seq`](Self::last_seq), …); inputs
/// ([`handle_response`](Self::handle_response), the `consume_*` signals from the stream,
/// [`strand`](Self::strand)); user actions
/// ([`enqueue`](Self::enqueue), [`remove`](Self::remove), [`retry`](Self::retry),
/// [`take`](Self::take)); outputs ([`poll_request`](Self::poll_request),
/// [`poll_timeout`](Self::poll_timeout)). After any input, drain `poll_request` and then ask
/// `poll_timeout` for the next wake-up.
#[derive(Debug, Clone)]
pub struct FollowUpQueue {
    policy: RetryPolicy,
    items: Vec<FollowUpItem>,
    /// The server's queue rows this queue did not post (pi-native): read-only bubbles.
    mirrors: Vec<FollowUpItem>,
    /// The server's queue in its order, as item ids (of `items` or `mirrors`): the order the
    /// bubbles show in. Empty where the server says nothing of its queue.
    server_order: Vec<String>,
    /// Texts of other clients' rows seen (the last 256).
    foreign_texts: Vec<String>,
    /// Nonces of items taken out of the queue (removed, re-sent as messages; the last 256):
    /// a row of the server's that still names one is a stale report, not another client's.
    retired: VecDeque<String>,
    in_flight: Option<InFlight>,
    /// The last ticket handed out; tickets start at 1 and never repeat.
    last_ticket: u64,
    last_seq: u64,
    /// The queue-wide change counter the item versions are drawn from.
    version: u64,
    consumed_nonces: VecDeque<String>,
    /// `followup_out_of_order` refusals since the last accepted post (each doubles the step of
    /// the next renumbering).
    renumbers: u32,
}

impl Default for FollowUpQueue {
    fn default() -> Self {
        FollowUpQueue::new(RetryPolicy::default())
    }
}

impl FollowUpQueue {
    /// An empty queue that retries under `policy`.
    pub fn new(policy: RetryPolicy) -> Self {
        FollowUpQueue {
            policy,
            items: Vec::new(),
            mirrors: Vec::new(),
            server_order: Vec::new(),
            foreign_texts: Vec::new(),
            retired: VecDeque::new(),
            in_flight: None,
            last_ticket: 0,
            last_seq: 0,
            version: 0,
            consumed_nonces: VecDeque::new(),
            renumbers: 0,
        }
    }

    // ----- getters -----

    /// The retry policy the queue follows.
    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// The visible items, in queue order (consumed items are never kept).
    pub fn items(&self) -> &[FollowUpItem] {
        &self.items
    }

    /// The waiting bubbles in the order they run: the server's queue in its order (this
    /// queue's items it holds, and the read-only rows of others), then this queue's other
    /// items in theirs.
    pub fn view(&self) -> Vec<&FollowUpItem> {
        if self.server_order.is_empty() {
            return self.items.iter().collect();
        }
        let by_id = |id: &String| {
            (self.items.iter())
                .chain(self.mirrors.iter())
                .find(|i| &i.id == id)
        };
        let mut out: Vec<&FollowUpItem> = self.server_order.iter().filter_map(by_id).collect();
        let shown = |i: &FollowUpItem| self.server_order.contains(&i.id);
        out.extend(self.items.iter().filter(|i| !shown(i)));
        out
    }

    /// The visible item with this [`FollowUpItem::id`].
    pub fn get(&self, item_id: &str) -> Option<&FollowUpItem> {
        self.items.iter().find(|i| i.id == item_id)
    }

    /// No visible items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The id of the item whose request is in flight, if any.
    pub fn in_flight_item(&self) -> Option<&str> {
        self.in_flight.as_ref().map(|f| f.item_id.as_str())
    }

    /// The ticket of the request in flight, if any.
    pub fn in_flight(&self) -> Option<u64> {
        self.in_flight.as_ref().map(|f| f.ticket)
    }

    /// The last `clientSeq` handed out (0 before the first); the next one is at least one more.
    /// A queue created later (a reload) starts above it as long as the clock moved on.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The next `clientSeq` is above `seq` (a host's stored last seq, across reloads).
    pub fn raise_seq(&mut self, seq: u64) {
        self.last_seq = self.last_seq.max(seq);
    }

    /// A counter bumped on every change of the queue, removals included (item versions only
    /// say which items changed, not that one left).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The server already consumed the item with this nonce (among the last 256 consumed): a
    /// user `message-start` carrying it is the committed form of a bubble that is gone, not a
    /// new one.
    pub fn is_consumed(&self, nonce: &str) -> bool {
        self.consumed_nonces.iter().any(|n| n == nonce)
    }

    // ----- user actions -----

    /// Appends an optimistic item with a fresh nonce and the next seq, and returns it.
    pub fn enqueue(
        &mut self,
        text: String,
        files: Vec<FileAttachment>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> &FollowUpItem {
        self.enqueue_with(text, files, None, now_ms, rng)
    }

    /// [`enqueue`](Self::enqueue) with what the send added.
    pub fn enqueue_with(
        &mut self,
        text: String,
        files: Vec<FileAttachment>,
        options: Option<Box<SendOptions>>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> &FollowUpItem {
        let client_nonce = uuid_v4(rng);
        let client_seq = self.next_seq(now_ms);
        let mut item = FollowUpItem::new(&client_nonce, client_seq, text, files, options);
        item.version = self.next_version();
        self.items.push(item);
        &self.items[self.items.len() - 1]
    }

    /// A user message with `text` that is none of the items was committed: the items of that
    /// text waiting now count it before their own ([`FollowUpItem::texts_before`]).
    pub fn one_more_text(&mut self, text: &str) {
        for item in self.items.iter_mut().filter(|i| i.text == text) {
            item.texts_before += 1;
        }
    }

    /// Sets [`FollowUpItem::texts_before`] of `item_id`.
    pub fn set_texts_before(&mut self, item_id: &str, n: usize) {
        if let Some(item) = self.items.iter_mut().find(|i| i.id == item_id) {
            item.texts_before = n;
        }
    }

    /// The user removes an item. Outer `None`: no such item. `Some(Some((clientSeq,
    /// clientNonce)))`: the server may have it, so the store sends
    /// `DELETE …/followup?clientNonce=&clientSeq=`. `Some(None)`: it never left, removal is local.
    /// A request in flight for it keeps the slot until its answer (or timeout), which then
    /// changes nothing: the next item must not be on the wire beside it, where it could reach
    /// the server first.
    pub fn remove(&mut self, item_id: &str) -> Option<Option<(u64, String)>> {
        let (item, on_server) = self.take(item_id)?;
        Some(on_server.then_some((item.client_seq, item.client_nonce)))
    }

    /// Removes and returns an item (for "retry a stalled item as a new message"), with whether
    /// the server may have it. A request in flight for it keeps the slot until its answer.
    pub fn take(&mut self, item_id: &str) -> Option<(FollowUpItem, bool)> {
        let idx = self.index_of(item_id)?;
        let item = self.detach(idx);
        let on_server = item.may_be_on_server();
        Some((item, on_server))
    }

    /// `failed` → `queued`, attempts reset, error cleared, due at once. The seq and nonce stay,
    /// except after `followup_out_of_order`: then the item gets a fresh seq (same nonce), and
    /// so do the never-posted items behind it, which keeps seq order equal to queue order (the
    /// server would refuse their now smaller seqs after it). `false` for unknown ids and items
    /// in any other state.
    pub fn retry(&mut self, item_id: &str, now_ms: u64) -> bool {
        let Some(idx) = self.index_of(item_id) else {
            return false;
        };
        if self.items[idx].state != ItemState::Failed {
            return false;
        }
        if self.items[idx].needs_fresh_seq {
            self.fresh_seqs_from(idx, now_ms);
        }
        let version = self.next_version();
        let item = &mut self.items[idx];
        item.state = ItemState::Queued;
        item.attempts = 0;
        item.error = None;
        item.next_attempt_at_ms = None;
        item.needs_fresh_seq = false;
        item.version = version;
        true
    }

    // ----- outputs -----
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::random::SeededRandom;

    const T0: u64 = 1_700_000_000_000;

    fn queue() -> FollowUpQueue {
        FollowUpQueue::new(RetryPolicy::default())
    }

    fn add(q: &mut FollowUpQueue, text: &str, now: u64, rng: &mut SeededRandom) -> String {
        q.enqueue(text.to_string(), Vec::new(), now, rng).id.clone()
    }

    fn state(q: &FollowUpQueue, id: &str) -> ItemState {
        q.get(id).expect("item present").state
    }

    fn accepted() -> PostOutcome {
        PostOutcome::Accepted { duplicate: false }
    }

    fn http(status: u16, body: &str) -> PostOutcome {
        PostOutcome::Failed(ChatError::from_http(status, body.as_bytes()))
    }

    fn conflict(message: &str) -> PostOutcome {
        http(
            409,
            &format!(r#"{{"error":{{"code":"conflict","message":"{message}"}}}}"#),
        )
    }

    #[test]
    fn posts_strictly_one_after_another_in_order() {
        let mut rng = SeededRandom(1);
        let mut q = queue();
        let ids: Vec<String> = ["one", "two", "three"]
            .iter()
            .map(|t| add(&mut q, t, T0, &mut rng))
            .collect();
        let mut posted = Vec::new();
        let mut now = T0;
        while let Some(post) = q.poll_request(now) {
            assert_eq!(q.in_flight(), Some(post.ticket));
            assert_eq!(
                q.poll_request(now + 60_000),
                None,
                "second request while in flight"
            );
            assert_eq!(q.poll_timeout(), None);
            assert_eq!(state(&q, &post.item_id), ItemState::Posting);
            now += 10;
            assert_eq!(q.handle_response(post.ticket, accepted(), now, 0.5), None);
            assert_eq!(state(&q, &post.item_id), ItemState::Accepted);
            posted.push(post);
        }
        let texts: Vec<&str> = posted.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["one", "two", "three"]);
        let posted_ids: Vec<&String> = posted.iter().map(|p| &p.item_id).collect();
        assert_eq!(posted_ids, ids.iter().collect::<Vec<_>>());
        assert!(posted.windows(2).all(|w| w[0].client_seq < w[1].client_seq));
        assert!(posted.windows(2).all(|w| w[0].ticket < w[1].ticket));
        assert_eq!(q.in_flight(), None);
        assert_eq!(q.poll_timeout(), None);
        for p in &posted {
            assert_eq!(p.item_id, format!("fu-{}", p.client_nonce));
        }
    }

    #[test]
    fn retryable_failures_retry_same_seq_and_nonce_after_backoff() {
        let failures = [
            http(503, "<html>busy</html>"),
            http(500, ""),
            http(429, ""),
            PostOutcome::Failed(ChatError::network("connection reset")),
            conflict("followup_session_not_ready"),
        ];
        for failure in failures {
            let mut rng = SeededRandom(2);
            let mut q = queue();
            let id = add(&mut q, "hello", T0, &mut rng);
            let first = q.poll_request(T0).unwrap();
            assert_eq!(
                q.handle_response(first.ticket, failure.clone(), T0 + 5, 0.0),
                None
            );
            let item = q.get(&id).unwrap();
            assert_eq!(item.state, ItemState::Queued);
            assert!(
                item.error.is_some(),
                "the failure stays visible while waiting"
            );
            assert!(item.ever_posted);
            // jitter 0 → half of base * 2^0 = 250 ms.
            let due = T0 + 5 + 250;
            assert_eq!(q.poll_timeout(), Some(due));
            assert_eq!(q.poll_request(due - 1), None);
            let second = q.poll_request(due).expect("due after backoff");
            assert_eq!(second.client_seq, first.client_seq);
            assert_eq!(second.client_nonce, first.client_nonce);
            assert_eq!(second.item_id, first.item_id);
            assert_ne!(second.ticket, first.ticket);
            assert_eq!(q.get(&id).unwrap().attempts, 2);
            // The second failure waits twice as long (jitter 1 → the full nominal delay).
            q.handle_response(second.ticket, failure, due, 0.999_999);
            let wait = q.poll_timeout().unwrap() - due;
            assert!((999..=1000).contains(&wait), "{wait}");
            let third = q.poll_request(due + wait).unwrap();
            assert_eq!(
                q.handle_response(third.ticket, accepted(), due + wait, 0.0),
                None
            );
            assert_eq!(q.get(&id).unwrap().error, None);
        }
    }

    #[test]
    fn backoff_grows_caps_and_scales_with_jitter() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff_ms(1, 0.0), 250);
        assert_eq!(p.backoff_ms(1, 1.0), 500);
        assert_eq!(p.backoff_ms(2, 0.0), 500);
        assert_eq!(p.backoff_ms(3, 0.5), 1500);
        assert_eq!(p.backoff_ms(6, 1.0), 15_000);
        assert_eq!(p.backoff_ms(40, 1.0), 15_000);
        assert_eq!(p.backoff_ms(u32::MAX, 0.0), 7_500);
        assert_eq!(p.backoff_ms(1, f64::NAN), 250);
        assert_eq!(p.backoff_ms(1, -3.0), 250);
    }

    #[test]
    fn duplicate_answer_counts_as_success() {
        let mut rng = SeededRandom(3);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let post = q.poll_request(T0).unwrap();
        let effect = q.handle_response(
            post.ticket,
            PostOutcome::Accepted { duplicate: true },
            T0,
            0.0,
        );
        assert_eq!(effect, None);
        assert_eq!(state(&q, &a), ItemState::Accepted);
        assert_eq!(q.poll_request(T0).unwrap().item_id, b);
    }

    #[test]
    fn deleted_answer_drops_the_item() {
        let mut rng = SeededRandom(4);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let post = q.poll_request(T0).unwrap();
        assert_eq!(post.item_id, a);
        assert_eq!(
            q.handle_response(post.ticket, PostOutcome::Deleted, T0, 0.0),
            None
        );
        assert!(q.get(&a).is_none());
        assert_eq!(q.items().len(), 1);
        assert_eq!(q.poll_request(T0).unwrap().item_id, b);
    }

    #[test]
    fn unsupported_yields_the_effect_and_fails_the_item() {
        for body in [
            r#"{"error":{"code":"FOLLOWUP_UNSUPPORTED","message":"no"}}"#,
            r#"{"error":{"code":"conflict","message":"followup_unsupported"}}"#,
        ] {
            let mut rng = SeededRandom(5);
            let mut q = queue();
            let a = add(&mut q, "keep me", T0, &mut rng);
            let post = q.poll_request(T0).unwrap();
            let effect = q.handle_response(post.ticket, http(409, body), T0, 0.0);
            assert_eq!(
                effect,
                Some(QueueEffect::Unsupported { item_id: a.clone() })
            );
            let item = q.get(&a).unwrap();
            assert_eq!(item.state, ItemState::Failed);
            assert_eq!(item.text, "keep me");
            assert_eq!(
                item.error.as_ref().map(|e| e.kind),
                Some(ErrorKind::FollowUpUnsupported)
            );
            assert_eq!(q.poll_request(T0 + 1_000_000), None);
        }
    }

    #[test]
    fn non_retryable_error_fails_at_once() {
        let mut rng = SeededRandom(6);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let post = q.poll_request(T0).unwrap();
        let effect = q.handle_response(
            post.ticket,
            http(
                400,
                r#"{"error":{"code":"validation_error","message":"bad"}}"#,
            ),
            T0,
            0.0,
        );
        assert_eq!(effect, Some(QueueEffect::Failed { item_id: a.clone() }));
        assert_eq!(state(&q, &a), ItemState::Failed);
        assert_eq!(q.get(&a).unwrap().attempts, 1);
    }

    #[test]
    fn exhausted_retries_fail_visibly_and_block_later_items() {
        let policy = RetryPolicy {
            max_attempts: 3,
            base_delay_ms: 100,
            max_delay_ms: 1_000,
        };
        let mut rng = SeededRandom(7);
        let mut q = FollowUpQueue::new(policy);
        let a = add(&mut q, "first words", T0, &mut rng);
        let b = add(&mut q, "second", T0, &mut rng);
        let mut now = T0;
        let mut last_effect = None;
        let mut posts = Vec::new();
        for _ in 0..3 {
            let post = q.poll_request(now).expect("a try is due");
            assert_eq!(post.item_id, a);
            last_effect = q.handle_response(post.ticket, http(502, ""), now, 0.3);
            posts.push(post);
            if let Some(t) = q.poll_timeout() {
                now = t;
            }
        }
        assert!(posts
            .windows(2)
            .all(|w| w[0].client_seq == w[1].client_seq && w[0].client_nonce == w[1].client_nonce));
        assert_eq!(
            last_effect,
            Some(QueueEffect::Failed { item_id: a.clone() })
        );
        let item = q.get(&a).unwrap();
        assert_eq!(item.state, ItemState::Failed);
        assert_eq!(item.text, "first words");
        assert_eq!(item.attempts, 3);
        assert_eq!(q.items().len(), 2);
        // B must not overtake the failed A, however long we wait.
        assert_eq!(q.poll_timeout(), None);
        assert_eq!(q.poll_request(now + 10_000_000), None);
        assert_eq!(state(&q, &b), ItemState::Queued);
        assert!(!q.get(&b).unwrap().ever_posted);

        // Retry: A goes again with the same seq and nonce, attempts counted afresh.
        let mut retried = q.clone();
        assert!(retried.retry(&a, now));
        let again = retried.poll_request(now).unwrap();
        assert_eq!(again.item_id, a);
        assert_eq!(again.client_seq, posts[0].client_seq);
        assert_eq!(again.client_nonce, posts[0].client_nonce);
        assert_eq!(retried.get(&a).unwrap().attempts, 1);
        assert_eq!(retried.get(&a).unwrap().error, None);

        // Remove: B is unblocked; A was posted, so the store must DELETE it.
        let keys = q.remove(&a);
        assert_eq!(
            keys,
            Some(Some((posts[0].client_seq, posts[0].client_nonce.clone())))
        );
        assert_eq!(q.poll_request(now).unwrap().item_id, b);
    }

    #[test]
    fn retry_is_only_for_failed_items() {
        let mut rng = SeededRandom(8);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        assert!(!q.retry(&a, T0));
        assert!(!q.retry("fu-nope", T0));
        let post = q.poll_request(T0).unwrap();
        assert!(!q.retry(&a, T0));
        q.handle_response(post.ticket, accepted(), T0, 0.0);
        assert!(!q.retry(&a, T0));
    }

    /// SPEC §6 (amended): a seq the server refuses as out of order is renumbered above the
    /// refused one and posted again under the same nonce, never retried unchanged; the step
    /// doubles, so a clock an hour behind is passed within a few posts.
    #[test]
    fn out_of_order_is_renumbered_and_posted_again_with_the_same_nonce() {
        let mut rng = SeededRandom(9);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        // The server holds a seq an hour ahead of this page's clock.
        let held = T0 + 3_600_000;
        let mut first = q.poll_request(T0).unwrap();
        let mut posts = 1;
        while first.client_seq <= held {
            let effect =
                q.handle_response(first.ticket, conflict("followup_out_of_order"), T0, 0.0);
            assert_eq!(effect, None, "not a failure");
            assert_eq!(state(&q, &a), ItemState::Queued);
            let again = q.poll_request(T0).unwrap();
            assert_eq!(again.item_id, a);
            assert_eq!(again.client_nonce, first.client_nonce);
            assert!(again.client_seq > first.client_seq);
            // B never left, and its seq stays above A's so the server accepts it after A.
            assert!(q.get(&b).unwrap().client_seq > again.client_seq);
            first = again;
            posts += 1;
        }
        assert!(posts <= 14, "{posts} posts to pass an hour");
        let again = first;
        q.handle_response(again.ticket, accepted(), T0 + 60, 0.0);
        let next = q.poll_request(T0 + 60).unwrap();
        assert_eq!(next.item_id, b);
        assert!(next.client_seq > again.client_seq);
        // A plain retry after that keeps the seq again.
        q.handle_response(next.ticket, http(404, ""), T0 + 70, 0.0);
        let seq_b = q.get(&b).unwrap().client_seq;
        assert!(q.retry(&b, T0 + 1_000_000));
        assert_eq!(q.get(&b).unwrap().client_seq, seq_b);
    }

    #[test]
    fn abort_then_repoll_keeps_seq_and_nonce_and_ignores_the_late_answer() {
        let mut rng = SeededRandom(10);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let first = q.poll_request(T0).unwrap();
        assert_eq!(q.abort_in_flight(), Some(first.ticket));
        assert_eq!(q.abort_in_flight(), None);
        assert_eq!(q.in_flight(), None);
        let item = q.get(&a).unwrap();
        assert_eq!(item.state, ItemState::Queued);
        assert_eq!(item.attempts, 0);
        assert!(item.ever_posted);
        assert_eq!(q.poll_timeout(), None, "due at once, nothing waits on time");

        let second = q.poll_request(T0).unwrap();
        assert_eq!(second.client_seq, first.client_seq);
        assert_eq!(second.client_nonce, first.client_nonce);
        assert_ne!(second.ticket, first.ticket);
        let before = q.get(&a).unwrap().clone();
        assert_eq!(
            q.handle_response(first.ticket, http(500, ""), T0, 0.0),
            None
        );
        assert_eq!(q.handle_response(first.ticket, accepted(), T0, 0.0), None);
        assert_eq!(q.get(&a).unwrap(), &before, "a late answer changes nothing");
        assert_eq!(q.in_flight(), Some(second.ticket));

        // The store's own abort is reported the same way.
        assert_eq!(
            q.handle_response(second.ticket, PostOutcome::Aborted, T0, 0.0),
            None
        );
        assert_eq!(state(&q, &a), ItemState::Queued);
        assert_eq!(q.get(&a).unwrap().attempts, 0);
        let third = q.poll_request(T0).unwrap();
        let aborted = PostOutcome::Failed(ChatError::new(ErrorKind::Aborted, "aborted"));
        assert_eq!(q.handle_response(third.ticket, aborted, T0, 0.0), None);
        assert_eq!(state(&q, &a), ItemState::Queued);
        let fourth = q.poll_request(T0).unwrap();
        assert_eq!(
            (fourth.client_seq, fourth.client_nonce),
            (first.client_seq, first.client_nonce)
        );
    }

    #[test]
    fn remove_is_local_until_posted() {
        let mut rng = SeededRandom(11);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let c = add(&mut q, "c", T0, &mut rng);
        assert_eq!(q.remove("fu-unknown"), None);
        assert_eq!(q.remove(&b), Some(None));

        let post = q.poll_request(T0).unwrap();
        q.handle_response(post.ticket, accepted(), T0, 0.0);
        assert_eq!(
            q.remove(&a),
            Some(Some((post.client_seq, post.client_nonce)))
        );
        assert_eq!(q.remove(&a), None);

        // Removing the item in flight keeps its slot: nothing else posts until its answer,
        // which then changes nothing.
        let post_c = q.poll_request(T0).unwrap();
        assert_eq!(post_c.item_id, c);
        assert_eq!(
            q.remove(&c),
            Some(Some((post_c.client_seq, post_c.client_nonce.clone())))
        );
        assert_eq!(q.in_flight(), Some(post_c.ticket));
        let d = add(&mut q, "d", T0, &mut rng);
        assert_eq!(q.poll_request(T0), None, "one POST on the wire at a time");
        assert_eq!(q.handle_response(post_c.ticket, accepted(), T0, 0.0), None);
        assert_eq!(q.in_flight(), None);
        assert_eq!(q.items().len(), 1);
        assert_eq!(q.poll_request(T0).unwrap().item_id, d);
    }

    #[test]
    fn consume_by_nonce_picks_the_right_one_of_identical_texts() {
        let mut rng = SeededRandom(12);
        let mut q = queue();
        let a = add(&mut q, "same", T0, &mut rng);
        let b = add(&mut q, "same", T0, &mut rng);
        for _ in 0..2 {
            let p = q.poll_request(T0).unwrap();
            q.handle_response(p.ticket, accepted(), T0, 0.0);
        }
        let nonce_b = q.get(&b).unwrap().client_nonce.clone();
        let got = q.consume_by_nonce(&nonce_b).unwrap();
        assert_eq!(got.id, b);
        assert_eq!(got.state, ItemState::Consumed);
        assert_eq!(q.items().len(), 1);
        assert_eq!(q.items()[0].id, a);
        assert!(q.is_consumed(&nonce_b));
        assert_eq!(
            q.consume_by_nonce(&nonce_b),
            None,
            "a repeated signal is a no-op"
        );
        assert_eq!(q.consume_by_nonce("not-a-nonce"), None);
        assert_eq!(q.items().len(), 1);
    }

    #[test]
    fn consume_by_nonce_of_the_item_in_flight_waits_for_its_answer() {
        let mut rng = SeededRandom(13);
        let mut q = queue();
        add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let post = q.poll_request(T0).unwrap();
        // The stream reported the message before the 202 arrived.
        assert!(q.consume_by_nonce(&post.client_nonce).is_some());
        assert_eq!(q.in_flight(), Some(post.ticket));
        assert_eq!(q.poll_request(T0), None, "b waits for a's answer");
        assert_eq!(q.handle_response(post.ticket, accepted(), T0, 0.0), None);
        assert_eq!(q.poll_request(T0).unwrap().item_id, b);
    }

    #[test]
    fn consume_oldest_posted_is_fifo_among_posted_items_only() {
        let mut rng = SeededRandom(14);
        let mut q = queue();
        let a = add(&mut q, "x", T0, &mut rng);
        let b = add(&mut q, "x", T0, &mut rng);
        let c = add(&mut q, "x", T0, &mut rng);
        for _ in 0..2 {
            let p = q.poll_request(T0).unwrap();
            q.handle_response(p.ticket, accepted(), T0, 0.0);
        }
        assert!(!q.get(&c).unwrap().ever_posted);
        assert_eq!(q.consume_oldest_posted().unwrap().id, a);
        assert_eq!(q.consume_oldest_posted().unwrap().id, b);
        assert_eq!(q.consume_oldest_posted(), None, "C was never posted");
        assert_eq!(q.items().len(), 1);

        // By seq: only a posted item with exactly that seq.
        let seq_c = q.get(&c).unwrap().client_seq;
        assert_eq!(q.consume_by_seq(seq_c), None);
        let p = q.poll_request(T0).unwrap();
        q.handle_response(p.ticket, accepted(), T0, 0.0);
        assert_eq!(q.consume_by_seq(seq_c + 1), None);
        let got = q.consume_by_seq(seq_c).unwrap();
        assert_eq!(got.id, c);
        assert!(q.is_consumed(&got.client_nonce));
        assert!(q.is_empty());
    }

    #[test]
    fn client_seq_strictly_increases_across_a_simulated_reload() {
        let mut rng = SeededRandom(15);
        let mut a = queue();
        let s1 = a.enqueue("1".into(), Vec::new(), T0, &mut rng).client_seq;
        let s2 = a.enqueue("2".into(), Vec::new(), T0, &mut rng).client_seq;
        let s3 = a
            .enqueue("3".into(), Vec::new(), T0 - 10, &mut rng)
            .client_seq;
        assert_eq!(s1, T0);
        assert!(s1 < s2 && s2 < s3, "same or earlier now still increases");
        assert_eq!(a.last_seq(), s3);

        // The page reloads: a new queue knows nothing, but the clock moved on.
        let mut b = queue();
        assert_eq!(b.last_seq(), 0);
        let sb = b
            .enqueue("after reload".into(), Vec::new(), T0 + 5, &mut rng)
            .client_seq;
        assert!(sb > s3, "{sb} > {s3}");
        assert!(b.last_seq() >= sb);

        // Nonces and ids differ between items.
        let nonces: std::collections::HashSet<&str> = a
            .items()
            .iter()
            .chain(b.items())
            .map(|i| i.client_nonce.as_str())
            .collect();
        assert_eq!(nonces.len(), 4);
    }

    #[test]
    fn turn_end_stalls_accepted_items_and_releases_the_first_unposted() {
        let mut rng = SeededRandom(16);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let c = add(&mut q, "c", T0, &mut rng);
        let pa = q.poll_request(T0).unwrap();
        q.handle_response(pa.ticket, accepted(), T0, 0.0);
        let pb = q.poll_request(T0).unwrap();
        assert_eq!(pb.item_id, b);

        // B is in flight: nothing to take yet, and A is still accepted until the turn ends.
        assert_eq!(q.take_first_unposted(), None);
        q.strand(false);
        assert_eq!(state(&q, &a), ItemState::Stalled);
        assert_eq!(state(&q, &b), ItemState::Posting);
        assert_eq!(q.take_first_unposted(), None);

        // B's 202 arrives after the turn ended; marking again stalls it too.
        q.handle_response(pb.ticket, accepted(), T0, 0.0);
        q.strand(false);
        assert_eq!(state(&q, &b), ItemState::Stalled);
        let v = q.get(&b).unwrap().version;
        q.strand(false);
        assert_eq!(q.get(&b).unwrap().version, v, "idempotent");

        // C was never posted: it goes out as a normal message, the stalled ones stay visible.
        let d = add(&mut q, "d", T0, &mut rng);
        let taken = q.take_first_unposted().unwrap();
        assert_eq!(taken.id, c);
        assert_eq!(taken.text, "c");
        let left: Vec<&str> = q.items().iter().map(|i| i.id.as_str()).collect();
        assert_eq!(left, [a.as_str(), b.as_str(), d.as_str()]);

        // Stalled A is retried as a new message: taken out, and the server may have it.
        let (item, maybe_on_server) = q.take(&a).unwrap();
        assert_eq!(item.id, a);
        assert!(maybe_on_server);
        assert_eq!(q.take(&a), None);
        assert!(!q.retry(&b, T0), "stalled items are not retried in place");
    }

    #[test]
    fn take_first_unposted_leaves_failed_and_posted_heads_alone() {
        let mut rng = SeededRandom(17);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        add(&mut q, "b", T0, &mut rng);
        let p = q.poll_request(T0).unwrap();
        // A waits for a retry: the server may have it, so it must not become a new message.
        q.handle_response(p.ticket, http(503, ""), T0, 0.0);
        assert_eq!(state(&q, &a), ItemState::Queued);
        assert_eq!(q.take_first_unposted(), None);
        let p = q.poll_request(q.poll_timeout().unwrap()).unwrap();
        q.handle_response(p.ticket, http(404, ""), T0, 0.0);
        assert_eq!(state(&q, &a), ItemState::Failed);
        assert_eq!(
            q.take_first_unposted(),
            None,
            "B must not overtake failed A"
        );
        assert_eq!(q.items().len(), 2);

        // An accepted item in front means the server still runs it: B waits.
        let mut q = queue();
        add(&mut q, "a", T0, &mut rng);
        add(&mut q, "b", T0, &mut rng);
        let p = q.poll_request(T0).unwrap();
        q.handle_response(p.ticket, accepted(), T0, 0.0);
        assert_eq!(q.take_first_unposted(), None);
        assert_eq!(queue().take_first_unposted(), None);
    }

    #[test]
    fn a_server_that_refuses_every_seq_fails_the_item_after_max_renumbers() {
        let mut rng = SeededRandom(10);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        for _ in 0..MAX_RENUMBERS {
            let p = q.poll_request(T0).unwrap();
            let effect = q.handle_response(p.ticket, conflict("followup_out_of_order"), T0, 0.0);
            assert_eq!(effect, None);
        }
        let p = q.poll_request(T0).unwrap();
        let effect = q.handle_response(p.ticket, conflict("followup_out_of_order"), T0, 0.0);
        assert_eq!(effect, Some(QueueEffect::Failed { item_id: a.clone() }));
        assert_eq!(state(&q, &a), ItemState::Failed);
        // Visible with its text; a retry tries again.
        assert_eq!(q.get(&a).unwrap().text, "a");
        assert!(q.retry(&a, T0));
    }

    #[test]
    fn every_change_bumps_a_version_that_never_repeats() {
        let mut rng = SeededRandom(18);
        let mut q = queue();
        let a = add(&mut q, "a", T0, &mut rng);
        let b = add(&mut q, "b", T0, &mut rng);
        let mut seen = std::collections::HashSet::new();
        let mut check = |q: &FollowUpQueue, id: &str, last: &mut u64| {
            let v = q.get(id).unwrap().version;
            assert!(v > *last, "version of {id} changed: {v} > {last}");
            assert!(seen.insert(v), "version {v} repeated");
            *last = v;
        };
        let mut va = 0;
        let mut vb = 0;
        check(&q, &a, &mut va);
        check(&q, &b, &mut vb);
        let p = q.poll_request(T0).unwrap();
        check(&q, &a, &mut va);
        q.handle_response(p.ticket, http(503, ""), T0, 0.0);
        check(&q, &a, &mut va);
        let p = q.poll_request(T0 + 1_000).unwrap();
        check(&q, &a, &mut va);
        q.abort_in_flight();
        check(&q, &a, &mut va);
        let p2 = q.poll_request(T0 + 1_000).unwrap();
        check(&q, &a, &mut va);
        q.handle_response(p.ticket, accepted(), T0, 0.0); // stale: no change
        assert_eq!(q.get(&a).unwrap().version, va);
        // Renumbered at once (SPEC §6), and B with it.
        q.handle_response(p2.ticket, conflict("followup_out_of_order"), T0, 0.0);
        check(&q, &a, &mut va);
        check(&q, &b, &mut vb); // re-sequenced behind A
        let p = q.poll_request(T0 + 2_000).unwrap();
        check(&q, &a, &mut va);
        q.handle_response(p.ticket, accepted(), T0, 0.0);
        check(&q, &a, &mut va);
        q.strand(false);
        check(&q, &a, &mut va);
        assert_eq!(
            q.get(&b).unwrap().version,
            vb,
            "untouched item keeps its version"
        );
        let before = q.version();
        let taken = q.take_first_unposted().unwrap();
        assert!(taken.version > vb);
        assert!(q.version() > before, "a removal changes the queue version");
    }

    #[test]
    fn items_serialize_for_the_js_snapshot() {
        let mut rng = SeededRandom(19);
        let mut q = queue();
        let files = vec![FileAttachment {
            media_type: "image/png".into(),
            filename: Some("a.png".into()),
            url: "data:image/png;base64,AA==".into(),
            provider_reference: None,
            provider_metadata: None,
        }];
        q.enqueue("hi".into(), files, T0, &mut rng);
        let p = q.poll_request(T0).unwrap();
        q.handle_response(
            p.ticket,
            http(404, r#"{"error":{"code":"nope","message":"gone"}}"#),
            T0,
            0.0,
        );
        let json = serde_json::to_value(&q.items()[0]).unwrap();
        let obj = json.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "attempts",
                "canRemove",
                "canRetry",
                "canRunNow",
                "clientNonce",
                "clientSeq",
                "error",
                "everPosted",
                "files",
                "id",
                "readOnly",
                "removing",
                "runNow",
                "state",
                "text"
            ]
        );
        assert_eq!(json["state"], "failed");
        assert_eq!(
            (json["runNow"].as_str(), json["canRunNow"].as_bool()),
            (Some("retry"), Some(true))
        );
        assert_eq!(
            (json["readOnly"].as_bool(), json["removing"].as_bool()),
            (Some(false), Some(false))
        );
        assert_eq!(json["clientSeq"], T0);
        assert_eq!(json["everPosted"], true);
        assert_eq!(json["files"][0]["mediaType"], "image/png");
        assert_eq!(json["error"]["serverCode"], "nope");
        for (s, name) in [
            (ItemState::Queued, "queued"),
            (ItemState::Posting, "posting"),
            (ItemState::Accepted, "accepted"),
            (ItemState::Consumed, "consumed"),
            (ItemState::Failed, "failed"),
            (ItemState::Stalled, "stalled"),
            (ItemState::Unsure, "unsure"),
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), name);
        }
    }

    /// A scripted random walk over every input, checking the invariants after each step:
    /// one request in flight, posts in queue order with a settled prefix, seq order equal to
    /// queue order, one nonce per item for its whole life, and no item lost without a trace.
    #[test]
    fn random_walk_keeps_the_invariants() {
        use std::collections::{HashMap, HashSet};

        for seed in 0..40u64 {
            let mut rng = SeededRandom(seed);
            let mut q = FollowUpQueue::new(RetryPolicy {
                max_attempts: 3,
                base_delay_ms: 10,
                max_delay_ms: 100,
            });
            let mut now = T0;
            let mut enqueued: HashMap<String, String> = HashMap::new(); // id → nonce
            let mut gone: HashSet<String> = HashSet::new();
            let mut current: Option<FollowUpPost> = None;
            let mut stale_tickets: Vec<u64> = Vec::new();
            for _ in 0..400 {
                let pick = (rng.unit() * 14.0) as u32;
                let ids: Vec<String> = q.items().iter().map(|i| i.id.clone()).collect();
                let any_id = |rng: &mut SeededRandom| {
                    (!ids.is_empty()).then(|| ids[(rng.unit() * ids.len() as f64) as usize].clone())
                };
                match pick {
                    0 | 1 => {
                        let item = q.enqueue("t".into(), Vec::new(), now, &mut rng);
                        enqueued.insert(item.id.clone(), item.client_nonce.clone());
                    }
                    2..=4 => {
                        if let Some(post) = q.poll_request(now) {
                            assert!(current.is_none());
                            // Everything in front of the posted item is already with the server.
                            let idx = q.index_of(&post.item_id).unwrap();
                            assert!(q.items()[..idx].iter().all(|i| i.state.is_settled()));
                            assert_eq!(enqueued[&post.item_id], post.client_nonce);
                            current = Some(post);
                        }
                    }
                    5..=7 => {
                        let ticket = match current.take() {
                            Some(p) if rng.unit() < 0.9 => p.ticket,
                            Some(p) => {
                                current = Some(p);
                                match stale_tickets.last() {
                                    Some(t) => *t,
                                    None => continue,
                                }
                            }
                            None => match stale_tickets.last() {
                                Some(t) => *t,
                                None => continue,
                            },
                        };
                        let outcome = match (rng.unit() * 8.0) as u32 {
                            0 | 1 => accepted(),
                            2 => PostOutcome::Accepted { duplicate: true },
                            3 => http(503, ""),
                            4 => PostOutcome::Failed(ChatError::network("x")),
                            5 => conflict("followup_out_of_order"),
                            6 => PostOutcome::Aborted,
                            _ => PostOutcome::Deleted,
                        };
                        let was_current = q.in_flight() == Some(ticket);
                        let id = q
                            .in_flight
                            .as_ref()
                            .map(|f| f.item_id.clone())
                            .unwrap_or_default();
                        let deleted = outcome == PostOutcome::Deleted;
                        let before: Vec<FollowUpItem> = q.items().to_vec();
                        let jitter = rng.unit();
                        q.handle_response(ticket, outcome, now, jitter);
                        if !was_current {
                            assert_eq!(q.items(), &before[..], "stale answer changed nothing");
                        } else if deleted {
                            gone.insert(id);
                        }
                        stale_tickets.push(ticket);
                    }
                    8 => {
                        if let Some(t) = q.abort_in_flight() {
                            stale_tickets.push(t);
                            current = None;
                        }
                    }
                    9 => {
                        if let Some(id) = any_id(&mut rng) {
                            if rng.unit() < 0.5 {
                                q.retry(&id, now);
                            } else {
                                let posted = q.get(&id).unwrap().ever_posted;
                                let keys = q.remove(&id).unwrap();
                                assert_eq!(keys.is_some(), posted);
                                gone.insert(id);
                            }
                        }
                    }
                    10 => {
                        if let Some(id) = any_id(&mut rng) {
                            let nonce = enqueued[&id].clone();
                            let item = q.consume_by_nonce(&nonce).unwrap();
                            assert_eq!(item.id, id);
                            gone.insert(id);
                        }
                    }
                    11 => {
                        if let Some(item) = q.consume_oldest_posted() {
                            assert!(item.ever_posted);
                            gone.insert(item.id);
                        }
                    }
                    12 => {
                        q.strand(false);
                        if let Some(item) = q.take_first_unposted() {
                            assert!(!item.ever_posted);
                            gone.insert(item.id);
                        }
                    }
                    _ => {
                        now = match q.poll_timeout() {
                            Some(t) if rng.unit() < 0.7 => t.max(now),
                            _ => now + (rng.unit() * 50.0) as u64,
                        };
                    }
                }
                // Removing or consuming an item keeps its ticket in flight until its answer.
                assert_eq!(current.as_ref().map(|p| p.ticket), q.in_flight());

                // Invariants.
                let posting: Vec<&FollowUpItem> = q
                    .items()
                    .iter()
                    .filter(|i| i.state == ItemState::Posting)
                    .collect();
                assert!(posting.len() <= 1);
                // A posting item is the one in flight; the slot may outlive a removed item.
                assert!(posting.len() <= usize::from(q.in_flight().is_some()));
                if let (Some(item), Some(f)) = (posting.first(), q.in_flight.as_ref()) {
                    assert_eq!(item.id, f.item_id);
                }
                assert!(q
                    .items()
                    .windows(2)
                    .all(|w| w[0].client_seq < w[1].client_seq));
                assert!(q.items().iter().all(|i| i.state != ItemState::Consumed));
                for item in q.items() {
                    assert_eq!(enqueued[&item.id], item.client_nonce);
                    assert!(!gone.contains(&item.id));
                    assert!(item.attempts <= 3);
                }
                let present: HashSet<&String> = q.items().iter().map(|i| &i.id).collect();
                for id in enqueued.keys() {
                    assert!(present.contains(id) ^ gone.contains(id), "{id} lost");
                }
            }
        }
    }
}
