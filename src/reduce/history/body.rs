//! Reading a history answer's body as it arrives: the messages list of `GET …/messages`
//! and of a pi-native `/state`, element by element, without holding the whole text.

use super::*;

/// Why a messages-route answer was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryBodyError {
    /// Not JSON, or JSON but not an object.
    NotJson,
    /// A JSON object without a `messages` array.
    NoMessagesList,
}

/// A messages-route answer, read whole ([`HistoryParser::finish_answer`]).
#[derive(Debug)]
pub struct HistoryAnswer {
    /// The canonical messages, oldest first.
    pub messages: Vec<UIMessage>,
    /// Why each message that could not be read was skipped.
    pub skipped: Vec<String>,
    /// What the answer says of a turn running on the server.
    pub running: RunningTurn,
    /// `tree` (AI SDK mode's branches, beside `messages`, the visible path): every message
    /// kept with its parent id, a parent before its children. `None` without a usable one;
    /// the items that cannot be read are left out.
    pub tree: Option<Vec<(Option<String>, UIMessage)>>,
}

/// `tree`: `[{parentId: string | null, message}]`, as assistant-ui's message repository.
fn tree_of(v: Option<&Value>, max: usize) -> Option<Vec<(Option<String>, UIMessage)>> {
    let items = v?.as_array()?;
    let read = |item: &Value| {
        let parent = match item.get("parentId") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => return None,
        };
        let message = UIMessage::from_json(item.get("message")?.clone()).ok()?;
        Some((parent, message))
    };
    Some(items.iter().take(max).filter_map(read).collect())
}

/// What a history answer says of a running turn: `activeTurn` (SPEC §12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunningTurn {
    /// No `activeTurn` key: the server does not say (the stream route is asked once).
    Unsaid,
    /// `activeTurn: null` (or not an object with a `turnId`): nothing runs.
    Nothing,
    /// `activeTurn: {turnId, cursor?}`: this turn runs; its stream is read from `cursor`
    /// (the whole turn without one).
    Turn {
        /// `turnId`: the server's id of the running turn.
        turn_id: String,
        /// `cursor`: where the history leaves off in the turn's stream (a number or an event
        /// id), if the server says.
        cursor: Option<String>,
    },
}

impl RunningTurn {
    fn of(v: Option<&Value>) -> RunningTurn {
        let Some(v) = v else {
            return RunningTurn::Unsaid;
        };
        match v.get("turnId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => RunningTurn::Turn {
                turn_id: id.to_string(),
                cursor: match v.get("cursor") {
                    Some(Value::Number(n)) => Some(n.to_string()),
                    Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                    _ => None,
                },
            },
            _ => RunningTurn::Nothing,
        }
    }
}

/// serde_json refuses a document nested this deep (its recursion limit of 128, counted from the
/// outermost bracket): a message that is deeper than that inside the answer is refused as well.
pub(super) const MAX_DEPTH: usize = 128;

/// Where a byte outside the messages list stands, to tell the `"messages": [` of the top-level
/// object (and, in a pi-native state, of its `state` object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    None,
    /// A string where a key may be ended: its range in the skeleton.
    String(usize, usize),
    /// … followed by a colon: which key it was.
    Colon(Name),
}

/// The keys the reader looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Name {
    Messages,
    State,
    Other,
}

/// How an element of the list is converted, as soon as its last byte is in: the message, and
/// beside it what the reader keeps of each part (a pi-native message's part ids; nothing for
/// the messages route's).
pub type ReadElement = fn(Value) -> Result<(UIMessage, Vec<Option<String>>), String>;

pub(super) fn ui_message(v: Value) -> Result<(UIMessage, Vec<Option<String>>), String> {
    UIMessage::from_json(v).map(|m| (m, Vec::new()))
}

/// A pi-native `/state` answer read as it arrives ([`HistoryParser::for_state`]): the
/// document with each message of its lists replaced by `0`, and the messages of the
/// top-level `messages` list and of `state.messages`, converted, each with its part ids.
#[cfg(feature = "pi")]
#[derive(Debug)]
pub struct StateLists {
    /// The document without the lists' elements.
    pub skeleton: Value,
    /// The top-level `messages` list (a bare snapshot's).
    pub top: Vec<(UIMessage, Vec<Option<String>>)>,
    /// `state.messages` (the `{ref, seq, state}` answer's).
    pub nested: Vec<(UIMessage, Vec<Option<String>>)>,
}

