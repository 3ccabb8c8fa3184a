//! Merging a `/state` read into the rows shown.

use super::*;

/// A message of this client's the server has not shown yet (its optimistic copy): a user
/// message without the `status` the server's messages carry.
pub(super) fn unsent(m: &UIMessage) -> bool {
    m.role == Role::User && meta(m, "status").is_none()
}

/// A user message's text, to know it again under another id.
pub(super) fn user_text(m: &UIMessage) -> String {
    m.text()
}

/// How a `/state` read that shows less than the client (a busy session's state lacks the
/// answer being written; its ids are pi's entry ids, not the streamed ones) goes into the
/// rows shown.
pub struct StateMerge {
    /// The history now.
    pub messages: Vec<UIMessage>,
    /// Rows shown before whose content the state changed: what the reducers knew of them goes.
    pub changed: Vec<String>,
    /// Per state row, the id it is shown under, and whether its parts are the state's own
    /// (a streaming one then goes on from the state's parts).
    pub shown: Vec<(String, bool)>,
}

/// Merges the state's rows `doc` into the rows shown, `local` (upstream
/// `mergeSnapshotMessagesIntoLocal`, with what it lacks: ids that differ). Each state row is
/// the row shown with its id; else, for a user row, the next shown one with its
/// `clientNonce` or (neither having one) its text; else, for an assistant row, the answer
/// shown where it stands (after the same user row). A row shown that the state lacks stays
/// where it is. A matched row keeps its id (a user row the state gives a nonce takes the
/// state's); one being streamed into (`open`) keeps its parts unless the state has it
/// streaming too; another takes the state's copy merged into it, as a final.
pub fn merge_state(
    local: &[UIMessage],
    open: impl Fn(&str) -> bool,
    doc: Vec<UIMessage>,
    doc_streaming: &[bool],
) -> StateMerge {
    enum Row {
        Local(usize),
        Doc(usize),
    }
    let by_id: crate::util::hash::HashMap<&str, usize> = local
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    let mut matched = vec![false; local.len()];
    let mut pairs: Vec<Option<usize>> = vec![None; doc.len()];
    // A row known by its text or its place is looked for after the last one matched.
    let mut next = 0;
    for (j, s) in doc.iter().enumerate() {
        let by_id = by_id.get(s.id.as_str()).copied().filter(|&k| !matched[k]);
        let free = |k: &usize| !matched[*k] && local[*k].role == s.role;
        let found = by_id.or_else(|| match s.role {
            Role::User => {
                let nonce = meta(s, "clientNonce");
                let text = user_text(s);
                (next..local.len())
                    .filter(free)
                    .find(|&k| nonce.is_some() && meta(&local[k], "clientNonce") == nonce)
                    .or_else(|| {
                        let same = |k: &usize| {
                            let theirs = meta(&local[*k], "clientNonce");
                            (nonce.is_none() || theirs.is_none() || theirs == nonce)
                                && user_text(&local[*k]) == text
                        };
                        // A message on its way may be shown before rows the server listed
                        // ahead of it: it is looked for wherever it is.
                        (next..local.len()).filter(free).find(same).or_else(|| {
                            (0..next)
                                .filter(free)
                                .filter(|&k| unsent(&local[k]))
                                .find(same)
                        })
                    })
            }
            _ => (next..local.len())
                .take_while(|&k| local[k].role != Role::User)
                .filter(free)
                .find(|&k| same_turn(turn_of(&local[k]), turn_of(s))),
        });
        if let Some(k) = found {
            matched[k] = true;
            pairs[j] = Some(k);
            next = next.max(k + 1);
        }
    }
    // The state's order (the server's, for the rows both show); a row only the client shows
    // just after the row before it that the state has too, or after all the state's when it
    // is past the last of those (an answer being written) or a message of this client's on
    // its way to the server (a user message without the status every server message has),
    // which the server will list after what it has.
    let mut doc_of: Vec<Option<usize>> = vec![None; local.len()];
    for (j, k) in pairs.iter().enumerate() {
        if let Some(k) = k {
            doc_of[*k] = Some(j);
        }
    }
    let last = doc_of.iter().rposition(Option::is_some);
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); doc.len() + 1];
    let mut slot = 0;
    for (i, j) in doc_of.iter().enumerate() {
        match j {
            Some(j) => slot = j + 1,
            None if last.is_none_or(|l| i > l) || unsent(&local[i]) => after[doc.len()].push(i),
            None => after[slot].push(i),
        }
    }
    let mut rows: Vec<Row> = Vec::with_capacity(local.len() + doc.len());
    for (k, list) in after.into_iter().enumerate() {
        if k > 0 {
            rows.push(Row::Doc(k - 1));
        }
        rows.extend(list.into_iter().map(Row::Local));
    }

    let mut changed = Vec::new();
    let mut shown: Vec<(String, bool)> = vec![(String::new(), false); doc.len()];
    let mut doc: Vec<Option<UIMessage>> = doc.into_iter().map(Some).collect();
    let mut messages = Vec::with_capacity(rows.len());
    for r in rows {
        match r {
            Row::Local(i) => messages.push(local[i].clone()),
            Row::Doc(j) => {
                let s = doc[j]
                    .take()
                    .unwrap_or_else(|| UIMessage::new("", Role::User));
                let Some(k) = pairs[j] else {
                    // A row the client did not show: under its own id, unless a row shown
                    // holds it.
                    let mut s = s;
                    if by_id.contains_key(s.id.as_str()) {
                        let held = |c: &str| {
                            by_id.contains_key(c)
                                || doc.iter().flatten().any(|d| d.id == c)
                                || messages.iter().any(|m: &UIMessage| m.id == c)
                        };
                        s.id = distinct_id(&s.id, turn_of(&s), &held);
                    }
                    shown[j] = (s.id.clone(), true);
                    messages.push(s);
                    continue;
                };
                let l = &local[k];
                let s_id = s.id.clone();
                // The state has fewer steps of an answer being written than the client (the
                // live server's busy state lacks the message being written): the row goes on
                // as it is. Of as many steps, and not streaming, its message ended among
                // events this client missed: the state's copy stands.
                let behind = steps(&s.parts).len() < steps(&l.parts).len();
                let (m, own) = if open(&l.id) && !doc_streaming[j] && behind {
                    let mut m = l.clone();
                    merge_tools_in_place(&mut m, &s);
                    (m, false)
                } else if (open(&l.id) && doc_streaming[j]) || l.role == Role::User {
                    let mut m = merge_final(l, &[], None, s.clone(), Vec::new());
                    m.parts = s.parts;
                    (m, doc_streaming[j])
                } else {
                    (merge_rows(l, s), false)
                };
                let mut m = m;
                // A user message the state names by its nonce takes the state's id: the
                // client knows it by that nonce. So does this client's optimistic copy known
                // by its text: the server's events name it by the server's id from now on.
                let renamed = l.role == Role::User
                    && (meta(&m, "clientNonce").is_some() || unsent(l))
                    && by_id.get(s_id.as_str()).is_none_or(|&i| i == k);
                if renamed {
                    m.id = s_id;
                }
                if m != *l {
                    changed.push(l.id.clone());
                }
                shown[j] = (m.id.clone(), own);
                messages.push(m);
            }
        }
    }
    StateMerge {
        messages,
        changed,
        shown,
    }
}

/// The state's copy `s` of a row the client shows, `l`, that nothing streams into any more:
/// the copy with more steps (the newer; the state's on a tie), its calls merged with the
/// other's ([`merge_tool`]: a settled outcome stands), under the row's id.
pub(super) fn merge_rows(l: &UIMessage, s: UIMessage) -> UIMessage {
    let state_newer = steps(&s.parts).len() >= steps(&l.parts).len();
    let (mut newer, older) = match state_newer {
        true => (s.clone(), l),
        false => (l.clone(), &s),
    };
    for p in newer.parts.iter_mut() {
        let Some(t) = p.as_tool_mut() else { continue };
        let same = older
            .parts
            .iter()
            .find_map(|q| q.as_tool().filter(|o| o.tool_call_id == t.tool_call_id));
        if let Some(o) = same {
            // The row shown is the one whose settled outcome stands.
            *t = match state_newer {
                true => merge_tool(o, t),
                false => merge_tool(t, o),
            };
        }
    }
    let status = kept_status(meta(&s, "status"), meta(l, "status"), &newer.parts);
    newer.metadata = Some(Box::new(merged_metadata(
        l.metadata.as_deref(),
        s.metadata.as_deref(),
        status,
    )));
    newer.id = l.id.clone();
    newer
}
