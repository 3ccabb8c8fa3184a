//! Strict JSON, what `JSON.parse` accepts: a lexer fed char by char, over the whole text and
//! over the committed prefix.

use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) enum Esc {
    No,
    Bs,
    U(u8, u16),
}

#[derive(Clone, Copy, Debug)]
pub(super) enum N {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

pub(super) fn num_done(n: N) -> bool {
    matches!(n, N::Zero | N::Int | N::Frac | N::Exp)
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Lx {
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
pub(super) fn complete(st: Lx, depth: usize) -> bool {
    depth == 0 && (matches!(st, Lx::After) || matches!(st, Lx::Num(n) if num_done(n)))
}

pub(super) enum Ev {
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
pub(super) fn step(st: &mut Lx, c: char, top: Option<Kind>) -> Ev {
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

pub(super) fn err(st: &mut Lx) -> Ev {
    *st = Lx::Err;
    Ev::None
}

/// Feeds strict JSON text to a lexer whose stack is `stacks.b`, building `tree`.
pub(super) fn feed(lex: &mut Lx, stacks: &mut Stacks, tree: &mut Tree, text: &str) {
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
