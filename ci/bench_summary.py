#!/usr/bin/env python3
"""One line of a `gbcheck bench DIR --json` suite file, for ci/gpu_checks.sh's summary: per model
the backend's median ms, GB/s against the copy measured in the same run, its first call and
compile ms, and eager's median.  Usage: bench_summary.py SUITE.json [BACKEND]"""
import json
import sys


def main():
    backend = sys.argv[2] if len(sys.argv) > 2 else "gbc"
    try:
        with open(sys.argv[1]) as f:
            suite = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no results ({e})")
        return
    parts = []
    for model in suite.get("models", []):
        by_name = {b["name"]: b for b in model["backends"]}
        b, eager = by_name.get(backend), by_name.get("eager")
        if not b or b.get("error"):
            parts.append(f'{model["model"]["name"]} {backend} failed: {b.get("error", "") if b else "missing"}')
            continue
        eager_ms = f'{eager["median_ms"]:.4f}' if eager else "-"
        parts.append(f'{model["model"]["name"]} {b["median_ms"]:.4f} ms ({b["gbs"]:.0f} GB/s, copy '
                     f'{model["copy_gbs"]:.0f}; first call {b["first_call_ms"]:.0f} ms, compile {b["compile_ms"]:.0f} ms; '
                     f'eager {eager_ms})')
    print(" | ".join(parts))


if __name__ == "__main__":
    main()
