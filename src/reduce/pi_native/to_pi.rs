//! What an event does to the history, through the pi reducer's events (`to_pi`, one
//! `match`), and feeding them.

use super::*;

impl NativeGate {
    /// The pi reducer's events for a history event (none for the rest).
    pub(super) fn to_pi(kind: EventKind) -> Vec<PiEvent> {
        // The gate has done the seq's work: the reducer's per-turn watermark stays out.
        let seq = None;
        match kind {
            EventKind::AgentStart { turn_id } => vec![PiEvent::TurnStart { turn_id }],
            EventKind::MessageStart {
                message_id,
                role,
                client_nonce,
                text,
                ..
            } => vec![PiEvent::MessageStart {
                seq,
                message_id,
                role,
                // The store reconciles its own messages by the effect; a nonce here only
                // says the start is not of the prompt whose optimistic message the reducer
                // adopts ([`NativeGate::reduce`] decides).
                client_nonce,
                text,
            }],
            EventKind::MessageDelta {
                message_id,
                part_id,
                kind,
                delta,
            } => vec![PiEvent::PartDelta {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            }],
            EventKind::PartEnd {
                message_id,
                part_id,
                kind,
                text,
            } => vec![PiEvent::PartEnd {
                seq,
                kind,
                message_id,
                part_id,
                text: Some(text),
            }],
            EventKind::MessageEnd {
                message_id,
                final_message,
                ..
            } => vec![PiEvent::MessageEnd {
                seq,
                role: final_message.as_ref().map_or(Role::Assistant, |m| m.role),
                message_id,
                text: None,
                final_message,
            }],
            EventKind::ToolCall {
                message_id,
                tool_call_id,
                tool_name,
                input,
                ..
            } => vec![
                PiEvent::ToolCallStart {
                    seq,
                    message_id: message_id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    tool_name: Some(tool_name.clone()),
                },
                PiEvent::ToolCallEnd {
                    seq,
                    message_id,
                    tool_call_id,
                    tool_name: Some(tool_name),
                    input: Some(input),
                },
            ],
            EventKind::ToolResult {
                message_id,
                tool_call_id,
                output,
                details,
                is_error,
                error_text,
                ..
            } => vec![PiEvent::ToolResult {
                seq,
                message_id,
                tool_call_id,
                tool_name: None,
                // On an error the reducer takes the part's `errorText` from the output.
                output: Some(match (is_error, error_text) {
                    (true, Some(t)) => Value::String(t),
                    _ => output,
                }),
                is_error,
                details,
            }],
            _ => Vec::new(),
        }
    }

    pub(super) fn feed(
        &mut self,
        conversation: &mut Conversation,
        ev: PiEvent,
        out: &mut Vec<NativeEffect>,
    ) {
        let mut effects = Vec::new();
        let view = TurnView {
            running_id: self.turn_id.as_deref(),
            busy: self.status == RunStatus::Running,
        };
        // Ids are made only for the AI SDK reducer's messages: never asked here.
        let mut ids = SeededRandom(0);
        conversation.gate_rows();
        conversation.apply(Chunk::Pi(ev), view, &mut ids, &mut effects);
        for e in effects {
            match e {
                Effect::Diagnostic(d) | Effect::Lost(_, d) => out.push(NativeEffect::Diagnostic(d)),
                Effect::Data { name, data, .. } => out.push(NativeEffect::Data(name, data)),
                _ => {}
            }
        }
    }
}
