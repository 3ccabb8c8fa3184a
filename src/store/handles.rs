//! The store's API by sub-state: small handles that borrow the store for one call chain and
//! reach one part of it, as quinn-proto's `Connection::streams()` / `datagrams()` and str0m's
//! `Rtc::media(mid)` do. A read handle is `Copy` and what it returns lives as long as the
//! store's borrow (`let items = store.sessions().items();`); a `_mut` handle takes that part's
//! actions, time still injected (`store.sessions_mut().load(false, now_ms)`).
//!
//! Each handle's methods live with the state they read or change: [`SessionView`] in
//! `getters.rs` (and `answers.rs`), [`Composer`] in `getters.rs` and [`ComposerMut`] in
//! `mod.rs`, [`Sessions`] / [`SessionsMut`] in `session_list.rs`, [`FollowUpsMut`] in
//! `followups.rs`, [`Outputs`] and [`TurnMut`] in `mod.rs` and `turn.rs`, [`UseChat`] in
//! `actions.rs`.

use super::ChatStore;

/// The open session, read-only: its id, turn (`error`, `turnId`), history and its versions,
/// waiting follow-ups, calls waiting for the user, capabilities, tool catalog and losses. What
/// the snapshot shows of one session.
#[derive(Debug, Clone, Copy)]
pub struct SessionView<'a> {
    pub(super) store: &'a ChatStore,
}

/// The composer, read-only: its draft, its files, and what it may do now (SPEC §5).
#[derive(Debug, Clone, Copy)]
pub struct Composer<'a> {
    pub(super) store: &'a ChatStore,
}

/// The composer's draft, to change (`setDraft`, `setDraftFiles`).
#[derive(Debug)]
pub struct ComposerMut<'a> {
    pub(super) store: &'a mut ChatStore,
}

/// The session list (SPEC §11), read-only: what `snapshot.sessions` shows.
#[derive(Debug, Clone, Copy)]
pub struct Sessions<'a> {
    pub(super) store: &'a ChatStore,
}

/// The session list's actions (SPEC §11): load its pages, make, rename, archive and delete
/// sessions. Each request it makes is drained from [`ChatStore::poll_output`].
#[derive(Debug)]
pub struct SessionsMut<'a> {
    pub(super) store: &'a mut ChatStore,
}

/// The open session's follow-up queue, to change (SPEC §6): take a waiting bubble back, retry
/// one, raise its `clientSeq`. Read its items with [`SessionView::queued`].
#[derive(Debug)]
pub struct FollowUpsMut<'a> {
    pub(super) store: &'a mut ChatStore,
}

/// The outputs one kind at a time, for hosts and tests that want only the requests (or only
/// the events); [`ChatStore::poll_output`] gives them all in the order a host acts on them.
#[derive(Debug)]
pub struct Outputs<'a> {
    pub(super) store: &'a mut ChatStore,
}

/// The running turn's controls: stop it, attach to one the server runs, clear a failed one's
/// error. Read the turn with [`ChatStore::status`] and [`SessionView::error`].
#[derive(Debug)]
pub struct TurnMut<'a> {
    pub(super) store: &'a mut ChatStore,
}

/// The `useChat` actions of AI SDK mode on the history: regenerate, edit, replace the
/// messages, answer a client tool call or an approval, continue the conversation.
#[derive(Debug)]
pub struct UseChat<'a> {
    pub(super) store: &'a mut ChatStore,
}

impl ChatStore {
    /// The open session, read-only.
    pub fn session(&self) -> SessionView<'_> {
        SessionView { store: self }
    }

    /// The composer, read-only.
    pub fn composer(&self) -> Composer<'_> {
        Composer { store: self }
    }

    /// The composer's draft, to change.
    pub fn composer_mut(&mut self) -> ComposerMut<'_> {
        ComposerMut { store: self }
    }

    /// The session list, read-only.
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions { store: self }
    }

    /// The session list's actions.
    pub fn sessions_mut(&mut self) -> SessionsMut<'_> {
        SessionsMut { store: self }
    }

    /// The open session's follow-up queue, to change.
    pub fn follow_ups_mut(&mut self) -> FollowUpsMut<'_> {
        FollowUpsMut { store: self }
    }

    /// The outputs one kind at a time.
    pub fn outputs(&mut self) -> Outputs<'_> {
        Outputs { store: self }
    }

    /// The running turn's controls.
    pub fn turn_mut(&mut self) -> TurnMut<'_> {
        TurnMut { store: self }
    }

    /// The `useChat` actions of AI SDK mode.
    pub fn use_chat(&mut self) -> UseChat<'_> {
        UseChat { store: self }
    }
}
