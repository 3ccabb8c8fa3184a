//! The session's side of its reads (SPEC §14): what an answer or the events' bytes do to the
//! session's own state, decided here; the store acts on what comes back (the link's notes, a
//! bound passed, the turn's end), since only it sends requests and tells the host.

use super::*;
use crate::machines::native_link::{commands, LinkNote, Read};
use crate::reduce::pi_native::RunStatus;

/// What one read's bytes did to the bounds on the answer and the history.
pub(in crate::store) enum Growth {
    /// A bound was passed while a run this client follows goes on: the run is stopped.
    Passed(growth::Passed),
    /// The run went on after its stop, past one more answer's worth: the events are no longer
    /// followed (the read `read` is to be aborted), and the session shows `error`.
    Unfollowed {
        read: Option<RequestId>,
        error: ChatError,
    },
}

/// Which read a native request is.
pub(in crate::store) fn read_of(kind: RequestKind) -> Read {
    match kind {
        RequestKind::NativeState => Read::State,
        _ => Read::Events,
    }
}

impl Session {
    /// `/api/v1/agents/{agentType}/sessions/{sessionId}` of this session, for the store's
    /// agent type `agent`.
    pub(in crate::store) fn native_base(&self, agent: Option<&str>) -> String {
        commands::session_path(agent.unwrap_or("pi"), &self.id)
    }

    /// (Re)opens the link: the state, then the events. The error a link that gave up said no
    /// longer holds; the store makes the read it asks for.
    pub(in crate::store) fn follow_again(&mut self) {
        let said = self.native.link.open();
        self.unsay(said);
    }

    /// The events stream answered `status`: connected (2xx), an error saying the stream
    /// could not be reached no longer holds. Whether the session's error went.
    pub(in crate::store) fn events_connected(&mut self, status: u16) -> bool {
        if !(200..300).contains(&status) {
            return false;
        }
        let said = self.native.link.reached();
        self.unsay(said)
    }

    /// The read in flight `id` is over (`answer`: answered, or failed): the link is told, and
    /// what it makes of it comes back for the store to act on. Another read's end is moot
    /// (`None`).
    pub(in crate::store) fn read_over(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        answer: NativeAnswer<'_>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
    ) -> Option<Vec<LinkNote>> {
        if self.native.read != Some(id) {
            return None;
        }
        self.native.read = None;
        let mut notes = Vec::new();
        let (link, read) = (&mut self.native.link, read_of(kind));
        match answer {
            Ok(answer) => {
                let history = &mut self.conversation;
                link.answer_end(history, read, answer, now_ms, rng, &mut notes)
            }
            Err(message) => link.failed(read, message, now_ms, rng, &mut notes),
        }
        Some(notes)
    }

    /// The events of `bytes` were applied: while a run this client follows goes on, its
    /// answer and the history are held to `limits` as over the SSE routes (measured per read,
    /// so a bound is passed by one read's bytes at most): the run is stopped, what it showed
    /// kept, and the turn fails with `LimitExceeded`. A run that goes on regardless (the
    /// events stream is the session's, not the turn's) is followed for one more answer's
    /// worth, then not at all: the events stream is given up until the session is opened
    /// again, so no server can grow the history past what JS can hold.
    pub(in crate::store) fn native_growth(
        &mut self,
        bytes: usize,
        limits: &Limits,
    ) -> Option<Growth> {
        let history = self.conversation.history().messages();
        if self.turn.phase.running() {
            let passed = self.turn.growth.after_event(bytes, history, limits)?;
            self.turn.growth.stopped();
            return Some(Growth::Passed(passed));
        }
        let runs_on = self.native.link.gate().status() == RunStatus::Running;
        if !(runs_on && self.turn.growth.ignored_stop(bytes, history, limits)) {
            return None;
        }
        self.native.link.close();
        let read = self.native.read.take();
        let mut error = growth::Passed::Message(limits.max_message_chars).error();
        error.message = format!(
            "{}; the run went on after its stop, and its events are no longer followed \
             (open the session again to read it)",
            error.message
        );
        self.error = Some(error.clone());
        Some(Growth::Unfollowed { read, error })
    }

    /// A state was read: a run it says is on is followed (as an attach); one this client
    /// thought was on and is not any more has ended (the ending, for the store to apply).
    pub(in crate::store) fn native_state_read(&mut self) -> Option<Ending> {
        let running = self.native.link.gate().status() == RunStatus::Running;
        if running {
            // A busy refusal met a real run.
            self.native.busy_refusals = 0;
        }
        match (&self.turn.phase, running) {
            // Its start was among the events the gap lost, or another client's run.
            (Phase::Submitted { .. }, true) if !self.prompt_ran() => None,
            (Phase::Idle { .. } | Phase::Resuming { .. } | Phase::Submitted { .. }, true) => {
                self.prompt_runs_in_shown_run();
                None
            }
            // Ended while this client did not read its events (a gap, a switch away).
            (Phase::Streaming { .. } | Phase::Resuming { .. }, false) => Some(Ending::Finished),
            // This client's prompt ran and ended meanwhile: its user message is in the state.
            (Phase::Submitted { .. }, false) if self.prompt_ran() => Some(Ending::Finished),
            _ => None,
        }
    }

    /// `POST …/stop` goes (its path is returned): the run's `ABORTED` that follows is a plain
    /// stop, not an error. The server drops its whole queue with the stop: what it had
    /// accepted will not run and is not there to take back; it waits for the user (`stalled`).
    pub(in crate::store) fn stopping(&mut self, agent: Option<&str>) -> String {
        self.native.link.gate_mut().stopping();
        for (_, nonce) in self.queue.strand(false) {
            self.take_backs.taken_already(&nonce);
            // A removal on its way, or one the server kept, is done: the server drops it.
            if (self.queue.items().iter())
                .any(|i| i.client_nonce == nonce && (i.removing || queue::removal_refused(i)))
            {
                self.queue.take_by_nonce(&nonce);
            }
        }
        format!("{}/stop", self.native_base(agent))
    }
}
