//! Liveness (issue 41): a stream that beats is told dead from one that is only quiet.
//!
//! A server may send beats between its data: pi-native `/events` heartbeat frames (at open,
//! then every [`NATIVE_HEARTBEAT_MS`]), SSE `:` comments on the chat and stream routes. Once the
//! stream being read has beaten and its interval is known, it is failed when nothing at all
//! (no beat, no data) came for the interval plus `heartbeatGraceMs`; a stream that never beat
//! keeps `streamIdleTimeoutMs`. The failure runs the usual recovery first (SSE: a resume on
//! the stream route; pi-native: the link's reconnect from its cursor); when that fails too,
//! the turn ends with [`ErrorKind::StreamStalled`]. A long silent tool run on a beating
//! server is never cut: its beats go on.

use super::*;

/// The pi-native protocol's heartbeat interval: the real server beats at open, then every
/// 25 s (a constant there, not configurable).
#[cfg(feature = "pi")]
pub(super) const NATIVE_HEARTBEAT_MS: u64 = 25_000;

/// Beats closer than this teach no interval: padding comments sent together are one beat, not
/// a server that beats every millisecond.
const MIN_LEARNED_MS: u64 = 1_000;

/// The beats seen on a stream, across its reconnects.
#[derive(Debug, Default, Clone)]
pub(super) struct Beats {
    /// When the last beat came on the stream being read; `None` until its first.
    last_ms: Option<u64>,
    /// The longest time seen between two beats (at least [`MIN_LEARNED_MS`]), `0` when none.
    learned_ms: u64,
    /// The watchdog failed the stream and no beat came since: its failure is a stall.
    pub(super) stalled: bool,
}

impl Beats {
    /// A beat came at `now_ms`.
    pub(super) fn beat(&mut self, now_ms: u64) {
        if let Some(last) = self.last_ms {
            let gap = now_ms.saturating_sub(last);
            if gap >= MIN_LEARNED_MS {
                self.learned_ms = self.learned_ms.max(gap);
            }
        }
        self.last_ms = Some(now_ms);
        self.stalled = false;
    }

    /// A new connection of the stream answered 2xx: the server is there again (a stall is
    /// over), and it is watched from its own first beat (the interval learned so far is kept).
    pub(super) fn opened(&mut self) {
        self.last_ms = None;
        self.stalled = false;
    }

    /// The silence after which the stream counts as dead, once it beat: the interval (the
    /// one the protocol or server declares, raised to the longest gap seen) plus `grace`.
    /// `None` while the stream has not beaten, its interval is unknown, or `grace` is off.
    pub(super) fn window(&self, declared_ms: Option<u64>, grace: Option<u64>) -> Option<u64> {
        let grace = grace?;
        self.last_ms?;
        let interval = declared_ms.unwrap_or(0).max(self.learned_ms);
        (interval > 0).then(|| interval.saturating_add(grace))
    }

    /// The watchdog fired after `window_ms` of silence: the error the attempt fails with
    /// (the recovery runs next), and the turn's failure after it counts as a stall.
    pub(super) fn stall(&mut self, window_ms: u64) -> String {
        self.stalled = true;
        format!("no heartbeat or data for {window_ms} ms")
    }
}

/// The deadline of a stream's request after a byte at `now_ms`: the idle timeout, or the
/// beat window when it is shorter.
pub(super) fn stream_deadline(idle: Option<u64>, window: Option<u64>, now_ms: u64) -> Option<u64> {
    let at = |t: Option<u64>| t.map(|t| now_ms.saturating_add(t));
    match (at(idle), at(window)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The error a turn that stalled ends with: the recovery's own failure, under the stall's kind.
pub(super) fn stalled_error(cause: ChatError) -> ChatError {
    ChatError {
        kind: ErrorKind::StreamStalled,
        message: format!(
            "the stream stopped beating and could not be picked up again: {}",
            cause.message
        ),
        ..cause
    }
}

/// The error a pi-native turn ends with when the link cannot reach the server (a closed
/// socket, the reconnects refused): `cause`'s kind and status, said as the run's loss.
#[cfg(feature = "pi")]
pub(super) fn lost_run_error(cause: ChatError) -> ChatError {
    ChatError {
        message: format!("the answer could not be followed: {}", cause.message),
        ..cause
    }
}

impl ChatStore {
    /// Request `id` timed out: when it is a beating stream (the turn's SSE stream, the
    /// pi-native events), the watchdog's word for it, and its stream counts as stalled.
    pub(super) fn stall_of(&mut self, id: RequestId) -> Option<String> {
        let grace = self.opts.heartbeat_grace_ms;
        // pi-native first: its turn's phase names no SSE stream of its own.
        #[cfg(feature = "pi")]
        if self.opts.native() {
            let beats = &mut self.session.native.beats;
            let window = (self.session.native.read == Some(id))
                .then(|| beats.window(Some(NATIVE_HEARTBEAT_MS), grace));
            return window.flatten().map(|w| beats.stall(w));
        }
        if self.session.turn.phase.stream() != Some(id) {
            return None;
        }
        let beats = &mut self.session.turn.beats;
        let window = beats.window(self.session.runtime.heartbeat_ms, grace)?;
        Some(beats.stall(window))
    }
}
