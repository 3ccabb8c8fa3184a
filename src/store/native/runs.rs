//! The runs the events show, as the session sees them (SPEC §14): whose run started, whether
//! the run that ended or failed was this client's turn's, and what a user message the server
//! committed says of this client's prompts. Decided here, on the session alone; the store
//! ends the turn or stops the run where this says so.

use super::*;
use crate::protocol::pi_native::EndStatus;

impl Session {
    /// A run started (`turn_id`, at the events' `seq`): this client's prompt's, or one it
    /// follows. A busy refusal met a real run.
    pub(in crate::store) fn run_started(&mut self, turn_id: String, seq: u64) {
        self.native.busy_refusals = 0;
        match self.turn.phase {
            // A run that starts while this client's prompt is on its way is that prompt's
            // only at or after its receipt's cursor, else when its user message carries
            // the prompt's nonce: before, it is an earlier run (another tab's), whose end
            // must not end this turn nor take its follow-ups back.
            Phase::Submitted { .. } => {
                if self.native.prompt_cursor.is_some_and(|c| seq >= c) {
                    self.prompt_runs(Some(turn_id));
                }
            }
            Phase::Streaming { .. } => self.turn.turn_id = Some(turn_id),
            // This client's next message waits for a take-back: another run (another
            // client's, a prompt stopped on its way) does not replace it. Its prompt
            // meets that run and goes as a follow-up, or goes once the run is over.
            Phase::Held(_) => {}
            // A run another client or a follow-up started.
            _ => self.prompt_runs(Some(turn_id)),
        }
    }

    /// A run ended with `status`: how this client's turn ends, if the run was its own.
    pub(in crate::store) fn run_ended(&self, status: EndStatus) -> Option<Ending> {
        let ours = match self.turn.phase {
            Phase::Streaming { .. } => true,
            // The run's start was lost in a gap the state did not cover; another
            // run's end is not this prompt's.
            Phase::Submitted { .. } => self.prompt_ran_by_nonce(),
            _ => false, // stopped here already
        };
        if !ours {
            return None;
        }
        Some(match (status, self.native.link.gate().error()) {
            (EndStatus::Error, m) | (_, m @ Some(_)) => Ending::Failed(ChatError::new(
                ErrorKind::Server,
                m.unwrap_or("the run failed"),
            )),
            _ => Ending::Finished,
        })
    }

    /// A run failed (`code`, `message`): the error this client's turn fails with, if the run
    /// was its own. Shown at once, as the run's end (upstream's client settles the turn on
    /// it): a later `agent-end` of that run ends nothing more here. A run whose prompt failed
    /// before it started (a user message, then this) ends here too.
    pub(in crate::store) fn run_failed(&self, code: String, message: String) -> Option<ChatError> {
        let ours = match self.turn.phase {
            Phase::Streaming { .. } | Phase::Resuming { .. } => true,
            Phase::Submitted { .. } => self.prompt_ran_by_nonce(),
            _ => false,
        };
        ours.then(|| {
            let mut error = ChatError::new(ErrorKind::Server, message);
            error.server_code = Some(code);
            error
        })
    }

    /// The server committed the user message `message_id` with `nonce`: the optimistic copy
    /// of that prompt goes, a given-up prompt that landed is not sent again, and this
    /// client's prompt on its way runs. Whether it is the prompt the user stopped on its way,
    /// which ran after all: the store stops it again.
    pub(in crate::store) fn prompt_shown(&mut self, message_id: &str, nonce: Option<&str>) -> bool {
        self.server_shows_prompt(message_id, nonce);
        let unsent = self.native.unsent_prompt.as_ref().map(|(n, _)| n.as_str());
        if unsent.is_some() && unsent == nonce {
            // A prompt given up did land: nothing to send again.
            self.native.unsent_prompt = None;
        }
        let turn = self.turn.client_turn_id.as_deref();
        let submitted = matches!(self.turn.phase, Phase::Submitted { .. });
        if submitted && nonce.is_some() && nonce == turn {
            self.prompt_runs_in_shown_run();
        }
        let stopped = self.native.stopped_prompt.as_deref();
        let stop_again = stopped.is_some() && nonce == stopped;
        if stop_again {
            self.native.stopped_prompt = None;
        }
        stop_again
    }
}
