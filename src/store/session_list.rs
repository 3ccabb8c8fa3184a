//! SPEC §11 in the store: the session list's actions, requests and answers. The list itself
//! is [`crate::machines::session_list::SessionList`]; this file makes its requests and feeds it the
//! answers. Its requests are not generation-guarded: a rename or delete answered after a
//! switch still applies to the session it named.

use super::*;
#[cfg(feature = "pi")]
use crate::machines::native_link::commands;
use crate::machines::session_list::{
    derived_title, parse_item, parse_page, Change, Held, PageAsk, SessionItem, Shown,
};

impl ChatStore {
    // ----- getters -------------------------------------------------------------------------

    /// `sessions.items`: the session list as shown (SPEC §11).
    pub fn session_items(&self) -> Vec<SessionItem> {
        self.sessions.items(self.session_view())
    }

    /// [`session_items`](Self::session_items) as runs of the server's pages shown as listed
    /// ([`sessions_listed`](Self::sessions_listed)) and items shown otherwise: what it costs
    /// grows with the sessions the store holds and the changes on their way, not with the list.
    pub fn session_view(&self) -> Vec<Shown> {
        let mut held: Vec<&str> = self.parked.iter().map(|(id, _)| id.as_str()).collect();
        held.push(&self.session.id);
        self.sessions
            .view(&self.session.id, held, |id| self.held(id))
    }

    /// The sessions a walk of the server's pages listed (`archived` or not), and the number
    /// that moves whenever they change other than by a page added at their end.
    pub fn sessions_listed(&self, archived: bool) -> (&[SessionItem], u64) {
        let list = &self.sessions;
        (list.listed_items(archived), list.generation(archived))
    }

    /// The last refresh of a walk's first page past one page
    /// ([`SessionList::refreshed`](crate::SessionList::refreshed)).
    pub fn sessions_refreshed(&self, archived: bool) -> Option<(u64, usize, usize)> {
        self.sessions.refreshed(archived)
    }

    /// `sessions.available`: false once the server answered the list route with 404.
    pub fn sessions_available(&self) -> bool {
        self.sessions.available
    }

    /// `sessions.loaded` (`archived: false`) and `sessions.archivedLoaded`: a page came.
    pub fn sessions_loaded(&self, archived: bool) -> bool {
        self.sessions.loaded(archived)
    }

    /// `sessions.loading`: a page request is on its way.
    pub fn sessions_loading(&self) -> bool {
        self.sessions.loading()
    }

    /// `sessions.hasMore` (`archived: false`) and `sessions.archivedHasMore`.
    pub fn sessions_have_more(&self, archived: bool) -> bool {
        self.sessions.has_more(archived)
    }

    /// `sessions.error`: the last failed list request's error, until one succeeds.
    pub fn sessions_error(&self) -> Option<&ChatError> {
        self.sessions.error.as_ref()
    }

    /// Changes whenever [`session_items`](Self::session_items) may give something else: the
    /// list's own changes, the open session, its status and its first user message (a title).
    pub fn sessions_key(&self) -> (u64, &str, bool, Option<(usize, u64)>, usize) {
        let history = self.session.conversation.history();
        let first = history.messages().iter().position(|m| m.role == Role::User);
        (
            self.sessions.revision(),
            &self.session.id,
            self.status().is_busy(),
            first.map(|i| (i, history.version(i))),
            self.parked.len(),
        )
    }

    fn session_state(&self, id: &str) -> Option<&Session> {
        match id == self.session.id {
            true => Some(&self.session),
            false => self.parked.get(id),
        }
    }

    fn held(&self, id: &str) -> Held {
        let Some(s) = self.session_state(id) else {
            return Held::default();
        };
        let messages = s.conversation.history().messages();
        let first = messages.iter().find(|m| m.role == Role::User);
        Held {
            title: first.and_then(|m| derived_title(&m.text())),
            running: (id == self.session.id).then(|| self.status().is_busy()),
            has_content: !messages.is_empty() || !s.queue.items().is_empty(),
        }
    }

