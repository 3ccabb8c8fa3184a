//! agent-chat-store: the client-side state of a browser chat UI for an agent server.
//! (The run loop and its doctest are written here once the store lands.)
#![forbid(unsafe_code)]

pub mod composer;
pub mod followup;
pub mod protocol;
pub mod random;
pub mod replay;
pub mod sse;
pub mod store;
pub mod stream;
