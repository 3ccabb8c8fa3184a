//! Pure decisions the store asks for, with no state of their own: what the composer may send
//! while busy (SPEC §5), and which renderer and hints a tool part gets (typed tool UI).

pub mod composer;
pub mod tool_ui;
