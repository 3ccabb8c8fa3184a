//! AI SDK mode's branches: every message the session showed, kept as a tree, of which the
//! history ([`Conversation`]) is the visible path from the root to the head.
//!
//! The history stays the one list every reducer, body and `snapshot.messages` reads; the tree
//! only keeps what left it (an answer regenerated, a user message edited, a branch switched
//! away from) with its parent, and the order siblings were made in. A switch swaps the
//! history for another root-to-leaf path of the tree. Where the server owns the history (pi,
//! pi-native) there are no branches.

use super::wire::message_for_storage;
use super::*;
// One map type the store already has (each other entry type costs its own code in the wasm).
use crate::util::hash::HashMap;

/// The tree of the messages of one session in AI SDK mode, beside its visible path.
#[derive(Debug, Default)]
pub(super) struct MessageTree {
    /// Every message recorded so far, in the order first seen: siblings in the order they
    /// were made (a parent is always recorded before its children).
    nodes: Vec<Node>,
    /// Bumped on every change of the tree (not on changes of the visible path).
    revision: u64,
    /// A counter, not time: the last time each node was on the visible path.
    clock: u64,
}

#[derive(Debug)]
struct Node {
    id: String,
    parent: Option<String>,
    /// The message while it is off the visible path; `None` while the history shows it.
    kept: Option<UIMessage>,
    /// The clock when it was last on the visible path: a switch follows the newest child.
    chosen: u64,
}

/// Why `ChatStore::switch_branch` (`switchBranch` in JS) changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum BranchRefusal {
    /// The session's mode keeps no branches (pi, pi-native, a server that owns history).
    NoBranches,
    /// A turn runs: its stream writes into the visible path.
    Busy,
    /// No message of the session has that id.
    UnknownMessage,
}

impl BranchRefusal {
    /// Its name, as JS reads it (`switchBranch`'s result).
    pub fn as_str(self) -> &'static str {
        match self {
            BranchRefusal::NoBranches => "no-branches",
            BranchRefusal::Busy => "busy",
            BranchRefusal::UnknownMessage => "unknown-message",
        }
    }
}

/// One message of the tree as the snapshot lists it: shown (its position in the history,
/// whose previous message is its parent) or kept off the visible path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BranchItem<'a> {
    /// Shown, at this position of the history.
    Shown(usize),
    /// Off the visible path.
    Kept {
        /// Its parent's id (`None`: a first message).
        parent: Option<&'a str>,
        /// The message as it was when it left the history.
        message: &'a UIMessage,
    },
}

impl MessageTree {
    pub(super) fn revision(&self) -> u64 {
        self.revision
    }

