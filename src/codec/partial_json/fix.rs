//! Our own model of `fixJson`'s scanner, state for state (over UTF-16 code units, as JS): where
//! the committed prefix ends and which closers the text needs.

use super::*;

/// The state of the innermost open container (the others are all "after value").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sub {
    ObjStart,
    ObjKey,
    ObjAfterKey,
    ObjBeforeValue,
    ObjAfterValue,
    ObjAfterComma,
    ArrStart,
    ArrAfterValue,
    ArrAfterComma,
}

/// An open scalar on top of `fixJson`'s stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Leaf {
    None,
    Str,
    Esc,
    Uni(u8),
    Num,
    Lit([u8; 5], u8),
}

/// `fixJson`'s scanner; its containers are `Stacks::f`.
#[derive(Debug)]
pub(super) struct Fix {
    /// `FINISH` rather than `ROOT` at the bottom of the stack.
    pub(super) finished: bool,
    pub(super) sub: Sub,
    pub(super) leaf: Leaf,
}

/// Nesting beyond this fails the parse (where `JSON.parse` would go on): values this deep would
/// overflow the wasm stack when dropped, cloned or serialised recursively.
pub const MAX_DEPTH: usize = 512;

pub(super) const LITS: [&[u8]; 3] = [b"true", b"false", b"null"];

impl Fix {
    /// Scans one UTF-16 code unit (`0x80` for any non-ASCII one); true when `lastValidIndex`
    /// moves to it.
    pub(super) fn unit(&mut self, c: u8, s: &mut Stacks) -> bool {
        match self.leaf {
            Leaf::Str => match c {
                b'"' => {
                    self.leaf = Leaf::None;
                    true
                }
                b'\\' => {
                    self.leaf = Leaf::Esc;
                    false
                }
                _ => true,
            },
            Leaf::Esc if c == b'u' => {
                self.leaf = Leaf::Uni(0);
                false
            }
            Leaf::Esc => {
                self.leaf = Leaf::Str;
                true
            }
            Leaf::Uni(n) => {
                if c.is_ascii_hexdigit() {
                    self.leaf = if n == 3 { Leaf::Str } else { Leaf::Uni(n + 1) };
                }
                c.is_ascii_hexdigit() && n == 3
            }
            Leaf::Num => match c {
                b'0'..=b'9' => true,
                b'e' | b'E' | b'-' | b'.' => false,
                _ => {
                    self.leaf = Leaf::None;
                    self.after_value(c, s)
                }
            },
            Leaf::Lit(mut buf, n) => {
                if let Some(slot) = buf.get_mut(usize::from(n)) {
                    *slot = c;
                    let lit = buf.get(..=usize::from(n)).unwrap_or_default();
                    if LITS.iter().any(|l| l.starts_with(lit)) {
                        self.leaf = Leaf::Lit(buf, n + 1);
                        return true;
                    }
                }
                self.leaf = Leaf::None;
                self.after_value(c, s)
            }
            Leaf::None if s.f.is_empty() => !self.finished && self.value_start(c, s),
            Leaf::None => match (self.sub, c) {
                (Sub::ObjStart | Sub::ObjAfterComma, b'"') => {
                    self.sub = Sub::ObjKey;
                    false
                }
                (Sub::ObjStart, b'}') | (Sub::ArrStart, b']') => {
                    self.close(s);
                    true
                }
                (Sub::ObjKey, b'"') => {
                    self.sub = Sub::ObjAfterKey;
                    false
                }
                (Sub::ObjAfterKey, b':') => {
                    self.sub = Sub::ObjBeforeValue;
                    false
                }
                (Sub::ObjBeforeValue | Sub::ArrStart | Sub::ArrAfterComma, _) => {
                    self.value_start(c, s)
                }
                (Sub::ObjAfterValue, _) | (Sub::ArrAfterValue, b',' | b']') => {
                    self.after_value(c, s)
                }
                (Sub::ArrAfterValue, _) => true,
                _ => false,
            },
        }
    }

    /// `processValueStart`.
    pub(super) fn value_start(&mut self, c: u8, s: &mut Stacks) -> bool {
        let leaf = match c {
            b'"' => Leaf::Str,
            b't' | b'f' | b'n' => Leaf::Lit([c, 0, 0, 0, 0], 1),
            b'-' | b'0'..=b'9' => Leaf::Num,
            b'{' | b'[' => Leaf::None,
            _ => return false,
        };
        match s.f.last() {
            None => self.finished = true,
            Some(Kind::Obj) => self.sub = Sub::ObjAfterValue,
            Some(Kind::Arr) => self.sub = Sub::ArrAfterValue,
        }
        self.leaf = leaf;
        if c == b'{' {
            s.push(true, Kind::Obj);
            self.sub = Sub::ObjStart;
        } else if c == b'[' {
            s.push(true, Kind::Arr);
            self.sub = Sub::ArrStart;
        }
        c != b'-'
    }

    /// `processAfterObjectValue` / `processAfterArrayValue`, whichever the container is.
    pub(super) fn after_value(&mut self, c: u8, s: &mut Stacks) -> bool {
        match (s.f.last(), c) {
            (Some(Kind::Obj), b',') => self.sub = Sub::ObjAfterComma,
            (Some(Kind::Arr), b',') => self.sub = Sub::ArrAfterComma,
            (Some(Kind::Obj), b'}') | (Some(Kind::Arr), b']') => {
                self.close(s);
                return true;
            }
            _ => {}
        }
        false
    }

    pub(super) fn close(&mut self, s: &mut Stacks) {
        s.pop(true);
        self.sub = match s.f.last() {
            Some(Kind::Obj) => Sub::ObjAfterValue,
            _ => Sub::ArrAfterValue,
        };
    }

    /// What `fixJson` appends before the containers' closers.
    pub(super) fn closer(&self) -> &'static [u8] {
        match self.leaf {
            Leaf::Str | Leaf::Esc | Leaf::Uni(_) => b"\"",
            Leaf::Lit(buf, n) => {
                let lit = buf.get(..usize::from(n)).unwrap_or_default();
                LITS.iter()
                    .copied()
                    .find(|l| l.starts_with(lit))
                    .and_then(|l| l.get(lit.len()..))
                    .unwrap_or_default()
            }
            _ => b"",
        }
    }
}
