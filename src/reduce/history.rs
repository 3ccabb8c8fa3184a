//! The ordered message history with an id index and a version per message, and the reader
//! of a messages-route answer that converts it message by message as its bytes arrive.

use serde_json::Value;

use super::id_index::IdIndex;
use crate::protocol::{Role, UIMessage};

mod body;
#[cfg(feature = "pi")]
pub use body::StateLists;
pub use body::{HistoryAnswer, HistoryBodyError, HistoryParser, RunningTurn};

/// The ordered list of messages. Lookups by id are O(1) so the per-chunk cost does not grow
/// with the history; every change bumps the changed message's version (from one counter, so
/// a version is never reused, even across a reset).
#[derive(Debug, Default, Clone)]
pub struct History {
    messages: Vec<UIMessage>,
    versions: Vec<u64>,
    /// Per message, the version of its last change that was not an append to a text part
    /// ([`append_mut`](Self::append_mut)): while it is not newer than a version a consumer
    /// exported, the message's texts only grew since (the snapshot then skips comparing them).
    reshaped: Vec<u64>,
    index: IdIndex,
    clock: u64,
    /// Where the changes were, for [`changed_from`](Self::changed_from): `(clock, position)`
    /// of changes, both increasing from first to last. A change drops the entries at or after
    /// its own position (any consumer that must look at them must look at the new one, which
    /// is newer and no later), so a stream of changes to the last message keeps one entry.
    changes: Vec<(u64, usize)>,
}

impl History {
    /// An empty history.
    pub fn new() -> Self {
        History::default()
    }

