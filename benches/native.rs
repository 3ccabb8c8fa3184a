//! The core natively, on the bytes the Node bench wrote (issue 6 (g) and the native floor).
//!
//! `node bench/run.mjs` writes `target/bench/manifest.json` and the `.sse` / history files it
//! names, then runs `cargo bench --bench native --features _internal_bench`. Each scenario feeds its SSE bytes, in the
//! manifest's network chunk size, to a core `ChatStore` through `handle_response_body`, and
//! the floor scenario runs the floor: both from `agent_chat_store::bench_scenarios`, the code
//! the wasm `BenchCore` and `benchFloor` exports run. Prints one JSON line per scenario
//! (`{"native": …}`); the Node script reads them. Run it alone with `cargo bench --bench native --features _internal_bench`
//! after the Node script wrote the files (`node bench/run.mjs --only=gen`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use agent_chat_store::bench_scenarios::{self as scen, floor, Core};
use agent_chat_store::Capabilities;
use serde_json::{json, Value};

/// The system allocator, counting the bytes held and their peak: the big-input scenarios
/// report the peak over what was held before them (the native counterpart of the wasm
/// memory's growth).
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        HELD.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        let q = System.realloc(p, l, size);
        if !q.is_null() {
            if size >= l.size() {
                let now = HELD.fetch_add(size - l.size(), Relaxed) + size - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                HELD.fetch_sub(l.size() - size, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` `runs` times: the median time in ms and the peak of bytes held above what was
/// held before (the largest over the runs), with `f`'s last value.
fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, usize, T) {
    let mut times = Vec::with_capacity(runs);
    let mut peak = 0;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let before = HELD.load(Relaxed);
        PEAK.store(before, Relaxed);
        let t = Instant::now();
        let v = std::hint::black_box(f());
        times.push(t.elapsed().as_secs_f64() * 1e3);
        peak = peak.max(PEAK.load(Relaxed) - before);
        last = Some(v);
    }
    (median(&mut times), peak, last.expect("one run"))
}

/// The big inputs of issue 38, generated here (`bench_scenarios`, the bytes the wasm bench
/// gets from `benchInput`): a pi-native `/state` against the messages route's history of
/// the same messages, and a session list loaded page by page, then refreshed after a turn.
/// Run with `--big` (or `--only=` naming them); `--messages=N`, `--sessions=A,B`, `--tiny`
/// (messages of a word each).
fn big(
    only: Option<&str>,
    runs: usize,
    chunk: usize,
    messages: usize,
    sessions: &[usize],
    tiny: bool,
) {
    let wanted = |name: &str| only.is_none_or(|o| o.split(',').any(|x| x == name));
    if wanted("state") || wanted("history") {
        let state = scen::native_state_body(messages, tiny);
        let history = scen::history_body(messages, tiny);
        for (name, body) in [("state", &state), ("history", &history)] {
            if !wanted(name) {
                continue;
            }
            let (ms, peak, n) = timed(runs, || match name {
                "state" => scen::native_state(body, chunk),
                _ => scen::history(body, chunk),
            });
            assert_eq!(n, messages, "{name}: every message shown");
            let tag = if tiny { "tiny" } else { "" };
            let out = json!({"name": format!("{name}{tag}{messages}"), "messages": n,
                "bodyBytes": body.len(), "medianMs": ms, "peakBytes": peak});
            println!("{}", json!({ "native": out }));
        }
    }
    if wanted("reread") {
        // Each run on a store of its own, made outside the timed part.
        let mut times = Vec::new();
        let mut peak = 0;
        for _ in 0..runs {
            let mut r = scen::NativeReread::new(messages);
            let (ms, p, n) = timed(1, || r.reread(chunk));
            assert_eq!(n, messages + 2, "reread: every message shown");
            times.push(ms);
            peak = peak.max(p);
        }
        let out = json!({"name": format!("reread{messages}"), "messages": messages + 2,
            "medianMs": median(&mut times), "peakBytes": peak});
        println!("{}", json!({ "native": out }));
    }
    if wanted("sessions") {
        // Pages of the store's size, then the whole list in one page (a server that ignores
        // `limit`).
        for &n in sessions {
            for (per_page, tag) in [(scen::SESSION_PAGE, ""), (n.max(1), "x1")] {
                let pages = scen::session_pages(n, per_page);
                let (load_ms, peak, (mut run, shown)) = timed(1, || {
                    let mut run = scen::SessionListRun::new();
                    let shown = run.load(&pages);
                    (run, shown)
                });
                assert_eq!(shown, n + 1, "every session and the open one shown");
                let (refresh_ms, _, _) = timed(runs, || run.refresh(&pages[0]));
                let out = json!({"name": format!("sessions{n}{tag}"), "sessions": n,
                    "pages": pages.len(), "medianMs": load_ms, "refreshMs": refresh_ms,
                    "peakBytes": peak});
                println!("{}", json!({ "native": out }));
            }
        }
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    let p = dir.join(name);
    std::fs::read(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run node bench/run.mjs first)", p.display()))
}

fn main() {
    // `cargo bench` passes `--bench`; the rest are ours.
    let mut dir = PathBuf::from("target/bench");
    let mut only: Option<String> = None;
    let mut big_only = false;
    let mut tiny = false;
    let mut messages = 50_000;
    let mut sessions = vec![40_000, 100_000];
    for arg in std::env::args().skip(1) {
        if arg == "--big" {
            big_only = true;
        } else if arg == "--tiny" {
            tiny = true;
        } else if let Some(n) = arg.strip_prefix("--messages=") {
            messages = n.parse().expect("--messages=N");
        } else if let Some(n) = arg.strip_prefix("--sessions=") {
            sessions = n
                .split(',')
                .map(|x| x.parse().expect("--sessions=A,B"))
                .collect();
        } else if let Some(d) = arg.strip_prefix("--dir=") {
            dir = PathBuf::from(d);
        } else if let Some(o) = arg.strip_prefix("--only=") {
            only = Some(o.to_string());
        }
    }
    let big_named = only.as_deref().is_some_and(|o| {
        o.split(',')
            .any(|x| ["state", "history", "reread", "sessions"].contains(&x))
    });
    if big_only || big_named {
        big(
            only.as_deref().filter(|_| big_named),
            5,
            16 * 1024,
            messages,
            &sessions,
            tiny,
        );
        return;
    }
    let manifest: Value =
        serde_json::from_slice(&read(&dir, "manifest.json")).expect("manifest.json is JSON");
    let chunk = manifest["chunkSize"].as_u64().unwrap_or(16384) as usize;
    let runs = manifest["nativeRuns"].as_u64().unwrap_or(5) as usize;
    let list = manifest["native"].as_array().cloned().unwrap_or_default();
    for s in list {
        let name = s["name"].as_str().unwrap_or("?").to_string();
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let bytes = read(&dir, s["file"].as_str().expect("file"));
        let mut times = Vec::with_capacity(runs);
        let mut out = json!({ "name": name });
        if s["kind"].as_str() == Some("floor") {
            let mut len = 0;
            for _ in 0..runs {
                let t = Instant::now();
                len = std::hint::black_box(floor(std::hint::black_box(&bytes), chunk));
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            out["textLength"] = json!(len);
        } else {
            let caps = Capabilities::from_json(s["capabilities"].to_string().as_bytes())
                .expect("capabilities");
            let history = s["history"].as_str().map(|f| read(&dir, f));
            let mut last = String::new();
            let mut messages = 0;
            for _ in 0..runs {
                // A fresh store per run (hydration is not timed), as in the Node bench.
                let mut core = Core::new(Some(caps), history.as_deref());
                let t = Instant::now();
                messages = std::hint::black_box(core.run(std::hint::black_box(&bytes), chunk))
                    .expect("the chat request");
                times.push(t.elapsed().as_secs_f64() * 1e3);
                last = core.last_message_json();
            }
            out["messages"] = json!(messages);
            out["lastMessageBytes"] = json!(last.len());
        }
        out["runsMs"] = json!(times.clone());
        out["medianMs"] = json!(median(&mut times));
        println!("{}", json!({ "native": out }));
    }
}
