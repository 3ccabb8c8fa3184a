//! The world the fault schedules (`tests/fault_schedules.rs`) run in: one page at a time (a
//! [`Harness`] store on the world's virtual time, built anew on a reload), the simulated
//! server ([`super::sim_server`]) and the network between them ([`super::fault_network`]),
//! all driven by one seeded [`Prng`]. It records what the invariants are checked against: the
//! follow-ups the user queued ([`ItemRec`]), the texts sent as turns, and the queues and
//! statuses each session settled in. The user's actions (submit, remove, retry, switch
//! session, reload) are here; the schedule that picks them and the invariants are in the
//! test.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use agent_chat_store::Status;
use agent_chat_store::{ItemState, RetryPolicy};
use agent_chat_store::{RequestId, StoreEvent, StoreOptions, SubmitKind};

use super::fault_network::{Ev, ReqInfo, Scheduled};
use super::sim_server::{Hostile, LiveFacts, Prng, Server, NATIVE_AGENT};
use super::{options_with, Harness, PI_CAPS, SESSION, T0};

/// The sessions the user switches between.
pub const SESSIONS: [&str; 2] = ["S", "T"];

/// The protocol the pages and the simulated server speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The first transport: chat POST and SSE stream, follow-up POST/DELETE (SPEC §2–§13).
    Sse,
    /// pi-native (SPEC §14): `/state`, the NDJSON `/events`, `prompt`, `followup`,
    /// `queue/clear`, `stop`.
    Native,
}

#[derive(Debug, Clone)]
pub struct ItemRec {
    pub id: String,
    pub nonce: String,
    pub text: String,
    pub page: u32,
    pub session: String,
    /// Position in the order the user queued items in this session on this page.
    pub k: usize,
    pub removed: bool,
    /// The user stopped the turn while it was queued (a stop does not send what is queued:
    /// `queued` is then an end state the user sees).
    pub stopped: bool,
    /// The nonces it had before the store queued it again under a new one (see
    /// `follow_requeued_items`): a POST sent under one of them may still reach the server.
    pub earlier_nonces: Vec<String>,
}

pub struct World {
    pub transport: Transport,
    /// The user stops turns (pi-native only: `POST …/stop` drops the server's queue; the
    /// first transport's schedules keep the weights they were written with).
    pub stops: bool,
    pub rng: Prng,
    /// Whether the user presses Run Now before a step: a stream of its own, so a schedule
    /// with no press is the one `rng` gave before Run Now existed (seeds keep their
    /// meaning, and their known failures, `tests/fault_schedules_native.rs`).
    pub run_now_rng: Prng,
    pub now: u64,
    pub faults: bool,
    pub page_no: u32,
    pub page: Harness,
    pub sent_seen: usize,
    pub aborted_seen: usize,
    pub visited: Vec<String>,
    pub server: Server,
    pub reqs: HashMap<(u32, RequestId), ReqInfo>,
    pub sched: Vec<Scheduled>,
    pub order: u64,
    pub items: Vec<ItemRec>,
    pub turn_texts: HashSet<String>,
    pub counter: u64,
    pub log: std::rc::Rc<RefCell<Vec<String>>>,
    /// The item states each visited session of the last page settled in.
    pub final_queues: HashMap<String, Vec<(String, String, ItemState)>>,
    /// When the last request of this page reaches the server.
    pub last_arrival: u64,
    /// Requests may overtake each other on their way to the server.
    pub reorder: bool,
    /// Chat POSTs the server refused (409 `turn_already_active`): page, request, session.
    pub refused_chats: Vec<(u32, RequestId, String)>,
    /// The status each of them settled in.
    pub final_status: HashMap<String, Status>,
    /// The texts of user messages the settled pages show that the server never had (the
    /// optimistic message of a send that failed), per session.
    pub final_unsent: HashMap<String, HashSet<String>>,
    /// The invariant checked after every input (the test's `World::check_step`).
    pub step_check: fn(&World),
    /// `FAULT_TRACE=1`: the schedule's log also shows the page's queue as it changes.
    pub trace: bool,
    pub traced_queue: String,
    /// pi-native with hostile input: the pages' `limits.maxEventBytes` (the oversize lines
    /// are over it).
    pub max_event_bytes: Option<usize>,
    /// Every read (`/state`, `/events`) the pages made: page, session, kind, when, and
    /// whether the user's opening of a session (a switch, a reload) made it.
    pub reads: Vec<ReadRec>,
    /// The user is opening a session (a switch, a reload): the reads made are the user's.
    pub opening: bool,
    /// The most reads a page made within one simulated second (see `check_page_end`).
    pub busiest_second: usize,
    /// The same, reads made on a command's answer included.
    pub busiest_second_all: usize,
    /// Commands sent whose answer `act` has not seen yet.
    pub commands_out: Vec<(u32, RequestId)>,
    /// The current `act` takes in a command's answer.
    pub on_receipt: bool,
}

