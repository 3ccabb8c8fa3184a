//! The value, built in place as the committed prefix grows.

use super::*;

#[derive(Debug)]
pub(super) enum Seg {
    Last,
    Key(String),
}

#[derive(Debug)]
pub(super) enum Open {
    None,
    Str,
    Num,
}

#[derive(Debug)]
pub(super) struct Tree {
    /// An array holding the root value once it begins.
    pub(super) top: Value,
    /// From `top` to the innermost open container, or open string/number (`open`).
    pub(super) path: Vec<Seg>,
    pub(super) open: Open,
    pub(super) in_key: bool,
    pub(super) key: String,
    /// Chars of the open string not yet written to the tree.
    pub(super) chunk: String,
    /// A `\uD8xx` escape waiting for its low half.
    pub(super) hi: Option<u16>,
    /// The tree's open string ends with a stand-in for `hi` (its marker, as if it stayed lone).
    pub(super) provisional: bool,
    /// The open number, read so far.
    pub(super) num: Num,
    pub(super) num_dirty: bool,
    /// Objects the secure parse rejects: with a `__proto__` key, or with a `constructor`
    /// object that has a `prototype` key.
    pub(super) poison: i64,
    pub(super) work: u64,
    pub(super) rev: u64,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            top: Value::Array(Vec::new()),
            path: Vec::new(),
            open: Open::None,
            in_key: false,
            key: String::new(),
            chunk: String::new(),
            hi: None,
            provisional: false,
            num: Num::open('0'),
            num_dirty: false,
            poison: 0,
            work: 0,
            rev: 0,
        }
    }
}

pub(super) fn nav<'a>(mut v: &'a mut Value, path: &[Seg], work: &mut u64) -> Option<&'a mut Value> {
    *work += path.len() as u64 + 1;
    for seg in path {
        v = match (v, seg) {
            (Value::Array(a), Seg::Last) => a.last_mut()?,
            (Value::Object(m), Seg::Key(k)) => m.get_mut(k)?,
            _ => return None,
        };
    }
    Some(v)
}

pub(super) fn has_prototype(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.contains_key("prototype"))
}

/// The poisoned objects within `v`.
pub(super) fn poison_of(v: &Value, work: &mut u64) -> i64 {
    let (mut n, mut todo) = (0, vec![v]);
    while let Some(v) = todo.pop() {
        *work += 1;
        match v {
            Value::Object(m) => {
                n += i64::from(m.contains_key("__proto__"))
                    + i64::from(m.get("constructor").is_some_and(has_prototype));
                todo.extend(m.values());
            }
            Value::Array(a) => todo.extend(a),
            _ => {}
        }
    }
    n
}

/// Resolves a pending high surrogate that no low one follows (JS keeps it lone: its marker).
pub(super) fn lone(buf: &mut String, hi: &mut Option<u16>) {
    if let Some(h) = hi.take() {
        buf.push(marker(u32::from(h)));
    }
}

impl Tree {
    pub(super) fn apply(&mut self, ev: Ev) {
        match ev {
            Ev::None => {}
            Ev::Push(Kind::Obj) => self.begin(Value::Object(Map::new()), true),
            Ev::Push(Kind::Arr) => self.begin(Value::Array(Vec::new()), true),
            Ev::Pop => {
                self.path.pop();
            }
            Ev::StrOpen => {
                self.begin(Value::String(String::new()), true);
                self.open = Open::Str;
                self.provisional = false;
            }
            Ev::KeyOpen => {
                self.key.clear();
                self.in_key = true;
            }
            Ev::Char(c) => {
                let buf = if self.in_key {
                    &mut self.key
                } else {
                    &mut self.chunk
                };
                lone(buf, &mut self.hi);
                // The text lexed holds markers already: each stands for its unit, as is.
                buf.push(c);
            }
            Ev::Unit(u) => {
                let buf = if self.in_key {
                    &mut self.key
                } else {
                    &mut self.chunk
                };
                match (self.hi, u) {
                    (Some(h), 0xDC00..=0xDFFF) => {
                        self.hi = None;
                        let c = 0x10000 + ((u32::from(h) - 0xD800) << 10) + u32::from(u) - 0xDC00;
                        push_char(buf, char::from_u32(c).unwrap_or('\u{FFFD}'));
                    }
                    _ => {
                        lone(buf, &mut self.hi);
                        match char::from_u32(u32::from(u)) {
                            Some(c) => buf.push(c),
                            None if u < 0xDC00 => self.hi = Some(u),
                            None => buf.push(marker(u32::from(u))),
                        }
                    }
                }
            }
            Ev::KeyEnd => {
                lone(&mut self.key, &mut self.hi);
                self.in_key = false;
            }
            Ev::StrEnd => {
                lone(&mut self.chunk, &mut self.hi);
                self.end_leaf();
            }
            Ev::NumOpen(c) => {
                self.begin(Value::Null, true);
                self.open = Open::Num;
                self.num = Num::open(c);
                self.num_dirty = true;
            }
            Ev::NumChar(c) => {
                self.num.push(c);
                self.num_dirty = true;
            }
            Ev::Lit(w) => self.begin(
                if w < 2 {
                    Value::Bool(w == 0)
                } else {
                    Value::Null
                },
                false,
            ),
        }
    }

    /// Adds a value to the innermost open container; `opens` when it stays open.
    pub(super) fn begin(&mut self, v: Value, opens: bool) {
        self.rev += 1;
        let Some(parent) = nav(&mut self.top, &self.path, &mut self.work) else {
            return;
        };
        let seg = match parent {
            Value::Array(a) => {
                a.push(v);
                Seg::Last
            }
            Value::Object(m) => {
                let key = std::mem::take(&mut self.key);
                let ctor = matches!(self.path.last(), Some(Seg::Key(k)) if k == "constructor");
                self.poison += match m.insert(key.clone(), v) {
                    None => i64::from(key == "__proto__") + i64::from(ctor && key == "prototype"),
                    Some(old) => {
                        -poison_of(&old, &mut self.work)
                            - i64::from(key == "constructor" && has_prototype(&old))
                    }
                };
                Seg::Key(key)
            }
            _ => return,
        };
        if opens {
            self.path.push(seg);
        }
    }

    /// Closes the open string or number.
    pub(super) fn end_leaf(&mut self) {
        self.flush();
        self.open = Open::None;
        self.path.pop();
    }

    /// Writes the open string's or number's progress into the tree.
    pub(super) fn flush(&mut self) {
        match self.open {
            Open::Str if !self.chunk.is_empty() || self.provisional != self.hi.is_some() => {
                if let Some(Value::String(s)) = nav(&mut self.top, &self.path, &mut self.work) {
                    if self.provisional {
                        s.pop();
                    }
                    s.push_str(&self.chunk);
                    if let Some(h) = self.hi {
                        s.push(marker(u32::from(h)));
                    }
                }
                self.provisional = self.hi.is_some();
                self.chunk.clear();
                self.rev += 1;
            }
            Open::Num if self.num_dirty => {
                self.num_dirty = false;
                // Only a number ending in a digit is complete. It is read as serde_json reads
                // numbers everywhere else in the crate (see the module docs), in O(1) however
                // long the token; too large for an f64 is JS's Infinity, which JSON shows as
                // null.
                if self.num.complete() {
                    let v = self.num.value();
                    if let Some(slot) = nav(&mut self.top, &self.path, &mut self.work) {
                        *slot = v;
                        self.rev += 1;
                    }
                }
            }
            _ => {}
        }
    }
}
