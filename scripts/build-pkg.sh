#!/usr/bin/env bash
# Builds the npm package into pkg/: the release wasm through wasm-bindgen's web output (pkg/web/)
# and wasm-opt from the npm `binaryen` package, the root entry's copy of that glue and the module
# bytes as JS (below), and the committed pkg-template/ merged over them. `npm pack pkg` gives the
# tarball the packaging tests install.
# PKG_OUT=dir builds elsewhere (benchmarks and parallel work keep pkg/ untouched);
# PKG_FEATURES=a,b builds with those cargo features, PKG_TARGET_DIR=dir in that cargo target
# dir (default target/): bench/build.sh is PKG_FEATURES=bench PKG_TARGET_DIR=target/bench-wasm.
# PKG_NO_DEFAULT_FEATURES=1 leaves the default features out (then PKG_FEATURES says what goes
# in): PKG_NO_DEFAULT_FEATURES=1 PKG_FEATURES=store is the AI-SDK-mode wasm, without `pi` and
# `replay`. Such a build is one module (its root entry exports what it has); the standard one
# is three (below).
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_OPT=node_modules/.bin/wasm-opt
[ -x "$WASM_OPT" ] || { echo "wasm-opt missing: run npm ci first" >&2; exit 1; }

FEATURES=${PKG_FEATURES:-}
NO_DEFAULT=${PKG_NO_DEFAULT_FEATURES:+--no-default-features}
TARGET_DIR=${PKG_TARGET_DIR:-target}
# The wasm is the binding crate crates/wasm, a cdylib only, so the release profile's LTO is kept
# (a crate that is also an rlib is linked without it: +21 KB gzip).
#
# The standard library is rebuilt with the crate (-Zbuild-std, from the rust-src component
# scripts/setup.sh installs) so that a panic is a bare trap (`-Cpanic=immediate-abort`): the
# shipped std's panic machinery (message formatting, locations, the hook) is 12.5 KB gzip of
# the wasm, and on wasm32-unknown-unknown its message went nowhere anyway: a panic was already
# an `unreachable` trap for JS. optimize_for_size picks std's smaller code paths (-0.5 KB).
# `--cfg optimize_hot_path` marks the per-event path (the SSE line loop, the byte scans, the
# delta fast path, a message's lookup and its text append) `#[optimize(speed)]` in the
# size-optimised crate: the wasm core 7–12 % faster on bench (a), 18 % on (e), for 0.1 KB gzip
# (more functions marked: 0.9 KB for no more; opt-level "s" for all of it: 29 %, +35 KB).
# These flags are unstable; RUSTC_BOOTSTRAP=1 lets this stable toolchain accept them, for this
# build only (scripts/fuzz.sh does the same for the fuzzers). The tests' builds use the normal
# std, so a panic in a test still says where. `wasm-pack build crates/wasm` is the same build
# without these three flags.
OUT=${PKG_OUT:-pkg}
rm -rf "$OUT"