    fn find(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The messages kept off the visible path (they count against `limits.maxMessages`).
    pub(super) fn kept_len(&self) -> usize {
        self.nodes.iter().filter(|n| n.kept.is_some()).count()
    }

    /// Records the visible path before it changes: each message with its parent, the ones from
    /// `keep` on (about to leave the history) kept as they are now.
    pub(super) fn record(&mut self, path: &[UIMessage], keep: usize) {
        self.clock += 1;
        self.revision += 1;
        for (i, m) in path.iter().enumerate() {
            let parent = i.checked_sub(1).map(|p| path[p].id.clone());
            let kept = (i >= keep).then(|| m.clone());
            match self.find(&m.id) {
                Some(k) => {
                    let n = &mut self.nodes[k];
                    n.parent = parent;
                    n.kept = kept;
                    n.chosen = self.clock;
                }
                None => self.nodes.push(Node {
                    id: m.id.clone(),
                    parent,
                    kept,
                    chosen: self.clock,
                }),
            }
        }
    }

    /// Forgets what hangs under `id` (an edit in place: the old answers answered another text).
    pub(super) fn drop_below(&mut self, id: &str) {
        // Rare (an edit in place, a trim), over a session's branches: a list is enough.
        let mut gone: Vec<String> = vec![id.to_string()];
        loop {
            let more: Vec<String> = (self.nodes.iter())
                .filter(|n| !gone.contains(&n.id))
                .filter(|n| n.parent.as_ref().is_some_and(|p| gone.contains(p)))
                .map(|n| n.id.clone())
                .collect();
            if more.is_empty() {
                break;
            }
            gone.extend(more);
        }
        gone.remove(0);
        if !gone.is_empty() {
            self.nodes.retain(|n| !gone.contains(&n.id));
            self.revision += 1;
        }
    }

    /// Forgets every branch (a history replaced as a whole).
    pub(super) fn clear(&mut self) {
        if !self.nodes.is_empty() {
            self.nodes.clear();
            self.revision += 1;
        }
    }

    /// The path a switch to `target` shows: from the root to the deepest descendant of
    /// `target` along the child last on the visible path (the newest made, if none was), as
    /// assistant-ui picks. `None` (nothing changed) for an id the tree and path lack.
    pub(super) fn switch(&mut self, path: &[UIMessage], target: &str) -> Option<Vec<UIMessage>> {
        if self.find(target).is_none() && !path.iter().any(|m| m.id == target) {
            return None;
        }
        self.record(path, 0);
        let shown = self.take_path(target);
        if shown.is_none() {
            // Shown again as they were: nothing changed.
            self.record(path, path.len());
        }
        shown
    }

    /// Takes the path through `target` out of the kept messages ([`switch`](Self::switch)).
    fn take_path(&mut self, target: &str) -> Option<Vec<UIMessage>> {
        let mut leaf = self.find(target)?;
        loop {
            let id = &self.nodes[leaf].id;
            let next = (self.nodes.iter().enumerate())
                .filter(|(_, n)| n.parent.as_ref() == Some(id) && n.kept.is_some())
                .max_by_key(|(k, n)| (n.chosen, *k))
                .map(|(k, _)| k);
            match next {
                Some(k) => leaf = k,
                None => break,
            }
        }
        let mut chain = vec![leaf];
        while let Some(p) = self.nodes[*chain.last()?].parent.as_deref() {
            let k = self.find(p)?;
            if chain.contains(&k) {
                return None;
            }
            chain.push(k);
        }
        if chain.iter().any(|&k| self.nodes[k].kept.is_none()) {
            return None;
        }
        self.clock += 1;
        let clock = self.clock;
        let shown = (chain.iter().rev())
            .filter_map(|&k| {
                let n = &mut self.nodes[k];
                n.chosen = clock;
                n.kept.take()
            })
            .collect();
        Some(shown)
    }

    /// The tree a history answer gave (`tree`, beside `messages`, the path shown): the
    /// messages of `path` are shown, the others kept; an item whose parent is not listed
    /// before it is left out.
    pub(super) fn load(&mut self, path: &[UIMessage], items: Vec<(Option<String>, UIMessage)>) {
        self.nodes.clear();
        self.revision += 1;
        self.clock += 1;
        let shown: HashMap<&str, usize> = (path.iter().enumerate())
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        for (parent, message) in items {
            let known = parent.as_ref().is_none_or(|p| self.find(p).is_some());
            if !known || self.find(&message.id).is_some() {
                continue;
            }
            let on_path = shown.contains_key(message.id.as_str());
            self.nodes.push(Node {
                id: message.id.clone(),
                parent,
                chosen: if on_path { self.clock } else { 0 },
                kept: (!on_path).then_some(message),
            });
        }
    }

    /// The tree as `PUT …/messages` stores it: `[{parentId, message}]`, every message in the
    /// order of [`items`](Self::items), `data:` URLs past `max_url` left out.
    pub(super) fn for_storage(&self, path: &[UIMessage], max_url: usize) -> Value {
        let item = |parent: Option<&str>, m: &UIMessage| json!({"parentId": parent, "message": message_for_storage(m, max_url)});
        let items = self.items(path).into_iter().map(|it| match it {
            BranchItem::Shown(i) => item(i.checked_sub(1).map(|p| path[p].id.as_str()), &path[i]),
            BranchItem::Kept { parent, message } => item(parent, message),
        });
        Value::Array(items.collect())
    }

    /// Drops the oldest kept branches (each with what hangs under it) until at most `budget`
    /// messages are kept.
    pub(super) fn trim(&mut self, budget: usize) {
        while self.kept_len() > budget {
            let Some(k) = self.nodes.iter().position(|n| n.kept.is_some()) else {
                return;
            };
            let id = self.nodes[k].id.clone();
            self.drop_below(&id);
            self.nodes.retain(|n| n.id != id);
            self.revision += 1;
        }
    }

    /// Every message of the tree, a parent before its children, siblings in the order they
    /// were made; the shown ones by their position in `path`.
    pub(super) fn items<'a>(&'a self, path: &'a [UIMessage]) -> Vec<BranchItem<'a>> {
        let at: HashMap<&str, usize> = (path.iter().enumerate())
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        let parent_of = |i: usize| i.checked_sub(1).map(|p| path[p].id.as_str());
        let mut listed: HashMap<&str, usize> = HashMap::default();
        let mut items = Vec::with_capacity(self.nodes.len().max(path.len()));
        for n in &self.nodes {
            let parent = n.parent.as_deref();
            if !parent.is_none_or(|p| listed.contains_key(p)) {
                continue;
            }
            match (&n.kept, at.get(n.id.as_str())) {
                (Some(message), None) => items.push(BranchItem::Kept { parent, message }),
                (None, Some(&i)) if parent_of(i) == parent => items.push(BranchItem::Shown(i)),
                _ => continue,
            }
            listed.insert(&n.id, 0);
        }
        for (i, m) in path.iter().enumerate() {
            if !listed.contains_key(m.id.as_str()) {
                items.push(BranchItem::Shown(i));
                listed.insert(&m.id, 0);
            }
        }
        items
    }
}

/// `snapshot.branches`: the tree of a session with branches, and its head (the last message
/// shown, which the next send continues).
#[derive(Debug)]
pub struct Branches<'a> {
    /// The last message shown (`None`: nothing shown).
    pub head_id: Option<&'a str>,
    /// Every message of the tree, a parent before its children, siblings in the order made.
    pub items: Vec<BranchItem<'a>>,
    /// Changes when the tree does (not when only the shown messages do).
    pub revision: u64,
}

