//! The network of the fault schedules (`tests/fault_schedules.rs`): every request the
//! page's store sends gets a fate (it arrives, is slow, is dropped before or after the server
//! saw it, gets a 503 or a 409 `followup_session_not_ready`, never gets an answer, or arrives
//! twice), and the world's event queue carries it to the simulated server
//! ([`super::sim_server`]) and the answer back to the page; streams are flushed as the
//! server's turns progress, and sometimes break mid-event. These are [`World`] methods; the
//! world itself, its pages and the user's actions are [`super::fault_world`].

use agent_chat_store::{RequestId, RequestKind, ResponseHead};
use serde_json::{json, Value};

use super::fault_world::World;
use super::sim_server::{error_body, native_path_session, path_session, query, Conn, Resp};
use super::Sent;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Ok,
    Slow,
    DropBefore,
    DropAfter,
    Http503,
    NotReady,
    Timeout { arrives: bool },
    Duplicate,
}

pub struct ReqInfo {
    pub kind: RequestKind,
    pub path: String,
    pub body: Option<Value>,
    pub fate: Fate,
    pub latency: u64,
    /// The store aborted it (or its page is gone).
    pub aborted: bool,
    /// The store got its end (answer or failure).
    pub answered: bool,
    pub arrivals: u32,
}

#[derive(Debug, Clone)]
pub enum Ev {
    Arrive {
        page: u32,
        id: RequestId,
    },
    Reply {
        page: u32,
        id: RequestId,
        resp: Resp,
    },
    Flush {
        conn: usize,
    },
}

pub struct Scheduled {
    pub at: u64,
    pub order: u64,
    pub ev: Ev,
}

impl World {
    pub fn schedule(&mut self, at: u64, ev: Ev) {
        self.order += 1;
        self.sched.push(Scheduled {
            at,
            order: self.order,
            ev,
        });
    }

