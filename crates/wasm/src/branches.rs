//! `snapshot.branches` (AI SDK mode's message tree): identity-stable like `messages`. The
//! shown items reuse `messages`' own objects, the kept ones are exported when the tree
//! changes, and an item keeps its frozen object while its parent and message are the same;
//! the whole value is the same object while nothing in it changed.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use agent_chat_store::shell_json::to_string;
use agent_chat_store::{BranchItem, ChatStore};

use super::js;

#[derive(Default)]
pub(crate) struct BranchesCache {
    /// The tree's revision and the session when `plan` was made.
    made: Option<(u64, String)>,
    /// The shown ids when `plan` was made.
    ids: Vec<String>,
    /// Per item: a shown message's position (`>= 0`), or `-1 - k` for kept message `k`.
    plan: Vec<i32>,
    parents: JsValue,
    kept: JsValue,
    head: JsValue,
    /// The `messages` array the value was built over.
    messages: JsValue,
    value: JsValue,
}

impl BranchesCache {
    /// `snapshot.branches` over this snapshot's `messages`, of which the positions before
    /// `first` did not change since the last call; `null` where the mode keeps no branches.
    pub(crate) fn get(&mut self, core: &ChatStore, messages: &JsValue, first: usize) -> JsValue {
        let session = core.session();
        let Some(revision) = session.branch_tree_revision() else {
            *self = BranchesCache::default();
            return JsValue::NULL;
        };
        let path = core.messages();
        let same_plan = self
            .made
            .as_ref()
            .is_some_and(|(r, id)| *r == revision && id == session.id())
            && self.ids.len() == path.len()
            && (path.iter().zip(&self.ids).skip(first)).all(|(m, id)| m.id == *id);
        if same_plan && !self.value.is_undefined() && self.messages == *messages {
            return self.value.clone();
        }
        if !same_plan {
            self.make_plan(core, revision);
        }
        self.messages = messages.clone();
        self.value = js::branches(
            &self.head,
            &self.plan,
            &self.parents,
            &self.kept,
            messages,
            &self.value,
        );
        self.value.clone()
    }

    fn make_plan(&mut self, core: &ChatStore, revision: u64) {
        let session = core.session();
        let path = core.messages();
        let Some(b) = session.branches() else { return };
        let (parents, kept) = (Array::new(), Array::new());
        self.plan.clear();
        let id = |p: Option<&str>| p.map_or(JsValue::NULL, JsValue::from_str);
        for item in &b.items {
            match *item {
                BranchItem::Shown(i) => {
                    self.plan.push(i as i32);
                    parents.push(&id(i.checked_sub(1).map(|p| path[p].id.as_str())));
                }
                BranchItem::Kept { parent, message } => {
                    self.plan.push(-1 - kept.length() as i32);
                    parents.push(&id(parent));
                    let json = to_string(&session.export_kept_message(message));
                    kept.push(&js::parse_frozen(&json));
                }
            }
        }
        self.head = id(b.head_id);
        self.parents = parents.into();
        self.kept = kept.into();
        self.ids = path.iter().map(|m| m.id.clone()).collect();
        self.made = Some((revision, session.id().to_string()));
    }
}
