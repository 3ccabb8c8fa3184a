//! A follow-up as the snapshot shows it (`QueuedItem`): its fields, what the user may do with
//! it, and what "Run Now" does for it, decided here once ([`FollowUpItem::run_now`]).

use super::*;

/// What "Run Now" (`runQueuedNow`) does for an item, decided by the store from the item, the
/// turn and the transport, and shown on the item (`runNow`) so a UI restates no rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "RunNow"))]
#[serde(rename_all = "kebab-case")]
pub enum RunNow {
    /// It is retried now, as `retryQueued`: a `failed` one posted again, a `stalled` or
    /// `unsure` one sent as a new message (once no turn runs).
    Retry,
    /// pi-native: it is the first of the server's queue and a run is on: the server stops the
    /// running answer (`POST …/interrupt`) and runs it next.
    Interrupt,
    /// It runs after the current answer (the server's order); this server, its place in the
    /// queue, or an interrupt already on its way allows nothing sooner.
    AfterCurrent,
    /// Nothing applies now: another client's row, a removal on its way, a `stalled` one while
    /// a turn runs (it can be retried once the turn ended).
    None,
}

/// The answer of `runQueuedNow(id)`: what it did, or why it did nothing.
// Given to JS as its name (`as_str`): a serializer for a bare string costs wasm bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "RunNowOutcome", rename_all = "kebab-case")
)]
pub enum RunNowOutcome {
    /// Retried ([`RunNow::Retry`]).
    Retried,
    /// The interrupt is on its way ([`RunNow::Interrupt`]).
    Interrupting,
    /// Nothing sooner is possible: it runs after the current answer ([`RunNow::AfterCurrent`]).
    AfterCurrent,
    /// Nothing applies now ([`RunNow::None`]); the item says why (`readOnly`, `removing`,
    /// `state`).
    NotNow,
    /// No item with that id (gone already: it ran, or was removed), or the store is disposed.
    NotFound,
}

impl RunNowOutcome {
    /// Its name in TypeScript's `RunNowOutcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunNowOutcome::Retried => "retried",
            RunNowOutcome::Interrupting => "interrupting",
            RunNowOutcome::AfterCurrent => "after-current",
            RunNowOutcome::NotNow => "not-now",
            RunNowOutcome::NotFound => "not-found",
        }
    }
}

/// A [`FollowUpItem`] as the snapshot shows it (`QueuedItem` in TypeScript): its own fields
/// a UI reads and what the user may do with it.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "QueuedItem"))]
#[serde(rename_all = "camelCase")]
pub struct QueuedItemJson<'a> {
    id: &'a str,
    client_nonce: &'a str,
    client_seq: u64,
    text: &'a str,
    files: &'a [FileAttachment],
    state: ItemState,
    attempts: u32,
    error: &'a Option<ChatError>,
    ever_posted: bool,
    /// A row of the server's queue that another client posted (another tab, this page before a
    /// reload; pi-native): shown where the server runs it, never retried or removed here.
    read_only: bool,
    /// The user removed it and the server may still run it: it stays until the server's queue
    /// no longer holds it (pi-native). If it cannot be taken back, `removing` turns false again
    /// and `error` says why.
    removing: bool,
    /// Retry applies (`retryQueued`): the store's rule, so a UI restates none.
    can_retry: bool,
    /// Remove applies (`removeQueued`).
    can_remove: bool,
    /// What Run Now does for it (`runQueuedNow`).
    run_now: RunNow,
    /// Run Now does something now (`retry` or `interrupt`).
    can_run_now: bool,
}

impl Serialize for FollowUpItem {
    /// As shown with no turn running and no interrupt possible.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.shown(self.run_now(false, false)).serialize(s)
    }
}

impl FollowUpItem {
    /// The item as the snapshot shows it, with what Run Now does for it.
    pub fn shown(&self, run_now: RunNow) -> QueuedItemJson<'_> {
        QueuedItemJson {
            id: &self.id,
            client_nonce: &self.client_nonce,
            client_seq: self.client_seq,
            text: &self.text,
            files: &self.files,
            state: self.state,
            attempts: self.attempts,
            error: &self.error,
            ever_posted: self.ever_posted,
            read_only: self.read_only,
            removing: self.removing,
            can_retry: self.can_retry(),
            can_remove: self.can_remove(),
            run_now,
            can_run_now: matches!(run_now, RunNow::Retry | RunNow::Interrupt),
        }
    }

    /// What Run Now does for it while a turn runs (`busy`) and the server can run it at once
    /// (`interruptible`: pi-native, a run on, the first row of the server's queue). The one
    /// place the rule is.
    pub fn run_now(&self, busy: bool, interruptible: bool) -> RunNow {
        if self.read_only || self.removing {
            return RunNow::None;
        }
        match self.state {
            ItemState::Failed => RunNow::Retry,
            // Sent as a new message, which waits for the turn to end (`retry`).
            ItemState::Stalled | ItemState::Unsure if busy => RunNow::None,
            ItemState::Stalled | ItemState::Unsure => RunNow::Retry,
            ItemState::Accepted if interruptible => RunNow::Interrupt,
            ItemState::Queued | ItemState::Posting | ItemState::Accepted => RunNow::AfterCurrent,
            ItemState::Consumed => RunNow::None,
        }
    }
}
