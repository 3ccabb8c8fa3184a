//! Streamed tool-call input: the `ai` package's `parsePartialJson`, made incremental.
//!
//! `parsePartialJson(text)` (ai 7) answers `JSON.parse(text)` when that works
//! (`successful-parse`), else `JSON.parse(fixJson(text))` (`repaired-parse`), else nothing
//! (`failed-parse`); both parses are the SDK's secure parse, which also rejects an object with a
//! `__proto__` key or a `constructor` object holding `prototype`. `fixJson` is a lenient scanner:
//! it keeps `text[..=lastValidIndex]` (the *committed prefix*) and appends closers for what it
//! believes is still open. The SDK reruns all this on the whole text at every delta.
//!
//! [`PartialJson`] gives the same answer with work proportional to each delta. Every char is
//! seen once by each of
//! * `Fix`, an exact port of `fixJson`'s state machine (over UTF-16 code units, like JS): it
//!   moves the committed prefix and knows the closers;
//! * a strict JSON lexer over the whole text: is the text itself valid JSON?
//! * a strict JSON lexer over the committed prefix (fed as the prefix grows) driving `Tree`,
//!   which builds the value in place.
//!
//! The repaired text is valid iff the strict lexer accepts the committed prefix and then the
//! closers; that is O(1) to check because the two container stacks are compared through the
//! length of their common prefix, kept up to date on every push and pop.
//!
//! Where a JS value has no `serde_json::Value`: a lone surrogate (`"\ud83d"`) is its marker
//! (`protocol::json::MARKERS`, written back as the same escape, so JS sees what the `ai` package
//! holds) and Infinity (`1e400`) is null, as it reaches Rust from JS. Numbers are read as
//! serde_json reads them, as everywhere else in the crate: integers exactly (JS rounds those beyond
//! 2^53) and floats within an ulp of JS (serde_json's default float parsing is not always correctly
//! rounded; Rust's `f64::from_str` would cost the wasm some 13 KB gzip). A number token is not kept
//! as text: [`Num`] folds each char into what serde_json's parser would hold at that point (a u64
//! significand, a decimal exponent), so a number streamed digit by digit costs O(1) per digit and
//! per read, with the value `serde_json::from_str` gives for the whole token. Nesting deeper than
//! [`MAX_DEPTH`] fails.

use crate::protocol::json::marker;
use serde_json::{Map, Value};

/// `parsePartialJson`'s `state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseState {
    /// Nothing pushed yet (the SDK's `undefined` text). Pushed text, even empty, never is.
    UndefinedInput,
    /// The text so far is valid JSON.
    SuccessfulParse,
    /// The text parses once `fixJson` closed it.
    RepairedParse,
    /// Neither parses.
    FailedParse,
}

