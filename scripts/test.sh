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

if [ "$TIER" = quick ]; then
  step "setup (skips what is present)"
  bash scripts/setup.sh --core
  bash scripts/setup.sh --wasm-bindgen
  bash scripts/install-js.sh .
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


# ----- the full tier: a setup, the package, then three lanes at once -----
# On 2 cores most of the suites wait (on their servers, a browser, a scripted model's pace), so
# three lanes run side by side, each its steps in order:
#   checks    (nice 19: CPU only when the others leave it; starts once wasm-bindgen is) lints, the
#             native tests, the bench build's snapshot check, wasm-bindgen-test, wasm-pack,
#             fuzzing
#   suites    (normal priority, once the package is built) Node, tsc, vitest, the reference
#             server's tests, packaging
#   browser   (normal priority, once the package is built) the example apps end to end, then
#             the live upstream servers
# The checks lane holds everything that only compiles and computes (no wall-clock
# assertion: the native tests run on virtual time, fuzzing counts runs), so the suites that
# time things keep the CPU they need; what of it runs a browser (wasm-bindgen-test) gets its
# run back at normal priority. The tools only that lane needs (wasm-pack, cargo-fuzz and the
# fuzz targets' build) compile at nice 10 beside the package build, while the network-bound
# installs (Chromium, the examples' npm installs, the upstream servers) finish. No
# two lanes share a cargo target dir or a port (every server binds port 0, the
# wasm-bindgen-test server its own). Each lane logs to target/lanes/LANE.log, printed whole at
# the end; the first failure stops the others.
export LANES=target/lanes
rm -rf "$LANES"
mkdir -p "$LANES"

# A lane waits for a file the main script or a background install writes when it is done.
wait_file() { while [ ! -e "$LANES/$1" ]; do sleep 1; done; }
# A lane's step: its header in the lane's log, its seconds in LANE.times.
lane_step() {
  lane_end
  LANE_STEP=$*
  LANE_T0=$SECONDS
  printf '\n==> [%s] %s\n' "$LANE" "$*"
}
lane_end() {
  if [ -n "${LANE_STEP:-}" ]; then echo "$((SECONDS - LANE_T0))|[$LANE] $LANE_STEP" >> "$LANES/$LANE.times"; fi
  LANE_STEP=
}
# Runs lane function FN in its own process group, logging to target/lanes/LANE.log.
start_lane() { # LANE NICE FN
  setsid nice -n "$2" bash -c "
    set -euo pipefail
    LANE=$1 LANE_STEP=
    $(declare -f lane_step lane_end wait_file sans_io_check "$3")
    trap 'rc=\$?; [ \$rc -ne 0 ] && [ -n \"\$LANE_STEP\" ] && LANE_STEP=\"\$LANE_STEP (FAILED)\"; lane_end; exit \$rc' EXIT
    $3
  " > "$LANES/$1.log" 2>&1 &
  LANE_PIDS+=("$!")
  LANE_NAMES+=("$1")
  BG_PIDS+=("-$!")
}

suites_lane() {
  lane_step "Node: the installed package (release build) and the .d.ts"
  node --test tests/js/
  node_modules/.bin/tsc -p tests/ts/tsconfig.json
  # The same .d.ts for an app without `ai` (it is an optional peer): `ai` resolves to nothing there.
  node_modules/.bin/tsc -p tests/ts/no-ai/tsconfig.json

  lane_step "React: useChat and Chat under jsdom (one file under happy-dom), then all under happy-dom"
  node_modules/.bin/vitest run --config tests/vitest/vitest.config.mjs
  node_modules/.bin/vitest run --config tests/vitest/vitest.config.mjs --environment happy-dom

  lane_step "reference server: routes, idempotency, resume, stop, both runtimes"
  node --test examples/server/test/

  lane_step "packaging: the npm pack tarball in fresh Vite (dev and build), webpack, Next.js and Node apps"
  node --test --test-concurrency=1 tests/packaging/packaging.test.mjs
}