    /// The number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// No messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[UIMessage] {
        &self.messages
    }

    /// The version of the message at `i`; it changes whenever that message changes.
    // Inlined even at opt-level "z": the snapshot compares every message's version.
    #[inline(always)]
    pub fn version(&self, i: usize) -> u64 {
        self.versions[i]
    }

    /// The version of the last change of the message at `i` that was not a text append.
    pub fn reshaped(&self, i: usize) -> u64 {
        self.reshaped[i]
    }

    /// Every message's version, by position: a consumer that keeps the versions it saw
    /// compares them all at once (the snapshot, through the store).
    pub fn versions(&self) -> &[u64] {
        &self.versions
    }

    /// Bumps on every change of any message and on every insertion or removal.
    pub fn revision(&self) -> u64 {
        self.clock
    }

    /// The lowest position whose message may have changed, appeared, moved or gone since the
    /// history's [`revision`](Self::revision) was `since` (the length when nothing did): a
    /// consumer holding the versions of that revision compares them from there on only,
    /// rather than the whole history at every notification. O(log n).
    pub fn changed_from(&self, since: u64) -> usize {
        let k = self.changes.partition_point(|&(clock, _)| clock <= since);
        self.changes
            .get(k)
            .map_or(self.len(), |&(_, at)| at.min(self.len()))
    }

    /// Makes every later version larger than `floor` (a session's history created or
    /// resumed after another one's: versions must never repeat within one store).
    pub fn advance_clock(&mut self, floor: u64) {
        self.clock = self.clock.max(floor);
    }

    /// The position of the message with this `id`.
    #[cfg_attr(optimize_hot_path, optimize(speed))]
    pub fn position(&self, id: &str) -> Option<usize> {
        // The message asked for is nearly always the last one (the streamed message, once per
        // chunk): one comparison rather than hashing the id.
        match self.messages.last() {
            Some(m) if m.id == id => Some(self.messages.len() - 1),
            _ => self.index.get(&self.messages, id),
        }
    }

    /// The message with this `id`.
    pub fn get(&self, id: &str) -> Option<&UIMessage> {
        self.position(id).map(|i| &self.messages[i])
    }

    /// The newest message.
    pub fn last(&self) -> Option<&UIMessage> {
        self.messages.last()
    }

    /// The next version, for a change at position `at` (every change goes through here, so
    /// [`changed_from`](Self::changed_from) sees them all).
    fn tick(&mut self, at: usize) -> u64 {
        self.clock += 1;
        while self.changes.last().is_some_and(|&(_, i)| i >= at) {
            self.changes.pop();
        }
        self.changes.push((self.clock, at));
        self.clock
    }

    /// The id a message of `role` whose server id `id` a message of another role holds is
    /// kept under (servers number each role on their own): `{id}:{role}`, else the first
    /// `{id}:{role}:{n}` that no message of another role holds. The same message met again
    /// (a replay, a hydration) gets the same id.
    pub fn role_id(&self, id: &str, role: Role) -> String {
        role_id_with(|c| self.get(c).map(|m| m.role), id, role)
    }

    /// The id a message of `role` with server id `id` is kept under: `id` itself, unless a
    /// message of another role holds it ([`role_id`](Self::role_id)).
    pub fn id_for(&self, id: &str, role: Role) -> Option<String> {
        self.get(id)
            .is_some_and(|m| m.role != role)
            .then(|| self.role_id(id, role))
    }

    /// Appends a message; a message whose id is already present replaces that one in place
    /// (ids are unique in a history), unless it has another role: then it is another message
    /// that shares the id, appended under [`role_id`](Self::role_id).
    pub fn push(&mut self, mut msg: UIMessage) -> usize {
        if let Some(id) = self.id_for(&msg.id, msg.role) {
            msg.id = id;
            return self.push(msg);
        }
        if let Some(i) = self.position(&msg.id) {
            let v = self.tick(i);
            self.messages[i] = msg;
            self.versions[i] = v;
            self.reshaped[i] = v;
            return i;
        }
        let v = self.tick(self.messages.len());
        self.index
            .insert(&self.messages, &msg.id, self.messages.len());
        self.messages.push(msg);
        self.versions.push(v);
        self.reshaped.push(v);
        self.messages.len() - 1
    }

    /// Mutable access to the message at `i`; counts as a change.
    pub fn at_mut(&mut self, i: usize) -> &mut UIMessage {
        let v = self.tick(i);
        self.versions[i] = v;
        self.reshaped[i] = v;
        &mut self.messages[i]
    }

    /// Mutable access to the message at `i` for appending to the text of its text or
    /// reasoning parts, and nothing else (the streamed deltas); counts as a change.
    pub fn append_mut(&mut self, i: usize) -> &mut UIMessage {
        let v = self.tick(i);
        self.versions[i] = v;
        &mut self.messages[i]
    }

    /// Mutable access by id; counts as a change.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut UIMessage> {
        let i = self.position(id)?;
        Some(self.at_mut(i))
    }

    /// Gives the message at `i` a new id (a server that renames a message it streams).
    pub fn rename(&mut self, i: usize, new_id: &str) {
        if self.messages[i].id == new_id {
            return;
        }
        if let Some(j) = self.position(new_id) {
            // Another message has that id: keep ids unique by leaving this one as it is.
            debug_assert_ne!(i, j);
            return;
        }
        self.index.remove(&self.messages, &self.messages[i].id);
        self.messages[i].id = new_id.to_string();
        self.index.insert(&self.messages, new_id, i);
        let v = self.tick(i);
        self.versions[i] = v;
        self.reshaped[i] = v;
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.messages.len() {
            return;
        }
        for m in &self.messages[len..] {
            self.index.remove(&self.messages, &m.id);
        }
        self.messages.truncate(len);
        self.versions.truncate(len);
        self.reshaped.truncate(len);
        self.tick(len);
    }

    /// Removes the message at `i`.
    pub fn remove(&mut self, i: usize) -> UIMessage {
        let msg = self.messages.remove(i);
        self.versions.remove(i);
        self.reshaped.remove(i);
        self.reindex();
        self.tick(i);
        msg
    }

    /// Replaces the whole history (hydration). Duplicate ids of one role keep their first
    /// occurrence; a message sharing an id with one of another role is kept ([`push`]).
    ///
    /// [`push`]: Self::push
    pub fn replace_all(&mut self, messages: Vec<UIMessage>) {
        self.versions.clear();
        self.reshaped.clear();
        self.index.clear();
        // The list is kept in place, the kept messages moved to its front: a second list of
        // 100,000 messages beside it was a fifth of a hydration's peak memory.
        let mut messages = messages;
        self.messages = Vec::new();
        let index = &mut self.index;
        index.reserve(messages.len());
        let mut kept = 0;
        for next in 0..messages.len() {
            let (held, rest) = messages.split_at_mut(next);
            let (held, m) = (&held[..kept], &mut rest[0]);
            let role_of = |id: &str| index.get(held, id).map(|i| held[i].role);
            if role_of(&m.id).is_some_and(|r| r != m.role) {
                m.id = role_id_with(role_of, &m.id, m.role);
            }
            if index.contains(held, &m.id) {
                continue;
            }
            index.insert(held, &m.id, kept);
            messages.swap(kept, next);
            kept += 1;
        }
        messages.truncate(kept);
        self.messages = messages;
        // One version each, as pushing them one by one gave, and one change from the start.
        let (first, len) = (self.tick(0), self.messages.len() as u64);
        self.clock = first + len.saturating_sub(1);
        self.versions = (first..first + len).collect();
        self.reshaped = self.versions.clone();
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (i, m) in self.messages.iter().enumerate() {
            self.index.insert(&self.messages, &m.id, i);
        }
    }
}

