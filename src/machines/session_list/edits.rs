//! The user's changes (rename, archive, delete) as overlays until the server answers.

use super::*;

impl SessionList {
    /// A change made as `request`: shown at once.
    pub fn edit(&mut self, request: u64, session: &str, change: Change) {
        self.revision += 1;
        self.next_seq += 1;
        if let Change::Title(_) = change {
            // Superseded: the title held back for later is older than this one.
            drop_key(&mut self.titles, session);
        }
        self.edits.push(Edit {
            request,
            seq: self.next_seq,
            session: session.to_string(),
            change,
        });
    }

    /// The answer to the change `request`: taken (with the server's session object, if it
    /// sent one), or refused (the list shows what it showed before the change). Returns the
    /// session it named and the change.
    pub fn on_edit(
        &mut self,
        request: u64,
        answer: Result<Option<SessionItem>, ChatError>,
    ) -> Option<(String, Change)> {
        let k = self.edits.iter().position(|e| e.request == request)?;
        self.revision += 1;
        let Edit {
            session,
            change,
            seq,
            ..
        } = self.edits.remove(k);
        match answer {
            Err(e) => self.error = Some(e),
            Ok(server) => {
                self.error = None;
                if let Some(p) = &mut self.in_flight {
                    p.stale = true;
                }
                let kind = change.kind();
                let last = (self.applied.iter_mut()).find(|(s, k, _)| *s == session && *k == kind);
                let newest = match last {
                    Some((_, _, at)) if *at > seq => false,
                    Some((_, _, at)) => {
                        *at = seq;
                        true
                    }
                    None => {
                        self.applied.push((session.clone(), kind, seq));
                        true
                    }
                };
                if newest {
                    self.apply(&session, &change, server);
                }
            }
        }
        Some((session, change))
    }

    pub(super) fn apply(&mut self, id: &str, change: &Change, server: Option<SessionItem>) {
        match change {
            Change::Delete => {
                for w in &mut self.walks {
                    w.remove(id);
                }
                self.opened.retain(|o| o != id);
                self.seen.remove(id);
                self.applied.retain(|(s, _, _)| s != id);
                drop_key(&mut self.titles, id);
                drop_key(&mut self.named, id);
            }
            Change::Title(title) => {
                let title = (server.and_then(|s| s.title)).unwrap_or_else(|| title.clone());
                match self.walks.iter_mut().find_map(|w| {
                    let k = w.position(id)?;
                    w.generation += 1;
                    Some(&mut w.items[k])
                }) {
                    Some(item) => item.title = Some(title),
                    None => {
                        drop_key(&mut self.named, id);
                        self.named.push((id.to_string(), title));
                    }
                }
            }
            Change::Archived(archived) => {
                let Some(mut item) = self.walk_mut(!archived).remove(id) else {
                    return;
                };
                // The answer's fields where it gave them; the rest as listed.
                if let Some(s) = server {
                    item.title = s.title.or(item.title);
                    item.created_at = s.created_at.or(item.created_at);
                    item.updated_at = s.updated_at.or(item.updated_at);
                }
                item.archived = *archived;
                let walk = self.walk_mut(*archived);
                walk.remove(id);
                walk.insert(0, item);
            }
        }
    }
}
