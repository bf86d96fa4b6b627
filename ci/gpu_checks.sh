#!/usr/bin/env bash
# Every GPU check of gbc in one run, for the GPU machine (device tool; docs/performance.md, GPU).
# Run from the repository root there, with .devdeps carried (../shared/tools/device-deps.sh ccache
# libhiredis0.14) and, when an earlier run's compiler cache came back, .ccache-gpu carried too:
#   bash ci/gpu_checks.sh [BUDGET_S] [STEP...]
# Steps (default: all): torch_compile build gputests bench sweep profile corpus faults imported
# adapters nnc diagnose suite, run in that order. It runs eager and torch.compile on the GPU workloads
# (bench/torch_compile_bench.py, while the build keeps the CPUs busy), builds gbcheck and the test
# binaries against the machine's PyTorch (LibTorch 2.x with CUDA), runs the GPU tests, benchmarks
# the GPU workloads (gbc, gbc-cudagraphs; gbc again under each set of schedule choices of
# compiler/codegen/cuda_tuning.h), checks every corpus and bench model with
# --device cuda on gbc and gbc-cudagraphs, makes sure every injected fault is still caught there,
# checks the imported real models (torchvision's, written there by corpus/torchscript/make_models.py,
# and the PyTorch 2.x corpus) and the torch.compile adapters on CUDA, nnc apart (its failures cost
# nothing else), collects details of failing CPU tests, then runs the whole suite on LibTorch 2.x
# while the budget lasts.
# Everything lands in $OUT (summary.txt, logs.tar.gz, ccache-gpu.tar.NN parts of the compiler
# cache to carry next time); a step that would overrun BUDGET_S seconds (default 420) is skipped
# and says so in the summary.
set -uo pipefail
budget=${1:-420}
shift || true
steps=" ${*:-torch_compile build gputests bench sweep profile corpus faults imported adapters nnc diagnose suite} "
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
  # The compiler cache goes back in parts of at most 15 MiB (the tool returns files up to 16 MiB,
  # 64 MiB in all), only when it fits beside the logs.
  ccache -c >/dev/null 2>&1 || true
  if [ -d .ccache-gpu ] && [ "$(du -sm .ccache-gpu | cut -f1)" -le 45 ]; then
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
# $GPU_TARGETS narrows the build (kernel_test and backends_test serve the diagnose step only).
read -r -a gpu_targets <<< "${GPU_TARGETS:-gbcheck cuda_test gbc_cuda_test cuda_corpus_test codegen_test kernel_test aten_test backends_test}"

# torch.compile's baseline runs on the GPU while the build keeps the CPUs busy (the GPU is idle
# then; CUDA events time the kernels, and the host runs far ahead of these millisecond kernels, but
# its compile times come out longer than on an idle machine).
if step torch_compile; then
  timeout 300 python3 bench/torch_compile_bench.py --repeat 100 --json "$logs/torch_compile.json" \
    > "$logs/torch_compile.log" 2>&1 &
  torch_compile_pid=$!
fi

if step build; then
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$torch_prefix;/usr/local/cuda;$deps;$deps/lib/x86_64-linux-gnu/cmake;$deps/share/cmake" \
    > "$logs/configure.log" 2>&1 || { note "configure FAILED (logs/configure.log)"; tail -30 "$logs/configure.log"; exit 1; }
  cmake --build $build -j "$ncpu" --target "${gpu_targets[@]}" -- -k 0 > "$logs/build.log" 2>&1
  note "build of ${gpu_targets[*]}: exit $? ($(grep -c 'error:' "$logs/build.log") error lines; ccache $(ccache -s 2>/dev/null | grep -m1 -E 'Hits' | sed 's/  */ /g'))"
  grep -m 10 -B2 -A6 'error:' "$logs/build.log" | head -60
fi
export GBCHECK_CACHE_DIR=$PWD/$build/kernel-cache

# Eager and torch.compile on the same workloads (started before the build): finished before gbc's
# benchmarks, so that they do not share the GPU.
if step torch_compile; then
  wait "$torch_compile_pid"
  note "torch.compile bench (run during the build): exit $?"
  tail -9 "$logs/torch_compile.log"
fi

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

