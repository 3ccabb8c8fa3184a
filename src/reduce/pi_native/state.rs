//! A `/state` read applied to the rows shown.

use super::*;

/// A `/state` document's messages as rows: an answer's messages one row, a step each
/// ([`merge::fold_step`]; upstream `normalizeSnapshotMessages`), and a message whose id an
/// earlier row of its role holds (an older turn's) under an id of its own.
pub(super) fn state_rows(
    messages: Vec<UIMessage>,
    streaming: Vec<(String, Vec<StreamedPart>)>,
) -> Vec<StateRow> {
    let mut streaming = streaming.into_iter().peekable();
    let mut out: Vec<StateRow> = Vec::with_capacity(messages.len());
    for m in messages {
        let parts = match streaming.peek() {
            Some((id, _)) if *id == m.id && meta(&m, "status") == Some("streaming") => {
                streaming.next().map(|(_, p)| p)
            }
            _ => None,
        };
        let Some(prev) = out.last_mut().filter(|p| merge::one_answer(&p.msg, &m)) else {
            out.push(StateRow {
                earlier: Vec::new(),
                renamed_from: None,
                streaming: parts,
                msg: m,
            });
            continue;
        };
        if prev.msg.id == m.id {
            // The same message twice: one, its later copy as its final.
            prev.msg = merge::merge_final(&prev.msg, &[], None, m, Vec::new());
            prev.streaming = None;
            continue;
        }
        let before = (prev.msg.id.clone(), merge::steps(&prev.msg.parts).len() - 1);
        prev.earlier.push(before);
        let at = merge::fold_step(&mut prev.msg, m);
        prev.streaming = parts.map(|ps| {
            ps.into_iter()
                .filter_map(|(r, part, k)| Some((r, part, at.get(k).copied().flatten()?)))
                .collect()
        });
    }
    // Ids held twice (a provider's ids repeat across turns): the later row gets its own.
    let twice: Vec<usize> = {
        let mut seen: crate::util::hash::HashMap<&str, usize> =
            crate::util::hash::HashMap::default();
        (0..out.len())
            .filter(|&k| {
                let m = &out[k].msg;
                match seen.get(m.id.as_str()) {
                    Some(&first) => out[first].msg.role == m.role,
                    None => {
                        seen.insert(m.id.as_str(), k);
                        false
                    }
                }
            })
            .collect()
    };
    for k in twice {
        let m = &out[k].msg;
        let id = merge::distinct_id(&m.id, turn_of(m), &|c| out.iter().any(|r| r.msg.id == c));
        out[k].renamed_from = Some(std::mem::replace(&mut out[k].msg.id, id));
    }
    out
}

impl NativeGate {
    /// A `/state` document is the truth now, its seq the cursor; one older than the cursor
    /// (a lagging server, read after events were applied) is ignored and `false` returned,
    /// unless `rewind`: the server said the cursor is out of range (`CURSOR_AHEAD`: it
    /// restarted, its numbering went back), and its state replaces what this client holds
    /// (the upstream `allowSeqRewind`).
    ///
    /// An answer's messages are one row (folded as the events fold them), messages sharing
    /// an id across turns are rows apart. A state read again that shows less than the client
    /// (a busy session's lacks the answer being written; its ids are pi's entry ids, not the
    /// streamed ones) is merged into the rows shown rather than taken whole: nothing shown
    /// goes (upstream `piChatReducer.ts` merges by id and nonce; here by position and text
    /// too, as the ids differ).
    pub fn apply_state(
        &mut self,
        conversation: &mut Conversation,
        doc: StateDoc,
        rewind: bool,
    ) -> bool {
        conversation.gate_rows();
        if doc.seq < self.seq && !rewind {
            return false;
        }
        let running = doc.status == "streaming";
        if self.status == RunStatus::Running && !running {
            // The run ended among events this client did not read.
            self.settle(conversation, EndStatus::Ok);
        }
        let active = doc.active_turn_id.clone();
        let rows = state_rows(doc.messages, doc.streaming);
        let local = conversation.history().messages();
        let behind =
            rows.len() < local.len() || local.iter().zip(&rows).any(|(l, r)| l.id != r.msg.id);
        let of_run = |r: &StateRow| {
            r.streaming.is_some() || (active.is_some() && turn_of(&r.msg) == active.as_deref())
        };
        let mut run = Vec::new();
        // What the client shows came from the server (a state, or events): kept.
        let from_server = self.hydrated || self.seq > 0;
        if from_server && !rewind && !local.is_empty() && behind {
            let streaming: Vec<bool> = rows.iter().map(|r| r.streaming.is_some()).collect();
            let mut meta_rows = Vec::with_capacity(rows.len());
            let mut msgs = Vec::with_capacity(rows.len());
            for r in rows {
                let own = r.own();
                msgs.push(r.msg);
                meta_rows.push((r.earlier, own, r.streaming));
            }
            let merged = {
                let c = &*conversation;
                merge::merge_state(local, |id| c.is_open(id), msgs, &streaming)
            };
            let changed = merged.changed;
            conversation.rehydrate(merged.messages, |id| !changed.iter().any(|c| c == id));
            for ((shown, own), (earlier, own_id, parts)) in merged.shown.into_iter().zip(meta_rows)
            {
                if let (true, Some(parts)) = (own, &parts) {
                    conversation.resume_streaming(&shown, parts);
                }
                let in_run = parts.is_some()
                    || (active.is_some()
                        && conversation.history().get(&shown).and_then(turn_of)
                            == active.as_deref());
                if in_run {
                    run.extend(StateRow::run_messages(earlier, own_id, &shown));
                }
            }
            // What this client knew of its run still holds where the state did not say.
            let h = conversation.history();
            for m in std::mem::take(&mut self.run) {
                if h.get(&m.row).is_some() && !run.iter().any(|r: &RunMessage| r.id == m.id) {
                    run.push(m);
                }
            }
        } else {
            for r in rows.iter().filter(|r| of_run(r)) {
                run.extend(StateRow::run_messages(
                    r.earlier.clone(),
                    r.own(),
                    &r.msg.id,
                ));
            }
            let mut streaming = Vec::new();
            let mut msgs = Vec::with_capacity(rows.len());
            for r in rows {
                if let Some(parts) = r.streaming {
                    streaming.push((r.msg.id.clone(), parts));
                }
                msgs.push(r.msg);
            }
            conversation.hydrate(msgs, false);
            for (id, parts) in &streaming {
                conversation.resume_streaming(id, parts);
            }
        }
        self.run = run;
        self.hydrated = true;
        self.seq = doc.seq;
        self.queue = doc.queue;
        self.turn_id = active;
        (self.status, self.error) = match doc.status.as_str() {
            "streaming" => (RunStatus::Running, None),
            "error" => (
                RunStatus::Failed,
                doc.error.or(Some("the run failed".into())),
            ),
            _ => (RunStatus::Idle, None),
        };
        true
    }
}
