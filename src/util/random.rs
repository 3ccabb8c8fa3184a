//! Randomness is an input: the core never reads OS entropy (there is none on wasm32 without
//! JS). The wasm shell fills bytes from `crypto.getRandomValues`; tests use a seeded source.

/// A source of random bytes.
pub trait RandomSource {
    /// Fills `buf` with random bytes (the wasm shell: `crypto.getRandomValues`).
    fn fill(&mut self, buf: &mut [u8]);

    /// A number in `[0, 1)`, for backoff jitter.
    fn unit(&mut self) -> f64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A deterministic generator (splitmix64) for tests and for hosts without a better source.
#[derive(Debug, Clone)]
pub struct SeededRandom(pub u64);

impl RandomSource for SeededRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }
}

/// A random (version 4, variant 1) UUID in its lowercase hyphenated form.
pub fn uuid_v4(rng: &mut dyn RandomSource) -> String {
    let mut b = [0u8; 16];
    rng.fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[(byte >> 4) as usize] as char);
        s.push(HEX[(byte & 0xf) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_has_v4_shape_and_differs() {
        let mut r = SeededRandom(7);
        let a = uuid_v4(&mut r);
        let b = uuid_v4(&mut r);
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let bytes = a.as_bytes();
        assert_eq!(bytes[14], b'4');
        assert!(matches!(bytes[19], b'8' | b'9' | b'a' | b'b'));
        assert_eq!(a.matches('-').count(), 4);
        let u = r.unit();
        assert!((0.0..1.0).contains(&u));
    }
}
