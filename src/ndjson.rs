//! Incremental NDJSON line splitter for the pi-native event stream (SPEC §14): bytes in, one
//! line out per `\n`, whatever the network split (inside a UTF-8 sequence included). Lines are
//! trimmed and blank ones skipped, as the upstream client's reader does; a line longer than the
//! limit is skipped whole with a typed error, and the stream goes on.

/// A line that could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line grew past the limit; what it held was dropped up to its `\n`.
    #[error("NDJSON line of {bytes} bytes exceeds the {limit}-byte limit")]
    TooLong {
        /// How many bytes the line had when it was given up (at least `limit + 1`).
        bytes: usize,
        /// The limit in force.
        limit: usize,
    },
}

/// The splitter. One per stream connection; [`finish`](Self::finish) at the body's end.
#[derive(Debug)]
pub struct NdjsonDecoder {
    buf: Vec<u8>,
    limit: usize,
    /// Bytes of a too-long line seen so far, while it is skipped to its end.
    skipping: Option<usize>,
}

impl NdjsonDecoder {
    /// A splitter that gives up lines longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        NdjsonDecoder {
            buf: Vec::new(),
            limit,
            skipping: None,
        }
    }

    /// Feeds `bytes`; every complete non-blank line (trimmed, decoded as UTF-8 with invalid
    /// sequences replaced, as a `TextDecoder` does) is appended to `out`.
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
                self.buf = Vec::new();
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
            let limit = self.limit;
            out.push(Err(LineError::TooLong { bytes, limit }));
            return;
        }
        let line = String::from_utf8_lossy(&self.buf);
        let trimmed = line.trim();
        if !trimmed.is_empty() {
            out.push(Ok(trimmed.to_string()));
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
        let body = "{\"a\":\"é€😀\"}\r\n\n  \n{\"b\":2}\n{\"c\":3}".as_bytes();
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
                    limit: 10
                }),
                Ok("{\"ok\":1}".to_string())
            ]
        );
    }
}
