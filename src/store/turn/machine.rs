//! The turn's machine state: where the turn this client follows is ([`Phase`]), what it
//! holds, and how it can end ([`Ending`]). The transitions are `turn.rs`'s.

use super::super::*;

/// Where the turn this client follows is. The public [`Status`] is derived from it, and a
/// combination that cannot happen (a stream while idle, a resume time while streaming, a held
/// turn beside a running one) cannot be written.
#[derive(Debug)]
pub(in crate::store) enum Phase {
    /// No turn runs; `failed` when the last one ended in an error (status `error`).
    Idle { failed: bool },
    /// A follow-up re-sent as a new message: its user message is shown, and its chat POST
    /// waits for the DELETE of the server's copy (or the copy could still run first).
    Held(Box<HeldTurn>),
    /// The chat POST is out and nothing of its answer is shown yet.
    Submitted { stream: RequestId },
    /// The turn's stream (the chat POST's body, or a resume's) is being read.
    Streaming { stream: RequestId },
    /// No stream is read but the server's turn may go on: a resume is due at `at`, or, while
    /// the session is parked (`None`), when it is current again.
    Resuming { at: Option<u64> },
}

/// A turn whose chat POST waits for the follow-up DELETEs still out ([`TakeBacks`]): a copy
/// the server still holds would run after its message, out of the user's order (or unasked,
/// if the user removed it). One that got no answer goes again after a backoff, and the turn
/// waits; its user message is shown meanwhile.
#[derive(Debug)]
pub(in crate::store) struct HeldTurn {
    /// The `clientNonce` of the server's copy of the text it sends (a follow-up sent again as
    /// a new message): if that copy runs already, the turn is not sent.
    pub(in crate::store) nonce: Option<String>,
    /// The user message this turn added (shown while it waits; a state read that replaces
    /// the history shows it again), withdrawn if it never goes.
    pub(in crate::store) bubble: Option<UIMessage>,
    /// The `(clientNonce, clientSeq)` of the queued follow-up, never posted, that this turn
    /// sends as the next message: a stop puts it back in the queue.
    pub(in crate::store) unposted: Option<(String, u64)>,
    /// pi-native: the follow-up's [`FollowUpItem::texts_before`](crate::machines::followup_queue::FollowUpItem)
    /// (the copy `nonce` names): a state read that shows a server message of its text more
    /// says that copy ran.
    pub(in crate::store) texts_before: usize,
    pub(in crate::store) trigger: &'static str,
    pub(in crate::store) message_id: Option<String>,
    pub(in crate::store) text: String,
    pub(in crate::store) files: Vec<FileAttachment>,
    pub(in crate::store) options: SendOptions,
}

impl Phase {
    pub(in crate::store) const IDLE: Phase = Phase::Idle { failed: false };

    pub(in crate::store) fn status(&self) -> Status {
        match self {
            Phase::Idle { failed: false } => Status::Ready,
            Phase::Idle { failed: true } => Status::Error,
            Phase::Held(_) | Phase::Submitted { .. } => Status::Submitted,
            Phase::Streaming { .. } | Phase::Resuming { .. } => Status::Streaming,
        }
    }

    /// The server may be running a turn this client started (or followed).
    pub(in crate::store) fn running(&self) -> bool {
        matches!(
            self,
            Phase::Submitted { .. } | Phase::Streaming { .. } | Phase::Resuming { .. }
        )
    }

    /// The request whose body is the turn's stream.
    pub(in crate::store) fn stream(&self) -> Option<RequestId> {
        match self {
            Phase::Submitted { stream } | Phase::Streaming { stream } => Some(*stream),
            _ => None,
        }
    }

    /// The held turn, leaving the phase idle; `None` (and the phase as it was) otherwise.
    pub(in crate::store) fn take_held(&mut self) -> Option<HeldTurn> {
        if !matches!(self, Phase::Held(_)) {
            return None;
        }
        match std::mem::replace(self, Phase::IDLE) {
            Phase::Held(held) => Some(*held),
            _ => None,
        }
    }

    pub(in crate::store) fn resume_at(&self) -> Option<u64> {
        match self {
            Phase::Resuming { at } => *at,
            _ => None,
        }
    }
}

/// How a turn this client follows ends; [`ChatStore::end_turn`] is the one path.
pub(in crate::store) enum Ending {
    /// Its stream ended on its own (or a resume found nothing left): ready, or failed after
    /// an `error` chunk. Queued items move on.
    Finished,
    /// The user stopped it (the server was told); queued items wait for the user.
    Stopped,
    /// A request of it failed with this error; queued items wait for the user.
    Failed(ChatError),
    /// A resume found nothing to follow (204, 416): its end was not seen here. Ready, as after
    /// `Finished`, except for the follow-ups the server accepted: their fate is unknown (a
    /// server whose resume route answers 204 while its turn runs consumes them still), so
    /// they keep their nonce and seq, `accepted`, until the history shows them ran; never
    /// taken back and posted again as new (each would run twice, and a chat POST of one
    /// meets the running turn, attaches, finds 204 again, and starts over).
    Unseen,
    /// The store follows it no further: its stream grew past a bound (`limits`), or its
    /// server keeps a history this build cannot read. Stopped as the user stops it (the
    /// server told, what it showed kept and closed), and reported as this error, not as a
    /// stop ([`ChatStore::refuse_turn`]).
    Refused(ChatError),
}

/// What a chat POST asked ([`Turn::sent`]).
#[derive(Debug)]
pub(in crate::store) struct SentTurn {
    /// The user message it showed (a new or edited one), if any.
    pub(in crate::store) user_message: Option<String>,
    pub(in crate::store) text: String,
    pub(in crate::store) files: Vec<FileAttachment>,
}

