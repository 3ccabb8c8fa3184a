#!/usr/bin/env bash
# The package the bench measures: scripts/build-pkg.sh's build with the `bench` feature (its
# exports benchFloor, BenchCore, benchExportedMessages), into target/bench-pkg/ (BENCH_PKG=dir
# elsewhere), from its own cargo target dir (target/bench-wasm) so it never evicts the shipped
# build. The shipped package (scripts/build-pkg.sh, pkg/) has none of these exports; the
# bench's size figure is taken from it.
set -euo pipefail
cd "$(dirname "$0")/.."

PKG_FEATURES=bench PKG_TARGET_DIR=target/bench-wasm PKG_OUT="${BENCH_PKG:-target/bench-pkg}" \
  exec bash scripts/build-pkg.sh
