//! A whole JSON text read into a serde_json [`Value`]: every parse of a complete text goes
//! through it (the streamed tool input's partial JSON and the history's element splitter are
//! the crate's other two readers, and call this one or its number arithmetic).
//!
//! It accepts exactly what `serde_json::from_slice::<Value>` accepts and gives the same value
//! (the same numbers, bit for bit, by the same arithmetic: serde_json without
//! `float_roundtrip`, as this crate builds it; the same nesting limit), with one difference of
//! purpose: lone surrogates (`"\ud83d"`), which serde_json refuses and `JSON.parse` keeps, are
//! held as markers ([`super::MARKERS`]), and in a [`Marks::Mark`] read so is every character of
//! the marker range. serde_json's reader, its `Value` visitor and its error texts were some
//! 9 KB of the wasm; this is a fraction of that (bench/size-steps.md).

use std::fmt;

use serde_json::{Map, Number, Value};

use super::{has_marker, marker, push_char};

/// Why a text is not JSON: what was wrong, at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    what: &'static str,
    at: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

impl std::error::Error for JsonError {}

/// How a read holds the characters of the marker range that come as such (in UTF-8, or as an
/// escaped surrogate pair).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marks {
    /// As the markers of their two surrogates: text from outside (see [`super::MARKERS`]).
    Mark,
    /// As they are: text this crate wrote from a `Value`, whose markers are already markers.
    Keep,
}

/// Containers nested deeper than this are refused (serde_json's limit: its 128th fails).
const MAX_NESTING: usize = 127;

/// Reads `bytes` as one JSON text (whitespace around it allowed).
pub(crate) fn read(bytes: &[u8], marks: Marks) -> Result<Value, JsonError> {
    let mut r = Reader {
        b: bytes,
        i: 0,
        nesting: 0,
        marks,
    };
    let v = r.value()?;
    r.skip_ws();
    if r.i < bytes.len() {
        return Err(r.err("trailing characters"));
    }
    Ok(v)
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
    nesting: usize,
    marks: Marks,
}

