//! The ordered message history with an id index and a version per message.

use std::collections::HashMap;

use crate::protocol::UIMessage;

/// The ordered list of messages. Lookups by id are O(1) so the per-chunk cost does not grow
/// with the history; every change bumps the changed message's version (from one counter, so
/// a version is never reused, even across a reset).
#[derive(Debug, Default, Clone)]
pub struct History {
    messages: Vec<UIMessage>,
    versions: Vec<u64>,
    index: HashMap<String, usize>,
    clock: u64,
}

impl History {
    pub fn new() -> Self {
        History::default()
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn messages(&self) -> &[UIMessage] {
        &self.messages
    }

    /// The version of the message at `i`; it changes whenever that message changes.
    // Inlined even at opt-level "z": the snapshot compares every message's version.
    #[inline(always)]
    pub fn version(&self, i: usize) -> u64 {
        self.versions[i]
    }

    /// Every message's version, by position: a consumer that keeps the versions it saw
    /// compares them all at once (the snapshot, through the store).
    pub fn versions(&self) -> &[u64] {
        &self.versions
    }

    /// Bumps on every change of any message and on every insertion or removal.
    pub fn revision(&self) -> u64 {
        self.clock
    }

    /// Makes every later version larger than `floor` (a session's history created or
    /// resumed after another one's: versions must never repeat within one store).
    pub fn advance_clock(&mut self, floor: u64) {
        self.clock = self.clock.max(floor);
    }

    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn get(&self, id: &str) -> Option<&UIMessage> {
        self.position(id).map(|i| &self.messages[i])
    }

    pub fn last(&self) -> Option<&UIMessage> {
        self.messages.last()
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Appends a message; a message whose id is already present replaces that one in place
    /// (ids are unique in a history).
    pub fn push(&mut self, msg: UIMessage) -> usize {
        let v = self.tick();
        if let Some(i) = self.position(&msg.id) {
            self.messages[i] = msg;
            self.versions[i] = v;
            return i;
        }
        self.index.insert(msg.id.clone(), self.messages.len());
        self.messages.push(msg);
        self.versions.push(v);
        self.messages.len() - 1
    }

    /// Mutable access to the message at `i`; counts as a change.
    pub fn at_mut(&mut self, i: usize) -> &mut UIMessage {
        let v = self.tick();
        self.versions[i] = v;
        &mut self.messages[i]
    }

    /// Mutable access by id; counts as a change.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut UIMessage> {
        let i = self.position(id)?;
        Some(self.at_mut(i))
    }

    /// Gives the message at `i` a new id (a server that renames a message it streams).
    pub fn rename(&mut self, i: usize, new_id: &str) {
        if self.messages[i].id == new_id {
            return;
        }
        if let Some(j) = self.position(new_id) {
            // Another message has that id: keep ids unique by leaving this one as it is.
            debug_assert_ne!(i, j);
            return;
        }
        let old = std::mem::replace(&mut self.messages[i].id, new_id.to_string());
        self.index.remove(&old);
        self.index.insert(new_id.to_string(), i);
        let v = self.tick();
        self.versions[i] = v;
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.messages.len() {
            return;
        }
        for m in &self.messages[len..] {
            self.index.remove(&m.id);
        }
        self.messages.truncate(len);
        self.versions.truncate(len);
        self.tick();
    }

    /// Removes the message at `i`.
    pub fn remove(&mut self, i: usize) -> UIMessage {
        let msg = self.messages.remove(i);
        self.versions.remove(i);
        self.reindex();
        self.tick();
        msg
    }

    /// Replaces the whole history (hydration). Duplicate ids keep their first occurrence.
    pub fn replace_all(&mut self, messages: Vec<UIMessage>) {
        self.messages.clear();
        self.versions.clear();
        self.index.clear();
        for m in messages {
            if !self.index.contains_key(&m.id) {
                self.push(m);
            }
        }
        self.tick();
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (i, m) in self.messages.iter().enumerate() {
            self.index.insert(m.id.clone(), i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;

    #[test]
    fn versions_move_only_for_changed_messages() {
        let mut h = History::new();
        h.push(UIMessage::user_text("a", "1"));
        h.push(UIMessage::new("b", Role::Assistant));
        let (va, vb) = (h.version(0), h.version(1));
        h.get_mut("b")
            .unwrap()
            .parts
            .push(crate::protocol::Part::StepStart);
        assert_eq!(h.version(0), va);
        assert!(h.version(1) > vb);
        h.rename(1, "c");
        assert_eq!(h.position("c"), Some(1));
        assert!(h.get("b").is_none());
        h.truncate(1);
        assert_eq!(h.len(), 1);
        assert!(h.get("c").is_none());
    }
}