browser_lane() {
  lane_step "end to end: the example apps against the reference server in headless Chromium"
  bash scripts/build-examples.sh
  # Our useChat pages under tsc --strict: as written for @ai-sdk/react, and with the import changed.
  (cd examples/use-chat-pages && node_modules/.bin/tsc -p tsconfig.json)
  (cd examples/use-chat-pages/ours && node_modules/.bin/tsc -p tsconfig.json)
  node --test --test-concurrency=1 examples/e2e/
  echo "(screenshots of each scenario: target/e2e/)"

  lane_step "live: the shipped package against the real upstream servers"
  node --test --test-concurrency=1 tests/live/
}

checks_lane() {
  lane_step "format and lints"
  cargo fmt --all --check
  # Each run lints one feature set of one target. Features only add code (no cfg(not(...)) of
  # `_internal_bench` or `bench` anywhere), so the bench runs lint all the default build's
  # code: the root crate with `_internal_bench` is the plain `cargo clippy --all-targets` and
  # the native bench driver; the binding crate with `bench` is its default build, its tests
  # and the bench exports.
  cargo clippy --all-targets --features _internal_bench -- -D warnings
  cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --all-targets --features bench -- -D warnings
  # The AI SDK build (no `pi`, no `replay`) and the ones in between: code under
  # cfg(not(feature = "pi")) exists only here.
  cargo clippy --all-targets --no-default-features -- -D warnings
  cargo clippy --all-targets --no-default-features --features replay -- -D warnings
  cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features store -- -D warnings  # the AI SDK build
  cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features pi,replay -- -D warnings  # the replay module
  sans_io_check

  lane_step "native tests (virtual time, fixtures), the full build's and the AI SDK build's"
  cargo test
  cargo test --no-default-features
  # crates/wasm/src/generated.d.ts is what the Rust types generate (src/ts.rs); on a failure
  # it prints the command that regenerates it.
  cargo test --features ts --test ts_generated

  lane_step "snapshots: the incremental export equals the core's, frozen, identity kept (bench build)"
  wait_file wasm-bindgen.ok
  # bench/build.sh's build, in the target dir build-pkg.sh used: the same flags and std, so
  # only the two crates are built again with `bench`.
  PKG_FEATURES=bench PKG_TARGET_DIR=target PKG_OUT=target/bench-pkg bash scripts/build-pkg.sh
  BENCH_PKG=target/bench-pkg node bench/check-snapshots.mjs

  lane_step "headless Chromium: wasm-bindgen-test against the scripted server"
  wait_file chromium.ok
  cargo test --target wasm32-unknown-unknown -p agent-chat-store-wasm --lib --no-run
  local port=18787 server
  node tests/server/test-server.mjs "$port" > target/test-server.log 2>&1 &
  server=$!
  for _ in $(seq 50); do
    if node -e "fetch('http://127.0.0.1:$port/test/log').then(()=>process.exit(0),()=>process.exit(1))"; then break; fi
    sleep 0.1
  done
  # The run in Chromium has timeouts: back at normal priority (the lane is at nice 19).
  CHROMEDRIVER=/usr/bin/chromedriver ACS_TEST_SERVER="http://127.0.0.1:$port" \
    nice -n -19 cargo test --target wasm32-unknown-unknown -p agent-chat-store-wasm --lib
  kill "$server" 2>/dev/null || true

  lane_step "wasm-pack build crates/wasm (the card's build), loaded in Node"
  wait_file tools.rc
  if [ "$(cat "$LANES/tools.rc")" != 0 ]; then
    cat "$LANES/setup-tools.log"; echo "installing wasm-pack or building the fuzz targets failed" >&2; exit 1
  fi
  node --test tests/packaging/wasm-pack.test.mjs

  lane_step "fuzzing: every cargo-fuzz target for ${FUZZ_SECS} s"
  # Seeded from tests/fixtures/, a short run finds a regression in the inputs the targets
  # reach quickly; the long hunt is bash scripts/fuzz.sh 600.
  bash scripts/fuzz.sh "$FUZZ_SECS"
}