impl Reader<'_> {
    fn err(&self, what: &'static str) -> JsonError {
        JsonError { what, at: self.i }
    }

    /// At the byte before (the one [`Reader::next_after_ws`] took).
    fn err_before(&self, what: &'static str) -> JsonError {
        JsonError {
            what,
            at: self.i - 1,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Takes `c` (after whitespace) if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        let here = self.peek() == Some(c);
        self.i += usize::from(here);
        here
    }

    /// The next byte after whitespace, taken.
    fn next_after_ws(&mut self) -> Option<u8> {
        self.skip_ws();
        let c = self.peek();
        self.i += 1;
        c
    }

    fn value(&mut self) -> Result<Value, JsonError> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err(self.err("end of input where a value was expected"));
        };
        match c {
            b'n' => self.word(b"null", Value::Null),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'"' => {
                self.i += 1;
                self.string().map(Value::String)
            }
            b'-' | b'0'..=b'9' => self.number(),
            b'[' | b'{' => {
                if self.nesting == MAX_NESTING {
                    return Err(self.err("nested too deep"));
                }
                self.i += 1;
                self.nesting += 1;
                let v = if c == b'[' {
                    self.array()
                } else {
                    self.object()
                };
                self.nesting -= 1;
                v
            }
            _ => Err(self.err("expected a value")),
        }
    }

    fn word(&mut self, word: &[u8], v: Value) -> Result<Value, JsonError> {
        for &w in word {
            match self.peek() {
                Some(c) if c == w => self.i += 1,
                Some(_) => return Err(self.err("expected a value")),
                None => return Err(self.err("end of input in a value")),
            }
        }
        Ok(v)
    }

    /// After `[`.
    fn array(&mut self) -> Result<Value, JsonError> {
        let mut list = Vec::new();
        if self.eat(b']') {
            return Ok(Value::Array(list));
        }
        loop {
            list.push(self.value()?);
            match self.next_after_ws() {
                Some(b',') => {}
                Some(b']') => return Ok(Value::Array(list)),
                _ => return Err(self.err_before("expected `,` or `]`")),
            }
        }
    }

    /// After `{`. A key given twice keeps its last value, as in `JSON.parse`.
    fn object(&mut self) -> Result<Value, JsonError> {
        let mut map = Map::new();
        if self.eat(b'}') {
            return Ok(Value::Object(map));
        }
        loop {
            if !self.eat(b'"') {
                return Err(self.err("expected a string key"));
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return Err(self.err("expected `:`"));
            }
            let v = self.value()?;
            map.insert(key, v);
            match self.next_after_ws() {
                Some(b',') => {}
                Some(b'}') => return Ok(Value::Object(map)),
                _ => return Err(self.err_before("expected `,` or `}`")),
            }
        }
    }

    /// After the opening `"`: the string, through its closing `"`.
    fn string(&mut self) -> Result<String, JsonError> {
        let mut out = String::new();
        loop {
            let start = self.i;
            // A run without escapes ends at an ASCII byte, never inside a UTF-8 sequence.
            self.i += crate::codec::scan::string_special(&self.b[start..])
                .unwrap_or(self.b.len() - start);
            let run = std::str::from_utf8(&self.b[start..self.i]).map_err(|e| JsonError {
                what: "invalid UTF-8 in a string",
                at: start + e.valid_up_to(),
            })?;
            if self.marks == Marks::Mark && has_marker(run) {
                run.chars().for_each(|c| push_char(&mut out, c));
            } else {
                out.push_str(run);
            }
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.err("control character in a string")),
                None => return Err(self.err("end of input in a string")),
            }
        }
    }

    /// After a `\`: the escape, onto `out`. A `\u` surrogate pair is one character; a lone
    /// surrogate is its marker.
    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.i += 1;
                let u = self.hex4()?;
                if !(0xD800..0xE000).contains(&u) {
                    out.push(char::from_u32(u).unwrap_or('\u{FFFD}'));
                    return Ok(());
                }
                if u < 0xDC00 && self.b.get(self.i..self.i + 2) == Some(b"\\u") {
                    let back = self.i;
                    self.i += 2;
                    let low = self.hex4()?;
                    if (0xDC00..0xE000).contains(&low) {
                        let c = 0x1_0000 + ((u - 0xD800) << 10) + (low - 0xDC00);
                        let c = char::from_u32(c).unwrap_or('\u{FFFD}');
                        match self.marks {
                            Marks::Mark => push_char(out, c),
                            Marks::Keep => out.push(c),
                        }
                        return Ok(());
                    }
                    // Not its pair: that escape is read on its own.
                    self.i = back;
                }
                out.push(marker(u));
                return Ok(());
            }
            Some(_) => return Err(self.err("invalid escape")),
            None => return Err(self.err("end of input in a string")),
        };
        self.i += 1;
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut n = 0;
        for _ in 0..4 {
            let Some(d) = self.peek().and_then(|c| char::from(c).to_digit(16)) else {
                return Err(self.err("invalid \\u escape"));
            };
            n = n * 16 + d;
            self.i += 1;
        }
        Ok(n)
    }

    /// A number, read as serde_json reads one ([`Digits`]).
    fn number(&mut self) -> Result<Value, JsonError> {
        let positive = !self.eat(b'-');
        let mut n = Digits {
            positive,
            significand: 0,
            exponent: 0,
        };
        match self.peek() {
            Some(b'0') => {
                self.i += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.err("invalid number"));
                }
            }
            Some(b'1'..=b'9') => {
                let mut long = false;
                while let Some(d) = self.digit() {
                    if long || overflows(n.significand, d, u64::MAX) {
                        // Past a u64: each digit counts in the exponent only.
                        long = true;
                        n.exponent = n.exponent.wrapping_add(1);
                    } else {
                        n.significand = n.significand * 10 + d;
                    }
                }
                if long {
                    return self.fraction_and_exponent(n);
                }
            }
            Some(_) => return Err(self.err("invalid number")),
            None => return Err(self.err("end of input in a number")),
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return self.fraction_and_exponent(n);
        }
        Ok(n.integer())
    }

    fn digit(&mut self) -> Option<u64> {
        let d = self.peek().filter(u8::is_ascii_digit)?;
        self.i += 1;
        Some(u64::from(d - b'0'))
    }

    /// What follows a number's integer part: `.` and digits, then `e` and an exponent, each
    /// optional; a float.
    fn fraction_and_exponent(&mut self, mut n: Digits) -> Result<Value, JsonError> {
        if self.peek() == Some(b'.') {
            self.i += 1;
            let mut any = false;
            let mut over = false;
            while let Some(d) = self.digit() {
                any = true;
                // serde_json ignores the fraction's digits past a u64.
                over = over || overflows(n.significand, d, u64::MAX);
                if !over {
                    n.significand = n.significand * 10 + d;
                    n.exponent = n.exponent.wrapping_sub(1);
                }
            }
            if !any {
                return Err(self.err("invalid number"));
            }
        }
        let mut e = Exponent::None;
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            let positive = self.peek() != Some(b'-');
            self.i += usize::from(matches!(self.peek(), Some(b'+' | b'-')));
            let Some(first) = self.digit() else {
                return Err(self.err("invalid number"));
            };
            let mut exp = first as i32;
            let mut over = false;
            while let Some(d) = self.digit() {
                over = over || overflows(exp as u64, d, i32::MAX as u64);
                if !over {
                    exp = exp * 10 + d as i32;
                }
            }
            e = if over {
                Exponent::Over { positive }
            } else {
                Exponent::Of { positive, exp }
            };
        }
        n.float(e).ok_or_else(|| self.err("number out of range"))
    }
}

