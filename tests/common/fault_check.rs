//! The fault schedules' run and invariants, shared by both transports
//! (`tests/fault_schedules.rs` over the first one, `tests/fault_schedules_native.rs` over
//! pi-native; the first one's header states the invariants): the schedule that picks the
//! user's, the server's and the network's next move, quiescence, the checks after every step
//! and at the end, and the seed loop with its environment (`FAULT_SEED`, `FAULT_SEEDS`,
//! `FAULT_KEEP_GOING`, `FAULT_REORDER`).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use agent_chat_store::ItemState;
use agent_chat_store::Status;
use agent_chat_store::{RequestId, RequestKind, StoreEvent};
use serde_json::Value;

use super::fault_world::{ItemRec, Transport, World, SESSIONS};
use super::sim_server::{BadLine, Commit, PostSeen, Via};
use super::T0;

// ===== the schedule ==========================================================================

impl World {
    fn run(&mut self, steps: usize) {
        for _ in 0..steps {
            let busy = self.page.store.status().is_busy();
            let running = self.server.running();
            let native = self.transport == Transport::Native;
            let w = [
                if busy { 22 } else { 12 }, // submit (a follow-up when busy, a turn otherwise)
                if self.page.store.session().queued().is_empty() {
                    0
                } else {
                    4
                }, // remove
                3,                          // retry a failed item
                4,                          // switch session
                1,                          // reload
                if running.is_empty() { 0 } else { 22 }, // server tick
                if native { 0 } else { 2 }, // server not ready (no such answer over pi-native)
                25,                         // next network event
                8,                          // time passes
                // stop (pi-native: `POST …/stop` drops the server's queue); a zero weight
                // keeps the first transport's schedules as they were.
                if self.stops && busy { 3 } else { 0 },
            ];
            // Run Now on a waiting follow-up (pi-native: the interrupt), decided apart from
            // the step (`World::run_now_rng`).
            let queued = !self.page.store.session().queued().is_empty();
            if native && busy && queued && self.run_now_rng.chance(4) {
                self.user_run_now();
            }
            match self.rng.weighted(&w) {
                0 => self.user_submit(),
                1 => self.user_remove(),
                2 => self.user_retry_failed(),
                3 => self.user_switch(),
                4 => self.reload(),
                5 => {
                    let s = running[self.rng.below(running.len() as u64) as usize].clone();
                    self.server_tick(&s);
                }
                6 => {
                    let s = SESSIONS[self.rng.below(2) as usize];
                    let until = self.now + self.rng.range(100, 3_000);
                    self.note(format!("server: {s} not ready until t+{}", until - T0));
                    self.server.session(s).not_ready_until = until;
                }
                7 => {
                    self.step_next();
                }
                8 => {
                    let ms = self.rng.range(0, 3_000);
                    self.advance(ms);
                }
                _ => self.user_stop(),
            }
        }
    }

    /// Heals the network, then visits every session the page opened and lets everything
    /// settle: server turns run to their end, answers arrive, timers fire.
    fn quiesce(&mut self) {
        self.faults = false;
        self.note("--- quiescence: the network heals ---".into());
        let sessions = self.visited.clone();
        // The current session last, so the store ends where the user left it.
        let cur = self.page.store.session().id().to_string();
        let order: Vec<String> = sessions
            .iter()
            .filter(|s| **s != cur)
            .cloned()
            .chain(std::iter::once(cur.clone()))
            .collect();
        for s in order {
            if self.page.store.session().id() != s {
                self.note(format!("settle: switch to {s}"));
                self.opening = true;
                self.act(|h| h.switch_session(&s));
                self.opening = false;
            }
            self.settle();
            let q = self
                .page
                .store
                .session()
                .queued()
                .iter()
                .map(|i| (i.id.clone(), i.text.clone(), i.state))
                .collect();
            self.check_history(&s);
            self.final_status
                .insert(s.clone(), self.page.store.status());
            self.final_queues.insert(s, q);
        }
    }

