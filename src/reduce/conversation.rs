//! The conversation: the history, the two reducers that may write it, and the one rule of
//! which has authority over a chunk (SPEC §8). The store and the replay helpers both feed
//! chunks here, and every transition of the history happens here: the streamed message of
//! AI SDK mode, the pi projection, the hand-over between them, the pi turn's restart, the
//! user's tool outputs and approvals. What a chunk means beyond the history (the status, the
//! queue, `onData`) comes back as an [`Effect`].

use serde_json::Value;

use crate::codec::fast_chunk::Delta;
use crate::policy::tool_ui::{self, ToolUiUpdate};
use crate::protocol::chunk::{Chunk, DataChunk, PiEvent, UiChunk};
use crate::protocol::{Part, Role, ToolPart, ToolState, UIMessage};
#[cfg(feature = "pi")]
use crate::reduce::pi::{PiEffect, PiReducer};
use crate::reduce::ui_message::{ToolCall, UiEffect, UiMessageReducer, Violation};
use crate::reduce::History;
use crate::util::random::{uuid_v4, RandomSource};

mod tool_answers;

#[cfg(feature = "pi")]
mod pi_rows;
#[cfg(feature = "pi")]
use pi_rows::shape_pi_outputs;

mod ui_turn;

/// How many of the newest messages a `data-tool-ui` chunk looks through for its tool call.
const TOOL_UI_SEARCH: usize = 64;

/// Why a build without the `pi` feature fails a turn that switches to pi mode.
#[cfg(not(feature = "pi"))]
const NO_PI: &str = "data-pi-mode: the server streams a pi projection, and this build of \
    agent-chat-store has no pi reducer (use the full build)";

/// What a chunk means beyond the history, for the store (the replay helpers keep what they
/// report and drop the rest).
#[derive(Debug)]
pub enum Effect {
    /// `data-pi-mode`: the pi projection owns the history from here on.
    PiMode,
    /// `data-turn-start` named the turn (the reducers' restart is done).
    TurnStart(String),
    /// A write that ends `useChat`'s `submitted` (the status turns `streaming`).
    Streams,
    /// A data chunk for `onData` (`transient`: it is not in the history).
    Data {
        /// The chunk's name without `data-` (`status` for `data-status`).
        name: String,
        /// The chunk's `id`, if it had one.
        id: Option<String>,
        /// The chunk's `data`.
        data: Value,
        /// `transient`: the chunk is not stored in the history.
        transient: bool,
    },
    /// An `error` chunk: the server's report.
    ServerError(String),
    /// `useChat` stops reading at an `error` chunk: the turn's stream ends here.
    StreamStops,
    /// The turn's finish reason.
    Finish(Option<String>),
    /// A tool call for the client to run (`onToolCall`).
    ToolCall(ToolCall),
    /// The AI SDK reducer refused a chunk: the `ai` package stops processing there.
    Violation(String),
    /// A `data-tool-ui` update for a tool call.
    ToolUi(String, ToolUiUpdate),
    /// A user message the server committed (with a follow-up's nonce), a consumed follow-up.
    #[cfg(feature = "pi")]
    FollowUp(PiEffect),
    /// Something odd but survivable.
    Diagnostic(String),
    /// A chunk was not applied: of an unknown type (`true`), or naming nothing held.
    Lost(bool, String),
}

/// The turn as the store follows it, where the gate needs it.
#[derive(Clone, Copy, Default)]
pub struct TurnView<'a> {
    /// The server's id of the running turn: its `data-turn-start` again (a resume that
    /// replays from the start of the server's buffer) is not a new turn.
    pub running_id: Option<&'a str>,
    /// A turn of this client is on its way (its optimistic user message is shown).
    pub busy: bool,
}

/// How a chunk writes the streamed message in `useChat` ([`Conversation::reduce_streamed`]):
/// whether it puts the answer into `messages` (`places`), whether that write also updates the
/// status (`streams`), and whether it is a `reset-step`, which writes only when it removes parts.
#[derive(Clone, Copy)]
struct Writes {
    places: bool,
    streams: bool,
    reset: bool,
}

impl Writes {
    /// A delta or a data part: always a write, with the status.
    const ALWAYS: Writes = Writes {
        places: true,
        streams: true,
        reset: false,
    };