/// [`History::role_id`], with the role of the message holding an id from `role_of`.
fn role_id_with(role_of: impl Fn(&str) -> Option<Role>, id: &str, role: Role) -> String {
    let base = format!("{id}:{}", role.as_str());
    let mut candidate = base.clone();
    let mut n = 1;
    while role_of(&candidate).is_some_and(|r| r != role) {
        n += 1;
        candidate = format!("{base}:{n}");
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;

    #[test]
    fn versions_move_only_for_changed_messages() {
        let mut h = History::new();
        h.push(UIMessage::user_text("a", "1"));
        h.push(UIMessage::new("b", Role::Assistant));
        let (va, vb) = (h.version(0), h.version(1));
        h.get_mut("b")
            .unwrap()
            .parts
            .push(crate::protocol::Part::StepStart);
        assert_eq!(h.version(0), va);
        assert!(h.version(1) > vb);
        h.rename(1, "c");
        assert_eq!(h.position("c"), Some(1));
        assert!(h.get("b").is_none());
        h.truncate(1);
        assert_eq!(h.len(), 1);
        assert!(h.get("c").is_none());
    }

    /// An append moves the version but not `reshaped`; every other change moves both, and a
    /// message that shifts position keeps its own.
    #[test]
    fn reshaped_moves_for_every_change_but_an_append() {
        let mut h = History::new();
        h.push(UIMessage::user_text("a", "1"));
        h.push(UIMessage::new("b", Role::Assistant));
        let exported = h.version(1);
        h.append_mut(1);
        assert!(h.version(1) > exported && h.reshaped(1) <= exported);
        h.at_mut(1);
        assert!(h.reshaped(1) > exported);
        let b = (h.version(1), h.reshaped(1));
        h.remove(0);
        assert_eq!((h.version(0), h.reshaped(0)), b);
        h.rename(0, "c");
        assert!(h.reshaped(0) > b.1);
        h.replace_all(vec![UIMessage::user_text("d", "2")]);
        assert_eq!(h.reshaped(0), h.version(0));
    }

    /// `changed_from(since)` is never past the first position where the versions held at
    /// `since` and the current ones differ (a length change included), whatever happened in
    /// between; and a stream of changes to the last message points at the last message only.
    #[test]
    fn changed_from_never_passes_a_change() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut h = History::new();
        let mut held: Vec<(u64, Vec<u64>)> = Vec::new();
        let mut fresh = 0;
        for step in 0..4000 {
            let len = h.len();
            match next(9) {
                0 | 1 => {
                    fresh += 1;
                    h.push(UIMessage::user_text(format!("m{fresh}"), "x"));
                }
                2 if len > 0 => {
                    h.push(UIMessage::user_text(format!("m{}", next(fresh + 1)), "y"));
                }
                3 if len > 0 => {
                    h.append_mut(next(len));
                }
                4 if len > 0 => {
                    h.at_mut(next(len));
                }
                5 if len > 0 => {
                    h.remove(next(len));
                }
                6 if len > 0 => h.truncate(next(len + 1)),
                7 if len > 0 => {
                    fresh += 1;
                    h.rename(next(len), &format!("m{fresh}"));
                }
                8 if step % 50 == 0 => {
                    let keep = h.messages().iter().take(next(len + 1)).cloned().collect();
                    h.replace_all(keep);
                }
                _ => {}
            }
            if next(3) == 0 {
                held.push((h.revision(), h.versions().to_vec()));
            }
            for (since, old) in held.iter().rev().take(40) {
                let now = h.versions();
                let common = old.len().min(now.len());
                let first = (0..common).find(|&i| old[i] != now[i]).unwrap_or(common);
                let first = if old.len() == now.len() && first == common {
                    now.len()
                } else {
                    first
                };
                assert!(
                    h.changed_from(*since) <= first,
                    "step {step}: since {since}"
                );
            }
        }
        // Streaming into the last message: only it is to be compared.
        h.push(UIMessage::new("streamed", Role::Assistant));
        let (since, kept) = (h.revision(), h.changes.len());
        for _ in 0..100 {
            h.append_mut(h.len() - 1);
        }
        assert_eq!(h.changed_from(since), h.len() - 1);
        assert_eq!(h.changed_from(h.revision()), h.len());
        assert_eq!(h.changes.len(), kept, "a stream of changes keeps one entry");
    }
}

