//! The session list of SPEC §11 as a sans-IO model: the pages the server listed (two walks, the
//! unarchived sessions and the archived ones), the user's changes the server has not answered
//! yet, and the one page request in flight. The store (`store/session_list.rs`) makes the
//! requests and feeds their answers here.
//!
//! A change (rename, archive, delete) is an overlay on what the server listed: the list shows
//! it at once, an answer that takes it writes it into the walk, and a refusal drops the overlay,
//! so the list is exactly as it was. A page that lands meanwhile cannot undo a change either:
//! one asked before a change was taken is stale, and is asked again instead of merged. Of two
//! changes of one kind to one session, the one made last wins, whatever order the answers
//! come in.

use serde::Serialize;
use serde_json::Value;

use crate::protocol::ChatError;
use crate::util::hash::HashMap;

mod parse;
pub use parse::{derived_title, parse_item, parse_page, title_of, MAX_TITLE_CHARS};

mod view;

mod edits;

/// One session as the list shows it (`snapshot.sessions.items`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionItem {
    /// The session's id (what `switchSession` takes).
    pub id: String,
    /// The server's title, else the first line of the session's first user message when the
    /// store holds its history; absent when neither is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// As the server gave it (an ISO string or a number), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "string | number"))]
    pub created_at: Option<Value>,
    /// As the server gave it; the list is ordered by it, most recent first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "string | number"))]
    pub updated_at: Option<Value>,
    /// A turn runs in it (the open session's own status, else what the server said).
    pub running: bool,
    /// Archived (listed by `loadSessions({archived: true})`).
    pub archived: bool,
    /// Not on the server's list (yet): a new session before its first message reached it.
    pub local: bool,
}

/// One page of a list answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The sessions it listed, in its order (entries without an id left out).
    pub items: Vec<SessionItem>,
    /// The cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
    /// Entries left out: no id, or an id listed twice.
    pub skipped: usize,
}

/// A piece of the list as shown ([`SessionList::view`]); as JSON, `[archived, from, to]` or
/// the item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Shown {
    /// Items of a walk shown as listed ([`SessionList::listed_items`]): the walk (the
    /// archived one or not), and the positions `from..to` in it.
    Listed(bool, usize, usize),
    /// One item shown otherwise: a session opened here, or one that a change on its way or
    /// the store's own state alters.
    Own(SessionItem),
}

/// What the store holds of a session, for the list to show it.
#[derive(Debug, Clone, Default)]
pub struct Held {
    /// The first line of its first user message, if the store holds its history.
    pub title: Option<String>,
    /// Its own status says a turn runs (known for the open session only).
    pub running: Option<bool>,
    /// It has messages or waiting follow-ups here: listed even before the server lists it.
    pub has_content: bool,
}

/// A change the user made to a session of the list.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `renameSession`.
    Title(String),
    /// `archiveSession`.
    Archived(bool),
    /// `deleteSession`.
    Delete,
}

impl Change {
    /// Changes of one kind replace each other; of different kinds they add up.
    fn kind(&self) -> u8 {
        match self {
            Change::Title(_) => 0,
            Change::Archived(_) => 1,
            Change::Delete => 2,
        }
    }
}

#[derive(Debug, Clone)]
struct Edit {
    request: u64,
    /// The order the user made the changes in.
    seq: u64,
    session: String,
    change: Change,
}

/// One walk through the server's pages.
#[derive(Debug, Default)]
struct Walk {
    items: Vec<SessionItem>,
    /// The position of each of `items` by id: whether a session is listed, and where, is asked
    /// for every session of every page, and a list may hold 100,000.
    ids: HashMap<String, usize>,
    next: Option<String>,
    /// Pages loaded (0: never loaded).
    pages: u32,
    /// Moves whenever an item changes other than by a page added at the end: until it moves,
    /// what was exported of `items` is still theirs (a page is exported alone).
    generation: u64,
    /// The last time the first page came again past one page: the generation it made, the
    /// page's length (the items it did not list keep their order after it) and the walk's
    /// before. What a refresh after a turn changed, for an export to redo only that.
    refreshed: Option<(u64, usize, usize)>,
}

impl Walk {
    // One lookup's code, not one per caller.
    #[inline(never)]
    fn position(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }

