//! Identity-stable snapshots. The whole snapshot is the same frozen object until the store's
//! revision moves; then only what changed is converted to JS:
//!
//! - **messages** by version: a message's version changes exactly when it changes, and
//!   versions are never reused within a store, so an equal version at a position means the
//!   very message exported there before, whose frozen object is kept. The objects live in a
//!   master array only this cache holds (never frozen, never handed out); each snapshot's
//!   `messages` is a frozen copy of it, so one change costs one slot and one native copy.
//! - **parts** of a message that changes again (the streamed one): each part is compared with
//!   what was exported for it last time and keeps its frozen object when equal. A text or
//!   reasoning part whose text only grew gets a new object whose text is the previous JS
//!   string plus the new suffix (a rope in the JS engine), so a delta costs its own length,
//!   not the whole text's, to cross into JS. A tool part equal to the one exported last time,
//!   at the same `tool_ui_version` of the core (its resolved `ui` depends on more than the
//!   part), keeps its entry without being exported again. A tool part's `input` that changed
//!   (the value streamed input deltas build) keeps the JS objects of its unchanged arrays and
//!   objects: only what changed since the last snapshot crosses into JS.
//! - the tool catalog (which can be large) is re-exported only when it differs.

use std::borrow::Cow;

use js_sys::Array;
use serde::Serialize;
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;

use agent_chat_store::shell_json::{has_marker, to_string};
use agent_chat_store::shell_starts_with;
use agent_chat_store::SessionListPart;
use agent_chat_store::ToolCatalogEntry;
use agent_chat_store::{Capabilities, ChatError, FileAttachment, Part, ToolPart, UIMessage};
use agent_chat_store::{ChatStore, HeldAnswer, PendingCall};
use agent_chat_store::{ComposerState, Status};

use super::{js, js_error};

/// How many recently re-exported messages keep their parts' cache (one streams at a time; a
/// second covers a tool output landing on an older message meanwhile).
const PART_CACHES: usize = 2;

/// What a part was exported from, to tell whether its frozen object still shows it: its JSON
/// (with the resolved `ui` of a tool part) without the string that grows while the part
/// streams (a text part's `text`, a tool part's `rawInput`), and that string.
struct Exported {
    head: Value,
    long: Option<(&'static str, String)>,
}

struct PartEntry {
    from: Exported,
    js: JsValue,
    /// A tool part: the part it was exported from ([`ToolPart::without_input`]), and the core's
    /// `tool_ui_version` then. The same part at the same version exports the same head, so it
    /// is not exported again (a message streaming its 50th tool call re-exports that one only).
    tool: Option<(Part, u64)>,
    /// A tool part's `input` as exported, and its JS value.
    input: Option<(Value, JsValue)>,
    /// Another part that came through a snapshot unchanged: a copy of it, so that the next
    /// snapshots see it is the same with one compare instead of serialising its head again (a
    /// message of 1,000 parts cost 1.5 ms a notification). Kept only once a part stopped
    /// changing: the part being streamed into is never copied.
    plain: Option<Part>,
}

/// The parts' cache of the message last exported at `index`.
struct MessageParts {
    index: usize,
    /// The message's id and version when it was exported: while its texts only grew since
    /// ([`History::reshaped`](agent_chat_store::History::reshaped)), a text is re-exported as its old string plus its new
    /// end without comparing the old part of it.
    id: String,
    version: u64,
    /// The message's JSON without its parts, and its object.
    head: String,
    js: JsValue,
    parts: Vec<PartEntry>,
}

pub(crate) struct SnapshotCache {
    revision: u64,
    value: JsValue,
    /// The exported message objects by position: mutated in place, never handed out.
    master: JsValue,
    /// The frozen copy of `master` the last snapshot holds.
    messages: JsValue,
    /// The version each slot of `master` was exported at.
    versions: Vec<u64>,
    /// The history's revision when `versions` was brought up to date; `None` for another
    /// session's history.
    messages_revision: Option<u64>,
    /// Most recently used last.
    part_caches: Vec<MessageParts>,
    queued: JsValue,
    /// The queue's items as last exported, a plain JS array mutated in place (never handed
    /// out: each snapshot gets a frozen copy), and their versions.
    queued_master: JsValue,
    queued_keys: Vec<u64>,
    error: Option<ChatError>,
    error_js: JsValue,
    /// The session's losses as last exported, and their frozen array.
    losses: (Vec<agent_chat_store::Loss>, JsValue),
    /// The head's parts as last exported: each keeps its object while it is the same (the
    /// catalog can be large).
    session: (String, JsValue),
    capabilities: Option<Capabilities>,
    capabilities_js: JsValue,
    tools: Option<Vec<ToolCatalogEntry>>,
    tools_js: JsValue,
    composer: Option<(String, Vec<FileAttachment>, ComposerState)>,
    composer_js: JsValue,
    /// The session list as last exported (its JSON, error and walks' generations: the same
    /// text of the same walks is the same list), and its frozen object.
    sessions: Option<(String, Option<ChatError>, [u64; 2])>,
    sessions_js: JsValue,
    /// Per walk of the server's pages (unarchived, archived): its generation, and a plain
    /// array (never handed out) of the frozen objects of its items exported so far. A page
    /// added at the end is exported alone; the items are runs of these arrays.
    /// And the number exported.
    listed: [(u64, JsValue, usize); 2],
    /// The waiting calls as last exported (with their messages' positions), and their object.
    pending: (Vec<(usize, PendingCall)>, JsValue),
    /// The version of the held answers `pending.held` shows (exported again only when they
    /// change).
    held: u64,
    /// [`Sessions::key`](agent_chat_store::Sessions::key) when `sessions` was computed.
    sessions_key: Option<SessionsKey>,
    /// `snapshot.branches`, over `messages`.
    branches: super::branches::BranchesCache,
}

type SessionsKey = (u64, String, bool, Option<(usize, u64)>, usize);

/// `snapshot.sessions` (SPEC §11), without its error (a `ChatStoreError` set apart) and its
/// items (runs of the walks' exported items, joined in JS).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionsExport {
    available: bool,
    loaded: bool,
    loading: bool,
    has_more: bool,
    archived_loaded: bool,
    archived_has_more: bool,
    archivable: bool,
    /// Runs of the walks' exported items and items of their own, joined in JS.
    items: Vec<SessionListPart>,
    #[serde(skip)]
    error: Option<ChatError>,
}

