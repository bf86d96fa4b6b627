#!/usr/bin/env bash
# The PyTorch 2.x checks on a machine whose Python has torch 1.13 (docs/adapters.md, "Checked on
# PyTorch 2.x"): the tests labelled torch2 (tests/adapters/torch_compile_test.cpp: inductor and
# aot-eager on the corpus examples, recompiles, graph breaks, fallbacks) run with
# GBCHECK_TORCH2_PYTHON set; with --real, the real models of corpus/torchscript are imported and
# checked through inductor too. Not part of ci/test.sh: the environment is about 2 GB from
# Debian's archive.
#   ci/torch2_checks.sh [--real] [BUILD_DIR] [OUT_DIR]    (default build, torch2-out)
# The torch 2.x Python: $GBCHECK_TORCH2_PYTHON when it is set, else the one ci/torch2_env.sh makes
# (or finds) in $GBCHECK_TORCH2_DIR. Writes OUT_DIR/summary.txt (each test's result, the torch
# version, the load) and the logs beside it; exits 1 when a check failed, 4 without a torch 2.x.
set -uo pipefail
real=0
if [ "${1:-}" = "--real" ]; then real=1; shift; fi
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd) || exit 4
out=${2:-$repo/torch2-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

python=${GBCHECK_TORCH2_PYTHON:-}
if [ -z "$python" ]; then
  python=$("$repo/ci/torch2_env.sh" ${GBCHECK_TORCH2_DIR:+"$GBCHECK_TORCH2_DIR"}) || { note "no torch 2.x environment"; exit 4; }
fi
version=$(cd "$repo" && "$python" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -1)
case "$version" in 2.*) ;; *) note "$python has no torch 2.x (it says: $version)"; exit 4 ;; esac
note "torch2_checks $(date -u +%FT%TZ): torch $version ($python), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

ninja -C "$build" -j "$(nproc)" gbcheck torch_compile_test >"$out/build.log" 2>&1 || { note "build FAILED (build.log)"; exit 1; }
status=0
GBCHECK_TORCH2_PYTHON=$python ctest --test-dir "$build" -L torch2 -V --timeout 3600 >"$out/ctest.log" 2>&1 || status=1
# Each test case's line as GoogleTest printed it: OK, FAILED or SKIPPED, with its time.
grep -E '^[0-9]+: \[ +(OK|FAILED|SKIPPED) +\] [A-Za-z]' "$out/ctest.log" | sed 's/^[0-9]*: //' | sort -u | tee -a "$summary"
grep -E 'tests passed|tests failed' "$out/ctest.log" | tee -a "$summary"

if [ "$real" = 1 ]; then
  # The real models (random weights), saved by the machine's torch 1.13, imported, and checked
  # through inductor: the result and the compile time of each.
  models=$out/real
  /usr/bin/python3 "$repo/corpus/torchscript/make_models.py" "$models/pt" --real >"$out/make_models.log" 2>&1 ||
    { note "make_models.py FAILED (make_models.log)"; exit 1; }
  for entry in resnet18:1,3,64,64 mobilenet_v2:1,3,64,64 squeezenet1_0:1,3,64,64 vit:1,3,64,64 \
               encoder_layer:2,10,32 encoder_layer_grad:2,10,32; do
    name=${entry%%:*}
    "$build/bin/gbcheck" import "$models/pt/$name.pt" --input "x=float32[${entry#*:}]" --out "$models/$name" \
      >"$out/import_$name.log" 2>&1 || { note "$name: import FAILED (import_$name.log)"; status=1; continue; }
    (cd "$repo" && GBCHECK_PYTHON=$python /usr/bin/time -f "%e s wall %U s user %S s sys" \
      "$build/bin/gbcheck" check "$models/$name/model.yaml" --backend inductor --cases 2) >"$out/inductor_$name.log" 2>&1 ||
      status=1
    note "$name: $(grep -E '^  inductor ' "$out/inductor_$name.log" | sed 's/  */ /g') | $(tail -1 "$out/inductor_$name.log")"
  done
fi
note "result: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