/// A read a page made (pi-native).
#[derive(Debug, Clone)]
pub struct ReadRec {
    pub page: u32,
    pub session: String,
    pub kind: agent_chat_store::RequestKind,
    pub at: u64,
    pub opening: bool,
    /// Made on the answer to a command (a receipt or a refusal): the store reads the state
    /// after some (a selective clear that cleared nothing, …), one read per answer.
    pub on_receipt: bool,
}

/// The pages' `limits.maxEventBytes` on hostile seeds: small enough that an oversize line is
/// cheap to write, well over every real line of the simulated server (its `nemit` checks).
pub const HOSTILE_MAX_EVENT_BYTES: usize = 8 * 1024;

pub fn page_options(transport: Transport, max_event_bytes: Option<usize>) -> StoreOptions {
    let mut o = options_with(PI_CAPS);
    if transport == Transport::Native {
        o.pi_native = Some(NATIVE_AGENT.into());
    }
    if let Some(limit) = max_event_bytes {
        o.limits.max_event_bytes = limit;
    }
    o.hydrate = true;
    // The simulated server beats when a stream opens, never on a clock: the watchdog would
    // find every open stream dead after its window (the liveness tests have their own).
    o.heartbeat_grace_ms = None;
    // Few attempts, short waits: items reach `failed` often enough to matter.
    o.retry = RetryPolicy {
        max_attempts: 3,
        base_delay_ms: 200,
        max_delay_ms: 2_000,
    };
    o
}

impl World {
    /// A world for `seed`, logging to `log`; `step_check` is checked after every input.
    pub fn new(
        seed: u64,
        transport: Transport,
        log: std::rc::Rc<RefCell<Vec<String>>>,
        step_check: fn(&World),
    ) -> World {
        let native = transport == Transport::Native;
        // Half the pi-native seeds meet hostile input: bad lines between events, oversize
        // ones, failing `/state` answers (`Hostile`). `FAULT_NATIVE_HOSTILE=1` (or `0`) puts
        // every seed on one side.
        let hostile = native
            && match std::env::var("FAULT_NATIVE_HOSTILE").as_deref() {
                Ok("1") => true,
                Ok("0") => false,
                _ => (seed / 2) % 2 == 1,
            };
        let max_event_bytes = hostile.then_some(HOSTILE_MAX_EVENT_BYTES);
        let page = Harness::at(
            page_options(transport, max_event_bytes),
            T0,
            seed.wrapping_mul(31).wrapping_add(1),
        );
        // Two pi-native seeds in three meet the live server's ways, the others the protocol
        // as written (the reference server's default): a store must keep its rules with
        // both. `FAULT_NATIVE_LIVE=1` (or `0`) puts every seed on one side.
        let live = native
            && match std::env::var("FAULT_NATIVE_LIVE").as_deref() {
                Ok("1") => true,
                Ok("0") => false,
                _ => !seed.is_multiple_of(3),
            };
        let mut w = World {
            transport,
            stops: native,
            rng: Prng::new(seed),
            run_now_rng: Prng::new(seed ^ 0x5275_6e4e_6f77),
            now: T0,
            faults: true,
            page_no: 1,
            page,
            sent_seen: 0,
            aborted_seen: 0,
            visited: vec![SESSION.to_string()],
            // A third of the seeds meet the real server's queue (strands, kept across a stop).
            // The native server always keeps pi's queue (a follow-up accepted while idle
            // runs after the next prompt); a quarter of its seeds keep few events for replay.
            server: Server {
                keep_idle_followups: native || seed.is_multiple_of(3),
                says_started: seed.is_multiple_of(2),
                native,
                replay_window: (native && seed % 4 == 1).then_some(12),
                live: if live {
                    LiveFacts::ALL
                } else {
                    LiveFacts::default()
                },
                hostile: max_event_bytes.map(|limit| Hostile::new(seed, limit)),
                ..Server::default()
            },
            reqs: HashMap::new(),
            sched: Vec::new(),
            order: 0,
            items: Vec::new(),
            turn_texts: HashSet::new(),
            counter: 0,
            log,
            final_queues: HashMap::new(),
            final_status: HashMap::new(),
            final_unsent: HashMap::new(),
            last_arrival: T0,
            reorder: seed % 2 == 1 && std::env::var("FAULT_REORDER").map_or(true, |v| v != "0"),
            refused_chats: Vec::new(),
            step_check,
            trace: std::env::var("FAULT_TRACE").is_ok_and(|v| v == "1"),
            traced_queue: String::new(),
            max_event_bytes,
            reads: Vec::new(),
            opening: true,
            busiest_second: 0,
            busiest_second_all: 0,
            commands_out: Vec::new(),
            on_receipt: false,
        };
        if live {
            w.note("server: the live server's ways (LiveFacts::ALL)".into());
        }
        if let Some(h) = &w.server.hostile {
            w.note(format!(
                "server: hostile input (a bad line before {}% of events, /state 500 {}%, \
                 limits.maxEventBytes {})",
                h.percent, h.state_500_percent, h.max_event_bytes
            ));
        }
        w.sync();
        w.opening = false;
        w
    }