    /// As `ai` 7.0.173's stream processor calls `write()`: with the status update for every
    /// chunk that changes the message, but without it for a `start` naming the message (id or
    /// metadata). A step's start and end, `error`, `abort`, and a `finish` or
    /// `message-metadata` without metadata do not write; a `reset-step` writes (with the
    /// status) only when it removes parts.
    fn of(c: &UiChunk) -> Writes {
        let streams = match c {
            UiChunk::Start { .. }
            | UiChunk::StartStep
            | UiChunk::FinishStep
            | UiChunk::ResetStep
            | UiChunk::Error { .. }
            | UiChunk::Abort { .. } => false,
            UiChunk::Finish {
                message_metadata, ..
            }
            | UiChunk::MessageMetadata { message_metadata } => message_metadata.is_some(),
            UiChunk::Data(d) => !d.transient,
            _ => true,
        };
        let names = matches!(c, UiChunk::Start { message_id, message_metadata }
            if message_id.is_some() || message_metadata.is_some());
        Writes {
            places: streams || names,
            streams,
            reset: matches!(c, UiChunk::ResetStep),
        }
    }
}

/// The AI SDK reducer's hold on the message of the running turn.
#[derive(Debug, Default)]
struct UiTurn {
    reducer: UiMessageReducer,
    /// The streamed message's id in the history, once it has one.
    message_id: Option<String>,
    /// The message the turn streams into before its first write ([`Conversation::ui_placed`]):
    /// a new one, or a copy of the assistant message it continues.
    pending: Option<UIMessage>,
    /// [`Effect::Streams`] was said in this turn: once is enough (the status only leaves
    /// `submitted` once), and a text delta is cheaper without it.
    streamed: bool,
    /// An attach's replay: the streamed message starts empty (its `start` names the message
    /// it rebuilds), never as a copy of the last assistant message.
    fresh: bool,
    /// The id a new answer takes when its stream names none (a host's `generateId`).
    answer_id: Option<String>,
}

/// One session's history and the reducers with authority over it.
#[derive(Debug, Default)]
pub struct Conversation {
    history: History,
    #[cfg(feature = "pi")]
    pi: PiReducer,
    /// `data-pi-mode` was seen: the pi projection owns history whatever was fetched.
    pi_mode: bool,
    /// The capabilities say the server owns history (`aiSdkOwnsHistory: false`).
    server_owns_history: bool,
    ui: UiTurn,
    /// This turn's user message-start came while the AI SDK reducer had authority, so it was
    /// not applied. A later hand-off to the pi projection must then not let the next user
    /// message-start (a follow-up's) adopt the optimistic message.
    #[cfg_attr(not(feature = "pi"), allow(dead_code))]
    ignored_user_start: bool,
    /// The AI SDK reducer's effects, kept to reuse the allocation.
    ui_effects: Vec<UiEffect>,
    /// Attached to a turn whose whole stream is replayed (SPEC §12), and its first
    /// message-start not seen yet: it tells where the history's copy of the turn begins.
    #[cfg_attr(not(feature = "pi"), allow(dead_code))]
    attach_whole: bool,
}

impl Conversation {
    /// An empty conversation; `server_owns_history` as the capabilities say.
    pub fn new(server_owns_history: bool) -> Self {
        Conversation {
            server_owns_history,
            ..Conversation::default()
        }
    }

    /// The history the reducers write.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The pi projection has authority (pi mode, or a server that owns history). Never
    /// without the `pi` feature: the branches of the projection then compile away.
    pub fn pi_owns_history(&self) -> bool {
        cfg!(feature = "pi") && (self.pi_mode || self.server_owns_history)
    }

    /// `data-pi-mode` was seen.
    pub fn pi_mode(&self) -> bool {
        self.pi_mode
    }

    /// The capabilities changed. A turn that went ahead on the defaults (`busy`) is the
    /// projection's when the server owns history now.
    pub fn set_server_owns_history(&mut self, owns: bool, busy: bool) {
        let was = self.pi_owns_history();
        self.server_owns_history = owns;
        if !was && self.pi_owns_history() && busy {
            self.hand_history_to_pi(busy);
        }
    }

    // ----- the stream --------------------------------------------------------------------

