#!/usr/bin/env bash
# Tests ./gbcheck and ci/lib/setup.sh on a fake build folder (a hand-written build.ninja, so it runs
# in a second): the wrapper builds only the gbcheck target, says so once when it builds, says
# nothing when there is nothing to build (ninja's "Re-checking globbed directories" step, which
# CMake's CONFIGURE_DEPENDS globs run every time, is no work), and a failed build exits 3. A fake
# dpkg-query stands for the Debian packages, so no package is installed or looked up.
#   tests/build/gbcheck_wrapper_test.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: gbcheck_wrapper_test.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -r "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# dpkg-query -W -f=FORMAT PACKAGE...: every package installed except those in $FAKE_MISSING.
mkdir -p "$work/path"
cat >"$work/path/dpkg-query" <<'FAKE'
#!/usr/bin/env bash
shift 2
for p in "$@"; do
  if [[ " ${FAKE_MISSING:-} " == *" $p "* ]]; then echo "dpkg-query: no packages found matching $p" >&2
  else printf 'ii %s ' "$p"; fi
done
FAKE
# And an apt-get that installs nothing, should the wrapper ever take a package for missing.
printf '#!/bin/sh\necho "apt-get called by the test: $*" >&2; exit 100\n' >"$work/path/apt-get"
chmod +x "$work/path/dpkg-query" "$work/path/apt-get"
export PATH="$work/path:$PATH"

# The shape of CMake's build.ninja: a console step re-checking the globs before every build
# (restat: build.ninja stays clean when no glob changed), gbcheck, and a test binary.
build=$work/build
mkdir -p "$build"
touch "$build/verify_globs" "$build/main.cpp"
cat >"$build/build.ninja" <<'NINJA'
rule verify_globs
  command = true
  description = Re-checking globbed directories...
  pool = console
  restat = 1
rule rerun_cmake
  command = touch build.ninja
  generator = 1
rule link
  command = mkdir -p bin && cp $in $out.src && printf '#!/bin/sh\necho "gbcheck $$*"\n' > $out && chmod +x $out
  description = Linking CXX executable $out
rule fail
  command = echo "main.cpp:1:1: error: planted" && false
  description = Building CXX object $out
build force_verify: phony
build verify_globs: verify_globs | force_verify
build build.ninja: rerun_cmake verify_globs
build bin/gbcheck: link main.cpp
build gbcheck: phony bin/gbcheck
build bin/suite_test: link main.cpp
build broken.o: fail main.cpp
build all: phony bin/gbcheck bin/suite_test
default all
NINJA

run() { GBCHECK_BUILD_DIR=$build "$root/gbcheck" "$@" >"$work/out" 2>"$work/err"; }

run --first
[ $? = 0 ] || fail "first run: exit $?, stderr: $(cat "$work/err")"
[ "$(cat "$work/out")" = "gbcheck --first" ] || fail "first run did not run bin/gbcheck: $(cat "$work/out")"
grep -q "^gbcheck: building gbcheck in $build" "$work/err" ||
  fail "first run did not say that it builds: $(cat "$work/err")"
[ "$(grep -c building "$work/err")" = 1 ] || fail "the note is printed more than once: $(cat "$work/err")"
[ ! -e "$build/bin/suite_test" ] || fail "./gbcheck built the test suites too"

run -q --second
[ $? = 0 ] || fail "second run: exit $?"
[ "$(cat "$work/out")" = "gbcheck -q --second" ] || fail "second run: $(cat "$work/out")"
[ ! -s "$work/err" ] || fail "nothing to build, yet stderr says: $(cat "$work/err")"
grep -q "Re-checking globbed directories" "$build/build.log" ||
  fail "the fake build.ninja no longer has the step that must not count as work"

touch "$build/main.cpp"
run --third
grep -q "^gbcheck: building gbcheck" "$work/err" || fail "a changed source: no note on stderr"

# A failed build: exit 3 with the compiler's error, and nothing run.
sed -i 's|^build bin/gbcheck: link main.cpp|build bin/gbcheck: link broken.o|' "$build/build.ninja"
rm -f "$build/bin/gbcheck"
run --fourth
status=$?
[ "$status" = 3 ] || fail "failed build: exit $status, want 3"
grep -q "error: planted" "$work/err" || fail "failed build: the error is not shown: $(cat "$work/err")"
[ ! -s "$work/out" ] || fail "failed build: something ran: $(cat "$work/out")"

# One dpkg-query answers for every package; the missing ones are named.
source "$root/ci/lib/setup.sh"
[ -z "$(gbcheck_missing_packages)" ] || fail "packages reported missing: $(gbcheck_missing_packages)"
[ "$(FAKE_MISSING="libtorch-dev ccache" gbcheck_missing_packages)" = "ccache libtorch-dev" ] ||
  fail "missing packages: got '$(FAKE_MISSING="libtorch-dev ccache" gbcheck_missing_packages)'"

[ "$failures" = 0 ] && echo "gbcheck_wrapper_test: all checks passed"
exit $((failures > 0))