    pub fn note(&self, s: String) {
        self.log
            .borrow_mut()
            .push(format!("[t+{}] {s}", self.now - T0));
    }

    /// Runs an action on the current page's store at the world's time, then takes in what it
    /// asked for.
    pub fn act<R>(&mut self, f: impl FnOnce(&mut Harness) -> R) -> R {
        self.page.now = self.now;
        self.on_receipt = self.takes_command_answer();
        let events_before = self.page.events.len();
        let status_before = self.page.store.status();
        let r = f(&mut self.page);
        for e in &self.page.events[events_before..] {
            if !matches!(e, StoreEvent::Data { .. }) {
                self.note(format!("  store event: {e:?}"));
            }
        }
        let status = self.page.store.status();
        if status != status_before {
            self.note(format!("  store status {status_before:?} → {status:?}"));
        }
        if self.trace {
            let q = self.queue_summary();
            if q != self.traced_queue {
                self.note(format!("  queue: {q}"));
                self.traced_queue = q;
            }
        }
        self.sync();
        self.on_receipt = false;
        (self.step_check)(self);
        r
    }

    /// A command's answer has just reached the page (`deliver` marks it answered before its
    /// `act`): the reads this `act` makes are made on it.
    fn takes_command_answer(&mut self) -> bool {
        let reqs = &self.reqs;
        let answered = (self.commands_out.iter()).any(|k| reqs.get(k).is_some_and(|r| r.answered));
        (self.commands_out).retain(|k| reqs.get(k).is_some_and(|r| !r.answered && !r.aborted));
        answered
    }

    /// The current page's waiting bubbles, one word each (`FAULT_TRACE=1` logs it as it
    /// changes): text, state, and `-` removing, `!` an error, `ro` another client's.
    fn queue_summary(&self) -> String {
        let items: Vec<String> = (self.page.store.session().queued().iter())
            .map(|i| {
                let mut s = format!("{}:{:?}", i.text, i.state);
                if i.removing {
                    s.push('-');
                }
                if i.error.is_some() {
                    s.push('!');
                }
                if i.read_only {
                    s.push_str("ro");
                }
                s
            })
            .collect();
        format!("{} [{}]", self.page.store.session().id(), items.join(" "))
    }

    /// New requests get a fate; new aborts cancel what the network still had for them.
    pub fn sync(&mut self) {
        while self.sent_seen < self.page.sent.len() {
            let sent = self.page.sent[self.sent_seen].clone();
            self.sent_seen += 1;
            use agent_chat_store::RequestKind::*;
            if matches!(
                sent.kind,
                NativePrompt
                    | FollowUpPost
                    | FollowUpDelete
                    | NativeClear
                    | NativeStop
                    | NativeInterrupt
            ) {
                self.commands_out.push((self.page_no, sent.id));
            }
            if matches!(sent.kind, NativeState | NativeEvents) {
                self.reads.push(ReadRec {
                    page: self.page_no,
                    session: super::sim_server::native_path_session(&sent.path),
                    kind: sent.kind,
                    at: sent.at,
                    opening: self.opening,
                    on_receipt: self.on_receipt,
                });
            }
            self.register(sent);
        }
        // The store lists aborts in its own (hash map) order: sorted, a seed replays exactly.
        let mut aborts = self.page.aborted[self.aborted_seen..].to_vec();
        self.aborted_seen = self.page.aborted.len();
        aborts.sort_unstable();
        for id in aborts {
            self.on_abort(self.page_no, id);
        }
        self.adopt_refused_turns();
        self.follow_requeued_items();
    }

