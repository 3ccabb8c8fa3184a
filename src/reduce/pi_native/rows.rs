//! Which row an event writes: a user's row by nonce, a content row per message and step,
//! free ids, marks, a message's end and its final, and a run's end settling its rows.

use super::*;

/// A delta or part end for a message that ended (not streamed into any more) whose text a
/// part of its kind already holds: a replay of what its final said (upstream
/// `terminalMessageAlreadyCoversPartText`).
pub(super) fn covered_by_ended(c: &Conversation, row: &str, kind: PartKind, text: &str) -> bool {
    let Some(m) = c.history().get(row) else {
        return false;
    };
    let ended = !c.is_open(row) && matches!(meta(m, "status"), Some(s) if s != "streaming");
    ended
        && !text.is_empty()
        && m.parts.iter().any(|p| match (p, kind) {
            (Part::Text { text: t, .. }, PartKind::Text)
            | (Part::Reasoning { text: t, .. }, PartKind::Reasoning) => t.contains(text),
            _ => false,
        })
}

/// The newest row showing the tool call `call`, and its part.
pub(super) fn row_with_call<'a>(
    h: &'a History,
    call: &str,
) -> Option<(&'a UIMessage, &'a ToolPart)> {
    h.messages().iter().rev().find_map(|m| {
        m.parts
            .iter()
            .find_map(|p| p.as_tool().filter(|t| t.tool_call_id == call))
            .map(|t| (m, t))
    })
}

/// Edits the tool part `call` of row `row`.
pub(super) fn edit_call(
    c: &mut Conversation,
    row: &str,
    call: &str,
    edit: impl FnOnce(&mut ToolPart),
) {
    c.edit_message(row, |m| {
        let part = m
            .parts
            .iter_mut()
            .find_map(|p| p.as_tool_mut().filter(|t| t.tool_call_id == call));
        if let Some(t) = part {
            edit(t);
        }
    });
}