/// serde_json's `overflow!(a * 10 + b, max)`.
pub(crate) fn overflows(a: u64, b: u64, max: u64) -> bool {
    a >= max / 10 && (a > max / 10 || b > max % 10)
}

/// A number as serde_json's parser holds it: the sign, the u64 significand (digits stop
/// counting once the next would overflow it) and the decimal exponent before any exponent
/// part (+1 per integer digit past the u64, −1 per fraction digit in the significand).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Digits {
    pub(crate) positive: bool,
    pub(crate) significand: u64,
    pub(crate) exponent: i32,
}

/// A number's exponent part.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Exponent {
    None,
    /// Its sign and value.
    Of {
        positive: bool,
        exp: i32,
    },
    /// Past an i32: the number is 0 or out of range.
    Over {
        positive: bool,
    },
}

impl Digits {
    /// A number without a fraction or an exponent: a u64, an i64 when negative, else (below
    /// i64's range, or `-0`) an f64.
    pub(crate) fn integer(self) -> Value {
        if self.positive {
            return Value::Number(self.significand.into());
        }
        let neg = (self.significand as i64).wrapping_neg();
        if neg >= 0 {
            self.signed(self.significand as f64)
        } else {
            Value::Number(neg.into())
        }
    }

    /// A number with a fraction or an exponent: an f64 (`None` when it is out of range, which
    /// serde_json refuses rather than give an infinity).
    pub(crate) fn float(self, e: Exponent) -> Option<Value> {
        let exponent = match e {
            Exponent::None => self.exponent,
            Exponent::Of {
                positive: true,
                exp,
            } => self.exponent.saturating_add(exp),
            Exponent::Of {
                positive: false,
                exp,
            } => self.exponent.saturating_sub(exp),
            Exponent::Over { positive } if positive && self.significand != 0 => return None,
            Exponent::Over { .. } => return Some(self.signed(0.0)),
        };
        let mut f = self.significand as f64;
        let mut exponent = exponent;
        loop {
            match POW10.get(exponent.unsigned_abs() as usize) {
                Some(&pow) => {
                    if exponent >= 0 {
                        f *= pow;
                        if f.is_infinite() {
                            return None;
                        }
                    } else {
                        f /= pow;
                    }
                    break;
                }
                None => {
                    if f == 0.0 {
                        break;
                    }
                    if exponent >= 0 {
                        return None;
                    }
                    f /= 1e308;
                    exponent += 308;
                }
            }
        }
        Some(self.signed(f))
    }

