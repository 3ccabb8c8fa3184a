//! Reducers: what turns the stream's chunks and pi-native events into the message history.
//! No IO, no clock.
//!
//! Each reducer has one `match` per chunk family and writes into one [`History`], which
//! versions every message so the wasm shell re-exports only what changed. The byte-level
//! decoding they are fed from lives in [`crate::codec`]; the wire types in [`crate::protocol`].

pub mod conversation;
pub mod history;
mod id_index;
#[cfg(feature = "pi")]
mod native_merge;
#[cfg(feature = "pi")]
pub mod pi;
#[cfg(feature = "pi")]
pub mod pi_native;
pub mod ui_message;

pub use history::History;