    /// Over pi-native a queued item whose prompt the server refused (409
    /// `AGENT_COMMAND_INVALID_STATE`: another run started first) goes back in the queue as a
    /// follow-up under a new id and nonce: the user's item is the same, so its record follows
    /// it (found by its text, unique per item).
    fn follow_requeued_items(&mut self) {
        let page = self.page_no;
        let moved: Vec<_> = (self.page.store.session().queued().iter())
            .filter(|q| !q.read_only)
            .filter(|q| !self.items.iter().any(|i| i.id == q.id))
            .map(|q| (q.id.clone(), q.client_nonce.clone(), q.text.clone()))
            .collect();
        for (id, nonce, text) in moved {
            let Some(rec) = (self.items.iter_mut()).find(|i| i.page == page && i.text == text)
            else {
                continue;
            };
            let line = format!("  {text:?} queued again as {id} (was {})", rec.id);
            rec.id = id;
            let earlier = std::mem::replace(&mut rec.nonce, nonce);
            rec.earlier_nonces.push(earlier);
            self.note(line);
        }
    }

    /// A turn the server refused with 409 `turn_already_active` is posted to the running turn
    /// as a follow-up (SPEC §6): from then on it is one of the user's items, under the nonce
    /// the store gave it.
    fn adopt_refused_turns(&mut self) {
        let session = self.page.store.session().id().to_string();
        let new: Vec<_> = (self.page.store.session().queued().iter())
            .filter(|q| self.turn_texts.contains(&q.text))
            .filter(|q| !self.items.iter().any(|i| i.id == q.id))
            .map(|q| (q.id.clone(), q.client_nonce.clone(), q.text.clone()))
            .collect();
        for (id, nonce, text) in new {
            let k = (self.items.iter())
                .filter(|i| i.page == self.page_no && i.session == session)
                .count();
            self.note(format!("  refused turn {text:?} queued as a follow-up"));
            self.items.push(ItemRec {
                id,
                nonce,
                text,
                page: self.page_no,
                session: session.clone(),
                k,
                removed: false,
                stopped: false,
                earlier_nonces: Vec::new(),
            });
        }
    }

    // ----- user actions -----

    pub fn fresh_text(&mut self, what: &str) -> String {
        self.counter += 1;
        format!(
            "p{}/{}/{what}{}",
            self.page_no,
            self.page.store.session().id(),
            self.counter
        )
    }

    pub fn user_submit(&mut self) {
        let busy = self.page.store.status().is_busy();
        let text = self.fresh_text(if busy { "f" } else { "turn" });
        let r = self.act(|h| h.submit(&text));
        self.note(format!("user submits {text:?} → {:?}", r.kind));
        match r.kind {
            SubmitKind::Sent => {
                self.turn_texts.insert(text);
            }
            SubmitKind::Queued => {
                let item = (*self.page.store.session().queued().last().unwrap()).clone();
                assert_eq!(item.text, text);
                let session = self.page.store.session().id().to_string();
                let k = self
                    .items
                    .iter()
                    .filter(|i| i.page == self.page_no && i.session == session)
                    .count();
                self.items.push(ItemRec {
                    id: item.id,
                    nonce: item.client_nonce,
                    text,
                    page: self.page_no,
                    session,
                    k,
                    removed: false,
                    stopped: false,
                    earlier_nonces: Vec::new(),
                });
            }
            SubmitKind::Blocked => panic!("submit blocked: {:?}", r.reason),
        }
    }

    pub fn user_remove(&mut self) {
        // Another client's rows (an earlier page's, over pi-native) are read-only here.
        let q: Vec<_> = (self.page.store.session().queued().into_iter())
            .filter(|i| !i.read_only)
            .collect();
        if q.is_empty() {
            return;
        }
        let item = q[self.rng.below(q.len() as u64) as usize].clone();
        let ok = self.act(|h| h.act(|s, now| s.follow_ups_mut().remove(&item.id, now)));
        self.note(format!(
            "user removes {:?} ({:?}) → {ok}",
            item.text, item.state
        ));
        assert!(ok);
        let rec = (self.items.iter_mut().find(|i| i.id == item.id)).unwrap_or_else(|| {
            panic!("the user removed an item the schedule never queued: {item:?}")
        });
        rec.removed = true;
    }

