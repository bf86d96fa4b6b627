# Shared by ./gbcheck and ci/test.sh: install what is missing, configure, build.
# Sourced, not run. Everything it prints goes to stderr so that gbcheck's stdout stays clean.

# Debian packages the build needs. libtorch-dev is LibTorch 1.13 (CPU) with its CMake config.
GBCHECK_PACKAGES=(cmake ninja-build ccache g++ libtorch-dev librapidcheck-dev libyaml-cpp-dev libspdlog-dev
                  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libsqlite3-dev
                  python3)

# clang (with libFuzzer) only when fuzzing the loader is asked for: ci/fuzz_loader.sh sets
# GBCHECK_WITH_LIBFUZZER=1. PyTorch for Python (Debian's 1.13, seen by /usr/bin/python3) only for
# the tests, which write TorchScript files to import (corpus/torchscript/): ci/test.sh sets
# GBCHECK_WITH_PYTORCH=1. Debian's chromium only for the tests too, which load the HTML report in it
# headless (tests/report/browser_report_test.py): ci/test.sh sets GBCHECK_WITH_BROWSER=1.
gbcheck_missing_packages() {
  local packages=("${GBCHECK_PACKAGES[@]}") installed p missing=()
  [ -n "${GBCHECK_WITH_LIBFUZZER:-}" ] && packages+=(clang)
  [ -n "${GBCHECK_WITH_PYTORCH:-}" ] && packages+=(python3-torch python3-torchvision)
  [ -n "${GBCHECK_WITH_BROWSER:-}" ] && packages+=(chromium)
  # One dpkg-query for all of them: ./gbcheck runs this on every call.
  installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package} ' "${packages[@]}" 2>/dev/null |
                 grep -oE 'ii +[^ ]+' | sed -E 's/^ii +//' | tr '\n' ' ') "
  for p in "${packages[@]}"; do
    [[ "$installed" == *" $p "* ]] || missing+=("$p")
  done
  echo "${missing[@]}"
}

# Exit code 4: the environment cannot run gbcheck (documented in docs/cli.md).
gbcheck_install_deps() {
  command -v dpkg-query >/dev/null || { echo "gbcheck: needs a Debian-based system (dpkg/apt-get)" >&2; exit 4; }
  local missing
  missing=$(gbcheck_missing_packages)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "gbcheck: missing packages; install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 4
  fi
  echo "gbcheck: installing $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  # A bare machine may have no package lists yet.
  if ! apt-get install -y -q --no-install-recommends $missing >/tmp/gbcheck-apt.log 2>&1; then
    apt-get update -q >>/tmp/gbcheck-apt.log 2>&1 || true
    apt-get install -y -q --no-install-recommends $missing >>/tmp/gbcheck-apt.log 2>&1 || {
      tail -20 /tmp/gbcheck-apt.log >&2
      echo "gbcheck: apt-get install failed (log: /tmp/gbcheck-apt.log)" >&2
      exit 4
    }
  fi
}

# gbcheck_build BUILD_DIR TARGET [cmake args...]: configure once, then an incremental build of
# TARGET (`all`: every target, the test suites included). Says nothing when nothing is built:
# ./gbcheck runs this on every call.
gbcheck_build() {
  local root build target
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  build=$1 target=$2; shift 2
  local log="$build/build.log" note="gbcheck: building $target in $build (the first build takes a few minutes)..."
  if [ ! -f "$build/build.ninja" ]; then
    echo "gbcheck: configuring in $build (Release)" >&2
    mkdir -p "$build"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$log" 2>&1 || {
      cat "$log" >&2; echo "gbcheck: cmake configure failed" >&2; exit 3; }
    echo "$note" >&2
    note=""
  fi
  # One ninja run, no dry run first (`ninja -n` stops at the manifest check that CMake's
  # CONFIGURE_DEPENDS globs force, so it cannot tell). The note comes with the first step that
  # builds something; ninja's "Re-checking globbed directories" runs every time and is no work.
  local -
  set -o pipefail
  if ! ninja -C "$build" -j "$(nproc)" "$target" 2>&1 |
       awk -v logfile="$log" -v note="$note" '
         { print > logfile }
         note != "" && /^\[[0-9]+\/[0-9]+\] / && !/Re-checking globbed directories/ {
           print note > "/dev/stderr"; fflush("/dev/stderr"); note = "" }'; then
    grep -E "error|Error" -A3 "$log" | head -60 >&2; echo "gbcheck: build failed (log: $log)" >&2; exit 3
  fi
}
