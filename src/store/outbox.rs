//! Requests in flight: their ids and kinds, the pending-request records, the session
//! generation that makes late answers harmless, and aborts.

use super::*;

/// Identifies one request for its whole life (the driver hands it back with every answer).
pub type RequestId = u64;

/// An HTTP method of a [`Request`] (serialised in uppercase, as `fetch` takes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method's name as `fetch` takes it (`"GET"`, `"POST"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// How long a pi-native read may wait for its answer (`native_link::READ_DEADLINE_MS`, which
/// the AI SDK build does not have).
pub(super) const NATIVE_READ_DEADLINE_MS: u64 = 15_000;

/// What a request is for (SPEC §2's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RequestKind {
    /// `GET …/capabilities?sessionId=S`: the session's capabilities.
    Capabilities,
    /// `GET …/catalog?sessionId=S`: the session runtime's tool catalog.
    Catalog,
    /// `POST …/chat`: a message that starts a turn; the answer is its SSE stream.
    Chat,
    /// `POST …/chat/S/followup`: a follow-up while busy (`clientSeq`, `clientNonce`).
    FollowUpPost,
    /// `DELETE …/chat/S/followup?clientNonce=N&clientSeq=Q`: removes a posted follow-up.
    FollowUpDelete,
    /// `GET …/chat/S/messages`: the canonical history.
    MessagesGet,
    /// `PUT …/chat/S/messages`: persists the history (AI SDK mode only).
    MessagesPut,
    /// `GET …/chat/S/stream?cursor=C`: resumes the turn's stream after cursor `C`.
    StreamResume,
    /// `DELETE …/chat/S/turn?turnId=T`: stops the turn.
    TurnDelete,
    /// `POST …/chat/S/approval`: the answer to an approval a call waits for (pi mode).
    ApprovalPost,
    /// `POST …/chat/S/tool-output`: the answer to a call that waits for input (pi mode).
    ToolOutputPost,
    /// `GET …/sessions?cursor=C&limit=N&archived=B`: a page of the session list.
    SessionsGet,
    /// `PATCH …/sessions/S`: renames or (un)archives a session.
    SessionPatch,
    /// `DELETE …/sessions/S`: deletes a session.
    SessionDelete,
    /// pi-native `GET …/state`: the session document.
    NativeState,
    /// pi-native `GET …/events?cursor=N`: the session's NDJSON event stream.
    NativeEvents,
    /// pi-native `POST …/prompt`: a message that starts a run (its events come on the stream).
    NativePrompt,
    /// pi-native `POST …/stop`.
    NativeStop,
    /// pi-native `POST /api/v1/agents/{agentType}/sessions`: makes the session a first send
    /// goes to, when the server does not have it.
    NativeCreate,
    /// pi-native `POST …/queue/clear` of the whole queue: takes follow-ups back from a server
    /// that removes none by their selectors.
    NativeClear,
    /// pi-native `POST …/interrupt`: stops the running answer so the first queued follow-up
    /// runs now ("Run Now").
    NativeInterrupt,
}

impl RequestKind {
    /// The answer is an SSE stream to feed chunk by chunk.
    pub fn is_stream(self) -> bool {
        matches!(self, RequestKind::Chat | RequestKind::StreamResume)
    }
    /// A request of the pi-native transport, answered through `native.rs`.
    #[cfg(feature = "pi")]
    pub(super) fn is_native(self) -> bool {
        matches!(
            self,
            RequestKind::NativeState
                | RequestKind::NativeEvents
                | RequestKind::NativePrompt
                | RequestKind::NativeStop
                | RequestKind::NativeCreate
                | RequestKind::NativeClear
                | RequestKind::NativeInterrupt
        )
    }
    /// Requests that must not outlive their session: aborted on a switch or dispose. The
    /// DELETEs and the PUT are the server's to finish; their answers are not needed.
    pub(super) fn aborted_on_switch(self) -> bool {
        !matches!(
            self,
            RequestKind::FollowUpDelete
                | RequestKind::TurnDelete
                | RequestKind::MessagesPut
                | RequestKind::NativeStop
        ) && !self.of_session_list()
    }
    /// The session list's requests: they name their session themselves, so their answers
    /// count whatever session is open (SPEC §11).
    pub(super) fn of_session_list(self) -> bool {
        matches!(
            self,
            RequestKind::SessionsGet | RequestKind::SessionPatch | RequestKind::SessionDelete
        )
    }
}

/// A request the host must make. `path` is relative to the host's `baseUrl` and already
/// carries its query string; `body` is JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Hand it back with every `handle_*` input about this request.
    pub id: RequestId,
    /// What the request is for.
    pub kind: RequestKind,
    /// The HTTP method.
    pub method: Method,
    /// The path and query, relative to the host's base URL (`/api/v1/agent/chat`).
    pub path: String,
    /// The JSON body, if the request has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// What the send that made it added (its body keys are already in `body`): its headers,
    /// and the request metadata for the host's prepare hook.
    #[serde(skip)]
    pub options: Option<Box<SendOptions>>,
}