# The GPU workloads on gbc and gbc-cudagraphs; a fresh kernel cache, so first calls compile cold.
# GPU_BENCH_MODELS (a shell glob of models or folders) and GPU_BENCH_BACKENDS (space-separated)
# change them.
if step bench && [ -x $bin/gbcheck ]; then
  export GBCHECK_CACHE_DIR=$PWD/$build/bench-cache
  bench_backends=()
  for b in ${GPU_BENCH_BACKENDS:-gbc gbc-cudagraphs}; do bench_backends+=(--backend "$b"); done
  for m in ${GPU_BENCH_MODELS:-bench/models/cuda/*.yaml}; do
    have 45 || { note "bench $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 150 $bin/gbcheck bench "$m" "${bench_backends[@]}" --repeat 100 --profile \
      --json "$logs/bench_$name.json" > "$logs/bench_$name.log" 2>&1
    rc=$?
    # A folder is one suite run, summarized like the sweep's.
    if [ -d "$m" ]; then note "bench $m: exit $rc | $(python3 ci/bench_summary.py "$logs/bench_$name.json" gbc 2>&1)"
    else note "bench $name: exit $rc"; head -30 "$logs/bench_$name.log"; fi
  done
fi

# The schedule choices of compiler/codegen/cuda_tuning.h, each set of overrides on every GPU
# workload in one suite run (gbc only; a fresh kernel cache each, so every first call compiles
# cold): median ms per workload, then the cold first call and compile time of each from the JSON.
# $GPU_SWEEP narrows the sets (labels, space-separated).
if step sweep && [ -x $bin/gbcheck ]; then
  while read -r label settings; do
    [ -z "${GPU_SWEEP:-}" ] || [[ " $GPU_SWEEP " == *" $label "* ]] || continue
    have 45 || { note "sweep $label: skipped (budget)"; continue; }
    [ "$settings" = "-" ] && settings=""
    env $settings GBCHECK_CACHE_DIR=$PWD/$build/sweep-cache-$label timeout 120 $bin/gbcheck bench bench/models/cuda \
      --backend gbc --repeat 100 --json "$logs/sweep_$label.json" > "$logs/sweep_$label.log" 2>&1
    rc=$?
    note "sweep $label [${settings:-defaults}]: exit $rc | $(python3 ci/bench_summary.py "$logs/sweep_$label.json" gbc 2>&1)"
  done <<'SETS'
base -
mb0 GBCHECK_CUDA_MIN_BLOCKS=0
resident GBCHECK_CUDA_ROW_GRID=resident
prefetch GBCHECK_CUDA_PREFETCH=1 GBCHECK_CUDA_ROW_GRID=resident
prefetch_mb0 GBCHECK_CUDA_PREFETCH=1 GBCHECK_CUDA_ROW_GRID=resident GBCHECK_CUDA_MIN_BLOCKS=0
e16 GBCHECK_CUDA_ROW_ELEMENTS=16
e16_prefetch GBCHECK_CUDA_ROW_ELEMENTS=16 GBCHECK_CUDA_PREFETCH=1 GBCHECK_CUDA_ROW_GRID=resident
unroll8 GBCHECK_CUDA_UNROLL=8 GBCHECK_CUDA_POINTWISE_UNROLL=2
unroll16 GBCHECK_CUDA_UNROLL=16 GBCHECK_CUDA_POINTWISE_UNROLL=4
base_again -
SETS
fi

# Nsight Compute on one call of gbc's layer_norm and sum kernels (fused_*; the two below 90% of the
# copy): DRAM throughput, achieved occupancy, registers per thread. Needs ncu and counters the
# machine lets it read.
if step profile && [ -x $bin/gbcheck ] && command -v ncu > /dev/null; then
  for name in layer_norm_8192 sum_64m; do
    have 60 || { note "ncu $name: skipped (budget)"; continue; }
    timeout 90 ncu --clock-control none -k regex:fused --launch-skip 3 --launch-count 1 --section SpeedOfLight \
      --section Occupancy --section LaunchStats $bin/gbcheck bench bench/models/cuda/$name.yaml --backend gbc \
      --warmup 2 --repeat 3 > "$logs/ncu_$name.log" 2>&1
    note "ncu $name: exit $? | $(grep -E 'DRAM Throughput|Achieved Occupancy|Registers Per Thread|Block Size' "$logs/ncu_$name.log" | sed 's/  */ /g' | tr '\n' '|')"
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

# Each injected fault must still be caught on the GPU (exit 1), with its model's own cases (guard-dtype needs
# six to reach the float64 calls).
if step faults && [ -x $bin/gbcheck ]; then
  for f in corpus/faults/*.yaml; do
    have 30 || { note "fault $f: skipped (budget)"; continue; }
    kind=$(basename "$f" .yaml)
    timeout 120 $bin/gbcheck check "$f" --device cuda -b gbc --inject-fault "$kind" > "$logs/fault_$kind.log" 2>&1
    note "fault $kind: exit $? (1 = caught) $(grep -m1 -E '^  gbc ' "$logs/fault_$kind.log" | sed 's/  */ /g' | cut -c1-120)"
  done
fi

# Real models on the GPU: torchvision's (random weights, traced here by this machine's PyTorch, so
# also saved by 2.x) and the PyTorch 2.x corpus with its saved inputs, on gbc and gbc-cudagraphs.
if step imported && [ -x $bin/gbcheck ]; then
  models=$build/real-models
  if have 60; then
    timeout 120 python3 corpus/torchscript/make_models.py "$models" --real > "$logs/make_models.log" 2>&1
    note "make_models --real: exit $? ($(ls "$models" 2>/dev/null | wc -l) files)"
  fi
  for spec in resnet18:float32[1,3,64,64] mobilenet_v2:float32[1,3,64,64] mobilenet_v3_small:float32[1,3,64,64] \
      squeezenet1_0:float32[1,3,64,64] efficientnet_b0:float32[1,3,64,64] convnext_tiny:float32[1,3,64,64] \
      vit:float32[1,3,64,64] encoder_layer:float32[2,10,32] encoder_layer_grad:float32[2,10,32] lstm:float32[2,7,12] \
      conv_bn_relu:float32[1,3,16,16] natives:float32[2,4,6]; do
    name=${spec%%:*}
    [ -f "$models/$name.pt" ] || { note "imported $name: no model file"; continue; }
    have 30 || { note "imported $name: skipped (budget)"; continue; }
    timeout 120 $bin/gbcheck check "$models/$name.pt" --input "x=${spec#*:}" --device cuda -b gbc -b gbc-cudagraphs -n 2 \
      > "$logs/imported_$name.log" 2>&1
    rc=$?
    note "imported $name: exit $rc | $(grep -E '^  (gbc|gbc-cudagraphs) ' "$logs/imported_$name.log" | sed 's/  */ /g' | cut -c1-140 | tr '\n' '|')"
    [ $rc -eq 0 ] || grep -v '^\*\*\*' "$logs/imported_$name.log" | tail -8
  done
  for spec in torch2_ops:float32[2,5,16] vit:float32[1,3,64,64] natives:float32[2,4,6]; do
    name=${spec%%:*}
    have 25 || { note "torch2 corpus $name: skipped (budget)"; continue; }
    timeout 90 $bin/gbcheck check corpus/torchscript/torch2/$name.pt --input "x=${spec#*:}" \
      --inputs corpus/torchscript/torch2/$name.inputs.pt --device cuda -b gbc -n 2 > "$logs/torch2_$name.log" 2>&1
    note "torch2 corpus $name: exit $? | $(grep -E '^  gbc ' "$logs/torch2_$name.log" | sed 's/  */ /g' | cut -c1-140)"
  done
fi

# torch.compile's backends through the adapters (configs/backends.yaml) on CUDA.
if step adapters && [ -x $bin/gbcheck ]; then
  for m in corpus/examples/mlp.yaml bench/models/cuda/softmax_8192.yaml; do
    have 60 || { note "adapters $m: skipped (budget)"; continue; }
    name=$(basename "$m" .yaml)
    timeout 150 $bin/gbcheck check "$m" --device cuda -b inductor -b cudagraphs -n 2 --json "$logs/adapters_$name.json" \
      > "$logs/adapters_$name.log" 2>&1
    rc=$?
    note "adapters $m: exit $rc | $(grep -E '^  (inductor|cudagraphs) ' "$logs/adapters_$name.log" | sed 's/  */ /g' | cut -c1-140 | tr '\n' '|')"
    [ $rc -eq 0 ] || grep -v '^\*\*\*' "$logs/adapters_$name.log" | tail -10
  done
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