impl SessionsExport {
    fn of(core: &ChatStore) -> Self {
        let list = core.sessions();
        SessionsExport {
            available: list.available(),
            loaded: list.loaded(false),
            loading: list.loading(),
            has_more: list.has_more(false),
            archived_loaded: list.loaded(true),
            archived_has_more: list.has_more(true),
            archivable: list.archivable(),
            items: list.view(),
            error: list.error().cloned(),
        }
    }
}

impl Default for SnapshotCache {
    fn default() -> Self {
        SnapshotCache {
            revision: 0,
            value: JsValue::UNDEFINED,
            master: Array::new().into(),
            messages: JsValue::UNDEFINED,
            versions: Vec::new(),
            messages_revision: None,
            part_caches: Vec::new(),
            queued: JsValue::UNDEFINED,
            queued_master: Array::new().into(),
            queued_keys: Vec::new(),
            error: None,
            error_js: JsValue::NULL,
            losses: (Vec::new(), JsValue::UNDEFINED),
            session: (String::new(), JsValue::from_str("")),
            capabilities: None,
            capabilities_js: JsValue::UNDEFINED,
            tools: None,
            tools_js: JsValue::UNDEFINED,
            composer: None,
            composer_js: JsValue::UNDEFINED,
            sessions: None,
            sessions_js: JsValue::UNDEFINED,
            listed: [(0, Array::new().into(), 0), (0, Array::new().into(), 0)],
            sessions_key: None,
            pending: (Vec::new(), JsValue::UNDEFINED),
            branches: Default::default(),
            held: 0,
        }
    }
}

/// A message's JSON without its parts (`parts` is an empty placeholder, so that the object
/// keeps the core export's key order once the parts are set).
fn message_head(msg: &UIMessage) -> String {
    let mut head = json!({ "id": msg.id, "role": msg.role, "parts": [] });
    if let (Some(md), Value::Object(o)) = (&msg.metadata, &mut head) {
        o.insert("metadata".into(), (**md).clone());
    }
    to_string(&head)
}

