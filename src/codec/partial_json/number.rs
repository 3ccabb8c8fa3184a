//! Numbers: each char folded into what serde_json's parser would hold at that point, so a
//! number streamed digit by digit costs O(1) per digit.

use super::*;
use crate::protocol::json::{overflows, Digits, Exponent};

/// JSON's whitespace.
pub(super) const WS: [char; 4] = [' ', '\t', '\n', '\r'];

/// Where a number token is, for [`Num`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NumAt {
    /// Nothing or `-`.
    Sign,
    /// Integer digits, all in the significand.
    Int,
    /// Integer digits past what a u64 holds: each one counts in the exponent only.
    LongInt,
    /// `.` and fraction digits, all in the significand.
    Frac,
    /// Fraction digits past what a u64 holds: ignored.
    FracOver,
    /// `e` and its sign, if any.
    ExpSign,
    /// Exponent digits, in `e`.
    Exp,
    /// Exponent digits past an i32.
    ExpOver,
}

/// A number token, folded one char at a time into what serde_json's number parser (without
/// `float_roundtrip`, as this crate builds it: `Deserializer::parse_integer` and what it calls)
/// holds at that point of the token: the u64 significand it keeps (digits stop counting once
/// the next one would overflow it), the decimal exponent, the exponent part. So each char costs
/// O(1) and so does [`Num::value`], where `serde_json::from_str(token)` costs O(token): a
/// number streamed digit by digit would cost quadratic time. `value` gives what that
/// `from_str` gives (the tests compare them on tokens of every shape).
#[derive(Clone, Copy, Debug)]
pub(super) struct Num {
    pub(super) positive: bool,
    pub(super) significand: u64,
    /// The decimal exponent before the exponent part: +1 per integer digit past the u64, -1
    /// per fraction digit in the significand (wrapping, as serde_json's i32 would in a release
    /// build past 2^31 digits).
    pub(super) exponent: i32,
    pub(super) at: NumAt,
    pub(super) exp_positive: bool,
    pub(super) e: i32,
    /// The token ends with a digit (a complete number).
    pub(super) digit: bool,
}

impl Num {
    /// A token beginning with `c` (`-` or a digit).
    pub(super) fn open(c: char) -> Num {
        let mut n = Num {
            positive: true,
            significand: 0,
            exponent: 0,
            at: NumAt::Sign,
            exp_positive: true,
            e: 0,
            digit: false,
        };
        n.push(c);
        n
    }

    /// The token's next char, as the strict lexer allows it.
    pub(super) fn push(&mut self, c: char) {
        let d = c.to_digit(10).map(u64::from);
        self.digit = d.is_some();
        match (self.at, d) {
            (NumAt::Sign, None) => self.positive = c != '-',
            (NumAt::Sign, Some(d)) => {
                self.significand = d;
                self.at = NumAt::Int;
            }
            (NumAt::Int, Some(d)) if overflows(self.significand, d, u64::MAX) => {
                // `parse_long_integer`, from this digit on.
                self.exponent = self.exponent.wrapping_add(1);
                self.at = NumAt::LongInt;
            }
            (NumAt::Int, Some(d)) => self.significand = self.significand * 10 + d,
            (NumAt::LongInt, Some(_)) => self.exponent = self.exponent.wrapping_add(1),
            (NumAt::Frac, Some(d)) if overflows(self.significand, d, u64::MAX) => {
                // `parse_decimal_overflow`: the remaining fraction digits are ignored.
                self.at = NumAt::FracOver;
            }
            (NumAt::Frac, Some(d)) => {
                self.significand = self.significand * 10 + d;
                self.exponent = self.exponent.wrapping_sub(1);
            }
            (NumAt::FracOver | NumAt::ExpOver, Some(_)) => {}
            (NumAt::ExpSign, Some(d)) => {
                self.e = d as i32;
                self.at = NumAt::Exp;
            }
            (NumAt::ExpSign, None) => self.exp_positive = c != '-',
            (NumAt::Exp, Some(d)) if overflows(self.e as u64, d, i32::MAX as u64) => {
                self.at = NumAt::ExpOver;
            }
            (NumAt::Exp, Some(d)) => self.e = self.e * 10 + d as i32,
            (_, None) if c == '.' => self.at = NumAt::Frac,
            (_, None) => {
                // `e` or `E`.
                self.at = NumAt::ExpSign;
                self.exp_positive = true;
            }
        }
    }

    /// Whether the token so far is a number (ends with a digit).
    pub(super) fn complete(&self) -> bool {
        self.digit
    }

    /// What `serde_json::from_str` gives for the token so far (null where it fails: an f64
    /// overflow, JS's Infinity), from the significand and exponents it reads it to, by the
    /// crate's JSON reader's arithmetic, which is serde_json's (`protocol::json::Digits`).
    pub(super) fn value(&self) -> Value {
        let n = Digits {
            positive: self.positive,
            significand: self.significand,
            exponent: self.exponent,
        };
        let e = match self.at {
            NumAt::Sign | NumAt::Int => return n.integer(),
            NumAt::LongInt | NumAt::Frac | NumAt::FracOver | NumAt::ExpSign => Exponent::None,
            NumAt::Exp => Exponent::Of {
                positive: self.exp_positive,
                exp: self.e,
            },
            NumAt::ExpOver => Exponent::Over {
                positive: self.exp_positive,
            },
        };
        n.float(e).unwrap_or_default()
    }
}