/// What the driver learnt from a response's status line and headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHead {
    /// The HTTP status code.
    pub status: u16,
    /// The `content-type` header: a 2xx stream answered as `text/html` fails the turn.
    pub content_type: Option<String>,
    /// `x-turn-id`, which servers of this family send with the chat stream.
    pub turn_id: Option<String>,
}

/// The requests in flight and the outputs not drained yet: the host drains `requests`,
/// `aborts` and `events` with the `poll_*` outputs and answers the requests.
#[derive(Debug)]
pub(super) struct Outbox {
    /// Bumped by a session switch, a dispose or a reset: answers of older generations are
    /// ignored, whatever they say.
    pub(super) generation: u64,
    pub(super) next_request: RequestId,
    pub(super) pending: VecMap<RequestId, Pending>,
    pub(super) requests: VecDeque<Request>,
    pub(super) aborts: VecDeque<RequestId>,
    pub(super) events: VecDeque<StoreEvent>,
    /// The store was disposed: it takes no more actions or inputs, and asks nothing more.
    pub(super) disposed: bool,
}

impl Outbox {
    /// The pending record of `id` if its answer still matters: one of the open session's
    /// generation, or one that names what it is for itself (the session list's; a
    /// take-back's, which [`ChatStore::settle`] gives to the session that sent it).
    pub(super) fn live(&mut self, id: RequestId, session: &str) -> Option<&mut Pending> {
        let current = (self.generation, session);
        match self.pending.get_mut(&id) {
            Some(p)
                if p.kind.of_session_list()
                    || p.kind == RequestKind::FollowUpDelete
                    || (p.generation, p.session.as_str()) == current =>
            {
                Some(p)
            }
            _ => None,
        }
    }

    pub(super) fn abort(&mut self, id: RequestId) {
        if self.pending.remove(&id).is_some() || !self.aborts.contains(&id) {
            self.aborts.push_back(id);
        }
    }

    /// A session switch, a dispose or a reset: the requests of the old generation go.
    pub(super) fn bump_generation(&mut self) {
        self.generation += 1;
        let ids: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.kind.aborted_on_switch())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.pending.remove(&id);
            self.aborts.push_back(id);
        }
        // Requests not yet handed out belong to the old generation too.
        self.requests.retain(|r| !r.kind.aborted_on_switch());
    }

    /// Records a request of `session` and hands it to the host.
    pub(super) fn push(
        &mut self,
        session: &str,
        kind: RequestKind,
        method: Method,
        path: String,
        body: Option<String>,
        deadline: Option<u64>,
    ) -> RequestId {
        // Every action that leads here refuses after `dispose()`: the shell has stopped.
        debug_assert!(!self.disposed, "{kind:?} request after dispose");
        let id = self.next_request;
        self.next_request += 1;
        self.pending.insert(
            id,
            Pending {
                session: session.to_string(),
                generation: self.generation,
                kind,
                status: None,
                body: Vec::new(),
                events_before: 0,
                history: None,
                received: 0,
                ticket: None,
                deadline,
            },
        );
        self.requests.push_back(Request {
            id,
            kind,
            method,
            path,
            body,
            options: None,
        });
        id
    }

    /// The request `id`, not handed out yet, carries what its send added (headers, request
    /// metadata).
    pub(super) fn carry(&mut self, id: RequestId, options: Option<Box<SendOptions>>) {
        if let Some(r) = self.requests.iter_mut().rev().find(|r| r.id == id) {
            r.options = options;
        }
    }

    pub(super) fn new() -> Self {
        Outbox {
            generation: 1,
            next_request: 1,
            pending: VecMap::default(),
            requests: VecDeque::new(),
            aborts: VecDeque::new(),
            events: VecDeque::new(),
            disposed: false,
        }
    }
}

#[derive(Debug)]
pub(super) struct Pending {
    pub(super) session: String,
    pub(super) generation: u64,
    pub(super) kind: RequestKind,
    pub(super) status: Option<u16>,
    /// A JSON answer's body, gathered until the end; of a 2xx stream answer, its first
    /// [`SNIFF_BYTES`] (to tell an answer that was no event stream at all).
    pub(super) body: Vec<u8>,
    /// `events_seen` when a stream answer's head arrived: none more at its end means the body
    /// held no event.
    pub(super) events_before: u64,
    /// A 2xx history answer, read as it arrives (the body is not gathered).
    pub(super) history: Option<Box<HistoryParser>>,
    /// Bytes of `history` received so far.
    pub(super) received: usize,
    /// The follow-up queue's ticket, for follow-up POSTs.
    pub(super) ticket: Option<u64>,
    /// When the request counts as timed out.
    pub(super) deadline: Option<u64>,
}