    /// The one place a chunk meets the history: the authority gate of SPEC §8.
    #[cfg_attr(not(feature = "pi"), allow(unused_variables))]
    pub fn apply(
        &mut self,
        chunk: Chunk,
        turn: TurnView<'_>,
        rng: &mut dyn RandomSource,
        out: &mut Vec<Effect>,
    ) {
        if let Chunk::Data(d) = &chunk {
            if d.name == "tool-ui" {
                // Typed tool UI metadata for a call; the chunk then goes where any data chunk
                // goes (onData, and history in AI SDK mode).
                self.on_tool_ui(&d.data, out);
            }
        }
        let pi_owns = self.pi_owns_history();
        match chunk {
            #[cfg(feature = "pi")]
            Chunk::Pi(PiEvent::Mode { enabled }) => {
                if enabled && !self.pi_mode {
                    self.pi_mode = true;
                    self.hand_history_to_pi(turn.busy);
                    out.push(Effect::PiMode);
                }
            }
            // Without the pi reducer the turn cannot be shown as the server means it: it
            // fails here, as a stream this build cannot read, rather than show half of it.
            #[cfg(not(feature = "pi"))]
            Chunk::Pi(PiEvent::Mode { enabled: true }) => {
                out.push(Effect::Violation(NO_PI.to_string()));
            }
            Chunk::Pi(PiEvent::TurnStart { turn_id }) => {
                // In both modes. The turn-start of the turn already running (a resume that
                // replays from the start of the server's buffer) is not a new turn: resetting
                // the seq watermark would apply the replayed deltas a second time. The
                // projection restarts for any other turn than the one it follows.
                // A turn this client followed and left (a stop, then a send that met it still
                // winding down and attached) is told all the same: the projection knows what
                // of it was applied.
                #[cfg(feature = "pi")]
                if turn.running_id != Some(turn_id.as_str()) || self.pi.left_behind(&turn_id) {
                    let ev = PiEvent::TurnStart {
                        turn_id: turn_id.clone(),
                    };
                    self.pi.apply(&mut self.history, ev, &mut Vec::new());
                } else {
                    // The one it follows (named by the answer's head): it learns its id.
                    self.pi.name_turn(&turn_id);
                }
                out.push(Effect::TurnStart(turn_id));
            }
            #[cfg(feature = "pi")]
            Chunk::Pi(ev) if pi_owns => {
                self.match_replayed_start(&ev);
                let mut effects = Vec::new();
                self.pi.apply(&mut self.history, ev, &mut effects);
                out.extend(effects.into_iter().map(Effect::from));
            }
            // AI SDK mode: the pi projection is not the authority.
            Chunk::Pi(ev) => {
                if let PiEvent::MessageStart {
                    role: Role::User,
                    client_nonce: None,
                    ..
                } = ev
                {
                    self.ignored_user_start = true;
                }
            }
            Chunk::Ui(c) if pi_owns => match c {
                // pi mode: standard chunks duplicate what the projection says; only the
                // turn-level ones count.
                UiChunk::Error { error_text } => out.push(Effect::ServerError(error_text)),
                UiChunk::Finish { finish_reason, .. } => out.push(Effect::Finish(finish_reason)),
                _ => {}
            },
            Chunk::Ui(c) => self.on_ui_chunk(c, rng, out),
            Chunk::Data(d) if pi_owns => out.push(Effect::Data {
                name: d.name,
                id: d.id,
                data: d.data,
                transient: d.transient,
            }),
            Chunk::Data(d) => self.on_ui_data(d, rng, out),
            Chunk::Unknown { chunk_type, .. } => out.push(Effect::Lost(
                true,
                format!("unknown chunk type {chunk_type}"),
            )),
        }
    }

    /// What [`apply`](Self::apply) does with a delta's chunk, without building it: the same
    /// gate, and the reducers' own entry points for a delta read in place.
    #[inline]
    pub fn apply_delta(
        &mut self,
        delta: Delta<'_>,
        turn: TurnView<'_>,
        rng: &mut dyn RandomSource,
        out: &mut Vec<Effect>,
    ) {
        let pi_owns = self.pi_owns_history();
        match delta {
            #[cfg(feature = "pi")]
            Delta::Pi {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            } if pi_owns => {
                let mut effects = Vec::new();
                let ids = (&*message_id, &*part_id);
                let h = &mut self.history;
                self.pi.apply_delta(h, seq, kind, ids, &delta, &mut effects);
                out.extend(effects.into_iter().map(Effect::from));
            }
            // AI SDK mode ignores the projection's deltas; pi mode the standard ones.
            Delta::Pi { .. } => {}
            _ if pi_owns => {}
            // The reducer's delta entry only appends to a text (`append_only`).
            Delta::Part { kind, id, delta } => self.reduce_streamed(
                Writes::ALWAYS,
                true,
                |r, m, _| r.apply_delta(m, kind, &id, &delta),
                rng,
                out,
            ),
            // Tool input deltas cost their parse, not their chunk: the general path.
            d @ Delta::ToolInput { .. } => self.apply(d.into_chunk(), turn, rng, out),
        }
    }

