//! What the list shows: the walks with the overlays applied.

use super::*;

impl SessionList {
    /// The list as shown: the open session and the sessions opened here with content that the
    /// server has not listed, then the unarchived sessions, then the archived ones, each in the
    /// server's order, with the changes on their way applied. The open session is always
    /// there (its own delete on its way or not).
    ///
    /// Given as runs of a walk's items shown as listed, between the few items shown otherwise:
    /// those of a change on their way and those of the sessions the store holds (`held_ids`,
    /// which `held` tells about). A page read costs the page, not the list: a list may hold
    /// 100,000 sessions, read 20 at a time.
    pub fn view<'a>(
        &'a self,
        current: &str,
        mut held_ids: Vec<&'a str>,
        held: impl Fn(&str) -> Held,
    ) -> Vec<Shown> {
        let mut out = Vec::new();
        for id in &self.opened {
            let open = id == current;
            if self.listed(id) && !(open && self.deleting(id)) {
                continue;
            }
            let on_server = self.seen.contains_key(id);
            if !open && (self.deleting(id) || on_server) {
                continue;
            }
            let h = held(id);
            if !open && !h.has_content {
                continue;
            }
            let title = (self.title_overlay(id))
                .or_else(|| value_of(&self.named, id).cloned())
                .or_else(|| value_of(&self.titles, id).cloned())
                .or(h.title);
            out.push(Shown::Own(SessionItem {
                id: id.clone(),
                title,
                created_at: None,
                updated_at: None,
                running: h.running.unwrap_or(false),
                archived: false,
                local: !on_server,
            }));
        }
        let shown = |item: &SessionItem| {
            if self.deleting(&item.id) {
                return None;
            }
            let mut s = item.clone();
            if let Some(t) = self.title_overlay(&s.id) {
                s.title = Some(t);
            }
            if let Some(a) = self.overlay(&s.id, |c| match c {
                Change::Archived(a) => Some(*a),
                _ => None,
            }) {
                s.archived = a;
            }
            let h = held(&s.id);
            if s.title.is_none() {
                s.title = h.title;
            }
            if let Some(r) = h.running {
                s.running = r;
            }
            Some(s)
        };
        // Only these may be shown otherwise than listed.
        held_ids.extend(self.edits.iter().map(|e| e.session.as_str()));
        let special = held_ids;
        // Per walk: its runs, and its items a change on its way moves to the other walk.
        let [(active, moved_out), (archived, mut moved_in)] = [false, true].map(|archived| {
            let walk = self.walk(archived);
            let (mut runs, mut moved, mut from) = (Vec::new(), Vec::new(), 0);
            loop {
                // The next special one (they are few: no sort, and none of its code).
                let next = (special.iter().filter_map(|id| walk.position(id)))
                    .filter(|k| *k >= from)
                    .min();
                let k = next.unwrap_or(walk.items.len());
                if from < k {
                    runs.push(Shown::Listed(archived, from, k));
                }
                let Some(item) = next.and_then(|k| walk.items.get(k)) else {
                    break;
                };
                from = k + 1;
                match shown(item) {
                    Some(s) if s.archived == archived => runs.push(Shown::Own(s)),
                    Some(s) => moved.push(Shown::Own(s)),
                    None => {}
                }
            }
            (runs, moved)
        });
        // Moved by a change on its way: at the top of where it goes.
        out.append(&mut moved_in);
        out.extend(active);
        out.extend(moved_out);
        out.extend(archived);
        out
    }

    /// The items of a walk as listed (what [`Shown::Listed`] names).
    pub fn listed_items(&self, archived: bool) -> &[SessionItem] {
        &self.walk(archived).items
    }

    /// Moves whenever a walk's items change other than by a page added at their end.
    pub fn generation(&self, archived: bool) -> u64 {
        self.walk(archived).generation
    }

    /// The last refresh of a walk's first page past one page: the generation it made, the
    /// page's length (its first items now, which the walk's items it did not list follow in
    /// their order), and the walk's length before.
    pub fn refreshed(&self, archived: bool) -> Option<(u64, usize, usize)> {
        self.walk(archived).refreshed
    }

    /// The items `view` gives, one by one.
    pub fn items(&self, view: Vec<Shown>) -> Vec<SessionItem> {
        let mut out = Vec::new();
        for part in view {
            match part {
                Shown::Own(item) => out.push(item),
                Shown::Listed(archived, from, to) => {
                    out.extend_from_slice(&self.listed_items(archived)[from..to])
                }
            }
        }
        out
    }
}
