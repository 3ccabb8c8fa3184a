//! The native test suite as one binary: every `tests/*.rs` file is a module of it, and the
//! harness in `tests/common/` is compiled once instead of once per file (39 files used it;
//! the per-file binaries compiled it 39 times per feature set, the largest share of the native
//! test step's build). Run one file's tests with `cargo test --test suite FILE_STEM::`.

mod common;

#[path = "architecture.rs"]
mod architecture;
#[path = "fast_path.rs"]
mod fast_path;
#[path = "fault_scenarios.rs"]
mod fault_scenarios;
#[path = "fault_scenarios_native.rs"]
mod fault_scenarios_native;
#[path = "fault_schedules.rs"]
mod fault_schedules;
#[path = "fault_schedules_native.rs"]
mod fault_schedules_native;
#[path = "fixtures.rs"]
mod fixtures;
#[path = "hostile.rs"]
mod hostile;
#[path = "native_link.rs"]
mod native_link;
#[path = "partial_json.rs"]
mod partial_json;
#[path = "pi_native.rs"]
mod pi_native;
#[path = "pi_native_rules.rs"]
mod pi_native_rules;
#[path = "pi_native_vectors.rs"]
mod pi_native_vectors;
#[path = "pi_reducer.rs"]
mod pi_reducer;
#[path = "properties.rs"]
mod properties;
#[path = "resume_cuts.rs"]
mod resume_cuts;
#[path = "sse.rs"]
mod sse;
#[path = "store_ai_sdk.rs"]
mod store_ai_sdk;
#[path = "store_attach.rs"]
mod store_attach;
#[path = "store_auto_send.rs"]
mod store_auto_send;
#[path = "store_branches.rs"]
mod store_branches;
#[path = "store_capabilities.rs"]
mod store_capabilities;
#[path = "store_composer.rs"]
mod store_composer;
#[path = "store_errors.rs"]
mod store_errors;
#[path = "store_followups.rs"]
mod store_followups;
#[path = "store_held_answers.rs"]
mod store_held_answers;
#[path = "store_history.rs"]
mod store_history;
#[path = "store_human_in_the_loop.rs"]
mod store_human_in_the_loop;
#[path = "store_liveness.rs"]
mod store_liveness;
#[path = "store_pi_answers.rs"]
mod store_pi_answers;
#[path = "store_pi_mode.rs"]
mod store_pi_mode;
#[path = "store_pi_native.rs"]
mod store_pi_native;
#[path = "store_pi_native_commands.rs"]
mod store_pi_native_commands;
#[path = "store_pi_native_errors.rs"]
mod store_pi_native_errors;
#[path = "store_pi_native_followups.rs"]
mod store_pi_native_followups;
#[path = "store_pi_native_hostile.rs"]
mod store_pi_native_hostile;
#[path = "store_pi_native_queue.rs"]
mod store_pi_native_queue;
#[path = "store_pi_native_reload.rs"]
mod store_pi_native_reload;
#[path = "store_pi_native_sessions.rs"]
mod store_pi_native_sessions;
#[path = "store_pi_rows.rs"]
mod store_pi_rows;
#[path = "store_resume.rs"]
mod store_resume;
#[path = "store_resume_204.rs"]
mod store_resume_204;
#[path = "store_retry.rs"]
mod store_retry;
#[path = "store_run_now.rs"]
mod store_run_now;
#[path = "store_session_list.rs"]
mod store_session_list;
#[path = "store_sessions.rs"]
mod store_sessions;
#[path = "store_tool_ui.rs"]
mod store_tool_ui;
#[path = "store_turn_end.rs"]
mod store_turn_end;
#[path = "store_use_chat.rs"]
mod store_use_chat;
#[path = "ui_message.rs"]
mod ui_message;
