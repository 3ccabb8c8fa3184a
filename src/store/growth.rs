//! The bounds on what a stream can make the store hold (`limits.maxMessageChars`,
//! `limits.maxHistoryChars`): a runaway model is stopped with a `LimitExceeded` error, what was
//! shown kept, before one string outgrows what JS can hold (V8's longest is 2^29 − 24 UTF-16
//! units) or the history the 4 GiB of wasm memory.
//!
//! Measuring a message costs its length, so it is not done per event: every event adds its
//! size in bytes (never less than the UTF-16 units it can add, escapes included) to what is
//! unmeasured, and only when the measured size plus that could pass a bound is the message
//! (and the history) measured again. A bound is passed by one event at most.

use super::*;
use crate::protocol::Json;

/// The largest bounds an option can set: a message of 64 Mi units written as JSON with every
/// unit escaped (`\u0001`, 6 units) still fits one JS string.
pub const MAX_MESSAGE_CHARS: usize = 64 << 20;
/// The largest history bound: 256 Mi units stay well inside 4 GiB of wasm memory.
pub const MAX_HISTORY_CHARS: usize = 256 << 20;

/// What is known of the streamed sizes during one turn.
#[derive(Debug, Default)]
pub(super) struct Growth {
    /// The last message's size in UTF-16 units when last measured.
    message: usize,
    /// The history's size when last measured; `None` before the turn's first event.
    history: Option<usize>,
    /// Bytes of events since the last measurement.
    since: usize,
    /// The history's size when the run was stopped for a bound (pi-native, whose events
    /// stream goes on after a stop): see [`Growth::ignored_stop`].
    #[cfg(feature = "pi")]
    stopped_at: Option<usize>,
}

/// Which bound a stream passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Passed {
    Message(usize),
    History(usize),
}

impl Passed {
    pub(super) fn error(self) -> ChatError {
        let (field, limit, what) = match self {
            Passed::Message(n) => ("limits.maxMessageChars", n, "The answer"),
            Passed::History(n) => ("limits.maxHistoryChars", n, "The conversation"),
        };
        let mut e = ChatError::new(
            ErrorKind::LimitExceeded,
            format!("{what} grew past {limit} characters ({field}): the turn was stopped"),
        );
        e.field = Some(field.to_string());
        e
    }
}

impl Growth {
    /// An event of `bytes` was applied to `history`: whether a bound is passed now.
    pub(super) fn after_event(
        &mut self,
        bytes: usize,
        history: &[UIMessage],
        limits: &Limits,
    ) -> Option<Passed> {
        let max_message = limits.max_message_chars.min(MAX_MESSAGE_CHARS);
        let max_history = limits.max_history_chars.min(MAX_HISTORY_CHARS);
        self.since = self.since.saturating_add(bytes);
        if let Some(h) = self.history {
            if self.message.saturating_add(self.since) <= max_message
                && h.saturating_add(self.since) <= max_history
            {
                return None;
            }
        }
        self.since = 0;
        self.message = history.last().map_or(0, message_chars);
        let total = history.iter().map(message_chars).sum::<usize>();
        self.history = Some(total);
        if self.message > max_message {
            Some(Passed::Message(max_message))
        } else if total > max_history {
            Some(Passed::History(max_history))
        } else {
            None
        }
    }
}

#[cfg(feature = "pi")]
impl Growth {
    /// The run was stopped for a bound: what the history held then is kept to compare with.
    pub(super) fn stopped(&mut self) {
        self.stopped_at = self.history;
    }

    /// A run this client follows started: an earlier stop's size means nothing for it.
    pub(super) fn run_started(&mut self) {
        self.stopped_at = None;
    }

    /// After a stop for a bound, an event of `bytes` of the stopped run was applied: whether
    /// the history grew past its size at the stop by one more answer's worth
    /// (`maxMessageChars`), i.e. the server runs on regardless of the stop. Measured only when
    /// the unmeasured bytes could pass that, as [`after_event`](Self::after_event) does.
    pub(super) fn ignored_stop(
        &mut self,
        bytes: usize,
        history: &[UIMessage],
        limits: &Limits,
    ) -> bool {
        let Some(at) = self.stopped_at else {
            return false;
        };
        let bound = at.saturating_add(limits.max_message_chars.min(MAX_MESSAGE_CHARS));
        self.since = self.since.saturating_add(bytes);
        if self
            .history
            .is_some_and(|h| h.saturating_add(self.since) <= bound)
        {
            return false;
        }
        self.since = 0;
        let total = history.iter().map(message_chars).sum::<usize>();
        self.history = Some(total);
        total > bound
    }
}