    /// A turn starts (a chat POST): nothing of the last one's reducer state carries over.
    pub fn new_turn(&mut self) {
        #[cfg(feature = "pi")]
        self.pi.new_turn();
        self.ui = UiTurn::default();
        self.ignored_user_start = false;
        self.attach_whole = false;
    }

    /// How the turn just begun answers (AI SDK mode): in a new message under `id` when its
    /// stream names none; `fresh`: never in the last assistant message (a regenerate, as the
    /// `ai` package's, starts a new answer).
    pub fn answer_as(&mut self, id: Option<String>, fresh: bool) {
        self.ui.answer_id = id;
        self.ui.fresh = fresh;
    }

    /// This client attaches to a turn running on the server (SPEC §12), whose stream is read
    /// from its start (`whole`) or from a cursor past what the history holds. The reducers
    /// start the turn afresh. A message the replay starts that the history holds under its id
    /// is rebuilt from the replay; for servers whose history ids differ from their streamed
    /// ids, see `match_replayed_start`.
    pub fn attach(&mut self, whole: bool) {
        self.new_turn();
        self.ui.fresh = true;
        self.attach_whole = whole;
    }

    /// The first message-start of a whole-turn replay. Held by id: the history and the stream
    /// share ids, and the projection rebuilds each message it replays. Not held: the history's
    /// copy of the turn, if it has one, is the part from its last user message of the same
    /// text on (the running turn is the newest, and a server of this family lists its user
    /// message as soon as it has one); it goes, and the replay builds the turn again in its
    /// place.
    #[cfg(feature = "pi")]
    fn match_replayed_start(&mut self, ev: &PiEvent) {
        if !self.attach_whole {
            return;
        }
        let PiEvent::MessageStart {
            message_id,
            role,
            text,
            ..
        } = ev
        else {
            return;
        };
        self.attach_whole = false;
        if *role != Role::User || self.history.position(message_id).is_some() {
            return;
        }
        let Some(text) = text.as_deref() else { return };
        let m = self.history.messages();
        if let Some(k) = m
            .iter()
            .rposition(|m| m.role == Role::User && m.text() == text)
        {
            self.history.truncate(k);
        }
    }

    /// The turn's stream is read again from a cursor (a resume).
    pub fn resumed(&mut self) {
        self.ui.reducer.resumed();
    }

    /// The turn's stream is over: what the projection still holds open is final now.
    pub fn end_of_stream(&mut self) {
        #[cfg(feature = "pi")]
        self.pi.end_of_stream(&mut self.history);
        self.attach_whole = false;
    }

    /// The optimistic user message of a turn this client starts; in pi mode the projection's
    /// first user message-start adopts it.
    pub fn push_user_message(&mut self, msg: UIMessage) {
        #[cfg(feature = "pi")]
        if self.pi_owns_history() {
            self.pi.set_pending_user(Some(msg.id.clone()));
        }
        self.history.push(msg);
    }

    /// A user message that was never sent (a held turn the user stopped) leaves the history.
    pub fn withdraw(&mut self, message_id: &str) {
        if let Some(i) = self.history.position(message_id) {
            self.history.remove(i);
        }
    }

    /// Keeps the first `len` messages (regenerate, edit: AI SDK mode, nothing running).
    pub fn truncate(&mut self, len: usize) {
        self.history.truncate(len);
    }

    /// Shows a message of this client's that the server's history does not have (yet), at
    /// the end, without making it the user message a turn's start adopts.
    pub fn keep_local(&mut self, msg: UIMessage) {
        self.history.push(msg);
    }

    /// [`PiReducer::resume_streaming`] on this history.
    #[cfg(feature = "pi")]
    pub fn resume_streaming(&mut self, id: &str, parts: &[(bool, String, usize)]) {
        self.pi.resume_streaming(&self.history, id, parts);
    }

    /// pi-native: the message `id` is known as `new_id` from now on ([`PiReducer::rename`]).
    #[cfg(feature = "pi")]
    pub fn rename_message(&mut self, id: &str, new_id: &str) {
        if let Some(i) = self.history.position(id) {
            self.pi.rename(&mut self.history, i, new_id);
        }
    }

    /// pi-native: the assistant message `new_id` is the next step of the answer `id`
    /// ([`PiReducer::new_step`]).
    #[cfg(feature = "pi")]
    pub fn new_step(&mut self, id: &str, new_id: &str) {
        if let Some(i) = self.history.position(id) {
            self.pi.new_step(&mut self.history, i, new_id);
        }
    }

