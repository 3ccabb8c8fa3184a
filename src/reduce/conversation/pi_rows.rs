//! A pi history read as the stream shows it: tool outputs shaped, one row per answer.

use super::*;

impl Conversation {
    /// A history read shows pi's rows as its stream does: tools shaped, one row per answer
    /// (where the pi-native gate does not decide rows itself). Returns the folded rows.
    pub(super) fn pi_rows(&mut self, messages: &mut Vec<UIMessage>) -> Vec<(String, Vec<String>)> {
        if !self.pi_owns_history() {
            return Vec::new();
        }
        shape_pi_outputs(messages);
        match self.pi.rows_by_gate() {
            true => Vec::new(),
            false => fold_answers(messages),
        }
    }

    /// The rows a history read folded, told to the pi reducer ([`PiReducer::folded`]).
    pub(super) fn pi_folded(&mut self, folds: Vec<(String, Vec<String>)>) {
        if self.pi_owns_history() && !self.pi.rows_by_gate() {
            self.pi.folded(&self.history, folds);
        }
    }

    /// pi-native: the gate decides rows ([`PiReducer::gate_rows`]).
    pub fn gate_rows(&mut self) {
        self.pi.gate_rows();
    }
}

/// Every pi tool result of `messages` as a tool UI expects it ([`shape_pi_output`]).
pub(super) fn shape_pi_outputs(messages: &mut [UIMessage]) {
    let parts = messages.iter_mut().flat_map(|m| m.parts.iter_mut());
    for t in parts.filter_map(Part::as_tool_mut) {
        crate::reduce::pi::shape_pi_output(t);
    }
}

/// The canonical history's answers as rows (SPEC §14 "rows are messages of a turn"): each run
/// of assistant messages of one turn (a turn unknown on either side counts as the same) folds
/// into the first one's row, a step each, as the stream shows them. Returns each folded row
/// with the ids it shows, its own first.
pub(super) fn fold_answers(messages: &mut Vec<UIMessage>) -> Vec<(String, Vec<String>)> {
    use crate::reduce::native_merge::{fold_step, same_turn, turn_of};
    let mut folds: Vec<(String, Vec<String>)> = Vec::new();
    let mut rows: Vec<UIMessage> = Vec::with_capacity(messages.len());
    for m in messages.drain(..) {
        let answer = rows.last_mut().filter(|p| {
            p.role == Role::Assistant
                && m.role == Role::Assistant
                && p.id != m.id
                && same_turn(turn_of(p), turn_of(&m))
        });
        let Some(row) = answer else {
            rows.push(m);
            continue;
        };
        let (id, next) = (row.id.clone(), m.id.clone());
        // The row is the first message's, as the stream shows it (pi-native's status
        // bookkeeping is not this transport's).
        let metadata = row.metadata.clone().or_else(|| m.metadata.clone());
        fold_step(row, m);
        row.id.clone_from(&id);
        row.metadata = metadata;
        match folds.last_mut() {
            Some((r, ids)) if *r == id => ids.push(next),
            _ => folds.push((id.clone(), vec![id, next])),
        }
    }
    *messages = rows;
    folds
}
