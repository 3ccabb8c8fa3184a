//! Reducers: the stream's chunks in, the message history out. No IO, no clock.
//!
//! Both reducers write into one [`History`], which versions every message so the wasm shell
//! re-exports only what changed.

pub mod conversation;
pub mod fast_chunk;
pub mod history;
mod id_index;
#[cfg(feature = "pi")]
mod native_merge;
pub mod partial_json;
#[cfg(feature = "pi")]
pub mod pi;
#[cfg(feature = "pi")]
pub mod pi_native;
pub mod ui_message;

pub use history::History;