/// Streaming tool-call input: push text deltas, get the value the `ai` package's
/// `parsePartialJson` would give for the whole text so far.
#[derive(Debug)]
pub struct PartialJson {
    text: String,
    pushed: bool,
    fix: Fix,
    /// Strict lexer over the whole text.
    whole_lex: Lx,
    whole_stack: Vec<Kind>,
    /// The top-level number of the whole text, when its value is one.
    whole_num: Option<Num>,
    /// Byte length of the text without its trailing JSON whitespace.
    trimmed: usize,
    /// Strict lexer over the committed prefix; its container stack is `stacks.b`.
    lex: Lx,
    stacks: Stacks,
    /// Byte length of the committed prefix, fed to `lex` so far.
    committed: usize,
    tree: Tree,
    /// The whole text's value, when it is valid JSON that `fixJson` misread (rare): (trimmed
    /// length it was parsed at, value, poison).
    whole: Option<(usize, Option<Value>, i64)>,
    from_whole: bool,
    state: ParseState,
    revision: u64,
    changed: bool,
    work: u64,
    /// The value was moved out by [`PartialJson::lend_value`] and not given back yet.
    lent: bool,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialJson {
    pub fn new() -> Self {
        PartialJson {
            text: String::new(),
            pushed: false,
            fix: Fix {
                finished: false,
                sub: Sub::ArrStart,
                leaf: Leaf::None,
            },
            whole_lex: Lx::Value,
            whole_stack: Vec::new(),
            whole_num: None,
            trimmed: 0,
            lex: Lx::Value,
            stacks: Stacks::default(),
            committed: 0,
            tree: Tree::default(),
            whole: None,
            from_whole: false,
            state: ParseState::UndefinedInput,
            revision: 0,
            changed: false,
            work: 0,
            lent: false,
        }
    }

    /// Appends a delta. Amortised cost proportional to the delta's length (plus the depth of the
    /// open path for each value the delta completes), not to the whole text.
    ///
    /// A value lent out ([`PartialJson::lend_value`]) and not given back is rebuilt from the
    /// text first (work proportional to the whole text, once).
    pub fn push(&mut self, delta: &str) {
        if self.lent {
            self.rebuild();
        }
        let start = self.text.len();
        self.text.push_str(delta);
        self.work += delta.len() as u64;
        let kept = delta.trim_end_matches(WS).len();
        if kept > 0 {
            self.trimmed = start + kept;
        }
        let before = (self.state, self.from_whole, self.tree.rev);
        self.pushed = true;
        // Both lexers failed: the text is not JSON and its committed prefix is not a JSON
        // prefix, whatever follows.
        if !matches!((self.lex, self.whole_lex), (Lx::Err, Lx::Err)) {
            let mut committed = self.committed;
            for (i, ch) in delta.char_indices() {
                let ev = step(&mut self.whole_lex, ch, self.whole_stack.last().copied());
                match ev {
                    Ev::Push(_) if self.whole_stack.len() >= MAX_DEPTH => self.whole_lex = Lx::Err,
                    Ev::Push(k) => self.whole_stack.push(k),
                    Ev::Pop => {
                        self.whole_stack.pop();
                    }
                    Ev::NumOpen(c) if self.whole_stack.is_empty() => {
                        self.whole_num = Some(Num::open(c));
                    }
                    Ev::NumChar(c) if self.whole_stack.is_empty() => {
                        if let Some(n) = &mut self.whole_num {
                            n.push(c);
                        }
                    }
                    _ => {}
                }
                let unit = if ch.is_ascii() { ch as u8 } else { 0x80 };
                let mut valid = false;
                for _ in 0..ch.len_utf16() {
                    valid |= self.fix.unit(unit, &mut self.stacks);
                }
                if valid {
                    committed = start + i + ch.len_utf8();
                }
            }
            let new = self.text.get(self.committed..committed).unwrap_or("");
            feed(&mut self.lex, &mut self.stacks, &mut self.tree, new);
            self.tree.flush();
            self.committed = committed;
        }
        self.state = if self.whole_ok() {
            ParseState::SuccessfulParse
        } else if self.repaired_ok() {
            ParseState::RepairedParse
        } else {
            ParseState::FailedParse
        };
        self.changed = (self.state, self.from_whole) != (before.0, before.1)
            || (self.value_ref().is_some() && self.tree.rev != before.2);
        self.revision += u64::from(self.changed);
    }

    /// Parses the text so far again from scratch (a lent value was not given back).
    fn rebuild(&mut self) {
        let text = std::mem::take(&mut self.text);
        let (revision, work) = (self.revision, self.work_units());
        *self = PartialJson::new();
        self.push(&text);
        self.revision = revision;
        self.work += work;
    }

    /// Moves the current value out (what [`PartialJson::value`] would clone), so that a
    /// holder that shows it (the streaming tool part's `input`) costs no copy per delta. Give
    /// it back with [`PartialJson::restore_value`] before the next push, unchanged; a value
    /// not given back is rebuilt from the text on the next push. While lent,
    /// [`PartialJson::value_ref`] gives `None`.
    pub fn lend_value(&mut self) -> Option<Value> {
        if self.lent {
            return None;
        }
        match self.state {
            ParseState::SuccessfulParse | ParseState::RepairedParse if !self.from_whole => {
                let root = self.tree.top.as_array_mut().and_then(|a| a.first_mut())?;
                self.lent = true;
                Some(std::mem::take(root))
            }
            // The rare whole-text parse, or no value: a copy (or nothing).
            _ => self.value_ref().cloned(),
        }
    }

    /// Gives back the value [`PartialJson::lend_value`] moved out, as it was.
    pub fn restore_value(&mut self, v: Value) {
        if !self.lent {
            return;
        }
        if let Some(root) = self.tree.top.as_array_mut().and_then(|a| a.first_mut()) {
            *root = v;
            self.lent = false;
        }
    }

    /// Whether the value is lent out.
    pub fn is_lent(&self) -> bool {
        self.lent
    }

    /// Whether the text so far is valid JSON; parses it apart when `fixJson` misread it.
    fn whole_ok(&mut self) -> bool {
        self.from_whole = false;
        if !complete(self.whole_lex, self.whole_stack.len()) {
            self.whole = None;
            return false;
        }
        let trimmed = self.trimmed;
        if self.committed == trimmed && complete(self.lex, self.stacks.b.len()) {
            return self.tree.poison == 0;
        }
        // The committed prefix is not the text: an escaped quote in a key, or a top-level
        // number with an exponent sign (`1e+5`: `fixJson` stops at the `e`). A valid text only
        // grows by whitespace, bar a top-level number, so a container is parsed whole once; a
        // top-level number, which can grow by a digit at every delta, was read along by the
        // whole-text lexer and costs O(1) here.
        if self.whole.as_ref().map(|w| w.0) != Some(trimmed) {
            if let Some(n) = &self.whole_num {
                self.work += 1;
                self.whole = Some((trimmed, Some(n.value()), 0));
            } else {
                let (mut lex, mut stacks, mut tree) =
                    (Lx::Value, Stacks::default(), Tree::default());
                feed(&mut lex, &mut stacks, &mut tree, &self.text);
                tree.flush();
                self.work += self.text.len() as u64 + tree.work;
                let value = match tree.top {
                    Value::Array(mut a) => a.pop(),
                    _ => None,
                };
                self.whole = Some((trimmed, value, tree.poison));
            }
            self.tree.rev += 1; // counts as a change of value
        }
        self.from_whole = self.whole.as_ref().is_some_and(|w| w.2 == 0);
        self.from_whole
    }

    /// Whether `JSON.parse(fixJson(text))` succeeds: the committed prefix, then the closers.
    fn repaired_ok(&self) -> bool {
        let mut st = self.lex;
        let top = self.stacks.b.last().copied();
        for &c in self.fix.closer() {
            step(&mut st, char::from(c), top);
        }
        let n = self.stacks.f.len();
        let closes = if n == 0 {
            complete(st, 0)
        } else {
            matches!(st, Lx::After | Lx::ArrFirst | Lx::ObjFirst)
                || matches!(st, Lx::Num(n) if num_done(n))
        };
        closes && n == self.stacks.b.len() && n == self.stacks.agree && self.tree.poison == 0
    }

    /// The current value (None for undefined input / failed parse): a clone, O(size).
    pub fn value(&self) -> Option<Value> {
        self.value_ref().cloned()
    }

    /// The current value, borrowed: the tree is kept up to date in place, so this is free.
    pub fn value_ref(&self) -> Option<&Value> {
        if self.lent {
            return None;
        }
        match self.state {
            ParseState::SuccessfulParse | ParseState::RepairedParse if self.from_whole => {
                self.whole.as_ref().and_then(|w| w.1.as_ref())
            }
            ParseState::SuccessfulParse | ParseState::RepairedParse => {
                self.tree.top.as_array().and_then(|a| a.first())
            }
            _ => None,
        }
    }

    pub fn state(&self) -> ParseState {
        self.state
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the last push changed the value or the state.
    pub fn value_changed(&self) -> bool {
        self.changed
    }

    /// Counts the pushes that changed the value or the state.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Work done so far: bytes scanned plus value nodes visited. Grows linearly with the text
    /// for inputs of bounded depth (the tests hold it to that).
    pub fn work_units(&self) -> u64 {
        self.work + self.tree.work
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Obj,
    Arr,
}

/// The container stacks of `fixJson` (`f`) and of the strict lexer of the committed prefix
/// (`b`), with the length of their longest common prefix.
#[derive(Debug, Default)]
struct Stacks {
    f: Vec<Kind>,
    b: Vec<Kind>,
    agree: usize,
}

impl Stacks {
    fn push(&mut self, fix: bool, k: Kind) {
        let (me, other) = if fix {
            (&mut self.f, &self.b)
        } else {
            (&mut self.b, &self.f)
        };
        if self.agree == me.len() && other.get(me.len()) == Some(&k) {
            self.agree += 1;
        }
        me.push(k);
    }

    fn pop(&mut self, fix: bool) {
        let me = if fix { &mut self.f } else { &mut self.b };
        me.pop();
        self.agree = self.agree.min(me.len());
    }
}

// ---------------------------------------------------------------------------------------------
// fixJson

/// The state of the innermost open container (the others are all "after value").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
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
enum Leaf {
    None,
    Str,
    Esc,
    Uni(u8),
    Num,
    Lit([u8; 5], u8),
}

/// `fixJson`'s scanner; its containers are `Stacks::f`.
#[derive(Debug)]
struct Fix {
    /// `FINISH` rather than `ROOT` at the bottom of the stack.
    finished: bool,
    sub: Sub,
    leaf: Leaf,
}

/// Nesting beyond this fails the parse (where `JSON.parse` would go on): values this deep would
/// overflow the wasm stack when dropped, cloned or serialised recursively.
pub const MAX_DEPTH: usize = 512;

const LITS: [&[u8]; 3] = [b"true", b"false", b"null"];

impl Fix {
    /// Scans one UTF-16 code unit (`0x80` for any non-ASCII one); true when `lastValidIndex`
    /// moves to it.
    fn unit(&mut self, c: u8, s: &mut Stacks) -> bool {
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
    fn value_start(&mut self, c: u8, s: &mut Stacks) -> bool {
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
    fn after_value(&mut self, c: u8, s: &mut Stacks) -> bool {
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

    fn close(&mut self, s: &mut Stacks) {
        s.pop(true);
        self.sub = match s.f.last() {
            Some(Kind::Obj) => Sub::ObjAfterValue,
            _ => Sub::ArrAfterValue,
        };
    }

    /// What `fixJson` appends before the containers' closers.
    fn closer(&self) -> &'static [u8] {
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

// ---------------------------------------------------------------------------------------------
// Strict JSON (what `JSON.parse` accepts)

#[derive(Clone, Copy, Debug)]
enum Esc {
    No,
    Bs,
    U(u8, u16),
}

#[derive(Clone, Copy, Debug)]
enum N {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

fn num_done(n: N) -> bool {
    matches!(n, N::Zero | N::Int | N::Frac | N::Exp)
}

#[derive(Clone, Copy, Debug)]
enum Lx {
    /// A value is due (start, after `:`, after `,` in an array).
    Value,
    /// After `[`.
    ArrFirst,
    /// After `{`.
    ObjFirst,
    /// After `,` in an object.
    Key,
    KeyStr(Esc),
    Colon,
    After,
    Str(Esc),
    Num(N),
    /// Which of `LITS`, chars matched.
    Lit(u8, u8),
    Err,
}

/// A complete JSON text (if nothing follows).
fn complete(st: Lx, depth: usize) -> bool {
    depth == 0 && (matches!(st, Lx::After) || matches!(st, Lx::Num(n) if num_done(n)))
}

enum Ev {
    None,
    Push(Kind),
    Pop,
    StrOpen,
    KeyOpen,
    Char(char),
    Unit(u16),
    StrEnd,
    KeyEnd,
    NumOpen(char),
    NumChar(char),
    Lit(usize),
}

/// One char of strict JSON; `top` is the innermost open container.
fn step(st: &mut Lx, c: char, top: Option<Kind>) -> Ev {
    let (next, ev) = match *st {
        Lx::Err => return Ev::None,
        Lx::Str(e) | Lx::KeyStr(e) => {
            let key = matches!(*st, Lx::KeyStr(_));
            let within = |e| if key { Lx::KeyStr(e) } else { Lx::Str(e) };
            match (e, c) {
                (Esc::No, '"') if key => (Lx::Colon, Ev::KeyEnd),
                (Esc::No, '"') => (Lx::After, Ev::StrEnd),
                (Esc::No, '\\') => (within(Esc::Bs), Ev::None),
                (Esc::No, '\0'..='\u{1f}') => (Lx::Err, Ev::None),
                (Esc::No, _) => (*st, Ev::Char(c)),
                (Esc::Bs, 'u') => (within(Esc::U(0, 0)), Ev::None),
                (Esc::Bs, _) => match c {
                    '"' | '\\' | '/' => (within(Esc::No), Ev::Char(c)),
                    'b' => (within(Esc::No), Ev::Char('\u{8}')),
                    'f' => (within(Esc::No), Ev::Char('\u{c}')),
                    'n' => (within(Esc::No), Ev::Char('\n')),
                    'r' => (within(Esc::No), Ev::Char('\r')),
                    't' => (within(Esc::No), Ev::Char('\t')),
                    _ => (Lx::Err, Ev::None),
                },
                (Esc::U(n, acc), _) => match c.to_digit(16) {
                    Some(d) => {
                        let acc = (acc << 4) | d as u16;
                        if n == 3 {
                            (within(Esc::No), Ev::Unit(acc))
                        } else {
                            (within(Esc::U(n + 1, acc)), Ev::None)
                        }
                    }
                    None => (Lx::Err, Ev::None),
                },
            }
        }
        Lx::Num(n) => {
            let next = match (n, c) {
                (N::Minus, '0') => N::Zero,
                (N::Minus, '1'..='9') | (N::Int, '0'..='9') => N::Int,
                (N::Zero | N::Int, '.') => N::Dot,
                (N::Dot | N::Frac, '0'..='9') => N::Frac,
                (N::Zero | N::Int | N::Frac, 'e' | 'E') => N::E,
                (N::E, '+' | '-') => N::ESign,
                (N::E | N::ESign | N::Exp, '0'..='9') => N::Exp,
                _ if num_done(n) => {
                    *st = Lx::After;
                    return step(st, c, top);
                }
                _ => return err(st),
            };
            (Lx::Num(next), Ev::NumChar(c))
        }
        Lx::Lit(w, i) => {
            let lit = LITS.get(usize::from(w)).copied().unwrap_or_default();
            if lit.get(usize::from(i)).map(|&b| char::from(b)) != Some(c) {
                return err(st);
            }
            let next = if usize::from(i) + 1 == lit.len() {
                Lx::After
            } else {
                Lx::Lit(w, i + 1)
            };
            (next, Ev::None)
        }
        _ if matches!(c, ' ' | '\t' | '\n' | '\r') => return Ev::None,
        Lx::Value | Lx::ArrFirst => match c {
            ']' if matches!(*st, Lx::ArrFirst) => (Lx::After, Ev::Pop),
            '{' => (Lx::ObjFirst, Ev::Push(Kind::Obj)),
            '[' => (Lx::ArrFirst, Ev::Push(Kind::Arr)),
            '"' => (Lx::Str(Esc::No), Ev::StrOpen),
            '-' => (Lx::Num(N::Minus), Ev::NumOpen(c)),
            '0' => (Lx::Num(N::Zero), Ev::NumOpen(c)),
            '1'..='9' => (Lx::Num(N::Int), Ev::NumOpen(c)),
            't' => (Lx::Lit(0, 1), Ev::Lit(0)),
            'f' => (Lx::Lit(1, 1), Ev::Lit(1)),
            'n' => (Lx::Lit(2, 1), Ev::Lit(2)),
            _ => (Lx::Err, Ev::None),
        },
        Lx::ObjFirst | Lx::Key => match c {
            '"' => (Lx::KeyStr(Esc::No), Ev::KeyOpen),
            '}' if matches!(*st, Lx::ObjFirst) => (Lx::After, Ev::Pop),
            _ => (Lx::Err, Ev::None),
        },
        Lx::Colon if c == ':' => (Lx::Value, Ev::None),
        Lx::Colon => (Lx::Err, Ev::None),
        Lx::After => match (c, top) {
            (',', Some(Kind::Arr)) => (Lx::Value, Ev::None),
            (',', Some(Kind::Obj)) => (Lx::Key, Ev::None),
            (']', Some(Kind::Arr)) | ('}', Some(Kind::Obj)) => (Lx::After, Ev::Pop),
            _ => (Lx::Err, Ev::None),
        },
    };
    *st = next;
    ev
}

fn err(st: &mut Lx) -> Ev {
    *st = Lx::Err;
    Ev::None
}

/// Feeds strict JSON text to a lexer whose stack is `stacks.b`, building `tree`.
fn feed(lex: &mut Lx, stacks: &mut Stacks, tree: &mut Tree, text: &str) {
    for c in text.chars() {
        if matches!(*lex, Lx::Err) {
            return;
        }
        let was_num = matches!(*lex, Lx::Num(_));
        let ev = step(lex, c, stacks.b.last().copied());
        if matches!(ev, Ev::Push(_)) && stacks.b.len() >= MAX_DEPTH {
            *lex = Lx::Err;
            return;
        }
        if was_num && !matches!(*lex, Lx::Num(_)) {
            tree.end_leaf();
        }
        match ev {
            Ev::Push(k) => stacks.push(false, k),
            Ev::Pop => stacks.pop(false),
            _ => {}
        }
        tree.apply(ev);
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers

/// JSON's whitespace.
const WS: [char; 4] = [' ', '\t', '\n', '\r'];

/// Where a number token is, for [`Num`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumAt {
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
struct Num {
    positive: bool,
    significand: u64,
    /// The decimal exponent before the exponent part: +1 per integer digit past the u64, -1
    /// per fraction digit in the significand (wrapping, as serde_json's i32 would in a release
    /// build past 2^31 digits).
    exponent: i32,
    at: NumAt,
    exp_positive: bool,
    e: i32,
    /// The token ends with a digit (a complete number).
    digit: bool,
}

/// serde_json's `overflow!(a * 10 + b, max)`.
fn overflows(a: u64, b: u64, max: u64) -> bool {
    a >= max / 10 && (a > max / 10 || b > max % 10)
}

impl Num {
    /// A token beginning with `c` (`-` or a digit).
    fn open(c: char) -> Num {
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
    fn push(&mut self, c: char) {
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
    fn complete(&self) -> bool {
        self.digit
    }

    /// What `serde_json::from_str` gives for the token so far (null where it fails: an f64
    /// overflow, JS's Infinity), computed by serde_json itself from a token of at most ~35
    /// chars that its parser reads to the same significand and exponent: the integer
    /// `significand`, then the final exponent (or, when the token's exponent part overflowed
    /// an i32, an exponent part that overflows too).
    fn value(&self) -> Value {
        use std::fmt::Write;
        let mut t = String::with_capacity(40);
        if !self.positive {
            t.push('-');
        }
        let _ = write!(t, "{}", self.significand);
        match self.at {
            NumAt::Sign | NumAt::Int => {}
            NumAt::LongInt | NumAt::Frac | NumAt::FracOver | NumAt::ExpSign => {
                let _ = write!(t, "e{}", self.exponent);
            }
            NumAt::Exp => {
                let e = if self.exp_positive {
                    self.exponent.saturating_add(self.e)
                } else {
                    self.exponent.saturating_sub(self.e)
                };
                let _ = write!(t, "e{e}");
            }
            NumAt::ExpOver => {
                t.push_str(if self.exp_positive { "e" } else { "e-" });
                t.push_str("9999999999");
            }
        }
        serde_json::from_slice(t.as_bytes()).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// The value, built in place

#[derive(Debug)]
enum Seg {
    Last,
    Key(String),
}

#[derive(Debug)]
enum Open {
    None,
    Str,
    Num,
}

#[derive(Debug)]
struct Tree {
    /// An array holding the root value once it begins.
    top: Value,
    /// From `top` to the innermost open container, or open string/number (`open`).
    path: Vec<Seg>,
    open: Open,
    in_key: bool,
    key: String,
    /// Chars of the open string not yet written to the tree.
    chunk: String,
    /// A `\uD8xx` escape waiting for its low half.
    hi: Option<u16>,
    /// The tree's open string ends with a stand-in for `hi` (its marker, as if it stayed lone).
    provisional: bool,
    /// The open number, read so far.
    num: Num,
    num_dirty: bool,
    /// Objects the secure parse rejects: with a `__proto__` key, or with a `constructor`
    /// object that has a `prototype` key.
    poison: i64,
    work: u64,
    rev: u64,
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

fn nav<'a>(mut v: &'a mut Value, path: &[Seg], work: &mut u64) -> Option<&'a mut Value> {
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

fn has_prototype(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.contains_key("prototype"))
}

/// The poisoned objects within `v`.
fn poison_of(v: &Value, work: &mut u64) -> i64 {
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
fn lone(buf: &mut String, hi: &mut Option<u16>) {
    if let Some(h) = hi.take() {
        buf.push(marker(u32::from(h)));
    }
}

impl Tree {
    fn apply(&mut self, ev: Ev) {
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
                        buf.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
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
    fn begin(&mut self, v: Value, opens: bool) {
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
    fn end_leaf(&mut self) {
        self.flush();
        self.open = Open::None;
        self.path.pop();
    }

    /// Writes the open string's or number's progress into the tree.
    fn flush(&mut self) {
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

#[cfg(test)]
mod lend_tests {
    use super::*;

    #[test]
    fn a_lent_value_comes_back_or_is_rebuilt() {
        let text = r#"{"a":[1,{"b":"cd"}],"e":tru"#;
        let (mut kept, mut lost) = (PartialJson::new(), PartialJson::new());
        for (i, ch) in text.char_indices() {
            let d = &text[i..i + ch.len_utf8()];
            let mut want = PartialJson::new();
            want.push(&text[..i + ch.len_utf8()]);
            kept.push(d);
            lost.push(d);
            assert_eq!(kept.value(), want.value());
            let v = kept.lend_value();
            assert_eq!(v, want.value());
            assert!(kept.value_ref().is_none() || !kept.is_lent());
            if let Some(v) = v {
                kept.restore_value(v);
            }
            // Never given back: the next push rebuilds it from the text.
            assert_eq!(lost.lend_value(), want.value());
        }
        assert_eq!(kept.state(), ParseState::RepairedParse);
        lost.push("e}");
        kept.push("e}");
        assert_eq!(lost.value(), kept.value());
        assert_eq!(lost.state(), ParseState::SuccessfulParse);
    }
}

#[cfg(test)]
mod num_tests {
    use super::*;

    /// What the tree held before `Num`: serde_json on the whole token.
    fn from_token(t: &str) -> Value {
        serde_json::from_str(t).unwrap_or_default()
    }

    /// Same value, same representation (u64, i64 or f64 and its bits: `-0.0`, not `0`).
    fn exact(v: &Value) -> String {
        serde_json::to_string(v).unwrap_or_default()
    }

    /// Every prefix of `token` that ends with a digit, read char by char.
    fn check(token: &str) {
        let mut chars = token.chars();
        let mut n = Num::open(chars.next().unwrap_or('0'));
        let mut len = 1;
        loop {
            let prefix = &token[..len];
            assert_eq!(n.complete(), prefix.ends_with(|c: char| c.is_ascii_digit()));
            if n.complete() {
                assert_eq!(exact(&n.value()), exact(&from_token(prefix)), "{prefix}");
            }
            let Some(c) = chars.next() else { break };
            n.push(c);
            len += c.len_utf8();
        }
    }

    #[test]
    fn a_number_read_char_by_char_is_what_serde_json_reads_whole() {
        let ints = [
            "0",
            "7",
            "9007199254740993",
            "9223372036854775807",
            "9223372036854775808",
            "9223372036854775809",
            "1844674407370955161",
            "18446744073709551615",
            "18446744073709551616",
            "18446744073709551610",
            "18446744073709551619123",
            "99999999999999999999999",
            &"3".repeat(400),
            &format!("1{}", "0".repeat(308)),
            &format!("1{}", "0".repeat(309)),
        ];
        let fracs = [
            "",
            ".0",
            ".5",
            ".000000000000000000001",
            ".12345678901234567890123",
            ".9",
        ];
        let exps = [
            "",
            "e0",
            "E5",
            "e+5",
            "e-5",
            "e+308",
            "e309",
            "e-324",
            "e-400",
            "e+2147483647",
            "e2147483648",
            "e-2147483647",
            "e-2147483648",
            "e99999999999",
            "e-99999999999",
            "e+00000000000000000012",
        ];
        for sign in ["", "-"] {
            for int in ints {
                for frac in fracs {
                    for exp in exps {
                        check(&format!("{sign}{int}{frac}{exp}"));
                    }
                }
            }
        }
    }

    #[test]
    fn seeded_tokens_read_char_by_char_are_what_serde_json_reads_whole() {
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        let mut below = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..20_000 {
            let mut t = String::new();
            if below(2) == 0 {
                t.push('-');
            }
            let digits = |t: &mut String, n: u64, below: &mut dyn FnMut(u64) -> u64| {
                for _ in 0..n {
                    t.push(char::from(b'0' + below(10) as u8));
                }
            };
            if below(4) == 0 {
                t.push('0');
            } else {
                t.push(char::from(b'1' + below(9) as u8));
                let n = below(30);
                digits(&mut t, n, &mut below);
            }
            if below(2) == 0 {
                t.push('.');
                let n = 1 + below(30);
                digits(&mut t, n, &mut below);
            }
            if below(2) == 0 {
                t.push_str(["e", "E", "e+", "e-", "E+", "E-"][below(6) as usize]);
                let n = 1 + below(12);
                digits(&mut t, n, &mut below);
            }
            check(&t);
        }
    }
}