    /// The user stops the running turn; what is queued then stays for the user (with an
    /// item the stop put back: one on its way to be the next message).
    pub fn user_stop(&mut self) {
        let ids = |w: &World| -> Vec<String> {
            (w.page.store.session().queued().iter())
                .map(|i| i.id.clone())
                .collect()
        };
        let mut queued = ids(self);
        self.note(format!("user stops ({} queued)", queued.len()));
        self.act(|h| h.stop());
        queued.extend(ids(self));
        for rec in self.items.iter_mut().filter(|r| queued.contains(&r.id)) {
            rec.stopped = true;
        }
    }

    pub fn user_retry_failed(&mut self) {
        let Some(item) = self
            .page
            .store
            .session()
            .queued()
            .iter()
            .find(|i| i.state == ItemState::Failed)
            .map(|i| (*i).clone())
        else {
            return;
        };
        let ok = self.act(|h| h.retry_queued(&item.id));
        self.note(format!("user retries failed {:?} → {ok}", item.text));
    }

    /// The user presses Run Now on a waiting follow-up of its own: the store retries it, runs
    /// it now by an interrupt, or leaves it to run after the current answer.
    pub fn user_run_now(&mut self) {
        let q: Vec<_> = (self.page.store.session().queued().into_iter())
            .filter(|i| !i.read_only)
            .map(|i| (i.id.clone(), i.text.clone(), i.state))
            .collect();
        if q.is_empty() {
            return;
        }
        let (id, text, state) = q[self.run_now_rng.below(q.len() as u64) as usize].clone();
        let outcome = self.act(|h| h.act(|s, now| s.follow_ups_mut().run_now(&id, now)));
        self.note(format!("user runs {text:?} ({state:?}) now → {outcome:?}"));
    }

    pub fn user_switch(&mut self) {
        let cur = self.page.store.session().id().to_string();
        let next = SESSIONS.iter().find(|s| **s != cur).unwrap().to_string();
        self.note(format!("user switches {cur} → {next}"));
        let sent = self.page.sent.len();
        self.opening = true;
        self.act(|h| h.switch_session(&next));
        self.opening = false;
        if self.transport == Transport::Native {
            // Named here rather than left to hang the schedule on a timer that never clears.
            let read = self.page.sent[sent..]
                .iter()
                .any(|r| r.kind == agent_chat_store::RequestKind::NativeState);
            let stuck = self
                .page
                .store
                .poll_timeout()
                .is_some_and(|t| t <= self.now);
            assert!(
                read || !stuck,
                "SWITCH_BACK: switching to {next} read nothing and left a timer due now"
            );
        }
        if !self.visited.contains(&next) {
            self.visited.push(next);
        }
    }

    /// A page reload: a new store, built later, on the session the old page showed. What
    /// the old page had on the wire may still reach the server; its answers go nowhere.
    pub fn reload(&mut self) {
        let session = self.page.store.session().id().to_string();
        self.check_page_end();
        self.now += self.rng.range(1_000, 5_000);
        let old = self.page_no;
        self.page_no += 1;
        self.note(format!("page reload → page {} on {session}", self.page_no));
        let mut keys: Vec<(u32, RequestId)> = self
            .reqs
            .keys()
            .filter(|(p, _)| *p == old)
            .copied()
            .collect();
        keys.sort_unstable();
        for (p, id) in keys {
            let info = self.reqs.get_mut(&(p, id)).unwrap();
            if !info.aborted && !info.answered {
                info.aborted = true;
                let keep = self.rng.chance(50);
                self.sched.retain(|s| match &s.ev {
                    Ev::Arrive { page: pp, id: i } if (*pp, *i) == (p, id) => keep,
                    _ => true,
                });
            }
        }
        self.sched
            .retain(|s| !matches!(&s.ev, Ev::Reply { page, .. } if *page == old));
        for c in &mut self.server.conns {
            if c.page == old {
                c.open = false;
            }
        }
        let mut opts = page_options(self.transport, self.max_event_bytes);
        opts.session_id = session.clone();
        let seed = self.rng.next();
        self.page = Harness::at(opts, self.now, seed);
        self.sent_seen = 0;
        self.aborted_seen = 0;
        self.visited = vec![session];
        self.opening = true;
        self.sync();
        self.opening = false;
    }
}