    fn signed(self, f: f64) -> Value {
        let f = if self.positive { f } else { -f };
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// 1e0 through 1e308, each correctly rounded (serde_json's table).
#[rustfmt::skip]
static POW10: [f64; 309] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29,
    1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
    1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47, 1e48, 1e49,
    1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59,
    1e60, 1e61, 1e62, 1e63, 1e64, 1e65, 1e66, 1e67, 1e68, 1e69,
    1e70, 1e71, 1e72, 1e73, 1e74, 1e75, 1e76, 1e77, 1e78, 1e79,
    1e80, 1e81, 1e82, 1e83, 1e84, 1e85, 1e86, 1e87, 1e88, 1e89,
    1e90, 1e91, 1e92, 1e93, 1e94, 1e95, 1e96, 1e97, 1e98, 1e99,
    1e100, 1e101, 1e102, 1e103, 1e104, 1e105, 1e106, 1e107, 1e108, 1e109,
    1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119,
    1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
    1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139,
    1e140, 1e141, 1e142, 1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149,
    1e150, 1e151, 1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158, 1e159,
    1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168, 1e169,
    1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179,
    1e180, 1e181, 1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189,
    1e190, 1e191, 1e192, 1e193, 1e194, 1e195, 1e196, 1e197, 1e198, 1e199,
    1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207, 1e208, 1e209,
    1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219,
    1e220, 1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229,
    1e230, 1e231, 1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239,
    1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246, 1e247, 1e248, 1e249,
    1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
    1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269,
    1e270, 1e271, 1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279,
    1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287, 1e288, 1e289,
    1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299,
    1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// serde_json's answer, as this reader must give it: the same value (numbers by their
    /// representation and bits: `exact`) or a refusal.
    fn serde(t: &str) -> Option<String> {
        serde_json::from_str::<Value>(t).ok().map(|v| exact(&v))
    }

    fn ours(t: &str) -> Option<String> {
        read(t.as_bytes(), Marks::Keep).ok().map(|v| exact(&v))
    }

    /// A value's text with each number tagged by its kind and bits.
    fn exact(v: &Value) -> String {
        match v {
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => format!("u{u}"),
                (_, Some(i), _) => format!("i{i}"),
                (_, _, f) => format!("f{:x}", f.unwrap_or(f64::NAN).to_bits()),
            },
            Value::Array(a) => format!("[{}]", a.iter().map(exact).collect::<Vec<_>>().join(",")),
            Value::Object(o) => format!(
                "{{{}}}",
                o.iter()
                    .map(|(k, v)| format!("{k:?}:{}", exact(v)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => other.to_string(),
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let cases = [
            "0",
            "-0",
            "1",
            "-1",
            "01",
            "-01",
            "1.",
            ".5",
            "1.5",
            "-1.5e3",
            "1e",
            "1e+",
            "1E-2",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1.8446744073709551615",
            "184467440737095516165.5",
            "0.000000000000000000000000000001e-300",
            "1e308",
            "1e309",
            "-1e309",
            "1e-400",
            "0e99999999999",
            "1e99999999999",
            "1e-99999999999",
            "-0.0e-99999999999",
            "2.2250738585072014e-308",
            "4.9e-324",
            "1.7976931348623157e308",
            "3.141592653589793238462643383279",
            "-",
            "--1",
            "+1",
            "1 2",
            " [1 , 2 ] ",
            "[1,]",
            "[,1]",
            "[",
            "]",
            "{}",
            "{\"a\":1,\"a\":2}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{a:1}",
            "{\"a\":1,}",
            "tru",
            "true",
            "nulll",
            "null",
            "false",
            "\"\\u0000\"",
            "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\uZZZZ\"",
            "\"\n\"",
            "\"\u{7f}\"",
            "\"größe 😀\"",
            "\"\\ud83d\\ude00\"",
            "",
            " ",
            "\"abc",
            "[\"a\",{\"b\":[true,null]}]",
        ];
        for t in cases {
            assert_eq!(ours(t), serde(t), "{t:?}");
        }
        // The nesting limit: 127 containers read, 128 refused.
        for depth in [126, 127, 128, 200] {
            let t = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            assert_eq!(ours(&t), serde(&t), "depth {depth}");
        }
        // Invalid UTF-8 in a string is refused, as serde_json refuses it.
        assert!(read(b"\"a\xffb\"", Marks::Keep).is_err());
        // Where the text goes wrong.
        let at = |t: &str| read(t.as_bytes(), Marks::Keep).unwrap_err().to_string();
        assert_eq!(at("[1, x]"), "expected a value at byte 4");
        assert_eq!(at("[1 x]"), "expected `,` or `]` at byte 3");
        assert_eq!(at("{\"a\":1"), "expected `,` or `}` at byte 6");
        assert_eq!(at("\"ab"), "end of input in a string at byte 3");
    }

    proptest! {
        /// Any text made of JSON's pieces: the same answer as serde_json's.
        #[test]
        fn any_text_is_read_as_serde_json_reads_it(
            pieces in proptest::collection::vec(prop_oneof![
                Just("["), Just("]"), Just("{"), Just("}"), Just(","), Just(":"), Just(" "),
                Just("\""), Just("\\"), Just("u"), Just("n"), Just("true"), Just("null"),
                Just("-"), Just("."), Just("e"), Just("E"), Just("+"), Just("0"), Just("1"),
                Just("9"), Just("a"), Just("é"), Just("\"k\""), Just("\"\\n\""),
                Just("18446744073709551615"), Just("99999999999"),
            ], 0..24)
        ) {
            let t: String = pieces.concat();
            prop_assert_eq!(ours(&t), serde(&t), "{:?}", t);
        }

        /// Any number token: the same value and representation as serde_json's.
        #[test]
        fn any_number_is_read_as_serde_json_reads_it(
            neg in any::<bool>(),
            int in "0|[1-9][0-9]{0,25}",
            frac in proptest::option::of("[0-9]{1,25}"),
            exp in proptest::option::of(("[eE]", "[+-]?", "[0-9]{1,12}")),
        ) {
            let mut t = String::new();
            if neg { t.push('-'); }
            t.push_str(&int);
            if let Some(f) = frac { t.push('.'); t.push_str(&f); }
            if let Some((e, s, d)) = exp { t.push_str(&e); t.push_str(&s); t.push_str(&d); }
            prop_assert_eq!(ours(&t), serde(&t), "{}", t);
        }
    }
}
