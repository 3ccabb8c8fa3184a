//! SPEC §11 in the store: the session list's actions, requests and answers. The list itself
//! is [`crate::machines::session_list::SessionList`]; this file makes its requests and feeds it the
//! answers. Its requests are not generation-guarded: a rename or delete answered after a
//! switch still applies to the session it named.

use super::*;
#[cfg(feature = "pi")]
use crate::machines::native_link::commands;
use crate::machines::session_list::{
    derived_title, parse_item, parse_page, Change, Held, PageAsk, SessionItem, Shown,
    SESSION_WATCH_MS,
};

impl<'a> Sessions<'a> {
    /// `sessions.items`: the session list as shown (SPEC §11).
    pub fn items(&self) -> Vec<SessionItem> {
        self.store.sessions.items(self.view())
    }

    /// [`items`](Self::items) as runs of the server's pages shown as listed
    /// ([`listed`](Self::listed)) and items shown otherwise: what it costs grows with the
    /// sessions the store holds and the changes on their way, not with the list.
    pub fn view(&self) -> Vec<Shown> {
        let s = self.store;
        let mut held: Vec<&str> = s.parked.iter().map(|(id, _)| id.as_str()).collect();
        held.push(&s.session.id);
        s.sessions.view(&s.session.id, held, |id| self.held(id))
    }

    /// The sessions a walk of the server's pages listed (`archived` or not), and the number
    /// that moves whenever they change other than by a page added at their end.
    pub fn listed(&self, archived: bool) -> (&'a [SessionItem], u64) {
        let list = &self.store.sessions;
        (list.listed_items(archived), list.generation(archived))
    }

    /// The last refresh of a walk's first page past one page
    /// ([`SessionList::refreshed`](crate::SessionList::refreshed)).
    pub fn refreshed(&self, archived: bool) -> Option<(u64, usize, usize)> {
        self.store.sessions.refreshed(archived)
    }

    /// `sessions.available`: false once the server answered the list route with 404.
    pub fn available(&self) -> bool {
        self.store.sessions.available
    }

    /// `sessions.loaded` (`archived: false`) and `sessions.archivedLoaded`: a page came.
    pub fn loaded(&self, archived: bool) -> bool {
        self.store.sessions.loaded(archived)
    }

    /// `sessions.loading`: a page request is on its way.
    pub fn loading(&self) -> bool {
        self.store.sessions.loading()
    }

    /// `sessions.hasMore` (`archived: false`) and `sessions.archivedHasMore`.
    pub fn has_more(&self, archived: bool) -> bool {
        self.store.sessions.has_more(archived)
    }

    /// `sessions.error`: the last failed list request's error, until one succeeds.
    pub fn error(&self) -> Option<&'a ChatError> {
        self.store.sessions.error.as_ref()
    }

    /// Changes whenever [`items`](Self::items) may give something else: the list's own
    /// changes, the open session, its status and its first user message (a title).
    pub fn key(&self) -> (u64, &'a str, bool, Option<(usize, u64)>, usize) {
        let s = self.store;
        let history = s.session.conversation.history();
        let first = history.messages().iter().position(|m| m.role == Role::User);
        (
            s.sessions.revision(),
            &s.session.id,
            s.status().is_busy(),
            first.map(|i| (i, history.version(i))),
            s.parked.len(),
        )
    }

    fn session_state(&self, id: &str) -> Option<&'a Session> {
        let s = self.store;
        match id == s.session.id {
            true => Some(&s.session),
            false => s.parked.get(id),
        }
    }

    /// What the list shows of a session this store holds (its title, whether it runs).
    fn held(&self, id: &str) -> Held {
        let Some(s) = self.session_state(id) else {
            return Held::default();
        };
        let messages = s.conversation.history().messages();
        let first = messages.iter().find(|m| m.role == Role::User);
        Held {
            title: first.and_then(|m| derived_title(&m.text())),
            running: (id == self.store.session.id).then(|| self.store.status().is_busy()),
            has_content: !messages.is_empty() || !s.queue.items().is_empty(),
        }
    }

    /// A session this store has open, parked or opened.
    fn known(&self, id: &str) -> bool {
        self.session_state(id).is_some() || self.store.sessions.listed(id)
    }
}

