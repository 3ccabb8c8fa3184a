//! Incremental NDJSON line splitter for the pi-native event stream (SPEC §14): bytes in, one
//! line out per `\n`, whatever the network split (inside a UTF-8 sequence included). Lines are
//! trimmed (a leading byte order mark too) and blank ones skipped, as the upstream client's
//! reader does. A line longer than the limit is skipped whole with a typed error that keeps its
//! first [`HEAD_BYTES`] (what it was: its seq, type and ids come first), and a line that is not
//! UTF-8 is given back as an error too (read with replacement characters, to say what it was):
//! the stream goes on after both.

/// How much of a line skipped as too long is kept, to say what it was.
pub const HEAD_BYTES: usize = 4096;

/// A line that could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line grew past the limit; what it held was dropped up to its `\n`.
    #[error("NDJSON line of {bytes} bytes exceeds the {limit}-byte limit")]
    TooLong {
        /// How many bytes the line had (at least `limit + 1`).
        bytes: usize,
        /// The limit in force.
        limit: usize,
        /// The line's first bytes (at most [`HEAD_BYTES`], cut at a character's end).
        head: String,
    },
    /// The line is not UTF-8; `line` is what it says with U+FFFD for what is not.
    #[error("NDJSON line is not UTF-8")]
    NotUtf8 {
        /// The line, invalid sequences replaced (trimmed).
        line: String,
    },
}

/// The splitter. One per stream connection; [`finish`](Self::finish) at the body's end.
#[derive(Debug)]
pub struct NdjsonDecoder {
    buf: Vec<u8>,
    limit: usize,
    /// Bytes of a too-long line seen so far, while it is skipped to its end.
    skipping: Option<usize>,
    /// The start of the line being skipped.
    head: Vec<u8>,
}

impl NdjsonDecoder {
    /// A splitter that gives up lines longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        NdjsonDecoder {
            buf: Vec::new(),
            limit,
            skipping: None,
            head: Vec::new(),
        }
    }

    /// Feeds `bytes`; every complete non-blank line (trimmed) is appended to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Result<String, LineError>>) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (head, rest) = match newline {
                Some(i) => (&bytes[..i], Some(&bytes[i + 1..])),
                None => (bytes, None),
            };
            if let Some(seen) = &mut self.skipping {
                *seen += head.len();
            } else if self.buf.len() + head.len() > self.limit {
                self.skipping = Some(self.buf.len() + head.len());
                let mut kept = std::mem::take(&mut self.buf);
                kept.extend_from_slice(&head[..head.len().min(HEAD_BYTES)]);
                kept.truncate(HEAD_BYTES);
                self.head = kept;
            } else {
                self.buf.extend_from_slice(head);
            }
            let Some(rest) = rest else { return };
            self.end_line(out);
            bytes = rest;
        }
    }

    /// The body ended: a last line without its `\n` still counts.
    pub fn finish(&mut self, out: &mut Vec<Result<String, LineError>>) {
        if !self.buf.is_empty() || self.skipping.is_some() {
            self.end_line(out);
        }
    }

    fn end_line(&mut self, out: &mut Vec<Result<String, LineError>>) {
        if let Some(bytes) = self.skipping.take() {
            let mut head = std::mem::take(&mut self.head);
            // Cut at a character's end: a sequence the cut split is not an error of the line.
            let valid = match std::str::from_utf8(&head) {
                Ok(_) => head.len(),
                Err(e) => e.valid_up_to(),
            };
            head.truncate(valid);
            let head = String::from_utf8(head).unwrap_or_default();
            let limit = self.limit;
            out.push(Err(LineError::TooLong { bytes, limit, head }));
            return;
        }
        let line = match std::str::from_utf8(&self.buf) {
            Ok(text) => Ok(text),
            Err(_) => Err(String::from_utf8_lossy(&self.buf)),
        };
        // A byte order mark is no JSON whitespace; an editor or a proxy may put one first.
        let text = |t: &str| {
            t.trim()
                .trim_start_matches('\u{feff}')
                .trim_start()
                .to_string()
        };
        match line {
            Ok(t) if !t.trim().is_empty() => out.push(Ok(text(t))),
            Ok(_) => {}
            Err(lossy) => out.push(Err(LineError::NotUtf8 { line: text(&lossy) })),
        }
        self.buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], limit: usize) -> Vec<Result<String, LineError>> {
        let mut d = NdjsonDecoder::new(limit);
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    #[test]
    fn any_split_gives_the_same_lines() {
        let body = "\u{feff}{\"a\":\"é€😀\"}\r\n\n  \n{\"b\":2}\n{\"c\":3}".as_bytes();
        let whole = lines(&[body], 1 << 20);
        assert_eq!(
            whole,
            vec![
                Ok("{\"a\":\"é€😀\"}".to_string()),
                Ok("{\"b\":2}".to_string()),
                Ok("{\"c\":3}".to_string()),
            ]
        );
        for cut in 0..=body.len() {
            assert_eq!(
                lines(&[&body[..cut], &body[cut..]], 1 << 20),
                whole,
                "{cut}"
            );
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(lines(&bytes, 1 << 20), whole);
    }

    #[test]
    fn a_line_past_the_limit_is_skipped_with_an_error_and_the_next_one_read() {
        let out = lines(&[b"{\"long\":\"xxxx", b"xxxxxxxx\"}\n{\"ok\":1}\n"], 10);
        assert_eq!(
            out,
            vec![
                Err(LineError::TooLong {
                    bytes: 23,
                    limit: 10,
                    head: "{\"long\":\"xxxx".into(),
                }),
                Ok("{\"ok\":1}".to_string())
            ]
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_with_its_readable_text() {
        let out = lines(&[b"{\"seq\":3,\"x\":\"\xff\"}\n{\"ok\":1}\n"], 64);
        assert_eq!(
            out,
            vec![
                Err(LineError::NotUtf8 {
                    line: "{\"seq\":3,\"x\":\"\u{fffd}\"}".into()
                }),
                Ok("{\"ok\":1}".to_string())
            ]
        );
    }

    #[test]
    fn the_head_of_a_long_line_is_cut_at_a_characters_end() {
        let mut long = b"{\"a\":\"".to_vec();
        long.extend("é".repeat(HEAD_BYTES).as_bytes());
        long.extend(b"\"}\n");
        let out = lines(
            &[&long[..HEAD_BYTES + 1], &long[HEAD_BYTES + 1..]],
            HEAD_BYTES * 2,
        );
        let Err(LineError::TooLong { head, .. }) = &out[0] else {
            panic!("{out:?}")
        };
        assert!(head.len() <= HEAD_BYTES && head.len() >= HEAD_BYTES - 3);
        assert!(head.starts_with("{\"a\":\"é"));
    }
}