/// The turn this client follows: where it is ([`Phase`], the status derives from it), and
/// what the turn it started last holds (made afresh by each, [`Turn::restart`], so nothing
/// of the last turn leaks into the next). A turn ends in one place,
/// [`ChatStore::end_turn`], with one [`Ending`].
#[derive(Debug)]
pub(in crate::store) struct Turn {
    /// Where the turn is; the status is derived from it.
    pub(in crate::store) phase: Phase,
    /// What the history answer said of a running turn, until the store can act on it (the
    /// capabilities decide which reducer reads the turn).
    pub(in crate::store) running_hint: Option<RunningTurn>,
    /// The stream route asked whether a turn runs (no `activeTurn` said): its answer decides.
    pub(in crate::store) probe: Option<RequestId>,
    /// The history asked for after a stop: what the server kept, not a turn to attach to (the
    /// stopped one may still be winding down there).
    pub(in crate::store) after_stop: bool,
    /// The last turn ended unseen (`Ending::Unseen`): what the server accepted is left to
    /// the history, never taken back, until a turn's end is seen again.
    pub(in crate::store) end_unseen: bool,
    /// The last turn ended by a stop (the user's, or its request aborted): not a failure, a
    /// turn cut short (`snapshot.stopped`).
    pub(in crate::store) stopped: bool,
    /// The last turn ended on its own: items still waiting to be posted go out as the next
    /// turn once no follow-up POST is in flight. A stop or a failed turn leaves them waiting
    /// for the user.
    pub(in crate::store) send_queue_when_idle: bool,
    /// The `clientTurnId` of the turn this client started last.
    pub(in crate::store) client_turn_id: Option<String>,
    /// The server's id of the running turn (`x-turn-id`, `data-turn-start`).
    pub(in crate::store) turn_id: Option<String>,
    pub(in crate::store) decoder: SseDecoder,
    /// Events received in this turn's stream (across resumes): the cursor when the server
    /// sends no ids.
    pub(in crate::store) events_seen: u64,
    /// The stream reached `[DONE]`.
    pub(in crate::store) stream_done: bool,
    /// An `error` chunk was seen in this turn.
    pub(in crate::store) stream_error: bool,
    pub(in crate::store) finish_reason: Option<String>,
    pub(in crate::store) resume_tries: u32,
    /// What this client's chat POST asked, for a refusal that hands it back (a 409
    /// `turn_already_active`): the user message it showed, its text and files.
    pub(in crate::store) sent: Option<SentTurn>,
    /// What the turn's stream made the history hold, against `limits`.
    pub(in crate::store) growth: super::growth::Growth,
    /// The SSE beats (`:` comments) of the turn's streams, for the watchdog.
    pub(in crate::store) beats: super::liveness::Beats,
}

impl Turn {
    /// A turn this client starts (`client_turn_id`): what the last one asked and streamed
    /// goes; where the session's turn is (its phase, a hint or probe on its way) stays.
    pub(in crate::store) fn restart(
        &mut self,
        client_turn_id: Option<String>,
        max_event_bytes: usize,
    ) {
        let fresh = Turn::new(client_turn_id, max_event_bytes);
        let kept = std::mem::replace(self, fresh);
        self.phase = kept.phase;
        self.running_hint = kept.running_hint;
        self.probe = kept.probe;
        self.after_stop = kept.after_stop;
        self.end_unseen = kept.end_unseen;
        self.send_queue_when_idle = kept.send_queue_when_idle;
    }

    /// A turn as it starts (`client_turn_id` when this client started it), or none at all
    /// (a new session).
    pub(in crate::store) fn new(client_turn_id: Option<String>, max_event_bytes: usize) -> Self {
        Turn {
            phase: Phase::IDLE,
            running_hint: None,
            probe: None,
            after_stop: false,
            end_unseen: false,
            stopped: false,
            send_queue_when_idle: false,
            client_turn_id,
            turn_id: None,
            decoder: SseDecoder::with_max_event_bytes(max_event_bytes),
            events_seen: 0,
            stream_done: false,
            stream_error: false,
            finish_reason: None,
            resume_tries: 0,
            sent: None,
            growth: Default::default(),
            beats: Default::default(),
        }
    }

    /// `useChat`'s status goes from `submitted` to `streaming` at the first chunk that changes
    /// the message (the gate's `Effect::Streams`), not at the first byte: a UI shows its
    /// waiting indicator until then, and no empty answer. `true` when it went.
    pub(in crate::store) fn begin_streaming(&mut self) -> bool {
        if let Phase::Submitted { stream } = self.phase {
            self.phase = Phase::Streaming { stream };
            return true;
        }
        false
    }

    /// The stream dropped (`error`): resumed after a backoff, while tries are left (said to
    /// the host as a diagnostic); else the error comes back, for the turn to fail with it.
    pub(in crate::store) fn schedule_resume(
        &mut self,
        error: ChatError,
        opts: &StoreOptions,
        now_ms: u64,
        out: &mut Outbox,
    ) -> Result<(), ChatError> {
        if self.resume_tries >= opts.resume_attempts {
            return Err(error);
        }
        let delay = (opts.resume_delay_ms).saturating_mul(1 << self.resume_tries.min(16));
        self.resume_tries += 1;
        self.phase = Phase::Resuming {
            at: Some(now_ms + delay),
        };
        out.diagnostic(&format!("stream dropped ({}); resuming", error.message));
        Ok(())
    }
}
