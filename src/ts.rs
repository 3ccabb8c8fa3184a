//! The TypeScript declarations of the types the wasm's snapshot and results carry, from the
//! Rust types themselves (feature `ts`, native only: no wasm build enables it). A type with a
//! derived `Serialize` derives its declaration with `ts_rs::TS` next to it; a type whose
//! `Serialize` is written by hand ([`crate::UIMessage`], [`crate::Part`]) states its
//! declaration by hand next to that impl ([`declared!`]), so the one place that decides a
//! shape also says its type.
//!
//! [`declarations`] is the text of `crates/wasm/src/generated.d.ts`, which the wasm's
//! TypeScript section includes beside the hand-kept `types.d.ts` (the JS-side classes,
//! options and functions); `tests/ts_generated.rs` fails when the two differ.

use ts_rs::{Config, TS};

/// Implements [`TS`] for a type whose `Serialize` is written by hand: `$name` is its
/// TypeScript name, `$decl` the declarations (each `export`ed) that define it.
macro_rules! declared {
    ($ty:ty, $name:literal, $decl:expr) => {
        impl ts_rs::TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn name(_: &ts_rs::Config) -> String {
                $name.into()
            }
            fn inline(_: &ts_rs::Config) -> String {
                $name.into()
            }
            fn decl(_: &ts_rs::Config) -> String {
                $decl.trim().into()
            }
        }
    };
}
pub(crate) use declared;

/// The header of the generated file.
const HEADER: &str = "\
// Generated from the Rust types by `UPDATE_TS=1 cargo test --features ts --test ts_generated`
// (src/ts.rs lists them); do not edit. crates/wasm/src/types.d.ts declares the rest.
";

/// A derived declaration, with its doc comment, exported.
fn derived<T: TS>(cfg: &Config, out: &mut String) {
    out.push('\n');
    if let Some(docs) = T::docs() {
        out.push_str(&docs);
    }
    out.push_str("export ");
    out.push_str(&T::decl(cfg));
    out.push('\n');
}

/// A hand-stated declaration ([`declared!`]): already exported.
fn stated<T: TS>(cfg: &Config, out: &mut String) {
    out.push('\n');
    out.push_str(&T::decl(cfg));
    out.push('\n');
}

/// The declarations of the types the package's TypeScript names, in the order of
/// `generated.d.ts`. Integers are `number` (none exceeds 2^53: sequence numbers are ms).
pub fn declarations() -> String {
    let cfg = &Config::new().with_large_int("number");
    let mut out = String::from(HEADER);
    let o = &mut out;
    derived::<crate::Status>(cfg, o);
    derived::<crate::ErrorKind>(cfg, o);
    derived::<crate::ChatError>(cfg, o);
    derived::<crate::Capabilities>(cfg, o);
    derived::<crate::FileAttachment>(cfg, o);
    stated::<crate::Part>(cfg, o);
    stated::<crate::UIMessage>(cfg, o);
    derived::<crate::ToolUiHints>(cfg, o);
    derived::<crate::ToolCatalogEntry>(cfg, o);
    derived::<crate::ItemState>(cfg, o);
    derived::<crate::RunNow>(cfg, o);
    derived::<crate::RunNowOutcome>(cfg, o);
    derived::<crate::machines::followup_queue::QueuedItemJson<'static>>(cfg, o);
    derived::<crate::Refusal>(cfg, o);
    derived::<crate::ComposerState>(cfg, o);
    derived::<crate::SubmitResult>(cfg, o);
    derived::<crate::SessionItem>(cfg, o);
    derived::<crate::Loss>(cfg, o);
    derived::<crate::BranchRefusal>(cfg, o);
    out
}
