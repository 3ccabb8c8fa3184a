//! Positions of messages by id, without a second copy of every id: a history of 100,000
//! hydrated messages spent a tenth of its memory on the index's own copies of the ids.

use std::hash::BuildHasher;

use crate::util::hash::{FxBuildHasher, HashMap};

use crate::protocol::UIMessage;

/// Keyed by the id's hash; the position is checked against the message's own id, and the
/// (vanishingly rare) id whose hash another id already holds is kept by name beside it.
#[derive(Default, Clone)]
pub struct IdIndex<S = FxBuildHasher> {
    by_hash: HashMap<u64, usize>,
    collided: HashMap<String, usize>,
    hasher: S,
}

impl<S> std::fmt::Debug for IdIndex<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("IdIndex").field("by_hash", &self.by_hash))
            .field("collided", &self.collided)
            .finish_non_exhaustive()
    }
}

impl<S: BuildHasher> IdIndex<S> {
    /// The position of the message with `id` among `messages`.
    pub fn get(&self, messages: &[UIMessage], id: &str) -> Option<usize> {
        match self.by_hash.get(&self.hasher.hash_one(id)) {
            Some(&i) if messages.get(i).is_some_and(|m| m.id == id) => Some(i),
            _ if self.collided.is_empty() => None,
            _ => self.collided.get(id).copied(),
        }
    }

    /// Records that `id` is at position `i`; `messages` holds every message already indexed
    /// (the one at `i` may not be there yet).
    pub fn insert(&mut self, messages: &[UIMessage], id: &str, i: usize) {
        let h = self.hasher.hash_one(id);
        match self.by_hash.get(&h) {
            Some(&j) if messages.get(j).is_some_and(|m| m.id != id) => {
                self.collided.insert(id.to_string(), i);
            }
            _ => {
                self.by_hash.insert(h, i);
            }
        }
    }

    /// Forgets `id`; the message holding it must still be in `messages` under that id.
    pub fn remove(&mut self, messages: &[UIMessage], id: &str) {
        if self.collided.remove(id).is_some() {
            return;
        }
        let h = self.hasher.hash_one(id);
        if self
            .by_hash
            .get(&h)
            .is_some_and(|&i| messages.get(i).is_some_and(|m| m.id == id))
        {
            self.by_hash.remove(&h);
        }
    }

    pub fn contains(&self, messages: &[UIMessage], id: &str) -> bool {
        self.get(messages, id).is_some()
    }

    pub fn clear(&mut self) {
        self.by_hash.clear();
        self.collided.clear();
    }

    pub fn reserve(&mut self, n: usize) {
        self.by_hash.reserve(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;
    use std::hash::Hasher;

    /// Every id hashes alike: every id after the first is a collision.
    #[derive(Default, Clone)]
    struct Same;
    struct Zero;
    impl Hasher for Zero {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, _: &[u8]) {}
    }
    impl BuildHasher for Same {
        type Hasher = Zero;
        fn build_hasher(&self) -> Zero {
            Zero
        }
    }

    fn msg(id: &str) -> UIMessage {
        UIMessage::new(id, Role::User)
    }

    #[test]
    fn ids_whose_hashes_collide_are_told_apart() {
        let mut index = IdIndex::<Same>::default();
        let mut messages = Vec::new();
        for id in ["a", "b", "c"] {
            index.insert(&messages, id, messages.len());
            messages.push(msg(id));
        }
        let found: Vec<_> = ["a", "b", "c", "d"]
            .map(|id| index.get(&messages, id))
            .into();
        assert_eq!(found, [Some(0), Some(1), Some(2), None]);
        // The id holding the hash goes: the others are still found.
        index.remove(&messages, "a");
        assert_eq!(index.get(&messages, "a"), None);
        assert_eq!(index.get(&messages, "c"), Some(2));
        index.remove(&messages, "c");
        assert_eq!(index.get(&messages, "c"), None);
        assert_eq!(index.get(&messages, "b"), Some(1));
    }
}
