//! Sub-machines: sans-IO state machines of their own, each owning one piece of state with
//! `handle_*` / `consume_*` in and `poll_*` out. The store (`crate::store`) owns one of each
//! per session (or per store), makes the requests they ask for and feeds them the answers.
//!
//! - `followup_queue`: the exactly-once FIFO poster of follow-ups (SPEC §6);
//! - `session_list`: the session list's pages and pending changes (SPEC §11);
//! - `native_link`: following one pi-native session's state and events (SPEC §14).

pub mod followup_queue;
#[cfg(feature = "pi")]
pub mod native_link;
pub mod session_list;