    pub fn register(&mut self, sent: Sent) {
        let native = self.server.native;
        let faulty = self.faults
            && match sent.kind {
                RequestKind::FollowUpPost | RequestKind::FollowUpDelete => true,
                // Over the native protocol every command meets the network's faults, and so
                // do the reads (the events stream also breaks mid-line, in `flush`).
                RequestKind::NativePrompt
                | RequestKind::NativeStop
                | RequestKind::NativeClear
                | RequestKind::NativeState
                | RequestKind::NativeEvents => native,
                _ => false,
            };
        // `followup_session_not_ready` is the first transport's; the native server has no
        // such answer.
        let not_ready = if native { 0 } else { 6 };
        let fate = if !faulty {
            Fate::Ok
        } else if matches!(
            sent.kind,
            RequestKind::NativeState | RequestKind::NativeEvents
        ) {
            // A read that never answers would hang the events stream for good (no heartbeat
            // watchdog, as upstream): reads are slow, dropped or refused, never silent.
            match self.rng.weighted(&[80, 5, 6, 4, 5]) {
                0 => Fate::Ok,
                1 => Fate::Slow,
                2 => Fate::DropBefore,
                3 => Fate::DropAfter,
                _ => Fate::Http503,
            }
        } else if matches!(
            sent.kind,
            RequestKind::FollowUpPost | RequestKind::NativePrompt
        ) {
            match self.rng.weighted(&[40, 8, 8, 8, 6, not_ready, 5, 6]) {
                0 => Fate::Ok,
                1 => Fate::Slow,
                2 => Fate::DropBefore,
                3 => Fate::DropAfter,
                4 => Fate::Http503,
                5 => Fate::NotReady,
                6 => Fate::Timeout {
                    arrives: self.rng.chance(50),
                },
                _ => Fate::Duplicate,
            }
        } else {
            match self.rng.weighted(&[70, 8, 8, 8, 6]) {
                0 => Fate::Ok,
                1 => Fate::Slow,
                2 => Fate::DropBefore,
                3 => Fate::DropAfter,
                _ => Fate::Http503,
            }
        };
        let latency = match fate {
            Fate::Slow => self.rng.range(1_000, 45_000),
            _ => self.rng.range(1, 300),
        };
        let what = match &sent.body {
            Some(b) if sent.kind == RequestKind::FollowUpPost && native => format!(
                "{} seq={} nonce={}",
                b["content"], b["clientSeq"], b["clientNonce"]
            ),
            Some(b) if sent.kind == RequestKind::FollowUpPost => format!(
                "{} seq={} nonce={}",
                b["message"], b["clientSeq"], b["clientNonce"]
            ),
            Some(b) if sent.kind == RequestKind::Chat => format!("{}", b["message"]),
            Some(b) if sent.kind == RequestKind::NativePrompt => {
                format!("{} nonce={}", b["content"], b["clientNonce"])
            }
            Some(b) if sent.kind == RequestKind::FollowUpDelete => {
                format!("{} {b}", sent.path)
            }
            _ => sent.path.clone(),
        };
        self.note(format!(
            "page {} req #{} {:?} {what} → {fate:?} ({latency} ms)",
            self.page_no, sent.id, sent.kind
        ));
        let page = self.page_no;
        let id = sent.id;
        self.reqs.insert(
            (page, id),
            ReqInfo {
                kind: sent.kind,
                path: sent.path,
                body: sent.body,
                fate,
                latency,
                aborted: false,
                answered: false,
                arrivals: 0,
            },
        );
        match fate {
            Fate::DropBefore => {
                self.schedule(
                    self.now + latency,
                    Ev::Reply {
                        page,
                        id,
                        resp: Resp::NetFail("connection reset before the server"),
                    },
                );
            }
            Fate::Http503 => {
                let resp = Resp::Http(503, b"<html>Service Unavailable</html>".to_vec());
                self.schedule(self.now + latency, Ev::Reply { page, id, resp });
            }
            Fate::NotReady => {
                let resp = Resp::Http(409, error_body("conflict", "followup_session_not_ready"));
                self.schedule(self.now + latency, Ev::Reply { page, id, resp });
            }
            Fate::Timeout { arrives: false } => {}
            _ => {
                // Chat POSTs and resumes reach the server as they are sent.
                let delay = match sent.kind {
                    RequestKind::Chat
                    | RequestKind::StreamResume
                    | RequestKind::NativeState
                    | RequestKind::NativeEvents
                    | RequestKind::NativePrompt => 0,
                    _ => self.rng.range(0, 50),
                };
                // A page's requests reach the server in the order they were sent (one
                // connection), unless FAULT_REORDER=1: see `REORDER_RACE` (in
                // tests/fault_schedules.rs).
                let mut at = self.now + delay;
                if !self.reorder {
                    at = at.max(self.last_arrival);
                }
                self.last_arrival = at;
                self.schedule(at, Ev::Arrive { page, id });
            }
        }
    }

    pub fn on_abort(&mut self, page: u32, id: RequestId) {
        let Some(info) = self.reqs.get_mut(&(page, id)) else {
            return;
        };
        if info.aborted {
            return;
        }
        info.aborted = true;
        let kind = info.kind;
        self.note(format!("page {page} aborts req #{id} {kind:?}"));
        // What was on the wire may still reach the server; answers may still come back late
        // (the store must ignore them).
        let keep_arrival = matches!(
            kind,
            RequestKind::Chat
                | RequestKind::StreamResume
                | RequestKind::NativePrompt
                | RequestKind::NativeState
                | RequestKind::NativeEvents
        ) || self.rng.chance(50);
        let keep_reply = self.rng.chance(30);
        self.sched.retain(|s| match &s.ev {
            Ev::Arrive { page: p, id: i } if (*p, *i) == (page, id) => keep_arrival,
            Ev::Reply { page: p, id: i, .. } if (*p, *i) == (page, id) => keep_reply,
            _ => true,
        });
        for c in &mut self.server.conns {
            if (c.page, c.req) == (page, id) {
                c.open = false;
            }
        }
    }