impl NativeGate {
    /// The row of a user message that starts, and whether the client showed it already: the
    /// row with its `clientNonce` (a start replayed after a state read; upstream
    /// `piChatCommittedMessages.ts`), which takes the server's id.
    pub(super) fn user_row(
        &mut self,
        c: &mut Conversation,
        id: &str,
        nonce: Option<&str>,
    ) -> (String, bool) {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return (m.row.clone(), true);
        }
        let h = c.history();
        let shown = nonce.and_then(|n| {
            (h.messages().iter().rev())
                .find(|m| m.role == Role::User && meta(m, "clientNonce") == Some(n))
                .map(|m| m.id.clone())
        });
        let (row, known) = match shown {
            Some(row) => {
                if h.get(id).is_none() {
                    c.rename_message(&row, id);
                    (id.to_string(), true)
                } else {
                    (row, true)
                }
            }
            None => match h.get(id) {
                Some(m)
                    if m.role == Role::User && same_turn(turn_of(m), self.turn_id.as_deref()) =>
                {
                    (id.to_string(), true)
                }
                Some(_) => (self.free_id(h, id), false),
                None => (id.to_string(), false),
            },
        };
        self.run.push(RunMessage {
            id: id.to_string(),
            row: row.clone(),
            step: 0,
        });
        (row, known)
    }

    /// The row an event of assistant message `id` writes: the one this run gave it; else the
    /// row holding its id, when that row is of this turn (or of no known one); else the
    /// message is new to this run ([`new_message`](Self::new_message)).
    pub(super) fn content_row(&mut self, c: &mut Conversation, id: &str) -> String {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return m.row.clone();
        }
        let h = c.history();
        if let Some(m) = h.get(id) {
            if m.role == Role::Assistant && same_turn(turn_of(m), self.turn_id.as_deref()) {
                let step = merge::steps(&m.parts).len() - 1;
                self.run.push(RunMessage {
                    id: id.to_string(),
                    row: id.to_string(),
                    step,
                });
                return id.to_string();
            }
        }
        let turn = self.turn_id.clone();
        let row = self.new_message(c, id, turn, &[]).0;
        self.mark(c, &row, None);
        row
    }

    /// An assistant message new to this run: the next step of the answer shown last when
    /// that answer is of the same turn (`turn`; without one, when it shows one of `calls`,
    /// upstream's evidence for a final), else a row of its own, under its id unless an older
    /// row holds it. Returns the row and the step.
    pub(super) fn new_message(
        &mut self,
        c: &mut Conversation,
        id: &str,
        turn: Option<String>,
        calls: &[&str],
    ) -> (String, usize) {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return (m.row.clone(), m.step);
        }
        let h = c.history();
        let answer = h.last().filter(|last| {
            last.role == Role::Assistant
                && last.id != id
                && match turn.as_deref() {
                    Some(t) => turn_of(last) == Some(t),
                    None => merge::shows_call(last, calls),
                }
        });
        let taken = h.get(id).is_some();
        let row = match taken {
            true => self.free_id(h, id),
            false => id.to_string(),
        };
        let step = match answer.map(|a| a.id.clone()) {
            Some(answer) => {
                c.new_step(&answer, &row);
                for m in self.run.iter_mut().filter(|m| m.row == answer) {
                    m.row = row.clone();
                }
                let parts = c.history().get(&row).map_or(&[][..], |m| &m.parts[..]);
                let step = merge::steps(parts).len() - 1;
                c.edit_message(&row, |m| {
                    if !matches!(meta(m, "status"), Some("aborted" | "error")) {
                        merge::set_meta(m, "status", Value::String("streaming".into()));
                    }
                });
                step
            }
            None => 0,
        };
        self.run.push(RunMessage {
            id: id.to_string(),
            row: row.clone(),
            step,
        });
        (row, step)
    }

    /// The id a message gets beside an older turn's row holding its id.
    pub(super) fn free_id(&self, h: &History, id: &str) -> String {
        merge::distinct_id(id, self.turn_id.as_deref(), &|c| h.get(c).is_some())
    }

    /// A row the run wrote gets what the protocol's messages carry: the turn, a status
    /// (`streaming` while an assistant message is written), the earliest `createdAt`.
    pub(super) fn mark(&self, c: &mut Conversation, row: &str, created_at: Option<Value>) {
        let Some(m) = c.history().get(row) else {
            return;
        };
        let turn = (turn_of(m).is_none())
            .then(|| self.turn_id.clone())
            .flatten();
        let status = meta(m, "status").is_none();
        let earlier = created_at.filter(|at| {
            let now = m.metadata.as_deref().and_then(|d| d.get("createdAt"));
            now.is_none_or(|now| now != at)
        });
        if turn.is_none() && !status && earlier.is_none() {
            return;
        }
        c.edit_message(row, |m| {
            if let Some(t) = turn {
                merge::set_meta(m, "turnId", Value::String(t));
            }
            if status {
                let s = match m.role {
                    Role::Assistant => "streaming",
                    _ => "done",
                };
                merge::set_meta(m, "status", Value::String(s.into()));
            }
            if let Some(at) = earlier {
                merge::keep_earliest_created_at(m, &at);
            }
        });
    }

    /// A `message-end`: its final merged into the row (and step) that shows the message
    /// (upstream `piChatAssistantCommit.ts`), then handed to the reducer as the message.
    pub(super) fn message_end(
        &mut self,
        c: &mut Conversation,
        id: String,
        fin: Option<UIMessage>,
        ids: Vec<Option<String>>,
        out: &mut Vec<NativeEffect>,
    ) {
        let Some(fin) = fin else {
            // An unreadable final: what streamed stands, and is over.
            let Some(m) = self.run.iter().find(|m| m.id == id) else {
                let d = format!("message end for unknown message {id}");
                return out.push(NativeEffect::Diagnostic(d));
            };
            let row = m.row.clone();
            let role = c.history().get(&row).map_or(Role::Assistant, |m| m.role);
            let end = PiEvent::MessageEnd {
                seq: None,
                role,
                message_id: row,
                text: None,
                final_message: None,
            };
            return self.feed(c, end, out);
        };
        let role = fin.role;
        let (row, step) = self.final_row(c, &id, &fin);
        if c.history().get(&row).is_none() {
            let start = PiEvent::MessageStart {
                seq: None,
                message_id: row.clone(),
                role,
                client_nonce: None,
                text: None,
            };
            self.feed(c, start, out);
            self.mark(c, &row, None);
        }
        let Some(current) = c.history().get(&row).cloned() else {
            return;
        };
        let last = merge::steps(&current.parts).len() - 1;
        if c.is_open(&row) && step.is_some_and(|s| s < last) {
            // The final of an earlier step while the answer streams on: its calls' outcomes
            // only (the parts being streamed into must keep their places).
            return c.edit_message(&row, |m| merge::merge_tools_in_place(m, &fin));
        }
        // pi numbers a message's parts by content index: its final's `<messageId>:text:<k>`
        // is the part the stream called `k` (reference §8).
        let ids = (fin.parts.iter().zip(ids))
            .map(|(p, pid)| {
                let kind = match p {
                    Part::Text { .. } => "text",
                    Part::Reasoning { .. } => "reasoning",
                    _ => return pid,
                };
                let index = pid.as_deref().and_then(|x| x.strip_prefix(id.as_str()));
                let index =
                    index.and_then(|x| x.strip_prefix(':')?.strip_prefix(kind)?.strip_prefix(':'));
                index.map(str::to_string).or(pid)
            })
            .collect();
        let streamed = c.part_ids(&row);
        let merged = merge::merge_final(&current, &streamed, step, fin, ids);
        let end = PiEvent::MessageEnd {
            seq: None,
            role,
            message_id: row,
            text: None,
            final_message: Some(merged),
        };
        self.feed(c, end, out);
    }

    /// The row and step a final is of. With its turn: this run's message of that id, or the
    /// row holding the id when of that turn, else a message new to the turn. Without one (a
    /// late final of an older run): this run's message, unless it shares nothing with the
    /// final and the row holding the id does (upstream `findNoTurnSameIdCommittedIndex`).
    pub(super) fn final_row(
        &mut self,
        c: &mut Conversation,
        id: &str,
        fin: &UIMessage,
    ) -> (String, Option<usize>) {
        let h = c.history();
        let run = self.run.iter().find(|m| m.id == id).cloned();
        let plain = h
            .get(id)
            .filter(|m| m.role == fin.role && run.as_ref().is_none_or(|r| r.row != m.id));
        let run_row = |r: &RunMessage| h.get(&r.row);
        let ft = turn_of(fin);
        let found = match ft {
            Some(t) => match (&run, plain) {
                (Some(r), _) if run_row(r).is_none_or(|m| same_turn(turn_of(m), Some(t))) => {
                    Some((r.row.clone(), Some(r.step)))
                }
                (_, Some(p)) if same_turn(turn_of(p), Some(t)) => Some((p.id.clone(), None)),
                _ => None,
            },
            None => match (&run, plain) {
                (Some(r), Some(p)) => {
                    let mine = run_row(r).is_some_and(|m| merge::shares_content(m, fin));
                    match !mine && merge::shares_content(p, fin) {
                        true => Some((p.id.clone(), None)),
                        false => Some((r.row.clone(), Some(r.step))),
                    }
                }
                (Some(r), None) => Some((r.row.clone(), Some(r.step))),
                (None, Some(p)) => Some((p.id.clone(), None)),
                (None, None) => None,
            },
        };
        if let Some(found) = found {
            return found;
        }
        if fin.role == Role::User {
            let nonce = meta(fin, "clientNonce").map(str::to_string);
            let (row, _) = self.user_row(c, id, nonce.as_deref());
            return (row, None);
        }
        let calls: Vec<&str> = (fin.parts.iter())
            .filter_map(|p| p.as_tool().map(|t| t.tool_call_id.as_str()))
            .collect();
        let turn = ft.map(str::to_string);
        let (row, step) = self.new_message(c, id, turn, &calls);
        (row, Some(step))
    }

    /// A run's end (`status`, with the run's error): the rows it wrote are settled
    /// ([`merge::settle_row`]): no call runs, no text streams, a row the end cut off says so.
    pub(super) fn settle(&mut self, c: &mut Conversation, status: EndStatus) {
        let mut rows: Vec<&str> = self.run.iter().map(|m| m.row.as_str()).collect();
        rows.dedup();
        for row in rows {
            let open = c.is_open(row);
            let Some(mut m) = c.history().get(row).cloned() else {
                continue;
            };
            if merge::settle_row(&mut m, status, self.error.as_deref(), open) {
                c.edit_message(row, |shown| *shown = m);
            }
        }
    }
}
