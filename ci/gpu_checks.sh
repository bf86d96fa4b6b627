#!/usr/bin/env bash
# Every GPU check of gbc in one run, for the GPU machine (device tool; docs/performance.md, GPU).
# Run from the repository root there, with .devdeps carried (../shared/tools/device-deps.sh) and,
# when a previous run's compiler cache came back, .ccache-gpu carried too:
#   bash ci/gpu_checks.sh [BUDGET_S]
# Builds gbcheck and the GPU test binaries against the machine's PyTorch (LibTorch 2.x, CUDA),
# runs the GPU tests, checks every corpus and bench model with --device cuda on gbc and
# gbc-cudagraphs, benchmarks the GPU workloads (gbc, gbc-cudagraphs, nnc against eager, and
# torch.compile through bench/torch_compile_bench.py, started first so it overlaps the build),
# then, while the budget lasts, builds and runs the whole test suite on LibTorch 2.x.
# Everything lands in $OUT (logs.tar.gz, summary.txt, ccache-*.tar parts); steps that would
# overrun BUDGET_S seconds (default 480) are skipped and say so in the summary.
set -uo pipefail
budget=${1:-480}
out=${OUT:-$PWD/gpu-out}
logs=$out/logs
mkdir -p "$logs"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
note() { echo "[$(elapsed)s] $*" | tee -a "$out/summary.txt"; }
# have S: true when S more seconds fit in the budget.
have() { [ $(( $(elapsed) + $1 )) -le "$budget" ]; }
finish() {
  note "done after $(elapsed) s"
  echo "=== summary"; cat "$out/summary.txt"
  tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
  if [ -d .ccache-gpu ]; then
    # The compiler cache goes back in parts of at most 15 MiB (the tool returns files up to 16 MiB).
    ccache -d .ccache-gpu -c >/dev/null 2>&1 || true
    tar -C . -cf - .ccache-gpu | split -b 15m -d - "$out/ccache-gpu.tar."
  fi
}
trap finish EXIT

nvidia-smi > "$logs/nvidia-smi.txt" 2>&1
note "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
note "torch: $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1)"
ncpu=$(nproc)

# torch.compile's baseline on the last 4 cores while the build takes the others.
( taskset -c $((ncpu - 4))-$((ncpu - 1)) timeout 400 python3 bench/torch_compile_bench.py --repeat 100 \
    --json "$logs/torch_compile.json" > "$logs/torch_compile.log" 2>&1; echo "exit $?" >> "$logs/torch_compile.log" ) &
tc_pid=$!

# Build: the machine's LibTorch, Debian's libraries from .devdeps, ccache in .ccache-gpu.
deps=$PWD/.devdeps/usr
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:$torch_lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$deps/bin:/usr/local/cuda/bin:$PATH
export CCACHE_DIR=$PWD/.ccache-gpu CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_COMPRESSLEVEL=6 CCACHE_MAXSIZE=2G
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
note "ccache: $(command -v ccache || echo absent)"
build=build-gpu
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  "-DCMAKE_PREFIX_PATH=$torch_prefix;/usr/local/cuda;$deps;$deps/lib/x86_64-linux-gnu/cmake;$deps/share/cmake" \
  > "$logs/configure.log" 2>&1 || { note "configure FAILED (logs/configure.log)"; tail -30 "$logs/configure.log"; exit 1; }
gpu_targets=(gbcheck cuda_test gbc_cuda_test cuda_corpus_test codegen_test aten_test backends_test)
taskset -c 0-$((ncpu - 5)) cmake --build $build -j $((ncpu - 4)) --target "${gpu_targets[@]}" -- -k 0 \
  > "$logs/build.log" 2>&1
note "build of ${gpu_targets[*]}: exit $? (logs/build.log; $(grep -c 'error:' "$logs/build.log") error lines)"
grep -m 40 -B2 -A6 'error:' "$logs/build.log" | head -120
bin=$build/bin
export GBCHECK_CACHE_DIR=$PWD/$build/kernel-cache

