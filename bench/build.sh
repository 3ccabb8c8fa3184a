#!/usr/bin/env bash
# The package the bench measures: scripts/build-pkg.sh's build with the `bench` feature (its
# exports benchFloor, BenchCore, benchExportedMessages), into target/bench-pkg/ (BENCH_PKG=dir
# elsewhere), from its own cargo target dir so it never evicts the shipped build. The shipped
# package (scripts/build-pkg.sh, pkg/) has none of these exports; the bench's size figure is
# taken from it.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_OPT=node_modules/.bin/wasm-opt
[ -x "$WASM_OPT" ] || { echo "wasm-opt missing: run npm ci first" >&2; exit 1; }

TARGET_DIR=target/bench-wasm
cargo build --release --target wasm32-unknown-unknown --lib --features bench --target-dir "$TARGET_DIR"
WASM=$TARGET_DIR/wasm32-unknown-unknown/release/agent_chat_store.wasm

OUT=${BENCH_PKG:-target/bench-pkg}
rm -rf "$OUT"
wasm-bindgen --target bundler --weak-refs --out-dir "$OUT" "$WASM"
wasm-bindgen --target web --weak-refs --out-dir "$OUT/web" "$WASM"
for f in "$OUT/agent_chat_store_bg.wasm" "$OUT/web/agent_chat_store_bg.wasm"; do
  "$WASM_OPT" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue "$f" -o "$f"
done
cp -r pkg-template/. "$OUT/"
rm -f "$OUT/.gitignore" "$OUT/web/.gitignore" "$OUT/web/package.json"
echo "$OUT/ built (bench feature)"