    // ----- processing scheduled events -----

    pub fn next_due(&self) -> Option<u64> {
        let net = self.sched.iter().map(|s| s.at).min();
        let timer = self.page.store.poll_timeout();
        match (net, timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Processes the earliest network event or store timer (moving time forward to it).
    pub fn step_next(&mut self) -> bool {
        let net = self
            .sched
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| (s.at, s.order))
            .map(|(i, s)| (i, s.at));
        let timer = self.page.store.poll_timeout();
        match (net, timer) {
            (None, None) => false,
            (Some((_, at)), Some(t)) if t < at => {
                self.fire_timer(t);
                true
            }
            (None, Some(t)) => {
                self.fire_timer(t);
                true
            }
            (Some((i, at)), _) => {
                let s = self.sched.swap_remove(i);
                self.now = self.now.max(at);
                self.process(s.ev);
                true
            }
        }
    }

    pub fn fire_timer(&mut self, t: u64) {
        self.now = self.now.max(t);
        self.note("store timer".into());
        self.act(|h| h.act(|s, now| s.handle_timeout(now)));
    }

    /// Moves time forward by `ms`, processing everything that falls due on the way.
    pub fn advance(&mut self, ms: u64) {
        let target = self.now + ms;
        let mut n = 0;
        while self.next_due().is_some_and(|t| t <= target) {
            self.step_next();
            n += 1;
            assert!(n < 100_000, "no progress while advancing time");
        }
        self.now = target;
    }

    pub fn process(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { page, id } => self.arrive(page, id),
            Ev::Reply { page, id, resp } => self.deliver(page, id, resp),
            Ev::Flush { conn } => self.flush(conn),
        }
    }

    /// The request reaches the server.
    pub fn arrive(&mut self, page: u32, id: RequestId) {
        let (kind, path, body, fate, latency, arrivals) = {
            let info = self.reqs.get_mut(&(page, id)).unwrap();
            info.arrivals += 1;
            (
                info.kind,
                info.path.clone(),
                info.body.clone(),
                info.fate,
                info.latency,
                info.arrivals,
            )
        };
        let resp = match kind {
            _ if self.server.native => self.arrive_native(page, id, kind, &path, body),
            RequestKind::Chat => {
                let body = body.unwrap();
                let session = body["sessionId"].as_str().unwrap().to_string();
                let text = body["message"].as_str().unwrap().to_string();
                match self.server.chat(&session, &text, &mut self.rng) {
                    Ok(turn) => Resp::Stream(self.open_conn(page, id, &session, turn, 0)),
                    Err(r) => {
                        self.refused_chats.push((page, id, session));
                        r
                    }
                }
            }
            RequestKind::StreamResume => {
                let session = path_session(&path);
                let cursor = query(&path, "cursor").unwrap();
                match self.server.resume(&session, &cursor) {
                    Ok(pos) => {
                        let turn = self.server.session(&session).turns.len() - 1;
                        Resp::Stream(self.open_conn(page, id, &session, turn, pos))
                    }
                    Err(r) => r,
                }
            }
            RequestKind::FollowUpPost => {
                let session = path_session(&path);
                let (status, b) = self.server.followup(&session, &body.unwrap(), self.now);
                Resp::Http(status, b)
            }
            RequestKind::FollowUpDelete => {
                let session = path_session(&path);
                let (status, b) = self.server.delete_followup(&session, &path);
                Resp::Http(status, b)
            }
            RequestKind::MessagesGet => {
                let session = path_session(&path);
                let list = self.server.session(&session).canonical.clone();
                Resp::Http(200, json!({ "messages": list }).to_string().into_bytes())
            }
            RequestKind::TurnDelete | RequestKind::MessagesPut => Resp::Http(204, Vec::new()),
            RequestKind::Capabilities
            | RequestKind::Catalog
            | RequestKind::ApprovalPost
            | RequestKind::ToolOutputPost
            | RequestKind::SessionsGet
            | RequestKind::SessionPatch
            | RequestKind::SessionDelete
            // The simulated server speaks the first transport only.
            | RequestKind::NativeState
            | RequestKind::NativeEvents
            | RequestKind::NativePrompt
            | RequestKind::NativeStop
            | RequestKind::NativeCreate
            | RequestKind::NativeClear
            | RequestKind::NativeInterrupt => Resp::Http(404, Vec::new()),
        };
        self.note(format!(
            "server gets page {page} req #{id} {kind:?} (arrival {arrivals}) → {}",
            match &resp {
                Resp::Http(s, b) => format!("{s} {}", String::from_utf8_lossy(b)),
                Resp::Stream(c) => format!("stream conn {c}"),
                Resp::NetFail(m) => m.to_string(),
            }
        ));
        let at = self.now + latency;
        match fate {
            Fate::Duplicate if arrivals == 1 => {
                // The network delivers the request a second time; the client gets the answer
                // to the second copy.
                let again = self.now + self.rng.range(0, 100);
                self.schedule(again, Ev::Arrive { page, id });
                if let Resp::Stream(c) = resp {
                    self.server.conns[c].open = false;
                }
            }
            Fate::DropAfter => {
                if let Resp::Stream(c) = resp {
                    self.server.conns[c].open = false;
                }
                let resp = Resp::NetFail("connection reset after the server");
                self.schedule(at, Ev::Reply { page, id, resp });
            }
            Fate::Timeout { .. } => {
                // The server did it; the answer never comes back.
            }
            _ => {
                let aborted = self.reqs[&(page, id)].aborted;
                if let (true, Resp::Stream(c)) = (aborted, &resp) {
                    self.server.conns[*c].open = false;
                }
                self.schedule(at, Ev::Reply { page, id, resp });
            }
        }
    }