    /// The positions from `from` on written again (items moved).
    fn reindex(&mut self, from: usize) {
        self.generation += 1;
        for (k, item) in self.items.iter().enumerate().skip(from) {
            if let Some(at) = self.ids.get_mut(&item.id) {
                *at = k;
            }
        }
    }

    fn remove(&mut self, id: &str) -> Option<SessionItem> {
        let k = self.ids.remove(id)?;
        let item = self.items.remove(k);
        self.reindex(k);
        Some(item)
    }

    /// Adds `item` at `at` (its id not listed yet).
    fn insert(&mut self, at: usize, item: SessionItem) {
        self.ids.insert(item.id.clone(), at);
        self.items.insert(at, item);
        if at + 1 < self.items.len() {
            self.reindex(at + 1);
        }
    }
}

/// The page request in flight.
#[derive(Debug, Clone, PartialEq)]
struct PageRequest {
    request: u64,
    ask: PageAsk,
    /// A change was taken since it was asked: its answer may not show it.
    stale: bool,
}

/// While the list shows a session other than the open one as running (the server said so:
/// the store does not follow a turn it does not show), its first page is asked again this
/// often, so the running flag goes when that turn ends.
pub const SESSION_WATCH_MS: u64 = 5_000;

/// What to ask for a page ([`SessionList::next_page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PageAsk {
    /// The archived walk.
    pub archived: bool,
    /// The cursor to send; `None` for the first page.
    pub cursor: Option<String>,
    /// The page's number in its walk (0: the first).
    pub page: u32,
}

/// What an answer to a page request did.
#[derive(Debug, Default, PartialEq)]
pub struct PageOutcome {
    /// The page was asked before a change was taken: ask for it again, not merged.
    pub again: Option<PageAsk>,
    /// A first page asked for while this page was on its way: ask for it now.
    pub then: Option<bool>,
    /// Titles given to sessions before the server knew them, for sessions this page listed:
    /// `PATCH` them now.
    pub titles: Vec<(String, String)>,
}

/// The session list (SPEC §11).
#[derive(Debug)]
pub struct SessionList {
    /// `false` once the list route answered its first page with 404: the server has no list.
    pub available: bool,
    /// The last failure of a list request, until one succeeds.
    pub error: Option<ChatError>,
    walks: [Walk; 2],
    in_flight: Option<PageRequest>,
    refresh_due: [bool; 2],
    /// When the first page is asked again to see a background session's turn end
    /// ([`SESSION_WATCH_MS`]).
    pub watch_at: Option<u64>,
    edits: Vec<Edit>,
    next_seq: u64,
    /// The `seq` of the change last written into the list, by session and kind.
    applied: Vec<(String, u8, u64)>,
    /// Titles given to sessions the server cannot know yet (sent once it can).
    titles: Vec<(String, String)>,
    /// Titles the server took for sessions no page lists yet.
    named: Vec<(String, String)>,
    /// Sessions opened here, most recent first: listed locally until the server lists them.
    opened: Vec<String>,
    /// Sessions `newSession` made: the server has them only once something is sent.
    made: Vec<String>,
    /// Sessions some page listed (the value unused): on the server, though maybe on a page
    /// not loaded now.
    seen: HashMap<String, usize>,
    revision: u64,
}

fn drop_key<T>(list: &mut Vec<(String, T)>, id: &str) -> Option<T> {
    let k = list.iter().position(|(t, _)| t == id)?;
    Some(list.remove(k).1)
}

fn value_of<'a, T>(list: &'a [(String, T)], id: &str) -> Option<&'a T> {
    list.iter().find(|(t, _)| t == id).map(|(_, v)| v)
}

impl SessionList {
    /// An empty list, before any page (the open session `current` listed locally).
    pub fn new(current: &str) -> Self {
        SessionList {
            available: true,
            error: None,
            walks: Default::default(),
            in_flight: None,
            refresh_due: [false; 2],
            watch_at: None,
            edits: Vec::new(),
            next_seq: 0,
            applied: Vec::new(),
            titles: Vec::new(),
            named: Vec::new(),
            opened: vec![current.to_string()],
            made: Vec::new(),
            seen: HashMap::default(),
            revision: 0,
        }
    }

