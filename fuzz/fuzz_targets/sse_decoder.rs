//! The SSE decoder on arbitrary bytes split at arbitrary points.
//!
//! Input: `[limit selector][finish selector][8-byte split seed][body…]` (fixture seeds are the
//! fixture bodies behind 10 header bytes). Invariants:
//! - never panics;
//! - the body split anywhere (empty pushes included, a reconnection's `finish()` at the same
//!   offset included) gives the same items, the same last event id, the same count and the
//!   same cut report as the same body pushed whole;
//! - no dispatched event is larger than the limit allows (3 bytes per raw byte: invalid UTF-8
//!   becomes U+FFFD);
//! - the decoder's own heap stays bounded by the limit, whatever the body's length.
#![no_main]

use std::hash::{Hash, Hasher};

use agent_chat_store::{SseDecoder, SseItem, DEFAULT_MAX_EVENT_BYTES};
use agent_chat_store_fuzz::alloc_count::{self, Counting};
use agent_chat_store_fuzz::SplitMix;
use libfuzzer_sys::fuzz_target;

#[global_allocator]
static ALLOC: Counting = Counting;

#[derive(Debug, PartialEq)]
struct Outcome {
    items: Vec<SseItem>,
    last_id: Option<String>,
    dispatched: u64,
    cuts: Vec<bool>,
}

fn limit_of(sel: u8) -> usize {
    match sel {
        0 => DEFAULT_MAX_EVENT_BYTES,
        1..=200 => sel as usize,
        _ => (sel as usize - 200) * 64,
    }
}

/// Pushes each segment whole (or in `pieces` per segment), `finish()` after each.
fn run(segments: &[&[u8]], limit: usize, mut split: Option<SplitMix>) -> Outcome {
    let mut d = SseDecoder::with_max_event_bytes(limit);
    let mut items = Vec::new();
    let mut cuts = Vec::new();
    for seg in segments {
        match split.as_mut() {
            None => d.push_into(seg, &mut items),
            Some(rng) => {
                let max = [1usize, 2, 3, 5, 17, 256, usize::MAX][(rng.next_u64() % 7) as usize];
                let mut rest = *seg;
                loop {
                    let n = ((rng.next_u64() as usize) % max.saturating_add(1)).min(rest.len());
                    let (a, b) = rest.split_at(n);
                    d.push_into(a, &mut items);
                    rest = b;
                    if rest.is_empty() {
                        break;
                    }
                }
            }
        }
        cuts.push(d.finish());
    }
    Outcome {
        last_id: d.last_event_id().map(str::to_owned),
        dispatched: d.events_dispatched(),
        items,
        cuts,
    }
}

/// The split run again, dropping items as they come (folded into a hash) and measuring the
/// decoder's heap after every push.
fn memory_run(segments: &[&[u8]], limit: usize, mut rng: SplitMix) -> (u64, usize) {
    let mut d = SseDecoder::with_max_event_bytes(limit);
    let base = alloc_count::live();
    let bound = 32 * limit + 1024;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut count = 0;
    for seg in segments {
        let max = [1usize, 2, 3, 5, 17, 256, usize::MAX][(rng.next_u64() % 7) as usize];
        let mut rest = *seg;
        loop {
            let n = ((rng.next_u64() as usize) % max.saturating_add(1)).min(rest.len());
            let (a, b) = rest.split_at(n);
            let mut out = Vec::new();
            d.push_into(a, &mut out);
            for item in &out {
                format!("{item:?}").hash(&mut h);
                count += 1;
            }
            drop(out);
            let held = alloc_count::live().saturating_sub(base);
            assert!(
                held <= bound,
                "the decoder holds {held} bytes with a limit of {limit} (after {} of {} bytes)",
                seg.len() - b.len(),
                seg.len()
            );
            rest = b;
            if rest.is_empty() {
                break;
            }
        }
        d.finish();
    }
    (h.finish(), count)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let limit = limit_of(data[0]);
    let body = &data[10..];
    let cut_at = (body.len() * data[1] as usize) / 256;
    let segments: Vec<&[u8]> = if data[1] == 0 {
        vec![body]
    } else {
        vec![&body[..cut_at], &body[cut_at..]]
    };
    let seed = u64::from_le_bytes(data[2..10].try_into().unwrap());

    let whole = run(&segments, limit, None);
    let split = run(&segments, limit, Some(SplitMix(seed)));
    assert_eq!(whole, split, "splitting changed the decoded events");
    for ev in whole.items.iter().flatten() {
        assert!(
            ev.data.len() <= 3 * limit,
            "event of {} bytes",
            ev.data.len()
        );
        assert!(ev.event.as_ref().is_none_or(|e| e.len() <= 3 * limit));
    }
    if limit != DEFAULT_MAX_EVENT_BYTES {
        let (hash, count) = memory_run(&segments, limit, SplitMix(seed));
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for item in &whole.items {
            format!("{item:?}").hash(&mut h);
        }
        assert_eq!((hash, count), (h.finish(), whole.items.len()));
    }
});
