#!/usr/bin/env bash
# Every GPU check of gbc in one run, for the GPU machine (device tool; docs/performance.md, GPU).
# Run from the repository root there, with .devdeps carried (../shared/tools/device-deps.sh ccache
# libhiredis0.14) and, when an earlier run's compiler cache came back, .ccache-gpu carried too:
#   bash ci/gpu_checks.sh [BUDGET_S] [STEP...]
# Steps, in this order (default: all): build gputests corpus faults bench torch_compile nnc
# diagnose suite. It builds gbcheck and the test binaries against the machine's PyTorch (LibTorch
# 2.x with CUDA), runs the GPU tests, checks every corpus and bench model with --device cuda on gbc
# and gbc-cudagraphs, makes sure every injected fault is still caught there, benchmarks the GPU
# workloads (gbc, gbc-cudagraphs; eager and torch.compile through bench/torch_compile_bench.py; nnc
# apart, so that its failures cost nothing else), collects details of failing CPU tests, then runs
# the whole suite on LibTorch 2.x while the budget lasts.
# Everything lands in $OUT (summary.txt, logs.tar.gz, ccache-gpu.tar.NN parts of the compiler
# cache to carry next time); a step that would overrun BUDGET_S seconds (default 420) is skipped
# and says so in the summary.
set -uo pipefail
budget=${1:-420}
shift || true
steps=" ${*:-build gputests corpus faults bench torch_compile nnc diagnose suite} "
out=${OUT:-$PWD/gpu-out}
logs=$out/logs
mkdir -p "$logs"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
note() { echo "[$(elapsed)s] $*" | tee -a "$out/summary.txt"; }
# have S: true when S more seconds fit in the budget.
have() { [ $(( $(elapsed) + $1 )) -le "$budget" ]; }
step() { [[ "$steps" == *" $1 "* ]]; }
finish() {
  note "done after $(elapsed) s"
  echo "=== summary"; cat "$out/summary.txt"
  tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
  if [ -d .ccache-gpu ]; then
    # The compiler cache goes back in parts of at most 15 MiB (the tool returns files up to 16 MiB).
    ccache -c >/dev/null 2>&1 || true
    tar -C . -cf - .ccache-gpu | split -b 15m -d - "$out/ccache-gpu.tar."
  fi
}
trap finish EXIT

nvidia-smi > "$logs/nvidia-smi.txt" 2>&1
note "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
note "torch: $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1)"
ncpu=$(nproc)

# The machine's LibTorch, Debian's libraries from .devdeps, ccache in .ccache-gpu.
deps=$PWD/.devdeps/usr
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:$torch_lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$deps/bin:/usr/local/cuda/bin:$PATH
export CCACHE_DIR=$PWD/.ccache-gpu CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_COMPRESSLEVEL=6 CCACHE_MAXSIZE=2G
build=build-gpu
bin=$build/bin
gpu_targets=(gbcheck cuda_test gbc_cuda_test cuda_corpus_test codegen_test kernel_test aten_test backends_test)

if step build; then
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$torch_prefix;/usr/local/cuda;$deps;$deps/lib/x86_64-linux-gnu/cmake;$deps/share/cmake" \
    > "$logs/configure.log" 2>&1 || { note "configure FAILED (logs/configure.log)"; tail -30 "$logs/configure.log"; exit 1; }
  cmake --build $build -j "$ncpu" --target "${gpu_targets[@]}" -- -k 0 > "$logs/build.log" 2>&1
  note "build of ${gpu_targets[*]}: exit $? ($(grep -c 'error:' "$logs/build.log") error lines; ccache $(ccache -s 2>/dev/null | grep -m1 -E 'Hits' | sed 's/  */ /g'))"
  grep -m 10 -B2 -A6 'error:' "$logs/build.log" | head -60
fi
export GBCHECK_CACHE_DIR=$PWD/$build/kernel-cache

# The test binaries that touch CUDA; each case of them runs here, none skips.
if step gputests; then
  for t in cuda_test gbc_cuda_test cuda_corpus_test "codegen_test --gtest_filter=CudaCodegen*:*CudaPtx*" "aten_test --gtest_filter=AtenSemantics*:EagerExecutor*"; do
    name=${t%% *}
    [ -x $bin/$name ] || { note "test $name: NOT BUILT"; continue; }
    have 60 || { note "test $name: skipped (budget)"; continue; }
    timeout 300 $bin/$t > "$logs/test_$name.log" 2>&1
    rc=$?
    note "test $t: exit $rc, $(grep -c '^\[  FAILED' "$logs/test_$name.log") FAILED lines, $(grep -c '^\[  SKIPPED' "$logs/test_$name.log") SKIPPED lines"
    [ $rc -eq 0 ] || grep -B2 -A15 'Failure\|error' "$logs/test_$name.log" | head -80
  done
fi