    pub fn open_conn(
        &mut self,
        page: u32,
        req: RequestId,
        session: &str,
        turn: usize,
        pos: usize,
    ) -> usize {
        self.server.conns.push(Conn {
            page,
            req,
            session: session.to_string(),
            turn,
            pos,
            open: true,
            head_sent: false,
        });
        self.server.conns.len() - 1
    }

    /// An answer reaches the page (if the page is still there).
    pub fn deliver(&mut self, page: u32, id: RequestId, resp: Resp) {
        if page != self.page_no {
            return;
        }
        if let Some(info) = self.reqs.get_mut(&(page, id)) {
            if !info.aborted {
                info.answered = true;
            }
        }
        let what = match &resp {
            Resp::Http(st, b) => format!("{st} {}", String::from_utf8_lossy(b)),
            other => format!("{other:?}"),
        };
        self.note(format!("page {page} gets answer for req #{id}: {what}"));
        match resp {
            Resp::NetFail(m) => self.act(|h| h.fail(id, m)),
            Resp::Http(status, body) => self.act(|h| {
                h.head(
                    id,
                    ResponseHead {
                        status,
                        content_type: Some("application/json".into()),
                        turn_id: None,
                    },
                );
                if !body.is_empty() {
                    h.body(id, &body);
                }
                h.end(id);
            }),
            Resp::Stream(c) => {
                let native = self.server.native;
                let content_type = match native {
                    true => "application/x-ndjson",
                    false => "text/event-stream",
                };
                self.act(|h| {
                    h.head(
                        id,
                        ResponseHead {
                            status: 200,
                            content_type: Some(content_type.into()),
                            turn_id: None,
                        },
                    )
                });
                if native {
                    // A heartbeat first, as the server writes one when the stream opens.
                    let hb = b"{\"type\":\"heartbeat\",\"now\":\"2026-01-01T00:00:00.000Z\"}\n";
                    self.act(|h| h.body(id, hb));
                    if !self.server.conns[c].open {
                        return;
                    }
                }
                self.server.conns[c].head_sent = true;
                self.flush(c);
            }
        }
    }

