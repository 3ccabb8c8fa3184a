//! Merging a final's parts into what streamed: matching parts by id and kind, their order.

use super::*;

pub(super) fn text_of(p: &Part) -> Option<&str> {
    match p {
        Part::Text { text, .. } | Part::Reasoning { text, .. } => Some(text),
        _ => None,
    }
}

/// Either text contains the other.
pub(super) fn overlap(a: &str, b: &str) -> bool {
    a.contains(b) || b.contains(a)
}

/// A part the message ended with: its text no longer streams.
pub(super) fn settled(mut p: Part) -> Part {
    if let Part::Text { state, .. } | Part::Reasoning { state, .. } = &mut p {
        if *state == Some(TextState::Streaming) {
            *state = Some(TextState::Done);
        }
    }
    p
}

/// The identity a part is matched and ordered by.
pub(super) fn ident<'a>(p: &'a Part, id: &'a PartId) -> Option<&'a str> {
    match p {
        Part::Tool(t) => Some(&t.tool_call_id),
        _ => id.as_deref(),
    }
}

#[derive(Clone, Copy)]
pub(super) enum From {
    Existing(usize),
    Final(usize),
}

/// The parts of the final of one kind, one per id (the fuller text), in the order of their
/// ids' first places; parts without an id each count.
pub(super) fn ranked(fin: &[Part], ids: &[PartId], kind: fn(&Part) -> bool) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for j in (0..fin.len()).filter(|&j| kind(&fin[j])) {
        let same = ids[j]
            .as_ref()
            .and_then(|id| out.iter().position(|&k| ids[k].as_ref() == Some(id)));
        match same {
            Some(at) => {
                let len = |k: usize| text_of(&fin[k]).map_or(0, |t| t.chars().count());
                if len(j) >= len(out[at]) {
                    out[at] = j;
                }
            }
            None => out.push(j),
        }
    }
    out
}

/// One message's final merged into the parts that streamed for it (upstream
/// `mergeFinalMessageParts`, the same message's mode): merged kind by kind, then put back in
/// the order the final says, each streamed-only part after the part it followed.
///
/// - text: the final's text replaces a streamed part of its id, or one it contains (the
///   streamed copy is not kept beside it); a streamed text the final does not cover stays,
///   and a final text that a kept one contains is not added twice;
/// - reasoning: matched by id, else by overlapping text; the fuller text wins; none twice;
/// - tools: by call id ([`merge_tool`]); a call the final lacks stays;
/// - other parts (files, notices): each once.
pub fn merge_parts(
    existing: &[Part],
    e_ids: &[PartId],
    fin: &[Part],
    f_ids: &[PartId],
) -> Vec<Part> {
    let mut merged: Vec<(Part, From)> = Vec::new();
    let mut used = vec![false; fin.len()];
    let same_id = |a: &PartId, b: &PartId| a.is_some() && a == b;
    let reasoning: fn(&Part) -> bool = |p| matches!(p, Part::Reasoning { .. });
    let is_text: fn(&Part) -> bool = |p| matches!(p, Part::Text { .. });
    let covered = |merged: &[(Part, From)], kind: fn(&Part) -> bool, t: &str| {
        merged
            .iter()
            .any(|(p, _)| kind(p) && text_of(p).is_some_and(|m| m.contains(t)))
    };

    // Reasoning.
    let f_r = ranked(fin, f_ids, reasoning);
    let pick = |i: usize, j: usize| {
        let (e, f) = (text_of(&existing[i]), text_of(&fin[j]));
        let longer = |t: Option<&str>| t.map_or(0, |t| t.chars().count());
        match longer(f) >= longer(e) {
            true => (fin[j].clone(), From::Final(j)),
            false => (settled(existing[i].clone()), From::Existing(i)),
        }
    };
    let mut unmatched = Vec::new();
    for i in (0..existing.len()).filter(|&i| reasoning(&existing[i])) {
        match f_r
            .iter()
            .find(|&&j| !used[j] && same_id(&e_ids[i], &f_ids[j]))
        {
            Some(&j) => {
                used[j] = true;
                merged.push(pick(i, j));
            }
            None => unmatched.push(i),
        }
    }
    for i in unmatched {
        let text = text_of(&existing[i]).unwrap_or_default();
        let near = f_r
            .iter()
            .find(|&&j| !used[j] && text_of(&fin[j]).is_some_and(|f| overlap(text, f)));
        match near {
            Some(&j) => {
                used[j] = true;
                merged.push(pick(i, j));
            }
            None if !covered(&merged, reasoning, text) => {
                merged.push((settled(existing[i].clone()), From::Existing(i)))
            }
            None => {}
        }
    }
    for &j in &f_r {
        if !used[j] && !covered(&merged, reasoning, text_of(&fin[j]).unwrap_or_default()) {
            used[j] = true;
            merged.push((fin[j].clone(), From::Final(j)));
        }
    }

    // Tools: the final's copies of one call are one; each streamed call meets its copy.
    let mut f_tools: Vec<(usize, ToolPart)> = Vec::new();
    for (j, p) in fin.iter().enumerate() {
        let Part::Tool(t) = p else { continue };
        match f_tools
            .iter_mut()
            .find(|(_, c)| c.tool_call_id == t.tool_call_id)
        {
            Some((_, c)) => *c = merge_tool(c, t),
            None => f_tools.push((j, (**t).clone())),
        }
    }
    let mut met = vec![false; f_tools.len()];
    for (i, p) in existing.iter().enumerate() {
        let Part::Tool(e) = p else { continue };
        let copy = f_tools
            .iter()
            .position(|(_, f)| f.tool_call_id == e.tool_call_id);
        let part = match copy {
            Some(k) if !met[k] => {
                met[k] = true;
                merge_tool(e, &f_tools[k].1)
            }
            _ => (**e).clone(),
        };
        merged.push((Part::Tool(Box::new(part)), From::Existing(i)));
    }
    for (k, (j, t)) in f_tools.into_iter().enumerate() {
        let shown = existing.iter().any(|p| {
            p.as_tool()
                .is_some_and(|e| e.tool_call_id == t.tool_call_id)
        });
        if !met[k] && !shown {
            merged.push((Part::Tool(Box::new(t)), From::Final(j)));
        }
    }

    // Text.
    let f_x = ranked(fin, f_ids, is_text);
    if f_x.is_empty() {
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i])) {
            merged.push((settled(existing[i].clone()), From::Existing(i)));
        }
    } else {
        let mut taken = vec![false; existing.len()];
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i])) {
            if let Some(&j) = f_x
                .iter()
                .find(|&&j| !used[j] && same_id(&e_ids[i], &f_ids[j]))
            {
                used[j] = true;
                taken[i] = true;
                merged.push((fin[j].clone(), From::Final(j)));
            }
        }
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i]) && !taken[i]) {
            let id_shown = e_ids[i].is_some()
                && merged.iter().any(|(_, from)| match *from {
                    From::Existing(k) => e_ids[k] == e_ids[i],
                    From::Final(k) => f_ids[k] == e_ids[i],
                });
            let text = text_of(&existing[i]).unwrap_or_default();
            let in_final = f_x
                .iter()
                .any(|&j| text_of(&fin[j]).is_some_and(|f| f.contains(text)));
            if !id_shown && !in_final {
                merged.push((settled(existing[i].clone()), From::Existing(i)));
            }
        }
        for &j in &f_x {
            if !used[j] && !covered(&merged, is_text, text_of(&fin[j]).unwrap_or_default()) {
                used[j] = true;
                merged.push((fin[j].clone(), From::Final(j)));
            }
        }
    }

    // Files, notices and any other part: each once.
    let other = |p: &Part| {
        !matches!(
            p,
            Part::Text { .. } | Part::Reasoning { .. } | Part::Tool(_)
        )
    };
    for (i, p) in existing.iter().enumerate().filter(|(_, p)| other(p)) {
        merged.push((p.clone(), From::Existing(i)));
    }
    for (j, p) in fin.iter().enumerate().filter(|(_, p)| other(p)) {
        if !merged.iter().any(|(m, _)| m == p) {
            merged.push((p.clone(), From::Final(j)));
        }
    }

    order(merged, existing, e_ids, fin, f_ids)
}