/// A part other than a tool part ([`export_tool`]): its JSON without its long string (left
/// empty, so the key keeps its place), and that string with its key. The text of a text part
/// is borrowed: it is copied only when it is exported.
fn split_part(part: &Part) -> (Value, Option<(&'static str, Cow<'_, str>)>) {
    let head = |p: Part| serde_json::to_value(p).unwrap_or_default();
    match part {
        Part::Text {
            text,
            state,
            provider_metadata,
            citations,
        } => {
            let p = Part::Text {
                text: String::new(),
                state: *state,
                provider_metadata: provider_metadata.clone(),
                citations: citations.clone(),
            };
            (head(p), Some(("text", Cow::Borrowed(text))))
        }
        Part::Reasoning {
            id,
            text,
            state,
            provider_metadata,
        } => {
            let p = Part::Reasoning {
                id: id.clone(),
                text: String::new(),
                state: *state,
                provider_metadata: provider_metadata.clone(),
            };
            (head(p), Some(("text", Cow::Borrowed(text))))
        }
        _ => (serde_json::to_value(part).unwrap_or_default(), None),
    }
}

/// Exports one part from its JSON without its long string (`head`), that string with its key
/// (`long`), and a tool part's `input` as it is to be exported (with whether it is the one
/// `prev` shows), reusing `prev` (what was exported at its position last time) where it still
/// shows the part (then `true`). `grew`: the part's text can only have grown since `prev`.
fn export_part(
    head: Value,
    long: Option<(&'static str, Cow<'_, str>)>,
    (input, same_input): (Option<(Value, JsValue)>, bool),
    prev: Option<PartEntry>,
    grew: bool,
) -> (PartEntry, bool) {
    let input_js = input
        .as_ref()
        .map_or(JsValue::UNDEFINED, |(_, js)| js.clone());
    let entry = |head, long, js| PartEntry {
        from: Exported { head, long },
        js,
        tool: None,
        input,
        plain: None,
    };
    if let Some(PartEntry {
        from: old,
        js: old_js,
        ..
    }) = prev
    {
        let same = same_input && head == old.head;
        match (&long, old.long) {
            (None, None) if same => return (entry(head, None, old_js), true),
            (Some((key, s)), Some((old_key, mut old_s)))
                if *key == old_key
                    // (`is_char_boundary` also says the text is not shorter: never a slice
                    // that could panic, whatever `grew` claims.)
                    && (grew && s.is_char_boundary(old_s.len())
                        || shell_starts_with(s.as_bytes(), old_s.as_bytes())) =>
            {
                if s.len() == old_s.len() && same {
                    return (entry(head, Some((key, old_s)), old_js), true);
                }
                // Only grew: the previous JS string plus the new suffix.
                let suffix = &s[old_s.len()..];
                let marked = has_marker(suffix);
                // The same head: JS copies the previous part's fields.
                let head_text = if same {
                    String::new()
                } else {
                    to_string(&head)
                };
                let js = js::string_part(&head_text, key, &old_js, suffix, &input_js, marked);
                old_s.push_str(suffix);
                return (entry(head, Some((key, old_s)), js), false);
            }
            _ => {}
        }
    }
    let (key, s) = long.as_ref().map_or(("", ""), |(key, s)| (*key, &**s));
    let marked = has_marker(s);
    let js = js::string_part(
        &to_string(&head),
        key,
        &JsValue::UNDEFINED,
        s,
        &input_js,
        marked,
    );
    let long = long.map(|(key, s)| (key, s.into_owned()));
    (entry(head, long, js), false)
}

