//! Incremental Server-Sent Events decoder: bytes in, events out.
//!
//! It follows the WHATWG "event stream interpretation" algorithm
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>)
//! exactly, because the servers we talk to are written against browsers' `EventSource`, and any
//! divergence (a second stripped space, a dispatched empty event, a lost CR/LF pair) would show up
//! as a corrupted JSON chunk only on some networks.
//!
//! The network splits the body anywhere: inside a CRLF pair, inside the BOM, inside a multi-byte
//! UTF-8 character. So the decoder never decodes text before a line is complete: it keeps the
//! raw bytes of the unfinished line and decodes at the line end. Splitting the raw bytes on
//! `\r`/`\n`/`:` is the same as splitting the decoded text, since UTF-8 never uses ASCII bytes
//! inside a multi-byte sequence and a lossy decoder never swallows an ASCII byte.
//!
//! Memory is bounded by the event-size limit: an oversized event is reported once and then
//! dropped byte by byte until the next blank line, never buffered. A body of 100,000 events is
//! decoded with one scan per byte: complete lines are parsed straight from the input slice, and
//! only the tail of an unfinished line is copied.

use std::borrow::Cow;
use std::mem;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `data:` lines of the event joined with `\n` (WHATWG drops the final `\n`).
    pub data: String,
    /// The last event id at dispatch time. Like `EventSource.lastEventId` it persists across
    /// events until the server sends another `id:`; `None` when it is empty.
    pub id: Option<String>,
    /// The `event:` field; `None` when absent or empty (the browser's default `message` type).
    pub event: Option<String>,
}

/// What can go wrong while decoding. Malformed lines are not errors: WHATWG ignores them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The current event grew past the limit; it was dropped up to the next blank line.
    #[error("event larger than {limit} bytes")]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
}

/// One decoded item: an event, or the report of an event that was dropped.
pub type SseItem = Result<SseEvent, SseError>;

/// Where the decoder puts what it decodes. The decoder lends each event's fields only for the
/// call, so a sink that needs no owned copy (the store's [`SseBatch`]) costs no allocation per
/// event.
pub trait SseSink {
    /// A dispatched event: its data, the last event id (`None` when empty) and its type
    /// (`None` when absent or empty).
    fn event(&mut self, data: &str, id: Option<&str>, event: Option<&str>);
    /// An event over the size limit was dropped; `head` is the start of its data (at most
    /// [`HEAD_BYTES`]), to say what was lost.
    fn too_large(&mut self, limit: usize, head: &str);
}

/// How much of a dropped event's data is kept to say what it was (its chunk type, its tool
/// call): enough for the keys a chunk puts before its payload.
pub const HEAD_BYTES: usize = 512;

/// An event dropped as too large, as the store's batch reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped<'a> {
    /// The limit that was exceeded, in bytes.
    pub limit: usize,
    /// The start of the event's data (at most [`HEAD_BYTES`]).
    pub head: &'a str,
}

impl SseSink for Vec<SseItem> {
    fn event(&mut self, data: &str, id: Option<&str>, event: Option<&str>) {
        self.push(Ok(SseEvent {
            data: data.to_owned(),
            id: id.map(str::to_owned),
            event: event.map(str::to_owned),
        }));
    }

    fn too_large(&mut self, limit: usize, _head: &str) {
        self.push(Err(SseError::EventTooLarge { limit }));
    }
}

/// The data of the events of one network read, in one buffer that is reused read after read:
/// the store's sink. The store reads only an event's data (resume uses the decoder's
/// [`last_event_id`](SseDecoder::last_event_id)), so ids and types are not kept.
#[derive(Debug, Default, Clone)]
pub struct SseBatch {
    text: String,
    /// Per item: the end of its data in `text` (it starts where the previous one ended), or
    /// for an event dropped as too large the limit and the end of its head.
    ends: Vec<Result<usize, (usize, usize)>>,
}

