//! The fast path for text deltas.

use super::*;

impl PiReducer {
    /// A message known only from the canonical history (complete there) whose part events a
    /// replayed stream repeats without its start: they are already in it.
    pub(super) fn known_complete(&self, h: &History, message_id: &str) -> bool {
        let id = self.resolve(message_id);
        h.position(&id).is_some() && !self.state.contains_key(&id)
    }

    /// A part delta read in place (the store's fast path): the same as [`apply`](Self::apply)
    /// with `PiEvent::PartDelta`; only a delta that does not extend the last one builds it.
    pub fn apply_delta(
        &mut self,
        h: &mut History,
        seq: u64,
        kind: PartKind,
        (message_id, part_id): (&str, &str),
        delta: &str,
        out: &mut Vec<PiEffect>,
    ) -> bool {
        if self.watermark.is_some_and(|w| seq <= w) {
            return false; // as `apply` would say
        }
        if self.append_to_last(h, kind, message_id, part_id, delta) {
            self.watermark = Some(seq);
            return true;
        }
        let ev = PiEvent::PartDelta {
            seq: Some(seq),
            kind,
            message_id: message_id.to_owned(),
            part_id: part_id.to_owned(),
            delta: delta.to_owned(),
        };
        self.apply(h, ev, out)
    }

    /// A delta to the part the last delta went to, with nothing changed in between, is
    /// appended without looking the message and part up again; false when it is not one.
    pub(super) fn append_to_last(
        &mut self,
        h: &mut History,
        kind: PartKind,
        message_id: &str,
        part_id: &str,
        delta: &str,
    ) -> bool {
        let Some((m, k, part, i, p, rev)) = &mut self.last_delta else {
            return false;
        };
        if *rev != h.revision() || m != message_id || *k != kind_key(kind) || part != part_id {
            return false;
        }
        if let Some((text, _)) = text_of(&mut h.append_mut(*i).parts[*p]) {
            text.push_str(delta);
        }
        *rev = h.revision();
        true
    }
}