/// Exports tool part `k` of message `i` (see [`export_part`]). Its head (the part without its
/// `input` and `rawInput`, with its resolved `ui`) is exported again only when it or the
/// core's `tool_ui_version` changed; its `input`, when it changed, crosses into JS by its
/// changed subtrees only ([`child`]): the streamed input of a call costs per snapshot one
/// comparison and what changed since the last one, not a copy and a parse of the whole value.
fn export_tool(
    core: &ChatStore,
    (i, k): (usize, usize),
    t: &ToolPart,
    ui_version: u64,
    mut prev: Option<PartEntry>,
) -> (PartEntry, bool) {
    let shown = Part::Tool(Box::new(t.without_input()));
    let kept = (prev.as_ref())
        .filter(|e| (e.tool.as_ref()).is_some_and(|(old, v)| *v == ui_version && *old == shown))
        .map(|e| e.from.head.clone());
    let head = kept.unwrap_or_else(|| core.session().export_part_as(i, k, &shown));
    let raw = match t.raw_input.as_deref() {
        Some(Value::String(s)) => Some(("rawInput", Cow::Borrowed(s.as_str()))),
        _ => None,
    };
    // None exported before counts as a null (which a part without `input` has another head
    // than one with).
    let input = match (&t.input, prev.as_mut().and_then(|e| e.input.take())) {
        (None, old) => (None, old.is_none()),
        (Some(v), old) => {
            let v = v.value();
            let (mut old, old_js) = old.unwrap_or((Value::Null, JsValue::NULL));
            match child(&mut old, &|| old_js.clone(), &v) {
                Child::Same => (Some((old, old_js)), true),
                Child::Set(js) => (Some((old, js)), false),
                Child::New => (Some((old, js::parse_frozen(&to_string(&*v)))), false),
            }
        }
    };
    let (mut entry, reused) = export_part(head, raw, input, prev, false);
    entry.tool = Some((shown, ui_version));
    (entry, reused)
}

/// How a value compares with what was exported for it.
enum Child {
    Same,
    /// A changed array or object, exported sharing what did not change.
    Set(JsValue),
    /// Anything else that changed: to export whole.
    New,
}

/// Brings `old` (exported as `old_js()`, called only when needed) to `new`, and tells how
/// it changed. A changed array or object (of the same kind as before) gets a JS value whose
/// unchanged entries keep their JS values: only what changed crosses into JS.
fn child(old: &mut Value, old_js: &dyn Fn() -> JsValue, new: &Value) -> Child {
    if *old == *new {
        return Child::Same;
    }
    if !matches!(
        (&*old, new),
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_))
    ) {
        *old = new.clone();
        return Child::New;
    }
    // A key holding a lone surrogate (a marker, protocol::json::MARKERS) cannot be named from
    // Rust (`JsValue::from_str` would give JS the marker itself): such an object goes whole,
    // through JSON, which writes the surrogate back.
    if new
        .as_object()
        .is_some_and(|o| o.keys().any(|k| has_marker(k)))
    {
        *old = new.clone();
        return Child::New;
    }
    let prev = old_js();
    let (keep, set) = (Array::new(), Array::new());
    // An entry of the JSON: a null for an unchanged array or object (taken from `prev`) and
    // for one set, else itself.
    let entry = |key: JsValue, c: Child, v: &Value| match c {
        Child::Same if v.is_array() || v.is_object() => {
            keep.push(&key);
            Value::Null
        }
        Child::Set(js) => {
            set.push(&key);
            set.push(&js);
            Value::Null
        }
        _ => v.clone(),
    };
    let get = |key: &JsValue| js_sys::Reflect::get(&prev, key).unwrap_or_default();
    // The leading unchanged elements of an array are `prev`'s, not in the JSON.
    let mut from = 0;
    let json = match (old, new) {
        (Value::Array(a), Value::Array(b)) => {
            let mut out = Vec::new();
            for (n, v) in b.iter().enumerate() {
                let key = JsValue::from(n as u32);
                let c = match a.get_mut(n) {
                    Some(o) => child(o, &|| get(&key), v),
                    None => {
                        a.push(v.clone());
                        Child::New
                    }
                };
                if out.is_empty() && matches!(c, Child::Same) {
                    from = n + 1;
                } else {
                    out.push(entry(key, c, v));
                }
            }
            if a.len() > b.len() {
                *a = b.clone();
            }
            Value::Array(out)
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut out = Map::new();
            let mut missing = a.len() != b.len();
            for (k, v) in b {
                let key = JsValue::from_str(k);
                let c = match a.get_mut(k) {
                    Some(o) => child(o, &|| get(&key), v),
                    None => {
                        missing = true;
                        Child::New
                    }
                };
                out.insert(k.clone(), entry(key, c, v));
            }
            if missing {
                *a = b.clone();
            }
            Value::Object(out)
        }
        _ => Value::Null, // not reached: the same kinds
    };
    Child::Set(js::share_value(
        &prev,
        from as u32,
        &to_string(&json),
        &keep,
        &set,
    ))
}