FUZZ_SECS=${FUZZ_SECS:-15}
export FUZZ_SECS
LANE_PIDS=()
LANE_NAMES=()
LANES_T0=$SECONDS

step "setup: the Rust parts, wasm-bindgen, the root npm install (the rest alongside)"
bash scripts/setup.sh --core
bash scripts/install-js.sh .
# Network-bound installs in the background while the CPU compiles.
bash scripts/setup.sh --chromium > "$LANES/setup-chromium.log" 2>&1 &
CHROMIUM_PID=$!
BG_PIDS+=("$CHROMIUM_PID")
( bash scripts/install-js.sh examples/server examples/react-chat examples/assistant-ui examples/assistant-ui-stock examples/use-chat-pages examples/use-chat-pages/ours examples/e2e &&
  bash ../shared/upstream/setup.sh ) > "$LANES/setup-npm.log" 2>&1 &
NPM_PID=$!
BG_PIDS+=("$NPM_PID")
bash scripts/setup.sh --wasm-bindgen
touch "$LANES/wasm-bindgen.ok"
# Only now the checks lane and its own tools (it waits for tools.rc before its wasm-pack and
# fuzzing steps): started with the setup, their crate downloads and builds slowed wasm-bindgen
# and the package, which every other suite waits for (a cold run: 637 s to the lanes' start,
# against 318 s).
setsid nice -n 10 bash -c 'bash scripts/setup.sh --wasm-pack && bash scripts/fuzz.sh build; echo $? > "$LANES/tools.rc"' \
  > "$LANES/setup-tools.log" 2>&1 &
BG_PIDS+=("-$!")
start_lane checks 19 checks_lane

step "the npm package (release wasm, wasm-opt, template), and its size against the budget"
bash scripts/build-pkg.sh
node bench/size-check.mjs

step "waiting for the background installs (Chromium, npm: the examples and the upstream servers)"
wait_for() { # PID LOG
  if ! wait "$1"; then cat "$2" >&2; echo "a background install failed: $2" >&2; exit 1; fi
}
wait_for "$CHROMIUM_PID" "$LANES/setup-chromium.log"
wait_for "$NPM_PID" "$LANES/setup-npm.log"
touch "$LANES/chromium.ok"
end_step

start_lane suites 0 suites_lane
start_lane browser 0 browser_lane
STEP="the three lanes"
echo; echo "==> three lanes: suites, browser, checks (logs: $LANES/*.log, printed below when done)"

# Waits for the lanes; the first to fail stops the others.
failed=
remaining=${#LANE_PIDS[@]}
while [ "$remaining" -gt 0 ]; do
  set +e
  wait -n -p done_pid "${LANE_PIDS[@]}"
  rc=$?
  set -e
  for i in "${!LANE_PIDS[@]}"; do
    if [ "${LANE_PIDS[$i]}" = "$done_pid" ]; then
      name=${LANE_NAMES[$i]}
      unset "LANE_PIDS[$i]"
    fi
  done
  remaining=${#LANE_PIDS[@]}
  echo "  lane $name done after $((SECONDS - LANES_T0)) s (exit $rc)"
  if [ "$rc" -ne 0 ]; then
    failed=$name
    for pid in "${LANE_PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
    break
  fi
done
STEP=
for name in "${LANE_NAMES[@]}"; do
  [ "$name" = "$failed" ] && continue
  printf '\n======== lane %s (%s) ========\n' "$name" "$LANES/$name.log"
  cat "$LANES/$name.log"
done
for name in "${LANE_NAMES[@]}"; do
  if [ -f "$LANES/$name.times" ]; then
    while IFS= read -r line; do TIMES+=("$line"); done < "$LANES/$name.times"
  fi
done
record "$((SECONDS - LANES_T0))" "from the setup's start to the last lane's end (the lanes side by side)"
if [ -n "$failed" ]; then
  printf '\n======== lane %s FAILED (%s) ========\n' "$failed" "$LANES/$failed.log"
  cat "$LANES/$failed.log"
  exit 1
fi
echo; echo "all tests passed"
