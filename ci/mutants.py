#!/usr/bin/env python3
"""Mutation testing of gbc (issue 18): how many planted source bugs does gbcheck catch?

Generates small source mutations of compiler/passes, compiler/kernel and compiler/codegen
(comparison and logical operator swaps, off-by-one constants, dropped `!`, swapped +/-), applies
them one at a time, rebuilds gbcheck incrementally, and runs a fixed detector: `gbcheck check` on
the corpus models against gbc and gbc-interp, then a fixed-seed fuzz budget on both. The host
compiler's driver (cpu_compiler.cpp: processes and the cache, not code generation), the CUDA generator and --inject-fault's lines are left out. A mutant is
  stillborn   it does not compile (not counted),
  equivalent  the generated C++ source and kernel IR of the corpus models are byte for byte the
              baseline's (likely equivalent, not counted; not applied to the interpreter, whose
              changes never show there),
  killed      a corpus check fails or the fuzz budget finds a signature the baseline does not have,
  survived    otherwise (listed: each one is a blind spot, or an equivalent mutant to confirm).
Prints the kill rate by folder. Restores every file it touches, also when interrupted.
Documented in docs/fuzzing.md ("Mutation testing"). Not part of ci/test.sh: it takes hours in full.
Usage: ci/mutants.sh [--sample N] [--seed S] [--fuzz-cases C] [--folders DIR...] [--build DIR]
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The host compiler's driver (processes and the cache, not code generation), and the CUDA code
# generator, whose code the CPU detector never runs (ci/gpu_checks.sh is the GPU's detector).
SKIPPED_FILES = {"cpu_compiler.cpp", "cuda_codegen.cpp"}
# Files whose changes do not show in the generated code or kernel IR: no equivalence filter.
UNFILTERED_FILES = {"interpreter.cpp"}
BACKENDS = ["gbc", "gbc-interp"]

# (pattern, replacement, kind): applied at one match of a line at a time.
MUTATORS = [
    (r"(?<![<>=!])==(?!=)", "!=", "comparison"),
    (r"!=", "==", "comparison"),
    (r"(?<![<>-])<=", "<", "comparison"),
    (r"(?<![<>-])>=", ">", "comparison"),
    (r"(?<=[\w)\] ]) < (?=[\w(])", " <= ", "comparison"),
    (r"(?<=[\w)\] ]) > (?=[\w(])", " >= ", "comparison"),
    (r"&&", "||", "logical"),
    (r"\|\|", "&&", "logical"),
    (r"(?<=\W)!(?=[\w(])(?!=)", "", "dropped condition"),
    (r"(?<=[\w)\]]) \+ 1\b", "", "off-by-one"),
    (r"(?<=[\w)\]]) - 1\b", "", "off-by-one"),
    (r"(?<=[\w)\]]) \+ (?=[\w(])", " - ", "arithmetic"),
    (r"(?<=[\w)\]]) - (?=[\w(])", " + ", "arithmetic"),
    (r"(?<![\w.])0\.5(?![\w.])", "0.25", "constant"),
    (r"(?<![\w.])1(?![\w.])", "2", "constant"),
]


def code_lines(path):
    """(line number, text) of lines that hold code: no comments, includes, asserts or logs."""
    out = []
    in_block = False
    with open(path) as f:
        for i, line in enumerate(f):
            s = line.strip()
            if in_block:
                in_block = "*/" not in s
                continue
            if s.startswith("/*"):
                in_block = "*/" not in s
                continue
            if not s or s.startswith("//") or s.startswith("#") or "GBC_INTERNAL_ASSERT" in s or "GBC_LOG" in s:
                continue
            if "internal_error(" in s or "template <" in s or s.startswith("static_assert") or "InjectedFault" in s:
                continue
            out.append((i, line))
    return out


def sites(folders):
    found = []
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith(".cpp") or name in SKIPPED_FILES:
                continue
            rel = os.path.join(folder, name)
            for lineno, line in code_lines(os.path.join(ROOT, rel)):
                code = line.split("//")[0]
                if code.count('"') >= 2:
                    continue  # strings (emitted source, messages) are the codegen's text, mutated by hand
                for pattern, repl, kind in MUTATORS:
                    for m in re.finditer(pattern, code):
                        mutated = line[: m.start()] + repl + line[m.end():]
                        found.append({"file": rel, "folder": folder, "line": lineno, "kind": kind,
                                      "before": line.rstrip("\n"), "after": mutated.rstrip("\n")})
    return found


def run(cmd, timeout=None, env=None, cwd=ROOT):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")


class Detector:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.gbcheck = os.path.join(args.build, "bin", "gbcheck")
        self.models = sorted(os.path.join("corpus/examples", m) for m in os.listdir(os.path.join(ROOT, "corpus/examples"))
                             if m.endswith(".yaml"))
        self.env = dict(os.environ, GBCHECK_THREADS="1")

    def generated_code(self):
        """A hash of the C++ source gbc generates for the corpus models (one case each)."""
        h = hashlib.sha256()
        for m in self.models:
            _, out = run([self.gbcheck, m, "-b", "gbc", "-n", "2", "--no-cache", "--log", "kernels,output_code", "-q"],
                         timeout=300, env=self.env)
            # Compile times, temporary folders and progress vary from run to run.
            h.update("\n".join(l for l in out.splitlines()
                               if not re.search(r"compiled into|loaded from cache|elapsed", l)).encode())
        return h.hexdigest()

    def corpus_fails(self):
        for m in self.models:
            code, _ = run([self.gbcheck, m, "-q"] + [a for b in BACKENDS for a in ("-b", b)], timeout=300, env=self.env)
            if code != 0:
                return m
        return None

    def fuzz_signatures(self, tag):
        out = os.path.join(self.work, "fuzz-" + tag)
        if os.path.isdir(out):
            shutil.rmtree(out)
        run([self.gbcheck, "fuzz", "--out", out, "--cases", str(self.args.fuzz_cases), "--seed", str(self.args.fuzz_seed),
             "--backends", ",".join(BACKENDS), "--jobs", "1", "--reduce-checks", "0", "--quiet", "--max-nodes", "12"],
            timeout=self.args.fuzz_timeout, env=dict(self.env, GBCHECK_CACHE_DIR=os.path.join(self.work, "cache")))
        db = os.path.join(out, "fuzz.db")
        if not os.path.exists(db):
            return {"<fuzz did not finish>"}
        with sqlite3.connect(db) as c:
            return {row[0] for row in c.execute("select key from signatures")}


def build(args):
    return run(["ninja", "-C", args.build, "-j", str(args.jobs), "gbcheck"], timeout=1800)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=20, help="mutants to try, drawn at random (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sample")
    ap.add_argument("--folders", nargs="+", default=["compiler/passes", "compiler/kernel", "compiler/codegen"])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fuzz-cases", type=int, default=24, help="graphs of the fixed-seed fuzz budget")
    ap.add_argument("--fuzz-seed", type=int, default=18000)
    ap.add_argument("--fuzz-timeout", type=int, default=300, help="seconds the fuzz budget may take")
    ap.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    args = ap.parse_args()

    all_sites = sites(args.folders)
    rng = random.Random(args.seed)
    chosen = all_sites if args.sample == 0 else rng.sample(all_sites, min(args.sample, len(all_sites)))
    print(f"mutants: {len(all_sites)} sites in {', '.join(args.folders)}; trying {len(chosen)} (seed {args.seed})")
    if args.list:
        for s in chosen:
            print(f"  {s['file']}:{s['line'] + 1} [{s['kind']}] {s['before'].strip()}  ->  {s['after'].strip()}")
        return 0

    work = tempfile.mkdtemp(prefix="gbcheck-mutants-")
    det = Detector(args, work)
    code, log = build(args)
    if code != 0:
        print(log[-3000:])
        print("mutants: the unmutated tree does not build")
        return 4
    start = time.time()
    base_code = det.generated_code()
    if det.corpus_fails():
        print("mutants: the corpus fails without a mutant; fix that first")
        return 4
    base_sigs = det.fuzz_signatures("baseline")
    print(f"baseline: {len(base_sigs)} fuzz signature(s) without a mutant, {time.time() - start:.0f} s")

    results = []
    for i, s in enumerate(chosen):
        path = os.path.join(ROOT, s["file"])
        with open(path) as f:
            original = f.read()
        lines = original.splitlines(keepends=True)
        lines[s["line"]] = s["after"] + "\n"
        t0 = time.time()
        try:
            with open(path, "w") as f:
                f.write("".join(lines))
            code, _ = build(args)
            if code != 0:
                verdict, why = "stillborn", "does not compile"
            elif os.path.basename(s["file"]) not in UNFILTERED_FILES and det.generated_code() == base_code:
                verdict, why = "equivalent", "same generated code for the corpus"
            else:
                failing = det.corpus_fails()
                if failing:
                    verdict, why = "killed", "corpus: " + failing
                else:
                    new = det.fuzz_signatures("m%d" % i) - base_sigs
                    verdict, why = ("killed", "fuzz: " + sorted(new)[0]) if new else ("survived", "")
        finally:
            with open(path, "w") as f:
                f.write(original)
        s.update(verdict=verdict, why=why)
        results.append(s)
        print(f"[{i + 1}/{len(chosen)}] {verdict:10s} {s['file']}:{s['line'] + 1} [{s['kind']}] "
              f"{s['before'].strip()} -> {s['after'].strip()}  {why} ({time.time() - t0:.0f} s)", flush=True)
    build(args)  # the unmutated tree again

    print("\nkill rate by folder (killed / (killed + survived)):")
    for folder in args.folders:
        rs = [r for r in results if r["folder"] == folder]
        killed = sum(r["verdict"] == "killed" for r in rs)
        survived = sum(r["verdict"] == "survived" for r in rs)
        counted = killed + survived
        rate = f"{100.0 * killed / counted:.0f}%" if counted else "n/a"
        print(f"  {folder}: {killed}/{counted} = {rate} "
              f"({sum(r['verdict'] == 'equivalent' for r in rs)} equivalent, {sum(r['verdict'] == 'stillborn' for r in rs)} stillborn)")
    survivors = [r for r in results if r["verdict"] == "survived"]
    if survivors:
        print("survivors:")
        for r in survivors:
            print(f"  {r['file']}:{r['line'] + 1} [{r['kind']}] {r['before'].strip()}  ->  {r['after'].strip()}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