    fn settle(&mut self) {
        for round in 0.. {
            assert!(round < 20_000, "no quiescence");
            let running = self.server.running();
            for s in &running {
                self.server_tick(s);
            }
            if self.step_next() {
                continue;
            }
            if running.is_empty() {
                break;
            }
        }
        let store = &self.page.store;
        assert!(
            !store.status().is_busy(),
            "quiescent but still {:?}",
            store.status()
        );
    }
}

// ===== the invariants ========================================================================

impl World {
    /// Checked after every input: one follow-up POST in flight per page, and an item keeps its
    /// nonce and text for its whole life.
    fn check_step(&self) {
        // A POST whose item left the queue (consumed by the stream, or removed and so deleted)
        // no longer holds the line: the server has it or will refuse it.
        let q = self.page.store.session().queued();
        let open_posts: Vec<RequestId> = self
            .reqs
            .iter()
            .filter(|((p, _), r)| {
                *p == self.page_no
                    && r.kind == RequestKind::FollowUpPost
                    && !r.aborted
                    && !r.answered
                    && r.body.as_ref().is_some_and(|b| {
                        q.iter()
                            .any(|i| b["clientNonce"] == i.client_nonce.as_str())
                    })
            })
            .map(|((_, id), _)| *id)
            .collect();
        assert!(
            open_posts.len() <= 1,
            "several follow-up POSTs in flight: {open_posts:?}"
        );
        assert!(q.iter().filter(|i| i.state == ItemState::Posting).count() <= 1);
        for item in q {
            if let Some(rec) = self.items.iter().find(|r| r.id == item.id) {
                assert_eq!(item.client_nonce, rec.nonce, "an item changed its nonce");
                assert_eq!(item.text, rec.text, "an item changed its text");
                // Over pi-native a later page shows what the server still holds (its queue is
                // authoritative, SPEC §14): an earlier page's removal whose clear had not
                // reached the server is there again, truthfully.
                let adopted = self.transport == Transport::Native && rec.page != self.page_no;
                // A removal over pi-native keeps the bubble until the server's queue no longer
                // holds it (`removing`), or, where it cannot take it back, says why (SPEC
                // §14.1: a bubble is never hidden while the server will still run it).
                let kept =
                    self.transport == Transport::Native && (item.removing || item.error.is_some());
                assert!(
                    !rec.removed || adopted || kept,
                    "a removed item is visible again: {item:?}"
                );
            }
        }
    }