impl SseBatch {
    /// The items in order: an event's data, or the report of a dropped event.
    pub fn iter(&self) -> impl Iterator<Item = Result<&str, Skipped<'_>>> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |item| {
            let (Ok(end) | Err((_, end))) = *item;
            let text = &self.text[start..end];
            start = end;
            match *item {
                Ok(_) => Ok(text),
                Err((limit, _)) => Err(Skipped { limit, head: text }),
            }
        })
    }

    /// Empties the batch, keeping its buffers for the next read (unless a huge event grew
    /// them: that memory goes back).
    pub fn clear(&mut self) {
        self.text.clear();
        if self.text.capacity() > KEEP_BYTES {
            self.text = String::new();
        }
        self.ends.clear();
    }
}

impl SseSink for SseBatch {
    fn event(&mut self, data: &str, _id: Option<&str>, _event: Option<&str>) {
        self.text.push_str(data);
        self.ends.push(Ok(self.text.len()));
    }

    fn too_large(&mut self, limit: usize, head: &str) {
        self.text.push_str(head);
        self.ends.push(Err((limit, self.text.len())));
    }
}

/// Generous enough for a full message snapshot in one event, small enough that a broken server
/// cannot exhaust a browser tab's memory.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// Buffers reused from event to event (and read to read) are kept up to this size; one grown
/// past it by a huge event is freed rather than held for the rest of the stream.
const KEEP_BYTES: usize = 1 << 20;

/// What happens to the bytes of the current, unfinished line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Collected in `SseDecoder::line` (which may still be empty).
    Keep,
    /// A comment: dropped unread, so keep-alive padding never counts against the limit.
    Comment,
    /// A non-blank line of an oversized event: dropped.
    Skip,
}