/// Reads a messages-route answer (`{"messages": [...]}`) as its bytes arrive, converting each
/// message ([`UIMessage::from_json`]) as soon as its last byte is in: neither the whole body
/// nor a JSON tree of the whole history is ever held, only the messages, the bytes of the one
/// being received, and whatever else the answer holds besides the list.
///
/// The answer means exactly what [`crate::parse_json`] of the whole body would: the
/// bytes outside the list's elements are kept (the *skeleton*, each element replaced by `0`)
/// and parsed at the end, so a document that is not valid JSON is refused whatever it holds,
/// and a duplicate `messages` key means its last value.
#[derive(Debug)]
pub struct HistoryParser {
    max_messages: usize,
    read: ReadElement,
    skeleton: Vec<u8>,
    /// The bytes of the element being received (inside the list).
    element: Vec<u8>,
    /// Bracket depth (the top-level object is 1, the list 2).
    depth: usize,
    in_string: bool,
    escaped: bool,
    in_list: bool,
    /// No element of the list has ended yet (`[]` is an empty list).
    first: bool,
    key: Key,
    /// Once `max_messages` are held, a ring: the next one replaces the oldest, at `oldest`.
    messages: Vec<UIMessage>,
    oldest: usize,
    skipped: Vec<String>,
    failed: bool,
    /// A pi-native state: `state.messages` is read too, into `nested`.
    state_doc: bool,
    /// The object that is the top-level `state` value is open (it is at depth 2).
    in_state: bool,
    /// The list being read is `state.messages`.
    list_nested: bool,
    /// The bracket depth of the list being read (2, or 3 for `state.messages`).
    list_depth: usize,
    nested: Vec<UIMessage>,
    /// In a state, the part ids of `messages` and of `nested`, by position.
    ids: [Vec<Vec<Option<String>>>; 2],
}

pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

impl HistoryParser {
    /// Keeps the newest `max_messages` messages.
    pub fn new(max_messages: usize) -> Self {
        HistoryParser::of(max_messages, ui_message, false)
    }

    /// A pi-native `/state` answer: both lists it may hold its messages in, every message,
    /// each read by `read` ([`finish_state`](Self::finish_state)).
    #[cfg(feature = "pi")]
    pub fn for_state(read: ReadElement) -> Self {
        HistoryParser::of(usize::MAX, read, true)
    }

    fn of(max_messages: usize, read: ReadElement, state_doc: bool) -> Self {
        HistoryParser {
            max_messages,
            read,
            skeleton: Vec::new(),
            element: Vec::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            in_list: false,
            first: false,
            key: Key::None,
            messages: Vec::new(),
            oldest: 0,
            skipped: Vec::new(),
            failed: false,
            state_doc,
            in_state: false,
            list_nested: false,
            list_depth: 2,
            nested: Vec::new(),
            ids: [Vec::new(), Vec::new()],
        }
    }

    /// The next bytes of the body (any split).
    pub fn push(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() && !self.failed {
            i = if self.in_list {
                self.scan_list(bytes, i)
            } else {
                self.scan_outside(bytes, i)
            };
        }
    }

    /// The whole answer (the newest `max_messages` messages, why each skipped one was skipped,
    /// what it says of a running turn: SPEC §12), or why the answer is not usable.
    pub fn finish_answer(self) -> Result<HistoryAnswer, HistoryBodyError> {
        if self.failed || self.in_list {
            return Err(HistoryBodyError::NotJson);
        }
        match crate::protocol::json::from_slice(&self.skeleton) {
            Ok(Value::Object(o)) => match o.get("messages") {
                Some(Value::Array(_)) => {
                    // Oldest first: the ring from `oldest` on, then what wrapped around (in
                    // place: a second list of a large history would double its peak).
                    let mut messages = self.messages;
                    messages.rotate_left(self.oldest);
                    Ok(HistoryAnswer {
                        messages,
                        skipped: self.skipped,
                        running: RunningTurn::of(o.get("activeTurn")),
                        tree: tree_of(o.get("tree"), self.max_messages),
                    })
                }
                _ => Err(HistoryBodyError::NoMessagesList),
            },
            _ => Err(HistoryBodyError::NotJson),
        }
    }

    /// The whole `/state` answer ([`for_state`](Self::for_state)); `None` when it is not JSON.
    #[cfg(feature = "pi")]
    pub fn finish_state(self) -> Option<StateLists> {
        if self.failed || self.in_list {
            return None;
        }
        let skeleton = crate::protocol::json::from_slice(&self.skeleton).ok()?;
        // Every message is kept (no ring): in order as they came.
        let [top_ids, nested_ids] = self.ids;
        Some(StateLists {
            skeleton,
            top: self.messages.into_iter().zip(top_ids).collect(),
            nested: self.nested.into_iter().zip(nested_ids).collect(),
        })
    }

    /// Where a key of the top-level object, or of the state's object, may stand.
    fn keyed(&self) -> bool {
        // `cfg!`: the AI SDK build has no pi-native state to read.
        self.depth == 1 || (cfg!(feature = "pi") && self.in_state && self.depth == 2)
    }

    fn fail(&mut self) {
        self.failed = true;
        self.nested = Vec::new();
        self.ids = [Vec::new(), Vec::new()];
        self.messages = Vec::new();
        self.skipped = Vec::new();
        self.element = Vec::new();
        self.skeleton = Vec::new();
    }