# Every corpus and bench model on the GPU: gbc and gbc-cudagraphs against eager (3 cases; the
# large bench models 1, their float64 reference is computed on the CPU). GPU_CHECK_MODELS narrows
# the list (a shell glob).
if step corpus && [ -x $bin/gbcheck ]; then
  for m in ${GPU_CHECK_MODELS:-corpus/examples/*.yaml corpus/faults/*.yaml bench/models/*.yaml bench/models/cuda/*.yaml}; do
    have 40 || { note "check $m: skipped (budget)"; continue; }
    name=$(echo "$m" | tr '/' '_'); name=${name%.yaml}
    cases=3; [[ $m == bench/* ]] && cases=1
    timeout 120 $bin/gbcheck check "$m" --device cuda -b gbc -b gbc-cudagraphs -n $cases \
      --json "$logs/check_$name.json" > "$logs/check_$name.log" 2>&1
    rc=$?
    note "check $m: exit $rc | $(grep -E '^  (gbc|gbc-cudagraphs) ' "$logs/check_$name.log" | sed 's/  */ /g' | cut -c1-160 | tr '\n' '|')"
    [ $rc -eq 0 ] || grep -v '^\*\*\*' "$logs/check_$name.log" | tail -12
  done
fi

# Each injected fault must still be caught on the GPU (exit 1).
if step faults && [ -x $bin/gbcheck ]; then
  for f in corpus/faults/*.yaml; do
    have 30 || { note "fault $f: skipped (budget)"; continue; }
    kind=$(basename "$f" .yaml)
    timeout 120 $bin/gbcheck check "$f" --device cuda -b gbc -n 3 --inject-fault "$kind" > "$logs/fault_$kind.log" 2>&1
    note "fault $kind: exit $? (1 = caught) $(grep -m1 -E '^  gbc ' "$logs/fault_$kind.log" | sed 's/  */ /g' | cut -c1-120)"
  done
fi

# The GPU workloads on gbc and gbc-cudagraphs; a fresh kernel cache, so first calls compile cold.
if step bench && [ -x $bin/gbcheck ]; then
  export GBCHECK_CACHE_DIR=$PWD/$build/bench-cache
  for m in bench/models/cuda/*.yaml; do
    have 45 || { note "bench $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 150 $bin/gbcheck bench "$m" --backend gbc --backend gbc-cudagraphs --repeat 100 --profile \
      --json "$logs/bench_$name.json" > "$logs/bench_$name.log" 2>&1
    note "bench $name: exit $?"
    head -30 "$logs/bench_$name.log"
  done
fi

# Eager and torch.compile on the same workloads, on this machine, after gbc's runs (not beside them).
if step torch_compile; then
  if have 120; then
    timeout 200 python3 bench/torch_compile_bench.py --repeat 100 --json "$logs/torch_compile.json" \
      > "$logs/torch_compile.log" 2>&1
    note "torch.compile bench: exit $?"
    tail -8 "$logs/torch_compile.log"
  else
    note "torch.compile bench: skipped (budget)"
  fi
fi

# nnc (TorchScript's fuser) apart: its failures must not cost gbc's numbers.
if step nnc && [ -x $bin/gbcheck ]; then
  for m in bench/models/cuda/*.yaml; do
    have 40 || { note "bench nnc $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 100 $bin/gbcheck bench "$m" --backend nnc --repeat 50 --json "$logs/bench_nnc_$name.json" \
      > "$logs/bench_nnc_$name.log" 2>&1
    note "bench nnc $name: exit $? | $(grep -E '^ *nnc' "$logs/bench_nnc_$name.log" | head -1 | sed 's/  */ /g')"
  done
fi

# Details of CPU tests that failed on LibTorch 2.x: the failing cases' output, a crash's backtrace,
# and whether gbc's CPU path (host compiler + dlopen) works here at all.
if step diagnose; then
  if [ -x $bin/gbcheck ] && have 30; then
    timeout 60 $bin/gbcheck check corpus/examples/mlp.yaml --device cpu -b gbc -n 2 > "$logs/diag_cpu_check.log" 2>&1
    note "gbc on the CPU here: exit $? | $(grep -E '^  gbc ' "$logs/diag_cpu_check.log" | sed 's/  */ /g' | cut -c1-120)"
    tail -5 "$logs/diag_cpu_check.log"
  fi
  if [ -x $bin/kernel_test ] && have 30; then
    timeout 120 $bin/kernel_test --gtest_filter='Interpreter.*' > "$logs/diag_kernel_test.log" 2>&1
    note "kernel_test Interpreter.*: exit $?"
    grep -A8 'Failure' "$logs/diag_kernel_test.log" | head -30
  fi
  if [ -x $bin/codegen_test ] && have 40; then
    timeout 120 $bin/codegen_test --gtest_filter='PreludeMath.*' > "$logs/diag_prelude.log" 2>&1
    note "codegen_test PreludeMath.*: exit $?"
    grep -A8 'Failure' "$logs/diag_prelude.log" | head -30
    gdb=$(command -v cuda-gdb || true)
    if [ -n "$gdb" ]; then
      timeout 120 "$gdb" -batch -ex run -ex bt -ex 'info sharedlibrary' --args $bin/codegen_test \
        --gtest_filter=CpuCompiler.MissingKernelIsReported > "$logs/diag_segv.log" 2>&1
      note "codegen_test CpuCompiler under cuda-gdb: exit $?"
      grep -B2 -A25 'SIGSEGV' "$logs/diag_segv.log" | head -45
    fi
  fi
fi

# The rest of the suite on LibTorch 2.x, while the budget lasts.
if step suite; then
  if have 120; then
    cmake --build $build -j "$ncpu" -- -k 0 > "$logs/build_all.log" 2>&1
    note "build of everything: exit $? ($(grep -c 'error:' "$logs/build_all.log") error lines)"
    grep -m 10 -A4 'error:' "$logs/build_all.log" | head -40
    if have 60; then
      (cd $build && timeout $(( budget - $(elapsed) - 15 )) ctest -j 12 --timeout 120 -LE fuzz-smoke \
        --output-on-failure > "$logs/ctest_all.log" 2>&1)
      note "ctest (all): $(grep -E 'tests passed|tests failed' "$logs/ctest_all.log")"
      sed -n '/The following tests FAILED/,$p' "$logs/ctest_all.log" | head -60
    fi
  else
    note "whole suite: skipped (budget)"
  fi
fi