/// The incremental decoder. Feed it the body with [`push_into`](Self::push_into) in chunks of
/// any size, then call [`finish`](Self::finish) at the end of the body.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    limit: usize,
    /// Raw bytes of the unfinished line (only when `mode` is `Keep`).
    line: Vec<u8>,
    mode: Line,
    /// WHATWG data buffer: every `data:` value followed by `\n`.
    data: String,
    /// WHATWG event type buffer.
    event_type: String,
    /// WHATWG last event ID buffer: set by `id:` lines, committed at the next blank line.
    id_buffer: String,
    /// The event source's last event ID string: what a reconnect sends as `Last-Event-ID`.
    last_event_id: String,
    /// The previous byte was a CR ending a line; a LF right after it (even in the next push)
    /// belongs to the same line end.
    after_cr: bool,
    /// Bytes of a leading BOM matched so far; 3 once the start of the stream is behind us.
    bom: u8,
    /// An oversized event was reported; everything is dropped until the next blank line.
    skipping_event: bool,
    /// A field line was read since the last blank line, so the body ending now would cut an event.
    in_event: bool,
    dispatched: u64,
    /// Comment lines read (`: heartbeat`): a server's beats, told from its data.
    comments: u64,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the [`DEFAULT_MAX_EVENT_BYTES`] limit.
    pub fn new() -> Self {
        Self::with_max_event_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder that reports [`SseError::EventTooLarge`] once the raw bytes of one event (its
    /// pending line, data buffer and event type) exceed `limit`.
    pub fn with_max_event_bytes(limit: usize) -> Self {
        Self {
            limit,
            line: Vec::new(),
            mode: Line::Keep,
            data: String::new(),
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            after_cr: false,
            bom: 0,
            skipping_event: false,
            in_event: false,
            dispatched: 0,
            comments: 0,
        }
    }

    /// Feeds bytes split anywhere; hands completed items to `out` (a `Vec<SseItem>` or an
    /// [`SseBatch`]), so a caller that decodes a long stream reuses its buffers instead of
    /// allocating per network chunk.
    pub fn push_into(&mut self, mut bytes: &[u8], out: &mut dyn SseSink) {
        // The BOM may arrive a byte at a time: hold a matching prefix until it is decided.
        while self.bom < 3 {
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            if b == BOM[self.bom as usize] {
                self.bom += 1;
                bytes = rest;
            } else {
                let held = mem::replace(&mut self.bom, 3) as usize;
                self.feed(&BOM[..held], out);
            }
        }
        self.feed(bytes, out);
    }

    /// Convenience over [`push_into`](Self::push_into) for tests and one-shot callers.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseItem> {
        let mut out = Vec::new();
        self.push_into(bytes, &mut out);
        out
    }

    /// End of body. An event not terminated by a blank line is discarded, as WHATWG says, and
    /// its `id:` is not committed. Returns true if something was discarded, i.e. the body was
    /// cut mid-event (an unfinished comment alone does not count). The decoder is then ready for
    /// the next body of a reconnection, keeping [`last_event_id`](Self::last_event_id) and
    /// [`events_dispatched`](Self::events_dispatched).
    pub fn finish(&mut self) -> bool {
        let cut = self.in_event
            || self.skipping_event
            || !self.line.is_empty()
            || (self.bom > 0 && self.bom < 3);
        self.line.clear();
        self.mode = Line::Keep;
        self.data.clear();
        self.event_type.clear();
        self.id_buffer.clone_from(&self.last_event_id);
        self.after_cr = false;
        self.bom = 0;
        self.skipping_event = false;
        self.in_event = false;
        cut
    }

    /// The last `id:` committed by a blank line (WHATWG's last event ID string), for the
    /// `Last-Event-ID` of a resume; `None` when empty.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// Count of items emitted so far, an [`SseError::EventTooLarge`] included: resume cursors
    /// count events when the server sends no ids, and the server counted the dropped one too.
    pub fn events_dispatched(&self) -> u64 {
        self.dispatched
    }

    /// Count of comment lines (`:` first) read so far, an unfinished one included: the
    /// keep-alive beats a server sends between events. Kept across [`finish`](Self::finish),
    /// like the events' count.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    #[cfg_attr(optimize_hot_path, optimize(speed))]
    fn feed(&mut self, mut rest: &[u8], out: &mut dyn SseSink) {
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = crate::codec::scan::line_end(rest) {
            let line = &rest[..i];
            if self.mode == Line::Keep
                && self.line.is_empty()
                && !self.skipping_event
                && self.fits(line.len())
            {
                // The whole line is in this chunk: parse it in place, no copy.
                self.process_line(line, out);
            } else {
                self.append(line, out);
                self.end_line(out);
            }
            let cr = rest[i] == b'\r';
            rest = &rest[i + 1..];
            if cr {
                match rest.first() {
                    None => self.after_cr = true,
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                }
            }
        }
        self.append(rest, out);
    }

    fn fits(&self, extra: usize) -> bool {
        self.line.len() + extra + self.data.len() + self.event_type.len() <= self.limit
    }

    /// Adds bytes to the unfinished line, or drops them (comment, oversized event).
    fn append(&mut self, bytes: &[u8], out: &mut dyn SseSink) {
        if bytes.is_empty() || self.mode != Line::Keep {
            return;
        }
        if self.skipping_event {
            self.mode = Line::Skip;
        } else if self.line.is_empty() && bytes[0] == b':' {
            self.comments += 1;
            self.mode = Line::Comment;
        } else if !self.fits(bytes.len()) {
            out.too_large(self.limit, &self.head(bytes));
            self.dispatched += 1;
            self.line.clear();
            self.data.clear();
            self.event_type.clear();
            self.in_event = false;
            self.skipping_event = true;
            self.mode = Line::Skip;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    /// The start of the data of the event being dropped, `bytes` the rest of its current line.
    fn head(&self, bytes: &[u8]) -> String {
        let data = self.data.as_bytes();
        let mut head = data[..data.len().min(HEAD_BYTES)].to_vec();
        if head.len() < HEAD_BYTES {
            let line = [&self.line[..], bytes].concat();
            if let Some(value) = line.strip_prefix(b"data:") {
                head.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
            }
        }
        head.truncate(HEAD_BYTES);
        // Cut inside a character: its bytes go.
        let valid = match std::str::from_utf8(&head) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        head.truncate(valid);
        String::from_utf8(head).unwrap_or_default()
    }

    /// A line end after the bytes collected by `append`.
    fn end_line(&mut self, out: &mut dyn SseSink) {
        match mem::replace(&mut self.mode, Line::Keep) {
            Line::Comment | Line::Skip => {}
            // Nothing was kept while skipping, so this line is blank: the oversized event ends.
            Line::Keep if self.skipping_event => {
                self.skipping_event = false;
                self.process_line(&[], out);
            }
            Line::Keep => {
                let line = mem::take(&mut self.line);
                self.process_line(&line, out);
                self.line = line;
                self.line.clear();
                if self.line.capacity() > KEEP_BYTES {
                    self.line = Vec::new();
                }
            }
        }
    }

    /// WHATWG "process the line" on a complete line without its line end.
    #[cfg_attr(optimize_hot_path, optimize(speed))]
    fn process_line(&mut self, line: &[u8], out: &mut dyn SseSink) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            self.comments += 1;
            return;
        }
        self.in_event = true;
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                self.data.push_str(&decode(value));
                self.data.push('\n');
            }
            b"event" => {
                self.event_type.clear();
                self.event_type.push_str(&decode(value));
            }
            // A NUL would make the id unsendable as a header, so WHATWG ignores the field.
            b"id" if !value.contains(&0) => {
                self.id_buffer.clear();
                self.id_buffer.push_str(&decode(value));
            }
            // `retry` is the transport's business (the store has its own backoff); unknown
            // fields are ignored by WHATWG.
            _ => {}
        }
    }

    /// WHATWG "dispatch the event" at a blank line.
    fn dispatch(&mut self, out: &mut dyn SseSink) {
        self.in_event = false;
        // The id is committed even when there is no data: a server may send `id:` alone to
        // move the resume point.
        if self.last_event_id != self.id_buffer {
            self.last_event_id.clone_from(&self.id_buffer);
        }
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        // Lent to the sink, then cleared: the buffers keep their capacity for the next event.
        let data = &self.data[..self.data.len() - 1];
        let event = (!self.event_type.is_empty()).then_some(self.event_type.as_str());
        out.event(data, self.last_event_id(), event);
        self.data.clear();
        if self.data.capacity() > KEEP_BYTES {
            self.data = String::new(); // a huge event's buffer is not kept for the stream's life
        }
        self.event_type.clear();
        self.dispatched += 1;
    }
}

