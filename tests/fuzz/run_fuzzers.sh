#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, -Dfuzz=true) and runs each for RUNS
# executions (default 100000) from its seed corpus, two at a time; exits 1 on any finding,
# naming the input libFuzzer kept. usage: tests/fuzz/run_fuzzers.sh [RUNS]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=${1:-100000}
BUILD=${NBX_FUZZ_BUILD:-$ROOT/build-fuzz}
FUZZ=$ROOT/tests/fuzz

if [[ ! -f "$BUILD/build.ninja" ]]; then
  CXX=${NBX_FUZZ_CXX:-clang++} meson setup "$BUILD" "$ROOT" -Dfuzz=true -Dtests=false \
    -Dcuda=disabled -Dhip=disabled -Dvulkan=disabled >/dev/null
fi
ninja -C "$BUILD" fuzz >/dev/null

work=$(mktemp -d /tmp/nbx-fuzz.XXXXXX)
# Seeds: the shipped device files and the malformed fixtures, the test overlays, and every
# input kept as a regression (libFuzzer writes what it finds into the first corpus folder).
mkdir -p "$work"/{device_file,overlay,explain_args}
find "$ROOT/device_files" "$ROOT/tests/data/device_files" -name '*.yml' -exec cp {} "$work/device_file/" \;
cp "$ROOT"/tests/data/overlays/*.yml "$FUZZ"/seeds/overlay/* "$work/overlay/"
cp "$FUZZ"/seeds/explain_args/* "$work/explain_args/"
for t in device_file overlay explain_args; do
  cp "$FUZZ/regressions/$t"/* "$work/$t/" 2>/dev/null || true
done

# A 16 MiB quarantine instead of ASan's 256: the parsers allocate a lot and free it at once, so
# the large one cost page faults, about half of each execution's time (3.4 against 6.7 ms of
# CPU a shipped file, 2026-12-07); freed memory reused within 16 MiB is still caught.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16}

run() {  # target, extra libFuzzer flags
  local t=$1
  shift
  "$BUILD/tests/fuzz/fuzz_$t" -runs="$RUNS" -max_len=8192 -timeout=120 -rss_limit_mb=2048 \
    -artifact_prefix="$work/found-$t-" -print_final_stats=1 "$@" "$work/$t" >"$work/$t.log" 2>&1
}
status=0
run device_file -dict="$FUZZ/yaml.dict" &
p1=$!
run overlay -dict="$FUZZ/yaml.dict" &
p2=$!
wait $p1 || status=1
run explain_args || status=1
wait $p2 || status=1

for t in device_file overlay explain_args; do
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$work/$t.log" | grep -oE '[0-9]+$' || echo 0)
  secs=$(grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$work/$t.log" | grep -oE '[0-9]+ second' || echo "? second")
  echo "fuzz_$t: $runs runs in ${secs}s"
done
if ((status != 0)) || compgen -G "$work/found-*" >/dev/null; then
  for f in "$work"/found-*; do echo "finding: $f"; done
  tail -n 40 "$work"/*.log
  echo "fuzz: a finding; keep the input in tests/fuzz/regressions/<target>/ with the fix."
  exit 1
fi
rm -rf "$work"
echo "fuzz: no finding"
