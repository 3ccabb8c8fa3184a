#!/usr/bin/env bash
# Builds the npm package into pkg/: the release wasm, wasm-bindgen's bundler output (pkg/)
# and web output (pkg/web/), both optimised by wasm-opt from the npm `binaryen` package, and
# the committed pkg-template/ merged over them. `npm install ./pkg` works afterwards.
# PKG_OUT=dir builds elsewhere (benchmarks and parallel work keep pkg/ untouched);
# PKG_FEATURES=a,b builds with those cargo features, PKG_TARGET_DIR=dir in that cargo target
# dir (default target/): bench/build.sh is PKG_FEATURES=bench PKG_TARGET_DIR=target/bench-wasm.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_OPT=node_modules/.bin/wasm-opt
[ -x "$WASM_OPT" ] || { echo "wasm-opt missing: run npm ci first" >&2; exit 1; }

FEATURES=${PKG_FEATURES:-}
TARGET_DIR=${PKG_TARGET_DIR:-target}
# `cargo rustc --crate-type cdylib`, not `cargo build`: with Cargo.toml's crate-type
# ["cdylib", "rlib"] cargo drops `lto` from the profile (an rlib cannot be LTO'd), so the
# wasm would be linked without LTO (+21 KB gzip). The rlib is for the native tests only.
#
# The standard library is rebuilt with the crate (-Zbuild-std, from the rust-src component
# scripts/setup.sh installs) so that a panic is a bare trap (`-Cpanic=immediate-abort`): the
# shipped std's panic machinery (message formatting, locations, the hook) is 12.5 KB gzip of
# the wasm, and on wasm32-unknown-unknown its message went nowhere anyway: a panic was already
# an `unreachable` trap for JS. optimize_for_size picks std's smaller code paths (-0.5 KB).
# These flags are unstable; RUSTC_BOOTSTRAP=1 lets this stable toolchain accept them, for this
# build only (scripts/fuzz.sh does the same for the fuzzers). The tests' builds use the normal
# std, so a panic in a test still says where.
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" \
  cargo rustc --release --target wasm32-unknown-unknown --lib --crate-type cdylib \
  -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size \
  ${FEATURES:+--features "$FEATURES"} --target-dir "$TARGET_DIR"
WASM=$TARGET_DIR/wasm32-unknown-unknown/release/agent_chat_store.wasm

OUT=${PKG_OUT:-pkg}
rm -rf "$OUT"
wasm-bindgen --target bundler --weak-refs --out-dir "$OUT" "$WASM"
wasm-bindgen --target web --weak-refs --out-dir "$OUT/web" "$WASM"
for f in "$OUT/agent_chat_store_bg.wasm" "$OUT/web/agent_chat_store_bg.wasm"; do
  # Features the wasm-bindgen output uses; -Oz for size (the bundle budget is 40 KB gzip).
  "$WASM_OPT" -Oz --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue "$f" -o "$f"
done

cp -r pkg-template/. "$OUT/"
rm -f "$OUT/.gitignore" "$OUT/web/.gitignore" "$OUT/web/package.json"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
node -e '
  const fs = require("fs");
  const p = JSON.parse(fs.readFileSync(process.argv[2] + "/package.json", "utf8"));
  p.version = process.argv[1];
  fs.writeFileSync(process.argv[2] + "/package.json", JSON.stringify(p, null, 2) + "\n");
' "$VERSION" "$OUT"
echo "$OUT/ built${FEATURES:+ (features: $FEATURES)}: $(gzip -9 -c "$OUT/agent_chat_store_bg.wasm" | wc -c) bytes gzip wasm"
