//! The core natively, on the bytes the Node bench wrote (issue 6 (g) and the native floor).
//!
//! `node bench/run.mjs` writes `target/bench/manifest.json` and the `.sse` / history files it
//! names, then runs `cargo bench --bench native --features _internal_bench`. Each scenario feeds its SSE bytes, in the
//! manifest's network chunk size, to a core `ChatStore` through `handle_response_body`, and
//! the floor scenario runs the floor: both from `agent_chat_store::bench_scenarios`, the code
//! the wasm `BenchCore` and `benchFloor` exports run. Prints one JSON line per scenario
//! (`{"native": …}`); the Node script reads them. Run it alone with `cargo bench --bench native --features _internal_bench`
//! after the Node script wrote the files (`node bench/run.mjs --only=gen`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use agent_chat_store::bench_scenarios::{floor, Core};
use agent_chat_store::Capabilities;
use serde_json::{json, Value};

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
    for arg in std::env::args().skip(1) {
        if let Some(d) = arg.strip_prefix("--dir=") {
            dir = PathBuf::from(d);
        } else if let Some(o) = arg.strip_prefix("--only=") {
            only = Some(o.to_string());
        }
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
