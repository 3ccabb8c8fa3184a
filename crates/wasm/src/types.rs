//! The package's TypeScript declarations. They mirror the Rust types' serde shapes field for
//! field (camelCase, `Option` → optional or `| null` as serialised); `tests/ts_types.rs`
//! checks every key the Rust types serialise against this text, so the two cannot drift.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS: &'static str = include_str!("types.d.ts");