/// UTF-8 with U+FFFD for invalid bytes, as the WHATWG decoder does; borrows when valid.
/// `from_utf8` first: it checks a valid line (the usual case) several times faster than the
/// lossy decoder's chunk iterator does.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(data: &str) -> SseItem {
        Ok(SseEvent {
            data: data.into(),
            id: None,
            event: None,
        })
    }

    fn decode_all(chunks: &[&[u8]]) -> (Vec<SseItem>, SseDecoder) {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.push_into(c, &mut out);
        }
        (out, d)
    }

    /// The store's batch holds the same data as the owned items, in every split of a body with
    /// ids, types, CRs, a dropped event, invalid UTF-8 and a multi-byte character.
    #[test]
    fn the_batch_holds_what_the_items_hold_in_every_split() {
        let body: &[u8] = b"id: 1\nevent: e\ndata: a\r\ndata: \xC3\xA9\xFF\r\r: c\ndata: 0123456789\n\ndata: [DONE]\n\ndata\n\n";
        for cut in 0..=body.len() {
            let (mut owned, mut batch) = (Vec::new(), SseBatch::default());
            let (mut d1, mut d2) = (
                SseDecoder::with_max_event_bytes(12),
                SseDecoder::with_max_event_bytes(12),
            );
            for part in [&body[..cut], &body[cut..]] {
                d1.push_into(part, &mut owned);
                d2.push_into(part, &mut batch);
            }
            let from_items: Vec<Result<String, SseError>> =
                owned.into_iter().map(|i| i.map(|e| e.data)).collect();
            let from_batch: Vec<Result<String, SseError>> = batch
                .iter()
                .map(|i| {
                    i.map(str::to_owned)
                        .map_err(|s| SseError::EventTooLarge { limit: s.limit })
                })
                .collect();
            assert_eq!(from_batch, from_items, "cut at {cut}");
            assert_eq!(from_items.len(), 4);
            batch.clear();
            assert!(batch.ends.is_empty() && batch.iter().next().is_none());
        }
    }

    #[test]
    fn cr_then_lf_in_next_push_is_one_line_end() {
        let (out, _) = decode_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(out, vec![ev("a\nb")]);
    }

    #[test]
    fn cr_then_cr_is_a_blank_line() {
        let (out, _) = decode_all(&[b"data: a\r", b"\r", b"data: b\r\r"]);
        assert_eq!(out, vec![ev("a"), ev("b")]);
    }

    #[test]
    fn empty_push_keeps_pending_cr() {
        let (out, _) = decode_all(&[b"data: a\r", b"", b"\n", b"\n"]);
        assert_eq!(out, vec![ev("a")]);
    }

    #[test]
    fn bom_split_byte_by_byte_and_only_once() {
        let (out, _) = decode_all(&[b"\xEF", b"\xBB", b"\xBF", b"data: x\n\n"]);
        assert_eq!(out, vec![ev("x")]);
        // A second BOM is part of the field name, which is then unknown.
        let (out, _) = decode_all(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"]);
        assert_eq!(out, vec![ev("y")]);
    }

    #[test]
    fn partial_bom_is_replayed_as_data() {
        let (out, _) = decode_all(&[b"\xEF\xBB", b"data: x\n\ndata: y\n\n"]);
        assert_eq!(out, vec![ev("y")]);
        let (out, _) = decode_all(&[b"\xEF", b"\n", b"data: y\n\n"]);
        assert_eq!(out, vec![ev("y")]);
    }

    #[test]
    fn field_parsing_follows_whatwg() {
        let (out, _) = decode_all(&[
            b"data:x\n\ndata:  two\n\ndata\n\ndata:\n\ndata\ndata\n\n\n\nretry: 5\nfoo: bar\n\n",
        ]);
        assert_eq!(out, vec![ev("x"), ev(" two"), ev(""), ev(""), ev("\n")]);
    }

    #[test]
    fn event_type_resets_and_id_persists() {
        let (out, d) = decode_all(&[
            b"event: a\nid: 1\ndata: x\n\ndata: y\n\nevent: b\n\ndata: z\n\nid\ndata: w\n\n",
        ]);
        let item = |data: &str, id: Option<&str>, event: Option<&str>| -> SseItem {
            Ok(SseEvent {
                data: data.into(),
                id: id.map(Into::into),
                event: event.map(Into::into),
            })
        };
        assert_eq!(
            out,
            vec![
                item("x", Some("1"), Some("a")),
                item("y", Some("1"), None),
                item("z", Some("1"), None),
                item("w", None, None),
            ]
        );
        assert_eq!(d.last_event_id(), None);
        assert_eq!(d.events_dispatched(), 4);
    }

    #[test]
    fn id_without_data_still_commits_and_nul_id_is_ignored() {
        let (out, d) = decode_all(&[b"id: 7\n\nid: 8\0\n\n"]);
        assert!(out.is_empty());
        assert_eq!(d.last_event_id(), Some("7"));
        assert_eq!(d.events_dispatched(), 0);
    }

    #[test]
    fn uncommitted_id_is_dropped_by_finish() {
        let (_, mut d) = decode_all(&[b"id: 1\n\nid: 2\ndata: x\n"]);
        assert!(d.finish());
        assert_eq!(d.last_event_id(), Some("1"));
        // The next body inherits the committed id and strips its own BOM.
        let out = d.push(b"\xEF\xBB\xBFdata: y\n\n");
        assert_eq!(out[0].as_ref().unwrap().id.as_deref(), Some("1"));
        assert!(!d.finish());
    }

    #[test]
    fn finish_reports_cuts_but_not_trailing_comments() {
        for (body, cut) in [
            (&b"data: x\n\n"[..], false),
            (b"data: x\n\n: keep-alive", false),
            (b"data: x\n\n: ping\n", false),
            (b"data: x\n\ndat", true),
            (b"data: x\n\ndata: y\n", true),
            (b"data: x\n\nretry: 1\n", true),
            (b"\xEF\xBB", true),
            (b"", false),
        ] {
            let (_, mut d) = decode_all(&[body]);
            assert_eq!(d.finish(), cut, "{:?}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let (out, _) = decode_all(&[b"data: a\xFF\xC3\n\nevent: \xE2\x82\ndata: b\n\n"]);
        assert_eq!(out[0], ev("a\u{FFFD}\u{FFFD}"));
        assert_eq!(out[1].as_ref().unwrap().event.as_deref(), Some("\u{FFFD}"));
    }

    #[test]
    fn limit_is_inclusive_and_counts_the_whole_event() {
        // "data: " + 4 bytes = 10 bytes of line: fits a limit of 10, not of 9.
        let mut d = SseDecoder::with_max_event_bytes(10);
        assert_eq!(d.push(b"data: abcd\n\n"), vec![ev("abcd")]);
        let mut d = SseDecoder::with_max_event_bytes(9);
        assert_eq!(
            d.push(b"data: abcd\n\ndata: ab\n\n"),
            vec![Err(SseError::EventTooLarge { limit: 9 }), ev("ab")]
        );
        // Two lines that fit alone but not together (the data buffer counts).
        let mut d = SseDecoder::with_max_event_bytes(12);
        let out = d.push(b"data: abc\ndata: def\ndata: ghi\n\ndata: ok\n\n");
        assert_eq!(
            out,
            vec![Err(SseError::EventTooLarge { limit: 12 }), ev("ok")]
        );
        assert_eq!(d.events_dispatched(), 2);
    }

    #[test]
    fn oversize_line_byte_by_byte_stays_bounded() {
        let limit = 1000;
        let mut d = SseDecoder::with_max_event_bytes(limit);
        let mut out = Vec::new();
        d.push_into(b"data: ", &mut out);
        for _ in 0..20 * limit {
            d.push_into(b"x", &mut out);
            assert!(d.line.capacity() <= 2 * limit);
        }
        d.push_into(b"\r", &mut out);
        d.push_into(b"\ndata: more\r\n", &mut out);
        assert!(d.data.is_empty() && d.line.is_empty());
        d.push_into(b"\r\ndata: after\r\n\r\n", &mut out);
        assert_eq!(
            out,
            vec![Err(SseError::EventTooLarge { limit }), ev("after")]
        );
    }

    /// A 4 MB event passes through; afterwards neither the decoder nor the batch holds its
    /// memory.
    #[test]
    fn a_huge_event_leaves_no_huge_buffer_behind() {
        let mut d = SseDecoder::new();
        let mut batch = SseBatch::default();
        let mut body = b"data: ".to_vec();
        body.extend(std::iter::repeat_n(b'x', 4 << 20));
        body.extend_from_slice(b"\n\ndata: small\n\n");
        // Cut inside the huge line, so that it is collected in the line buffer too.
        d.push_into(&body[..1 << 20], &mut batch);
        d.push_into(&body[1 << 20..], &mut batch);
        assert_eq!(batch.iter().count(), 2);
        batch.clear();
        assert!(batch.text.capacity() <= KEEP_BYTES);
        assert!(d.data.capacity() <= KEEP_BYTES && d.line.capacity() <= KEEP_BYTES);
    }

    /// Every comment line is counted once, whole in one push or cut anywhere, and data lines
    /// (a `:` inside a value, a field named empty) are not.
    #[test]
    fn comments_are_counted_once_in_every_split() {
        let body: &[u8] = b": heartbeat\r\ndata: a:b\n\n:\n:x\r:y\ndata: c\n\n";
        for cut in 0..=body.len() {
            let mut d = SseDecoder::new();
            let out = [d.push(&body[..cut]), d.push(&body[cut..])].concat();
            assert_eq!(out, vec![ev("a:b"), ev("c")], "cut at {cut}");
            assert_eq!(d.comments_seen(), 4, "cut at {cut}");
        }
        // An oversized event's lines are dropped, not counted as beats.
        let mut d = SseDecoder::with_max_event_bytes(4);
        d.push(b"data: 123456\n:still skipped? no: a comment line\n\n");
        assert_eq!(d.comments_seen(), 0);
    }

    #[test]
    fn long_comments_do_not_count_against_the_limit() {
        let mut d = SseDecoder::with_max_event_bytes(8);
        let mut body = b":".to_vec();
        body.extend(std::iter::repeat_n(b'p', 100));
        body.extend_from_slice(b"\ndata: x\n\n");
        assert_eq!(d.push(&body), vec![ev("x")]);
        for b in &body {
            d.push(std::slice::from_ref(b));
        }
        assert_eq!(d.events_dispatched(), 2);
    }
}