#[cfg(test)]
mod parser_tests {
    use super::*;
    use proptest::prelude::*;

    type Outcome = Result<(Vec<UIMessage>, Vec<String>), HistoryBodyError>;

    /// What the store did before the answer was read as it arrives: the whole body parsed into
    /// one `Value`, then converted.
    fn oracle(body: &[u8], max: usize) -> Outcome {
        let list = match crate::protocol::json::from_slice(body) {
            Ok(Value::Object(mut o)) => match o.remove("messages") {
                Some(Value::Array(list)) => list,
                _ => return Err(HistoryBodyError::NoMessagesList),
            },
            _ => return Err(HistoryBodyError::NotJson),
        };
        let (mut messages, mut skipped) = (Vec::new(), Vec::new());
        for m in list {
            match UIMessage::from_json(m) {
                Ok(m) => messages.push(m),
                Err(e) => skipped.push(e),
            }
        }
        if messages.len() > max {
            messages.drain(..messages.len() - max);
        }
        Ok((messages, skipped))
    }

    fn parse(pieces: &[&[u8]], max: usize) -> Outcome {
        let mut p = HistoryParser::new(max);
        for piece in pieces {
            p.push(piece);
        }
        p.finish_answer().map(|a| (a.messages, a.skipped))
    }

    /// Whole, at every split in two, and byte by byte: all as the oracle.
    fn check(body: &[u8], max: usize) {
        let expected = oracle(body, max);
        assert_eq!(
            parse(&[body], max),
            expected,
            "{}",
            String::from_utf8_lossy(body)
        );
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(parse(&[a, b], max), expected, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(parse(&bytes, max), expected, "byte by byte");
    }

    const M1: &str =
        r#"{"id":"a","role":"user","parts":[{"type":"text","text":"hi [\"x\"] {,} \\ \u00e9"}]}"#;
    const M2: &str = r#"{"id":"b","role":"assistant","metadata":{"messages":[1]},"parts":[{"type":"tool-x","toolCallId":"c","state":"input-available","input":{"a":[1,{"b":"]"}]}}]}"#;

    #[test]
    fn answers_mean_what_the_whole_document_means() {
        let cases = [
            format!(r#"{{"messages":[{M1},{M2}]}}"#),
            format!(
                " \n{{ \"messages\" :\t[ {M1} ,\r\n{M2} ] , \"x\" : [1,{{\"messages\":[2]}}] }} "
            ),
            r#"{"messages":[]}"#.into(),
            r#"{"messages":[ ]}"#.into(),
            r#"{"messages":[ 5, "x", null, {"id":1}, {"id":"x","role":"robot"}]}"#.into(),
            format!(r#"{{"messages":[{M1}],"messages":[{M2}]}}"#),
            format!(r#"{{"messages":[{M1}],"messages":null}}"#),
            format!(r#"{{"messages":null,"messages":[{M2}]}}"#),
            format!(r#"{{"\u006dessages":[{M1}]}}"#),
            format!(r#"{{"other":{{"messages":[{M1}]}}}}"#),
            format!(r#"{{"a":"messages","b":[{M1}]}}"#),
            format!(r#"[{{"messages":[{M1}]}}]"#),
            format!(r#"{{"messages":[{M1}]}} x"#),
            format!(r#"{{"messages":[{M1},]}}"#),
            format!(r#"{{"messages":[,{M1}]}}"#),
            format!(r#"{{"messages":[{M1} {M2}]}}"#),
            format!(r#"{{"messages":[{M1}}}]"#),
            format!(r#"{{"messages":[{M1}"#),
            format!(r#"{{"messages":[{M1}]"#),
            format!(r#"{{"messages":[{M1}]}}}}"#),
            format!(r#"{{"messages":[{M1}] "x":1}}"#),
            r#"{"messages":[{"id":"a","role":"user","parts":[{"type":"text","text":"\x"}]}]}"#
                .into(),
            r#"{"messages":{"0":1}}"#.into(),
            r#"{"messages":[1]"#.into(),
            String::new(),
            "null".into(),
            r#"{"messages":[[]],[]}"#.into(),
            r#"{"messages" "x":[]}"#.into(),
            r#"{"messages":"[]"}"#.into(),
            format!(
                r#"{{"messages":[{}]}}"#,
                (0..7)
                    .map(|i| format!(r#"{{"id":"m{i}","role":"user"}}"#))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ];
        for body in &cases {
            for max in [0, 1, 3, 100] {
                check(body.as_bytes(), max);
            }
        }
        let invalid_utf8 = [
            br#"{"messages":[{"id":"a"#.as_slice(),
            b"\xff",
            br#"","role":"user"}]}"#,
        ]
        .concat();
        check(&invalid_utf8, 10);
    }

    #[test]
    fn the_nesting_limit_is_the_whole_documents() {
        for depth in 120..132 {
            let inner = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let body = format!(r#"{{"messages":[{{"id":"a","role":"user","metadata":{inner}}}]}}"#);
            check(body.as_bytes(), 10);
            let body = format!(r#"{{"x":{inner},"messages":[]}}"#);
            check(body.as_bytes(), 10);
        }
    }

    proptest! {
        #[test]
        fn random_answers_mean_what_the_oracle_says(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"), Just(" "),
                    Just("\""), Just("\\"), Just("\"messages\""), Just("\"id\":\"a\""),
                    Just("\"role\":\"user\""), Just("\"parts\":[]"), Just("1"), Just("null"),
                    Just(M1), Just(M2),
                ],
                0..24,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..4),
        ) {
            let body = pieces.concat();
            let bytes = body.as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut split = Vec::new();
            let mut at = 0;
            for c in cuts {
                split.push(&bytes[at..c]);
                at = c;
            }
            split.push(&bytes[at..]);
            prop_assert_eq!(parse(&split, 3), oracle(bytes, 3));
            let doc = format!(r#"{{"messages":[{body}]}}"#);
            prop_assert_eq!(parse(&[doc.as_bytes()], 3), oracle(doc.as_bytes(), 3));
        }
    }
}

#[cfg(all(test, feature = "pi"))]
mod state_tests {
    use crate::protocol::pi_native::{parse_state, read_state};
    use proptest::prelude::*;

    /// What the store did before a state was read message by message: the whole body parsed
    /// into one `Value`, then read.
    fn oracle(body: &[u8]) -> Result<crate::protocol::pi_native::StateDoc, String> {
        crate::protocol::json::from_slice(body)
            .map_err(|e| e.to_string())
            .and_then(parse_state)
    }

    const U: &str = r#"{"id":"u","role":"user","clientNonce":"n","parts":[{"type":"text","id":"u:text:0","text":"hi [\"messages\"] {,}"}]}"#;
    const A: &str = r#"{"id":"a","role":"assistant","status":"streaming","parts":[{"type":"text","id":"a:text:0","text":"x"},{"type":"tool-call","id":"c","toolName":"ls","input":{"p":[1,{"q":"]"}]},"state":"output-available","output":{"content":[1],"details":{"d":1}}}]}"#;
    const V: &str = r#""protocolVersion":1,"seq":3"#;

    #[test]
    fn a_state_means_what_the_whole_document_means() {
        let cases = [
            format!(
                r#"{{"ref":{{}},"seq":3,"state":{{{V},"status":"streaming","messages":[{U},{A}],"queue":{{"followUps":[{{"id":"q"}}]}}}}}}"#
            ),
            format!(r#"{{{V},"messages":[{U},{A}]}}"#),
            format!(r#"{{"messages":[{U}],"state":{{{V},"messages":[{A}]}}}}"#),
            format!(r#"{{"state":{{{V},"messages":[{A}]}},"messages":[{U}]}}"#),
            format!(r#"{{"state":{{{V},"messages":[{A}]}},"state":{{{V}}}}}"#),
            format!(r#"{{"state":{{{V},"messages":[{A}]}},"state":{{{V},"messages":[{U}]}}}}"#),
            format!(r#"{{"state":{{{V},"messages":[{A}],"messages":null}}}}"#),
            format!(r#"{{"state":[{U}],{V},"messages":[{A}]}}"#),
            format!(r#"{{"state":{{{V},"x":{{"messages":[{A}]}},"messages":[5,null,{U}]}}}}"#),
            format!(r#"{{"ref":{{"messages":[{A}]}},"state":{{{V},"\u006dessages":[{U}]}}}}"#),
            format!(r#"{{"state":{{"protocolVersion":2,"messages":[{U}]}}}}"#),
            format!(r#"{{"state":{{"messages":[{U}]}}}}"#),
            format!(r#"{{"seq":9,"state":{{"protocolVersion":1,"messages":[{U}]}}}}"#),
            format!(r#"[{{{V},"messages":[{U}]}}]"#),
            format!(r#"{{"state":{{{V},"messages":[{U},]}}}}"#),
            format!(r#"{{"state":{{{V},"messages":[{U}]}}"#),
            format!(r#"{{"state":{{{V},"messages":[]}}}} x"#),
            format!(r#"{{"state":{{{V},"messages":[ ]}}}}"#),
            String::new(),
        ];
        for body in &cases {
            assert_eq!(
                read_state(body.as_bytes()),
                oracle(body.as_bytes()),
                "{body}"
            );
        }
    }

    proptest! {
        #[test]
        fn random_states_mean_what_the_oracle_says(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"), Just(" "),
                    Just("\""), Just("\"messages\""), Just("\"state\""), Just(V),
                    Just("\"id\":\"a\""), Just("\"role\":\"user\""), Just("\"parts\":[]"),
                    Just("1"), Just("null"), Just(U), Just(A),
                ],
                0..24,
            ),
        ) {
            let body = pieces.concat();
            prop_assert_eq!(read_state(body.as_bytes()), oracle(body.as_bytes()));
            let doc = format!(r#"{{"state":{{{V},"messages":[{body}]}}}}"#);
            prop_assert_eq!(read_state(doc.as_bytes()), oracle(doc.as_bytes()));
        }
    }
}