    /// Writes what the turn has that the connection has not carried yet.
    pub fn flush(&mut self, c: usize) {
        let conn = &self.server.conns[c];
        if !conn.open || !conn.head_sent {
            return;
        }
        let (page, req) = (conn.page, conn.req);
        if page != self.page_no {
            self.server.conns[c].open = false;
            return;
        }
        let native = self.server.native;
        let events: Vec<Vec<u8>> = if native {
            // The session's NDJSON log from the connection's place: one line per event.
            let log = &self.server.sessions[&conn.session].log;
            log[conn.pos..].iter().map(|l| l.wire()).collect()
        } else {
            let turn = &self.server.sessions[&conn.session].turns[conn.turn];
            (turn.events[conn.pos..].iter())
                .map(|e| format!("data: {e}\n\n").into_bytes())
                .collect()
        };
        // The SSE stream ends with its turn; the events stream is endless, but the server
        // may close it now and then (the store reconnects from its cursor).
        let done = match native {
            true => self.faults && !events.is_empty() && self.rng.chance(2),
            false => self.server.sessions[&conn.session].turns[conn.turn].done,
        };
        let from = conn.pos;
        // The connection breaks mid-event (the store must resume from its cursor).
        let break_at = (self.faults && !events.is_empty() && self.rng.chance(4))
            .then(|| self.rng.below(events.len() as u64) as usize);
        for (i, bytes) in events.iter().enumerate() {
            if Some(i) == break_at {
                let cut = self.rng.range(1, bytes.len() as u64 - 1) as usize;
                self.note(format!(
                    "stream of page {page} req #{req} breaks in event {} at byte {cut}",
                    from + i
                ));
                self.act(|h| h.body(req, &bytes[..cut]));
                self.server.conns[c].open = false;
                self.act(|h| h.fail(req, "stream broke"));
                if let Some(info) = self.reqs.get_mut(&(page, req)) {
                    info.answered = true;
                }
                return;
            }
            // Sometimes split inside the event, as the network does.
            if self.rng.chance(20) {
                let cut = self.rng.range(1, bytes.len() as u64 - 1) as usize;
                self.act(|h| h.body(req, &bytes[..cut]));
                self.act(|h| h.body(req, &bytes[cut..]));
            } else {
                self.act(|h| h.body(req, bytes));
            }
            if !self.server.conns[c].open {
                return; // the store aborted it meanwhile
            }
            self.server.conns[c].pos += 1;
        }
        if done {
            self.note(format!("stream of page {page} req #{req} ends"));
            self.server.conns[c].open = false;
            if let Some(info) = self.reqs.get_mut(&(page, req)) {
                info.answered = true;
            }
            self.act(|h| h.end(req));
        }
    }

    /// A running turn of `session` takes one step; live connections get flushed soon.
    pub fn server_tick(&mut self, session: &str) {
        if self.server.native {
            return self.server_tick_native(session);
        }
        let before = self
            .server
            .session(session)
            .turns
            .last()
            .map_or(0, |t| t.events.len());
        if self.server.tick(session, &mut self.rng) {
            let turn = self.server.session(session).turns.last().unwrap();
            let new: Vec<String> = turn.events[before..]
                .iter()
                .map(|e| {
                    let v: Value = serde_json::from_str(e).unwrap_or(Value::Null);
                    v["type"]
                        .as_str()
                        .unwrap_or(e)
                        .trim_start_matches("data-")
                        .to_string()
                })
                .collect();
            let line = format!("server {session} {}: {}", turn.id, new.join(", "));
            self.note(line);
            let conns: Vec<usize> = (0..self.server.conns.len())
                .filter(|&c| {
                    let k = &self.server.conns[c];
                    k.open && k.head_sent && k.session == session
                })
                .collect();
            for c in conns {
                let at = self.now + self.rng.range(0, 40);
                self.schedule(at, Ev::Flush { conn: c });
            }
        }
    }
}

