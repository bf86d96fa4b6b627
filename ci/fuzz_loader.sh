#!/usr/bin/env bash
# libFuzzer on the model loader and validator (tests/fuzz/model_loader_fuzzer.cpp), with
# AddressSanitizer and UndefinedBehaviorSanitizer, seeded with corpus/examples and corpus/errors.
#   ci/fuzz_loader.sh [SECONDS [WORKERS]]  default 60 s, 1 worker; the issue's hardening target is 600
#   ci/fuzz_loader.sh --build-only         only the build (ci/test.sh runs it beside the test suite)
# WORKERS > 1 runs that many fuzzing processes side by side, each for SECONDS, sharing the grown corpus
# (libFuzzer's -jobs/-workers): ci/test.sh fuzzes 2 x 30 s on 2 cores instead of 60 s on one.
# Builds with clang in build-libfuzzer/ (installing clang when missing, as ci/lib/setup.sh does
# for the rest), keeps the grown corpus in build-libfuzzer/corpus/ and crash files in
# build-libfuzzer/artifacts/. Exit status non-zero on a crash, hang, leak or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source ci/lib/setup.sh
seconds=${1:-60}
workers=${2:-1}
build_only=
if [ "$seconds" = --build-only ]; then build_only=1; fi

GBCHECK_WITH_LIBFUZZER=1 gbcheck_install_deps
build=$root/build-libfuzzer
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
mkdir -p "$build"
log=$build/build.log
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DGBCHECK_BUILD_TESTS=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link $sanitize" >"$log" 2>&1 || {
    cat "$log" >&2; echo "fuzz_loader: cmake configure failed" >&2; exit 3; }
fi
# Only the loader's libraries (the tolerance presets it reads come through gbc_support's
# config_dir): no torch code is built.
ninja -C "$build" gbcheck_model gbc_ir gbc_support >"$log" 2>&1 || {
  tail -40 "$log" >&2; echo "fuzz_loader: build failed" >&2; exit 3; }
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer $sanitize -I"$root" tests/fuzz/model_loader_fuzzer.cpp \
  "$build/harness/model/libgbcheck_model.a" "$build/compiler/ir/libgbc_ir.a" "$build/compiler/support/libgbc_support.a" \
  -lyaml-cpp -lspdlog -lfmt -o "$build/model_loader_fuzzer"
if [ -n "$build_only" ]; then exit 0; fi

mkdir -p "$build/corpus" "$build/artifacts" "$build/logs"
rm -f "$build"/logs/fuzz-*.log
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$(date +%s)
# Inputs stay small: real model files are a few KiB; -timeout flags any input taking over 10 s.
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
       -artifact_prefix="$build/artifacts/")
# With -jobs each worker writes its own fuzz-N.log into the current folder.
if [ "$workers" -gt 1 ]; then flags+=(-jobs="$workers" -workers="$workers"); fi
status=0
(cd "$build/logs" && "$build/model_loader_fuzzer" "${flags[@]}" "$build/corpus" "$root/corpus/examples" \
   "$root/corpus/errors" 2>"$build/logs/fuzz.log") || status=$?
# A job's failure shows in its log, whatever the parent's status says.
if [ "$status" != 0 ] || grep -lqE "^==[0-9]+==ERROR|^SUMMARY: |deadly signal|ERROR: libFuzzer" "$build"/logs/*.log; then
  for log in "$build"/logs/*.log; do echo "== $log" >&2; tail -60 "$log" >&2; done
  echo "fuzz_loader: libFuzzer found a problem (inputs in $build/artifacts/)" >&2; exit 1
fi
# The statistics are in each job's log (the parent's repeats them), or in fuzz.log of a single worker.
stat_logs=("$build"/logs/fuzz-*.log)
[ "$workers" -gt 1 ] || stat_logs=("$build/logs/fuzz.log")
units=0
for log in "${stat_logs[@]}"; do
  n=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{s += $2} END {print s + 0}')
  units=$((units + n))
  grep -E "^stat::peak_rss_mb" "$log" >&2 || true
done
echo "fuzz_loader: $workers x $seconds s, $units inputs, without a crash, hang or sanitizer report ($(( $(date +%s) - start )) s)" >&2
