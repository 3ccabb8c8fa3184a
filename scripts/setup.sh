#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh machine of this kind.
# Every step is guarded, so a rerun on a prepared machine takes seconds.
# Nothing is downloaded from outside the package registries (the Rust crate registry, npm, Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1

# Parts, so the test command can run the network-bound ones beside the CPU-bound ones:
#   --core          the wasm32 target and rust-src (rustup)
#   --wasm-bindgen  wasm-bindgen-cli (compiled: the package build needs it)
#   --wasm-pack     wasm-pack (compiled: only the wasm-pack packaging test needs it)
#   --chromium      Debian's chromium and chromium-driver
# No argument: all of them.
core() {
  if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
    rustup target add wasm32-unknown-unknown
  fi
  # The package build rebuilds std for wasm32 (scripts/build-pkg.sh says why).
  if ! rustup component list --installed | grep -q '^rust-src'; then
    rustup component add rust-src
  fi
}

wasm_bindgen() {
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION"; then
    # No --locked: the CLI's lockfile pins a crate version the registry here lacks.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

wasm_pack() {
  # `wasm-pack build crates/wasm` (the card's build; tests/packaging/wasm-pack.test.mjs). From
  # the Rust crate registry; it finds wasm-bindgen and wasm-opt on PATH, so it downloads nothing.
  if ! wasm-pack --version 2>/dev/null | grep -q " $WASM_PACK_VERSION"; then
    cargo install --locked wasm-pack --version "$WASM_PACK_VERSION"
  fi
}

chromium() {
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    # Debian's chromium + driver; never a browser download by a test tool.
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y chromium chromium-driver
  fi
}

case "${1:-all}" in
  --core) core ;;
  --wasm-bindgen) wasm_bindgen ;;
  --wasm-pack) wasm_pack ;;
  --chromium) chromium ;;
  all) core; wasm_bindgen; wasm_pack; chromium ;;
  *) echo "usage: bash scripts/setup.sh [--core|--wasm-bindgen|--wasm-pack|--chromium]" >&2; exit 2 ;;
esac