impl StoreOptions {
    /// When a request of `kind` made at `now_ms` counts as timed out.
    pub(super) fn deadline(&self, kind: RequestKind, now_ms: u64) -> Option<u64> {
        match kind {
            RequestKind::FollowUpPost | RequestKind::ApprovalPost | RequestKind::ToolOutputPost => {
                Some(now_ms + self.followup_timeout_ms)
            }
            // Every pi-native command: a stop or a queue clear that never answers would hold
            // the follow-ups waiting on it forever.
            #[cfg(feature = "pi")]
            RequestKind::NativePrompt
            | RequestKind::NativeCreate
            | RequestKind::NativeStop
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt => {
                Some(now_ms + (self.followup_timeout_ms).min(super::native::COMMAND_DEADLINE_MS))
            }
            // A stream that says nothing (not even a keep-alive comment) for this long is
            // treated as dropped: resumed if it had started, failed if it never answered.
            RequestKind::Chat | RequestKind::StreamResume => {
                self.stream_idle_timeout_ms.map(|t| now_ms + t)
            }
            // pi-native reads, as upstream's client bounds them: the state answers, and the
            // events stream sends its head, within this (the state's renewed by each of its
            // bytes; the events' idle rule takes over at their head, `on_native_events`).
            RequestKind::NativeState | RequestKind::NativeEvents => {
                Some(now_ms + NATIVE_READ_DEADLINE_MS)
            }
            // A page that never answers would hold the list's one page request forever, and
            // an unanswered change its overlay.
            k if k.of_session_list() => Some(now_ms + self.followup_timeout_ms),
            _ => None,
        }
    }

    /// The route `pick` takes, for session `session`.
    pub(super) fn route(&self, session: &str, pick: impl Fn(&Routes) -> &String) -> String {
        replace_all(pick(&self.routes), "{sessionId}", &encode(session))
    }

    /// The stream route of session `session`, read after `cursor` (`-1`: from the turn's
    /// start).
    pub(super) fn stream_path(&self, session: &str, cursor: &str) -> String {
        let route = self.route(session, |r| &r.stream);
        // The `ai` package asks for the whole stream with the bare route.
        if self.ai_sdk_requests && cursor == "-1" {
            return route;
        }
        format!("{route}?cursor={}", encode(cursor))
    }
}

impl ChatStore {
    /// Asks the host for a request of the open session (its deadline the options'); `None`
    /// options: what a send added to it, [`Outbox::carry`].
    pub(super) fn request(
        &mut self,
        kind: RequestKind,
        method: Method,
        path: String,
        body: Option<String>,
        now_ms: u64,
    ) -> RequestId {
        let deadline = self.opts.deadline(kind, now_ms);
        let session = &self.session.id;
        (self.outbox).push(session, kind, method, path, body, deadline)
    }

    /// A request is over (answered or failed): its record goes, a held turn waiting for it
    /// (of any session) moves on, and the record comes back only if the answer still matters
    /// (same generation, same session).
    pub(super) fn settle(&mut self, id: RequestId, now_ms: u64) -> Option<Pending> {
        let p = self.outbox.pending.remove(&id)?;
        if p.kind == RequestKind::FollowUpDelete && !self.outbox.disposed {
            let answer = self.delete_answer(id, &p);
            self.on_delete_answered(id, answer, now_ms);
        }
        let current = p.generation == self.outbox.generation && p.session == self.session.id;
        (current || p.kind.of_session_list()).then_some(p)
    }
}

impl Session {
    /// The session's own part of a new generation: what was in flight for it is let go.
    pub(super) fn requests_dropped(&mut self) {
        self.queue.abort_in_flight();
        #[cfg(feature = "pi")]
        if let Some(id) = (self.native.clear_all.as_mut()).and_then(|c| c.request.take()) {
            // Aborted with the rest: asked again, under its request id (a clear the server
            // made answers its first receipt), once the session is current again.
            self.take_backs.unsent(id, 0);
        }
        // Run Now's interrupt is not sent again: reopened, the state read shows whether the
        // follow-up ran (and which run is on); the user may press it again.
        #[cfg(feature = "pi")]
        {
            self.native.interrupt = None;
        }
        for a in &mut self.answers.pending {
            // Aborted with the rest: posted again, with the same ids, when the session opens.
            if a.in_flight.take().is_some() {
                a.due_at = Some(0);
            }
        }
        if self.turn.phase.stream().is_some() {
            // The body was dropped wherever it was, maybe mid-event: the resume's body must
            // not be read as the rest of that event.
            self.turn.decoder.finish();
        }
        if self.turn.phase.running() {
            // The server's turn may go on; switching back resumes its stream.
            self.turn.phase = Phase::Resuming { at: None };
        }
        // Aborted with the rest; reopening the session asks again.
        self.turn.probe = None;
        self.turn.running_hint = None;
        self.turn.after_stop = false;
    }
}