impl SnapshotCache {
    pub(crate) fn get(&mut self, core: &ChatStore) -> JsValue {
        if self.revision == core.revision() && !self.value.is_undefined() {
            return self.value.clone();
        }
        let session = core.session();
        if self.session.0 != session.id() {
            self.session = (session.id().to_string(), JsValue::from_str(session.id()));
            // The part caches name a message by position and id, which name it within one
            // session only: another session's message `w` at the same position is another
            // message, whose text did not grow from this one's (found by review).
            self.part_caches.clear();
            // Another session's held answers, whose version counts on its own.
            self.pending.1 = JsValue::UNDEFINED;
            // Another queue, whose versions count on their own.
            self.queued_keys.clear();
            self.queued_master = Array::new().into();
            self.queued = JsValue::UNDEFINED;
            self.messages_revision = None;
        }
        let first = self.update_messages(core);
        self.update_pending(core, first);
        let branches = self.branches.get(core, &self.messages, first);
        // Keyed by the item's version and what Run Now does for it (which the turn changes
        // without changing the item): unique, as the versions are.
        let items = session.queued_shown();
        let queued = items
            .iter()
            .map(|(q, run_now)| q.version << 2 | *run_now as u64);
        let (master, keys) = (&self.queued_master, &mut self.queued_keys);
        let json = |i: usize| to_string(&items[i].0.shown(items[i].1));
        if let Some(arr) = patch(master, keys, queued, json) {
            self.queued = arr;
        } else if self.queued.is_undefined() {
            self.queued = js::frozen_copy(master, 0);
        }
        if session.error() != self.error.as_ref() {
            self.error = session.error().cloned();
            self.error_js = self.error.as_ref().map(js_error).unwrap_or(JsValue::NULL);
        }
        if self.losses.1.is_undefined() || self.losses.0 != session.losses() {
            self.losses = (
                session.losses().to_vec(),
                js::parse_frozen(&to_string(&session.losses())),
            );
        }
        let caps = core.capabilities();
        if self.capabilities != Some(caps) {
            self.capabilities = Some(caps);
            self.capabilities_js = js::parse_frozen(&to_string(&json!(caps)));
        }
        if self.tools.as_deref() != Some(session.tools()) {
            self.tools = Some(session.tools().to_vec());
            self.tools_js = js::parse_frozen(&to_string(&json!(session.tools())));
        }
        let draft = core.composer();
        let composer = draft.state();
        let same_composer = self.composer.as_ref().is_some_and(|(d, f, c)| {
            d == draft.draft() && f.as_slice() == draft.files() && *c == composer
        });
        if !same_composer {
            let json = json!({
                "draft": draft.draft(),
                "files": draft.files(),
                "canSend": composer.can_send,
                "reason": composer.reason,
                "hint": composer.hint,
                "followUp": composer.follow_up,
                "canSendText": composer.can_send_text,
                "textHint": composer.text_hint,
            });
            self.composer_js = js::parse_frozen(&to_string(&json));
            let (draft, files) = (draft.draft().to_string(), draft.files().to_vec());
            self.composer = Some((draft, files, composer));
        }
        // The list is computed again only when something it shows may have changed, not on
        // every streamed word.
        let (rev, id, busy, first, parked) = core.sessions().key();
        let key = (rev, id.to_string(), busy, first, parked);
        if self.sessions_key.as_ref() != Some(&key) {
            self.sessions_key = Some(key);
            let sessions = SessionsExport::of(core);
            let SessionsExport { error, .. } = &sessions;
            let generations = [false, true].map(|a| core.sessions().listed(a).1);
            let now = (to_string(&sessions), error.clone(), generations);
            if self.sessions.as_ref() != Some(&now) {
                let error = now.1.as_ref().map_or(JsValue::NULL, js_error);
                self.update_listed(core);
                let [(_, active, _), (_, archived, _)] = &self.listed;
                self.sessions_js = js::sessions_snapshot(&now.0, &error, active, archived);
                self.sessions = Some(now);
            }
        }
        // The scalars without JSON: flags, and the status as its index in the JS list.
        let flags = u32::from(core.session().can_regenerate())
            | u32::from(core.session().capabilities_loaded()) << 1
            | u32::from(core.session().hydrated()) << 2
            | u32::from(core.status().is_busy()) << 3
            | u32::from(core.session().can_edit()) << 4
            | u32::from(core.session().awaiting_answer()) << 5
            | u32::from(core.session().stopped()) << 6
            | u32::from(core.session().can_retry()) << 7;
        let status = match core.status() {
            Status::Ready => 0,
            Status::Submitted => 1,
            Status::Streaming => 2,
            Status::Error => 3,
        };
        self.value = js::snapshot(
            flags,
            status,
            &self.session.1,
            &self.sessions_js,
            &self.pending.1,
            &core
                .session()
                .turn_id()
                .map_or(JsValue::NULL, |t| match has_marker(t) {
                    // A lone surrogate in it: through JSON, which writes it back.
                    true => js::parse(&to_string(&t)),
                    false => JsValue::from_str(t),
                }),
            &self.capabilities_js,
            &self.composer_js,
            &self.tools_js,
            &self.messages,
            &self.queued,
            &self.error_js,
            &self.losses.1,
            &branches,
        );
        self.revision = core.revision();
        self.value.clone()
    }