impl SessionsMut<'_> {
    /// `loadSessions({archived})`: asks for the first page again (after the page on its way,
    /// if one is). False when the server has no list.
    pub fn load(&mut self, archived: bool, now_ms: u64) -> bool {
        self.ask_page(archived, false, now_ms)
    }

    /// `loadMoreSessions({archived})`: asks for the next page. False when there is none or a
    /// page request is on its way (one at a time).
    pub fn load_more(&mut self, archived: bool, now_ms: u64) -> bool {
        self.ask_page(archived, true, now_ms)
    }

    fn ask_page(&mut self, archived: bool, more: bool, now_ms: u64) -> bool {
        let s = &mut *self.store;
        if s.outbox.disposed {
            return false;
        }
        // A server without an archive (pi-native, SPEC §14): no archived walk to load.
        if archived && !s.sessions().archivable() {
            return false;
        }
        let Some(ask) = s.sessions.next_page(archived, more) else {
            // A refresh asked while a page is on its way goes after it.
            return !more && s.sessions.available && s.sessions.loading();
        };
        self.request_page(ask, now_ms);
        true
    }

    fn request_page(&mut self, ask: PageAsk, now_ms: u64) {
        let s = &mut *self.store;
        let archived = ask.archived;
        let mut path = s.opts.sessions_route();
        path.push('?');
        if let Some(c) = &ask.cursor {
            path.push_str(&format!("cursor={}&", encode(c)));
        }
        path.push_str(&format!("limit={}", s.opts.session_page_size));
        if s.sessions().archivable() {
            path.push_str(&format!("&archived={archived}"));
        }
        let id = s.request(RequestKind::SessionsGet, Method::Get, path, None, now_ms);
        s.sessions.page_started(id, ask);
        s.revisions.touch();
    }

    /// `newSession()`: switches to a fresh session (a v4 UUID, listed locally at the top until
    /// its first message reaches the server) and returns its id.
    pub fn create(&mut self, now_ms: u64) -> Option<String> {
        let s = &mut *self.store;
        if s.outbox.disposed {
            return None;
        }
        let id = uuid_v4(s.rng.as_mut());
        s.open(&id, true, now_ms);
        Some(id)
    }

    /// `renameSession(id, title)`: shown at once; a refusal puts the old title back. A session
    /// the server cannot know yet (nothing was sent in it) keeps the title here and sends it
    /// once the server lists it or a turn of it ended. The title is trimmed and cut at
    /// [`MAX_TITLE_CHARS`](crate::machines::session_list::MAX_TITLE_CHARS) characters. False for an
    /// empty title, a session the store does not know, or one being deleted.
    pub fn rename(&mut self, id: &str, title: &str, now_ms: u64) -> bool {
        let title = crate::machines::session_list::title_of(title);
        let s = &mut *self.store;
        let known = s.sessions().known(id) && !s.sessions.deleting(id);
        let Some(title) = title.filter(|_| known && !s.outbox.disposed) else {
            return false;
        };
        let has_content = s.sessions().held(id).has_content;
        if s.sessions.unsent(id, has_content) {
            s.sessions.title_later(id, title);
        } else {
            self.patch_title(id, title, now_ms);
        }
        self.store.revisions.touch();
        true
    }

    fn patch_title(&mut self, id: &str, title: String, now_ms: u64) {
        self.send_change(id, Change::Title(title), now_ms);
    }

    /// `archiveSession(id, archived)`: moved at once; a refusal moves it back. False for a
    /// session the server has not listed (it cannot archive what it does not have), and over
    /// pi-native, which has no archive.
    pub fn archive(&mut self, id: &str, archived: bool, now_ms: u64) -> bool {
        let s = &*self.store;
        if s.outbox.disposed
            || !s.sessions().archivable()
            || !s.sessions.listed(id)
            || s.sessions.deleting(id)
        {
            return false;
        }
        self.send_change(id, Change::Archived(archived), now_ms);
        self.store.revisions.touch();
        true
    }

    /// `deleteSession(id)`: gone from the list at once (back where it was if the server
    /// refuses; a 404 is success). Deleting the open session switches to a new one first. A
    /// session nothing was sent in is only forgotten.
    pub fn delete(&mut self, id: &str, now_ms: u64) -> bool {
        let s = &*self.store;
        if s.outbox.disposed || !s.sessions().known(id) || s.sessions.deleting(id) {
            return false;
        }
        let on_server = !s.sessions.unsent(id, s.sessions().held(id).has_content);
        if id == s.session.id {
            self.create(now_ms);
        }
        if !on_server {
            self.store.parked.remove(id);
            self.store.sessions.forget(id);
        } else {
            self.send_change(id, Change::Delete, now_ms);
        }
        self.store.revisions.touch();
        true
    }

    fn on_page(&mut self, id: RequestId, answer: Result<(u16, &[u8]), ChatError>, now_ms: u64) {
        let page = match answer {
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(e),
            Ok((_, body)) => parse_page(body).map(Some).map_err(ChatError::protocol),
        };
        match &page {
            Ok(Some(p)) if p.skipped > 0 => self.store.outbox.diagnostic(&format!(
                "{} session list entries without an id (or listed twice) skipped",
                p.skipped
            )),
            Err(e) => self
                .store
                .outbox
                .events
                .push_back(StoreEvent::Error { error: e.clone() }),
            _ => {}
        }
        let outcome = self.store.sessions.on_page(id, page);
        self.watch(now_ms);
        for (session, title) in outcome.titles {
            self.patch_title(&session, title, now_ms);
        }
        if let Some(ask) = outcome.again {
            return self.request_page(ask, now_ms);
        }
        if let Some(archived) = outcome.then {
            self.ask_page(archived, false, now_ms);
        }
    }

    fn on_edit(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        answer: Result<(u16, &[u8]), ChatError>,
    ) {
        let answer = match answer {
            // Already gone is what a delete wants.
            Err(e) if kind == RequestKind::SessionDelete && e.status == Some(404) => Ok(None),
            Err(e) => Err(e),
            // `{session}`, or pi-native's bare summary.
            Ok((_, body)) => Ok(crate::protocol::json::from_slice(body)
                .ok()
                .and_then(|v| parse_item(v.get("session").unwrap_or(&v)))),
        };
        let not_found = matches!(&answer, Err(e) if e.status == Some(404));
        if let Err(e) = &answer {
            self.store
                .outbox
                .events
                .push_back(StoreEvent::Error { error: e.clone() });
        }
        let Some((session, change)) = self.store.sessions.on_edit(id, answer) else {
            return;
        };
        match change {
            // The server does not have the session yet: the title waits for it.
            Change::Title(title) if not_found && !self.store.sessions.listed(&session) => {
                self.store.sessions.title_later(&session, title);
                self.store.sessions.error = None;
            }
            Change::Delete if self.store.sessions.error.is_none() => {
                match session == self.store.session.id {
                    // Opened again while its delete was on its way: it is open, so it is listed
                    // (locally: a message sent in it makes it anew on the server).
                    true => self.store.sessions.opened(&session, false),
                    false => {
                        self.store.parked.remove(&session);
                    }
                }
            }
            _ => {}
        }
    }

    /// `PATCH …/sessions/S` (a title, archived) or `DELETE …/sessions/S` (the SSE routes).
    pub(super) fn send_change_sse(&mut self, id: &str, change: Change, now_ms: u64) {
        let (kind, method, body) = match &change {
            Change::Title(title) => (
                RequestKind::SessionPatch,
                Method::Patch,
                Some(json!({ "title": title })),
            ),
            Change::Archived(archived) => (
                RequestKind::SessionPatch,
                Method::Patch,
                Some(json!({ "archived": archived })),
            ),
            Change::Delete => (RequestKind::SessionDelete, Method::Delete, None),
        };
        let path = self.store.opts.session_route(id);
        let body = body.map(|b| to_string(&b));
        let req = self.store.request(kind, method, path, body, now_ms);
        self.store.sessions.edit(req, id, change);
    }

    /// pi-native's own routes (reference §3.10, §3.11): `POST …/rename {requestId, title}`,
    /// `DELETE …?requestId=R`. Each change is one command with its own `requestId`.
    #[cfg(feature = "pi")]
    pub(super) fn send_native_change(&mut self, id: &str, change: Change, now_ms: u64) {
        let request_id = uuid_v4(self.store.rng.as_mut());
        let base = self.store.opts.session_route(id);
        let (kind, method, path, body) = match &change {
            Change::Title(title) => (
                RequestKind::SessionPatch,
                Method::Post,
                format!("{base}/rename"),
                Some(to_string(&commands::rename(&request_id, title))),
            ),
            Change::Delete => (
                RequestKind::SessionDelete,
                Method::Delete,
                format!("{base}?requestId={request_id}"),
                None,
            ),
            Change::Archived(_) => return, // refused by `SessionsMut::archive`
        };
        let req = self.store.request(kind, method, path, body, now_ms);
        self.store.sessions.edit(req, id, change);
    }

    /// A list request's answer: `status` 0 for a body over the limit, `None` for no answer.
    pub(super) fn on_answer(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        answer: Result<(u16, &[u8]), ChatError>,
        now_ms: u64,
    ) {
        if self.store.outbox.disposed {
            return;
        }
        let answer = answer.and_then(|(status, body)| match status {
            200..=299 => Ok((status, body)),
            _ => Err(refusal(status, body, "session list answer")),
        });
        match kind {
            RequestKind::SessionsGet => self.on_page(id, answer, now_ms),
            _ => self.on_edit(id, kind, answer),
        }
        self.store.revisions.touch();
    }

    /// A page came: while a session other than the open one is listed as
    /// running, the first page is asked again in [`SESSION_WATCH_MS`] (SPEC §11 extension:
    /// a background turn's running flag goes when it ends).
    fn watch(&mut self, now_ms: u64) {
        let s = &mut *self.store;
        let open = s.session.id.as_str();
        let watched = (s.sessions.listed_items(false).iter()).any(|i| i.running && i.id != open);
        s.sessions.watch_at = watched.then_some(now_ms + SESSION_WATCH_MS);
    }

    /// The watch is due ([`watch`](Self::watch)): the first page again.
    pub(super) fn on_watch(&mut self, now_ms: u64) {
        if (self.store.sessions.watch_at).is_some_and(|at| at <= now_ms) {
            self.store.sessions.watch_at = None;
            self.ask_page(false, false, now_ms);
        }
    }

    /// A turn of the open session ended: the list shows the server's order and titles again
    /// (if it was loaded), and a title given before the server knew the session goes now.
    pub(super) fn after_turn(&mut self, now_ms: u64) {
        if self.store.outbox.disposed {
            return;
        }
        let id = self.store.session.id.clone();
        if let Some(title) = self.store.sessions.take_title(&id) {
            self.patch_title(&id, title, now_ms);
        }
        if self.store.sessions.loaded(false) {
            self.ask_page(false, false, now_ms);
        }
    }
}
