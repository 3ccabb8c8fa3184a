#!/usr/bin/env bash
# The test command (README): `bash scripts/test.sh` runs everything CI runs, failing on the
# first failure:
#   native cargo test · lints · fuzzing · the wasm build · the npm package built and loaded in
#   Node · the .d.ts checked by tsc --strict · useChat and Chat rendered under jsdom and
#   happy-dom (vitest) · wasm-bindgen-test in headless Chromium against a scripted local
#   server · the reference server's tests · the packed tarball installed into fresh Vite,
#   webpack, Next.js and Node apps (the README quick starts among them) · the example apps end
#   to end in headless Chromium against the reference server (a real pi agent) · the package
#   and the React example against the real upstream servers (../shared/upstream/).
# `bash scripts/test.sh quick` is the tier to run while working (a few minutes on a prepared
# machine): fmt, clippy of the root crate, the sans-IO check, the native tests, and the Node
# tests of pkg/. pkg/ is what those load: when it is missing quick builds it once
# (scripts/build-pkg.sh); when src/, crates/wasm/ or pkg-template/ changed since, quick says
# so and tests it as it is (rebuild: bash scripts/build-pkg.sh).
# Both install what is missing first (scripts/setup.sh); reruns on a prepared machine skip
# that. Each step's elapsed seconds are printed at the end (also when a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

TIER=${1:-full}
case $TIER in
  quick | full) ;;
  *) echo "usage: bash scripts/test.sh [quick]   (no argument: everything CI runs)" >&2; exit 2 ;;
esac

# ----- steps and their timing table -----
TIMES=()      # "seconds|name" per finished step
STEP=         # the running step's name
STEP_T0=0
BG_PIDS=()    # background jobs to stop on exit (-PID: a process group)
end_step() {
  if [ -n "$STEP" ]; then TIMES+=("$((SECONDS - STEP_T0))|$STEP"); fi
  STEP=
}
step() {
  end_step
  STEP=$*
  STEP_T0=$SECONDS
  printf '\n==> %s\n' "$*"
}
# A step that ran in the background next to others: its own seconds, named as such.
record() { TIMES+=("$1|$2"); }
on_exit() {
  local rc=$?
  for pid in "${BG_PIDS[@]}"; do kill -- "$pid" 2>/dev/null || true; done
  if [ -n "$STEP" ] && [ "$rc" -ne 0 ]; then STEP="$STEP (FAILED)"; fi
  end_step
  printf '\nseconds  step (tier: %s)\n' "$TIER"
  for t in "${TIMES[@]}"; do printf '%7s  %s\n' "${t%%|*}" "${t#*|}"; done
  printf '%7s  total\n' "$SECONDS"
  exit "$rc"
}
trap on_exit EXIT

sans_io_check() {
  # The core stays sans-IO: only the binding crate (crates/wasm) may know JS.
  if grep -rlE '\b(wasm_bindgen|js_sys|web_sys)\b' src --include='*.rs'; then
    echo "JS bindings in the core (src/); they belong in crates/wasm/" >&2; exit 1
  fi
}

step "setup (skips what is present)"
bash scripts/setup.sh
bash scripts/install-js.sh .

if [ "$TIER" = quick ]; then
  step "format, clippy (root crate), sans-IO"
  cargo fmt --all --check
  cargo clippy --all-targets -- -D warnings
  sans_io_check

  step "native tests (full build), the package's generated TypeScript types"
  cargo test
  cargo test --features ts --test ts_generated

  step "the npm package for the Node tests (pkg/)"
  if [ ! -f pkg/package.json ]; then
    echo "pkg/ missing: building it once (scripts/build-pkg.sh)"
    bash scripts/build-pkg.sh
  elif newer=$(find src crates/wasm/src crates/wasm/Cargo.toml pkg-template Cargo.toml \
    -newer pkg/package.json -type f -print -quit) && [ -n "$newer" ]; then
    echo "NOTE: pkg/ is older than $newer: the Node tests load the package as last built." >&2
    echo "      Rebuild it with: bash scripts/build-pkg.sh" >&2
  else
    echo "pkg/ is up to date"
  fi

  step "Node: the installed package"
  node --test tests/js/
  end_step
  echo; echo "quick tier passed (everything CI runs: bash scripts/test.sh)"
  exit 0
fi

step "format and lints"
cargo fmt --all --check
# Each run lints one feature set of one target. Features only add code (no cfg(not(...)) of
# `_internal_bench` or `bench` anywhere), so the bench runs lint all the default build's code:
# the root crate with `_internal_bench` is the plain `cargo clippy --all-targets` and the
# native bench driver; the binding crate with `bench` is its default build, its tests and
# the bench exports.
cargo clippy --all-targets --features _internal_bench -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --all-targets --features bench -- -D warnings
# The AI SDK build (no `pi`, no `replay`) and the ones in between: code under cfg(not(feature
# = "pi")) exists only here.
cargo clippy --all-targets --no-default-features -- -D warnings
cargo clippy --all-targets --no-default-features --features replay -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features store -- -D warnings  # the AI SDK build
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features pi,replay -- -D warnings  # the replay module
sans_io_check

