//! The package's TypeScript declarations, two sections of the one `.d.ts` wasm-bindgen
//! writes: `generated.d.ts`, the types of the core's serialised Rust types, generated from
//! them (`UPDATE_TS=1 cargo test --features ts --test ts_generated` rewrites it, and fails
//! without `UPDATE_TS` when it is stale), and the hand-kept `types.d.ts`: the JS-side classes,
//! options and functions, and the snapshot's shapes this shell assembles. wasm-bindgen takes
//! both out of the module: they cost the wasm nothing.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const GENERATED: &'static str = include_str!("generated.d.ts");

#[wasm_bindgen(typescript_custom_section)]
const TS: &'static str = include_str!("types.d.ts");
