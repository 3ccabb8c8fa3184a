//! The user's answers to tool calls: outputs, approval responses, replaced tool parts.

use super::*;
use crate::protocol::Approval;

impl Conversation {
    /// The client's result for a tool call: the part becomes `output-available` (or
    /// `output-error`), keeping a granted approval. Returns whether a message has the call.
    pub fn add_tool_output(&mut self, tool_call_id: &str, output: &Result<Value, String>) -> bool {
        let set = |m: &mut UIMessage| {
            for p in &mut m.parts {
                let Some(t) = p.as_tool_mut().filter(|t| t.tool_call_id == tool_call_id) else {
                    continue;
                };
                // Output states keep only an approval that was granted.
                let granted = t.approval.as_deref().is_some_and(Approval::granted);
                if !granted {
                    t.approval = None;
                }
                // The question is answered: it waits no more.
                t.interrupt = None;
                match output {
                    Ok(v) => {
                        t.state = ToolState::OutputAvailable;
                        t.output = Some(v.clone().into());
                        t.error_text = None;
                    }
                    Err(e) => {
                        t.state = ToolState::OutputError;
                        t.output = None;
                        t.error_text = Some(e.clone());
                    }
                }
            }
        };
        let h = &self.history;
        let Some(i) = (0..h.len()).find(|&i| tool_ui::has_call(&h.messages()[i], tool_call_id))
        else {
            return false;
        };
        self.edit_answered(i, set);
        true
    }

    /// The user's answer to a tool approval request: the part becomes `approval-responded`.
    /// Returns whether a part asked it.
    pub fn add_tool_approval_response(
        &mut self,
        approval_id: &str,
        approved: bool,
        reason: Option<&str>,
    ) -> bool {
        let asks = |p: &Part| {
            p.as_tool().is_some_and(|t| {
                t.state == ToolState::ApprovalRequested
                    && t.approval.as_deref().is_some_and(|a| a.is(approval_id))
            })
        };
        let set = |m: &mut UIMessage| {
            for p in &mut m.parts {
                if !asks(p) {
                    continue;
                }
                if let Some(t) = p.as_tool_mut() {
                    t.state = ToolState::ApprovalResponded;
                    let mut approval = t.approval.take().map_or_else(Approval::unasked, |a| *a);
                    approval.answered_by_user(approval_id, approved, reason);
                    t.approval = Some(Box::new(approval));
                }
            }
        };
        let h = &self.history;
        let Some(i) = (0..h.len()).find(|&i| h.messages()[i].parts.iter().any(asks)) else {
            return false;
        };
        self.edit_answered(i, set);
        true
    }

    /// Puts the tool part of call `tool_call_id` back as `part` was (an answer the server
    /// refused). Returns whether there was such a part.
    pub fn replace_tool_part(&mut self, tool_call_id: &str, part: ToolPart) -> bool {
        let h = &self.history;
        let Some(i) = (0..h.len())
            .rev()
            .find(|&i| tool_ui::has_call(&h.messages()[i], tool_call_id))
        else {
            return false;
        };
        let set = |m: &mut UIMessage| {
            for p in &mut m.parts {
                if let Some(t) = p.as_tool_mut().filter(|t| t.tool_call_id == tool_call_id) {
                    *t = part.clone();
                }
            }
        };
        self.edit_answered(i, set);
        true
    }

    /// The user's answer applied by `set` to the message at `i`, and to the pending copy of a
    /// continued answer too, as `useChat` updates its active response's message: that copy's
    /// first write would put the call back unanswered.
    pub(super) fn edit_answered(&mut self, i: usize, set: impl Fn(&mut UIMessage)) {
        set(self.history.at_mut(i));
        if let Some(m) = self.ui.pending.as_mut() {
            set(m);
        }
    }
}
