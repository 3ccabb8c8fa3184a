//! Byte scans eight bytes at a time (SWAR: one `u64` holds eight bytes), for the scans every
//! byte of a long stream goes through: the SSE decoder's search for a line end, the delta
//! fast path's search for the end of a JSON string and its prefixes, the snapshot's check that
//! a text only grew. A byte-by-byte loop costs several instructions per byte in wasm (no SIMD is
//! assumed, and its `memcmp` goes byte by byte); these cost about one per byte.
//!
//! `eq` and `below` flag matching bytes by their high bit. A borrow can flag a byte above a
//! real match, never one below it, so the lowest flag is always the first match.

const LO: u64 = u64::from_ne_bytes([0x01; 8]);
const HI: u64 = u64::from_ne_bytes([0x80; 8]);

/// The bytes of `w` equal to `b`.
fn eq(w: u64, b: u8) -> u64 {
    let x = w ^ (LO * u64::from(b));
    x.wrapping_sub(LO) & !x & HI
}

/// The bytes of `w` below `n` (`n` ≤ 128).
fn below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(LO * u64::from(n)) & !w & HI
}

fn first(bytes: &[u8], mask: impl Fn(u64) -> u64, byte: impl Fn(u8) -> bool) -> Option<usize> {
    let (words, tail) = bytes.as_chunks::<8>();
    for (k, w) in words.iter().enumerate() {
        let m = mask(u64::from_le_bytes(*w));
        if m != 0 {
            return Some(k * 8 + (m.trailing_zeros() / 8) as usize);
        }
    }
    let at = words.len() * 8;
    tail.iter().position(|&b| byte(b)).map(|i| at + i)
}

/// The first `\n` or `\r`.
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn line_end(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| eq(w, b'\n') | eq(w, b'\r'),
        |b| b == b'\n' || b == b'\r',
    )
}

/// The first byte a JSON string cannot hold as it is: `"`, `\` or a control character.
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn string_special(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| eq(w, b'"') | eq(w, b'\\') | below(w, 0x20),
        |b| b == b'"' || b == b'\\' || b < 0x20,
    )
}

/// The first byte a JSON string cannot hold as it is, or the first byte of a character of
/// plane 16 (0xF4), which may be of the marker range (`protocol::json::MARKERS`).
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn string_special_or_plane16(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| eq(w, b'"') | eq(w, b'\\') | below(w, 0x20) | eq(w, 0xF4),
        |b| b == b'"' || b == b'\\' || b < 0x20 || b == 0xF4,
    )
}

/// Whether `bytes` starts with `prefix`, compared eight bytes at a time.
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn starts_with(bytes: &[u8], prefix: &[u8]) -> bool {
    let Some(head) = bytes.get(..prefix.len()) else {
        return false;
    };
    let ((a, ra), (b, rb)) = (head.as_chunks::<8>(), prefix.as_chunks::<8>());
    a.iter()
        .zip(b)
        .all(|(x, y)| u64::from_ne_bytes(*x) == u64::from_ne_bytes(*y))
        && ra.iter().zip(rb).all(|(x, y)| x == y)
}

/// `s` without `prefix`, when it starts with it ([`starts_with`]).
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn strip_prefix<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    starts_with(s.as_bytes(), prefix.as_bytes())
        .then(|| s.get(prefix.len()..))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position and neighbour of a match, against the plain loop.
    #[test]
    fn scans_agree_with_a_byte_loop() {
        let fill = [
            b'a',
            0xFF,
            0x80,
            0x7F,
            b' ',
            0x21,
            0x1F + 0x20,
            b'"' + 1,
            b'\\' - 1,
            0xF3,
            0xF5,
        ];
        let special = [b'\n', b'\r', b'"', b'\\', 0x00, 0x1F, 0x01, 0xF4];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for len in 0..40 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        if x.is_multiple_of(9) {
                            special[(x >> 32) as usize % special.len()]
                        } else {
                            fill[(x >> 32) as usize % fill.len()]
                        }
                    })
                    .collect();
                let slow = |f: &dyn Fn(u8) -> bool| bytes.iter().position(|&b| f(b));
                assert_eq!(line_end(&bytes), slow(&|b| b == b'\n' || b == b'\r'));
                assert_eq!(
                    string_special(&bytes),
                    slow(&|b| b == b'"' || b == b'\\' || b < 0x20),
                    "{bytes:?}"
                );
                assert_eq!(
                    string_special_or_plane16(&bytes),
                    slow(&|b| b == b'"' || b == b'\\' || b < 0x20 || b == 0xF4),
                    "{bytes:?}"
                );
                // Every prefix of it, and each with its last byte changed.
                for n in 0..=bytes.len() {
                    assert!(starts_with(&bytes, &bytes[..n]));
                    if let Some(last) = n.checked_sub(1) {
                        let mut other = bytes[..n].to_vec();
                        other[last] ^= 1;
                        assert!(!starts_with(&bytes, &other));
                    }
                }
                assert!(len == 0 || !starts_with(&bytes[..len / 2], &bytes));
            }
        }
    }
}