step "native tests (virtual time, fixtures), the full build's and the AI SDK build's"
cargo test
cargo test --no-default-features
# crates/wasm/src/generated.d.ts is what the Rust types generate (src/ts.rs); on a failure it
# prints the command that regenerates it.
cargo test --features ts --test ts_generated

step "the npm package (release wasm, wasm-opt, template), and its size against the budget"
bash scripts/build-pkg.sh
node bench/size-check.mjs

step "Node: the installed package (release build) and the .d.ts"
node --test tests/js/
node_modules/.bin/tsc -p tests/ts/tsconfig.json
# The same .d.ts for an app without `ai` (it is an optional peer): `ai` resolves to nothing there.
node_modules/.bin/tsc -p tests/ts/no-ai/tsconfig.json

step "React: useChat and Chat rendered under jsdom (one file under happy-dom), then all under happy-dom"
node_modules/.bin/vitest run --config tests/vitest/vitest.config.mjs
node_modules/.bin/vitest run --config tests/vitest/vitest.config.mjs --environment happy-dom

step "snapshots: the incremental export equals the core's, frozen, identity kept (bench build)"
# bench/build.sh's build, in the target dir build-pkg.sh just used: the same flags and std,
# so only the two crates are built again with `bench` (its own dir rebuilds std and every
# dependency; it exists to keep a developer's release wasm, which pkg/ here already holds).
PKG_FEATURES=bench PKG_TARGET_DIR=target PKG_OUT=target/bench-pkg bash scripts/build-pkg.sh
BENCH_PKG=target/bench-pkg node bench/check-snapshots.mjs

step "headless Chromium: wasm-bindgen-test against the scripted server"
PORT=18787
node tests/server/test-server.mjs "$PORT" > target/test-server.log 2>&1 &
SERVER_PID=$!
BG_PIDS+=("$SERVER_PID")
for _ in $(seq 50); do
  if node -e "fetch('http://127.0.0.1:$PORT/test/log').then(()=>process.exit(0),()=>process.exit(1))"; then break; fi
  sleep 0.1
done
CHROMEDRIVER=/usr/bin/chromedriver ACS_TEST_SERVER="http://127.0.0.1:$PORT" \
  cargo test --target wasm32-unknown-unknown -p agent-chat-store-wasm --lib
kill "$SERVER_PID" 2>/dev/null || true

step "reference server: routes, idempotency, resume, stop, both runtimes (fuzzing alongside)"
bash scripts/install-js.sh examples/server examples/react-chat examples/assistant-ui examples/e2e
# Fuzzing runs on one core while the reference server's tests (mostly waiting on their
# server; their timing checks are lower bounds) run on the other. 20 s per target, seeded from
# tests/fixtures/, finds a regression in the inputs the targets reach quickly; the long hunt
# is bash scripts/fuzz.sh 600.
FUZZ_SECS=${FUZZ_SECS:-20}
mkdir -p target
FUZZ_T0=$SECONDS
# (its own process group: a failure here stops it with its fuzzers)
setsid bash scripts/fuzz.sh "$FUZZ_SECS" > target/fuzz-step.log 2>&1 &
FUZZ_PID=$!
BG_PIDS+=("-$FUZZ_PID")
node --test examples/server/test/
SERVER_TESTS_END=$SECONDS
echo "(waiting for the fuzzing, log: target/fuzz-step.log)"
set +e
wait "$FUZZ_PID"
fuzz_rc=$?
set -e
record "$((SECONDS - FUZZ_T0))" "  of which fuzzing: every cargo-fuzz target for ${FUZZ_SECS} s (in the background)"
record "$((SERVER_TESTS_END - STEP_T0))" "  of which the reference server's tests"
sed -n '/^fuzz summary/,$p' target/fuzz-step.log
if [ "$fuzz_rc" -ne 0 ]; then
  cat target/fuzz-step.log >&2
  echo "fuzzing failed (exit $fuzz_rc): see target/fuzz-step.log and fuzz/logs/" >&2
  exit "$fuzz_rc"
fi

step "packaging: the npm pack tarball in fresh Vite (dev and build), webpack, Next.js and Node apps"
node --test --test-concurrency=1 tests/packaging/

step "end to end: the example apps against the reference server in headless Chromium"
bash scripts/build-examples.sh
# Our useChat pages under tsc --strict: as written for @ai-sdk/react, and with the import changed.
(cd examples/use-chat-pages && node_modules/.bin/tsc -p tsconfig.json)
(cd examples/use-chat-pages/ours && node_modules/.bin/tsc -p tsconfig.json)
node --test --test-concurrency=1 examples/e2e/
echo "(screenshots of each scenario: target/e2e/)"

step "live: the shipped package against the real upstream servers"
bash ../shared/upstream/setup.sh # (skips what is present; needs only npm)
node --test --test-concurrency=1 tests/live/

end_step
echo; echo "all tests passed"