# module DIR CARGO_ARGS...: the wasm built with those feature arguments, as DIR/web/ (wasm-bindgen's
# web output, optimised), DIR/agent_chat_store_bg.js (the glue the inlined entry uses) and
# DIR/agent_chat_store_wasm.js (the module bytes as JS).
module() {
  local dir=$1
  shift
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort --cfg optimize_hot_path" \
    cargo build --release --target wasm32-unknown-unknown -p agent-chat-store-wasm \
    -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size \
    "$@" --target-dir "$TARGET_DIR"
  local wasm=$TARGET_DIR/wasm32-unknown-unknown/release/agent_chat_store_wasm.wasm
  wasm-bindgen --target web --out-name agent_chat_store --out-dir "$dir/web" "$wasm"
  # Features the wasm-bindgen output uses; optimised for size. The same flags are crates/wasm's
  # [package.metadata.wasm-pack] (keep the two alike). -Os --converge with --low-memory-unused
  # is 1.4 KB gzip smaller than -Oz (bench/results.md, "Size, step by step"); the low 1 KB of
  # memory is the bottom of Rust's 1 MB stack, reached only by an overflow that would already
  # corrupt memory on wasm32.
  "$WASM_OPT" --low-memory-unused -Os --converge --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$dir/web/agent_chat_store_bg.wasm" -o "$dir/web/agent_chat_store_bg.wasm"

  # The root entry (pkg-template/agent_chat_store.js) carries the module in its JS, compiled on
  # import with initSync: no bundler, dev server or runtime has to know WebAssembly. Not
  # wasm-bindgen's bundler output (`import * as wasm from "./x.wasm"`): Vite's dev pre-bundler
  # copies that glue, and the .wasm then imports a second, never-initialised copy of it; Node
  # cannot import a .wasm at all. Its glue is the web glue without the default module URL (a
  # bundler that sees `new URL("x.wasm", import.meta.url)` emits the file, which nothing
  # loads), sharing the web build's snippets.
  local glue="$dir/agent_chat_store_bg.js"
  sed -e "s#new URL('agent_chat_store_bg.wasm', import.meta.url)#undefined#" \
      -e "s#\(from ['\"]\)\./snippets/#\1./web/snippets/#" "$dir/web/agent_chat_store.js" > "$glue"
  if grep -q 'import.meta' "$glue" || ! grep -q './web/snippets/' "$glue" \
    || grep -qE "(from|import) ['\"]\./snippets/" "$glue"; then
    echo "build-pkg: wasm-bindgen's web glue changed shape; update the sed above" >&2; exit 1
  fi
  # The bytes deflated, then base64: gzip of the text is then the size of gzip of the .wasm
  # (base64 alone gzips to +29 %); pkg-template/src/inflate.ts undoes both, synchronously.
  node -e '
    const fs = require("fs"), zlib = require("zlib");
    const wasm = fs.readFileSync(process.argv[1]);
    const packed = zlib.deflateRawSync(wasm, { level: 9 }).toString("base64");
    fs.writeFileSync(process.argv[2], "// Generated by scripts/build-pkg.sh: web/agent_chat_store_bg.wasm, deflated, as base64.\n"
      + "export const size = " + wasm.length + ";\nexport default \"" + packed + "\";\n");
  ' "$dir/web/agent_chat_store_bg.wasm" "$dir/agent_chat_store_wasm.js"
  echo "$dir/: $(gzip -9 -c "$dir/web/agent_chat_store_bg.wasm" | wc -c) bytes gzip wasm," \
    "$(gzip -9 -c "$dir/agent_chat_store_wasm.js" | wc -c) bytes gzip as JS"
}

# The entries that re-export the replay module name it on this line (pkg-template).
REPLAY_LINE='/from "\.\.\?\/replay\/index\.js"/d'
STANDARD=
[ -z "$FEATURES$NO_DEFAULT" ] && STANDARD=1

if [ -n "$STANDARD" ]; then
  # The root entry's module: the store with the pi modes. The replay helpers are a module of
  # their own (replay/), which the root entry re-exports: package.json's `sideEffects` lets a
  # bundler leave it out of a page that imports none of them (6.6 KB gzip, bench/results.md).
  module "$OUT" --no-default-features --features store,pi
  module "$OUT/replay" --no-default-features --features pi,replay
  # Only its snippets are used of its web output (the bytes are in its JS); its entry is
  # pkg-template/replay/index.js.
  rm -f "$OUT/replay/web/agent_chat_store_bg.wasm" "$OUT/replay/web/agent_chat_store_bg.wasm.d.ts" \
    "$OUT/replay/web/agent_chat_store.js" "$OUT/replay/web/agent_chat_store.d.ts" \
    "$OUT/replay/web/package.json" "$OUT/replay/web/.gitignore"
else
  module "$OUT" $NO_DEFAULT ${FEATURES:+--features "$FEATURES"}
fi