    // ----- actions -------------------------------------------------------------------------

    /// `loadSessions({archived})`: asks for the first page again (after the page on its way,
    /// if one is). False when the server has no list.
    pub fn load_sessions(&mut self, archived: bool, now_ms: u64) -> bool {
        self.ask_page(archived, false, now_ms)
    }

    /// `loadMoreSessions({archived})`: asks for the next page. False when there is none or a
    /// page request is on its way (one at a time).
    pub fn load_more_sessions(&mut self, archived: bool, now_ms: u64) -> bool {
        self.ask_page(archived, true, now_ms)
    }

    fn ask_page(&mut self, archived: bool, more: bool, now_ms: u64) -> bool {
        if self.outbox.disposed {
            return false;
        }
        // A server without an archive (pi-native, SPEC §14): no archived walk to load.
        if archived && !self.sessions_archivable() {
            return false;
        }
        let Some(ask) = self.sessions.next_page(archived, more) else {
            // A refresh asked while a page is on its way goes after it.
            return !more && self.sessions.available && self.sessions.loading();
        };
        self.request_page(ask, now_ms);
        true
    }

    fn request_page(&mut self, ask: PageAsk, now_ms: u64) {
        let archived = ask.archived;
        let mut path = self.opts.sessions_route();
        path.push('?');
        if let Some(c) = &ask.cursor {
            path.push_str(&format!("cursor={}&", encode(c)));
        }
        path.push_str(&format!("limit={}", self.opts.session_page_size));
        if self.sessions_archivable() {
            path.push_str(&format!("&archived={archived}"));
        }
        let id = self.request(RequestKind::SessionsGet, Method::Get, path, None, now_ms);
        self.sessions.page_started(id, ask);
        self.touch();
    }

    /// `newSession()`: switches to a fresh session (a v4 UUID, listed locally at the top until
    /// its first message reaches the server) and returns its id.
    pub fn new_session(&mut self, now_ms: u64) -> Option<String> {
        if self.outbox.disposed {
            return None;
        }
        let id = uuid_v4(self.rng.as_mut());
        self.open(&id, true, now_ms);
        Some(id)
    }

    /// A session this store has open, parked or opened.
    fn known(&self, id: &str) -> bool {
        self.session_state(id).is_some() || self.sessions.listed(id)
    }

    /// `renameSession(id, title)`: shown at once; a refusal puts the old title back. A session
    /// the server cannot know yet (nothing was sent in it) keeps the title here and sends it
    /// once the server lists it or a turn of it ended. The title is trimmed and cut at
    /// [`MAX_TITLE_CHARS`](crate::machines::session_list::MAX_TITLE_CHARS) characters. False for an
    /// empty title, a session the store does not know, or one being deleted.
    pub fn rename_session(&mut self, id: &str, title: &str, now_ms: u64) -> bool {
        let title = crate::machines::session_list::title_of(title);
        let known = self.known(id) && !self.sessions.deleting(id);
        let Some(title) = title.filter(|_| known && !self.outbox.disposed) else {
            return false;
        };
        if self.sessions.unsent(id, self.held(id).has_content) {
            self.sessions.title_later(id, title);
        } else {
            self.patch_title(id, title, now_ms);
        }
        self.touch();
        true
    }

    fn patch_title(&mut self, id: &str, title: String, now_ms: u64) {
        self.send_change(id, Change::Title(title), now_ms);
    }

    /// The request that asks the server for `change` of session `id`, shown at once.
    fn send_change(&mut self, id: &str, change: Change, now_ms: u64) {
        self.send_session_change(id, change, now_ms);
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
        let path = self.opts.session_route(id);
        let body = body.map(|b| to_string(&b));
        let req = self.request(kind, method, path, body, now_ms);
        self.sessions.edit(req, id, change);
    }