    /// Brings the walks' exported items up to date: a page added at the end exported alone, a
    /// walk otherwise changed exported anew.
    fn update_listed(&mut self, core: &ChatStore) {
        for (archived, (generation, master, len)) in [false, true].into_iter().zip(&mut self.listed)
        {
            let (items, now) = core.sessions().listed(archived);
            match core.sessions().refreshed(archived) {
                _ if *generation == now => {}
                // The first page came again (after a turn), and nothing else changed since the
                // last export: its items exported, the others kept.
                Some((at, page, before))
                    if at == now && *generation + 1 == now && *len == before =>
                {
                    *master = js::refront(master, &to_string(&&items[..page]));
                    *len = items.len();
                }
                _ => {
                    *master = Array::new().into();
                    *len = 0;
                }
            }
            *generation = now;
            if *len < items.len() {
                js::append_frozen(master, &to_string(&&items[*len..]));
                *len = items.len();
            }
        }
    }

    /// Re-exports the messages whose version moved; the others keep their objects. Returns
    /// the lowest position that may have changed.
    fn update_messages(&mut self, core: &ChatStore) -> usize {
        let versions = core.session().history().versions();
        let len = versions.len();
        let mut changed = self.messages.is_undefined() || self.versions.len() != len;
        // Where to compare from: the history knows the lowest position that changed since the
        // revision of the last export (usually the streamed message). Comparing all versions
        // cost 3.5 µs a notification at 10,000 messages. Another session's history (just
        // switched to) has other revisions: compare it all.
        let first = match self.messages_revision {
            Some(since) if !self.messages.is_undefined() => core
                .session()
                .history()
                .changed_from(since)
                .min(self.versions.len()),
            _ => 0,
        };
        self.messages_revision = Some(core.session().history().revision());
        for (i, &version) in versions.iter().enumerate().skip(first) {
            let exported = self.versions.get(i).copied();
            if exported == Some(version) {
                continue;
            }
            changed = true;
            // The streamed message (one of the last, changing again) goes part by part; the
            // others (a hydrated history, a session switched to) go whole.
            let streamed = exported.is_some() && i + PART_CACHES >= len;
            let obj = if streamed || self.part_caches.iter().any(|c| c.index == i) {
                self.export_by_parts(core, i)
            } else {
                js::parse_frozen(&to_string(&core.session().export_message(i)))
            };
            js::set_slot(&self.master, i as u32, &obj);
            match self.versions.get_mut(i) {
                Some(v) => *v = version,
                None => self.versions.push(version),
            }
        }
        if changed {
            self.versions.truncate(len);
            self.part_caches.retain(|c| c.index < len);
            self.messages = js::frozen_copy(&self.master, len as u32);
        }
        first
    }