    /// The optimistic user message a user message-start adopts ([`PiReducer::pending_user`]).
    #[cfg(feature = "pi")]
    pub fn pending_user(&self) -> Option<&str> {
        self.pi.pending_user()
    }

    /// The message `id` started and has not ended (its events still write it).
    #[cfg(feature = "pi")]
    pub fn is_open(&self, id: &str) -> bool {
        self.pi.is_open(id)
    }

    /// [`PiReducer::part_ids`].
    #[cfg(feature = "pi")]
    pub fn part_ids(&self, id: &str) -> Vec<(usize, bool, String)> {
        self.pi.part_ids(id)
    }

    /// pi-native's state read merged into what is shown: `messages` is the history now, in
    /// which the messages `kept` names are as they were (their bookkeeping stays: one being
    /// streamed into goes on); the others are new to the reducers, as after [`hydrate`].
    ///
    /// [`hydrate`]: Self::hydrate
    #[cfg(feature = "pi")]
    pub fn rehydrate(&mut self, mut messages: Vec<UIMessage>, kept: impl Fn(&str) -> bool) {
        shape_pi_outputs(&mut messages);
        self.history.replace_all(messages);
        self.pi.retain(kept);
        self.ui = UiTurn::default();
    }

    /// The canonical history came (hydration). When a turn of this client's started before it
    /// came (`merge`: the turn runs, or ended before a first history) canonical comes first,
    /// then what this client added that the server does not list yet; a message both have
    /// keeps the local copy, the one being streamed into, and the reducers keep their
    /// bookkeeping (the optimistic user message to adopt, the open messages, part positions),
    /// all keyed by message id and still true of those copies: resetting it mid-turn would
    /// split the streaming text part in two and duplicate the user's message.
    #[cfg_attr(not(feature = "pi"), allow(unused_mut))]
    pub fn hydrate(&mut self, mut messages: Vec<UIMessage>, merge: bool) {
        #[cfg(feature = "pi")]
        let folds = self.pi_rows(&mut messages);
        self.hydrate_rows(messages, merge);
        #[cfg(feature = "pi")]
        self.pi_folded(folds);
    }

    fn hydrate_rows(&mut self, mut messages: Vec<UIMessage>, merge: bool) {
        if merge {
            let local = self.history.messages();
            let by_id: crate::util::hash::HashMap<&str, usize> = local
                .iter()
                .enumerate()
                .map(|(i, m)| (m.id.as_str(), i))
                .collect();
            let mut listed = vec![false; local.len()];
            for c in messages.iter_mut() {
                if let Some(&i) = by_id.get(c.id.as_str()) {
                    listed[i] = true;
                    c.clone_from(&local[i]);
                }
            }
            let extra = local.iter().zip(listed).filter(|(_, l)| !l).map(|(m, _)| m);
            let merged: Vec<UIMessage> = messages.into_iter().chain(extra.cloned()).collect();
            self.history.replace_all(merged);
            return;
        }
        self.history.replace_all(messages);
        #[cfg(feature = "pi")]
        self.pi.reset();
        self.ui = UiTurn::default();
    }

    /// Edits message `id` where a transport brings what the reducers do not keep (pi-native's
    /// `createdAt`); counts as a change.
    pub fn edit_message(&mut self, id: &str, edit: impl FnOnce(&mut UIMessage)) {
        if let Some(m) = self.history.get_mut(id) {
            edit(m);
        }
    }

    /// Another session's messages were exported: this one's versions start above them, so a
    /// snapshot never takes a message of one for the other's.
    pub fn advance_clock(&mut self, floor: u64) {
        self.history.advance_clock(floor);
    }

    /// Bumps the version of every message with a tool part `pick` selects (their exported
    /// `ui` depends on more than the message).
    pub fn touch_tool_messages(&mut self, pick: impl Fn(&str) -> bool) {
        let h = &mut self.history;
        for i in 0..h.len() {
            let hit = h.messages()[i]
                .parts
                .iter()
                .any(|p| p.as_tool().is_some_and(|t| pick(&t.tool_call_id)));
            if hit {
                h.at_mut(i);
            }
        }
    }

    // ----- the user's answers ------------------------------------------------------------
}

#[cfg(feature = "pi")]
impl From<PiEffect> for Effect {
    fn from(e: PiEffect) -> Self {
        match e {
            PiEffect::Data { name, data } => Effect::Data {
                name,
                id: None,
                data,
                transient: true,
            },
            PiEffect::Diagnostic(m) => Effect::Diagnostic(m),
            follow_up => Effect::FollowUp(follow_up),
        }
    }
}