    /// Outside the list: every byte goes to the skeleton. Returns where it stopped (the end,
    /// or just after the `[` of the messages list).
    fn scan_outside(&mut self, bytes: &[u8], from: usize) -> usize {
        for (i, &b) in bytes.iter().enumerate().skip(from) {
            let at = self.skeleton.len();
            self.skeleton.push(b);
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if let (true, Key::String(start, _)) = (self.keyed(), self.key) {
                        self.key = Key::String(start, at + 1);
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.key = Key::String(at, at);
                }
                b':' if self.keyed() => {
                    self.key = match self.key {
                        Key::String(s, e) => Key::Colon(
                            match crate::protocol::json::from_slice(&self.skeleton[s..e]) {
                                Ok(k) if k == "messages" => Name::Messages,
                                Ok(k) if cfg!(feature = "pi") && k == "state" => Name::State,
                                _ => Name::Other,
                            },
                        ),
                        _ => Key::None,
                    };
                }
                b if is_ws(b) => {}
                b'[' if self.keyed() && self.key == Key::Colon(Name::Messages) => {
                    self.list_nested = self.depth == 2;
                    self.depth += 1;
                    self.list_depth = self.depth;
                    self.key = Key::None;
                    self.in_list = true;
                    self.first = true;
                    // A later `messages` key wins, as in a JSON object.
                    match self.list_nested {
                        true => self.nested.clear(),
                        false => self.messages.clear(),
                    }
                    self.ids[usize::from(self.list_nested)].clear();
                    self.oldest = 0;
                    self.skipped.clear();
                    return i + 1;
                }
                b'{' if cfg!(feature = "pi")
                    && self.state_doc
                    && self.depth == 1
                    && self.key == Key::Colon(Name::State) =>
                {
                    // A later `state` key wins: its list is read anew.
                    self.depth = 2;
                    self.key = Key::None;
                    self.in_state = true;
                    self.nested.clear();
                    self.ids[1].clear();
                }
                b'[' | b'{' => {
                    self.depth += 1;
                    self.key = Key::None;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.in_state &= self.depth >= 2;
                    self.key = Key::None;
                }
                _ => self.key = Key::None,
            }
        }
        bytes.len()
    }

    /// Inside the list: element bytes are gathered until the element ends. Returns where it
    /// stopped (the end, or just after the list's closing bracket).
    fn scan_list(&mut self, bytes: &[u8], from: usize) -> usize {
        let mut start = from;
        let mut i = from;
        while i < bytes.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Most of a history is text: skip to the next quote or backslash.
                match bytes[i..].iter().position(|&c| c == b'"' || c == b'\\') {
                    Some(k) => {
                        i += k;
                        if bytes[i] == b'\\' {
                            self.escaped = true;
                        } else {
                            self.in_string = false;
                        }
                        i += 1;
                    }
                    None => i = bytes.len(),
                }
                continue;
            }
            match bytes[i] {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth >= MAX_DEPTH {
                        self.fail();
                        return bytes.len();
                    }
                }
                b']' | b'}' if self.depth > self.list_depth => self.depth -= 1,
                c @ (b',' | b']' | b'}') if self.depth == self.list_depth => {
                    self.element.extend_from_slice(&bytes[start..i]);
                    let close = c != b',';
                    self.end_element(close);
                    if self.failed {
                        return bytes.len();
                    }
                    self.skeleton.push(c);
                    if close {
                        self.depth -= 1;
                        self.in_list = false;
                        return i + 1;
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        self.element.extend_from_slice(&bytes[start..]);
        bytes.len()
    }

    /// An element of the list ended (before a comma, or before the list's end).
    fn end_element(&mut self, close: bool) {
        let first = std::mem::replace(&mut self.first, false);
        if close && first && self.element.iter().all(|&b| is_ws(b)) {
            self.element.clear();
            return; // an empty list
        }
        let parsed = crate::protocol::json::from_slice(&self.element);
        self.element.clear();
        let Ok(value) = parsed else {
            return self.fail();
        };
        self.skeleton.push(b'0');
        match (self.read)(value) {
            Ok((m, ids)) if cfg!(feature = "pi") && self.list_nested => {
                self.nested.push(m);
                self.ids[1].push(ids);
            }
            Ok((m, ids)) if self.messages.len() < self.max_messages => {
                self.messages.push(m);
                if cfg!(feature = "pi") && self.state_doc {
                    self.ids[0].push(ids);
                }
            }
            Ok((m, _)) => {
                if let Some(slot) = self.messages.get_mut(self.oldest) {
                    *slot = m;
                    self.oldest = (self.oldest + 1) % self.max_messages;
                }
            }
            Err(e) => self.skipped.push(e),
        }
    }
}