/// The merged parts in the order the final gives (upstream `orderPartsBySourceSequence`): a
/// part the final has (by identity, or the final's own part) at its place there; a streamed
/// part the final lacks just after the last streamed part before it that the final has.
pub(super) fn order(
    merged: Vec<(Part, From)>,
    existing: &[Part],
    e_ids: &[PartId],
    fin: &[Part],
    f_ids: &[PartId],
) -> Vec<Part> {
    let final_pos = |id: &str| (0..fin.len()).find(|&j| ident(&fin[j], &f_ids[j]) == Some(id));
    let span = (existing.len() + 1) as f64;
    let (mut anchor, mut sub) = (-1.0_f64, 0.0_f64);
    let stream_key: Vec<f64> = (0..existing.len())
        .map(
            |i| match ident(&existing[i], &e_ids[i]).and_then(final_pos) {
                Some(j) => {
                    (anchor, sub) = (j as f64, 0.0);
                    anchor
                }
                None => {
                    sub += 1.0;
                    anchor + sub / span
                }
            },
        )
        .collect();
    let mut keyed: Vec<(f64, Part)> = merged
        .into_iter()
        .map(|(p, from)| {
            let id = match from {
                From::Existing(i) => ident(&p, &e_ids[i]).map(str::to_string),
                From::Final(j) => ident(&p, &f_ids[j]).map(str::to_string),
            };
            let key = match (id.as_deref().and_then(final_pos), from) {
                (Some(j), _) | (None, From::Final(j)) => j as f64,
                (None, From::Existing(i)) => stream_key[i],
            };
            (key, p)
        })
        .collect();
    // A stable insertion sort: a step has a handful of parts, and a sort of std's would add
    // its code for one more element type to the wasm.
    for i in 1..keyed.len() {
        let mut j = i;
        while j > 0 && keyed[j - 1].0 > keyed[j].0 {
            keyed.swap(j - 1, j);
            j -= 1;
        }
    }
    keyed.into_iter().map(|(_, p)| p).collect()
}
