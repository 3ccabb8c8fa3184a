//! Reading the events stream's lines: frames through the gate, skipped lines as losses, gaps.

use super::*;

impl NativeLink {
    pub(super) fn take_lines(
        &mut self,
        conversation: &mut Conversation,
        lines: Vec<Result<String, LineError>>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        let mut effects = Vec::new();
        for line in lines {
            if self.reading != Some(Read::Events) {
                return; // a gap ended this connection
            }
            let (frame, at) = match line {
                Ok(text) => match parse_addressed_line(&text) {
                    Ok(read) => read,
                    Err(e) => {
                        let head = read_frame_head(&text);
                        self.skip_line(
                            LineLossKind::Malformed,
                            e.to_string(),
                            head,
                            now_ms,
                            rng,
                            out,
                        );
                        continue;
                    }
                },
                Err(LineError::NotUtf8 { line }) => {
                    let head = read_frame_head(&line);
                    let why = "event line is not UTF-8".to_string();
                    self.skip_line(LineLossKind::Malformed, why, head, now_ms, rng, out);
                    continue;
                }
                Err(LineError::TooLong { bytes, limit, head }) => {
                    let why = format!("{bytes} bytes");
                    let head = read_frame_head(&head);
                    let kind = LineLossKind::TooLarge { limit };
                    self.skip_line(kind, why, head, now_ms, rng, out);
                    continue;
                }
            };
            if let Some(at) = at.filter(|at| self.elsewhere(at)) {
                let head = FrameHead {
                    at: Some(at),
                    ..frame_head(&frame)
                };
                out.push(LinkNote::Lost(loss(
                    LineLossKind::Elsewhere,
                    String::new(),
                    head,
                )));
                continue;
            }
            let unknown = match &frame {
                Frame::Event(NativeEvent {
                    kind: EventKind::Unknown { .. },
                    ..
                }) => Some(frame_head(&frame)),
                _ => None,
            };
            match self.gate.apply(conversation, frame, &mut effects) {
                Gate::Gap { expected, actual } => {
                    return self.gap(expected, actual, now_ms, rng, out);
                }
                Gate::Applied => {
                    self.attempt = 0;
                    if self.strikes > 0 && self.gate.seq() > self.mark {
                        self.worked();
                    }
                    if let Some(head) = unknown {
                        effects.clear(); // the gate's own word for it: the loss says it
                        let lost = loss(LineLossKind::UnknownType, String::new(), head);
                        out.push(LinkNote::Lost(lost));
                    }
                }
                Gate::Heartbeat => {
                    self.attempt = 0;
                    self.heartbeats += 1;
                }
                Gate::Stale => {}
            }
            out.extend(effects.drain(..).map(LinkNote::Effect));
        }
    }

    /// The envelope names another session than the one followed.
    pub(super) fn elsewhere(&self, at: &EventRef) -> bool {
        (self.address.as_deref()).is_some_and(|session| at.elsewhere(session))
    }

    /// A line that could not be applied: a loss, and the cursor past its seq where its head
    /// says it (a gap before it reads the state, as an event's would).
    pub(super) fn skip_line(
        &mut self,
        kind: LineLossKind,
        why: String,
        head: FrameHead,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if head.at.as_ref().is_some_and(|at| self.elsewhere(at)) {
            return out.push(LinkNote::Lost(loss(LineLossKind::Elsewhere, why, head)));
        }
        let Some(seq) = head.seq else {
            return out.push(LinkNote::Lost(loss(kind, why, head)));
        };
        match self.gate.skip(seq) {
            Gate::Applied => {
                if self.gate.seq() > self.mark {
                    self.worked();
                }
                out.push(LinkNote::Lost(loss(kind, why, head)))
            }
            // The state read may hold it: a loss only if the events bring it again.
            Gate::Gap { expected, actual } => self.gap(expected, actual, now_ms, rng, out),
            // Applied already: nothing is lost.
            _ => {}
        }
    }

    /// Events are missing before `actual`: the state is read again.
    pub(super) fn gap(
        &mut self,
        expected: u64,
        actual: u64,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        self.mark = self.mark.max(actual);
        let why = format!("events skipped from {expected} to {actual}: reading the state again");
        self.recover(ChatError::protocol(why), now_ms, rng, out);
    }
}

/// What a frame that was read says of itself, as [`read_frame_head`] says it of a line.
pub(super) fn frame_head(frame: &Frame) -> FrameHead {
    let Frame::Event(ev) = frame else {
        return FrameHead::default();
    };
    let (event_type, message_id) = match &ev.kind {
        EventKind::Unknown { name } => (Some(name.clone()), None),
        EventKind::MessageStart { message_id, .. }
        | EventKind::MessageDelta { message_id, .. }
        | EventKind::PartEnd { message_id, .. }
        | EventKind::MessageEnd { message_id, .. }
        | EventKind::ToolCall { message_id, .. }
        | EventKind::ToolResult { message_id, .. } => (None, Some(message_id.clone())),
        _ => (None, None),
    };
    FrameHead {
        seq: Some(ev.seq),
        event_type,
        message_id,
        ..FrameHead::default()
    }
}

pub(super) fn loss(kind: LineLossKind, why: String, head: FrameHead) -> LineLoss {
    let what = head.event_type.as_deref().unwrap_or("of unknown type");
    let seq = head.seq.map(|s| format!(" (seq {s})")).unwrap_or_default();
    let message = match kind {
        LineLossKind::TooLarge { limit } => format!(
            "an event {what}{seq} larger than {limit} bytes (limits.maxEventBytes) was skipped"
        ),
        LineLossKind::Malformed => format!("an event line{seq} was skipped: {why}"),
        LineLossKind::UnknownType => format!("an event of unknown type {what}{seq} was skipped"),
        LineLossKind::Elsewhere => {
            let to = head.at.as_ref().and_then(|a| a.session_id.as_deref());
            format!(
                "an event{seq} for another session ({}) was dropped",
                to.unwrap_or("?")
            )
        }
    };
    LineLoss {
        kind,
        message,
        head,
    }
}
