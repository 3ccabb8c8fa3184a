//! The wasm binding: the only code that knows JS. Two parts, by feature: `store`, the JS
//! `ChatStore` (store.rs, with its request driver, options and snapshots), and `replay`, the
//! pure replay helpers (helpers.rs; `SseDecoder` is in every build). The package ships them as
//! two modules, so a page that only uses the store loads no replay code (scripts/build-pkg.sh).
#![deny(unsafe_code)]

/// Talc, not std's dlmalloc: 1.8 KB gzip smaller (bench/results.md, "Size, step by step") and
/// faster in its own wasm benchmarks. Only the wasm is built with it; the unit tests that run
/// natively keep the system allocator.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(feature = "bench")]
mod bench;
#[cfg(feature = "store")]
mod branches;
#[cfg(feature = "store")]
mod driver;
mod helpers;
mod js;
#[cfg(feature = "store")]
mod options;
#[cfg(feature = "store")]
mod snapshot;
#[cfg(feature = "store")]
mod store;
mod types;
#[cfg(all(test, target_arch = "wasm32", feature = "store"))]
mod web_tests;

#[cfg(feature = "store")]
pub use store::JsChatStore;
#[cfg(feature = "store")]
pub(crate) use store::Shell;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use agent_chat_store::{ChatError, ErrorKind};

/// A core error as a JS `Error` with a stable `code`.
pub(crate) fn js_error(e: &ChatError) -> JsValue {
    js::make_error(&agent_chat_store::shell_json::to_string(e))
}

fn usage_error(message: &str) -> JsValue {
    js_error(&ChatError::new(ErrorKind::Validation, message))
}

/// A `Validation` error naming the argument it refuses (`error.field`).
fn arg_error(name: &str, message: &str) -> JsValue {
    let mut e = ChatError::new(ErrorKind::Validation, message);
    e.field = Some(name.to_string());
    js_error(&e)
}

/// A JS argument as JSON text (`None` for `undefined`); a value JSON.stringify refuses (a cycle,
/// a BigInt, nesting past the JS stack) is a typed `Validation` error naming the argument.
fn json_text(v: &JsValue, what: &str) -> Result<Option<String>, JsValue> {
    js::stringify(v).map_err(|e| {
        // A `toJSON` may throw anything, not only an Error.
        let why = match e.dyn_ref::<js_sys::Error>() {
            Some(err) => String::from(err.message()),
            None => e.as_string().unwrap_or_default(),
        };
        usage_error(&format!("{what} cannot be sent as JSON: {why}"))
    })
}

/// `json_text` parsed, under serde_json's nesting limit (128): deeper is a `Validation` error.
fn json_value(v: &JsValue, what: &str) -> Result<Value, JsValue> {
    match json_text(v, what)? {
        None => Ok(Value::Null),
        Some(t) => agent_chat_store::shell_json::from_slice(t.as_bytes())
            .map_err(|e| usage_error(&format!("{what} is not usable JSON: {e}"))),
    }
}