    /// pi-native's own routes (reference §3.10, §3.11): `POST …/rename {requestId, title}`,
    /// `DELETE …?requestId=R`. Each change is one command with its own `requestId`.
    #[cfg(feature = "pi")]
    pub(super) fn send_native_change(&mut self, id: &str, change: Change, now_ms: u64) {
        let request_id = uuid_v4(self.rng.as_mut());
        let base = self.opts.session_route(id);
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
            Change::Archived(_) => return, // refused by `archive_session`
        };
        let req = self.request(kind, method, path, body, now_ms);
        self.sessions.edit(req, id, change);
    }

    /// `archiveSession(id, archived)`: moved at once; a refusal moves it back. False for a
    /// session the server has not listed (it cannot archive what it does not have), and over
    /// pi-native, which has no archive.
    pub fn archive_session(&mut self, id: &str, archived: bool, now_ms: u64) -> bool {
        if self.outbox.disposed
            || !self.sessions_archivable()
            || !self.sessions.listed(id)
            || self.sessions.deleting(id)
        {
            return false;
        }
        self.send_change(id, Change::Archived(archived), now_ms);
        self.touch();
        true
    }

    /// `deleteSession(id)`: gone from the list at once (back where it was if the server
    /// refuses; a 404 is success). Deleting the open session switches to a new one first. A
    /// session nothing was sent in is only forgotten.
    pub fn delete_session(&mut self, id: &str, now_ms: u64) -> bool {
        if self.outbox.disposed || !self.known(id) || self.sessions.deleting(id) {
            return false;
        }
        let on_server = !self.sessions.unsent(id, self.held(id).has_content);
        if id == self.session.id {
            self.new_session(now_ms);
        }
        if !on_server {
            self.parked.remove(id);
            self.sessions.forget(id);
        } else {
            self.send_change(id, Change::Delete, now_ms);
        }
        self.touch();
        true
    }

    // ----- answers -------------------------------------------------------------------------

    /// A list request's answer: `status` 0 for a body over the limit, `None` for no answer.
    pub(super) fn on_session_answer(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        answer: Result<(u16, &[u8]), ChatError>,
        now_ms: u64,
    ) {
        if self.outbox.disposed {
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
        self.touch();
    }

    fn on_page(&mut self, id: RequestId, answer: Result<(u16, &[u8]), ChatError>, now_ms: u64) {
        let page = match answer {
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(e),
            Ok((_, body)) => parse_page(body).map(Some).map_err(ChatError::protocol),
        };
        match &page {
            Ok(Some(p)) if p.skipped > 0 => self.outbox.diagnostic(&format!(
                "{} session list entries without an id (or listed twice) skipped",
                p.skipped
            )),
            Err(e) => self
                .outbox
                .events
                .push_back(StoreEvent::Error { error: e.clone() }),
            _ => {}
        }
        let outcome = self.sessions.on_page(id, page);
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
            self.outbox
                .events
                .push_back(StoreEvent::Error { error: e.clone() });
        }
        let Some((session, change)) = self.sessions.on_edit(id, answer) else {
            return;
        };
        match change {
            // The server does not have the session yet: the title waits for it.
            Change::Title(title) if not_found && !self.sessions.listed(&session) => {
                self.sessions.title_later(&session, title);
                self.sessions.error = None;
            }
            Change::Delete if self.sessions.error.is_none() => match session == self.session.id {
                // Opened again while its delete was on its way: it is open, so it is listed
                // (locally: a message sent in it makes it anew on the server).
                true => self.sessions.opened(&session, false),
                false => {
                    self.parked.remove(&session);
                }
            },
            _ => {}
        }
    }

    /// A turn of the open session ended: the list shows the server's order and titles again
    /// (if it was loaded), and a title given before the server knew the session goes now.
    pub(super) fn sessions_after_turn(&mut self, now_ms: u64) {
        if self.outbox.disposed {
            return;
        }
        let id = self.session.id.clone();
        if let Some(title) = self.sessions.take_title(&id) {
            self.patch_title(&id, title, now_ms);
        }
        if self.sessions.loaded(false) {
            self.ask_page(false, false, now_ms);
        }
    }
}
