#!/usr/bin/env bash
# libFuzzer on the model loader and validator (tests/fuzz/model_loader_fuzzer.cpp), with
# AddressSanitizer and UndefinedBehaviorSanitizer, seeded with corpus/examples and corpus/errors.
#   ci/fuzz_loader.sh [SECONDS]     default 60; the issue's hardening target is 600
#   ci/fuzz_loader.sh --build-only  only the build (ci/test.sh runs it beside the test suite)
# Builds with clang in build-libfuzzer/ (installing clang when missing, as ci/lib/setup.sh does
# for the rest), keeps the grown corpus in build-libfuzzer/corpus/ and crash files in
# build-libfuzzer/artifacts/. Exit status non-zero on a crash, hang, leak or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source ci/lib/setup.sh
seconds=${1:-60}
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

mkdir -p "$build/corpus" "$build/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$(date +%s)
# Inputs stay small: real model files are a few KiB; -timeout flags any input taking over 10 s.
"$build/model_loader_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
  "$build/corpus" corpus/examples corpus/errors 2>"$build/fuzz.log" || {
  tail -60 "$build/fuzz.log" >&2; echo "fuzz_loader: libFuzzer found a problem (inputs in $build/artifacts/)" >&2; exit 1; }
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/fuzz.log" >&2 || true
echo "fuzz_loader: $seconds s without a crash, hang or sanitizer report ($(( $(date +%s) - start )) s)" >&2
