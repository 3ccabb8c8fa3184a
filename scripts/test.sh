#!/usr/bin/env bash
# The test command (README): everything CI runs, in order, failing on the first failure.
#   native cargo test · lints · the wasm build · the npm package built and loaded in Node ·
#   the .d.ts checked by tsc --strict · useChat and Chat rendered under jsdom and happy-dom
#   (vitest) · wasm-bindgen-test in headless Chromium against a scripted local server · the
#   reference server's tests · the packed tarball installed into
#   fresh Vite, webpack, Next.js and Node apps (the README quick starts among them) · the
#   example apps end to end in headless Chromium against the reference server (a real pi agent) ·
#   the package and the React example against the real upstream servers (../shared/upstream/).
# Installs what is missing first (scripts/setup.sh); reruns on a prepared machine skip that.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

step() { printf '\n==> %s\n' "$*"; }

step "setup (skips what is present)"
bash scripts/setup.sh
bash scripts/install-js.sh .

step "format and lints"
cargo fmt --all --check
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features _internal_bench -- -D warnings  # the bench driver too
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --features bench -- -D warnings
# The AI SDK build (no `pi`, no `replay`) and the one in between.
cargo clippy --all-targets --no-default-features -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features store -- -D warnings  # the AI SDK build
cargo clippy --target wasm32-unknown-unknown -p agent-chat-store-wasm --no-default-features --features pi,replay -- -D warnings  # the replay module
cargo clippy --all-targets --no-default-features --features replay -- -D warnings
# The core stays sans-IO: only the binding crate (crates/wasm) may know JS.
if grep -rlE '\b(wasm_bindgen|js_sys|web_sys)\b' src --include='*.rs'; then
  echo "JS bindings in the core (src/); they belong in crates/wasm/" >&2; exit 1
fi

step "native tests (virtual time, fixtures), the full build's and the AI SDK build's"
cargo test
cargo test --no-default-features

step "fuzzing: every cargo-fuzz target for 60 s (long runs: bash scripts/fuzz.sh 600)"
bash scripts/fuzz.sh 60

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
bash bench/build.sh
node bench/check-snapshots.mjs

step "headless Chromium: wasm-bindgen-test against the scripted server"
PORT=18787
node tests/server/test-server.mjs "$PORT" > target/test-server.log 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if node -e "fetch('http://127.0.0.1:$PORT/test/log').then(()=>process.exit(0),()=>process.exit(1))"; then break; fi
  sleep 0.1
done
CHROMEDRIVER=/usr/bin/chromedriver ACS_TEST_SERVER="http://127.0.0.1:$PORT" \
  cargo test --target wasm32-unknown-unknown -p agent-chat-store-wasm --lib
kill $SERVER_PID 2>/dev/null || true

step "reference server: routes, idempotency, resume, stop, both runtimes"
bash scripts/install-js.sh examples/server examples/react-chat examples/assistant-ui examples/e2e
node --test examples/server/test/

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

step "all tests passed"