# GPU tests: every case of the test binaries that touch CUDA (they skip nothing here).
for t in cuda_test gbc_cuda_test cuda_corpus_test codegen_test aten_test backends_test; do
  [ -x $bin/$t ] || { note "test $t: NOT BUILT"; continue; }
  have 60 || { note "test $t: skipped (budget)"; continue; }
  timeout 300 $bin/$t --gtest_brief=1 > "$logs/test_$t.log" 2>&1
  rc=$?
  note "test $t: exit $rc, $(grep -c '^\[  FAILED' "$logs/test_$t.log") failed lines, $(grep -c 'SKIPPED' "$logs/test_$t.log") skipped lines"
  [ $rc -eq 0 ] || grep -A12 '^\[ RUN\|Failure\|error' "$logs/test_$t.log" | head -60
done

# Every corpus and bench model on the GPU: gbc and gbc-cudagraphs against eager.
if [ -x $bin/gbcheck ]; then
  for m in corpus/examples/*.yaml corpus/faults/*.yaml bench/models/*.yaml bench/models/cuda/*.yaml; do
    have 40 || { note "check $m: skipped (budget)"; continue; }
    name=$(echo "$m" | tr '/' '_'); name=${name%.yaml}
    timeout 120 $bin/gbcheck check "$m" --device cuda -b gbc -b gbc-cudagraphs -n 3 \
      --json "$logs/check_$name.json" > "$logs/check_$name.log" 2>&1
    rc=$?
    note "check $m: exit $rc | $(grep -E '^  (gbc|gbc-cudagraphs) ' "$logs/check_$name.log" | sed 's/  */ /g' | cut -c1-150 | tr '\n' '|')"
    [ $rc -eq 0 ] || tail -15 "$logs/check_$name.log"
  done
  # Each injected fault must still be caught on the GPU.
  for f in corpus/faults/*.yaml; do
    have 30 || { note "fault $f: skipped (budget)"; continue; }
    kind=$(basename "$f" .yaml)
    timeout 120 $bin/gbcheck check "$f" --device cuda -b gbc -n 3 --inject-fault "$kind" -q > "$logs/fault_$kind.log" 2>&1
    note "fault $kind: exit $? (1 = caught) $(tail -1 "$logs/fault_$kind.log" | cut -c1-120)"
  done
fi

wait $tc_pid
note "torch.compile bench: $(tail -1 "$logs/torch_compile.log")"
cat "$logs/torch_compile.log" | tail -12

# Benchmarks: the GPU workloads, cold kernel cache for the compile times.
if [ -x $bin/gbcheck ]; then
  export GBCHECK_CACHE_DIR=$PWD/$build/bench-cache
  for m in bench/models/cuda/*.yaml; do
    have 45 || { note "bench $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 150 $bin/gbcheck bench "$m" --backend gbc --backend gbc-cudagraphs --repeat 100 \
      --json "$logs/bench_$name.json" > "$logs/bench_$name.log" 2>&1
    note "bench $name: exit $?"
    head -20 "$logs/bench_$name.log"
  done
  # nnc apart: TorchScript's CUDA fuser failing must not cost gbc's numbers.
  for m in bench/models/cuda/*.yaml; do
    have 40 || { note "bench nnc $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 100 $bin/gbcheck bench "$m" --backend nnc --repeat 50 --json "$logs/bench_nnc_$name.json" \
      > "$logs/bench_nnc_$name.log" 2>&1
    note "bench nnc $name: exit $? | $(grep -E '^ *nnc' "$logs/bench_nnc_$name.log" | head -1 | sed 's/  */ /g')"
  done
fi

# The rest of the suite on LibTorch 2.x, while the budget lasts.
if have 150; then
  taskset -c 0-$((ncpu - 1)) cmake --build $build -j "$ncpu" -- -k 0 > "$logs/build_all.log" 2>&1
  note "build of everything: exit $? ($(grep -c 'error:' "$logs/build_all.log") error lines)"
  grep -m 20 -A4 'error:' "$logs/build_all.log" | head -60
  if have 60; then
    (cd $build && timeout $(( budget - $(elapsed) - 20 )) ctest -j 8 --timeout 120 -LE 'fuzz-smoke' > "$logs/ctest_all.log" 2>&1)
    note "ctest (all): $(grep -E 'tests passed|tests failed' "$logs/ctest_all.log")"
    grep -E '\(Failed\)|\(Timeout\)|\(Not Run\)|\*\*\*' "$logs/ctest_all.log" | head -40
  fi
else
  note "whole suite: skipped (budget)"
fi
