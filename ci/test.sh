#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is missing, builds, runs every test.
#   ci/test.sh               Release build in build/, the whole suite
#   ci/test.sh --sanitize    AddressSanitizer + UndefinedBehaviorSanitizer build in build-sanitize/
# Non-zero exit on any failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source ci/lib/setup.sh

build=build
cmake_args=()
if [ "${1:-}" = "--sanitize" ]; then
  build=build-sanitize
  cmake_args+=(-DGBCHECK_SANITIZE=ON)
  # handle_segv=0: tests that crash a sandboxed child on purpose expect SIGSEGV, not ASan's abort
  # (invalid accesses are still caught by the instrumentation first); allocator_may_return_null=1:
  # a huge allocation throws std::bad_alloc, which the sandbox reports as out of memory, as without
  # ASan, instead of ASan aborting the child.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:handle_segv=0:allocator_may_return_null=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

# 2 x 30 s of libFuzzer on the model loader after the suite, its clang build beside it (docs/fuzzing.md).
# GBCHECK_SKIP_LIBFUZZER=1 skips it, e.g. where clang cannot be installed.
fuzz_loader=1
if [ -n "${GBCHECK_SKIP_LIBFUZZER:-}" ]; then fuzz_loader=; fi

start=$(date +%s)
# The build's packages first; the tests' own (PyTorch for Python, chromium, clang for the loader
# fuzzer: the build needs none of them) install beside the build, where a bare machine's download
# and unpacking hide behind the compiler instead of coming before it.
gbcheck_install_deps
GBCHECK_WITH_PYTORCH=1 GBCHECK_WITH_BROWSER=1 GBCHECK_WITH_LIBFUZZER=$fuzz_loader gbcheck_install_deps &
test_deps_pid=$!
gbcheck_build "$root/$build" all "${cmake_args[@]}"
echo "ci/test.sh: built in $(( $(date +%s) - start )) s" >&2
wait "$test_deps_pid" || { echo "ci/test.sh: the tests' packages could not be installed" >&2; exit 4; }
# The loader fuzzer's clang build runs beside the test suite; its fuzzing after it, as
# before: beside the suite it would share a core with the tests and get fewer inputs through.
fuzz_build_pid=
if [ -n "$fuzz_loader" ]; then
  ci/fuzz_loader.sh --build-only &
  fuzz_build_pid=$!
fi
suite=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900 || suite=$?
fuzz=0
if [ -n "$fuzz_build_pid" ]; then wait "$fuzz_build_pid" || fuzz=$?; fi
# 60 s of fuzzing as 2 workers x 30 s: the same inputs in half the wall time on 2 cores.
if [ "$suite" = 0 ] && [ "$fuzz" = 0 ] && [ -n "$fuzz_loader" ]; then ci/fuzz_loader.sh 30 2 || fuzz=$?; fi
if [ "$suite" != 0 ] || [ "$fuzz" != 0 ]; then
  echo "ci/test.sh: failed (ctest exit $suite, ci/fuzz_loader.sh exit $fuzz) after $(( $(date +%s) - start )) s" >&2
  exit 1
fi
echo "ci/test.sh: all tests passed in $(( $(date +%s) - start )) s" >&2
