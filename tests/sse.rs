//! The SSE decoder against recorded server traces and against the ways a network splits bytes.

use agent_chat_store::{SseDecoder, SseError, SseEvent, SseItem};
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/legacy-server");

/// Every `.sse` trace (tests/fixtures/README.md): a missing folder or trace fails the test.
fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = std::fs::read_dir(Path::new(FIXTURES))
        .unwrap_or_else(|e| panic!("fixture folder {FIXTURES}: {e}"));
    let mut files: Vec<_> = dir
        .map(|e| {
            e.unwrap_or_else(|e| panic!("fixture folder {FIXTURES}: {e}"))
                .path()
        })
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let body = std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()));
            (name, body)
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "the three legacy traces in {FIXTURES}");
    files
}

/// Decodes `chunks` as one body and checks the body was not cut.
fn decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseItem> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    for c in chunks {
        d.push_into(c, &mut out);
    }
    assert!(!d.finish(), "body reported as cut");
    out
}

fn whole(body: &[u8]) -> Vec<SseItem> {
    decode([body])
}

fn byte_by_byte(body: &[u8]) -> Vec<SseItem> {
    decode(body.chunks(1))
}

/// Splits `body` in two at every offset and checks each split decodes like `expected`.
fn assert_every_split(name: &str, body: &[u8], expected: &[SseItem]) {
    for at in 0..=body.len() {
        let (a, b) = body.split_at(at);
        assert_eq!(decode([a, b]), expected, "{name} split at {at}");
    }
}

fn data(data: &str) -> SseItem {
    Ok(SseEvent {
        data: data.into(),
        id: None,
        event: None,
    })
}

fn with_line_ends(body: &[u8], eol: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() * 2);
    for &b in body {
        if b == b'\n' {
            out.extend_from_slice(eol);
        } else {
            out.push(b);
        }
    }
    out
}

#[test]
fn fixtures_decode_identically_however_split() {
    for (name, body) in fixtures() {
        let expected = whole(&body);
        assert!(!expected.is_empty(), "{name}: no events");
        for item in &expected {
            let ev = item.as_ref().expect("no errors in fixtures");
            assert!(
                ev.data == "[DONE]" || serde_json::from_str::<serde_json::Value>(&ev.data).is_ok(),
                "{name}: data is neither JSON nor [DONE]: {}",
                ev.data
            );
        }
        assert_eq!(expected.last(), Some(&data("[DONE]")), "{name}");
        assert_every_split(&name, &body, &expected);
        assert_eq!(byte_by_byte(&body), expected, "{name} byte by byte");
    }
}

#[test]
fn fixtures_decode_identically_with_crlf_and_cr_line_ends() {
    for (name, body) in fixtures() {
        let expected = whole(&body);
        for eol in [&b"\r\n"[..], b"\r"] {
            let converted = with_line_ends(&body, eol);
            let label = format!("{name} with {eol:?}");
            assert_eq!(whole(&converted), expected, "{label}");
            assert_eq!(byte_by_byte(&converted), expected, "{label} byte by byte");
            // Every CR/LF pair gets split across two pushes at some offset.
            assert_every_split(&label, &converted, &expected);
        }
    }
}

#[test]
fn bom_split_across_pushes() {
    let body = b"\xEF\xBB\xBFdata: first\n\ndata: second\n\n";
    let expected = vec![data("first"), data("second")];
    assert_eq!(whole(body), expected);
    assert_every_split("bom", body, &expected);
    assert_eq!(byte_by_byte(body), expected);
}

#[test]
fn multibyte_utf8_split_at_every_offset() {
    let body = "event: mañana\ndata: héllo 😀\ndata: ∑ 日本\n\n".as_bytes();
    let expected = vec![Ok(SseEvent {
        data: "héllo 😀\n∑ 日本".into(),
        id: None,
        event: Some("mañana".into()),
    })];
    assert_eq!(whole(body), expected);
    assert_every_split("utf-8", body, &expected);
    assert_eq!(byte_by_byte(body), expected);
}

#[test]
fn multi_line_data_comments_id_and_event_name() {
    let body = b": hello\n\
        id: 41\n\
        event: delta\n\
        data: line one\n\
        : a comment inside an event\n\
        data:line two\n\
        data:  three\n\
        retry: 1000\n\
        unknown: field\n\
        \n\
        data: {\"type\":\"finish\"}\n\
        \n\
        id: 42\n\
        \n\
        data: [DONE]\n\
        \n";
    let mut d = SseDecoder::new();
    let out = d.push(body);
    let event = |data: &str, id: &str, event: Option<&str>| -> SseItem {
        Ok(SseEvent {
            data: data.into(),
            id: Some(id.into()),
            event: event.map(Into::into),
        })
    };
    assert_eq!(
        out,
        vec![
            event("line one\nline two\n three", "41", Some("delta")),
            event("{\"type\":\"finish\"}", "41", None),
            event("[DONE]", "42", None),
        ]
    );
    assert_eq!(d.last_event_id(), Some("42"));
    assert_eq!(d.events_dispatched(), 3);
    assert!(!d.finish());
    assert_every_split("fields", body, &out);
}

#[test]
fn ten_megabyte_event_over_a_one_megabyte_limit() {
    const MB: usize = 1024 * 1024;
    let big = "x".repeat(10 * MB);
    // One huge line, and the same size spread over many lines that each fit.
    let many_lines = format!("data: {}\n", "y".repeat(1000)).repeat(10 * MB / 1000);
    for huge in [format!("data: {big}\n"), many_lines] {
        let body = format!("data: before\n\nid: 1\n{huge}\ndata: after\n\n");
        for chunk in [body.len(), 64 * 1024, 4093] {
            let mut d = SseDecoder::with_max_event_bytes(MB);
            let mut out = Vec::new();
            for c in body.as_bytes().chunks(chunk) {
                d.push_into(c, &mut out);
            }
            assert!(!d.finish());
            assert_eq!(
                out,
                vec![
                    data("before"),
                    Err(SseError::EventTooLarge { limit: MB }),
                    Ok(SseEvent {
                        data: "after".into(),
                        id: Some("1".into()),
                        event: None,
                    }),
                ],
                "chunks of {chunk}"
            );
            assert_eq!(d.events_dispatched(), 3);
        }
    }
}

#[test]
fn finish_after_a_cut_mid_event_discards_it() {
    let body = b"data: kept\n\nid: 9\nevent: e\ndata: {\"type\":\"text-del";
    for at in 0..=body.len() {
        let (a, b) = body.split_at(at);
        let mut d = SseDecoder::new();
        let mut out = d.push(a);
        d.push_into(b, &mut out);
        assert_eq!(out, vec![data("kept")]);
        assert!(d.finish(), "cut at end not reported (split at {at})");
        assert_eq!(
            d.last_event_id(),
            None,
            "the cut event's id is not committed"
        );
        assert_eq!(d.events_dispatched(), 1);
    }
    // Cut right after a complete line but before the blank line.
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: x\n").is_empty());
    assert!(d.finish());
}