    /// `snapshot.pending`: the calls that wait for the user, looked for in the messages from
    /// `first` on (the others' are kept), exported again only when they differ.
    fn update_pending(&mut self, core: &ChatStore, first: usize) {
        let mut calls: Vec<(usize, PendingCall)> = (self.pending.0.iter())
            .filter(|(i, _)| *i < first)
            .cloned()
            .collect();
        calls.extend(core.session().pending_from(first));
        let held = core.session().held_answers();
        let version = core.session().held_answers_version();
        if calls == self.pending.0 && version == self.held && !self.pending.1.is_undefined() {
            return;
        }
        let (approvals, questions): (Vec<_>, Vec<_>) = calls
            .iter()
            .map(|(_, c)| c)
            .partition(|c| c.approval_id.is_some());
        // Written straight to text: `json!` would build a `Value` through serde's value
        // serialiser, a second copy of the derive (1.8 KB of wasm).
        #[derive(Serialize)]
        struct Pending<'a> {
            approvals: Vec<&'a PendingCall>,
            questions: Vec<&'a PendingCall>,
            held: &'a [HeldAnswer],
        }
        let text = to_string(&Pending {
            approvals,
            questions,
            held,
        });
        self.pending = (calls, js::parse_frozen(&text));
        self.held = version;
    }

    fn export_by_parts(&mut self, core: &ChatStore, i: usize) -> JsValue {
        let msg = &core.messages()[i];
        let ui_version = core.session().tool_ui_version();
        let cached = self
            .part_caches
            .iter()
            .position(|c| c.index == i)
            .map(|k| self.part_caches.remove(k));
        let grew = cached
            .as_ref()
            .is_some_and(|c| c.id == msg.id && core.session().history().reshaped(i) <= c.version);
        let (old_head, old_js, old_parts) = match cached {
            Some(c) => (c.head, c.js, c.parts),
            None => (String::new(), JsValue::UNDEFINED, Vec::new()),
        };
        // Nothing visible changed (a version bump without a change): the same object.
        let mut same = old_parts.len() == msg.parts.len();
        let mut old_parts = old_parts.into_iter();
        let parts = Array::new_with_length(msg.parts.len() as u32);
        let mut entries = Vec::with_capacity(msg.parts.len());
        for (p, part) in msg.parts.iter().enumerate() {
            let prev = old_parts.next();
            let (entry, reused) = match part {
                Part::Tool(t) => export_tool(core, (i, p), t, ui_version, prev),
                _ => match prev {
                    Some(e) if e.plain.as_ref() == Some(part) => (e, true),
                    prev => {
                        let (head, long) = split_part(part);
                        let (mut e, reused) = export_part(head, long, (None, true), prev, grew);
                        if reused {
                            e.plain = Some(part.clone());
                        }
                        (e, reused)
                    }
                },
            };
            same &= reused;
            parts.set(p as u32, entry.js.clone());
            entries.push(entry);
        }
        let head = message_head(msg);
        let js = match (head == old_head && !old_js.is_undefined(), same) {
            (true, true) => old_js,
            // Only parts changed: JS copies the previous message's other fields.
            (true, false) => js::message("", &parts, &old_js),
            (false, _) => js::message(&head, &parts, &JsValue::UNDEFINED),
        };
        if self.part_caches.len() >= PART_CACHES {
            self.part_caches.remove(0);
        }
        self.part_caches.push(MessageParts {
            index: i,
            id: msg.id.clone(),
            version: core.session().history().version(i),
            head,
            js: js.clone(),
            parts: entries,
        });
        js
    }
}

/// Brings `master` (a plain array, with `keys` the versions of its entries) to the
/// items, and gives a frozen copy when anything changed. Items that left the front (consumed
/// follow-ups, in the server's order) are cut off first, so the rest keep their entries: each
/// notification costs what changed plus one native copy, not an export of every item.
fn patch(
    master: &JsValue,
    keys: &mut Vec<u64>,
    mut items: impl ExactSizeIterator<Item = u64> + Clone,
    json: impl Fn(usize) -> String,
) -> Option<JsValue> {
    let len = items.len();
    // Versions are unique within a queue (and the keys start afresh with each session): a
    // version compare says whether an entry is the same, without comparing ids.
    let gone = match items.clone().next() {
        Some(first) => keys.iter().position(|v| *v == first).unwrap_or(0),
        None => keys.len(),
    };
    let mut changed = gone > 0;
    if gone > 0 {
        js::drop_front(master, gone as u32);
        keys.drain(..gone);
    }
    for i in 0..len {
        let Some(version) = items.next() else { break };
        if keys.get(i) == Some(&version) {
            continue;
        }
        changed = true;
        js::set_slot(master, i as u32, &js::parse_frozen(&json(i)));
        match keys.get_mut(i) {
            Some(k) => *k = version,
            None => keys.push(version),
        }
    }
    if keys.len() > len {
        changed = true;
        keys.truncate(len);
    }
    changed.then(|| js::frozen_copy(master, len as u32))
}
