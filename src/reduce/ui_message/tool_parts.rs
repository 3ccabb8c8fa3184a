//! Finding and updating a message's tool parts, as the `ai` package's stream processor does.

use super::*;

/// The index of the current step's first part: just after the last `step-start`.
pub(super) fn current_step(msg: &UIMessage) -> usize {
    msg.parts
        .iter()
        .rposition(Part::is_step_start)
        .map_or(0, |i| i + 1)
}

/// `getToolInvocation`: the call's part in the current step, else its last part anywhere.
pub(super) fn tool_invocation(msg: &UIMessage, tool_call_id: &str) -> Result<usize, Violation> {
    let is_call = |p: &Part| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id);
    let start = current_step(msg);
    msg.parts[start..]
        .iter()
        .position(is_call)
        .map(|i| start + i)
        .or_else(|| msg.parts.iter().rposition(is_call))
        .ok_or_else(|| {
            Violation(format!(
                "No tool invocation found for tool call ID \"{tool_call_id}\"."
            ))
        })
}

/// The current step's part of a tool call, of the given kind (static or dynamic).
pub(super) fn step_tool_part(msg: &UIMessage, tool_call_id: &str, dynamic: bool) -> Option<usize> {
    let start = current_step(msg);
    msg.parts[start..]
        .iter()
        .position(|p| {
            p.as_tool()
                .is_some_and(|t| t.dynamic == dynamic && t.tool_call_id == tool_call_id)
        })
        .map(|i| start + i)
}

/// `updateToolPart` / `updateDynamicToolPart`: writes `u` into `existing`, else into the
/// current step's part of the same call and kind, else into a new part. Returns its index.
pub(super) fn update_tool_part(
    msg: &mut UIMessage,
    u: ToolUpdate,
    existing: Option<usize>,
) -> usize {
    let found = existing.or_else(|| step_tool_part(msg, &u.tool_call_id, u.dynamic));
    let output_state = matches!(u.state, ToolState::OutputAvailable | ToolState::OutputError);
    let Some(p) = found else {
        let mut t = ToolPart::new(u.tool_call_id, u.tool_name, u.dynamic);
        t.state = u.state;
        t.title = u.title;
        t.tool_metadata = u.tool_metadata.map(Box::new);
        t.input = u.input.map(Json::from);
        t.input_encoding = u.input_encoding;
        t.output = u.output.map(Json::from);
        // A new dynamic part has no `rawInput` (the `ai` package leaves it out there).
        t.raw_input = if u.dynamic {
            None
        } else {
            u.raw_input.map(Box::new)
        };
        t.error_text = u.error_text;
        t.provider_executed = u.provider_executed;
        t.preliminary = u.preliminary;
        if output_state {
            t.result_provider_metadata = u.provider_metadata.map(Box::new);
        } else {
            t.call_provider_metadata = u.provider_metadata.map(Box::new);
        }
        msg.parts.push(Part::Tool(Box::new(t)));
        return msg.parts.len() - 1;
    };
    let t = msg.parts[p].as_tool_mut().expect("a tool part");
    t.state = u.state;
    t.tool_name = u.tool_name;
    t.input = u.input.map(Json::from);
    t.output = u.output.map(Json::from);
    t.error_text = u.error_text;
    t.raw_input = u.raw_input.map(Box::new);
    t.input_encoding = u.input_encoding;
    t.preliminary = u.preliminary;
    if u.title.is_some() {
        t.title = u.title;
    }
    if u.tool_metadata.is_some() {
        t.tool_metadata = u.tool_metadata.map(Box::new);
    }
    if u.provider_executed.is_some() {
        t.provider_executed = u.provider_executed;
    }
    if u.provider_metadata.is_some() {
        if output_state {
            t.result_provider_metadata = u.provider_metadata.map(Box::new);
        } else {
            t.call_provider_metadata = u.provider_metadata.map(Box::new);
        }
    }
    p
}
