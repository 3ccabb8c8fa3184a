//! The hash maps' hasher. std's default, SipHash-1-3 under `RandomState`, resists collisions
//! chosen by someone who does not know its keys; on wasm32-unknown-unknown std has no source of
//! randomness and its keys are fixed, so it resists nothing there and costs 0.9 KB gzip of code
//! and a slower hash of every id a chunk names. rustc-hash's FxHasher (what rustc itself uses)
//! is a few instructions per word. What the maps hold comes from the app's own server.

/// A `HashMap` with FxHasher; build it with `HashMap::default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, FxBuildHasher>;

/// The hasher of [`HashMap`], also used alone (`crate::reduce::id_index`).
pub use rustc_hash::FxBuildHasher;

/// A map kept as a list, for the maps that hold a handful of entries at a time (the requests
/// in flight, the parked sessions; not the calls of a message, which can be many): a linear
/// search over a few entries costs less than a hash, and each `HashMap` of another entry type
/// was some 2 KB of its own code in the wasm. Same methods as `HashMap`, in insertion order.
#[derive(Debug, Clone)]
pub struct VecMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap(Vec::new())
    }
}

impl<K: Eq, V> VecMap<K, V> {
    fn position<Q: Eq + ?Sized>(&self, key: &Q) -> Option<usize>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.0.iter().position(|(k, _)| k.borrow() == key)
    }

    /// The value of `key`.
    pub fn get<Q: Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.position(key).map(|i| &self.0[i].1)
    }

    /// The value of `key`, to change.
    pub fn get_mut<Q: Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.position(key).map(|i| &mut self.0[i].1)
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Takes `key` out; its value, if it had one.
    pub fn remove<Q: Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.position(key).map(|i| self.0.remove(i).1)
    }

    /// The entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The values, oldest first.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    /// The values, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a `HashMap` does, for a sequence of inserts and removes.
    #[test]
    fn vec_map_does_what_a_hash_map_does() {
        let (mut list, mut hash) = (VecMap::default(), HashMap::default());
        let mut x: u32 = 7;
        for _ in 0..2_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = format!("k{}", (x >> 16) % 13);
            match (x >> 8) % 3 {
                0 => assert_eq!(list.remove(key.as_str()), hash.remove(key.as_str())),
                _ => assert_eq!(list.insert(key.clone(), x), hash.insert(key, x)),
            }
            assert_eq!(list.len(), hash.len());
            for (k, v) in &hash {
                assert_eq!(list.get(k.as_str()), Some(v));
            }
        }
        if let Some(v) = list.get_mut("k1") {
            *v = 0;
        }
        list.values_mut().for_each(|v| *v += 1);
        assert!(list.values().all(|v| *v > 0) && list.iter().count() == list.len());
    }
}
