#!/usr/bin/env bash
# Fuzzing with cargo-fuzz (libFuzzer): `bash scripts/fuzz.sh [SECONDS]` runs each target that
# long (default 60) and prints its executions and findings; exits 1 if any target found a crash
# (a panic, a broken invariant, a timeout or an out-of-memory). The test command runs it with a
# short budget; for a long run: `bash scripts/fuzz.sh 600` (10 minutes per target), or one
# target: `FUZZ_TARGETS=store bash scripts/fuzz.sh 3600`.
#
# Targets (fuzz/fuzz_targets/, invariants in each file's header):
#   sse_decoder   arbitrary bytes split anywhere: same events as one push, bounded memory
#   pi_reducer    chunk sequences of both families: seq watermark, parts land in messages
#   ui_reducer    AI SDK chunk sequences: an error stops processing
#   partial_json  streamed tool input: deltas = whole text, linear work
#   pi_native     pi-native NDJSON split anywhere: same frames and session, seq gate rules
#   store         the ChatStore under arbitrary actions, answers, failures and time
#   native_hostile  a pi-native ChatStore against a hostile server: no panic, no read flood
#
# How it runs on the stable toolchain (nothing else can be installed here):
# - cargo-fuzz comes from the Rust crate registry (`cargo install`, skipped when `cargo fuzz --version` works).
# - cargo-fuzz passes nightly-only flags (-Zsanitizer=address, sancov passes); stable rustc
#   accepts them with RUSTC_BOOTSTRAP=1, which this script sets for the fuzz build only.
# - AddressSanitizer works on stable: the rust-std component for x86_64-unknown-linux-gnu
#   ships its runtime (librustc-stable_rt.asan.a). If an ASan build ever fails (another
#   target, another toolchain), the script falls back to `--sanitizer none` and says so;
#   FUZZ_SANITIZER=none forces that (faster, still catches panics and broken invariants).
# - libfuzzer-sys compiles libFuzzer from its bundled C++ source: a C++ compiler is needed
#   (Debian's g++, present on the image).
# Corpora: fuzz/corpus/<target>/ (kept between runs, not committed), seeded from the legacy
# server traces (tests/fixtures/legacy-server/*.sse) and the partial-JSON oracle (tests/fixtures/). Crashes go to
# fuzz/artifacts/<target>/; reproduce with
#   cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> artifacts/<target>/<file>
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

SECS=${1:-60}
TARGETS=${FUZZ_TARGETS:-"sse_decoder pi_reducer ui_reducer partial_json pi_native store native_hostile"}
SANITIZER=${FUZZ_SANITIZER:-address}
FIXTURES=tests/fixtures/legacy-server
ls "$FIXTURES"/*.sse >/dev/null || { echo "fuzz: no traces in $FIXTURES to seed from" >&2; exit 1; }

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz from the Rust crate registry"
  cargo install --locked cargo-fuzz --version 0.13.2
fi

export RUSTC_BOOTSTRAP=1
cd fuzz
if ! cargo fuzz build --sanitizer "$SANITIZER" >build.log 2>&1; then
  if [ "$SANITIZER" = none ]; then cat build.log >&2; exit 1; fi
  echo "the $SANITIZER build failed (see fuzz/build.log); falling back to --sanitizer none" >&2
  SANITIZER=none
  cargo fuzz build --sanitizer none
fi
# `bash scripts/fuzz.sh build`: install and build only (the test command builds early, runs later).
if [ "$SECS" = build ]; then echo "fuzz targets built ($SANITIZER sanitizer)"; exit 0; fi

# Seed corpora: each target's own framing of the fixtures (see each target's header).
seed() { # target name prefix-bytes(printf format) file
  local dir="corpus/$1"
  mkdir -p "$dir"
  [ -f "$4" ] || return 0
  [ -f "$dir/seed-$2" ] || { printf "$3" >"$dir/seed-$2"; cat "$4" >>"$dir/seed-$2"; }
}
for f in "../$FIXTURES"/*.sse; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .sse)
  seed sse_decoder "$n" '\000\000\001\002\003\004\005\006\007\010' "$f"
  seed sse_decoder "$n-small" '\200\100\021\042\063\104\125\146\167\210' "$f"
  seed pi_reducer "$n" '\000' "$f"
  seed ui_reducer "$n" '\000' "$f"
done
mkdir -p corpus/partial_json corpus/store
if [ -f ../tests/fixtures/partial-json-oracle.jsonl ]; then
  i=0
  # Each oracle document (JSON text in a JSON string), behind one split-seed byte.
  node -e '
    const fs = require("fs");
    const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).slice(1);
    lines.slice(0, 120).forEach((l, i) => {
      const f = `corpus/partial_json/seed-oracle-${i}`;
      if (!fs.existsSync(f)) fs.writeFileSync(f, Buffer.concat([Buffer.from([i % 251]), Buffer.from(JSON.parse(l).doc)]));
    });' ../tests/fixtures/partial-json-oracle.jsonl 2>/dev/null || true
fi

mkdir -p logs
status=0
summary=""
for t in $TARGETS; do
  mkdir -p "corpus/$t" "artifacts/$t"
  before=$(ls "artifacts/$t" | wc -l)
  # -timeout: one input running 10 s is a finding (a hang or superlinear work);
  # -rss_limit_mb: so is a process past 2 GiB.
  # The store targets' inputs are action sequences: long ones from the start (libFuzzer
  # otherwise grows the length slowly and a short run never leaves a handful of steps).
  extra=()
  case $t in store | native_hostile) extra=(-max_len=16384 -len_control=0) ;; esac
  set +e
  cargo fuzz run --sanitizer "$SANITIZER" "$t" "corpus/$t" -- \
    -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${extra[@]}" \
    >"logs/$t.log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -1)
  corpus=$(ls "corpus/$t" | wc -l)
  after=$(ls "artifacts/$t" | wc -l)
  if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
    status=1
    line="$t: ${execs:-?} executions, FOUND A CRASH (exit $rc), see fuzz/logs/$t.log and fuzz/artifacts/$t/"
    grep -E "panicked at|ERROR: |SUMMARY" "logs/$t.log" | head -5 >&2 || true
  else
    line="$t: ${execs:-?} executions in ${SECS}s, corpus $corpus, no findings"
  fi
  echo "$line"
  summary+="$line"$'\n'
done
echo
echo "fuzz summary ($SANITIZER sanitizer, ${SECS}s per target):"
printf '%s' "$summary"
exit "$status"
