#!/usr/bin/env bash
# Mutation testing of gbc's passes, kernels and code generation against gbcheck's corpus and a
# fixed-seed fuzz budget (issue 18): ci/mutants.py says how, docs/fuzzing.md ("Mutation testing")
# shows a run. Not part of ci/test.sh: a full run rebuilds gbcheck once per mutant.
#   ci/mutants.sh --sample 20 --seed 1      20 mutants drawn at random
#   ci/mutants.sh --sample 0                every mutant (hours)
#   ci/mutants.sh --list --sample 50        what would be tried, without building anything
#   ci/mutants.sh --ids FILE:LINE:N...      exactly these mutants (a run prints the survivors' ids)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[ -x build/bin/gbcheck ] || { echo "ci/mutants.sh: build gbcheck first (cmake -S . -B build -G Ninja; ninja -C build gbcheck)" >&2; exit 4; }
exec python3 ci/mutants.py "$@"
