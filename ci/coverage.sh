#!/usr/bin/env bash
# What the fuzzer reaches (issue 18): line coverage of compiler/ after a fuzz run, and the
# op x dtype x layout x special-value combinations its graphs exercised.
#   ci/coverage.sh [--backends LIST] [SECONDS]   SECONDS default 600 (the issue's measurement);
#                                                 not part of ci/test.sh
# Builds gbcheck and gbcheck-gen with compiler/ instrumented for gcov (-DGBCHECK_COVERAGE=ON:
# --coverage there only, the rest as in build/ and from ccache) in build-coverage/, runs
# `gbcheck fuzz --seed 18000 --jobs 2 --backends LIST` for SECONDS from zeroed counters (LIST
# default gbc,gbc-interp: compiler/kernel/interpreter.cpp runs only under gbc-interp), then prints the line
# coverage of each folder of compiler/ (gcovr, installed from Debian when missing) and writes
# build-coverage/report/: gcovr.txt (per file), folders.txt, combos.txt (gbcheck-gen
# --coverage-report over the graphs the run checked). The fuzz workers and the sandbox's children
# write their counters before they exit (harness/sandbox/coverage_dump.h).
# Environment: GBCHECK_COVERAGE_JOBS (default 2) for the build and the fuzz.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source ci/lib/setup.sh
backends=gbc,gbc-interp
seconds=600
while [ $# -gt 0 ]; do
  case $1 in
    --backends) [ $# -ge 2 ] || { echo "coverage: --backends needs a list, e.g. gbc,gbc-interp" >&2; exit 2; }
      backends=$2; shift 2 ;;
    --backends=*) backends=${1#--backends=}; shift ;;
    *[!0-9]* | '') echo "coverage: usage: ci/coverage.sh [--backends LIST] [SECONDS]; got '$1'" >&2; exit 2 ;;
    *) seconds=$1; shift ;;
  esac
done
jobs=${GBCHECK_COVERAGE_JOBS:-2}

gbcheck_install_deps
if ! command -v gcovr >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "coverage: needs gcovr: sudo apt-get install -y gcovr" >&2; exit 4; }
  apt-get install -y -q --no-install-recommends gcovr >/tmp/gbcheck-apt.log 2>&1 || {
    tail -20 /tmp/gbcheck-apt.log >&2; echo "coverage: apt-get install gcovr failed" >&2; exit 4; }
fi

build=$root/build-coverage
report=$build/report
mkdir -p "$build"
log=$build/build.log
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGBCHECK_BUILD_TESTS=OFF -DGBCHECK_COVERAGE=ON \
    >"$log" 2>&1 || { cat "$log" >&2; echo "coverage: cmake configure failed" >&2; exit 3; }
fi
echo "coverage: building gbcheck with --coverage in $build (-j$jobs; the first build is long)" >&2
ninja -C "$build" -j "$jobs" gbcheck gbcheck-gen >"$log" 2>&1 || {
  tail -40 "$log" >&2; echo "coverage: build failed" >&2; exit 3; }

find "$build" -name '*.gcda' -delete
rm -rf "$report"
mkdir -p "$report"
seed=18000
echo "coverage: fuzzing for ${seconds}s (seed $seed, $jobs jobs, backends $backends)" >&2
if ! "$build/bin/gbcheck" fuzz --out "$report/fuzz" --time "${seconds}s" --seed "$seed" --jobs "$jobs" \
  --backends "$backends" --reduce-checks 0 --quiet; then
  echo "coverage: gbcheck fuzz failed" >&2
  exit 3
fi

# The graphs the run checked, again, for the combination report.
read -r first last graphs < <(sqlite3 -separator ' ' "$report/fuzz/fuzz.db" \
  "select min(graph_seed), max(graph_seed), count(*) from cases")
"$build/bin/gbcheck-gen" --seed "$first" --count $((last - first + 1)) --out "$report/graphs" \
  --coverage-report "$report/combos.txt" 2>/dev/null

gcovr -r "$root" --object-directory "$build" --filter "$root/compiler/" -j "$jobs" \
  --txt "$report/gcovr.txt" --json-summary "$report/gcovr.json" >/dev/null 2>"$report/gcovr.log"
python3 - "$report/gcovr.json" >"$report/folders.txt" <<'PY'
import json, sys, collections
files = json.load(open(sys.argv[1]))["files"]
by = collections.defaultdict(lambda: [0, 0])
for f in files:
    parts = f["filename"].split("/")
    folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    by[folder][0] += f["line_covered"]
    by[folder][1] += f["line_total"]
total = [sum(v[0] for v in by.values()), sum(v[1] for v in by.values())]
for folder, (c, t) in sorted(by.items()) + [("compiler (all)", tuple(total))]:
    print(f"{folder:24s} {c:6d} / {t:6d} lines  {100.0 * c / max(t, 1):5.1f}%")
PY
echo "fuzz: $graphs graphs checked in ${seconds}s on $backends"
cat "$report/folders.txt"
head -4 "$report/combos.txt"
echo "details: $report/gcovr.txt (per file), $report/combos.txt (per combination)"
