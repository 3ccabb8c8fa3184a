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
//! * `Fix`, our own model of `fixJson`'s state machine, state for state (over UTF-16 code
//!   units, like JS): it moves the committed prefix and knows the closers;
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
//! as text: `Num` (`number.rs`) folds each char into what serde_json's parser would hold at that
//! point (a u64 significand, a decimal exponent), so a number streamed digit by digit costs O(1)
//! per digit and per read, with the value `serde_json::from_str` gives for the whole token.
//! Nesting deeper than [`MAX_DEPTH`] fails.
//!
//! The files: this one (the driver), `fix.rs` (`fixJson`), `lexer.rs` (strict JSON),
//! `number.rs`, `tree.rs` (the value).

mod fix;
mod lexer;
mod number;
mod tree;

use crate::protocol::json::{marker, push_char};
use serde_json::{Map, Value};

use fix::*;
use lexer::*;
use number::*;
use tree::*;

pub use fix::MAX_DEPTH;

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
    /// Nothing pushed yet: [`ParseState::UndefinedInput`].
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

    /// `parsePartialJson`'s `state` for the text pushed so far.
    pub fn state(&self) -> ParseState {
        self.state
    }

    /// The text pushed so far.
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