cp -r pkg-template/. "$OUT/"
rm -rf "$OUT/src" "$OUT/tsconfig.json"
rm -f "$OUT/.gitignore" "$OUT/web/.gitignore" "$OUT/web/package.json"
# The hooks, the chat, the assistant-ui runtime and the tool registry are TypeScript
# (pkg-template/src/), compiled here into the package's plain ES2022 modules and their
# declarations, next to the wasm-bindgen module whose types they import (pkg-template/tsconfig.json
# lays $OUT over src/ for that). A type error fails the build: the sources are checked by
# `tsc --strict` on every build, not only their declarations by tests/ts.
TSC=node_modules/.bin/tsc
[ -x "$TSC" ] || { echo "tsc missing: run npm ci first" >&2; exit 1; }
cat > "$OUT/tsconfig.build.json" <<JSON
{
  "extends": "$PWD/pkg-template/tsconfig.json",
  "compilerOptions": {
    "rootDir": "$PWD/pkg-template/src",
    "rootDirs": ["$PWD/pkg-template/src", "."],
    "outDir": ".",
    "noEmit": false
  },
  "include": ["$PWD/pkg-template/src"]
}
JSON
"$TSC" -p "$OUT/tsconfig.build.json"
rm "$OUT/tsconfig.build.json"
if [ -z "$STANDARD" ]; then
  # One module: the entries export what it has, and there is no replay module.
  sed -i -e "$REPLAY_LINE" "$OUT/agent_chat_store.js" "$OUT/web/index.js"
  rm -rf "$OUT/replay"
fi
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
node -e '
  const fs = require("fs");
  const p = JSON.parse(fs.readFileSync(process.argv[2] + "/package.json", "utf8"));
  p.version = process.argv[1];
  fs.writeFileSync(process.argv[2] + "/package.json", JSON.stringify(p, null, 2) + "\n");
' "$VERSION" "$OUT"
# The AI SDK build, `agent-chat-store/ai-sdk` and `agent-chat-store/ai-sdk/react` (issue 22):
# the same crate without `pi` and `replay`, for an app that uses the drop-in `useChat` or the
# AI SDK mode only. Its entries are the root ones with their imports pointed at its own module:
# generated here, so there is one source of the hooks. Left out of builds asking for other
# features (the bench's) and with PKG_AI_SDK=0.
if [ -n "$STANDARD" ] && [ "${PKG_AI_SDK:-1}" != 0 ]; then
  AI="$OUT/ai-sdk"
  module "$AI" --no-default-features --features store
  # Only the snippets and the types of its web output are used (the bytes are in its JS).
  rm -f "$AI/web/agent_chat_store_bg.wasm" "$AI/web/agent_chat_store_bg.wasm.d.ts" \
    "$AI/web/agent_chat_store.js" "$AI/web/package.json" "$AI/web/.gitignore"
  sed -e 's#"\./inflate\.js"#"../inflate.js"#' -e "$REPLAY_LINE" pkg-template/agent_chat_store.js \
    > "$AI/index.js"
  cp pkg-template/agent_chat_store.d.ts "$AI/index.d.ts"
  # From the compiled package ($OUT), which has the sources' .js and .d.ts (ai-types is types
  # only: its empty .js is not needed).
  for f in react.js react.d.ts chat.js chat.d.ts use-chat.js use-chat.d.ts ai-types.d.ts; do
    sed -e 's#"\./agent_chat_store\.js"#"./index.js"#' -e 's#"\./tool-ui\.js"#"../tool-ui.js"#' \
      "$OUT/$f" > "$AI/$f"
  done
  if grep -qE "from \"\./(agent_chat_store|tool-ui|inflate)\.js\"|/replay/" "$AI"/*.js "$AI"/*.d.ts; then
    echo "build-pkg: an ai-sdk entry still imports a root module; update the seds above" >&2; exit 1
  fi
fi
echo "$OUT/ built${NO_DEFAULT:+ (no default features)}${FEATURES:+ (features: $FEATURES)}"