    /// Changes whenever anything the list shows may have changed (the open session's own
    /// state aside).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    fn walk(&self, archived: bool) -> &Walk {
        &self.walks[usize::from(archived)]
    }

    fn walk_mut(&mut self, archived: bool) -> &mut Walk {
        &mut self.walks[usize::from(archived)]
    }

    /// The walk has loaded a page.
    pub fn loaded(&self, archived: bool) -> bool {
        self.walk(archived).pages > 0
    }

    /// The walk has a next page.
    pub fn has_more(&self, archived: bool) -> bool {
        self.loaded(archived) && self.walk(archived).next.is_some()
    }

    /// A page request is on its way.
    pub fn loading(&self) -> bool {
        self.in_flight.is_some()
    }

    /// A session was opened here (`made`: by `newSession`): listed locally, at the top, until
    /// the server lists it.
    pub fn opened(&mut self, id: &str, made: bool) {
        self.revision += 1;
        self.opened.retain(|o| o != id);
        self.opened.insert(0, id.to_string());
        if made {
            self.made.push(id.to_string());
        }
    }

    /// Whether a loaded page lists `id` (in either walk).
    pub fn listed(&self, id: &str) -> bool {
        self.walks.iter().any(|w| w.ids.contains_key(id))
    }

    /// Whether the server cannot have `id`: made here, never listed, and (`has_content`)
    /// nothing sent in it.
    pub fn unsent(&self, id: &str, has_content: bool) -> bool {
        !has_content && self.made.iter().any(|m| m == id) && !self.seen.contains_key(id)
    }

    /// The page to ask for: the first (`more: false`) or the next of the walk. `None` when
    /// there is none to ask, or one request is on its way (a first page is then asked after
    /// it: `refresh_due`, unless it is that walk's first load already).
    pub fn next_page(&mut self, archived: bool, more: bool) -> Option<PageAsk> {
        if !self.available {
            return None;
        }
        let walk = self.walk(archived);
        let ask = match more {
            false => PageAsk {
                archived,
                cursor: None,
                page: 0,
            },
            true => PageAsk {
                archived,
                cursor: Some(walk.next.clone().filter(|_| walk.pages > 0)?),
                page: walk.pages,
            },
        };
        if let Some(p) = &self.in_flight {
            let first_load = p.ask == ask && walk.pages == 0;
            if !more && !first_load {
                self.refresh_due[usize::from(archived)] = true;
            }
            return None;
        }
        Some(ask)
    }

    /// The page request `ask` was made as `request`.
    pub fn page_started(&mut self, request: u64, ask: PageAsk) {
        self.revision += 1;
        self.in_flight = Some(PageRequest {
            request,
            ask,
            stale: false,
        });
    }

    /// Whether `request` is the page request on its way.
    pub fn is_page(&self, request: u64) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|p| p.request == request)
    }

    /// The answer to the page request `request`: a page, `None` for a 404, or a failure (the
    /// list stays as it was).
    pub fn on_page(
        &mut self,
        request: u64,
        answer: Result<Option<Page>, ChatError>,
    ) -> PageOutcome {
        let mut outcome = PageOutcome::default();
        if !self.is_page(request) {
            return outcome;
        }
        let Some(req) = self.in_flight.take() else {
            return outcome;
        };
        self.revision += 1;
        match answer {
            // Only the first page says whether there is a list: a later page's 404 (a
            // cursor the server forgot) is the end of that walk.
            Ok(None) if req.ask.page == 0 => {
                self.available = false;
                self.refresh_due = [false; 2];
                return outcome;
            }
            Ok(None) => self.walk_mut(req.ask.archived).next = None,
            Err(e) => self.error = Some(e),
            Ok(Some(_)) if req.stale => {
                outcome.again = Some(req.ask);
                return outcome;
            }
            Ok(Some(page)) => {
                self.error = None;
                self.merge(&req.ask, page, &mut outcome.titles);
            }
        }
        let due = self.refresh_due.iter().position(|d| *d);
        if let Some(w) = due {
            self.refresh_due[w] = false;
            outcome.then = Some(w == 1);
        }
        outcome
    }

    fn merge(&mut self, ask: &PageAsk, page: Page, titles: &mut Vec<(String, String)>) {
        let Page {
            mut items,
            next_cursor,
            ..
        } = page;
        for item in &mut items {
            // The walk says what a session is: a server that leaves `archived` out of its
            // archived list means it all the same.
            item.archived = ask.archived;
            self.walk_mut(!ask.archived).remove(&item.id);
            if let Some(t) = drop_key(&mut self.titles, &item.id) {
                titles.push((item.id.clone(), t));
            }
            drop_key(&mut self.named, &item.id);
            self.seen.insert(item.id.clone(), 0);
        }
        let walk = self.walk_mut(ask.archived);
        if ask.page == 0 {
            // The first page again. Past one page, what the walk listed stays after it unless
            // this page lists it now: newer sessions pushed it down, and the walk's cursor
            // still leads on from the deepest page.
            let mut kept = items;
            let page = kept.len();
            walk.refreshed = None;
            if walk.pages > 1 {
                let before = walk.items.len();
                let mut fresh = vec![false; before];
                for k in kept.iter().filter_map(|k| walk.position(&k.id)) {
                    fresh[k] = true;
                }
                let old = std::mem::take(&mut walk.items).into_iter().zip(fresh);
                kept.extend(old.filter_map(|(i, fresh)| (!fresh).then_some(i)));
                walk.refreshed = Some((walk.generation + 1, page, before));
            } else {
                walk.next = next_cursor;
                walk.pages = 1;
                walk.ids.clear();
            }
            // What stays listed is what was, and this page.
            for (k, item) in kept.iter().enumerate() {
                match walk.ids.get_mut(&item.id) {
                    Some(at) => *at = k,
                    None => drop(walk.ids.insert(item.id.clone(), k)),
                }
            }
            walk.items = kept;
            walk.generation += 1;
        } else {
            for item in items {
                match walk.position(&item.id) {
                    // A server whose cursor is an offset lists a session again once newer
                    // ones pushed it down: it keeps its place.
                    Some(k) => {
                        walk.items[k] = item;
                        walk.generation += 1;
                    }
                    None => {
                        let end = walk.items.len();
                        walk.insert(end, item);
                    }
                }
            }
            walk.next = next_cursor;
            walk.pages = ask.page + 1;
        }
    }

    /// A title for a session the server cannot know yet (sent once it can).
    pub fn title_later(&mut self, id: &str, title: String) {
        self.revision += 1;
        drop_key(&mut self.titles, id);
        self.titles.push((id.to_string(), title));
    }

    /// The title waiting for `id` to reach the server, taken.
    pub fn take_title(&mut self, id: &str) -> Option<String> {
        let t = drop_key(&mut self.titles, id)?;
        self.revision += 1;
        Some(t)
    }

    /// The server named a session made here `new` (pi-native creates sessions and names
    /// them): it keeps its place and whatever waits for it, under its new id.
    pub fn rekey(&mut self, old: &str, new: &str) {
        self.revision += 1;
        let ids = self.opened.iter_mut().chain(self.made.iter_mut());
        let ids = ids.chain(self.titles.iter_mut().map(|(id, _)| id));
        let ids = ids.chain(self.edits.iter_mut().map(|e| &mut e.session));
        for id in ids.filter(|id| *id == old) {
            *id = new.to_string();
        }
    }

    /// The title given to `id` before the server knew it, if one waits.
    pub fn title_later_of(&self, id: &str) -> Option<&str> {
        value_of(&self.titles, id).map(String::as_str)
    }

    /// Forgets a session the server never had (a local one deleted).
    pub fn forget(&mut self, id: &str) {
        self.revision += 1;
        self.opened.retain(|o| o != id);
        self.made.retain(|o| o != id);
        drop_key(&mut self.titles, id);
    }

    /// The change on its way for `id` that `pick` takes, the latest first.
    fn overlay<T>(&self, id: &str, pick: impl Fn(&Change) -> Option<T>) -> Option<T> {
        (self.edits.iter().rev())
            .filter(|e| e.session == id)
            .find_map(|e| pick(&e.change))
    }

    /// Whether a delete of `id` is on its way.
    pub fn deleting(&self, id: &str) -> bool {
        self.overlay(id, |c| (*c == Change::Delete).then_some(()))
            .is_some()
    }

    fn title_overlay(&self, id: &str) -> Option<String> {
        self.overlay(id, |c| match c {
            Change::Title(t) => Some(t.clone()),
            _ => None,
        })
    }
}
