//! The hash maps' hasher. std's default, SipHash-1-3 under `RandomState`, resists collisions
//! chosen by someone who does not know its keys; on wasm32-unknown-unknown std has no source of
//! randomness and its keys are fixed, so it resists nothing there and costs 0.9 KB gzip of code
//! and a slower hash of every id a chunk names. rustc-hash's FxHasher (what rustc itself uses)
//! is a few instructions per word. What the maps hold comes from the app's own server.

/// A `HashMap` with FxHasher; build it with `HashMap::default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, FxBuildHasher>;

/// The hasher of [`HashMap`], also used alone (`crate::stream::id_index`).
pub use rustc_hash::FxBuildHasher;
