//! What the answer to a prompt's attempt (or to the session's creation) says, decided by the
//! native session from what it holds: the prompt on its way, its busy refusals, the link.
//! The store acts on the verdict: it sends, ends the turn, tells the host.

use super::*;
use crate::machines::followup_queue::RetryPolicy;

/// What the prompt on its way does next, for the store to apply.
pub(in crate::store) enum PromptMove {
    /// Taken: `submitted` until its run starts on the events stream.
    Taken,
    /// Its next attempt goes now.
    Post,
    /// The server made the session and named it so: the prompt goes now.
    Created(String),
    /// Refused as busy too often with no run showing: the turn fails with `error`, the prompt
    /// kept for `regenerate()`.
    GiveUp {
        out: Option<PromptOut>,
        error: ChatError,
    },
    /// Refused because a run is on (another client's run the events already showed, or the
    /// one the state read since shows): the message goes as its follow-up (`error` if it
    /// cannot).
    FollowUp(ChatError),
    /// Refused as busy again with no run showing: the state is read now and the prompt goes
    /// again after `wait` ms.
    Wait(u64),
    /// The attempt failed; `reread`: whether it landed, only the state can say.
    Failed { error: ChatError, reread: bool },
}

/// What a failed attempt of the prompt (or of the session's creation) leads to.
pub(in crate::store) enum Failure {
    /// Tried again after a backoff, with the same `requestId`.
    Retry,
    /// Given up after its attempts while its fate is unknown (no answer, a 5xx): the turn
    /// fails, the prompt kept for `regenerate()`.
    GiveUp(Option<PromptOut>),
    /// The turn fails. `Some`: the server answered no (a 4xx it would answer again), so
    /// nothing of the message is there and the composer may get it back.
    Fail(Option<PromptOut>),
}

impl NativeSession {
    /// An attempt of the prompt on its way failed with `error`: tried again after a backoff
    /// (`policy`, `jitter`) while the error is worth it and attempts are left, else given up
    /// (`error` says how often it was sent) or failed.
    pub(in crate::store) fn attempt_failed(
        &mut self,
        error: &mut ChatError,
        policy: &RetryPolicy,
        jitter: f64,
        now_ms: u64,
    ) -> Failure {
        if let Some(out) = self.prompt.as_mut() {
            if error.is_retryable()
                && out.attempts < policy.max_attempts.clamp(1, MAX_PROMPT_ATTEMPTS)
            {
                out.retry_at = Some(now_ms + policy.backoff_ms(out.attempts, jitter));
                return Failure::Retry;
            }
        }
        let out = self.prompt.take();
        if error.is_retryable() {
            let attempts = out.as_ref().map_or(0, |o| o.attempts);
            error.message = format!(
                "{} (the message was sent {attempts} times without an answer; retrying sends \
                 it again, and it runs once)",
                error.message
            );
            return Failure::GiveUp(out);
        }
        // Without an answer it may have landed: its message stays, with the error.
        let refused = error.status.is_some_and(|s| (400..500).contains(&s));
        Failure::Fail(out.filter(|_| refused))
    }

    /// The answer (or the failure) of the attempt of kind `kind` (a prompt's, or the
    /// session's creation) of the prompt on its way. A prompt taken forgets its attempts;
    /// a session made is followed from now on.
    pub(in crate::store) fn prompt_answered(
        &mut self,
        kind: RequestKind,
        answer: NativeAnswer<'_>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> PromptMove {
        let (status, body) = match answer {
            Ok(answer) => answer,
            Err(message) => {
                let error = ChatError::network(message);
                return PromptMove::Failed {
                    error,
                    reread: false,
                };
            }
        };
        let ok = (200..300).contains(&status);
        if kind == RequestKind::NativeCreate {
            let named = ok
                .then(|| crate::protocol::json::from_slice(body).ok())
                .flatten()
                .and_then(|v| Some(v.get("sessionId")?.as_str()?.to_string()))
                .filter(|s| !s.is_empty());
            let Some(session_id) = named else {
                let error = match ok {
                    true => ChatError::protocol("the session create answer names no sessionId"),
                    false => refusal(status, body, "session create answer"),
                };
                return PromptMove::Failed {
                    error,
                    reread: false,
                };
            };
            self.missing = false;
            self.link.open();
            if let Some(out) = self.prompt.as_mut() {
                out.attempts = 0;
            }
            return PromptMove::Created(session_id);
        }
        if ok {
            self.prompt = None;
            self.busy_refusals = 0;
            // Without a cursor, any run that starts from now on is taken for this prompt's.
            let cursor = crate::protocol::json::from_slice(body)
                .ok()
                .and_then(|v| v.get("cursor")?.as_u64());
            self.prompt_cursor = Some(cursor.unwrap_or(0));
            return PromptMove::Taken;
        }
        let error = refusal(status, body, "prompt answer");
        if error.kind == ErrorKind::TurnAlreadyActive {
            return self.busy_refused(error, now_ms, rng);
        }
        // Whether it landed, only the state can say (reference §4); it shows there if so.
        let reread = error.says("AGENT_REQUEST_OUTCOME_UNKNOWN");
        PromptMove::Failed { error, reread }
    }

    /// The prompt met a run this client did not know of (another tab's, or one whose start
    /// the events have not brought yet): as over the first transport (SPEC §6), not a failure
    /// of the message. The store follows that run and sends the text as a follow-up to it;
    /// the state is read again at once, so a run that ended meanwhile ends here too (and the
    /// follow-up, accepted while idle, is taken back and sent as the next message).
    ///
    /// Refused again with no run shown since (a server whose `/state` says idle while its
    /// prompt route says busy), the prompt itself waits a backoff and goes again, the same
    /// bytes; after [`MAX_BUSY_REFUSALS`] the turn fails (`error` says so), the prompt kept
    /// for `regenerate()`. No prompt on its way: nothing to do (`Taken`).
    fn busy_refused(
        &mut self,
        mut error: ChatError,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> PromptMove {
        if self.prompt.is_none() {
            return PromptMove::Taken;
        }
        self.busy_refusals += 1;
        let refusals = self.busy_refusals;
        if refusals >= MAX_BUSY_REFUSALS {
            self.busy_refusals = 0;
            error.message = format!(
                "{} (refused as busy {refusals} times while nothing ran; retrying sends it \
                 again, and it runs once)",
                error.message
            );
            let out = self.prompt.take();
            return PromptMove::GiveUp { out, error };
        }
        if refusals == 1 && self.link.gate().status() == RunStatus::Running {
            return PromptMove::FollowUp(error);
        }
        // Else the prompt waits the backoff (from ~2 s): refused again at most a few times
        // a minute.
        let wait = crate::machines::native_link::backoff_ms(refusals, rng.unit());
        if let Some(out) = self.prompt.as_mut() {
            out.retry_at = Some(now_ms + wait);
            out.met_a_run = true;
        }
        PromptMove::Wait(wait)
    }
}