/// A message's size as the bounds count it: its texts, its tools' inputs and outputs and its
/// data, in UTF-16 units (JS `length`).
pub fn message_chars(m: &UIMessage) -> usize {
    m.parts.iter().map(part_chars).sum()
}

fn part_chars(p: &Part) -> usize {
    match p {
        Part::Text { text, .. } | Part::Reasoning { text, .. } => utf16_len(text),
        Part::Tool(t) => {
            let kept = [&t.input, &t.output, &t.details];
            let v: usize = kept.iter().filter_map(|v| v.as_ref()).map(json_chars).sum();
            v + t.raw_input.as_deref().map_or(0, value_chars)
                + t.error_text.as_deref().map_or(0, utf16_len)
        }
        Part::Data { data, .. } => value_chars(data),
        Part::Other(v) => value_chars(v),
        _ => 0,
    }
}

/// About the length of `j` as JSON (a kept text: its length, which a bound may count).
fn json_chars(j: &Json) -> usize {
    match j {
        Json::Tree(v) => value_chars(v),
        Json::Text(text) => utf16_len(text),
    }
}

/// About the length of `v` as JSON: its strings and keys, and one per other value.
fn value_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => utf16_len(s),
        Value::Array(a) => a.iter().map(value_chars).sum::<usize>() + 1,
        Value::Object(o) => {
            o.iter()
                .map(|(k, v)| utf16_len(k) + value_chars(v))
                .sum::<usize>()
                + 1
        }
        _ => 1,
    }
}

/// `s.encode_utf16().count()`, from the bytes: one unit per character, two for the 4-byte ones.
fn utf16_len(s: &str) -> usize {
    s.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_lengths_are_those_of_js() {
        for s in ["", "abc", "größe", "日本語", "😀a😀", "\u{10FFFF}"] {
            assert_eq!(utf16_len(s), s.encode_utf16().count(), "{s}");
        }
    }

    /// Measured only when the unmeasured bytes could pass a bound; passed by one event at most.
    #[test]
    fn a_bound_is_found_when_the_events_could_have_passed_it() {
        let limits = Limits {
            max_message_chars: 100,
            max_history_chars: 1_000,
            ..Limits::default()
        };
        let mut g = Growth::default();
        let mut msg = UIMessage::new("a", Role::Assistant);
        msg.parts.push(Part::text("", None));
        let mut h = vec![msg];
        let grow = |h: &mut Vec<UIMessage>, by: &str| {
            if let Part::Text { text, .. } = &mut h.last_mut().unwrap().parts[0] {
                text.push_str(by);
            }
        };
        assert_eq!(g.after_event(10, &h, &limits), None); // the first event measures
        for _ in 0..9 {
            grow(&mut h, "0123456789");
            assert_eq!(g.after_event(30, &h, &limits), None);
        }
        grow(&mut h, "0123456789x");
        assert_eq!(g.after_event(30, &h, &limits), Some(Passed::Message(100)));
        // The history bound, over several messages.
        let mut g = Growth::default();
        let h: Vec<UIMessage> = (0..11)
            .map(|i| {
                let mut m = UIMessage::new(format!("m{i}"), Role::Assistant);
                m.parts.push(Part::text("x".repeat(99), None));
                m
            })
            .collect();
        assert_eq!(g.after_event(1, &h, &limits), Some(Passed::History(1_000)));
        // An option above the hard bound is held to it.
        let huge = Limits {
            max_message_chars: usize::MAX,
            ..Limits::default()
        };
        let mut g = Growth::default();
        assert_eq!(g.after_event(MAX_MESSAGE_CHARS, &h, &huge), None);
        assert_eq!(g.after_event(1, &h, &huge), None);
        assert!(g.since > 0);
    }
}