impl ChatStore {
    /// The session's mode keeps branches: AI SDK mode, where this client owns the history.
    pub(super) fn branches_on(&self) -> bool {
        !self.opts.native() && self.capabilities().ai_sdk_owns_history
    }

    /// The history is about to keep only its first `keep` messages: the rest stays as a
    /// branch, within `limits.maxMessages` (shown and kept together; the oldest kept branches
    /// go first).
    pub(super) fn keep_branches(&mut self, keep: usize) {
        let path = self.session.conversation.history().messages();
        if !self.branches_on() || keep >= path.len() {
            return;
        }
        let budget = self.opts.limits.max_messages.saturating_sub(keep);
        self.session.tree.record(path, keep);
        self.session.tree.trim(budget);
    }

    /// Shows the branch of `message_id`: the history becomes the path from the root through
    /// it to its deepest descendant along the child last shown (the newest made, if none
    /// was), and the next send or regenerate continues it. Refused, nothing changed, where
    /// the mode keeps no branches, while a turn runs, or for an id the session lacks.
    /// The server keeps the new path (and the tree beside it) for a reload.
    pub fn switch_branch(&mut self, message_id: &str, now_ms: u64) -> Result<(), BranchRefusal> {
        if !self.branches_on() {
            return Err(BranchRefusal::NoBranches);
        }
        if self.outbox.disposed || self.status().is_busy() {
            return Err(BranchRefusal::Busy);
        }
        let path = self.session.conversation.history().messages();
        let shown = (self.session.tree)
            .switch(path, message_id)
            .ok_or(BranchRefusal::UnknownMessage)?;
        self.session.conversation.hydrate(shown, false);
        self.session.history.json.clear();
        self.store_history(now_ms);
        self.revisions.touch();
        Ok(())
    }
}

impl<'a> SessionView<'a> {
    /// Changes when the tree of [`branches`](Self::branches) does; `None` where the mode
    /// keeps no branches. Cheap: a shell asks it before building the items.
    pub fn branch_tree_revision(&self) -> Option<u64> {
        let store = self.store;
        store.branches_on().then(|| store.session.tree.revision())
    }

    /// A message of [`branches`](Self::branches) kept off the path, as the UI gets it (as
    /// [`export_message`](Self::export_message) gives a shown one).
    pub fn export_kept_message(&self, m: &UIMessage) -> Value {
        let s = &self.store.session;
        tool_ui::export_message(m, &s.runtime.tool_ui, &s.runtime.tools)
    }

    /// `snapshot.branches`: `None` where the mode keeps none (pi, pi-native, a server that
    /// owns the history).
    pub fn branches(&self) -> Option<Branches<'a>> {
        let store = self.store;
        if !store.branches_on() {
            return None;
        }
        let path = store.session.conversation.history().messages();
        Some(Branches {
            head_id: path.last().map(|m| m.id.as_str()),
            items: store.session.tree.items(path),
            revision: store.session.tree.revision(),
        })
    }
}
