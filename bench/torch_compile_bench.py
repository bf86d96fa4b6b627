#!/usr/bin/env python3
"""Eager PyTorch against torch.compile on the five GPU workloads of gbcheck's issue 4.

The baseline for gbc's CUDA benchmark (docs/performance.md): an 8-op elementwise chain on 64M
float32 (the ops of bench/models/elementwise_chain_16m.yaml), softmax and layer_norm over
[8192, 8192], matmul 4096^3 + bias + exact GELU, and a sum over 64M float32. Each workload runs
`--warmup` times, then `--repeat` timed calls, each between two CUDA events on the current stream;
the table shows median milliseconds, achieved GB/s (the bytes each workload must read and write
at the least, over the median time), the share of a device-to-device copy's bandwidth, and
torch.compile's speedup over eager and its compile time (the first call, synchronized). TF32 is
off, so float32 matmuls are true float32 on both paths.

Needs PyTorch 2.x with CUDA (and Triton for torch.compile). Standalone: no gbcheck imports.

    python3 bench/torch_compile_bench.py                       # all workloads, table only
    python3 bench/torch_compile_bench.py --json torch.json     # also write the results as JSON
    python3 bench/torch_compile_bench.py --only softmax layer_norm --repeat 200
"""

import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

M64 = 64 * 1024 * 1024
FLOAT = 4  # bytes per float32


def chain8(x, y):
    a = x * 1.5
    b = a + y
    c = torch.tanh(b)
    d = torch.sigmoid(c)
    e = d * x
    f = e - 0.25
    g = torch.abs(f)
    return torch.sqrt(g)


def softmax(x):
    return torch.softmax(x, dim=-1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def matmul_bias_gelu(a, b, bias):
    return F.gelu(a @ b + bias)


def total(x):
    return x.sum()


def workloads(device):
    """name -> (function, inputs, bytes moved at the least, floating-point operations or 0)."""
    g = torch.Generator(device=device).manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32, generator=g)

    n = 8192
    k = 4096
    return {
        "chain8": (chain8, (randn(M64), randn(M64)), 3 * M64 * FLOAT, 0),
        "softmax": (softmax, (randn(n, n),), 2 * n * n * FLOAT, 0),
        "layer_norm": (layer_norm, (randn(n, n), randn(n), randn(n)), (2 * n * n + 2 * n) * FLOAT, 0),
        "matmul_bias_gelu": (matmul_bias_gelu, (randn(k, k), randn(k, k), randn(k)), (3 * k * k + k) * FLOAT,
                             2 * k * k * k),
        "sum": (total, (randn(M64),), M64 * FLOAT + FLOAT, 0),
    }


def time_calls(fn, inputs, warmup, repeat):
    """Median and all per-call times in milliseconds, each call between two CUDA events."""
    for _ in range(warmup):
        fn(*inputs)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    for start, end in events:
        start.record()
        fn(*inputs)
        end.record()
    torch.cuda.synchronize()
    times = [start.elapsed_time(end) for start, end in events]
    return statistics.median(times), times


def copy_bandwidth(device, warmup, repeat):
    """GB/s of a device-to-device copy of 64M float32 (read plus write), the memory-bound ceiling."""
    src = torch.empty(M64, device=device, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    ms, _ = time_calls(lambda s: dst.copy_(s), (src,), warmup, repeat)
    return ms, 2 * M64 * FLOAT / (ms * 1e6)


def max_abs_diff(a, b):
    return (a.double() - b.double()).abs().max().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls before timing (default 10)")
    parser.add_argument("--repeat", type=int, default=100, help="timed calls; the median is reported (default 100)")
    parser.add_argument("--mode", default="default", help="torch.compile mode (default, max-autotune, ...)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()

    if not torch.cuda.is_available():
        sys.exit("torch_compile_bench.py: no CUDA device (this benchmark runs on the GPU machine)")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    device = torch.device("cuda")

    all_workloads = workloads(device)
    names = args.only or list(all_workloads)
    unknown = [n for n in names if n not in all_workloads]
    if unknown:
        sys.exit(f"torch_compile_bench.py: unknown workload {', '.join(unknown)}; known: {', '.join(all_workloads)}")

    copy_ms, copy_gbs = copy_bandwidth(device, args.warmup, args.repeat)
    results = []
    for name in names:
        fn, inputs, nbytes, flops = all_workloads[name]
        eager_ms, _ = time_calls(fn, inputs, args.warmup, args.repeat)
        torch._dynamo.reset()
        compiled = torch.compile(fn, mode=args.mode)
        torch.cuda.synchronize()
        start = time.perf_counter()
        out_compiled = compiled(*inputs)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        compiled_ms, _ = time_calls(compiled, inputs, args.warmup, args.repeat)
        results.append({
            "name": name,
            "eager_ms": eager_ms,
            "compiled_ms": compiled_ms,
            "speedup": eager_ms / compiled_ms,
            "eager_gbs": nbytes / (eager_ms * 1e6),
            "compiled_gbs": nbytes / (compiled_ms * 1e6),
            "compiled_copy_fraction": nbytes / (compiled_ms * 1e6) / copy_gbs,
            "eager_tflops": flops / (eager_ms * 1e9) if flops else None,
            "compiled_tflops": flops / (compiled_ms * 1e9) if flops else None,
            "compile_s": compile_s,
            "max_abs_diff": max_abs_diff(out_compiled, fn(*inputs)),
        })

    print(f"torch {torch.__version__} | {torch.cuda.get_device_name()} | float32, TF32 off | "
          f"warm-up {args.warmup}, median of {args.repeat} | torch.compile mode={args.mode}")
    print(f"copy of 64M float32: {copy_ms:.3f} ms ({copy_gbs:.0f} GB/s)")
    header = (f"{'workload':<18}{'eager ms':>10}{'compiled ms':>13}{'speedup':>9}{'eager GB/s':>12}"
              f"{'comp. GB/s':>12}{'% copy':>8}{'TFLOP/s':>9}{'compile s':>11}{'max |diff|':>12}")
    print(header)
    for r in results:
        tflops = f"{r['compiled_tflops']:.1f}" if r["compiled_tflops"] else "-"
        print(f"{r['name']:<18}{r['eager_ms']:>10.3f}{r['compiled_ms']:>13.3f}{r['speedup']:>8.2f}x"
              f"{r['eager_gbs']:>12.0f}{r['compiled_gbs']:>12.0f}{100 * r['compiled_copy_fraction']:>7.0f}%"
              f"{tflops:>9}{r['compile_s']:>11.1f}{r['max_abs_diff']:>12.2e}")

    if args.json:
        report = {
            "schema": "gbcheck.torch_compile_bench/v1",
            "torch_version": torch.__version__,
            "device": torch.cuda.get_device_name(),
            "warmup": args.warmup,
            "repeat": args.repeat,
            "mode": args.mode,
            "copy_ms": copy_ms,
            "copy_gbs": copy_gbs,
            "workloads": results,
        }
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
