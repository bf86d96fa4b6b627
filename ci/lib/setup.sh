# Shared by ./gbcheck and ci/test.sh: install what is missing, configure, build.
# Sourced, not run. Everything it prints goes to stderr so that gbcheck's stdout stays clean.

# Debian packages the build needs. libtorch-dev is LibTorch 1.13 (CPU) with its CMake config.
GBCHECK_PACKAGES=(cmake ninja-build ccache g++ libtorch-dev librapidcheck-dev libyaml-cpp-dev libspdlog-dev
                  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libsqlite3-dev
                  python3)

# clang (with libFuzzer) only when fuzzing the loader is asked for: ci/fuzz_loader.sh sets
# GBCHECK_WITH_LIBFUZZER=1.
gbcheck_missing_packages() {
  local missing=() p packages=("${GBCHECK_PACKAGES[@]}")
  [ -n "${GBCHECK_WITH_LIBFUZZER:-}" ] && packages+=(clang)
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
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

# gbcheck_build BUILD_DIR [cmake args...]: configure once, then an incremental build.
gbcheck_build() {
  local root build
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  build=$1; shift
  local log="$build/build.log"
  if [ ! -f "$build/build.ninja" ]; then
    echo "gbcheck: configuring in $build (Release)" >&2
    mkdir -p "$build"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$log" 2>&1 || {
      cat "$log" >&2; echo "gbcheck: cmake configure failed" >&2; exit 3; }
  fi
  # The dry run's output is captured whole: `ninja -n | grep -q` under pipefail fails when grep
  # exits at its first match and ninja dies of SIGPIPE, which skipped the build.
  local pending
  pending=$(ninja -C "$build" -n 2>&1 || true)
  if grep -q '^\[' <<<"$pending"; then
    echo "gbcheck: building in $build (the first build takes several minutes)..." >&2
  fi
  ninja -C "$build" -j "$(nproc)" >"$log" 2>&1 || {
    grep -E "error|Error" -A3 "$log" | head -60 >&2; echo "gbcheck: build failed (log: $log)" >&2; exit 3; }
}