    /// The settled session's history agrees with the server's canonical one: the messages
    /// both have are equal and in the same order, the client has no assistant message the
    /// server does not, and no user message twice.
    fn check_history(&mut self, session: &str) {
        let canonical = self.server.session(session).canonical.clone();
        let client: Vec<Value> = self
            .page
            .store
            .messages()
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            // Over pi-native a message's metadata carries the protocol's fields (status,
            // clientNonce, …), which the server's canonical copy leaves out.
            .map(|m| match self.transport {
                Transport::Native => {
                    serde_json::json!({"id": m["id"], "role": m["role"], "parts": m["parts"]})
                }
                Transport::Sse => m,
            })
            .collect();
        let ids = |list: &[Value]| -> HashSet<String> {
            list.iter()
                .map(|m| m["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (canon_ids, client_ids) = (ids(&canonical), ids(&client));
        let shared_client: Vec<&Value> = client
            .iter()
            .filter(|m| canon_ids.contains(m["id"].as_str().unwrap()))
            .collect();
        let shared_canon: Vec<&Value> = canonical
            .iter()
            .filter(|m| client_ids.contains(m["id"].as_str().unwrap()))
            .collect();
        let brief = |list: &[&Value]| -> Vec<String> {
            list.iter()
                .map(|m| format!("{}:{}:{}", m["id"], m["role"], m["parts"]))
                .collect()
        };
        assert!(
            shared_client == shared_canon,
            "{session}: the history differs from the server's\nclient: {:#?}\nserver: {:#?}",
            brief(&shared_client),
            brief(&shared_canon)
        );
        let mut users = HashSet::new();
        for m in &client {
            if !canon_ids.contains(m["id"].as_str().unwrap()) {
                // Only the optimistic message of a send the server refused.
                assert_eq!(
                    m["role"], "user",
                    "{session}: a message the server never had: {m}"
                );
                let text = m["parts"][0]["text"].as_str().unwrap_or_default();
                assert!(
                    !self.server.commits.iter().any(|c| c.text == text),
                    "{session}: {text:?} is shown twice (the server has it under another id)"
                );
                (self.final_unsent.entry(session.to_string()).or_default())
                    .insert(text.to_string());
            }
            if m["role"] == "user" {
                let text = m["parts"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                assert!(
                    users.insert(text.clone()),
                    "{session}: {text:?} shown twice"
                );
            }
        }
    }

    /// Checked when a page ends (a reload, the end of the schedule), over pi-native: the
    /// bad lines its events streams carried are each one loss, none carried again once the
    /// stream went past it, and its reads stay few per second.
    pub(super) fn check_page_end(&mut self) {
        if self.transport != Transport::Native {
            return;
        }
        let losses = self.check_lines();
        *(self.server.stats)
            .entry("hostile: line losses the pages recorded")
            .or_default() += losses as u64;
        let busiest = self.busiest_second(false);
        self.busiest_second = self.busiest_second.max(busiest);
        self.busiest_second_all = (self.busiest_second_all).max(self.busiest_second(true));
        assert!(
            busiest <= MAX_READS_PER_SECOND,
            "READ_RATE: page {} made {busiest} reads within one second that neither an opening \
             of a session nor a command's answer made (at most {MAX_READS_PER_SECOND})",
            self.page_no
        );
    }

    /// Every loss-making bad line the page's events streams carried is recorded as one loss
    /// (the store says each with an event whose message begins "an event"), and no line is
    /// carried to the page again unless the connection that carried it stopped before the
    /// next event with a seq (the line itself, if it takes one): the cursor went past it, so
    /// a reconnect from it would be a re-download loop.
    fn check_lines(&self) -> usize {
        let page = self.page_no;
        let server = &self.server;
        assert_eq!(server.conns.len(), server.events_served.len());
        let (mut carried_lost, mut maybe_carried) = (0, 0);
        let mut carried: BTreeMap<(&str, usize), Vec<usize>> = BTreeMap::new();
        for (c, start) in server.conns.iter().zip(&server.events_served) {
            if c.page != page {
                continue;
            }
            let log = &server.sessions[&c.session].log;
            for (i, line) in log.iter().enumerate().take(c.pos).skip(*start) {
                if let Some(bad) = line.bad {
                    carried_lost += usize::from(bad.is_loss());
                    carried.entry((&c.session, i)).or_default().push(c.pos);
                }
            }
            // Carried whole, but the store closed the stream while taking it: not counted in
            // the connection's place.
            if !c.open && (log.get(c.pos)).is_some_and(|l| l.bad.is_some_and(BadLine::is_loss)) {
                maybe_carried += 1;
            }
        }
        let losses = (self.page.events.iter())
            .filter(|e| match e {
                StoreEvent::Error { error } => error.message.starts_with("an event"),
                StoreEvent::Diagnostic { message } => message.starts_with("an event"),
                _ => false,
            })
            .count();
        assert!(
            carried_lost <= losses && losses <= carried_lost + maybe_carried,
            "LOSSES: page {page} recorded {losses} losses of lines; its streams carried \
             {carried_lost} bad lines (+{maybe_carried} maybe)"
        );
        for ((session, i), ends) in &carried {
            let log = &server.sessions[*session].log;
            let next_seq = (*i..log.len())
                .find(|&j| log[j].seq.is_some())
                .unwrap_or(log.len());
            for end in &ends[..ends.len() - 1] {
                assert!(
                    *end <= next_seq,
                    "RE_DOWNLOAD: page {page} was sent bad line {i} of {session} ({:?}) again \
                     after a stream carried it and the event after it (up to line {end})",
                    log[*i].bad
                );
            }
        }
        losses
    }

    /// The most reads (`/state`, `/events`) the page made within one simulated second, not
    /// counting those an opening of a session made, nor (unless `receipts`) those made on a
    /// command's answer.
    fn busiest_second(&self, receipts: bool) -> usize {
        let at: Vec<u64> = (self.reads.iter())
            .filter(|r| r.page == self.page_no && !r.opening && (receipts || !r.on_receipt))
            .map(|r| r.at)
            .collect();
        (0..at.len())
            .map(|i| at[i..].iter().take_while(|&&t| t < at[i] + 1_000).count())
            .max()
            .unwrap_or(0)
    }

    fn check_final(&self) {
        // Server commits by text.
        let mut commits: HashMap<&str, Vec<&Commit>> = HashMap::new();
        for c in &self.server.commits {
            commits.entry(c.text.as_str()).or_default().push(c);
        }
        let item_texts: HashSet<&str> = self.items.iter().map(|i| i.text.as_str()).collect();
        for c in &self.server.commits {
            assert!(
                item_texts.contains(c.text.as_str()) || self.turn_texts.contains(&c.text),
                "the server committed something nobody wrote: {c:?}"
            );
        }
        // One nonce per item, as the server saw it (its own, or one it had before the store
        // queued it again).
        let mut nonces: HashMap<&str, HashSet<&str>> = HashMap::new();
        for p in &self.server.posts {
            nonces
                .entry(p.text.as_str())
                .or_default()
                .insert(p.nonce.as_str());
        }
        for item in &self.items {
            if let Some(n) = nonces.get(item.text.as_str()) {
                let own = |x: &&str| *x == item.nonce || item.earlier_nonces.iter().any(|e| e == x);
                assert!(
                    n.len() == 1 && n.iter().all(own),
                    "{:?} reached the server under nonces {n:?} (its own: {}, earlier {:?})",
                    item.text,
                    item.nonce,
                    item.earlier_nonces
                );
            }
            // Its POSTs went to its own session, with one seq, which changes only after the
            // server said `followup_out_of_order` (the item then gets a fresh one), or after
            // a clear of the whole queue took it along (pi-native's server removes nothing
            // by selectors: SPEC §14.1 has the store clear the queue and post the items it
            // did not mean to remove again, in order, each under a fresh seq).
            let posts: Vec<&PostSeen> = self
                .server
                .posts
                .iter()
                .filter(|p| p.text == item.text)
                .collect();
            assert!(posts.iter().all(|p| p.session == item.session));
            let seqs: HashSet<u64> = posts.iter().map(|p| p.seq).collect();
            let refused = posts.iter().filter(|p| p.answer == "out-of-order").count();
            let cleared = self.server.cleared_by_all.get(&item.nonce).copied();
            assert!(
                seqs.len() <= 1 + refused + cleared.unwrap_or(0) as usize,
                "{:?} was posted under seqs {seqs:?}: {posts:?}",
                item.text
            );
            let got = commits.get(item.text.as_str()).map_or(0, Vec::len);
            assert!(
                got <= 1,
                "{:?} was committed {got} times: {:?}",
                item.text,
                commits[item.text.as_str()]
            );
            for c in commits.get(item.text.as_str()).into_iter().flatten() {
                assert_eq!(c.session, item.session, "committed in another session");
                if let Via::FollowUp(n) = &c.via {
                    assert_eq!(*n, item.nonce);
                }
            }
            if item.page != self.page_no {
                continue; // lost with its page unless the server had it: at most once
            }
            let queue = &self.final_queues[&item.session];
            let visible = queue.iter().position(|(id, _, _)| *id == item.id);
            if item.removed {
                assert!(visible.is_none(), "removed {:?} still visible", item.text);
                continue;
            }
            match (got, visible) {
                (1, None) => {}
                (1, Some(_)) => panic!("{:?} was committed and is still queued", item.text),
                (0, Some(i)) => {
                    let (_, text, state) = &queue[i];
                    assert_eq!(text, &item.text, "text changed");
                    // `queued` is an end state only where nothing will post it on its own and
                    // the user is shown why: behind a `failed` item (FIFO), or after the turn
                    // it was queued for failed (the store leaves it for the user to retry as
                    // a new message or remove; tests/store_turn_end.rs pins that choice).
                    // Or after the user stopped the turn it was queued for: a stop does not
                    // send what is queued (SPEC §6).
                    let blocked = queue[..i].iter().any(|(_, _, s)| *s == ItemState::Failed)
                        || self.final_status[&item.session] == Status::Error
                        || item.stopped;
                    assert!(
                        matches!(state, ItemState::Failed | ItemState::Stalled)
                            || (*state == ItemState::Queued && blocked),
                        "{:?} left {state:?} (queue {queue:?})",
                        item.text
                    );
                }
                // Over pi-native the prompt that re-sends an item as a new message meets the
                // network's faults too: one that failed leaves its message in the history,
                // unsent, with the error shown.
                (0, None)
                    if self.transport == Transport::Native
                        && (self.final_unsent.get(&item.session))
                            .is_some_and(|t| t.contains(&item.text)) => {}
                (0, None) => panic!("{:?} was lost: never committed, not visible", item.text),
                _ => unreachable!(),
            }
        }
        // Order: per session and page, committed items in the order queued.
        let mut last: HashMap<(u32, &str), usize> = HashMap::new();
        for c in &self.server.commits {
            if let Some(item) = self.items.iter().find(|i| i.text == c.text) {
                let key = (item.page, item.session.as_str());
                if let Some(prev) = last.get(&key) {
                    assert!(
                        *prev < item.k,
                        "{:?} (#{}) committed after #{prev} of the same page and session",
                        item.text,
                        item.k
                    );
                }
                last.insert(key, item.k);
            }
        }
    }
}

// ===== the test ==============================================================================

/// Reads (`/state`, `/events`) a page makes within one simulated second, at most, besides
/// those of the user opening a session and those made on a command's answer: the link's
/// recoveries go at most two within 0.75 s (`src/native_link.rs`), a stream that ends or
/// breaks is connected again, and a bad line or a failed state read makes no burst.
const MAX_READS_PER_SECOND: usize = 6;

struct Outcome {
    items: usize,
    busiest_second: usize,
    busiest_second_all: usize,
    committed: usize,
    failed_or_stalled: usize,
    stats: BTreeMap<&'static str, u64>,
}

fn run_seed(seed: u64, transport: Transport, log: std::rc::Rc<RefCell<Vec<String>>>) -> Outcome {
    let mut w = World::new(seed, transport, log, World::check_step);
    let steps = 40 + w.rng.below(120) as usize;
    w.run(steps);
    w.quiesce();
    w.check_page_end();
    w.check_final();
    let last_page: Vec<&ItemRec> = w.items.iter().filter(|i| i.page == w.page_no).collect();
    Outcome {
        items: w.items.len(),
        committed: w
            .items
            .iter()
            .filter(|i| w.server.commits.iter().any(|c| c.text == i.text))
            .count(),
        failed_or_stalled: last_page
            .iter()
            .filter(|i| {
                w.final_queues[&i.session]
                    .iter()
                    .any(|(id, _, _)| *id == i.id)
            })
            .count(),
        stats: {
            let mut stats = w.server.stats.clone();
            if let Some(h) = &w.server.hostile {
                for (kind, n) in &h.written {
                    *stats.entry(bad_line_stat(*kind)).or_default() += n;
                }
            }
            stats
        },
        busiest_second: w.busiest_second,
        busiest_second_all: w.busiest_second_all,
    }
}

/// The coverage line of a bad line's kind.
fn bad_line_stat(kind: BadLine) -> &'static str {
    match kind {
        BadLine::Elsewhere => "hostile: line for another session",
        BadLine::BomHeartbeat => "hostile: heartbeat after a byte order mark",
        BadLine::Heartbeat => "hostile: heartbeat between events",
        BadLine::StringSeq => "hostile: line with a string seq",
        BadLine::SeqMismatch => "hostile: envelope seq differs from its event's",
        BadLine::Garbage => "hostile: line not JSON",
        BadLine::TrailingGarbage => "hostile: heartbeat with trailing garbage",
        BadLine::NotUtf8 => "hostile: line not UTF-8",
        BadLine::UnknownType => "hostile: event of unknown type (takes a seq)",
        BadLine::Oversize => "hostile: line over limits.maxEventBytes (takes a seq)",
    }
}

/// Runs one seed; on failure, the panic message and the schedule.
fn run_one(seed: u64, transport: Transport) -> (Result<Outcome, String>, Vec<String>) {
    let log = std::rc::Rc::new(RefCell::new(Vec::new()));
    let result = catch_unwind(AssertUnwindSafe(|| run_seed(seed, transport, log.clone())));
    let log = log.borrow().clone();
    let result = result.map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    });
    (result, log)
}

fn print_schedule(seed: u64, log: &[String]) {
    eprintln!("===== fault schedule, seed {seed} =====");
    for line in log {
        eprintln!("{line}");
    }
}

/// Runs the fault schedules over `transport`: one seed (`FAULT_SEED`, its schedule printed),
/// or `FAULT_SEEDS` of them (`default_seeds` unless set), stopping at the first failure
/// unless `FAULT_KEEP_GOING=1`; `test` names the test binary in the replay hint.
pub fn run_schedules(transport: Transport, test: &str, default_seeds: u64) {
    if let Ok(s) = std::env::var("FAULT_SEED") {
        let seed: u64 = s.parse().expect("FAULT_SEED is a number");
        let (result, log) = run_one(seed, transport);
        print_schedule(seed, &log);
        match result {
            Ok(o) => eprintln!(
                "seed {seed}: {} items, {} committed, {} visible at the end; busiest second: \
                 {} reads ({} with those on command answers); server: {:?}",
                o.items,
                o.committed,
                o.failed_or_stalled,
                o.busiest_second,
                o.busiest_second_all,
                o.stats
            ),
            Err(e) => panic!("seed {seed} failed: {e}"),
        }
        return;
    }
    let seeds: u64 = std::env::var("FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seeds);
    // FAULT_KEEP_GOING=1 runs every seed and lists the failures at the end.
    let keep_going = std::env::var("FAULT_KEEP_GOING").is_ok_and(|v| v == "1");
    let (mut items, mut committed, mut visible) = (0, 0, 0);
    let (mut busiest, mut busiest_all) = (0, 0);
    let mut stats: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    for seed in 0..seeds {
        match run_one(seed, transport) {
            (Ok(o), _) => {
                items += o.items;
                committed += o.committed;
                visible += o.failed_or_stalled;
                busiest = busiest.max(o.busiest_second);
                busiest_all = busiest_all.max(o.busiest_second_all);
                for (k, v) in o.stats {
                    *stats.entry(k).or_default() += v;
                }
            }
            (Err(e), log) => {
                if !keep_going {
                    print_schedule(seed, &log);
                    panic!(
                        "seed {seed} failed: {e}\n(replay: FAULT_SEED={seed} cargo test --test suite {test}::)"
                    );
                }
                failures.push((seed, e));
            }
        }
    }
    eprintln!(
        "{seeds} fault schedules ({transport:?}): {items} follow-ups queued, {committed} committed \
         once, {visible} left visible (failed/stalled/blocked) at the end; at most {busiest} \
         reads in a simulated second ({busiest_all} with those made on command answers)"
    );
    for (k, v) in &stats {
        eprintln!("  server: {k}: {v}");
    }
    for (seed, e) in &failures {
        let first = e.lines().next().unwrap_or_default();
        eprintln!("FAILED seed {seed}: {first}");
    }
    assert!(failures.is_empty(), "{} seeds failed", failures.len());
    assert!(items > seeds as usize, "the schedules queue follow-ups");
    assert!(committed > 0, "follow-ups are committed");
    assert!(
        visible > 0,
        "items also end visible (failed/stalled/blocked)"
    );
}