// ===== the pi-native protocol's requests (SPEC §14) ===========================================

impl World {
    /// A native request reaches the server: reads and commands of
    /// `/api/v1/agents/pi/sessions/{S}/…`; the first transport's routes are not there.
    pub fn arrive_native(
        &mut self,
        page: u32,
        id: RequestId,
        kind: RequestKind,
        path: &str,
        body: Option<Value>,
    ) -> Resp {
        let http = |(status, b): (u16, Vec<u8>)| Resp::Http(status, b);
        let resp = match kind {
            RequestKind::NativeState => {
                let session = native_path_session(path);
                http(self.server.native_state(&session))
            }
            RequestKind::NativeEvents => {
                let session = native_path_session(path);
                let cursor = query(path, "cursor");
                match self.server.native_events(&session, cursor.as_deref()) {
                    Ok(pos) => Resp::Stream(self.open_conn(page, id, &session, 0, pos)),
                    Err(r) => r,
                }
            }
            RequestKind::NativePrompt => {
                let session = native_path_session(path);
                let body = body.expect("a prompt body");
                http(self.server.native_prompt(&session, &body, &mut self.rng))
            }
            RequestKind::FollowUpPost => {
                assert!(path.ends_with("/followup"), "{path}");
                let session = native_path_session(path);
                http(
                    self.server
                        .native_followup(&session, &body.expect("a body")),
                )
            }
            RequestKind::FollowUpDelete | RequestKind::NativeClear => {
                assert!(path.ends_with("/queue/clear"), "{path}");
                let session = native_path_session(path);
                http(
                    self.server
                        .native_queue_clear(&session, &body.expect("a body")),
                )
            }
            RequestKind::NativeStop => {
                let session = native_path_session(path);
                http(self.server.native_stop(&session, &mut self.rng))
            }
            RequestKind::NativeInterrupt => {
                assert!(path.ends_with("/interrupt"), "{path}");
                let session = native_path_session(path);
                let body = body.expect("an interrupt body");
                http(self.server.native_interrupt(&session, &body, &mut self.rng))
            }
            _ => {
                // A first-transport request (the store should make none over this protocol).
                self.server.count("a request of the first transport (404)");
                self.note(format!("  (not a pi-native route: {kind:?} {path})"));
                Resp::Http(404, Vec::new())
            }
        };
        if !matches!(kind, RequestKind::NativeState | RequestKind::NativeEvents) {
            // What the command emitted goes to the session's live streams.
            if path.starts_with("/api/v1/agents/") {
                let session = native_path_session(path);
                self.flush_soon(&session);
            }
        }
        resp
    }

    /// Live connections of `session` get what it emitted, soon.
    pub fn flush_soon(&mut self, session: &str) {
        let conns: Vec<usize> = (0..self.server.conns.len())
            .filter(|&c| {
                let k = &self.server.conns[c];
                k.open && k.head_sent && k.session == session
            })
            .collect();
        for c in conns {
            let at = self.now + self.rng.range(0, 40);
            self.schedule(at, Ev::Flush { conn: c });
        }
    }

    fn server_tick_native(&mut self, session: &str) {
        let before = self.server.session(session).log.len();
        if !self.server.tick(session, &mut self.rng) {
            return;
        }
        let s = self.server.session(session);
        let turn = s.turns.last().unwrap().id.clone();
        let new: Vec<String> = (s.log[before..].iter())
            .map(|l| {
                let text = l.text();
                let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
                    .unwrap_or(Value::Null);
                match l.bad {
                    Some(bad) => format!("bad line {bad:?}"),
                    None => format!(
                        "{}#{}",
                        v["event"]["type"].as_str().unwrap_or(&text),
                        v["seq"]
                    ),
                }
            })
            .collect();
        self.note(format!("server {session} {turn}: {}", new.join(", ")));
        self.flush_soon(session);
    }
}
