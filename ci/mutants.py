#!/usr/bin/env python3
"""Mutation testing of gbc (issue 18): how many planted source bugs does gbcheck catch?

Generates small source mutations of compiler/passes, compiler/kernel and compiler/codegen
(comparison and logical operator swaps, off-by-one constants, dropped `!`, swapped +/-), applies
them one at a time, rebuilds gbcheck incrementally, and runs a fixed detector that stops at the
first failure: `gbcheck check` on the corpus models against gbc and gbc-interp, then a fixed-seed
fuzz budget on both (its store polled, the run killed at the first signature the baseline lacks).
All runs share one kernel cache (BUILD/mutants-cache), so code a mutant leaves alone compiles
nothing; the unmutated tree's results are cached in BUILD/mutants-baseline.json per gbcheck binary.
The host compiler's driver (cpu_compiler.cpp: processes and the cache, not code generation), the
CUDA generator and --inject-fault's code are left out. A mutant is
  stillborn   it does not compile (not counted),
  killed      a corpus check fails or reports fallback FB001 (generated code the host compiler
              rejects), or the fuzz budget finds a signature the baseline does not have,
  equivalent  not killed, and gbc's post-pass graphs, partitions and generated C++ for the corpus
              and the fuzz budget (from --trace) are the baseline's (likely equivalent, or code the
              detector never reaches; not counted; not applied to the interpreter, whose changes
              never show there),
  survived    otherwise (listed: each one is a blind spot, or an equivalent mutant to confirm).
A mutant the detector does not kill (survived or equivalent) is then rebuilt in an AddressSanitizer
build (BUILD-asan, configured with -DGBCHECK_SANITIZE=address: ASan and libstdc++'s bounds checks
in the three folders) and the corpus step rerun there: a memory error it finds is a kill (memory
errors inside gbc change no output; --no-asan skips the stage, as does a BUILD-asan not configured).
Prints the kill rate by folder. Restores every file it touches, also when interrupted.
Documented in docs/fuzzing.md ("Mutation testing"). Not part of ci/test.sh: it takes hours in full.
Usage: ci/mutants.sh [--sample N] [--seed S] [--ids ID...] [--minutes M] [--fuzz-cases C] [--json FILE] [--no-asan]
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The host compiler's driver (processes and the cache, not code generation), and the CUDA code
# generator, whose code the CPU detector never runs (ci/gpu_checks.sh is the GPU's detector).
SKIPPED_FILES = {"cpu_compiler.cpp", "cuda_codegen.cpp", "fault_injection.cpp"}
# Files whose changes do not show in the generated code or kernel IR: no equivalence filter.
UNFILTERED_FILES = {"interpreter.cpp"}
BACKENDS = ["gbc", "gbc-interp"]
FUZZ_MAX_NODES = 12

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
    """(line number, text) of lines that hold code: no comments, includes, asserts, logs or faults.

    --inject-fault's code is left out whole: a line naming InjectedFault, and the statement or
    braced block it opens (a comment naming it covers the function that follows)."""
    out = []
    in_block = False
    fault = None  # brace depth of the --inject-fault code being skipped; None outside it
    with open(path) as f:
        for i, line in enumerate(f):
            s = line.strip()
            if fault is None and "InjectedFault" in s:
                fault, opened, s = 0, False, s[s.index("InjectedFault"):]
            if fault is not None:
                fault += s.count("{") - s.count("}")
                opened = opened or fault > 0
                if (opened and fault <= 0) or (not opened and s.endswith(";") and not s.startswith("//")):
                    fault = None
                continue
            if in_block:
                in_block = "*/" not in s
                continue
            if s.startswith("/*"):
                in_block = "*/" not in s
                continue
            if not s or s.startswith("//") or s.startswith("#") or "GBC_INTERNAL_ASSERT" in s or "GBC_LOG" in s:
                continue
            if "internal_error(" in s or "template <" in s or s.startswith("static_assert"):
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
                index = 0  # the mutant's position on its line, for --ids
                for pattern, repl, kind in MUTATORS:
                    for m in re.finditer(pattern, code):
                        mutated = line[: m.start()] + repl + line[m.end():]
                        index += 1
                        found.append({"file": rel, "folder": folder, "line": lineno, "index": index, "kind": kind,
                                      "before": line.rstrip("\n"), "after": mutated.rstrip("\n")})
    return found


def run(cmd, timeout=None, env=None, cwd=ROOT):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")


def trace_code(trace_dir):
    """What gbc made of the graphs of a trace: post-pass graphs, partitions and generated sources.

    A set (the order of a run's events and its pids and clocks vary), so equal sets mean gbc
    compiled the detector's graphs the same way the unmutated tree did."""
    items = set()
    path = os.path.join(trace_dir, "trace.jsonl")
    if not os.path.exists(path):
        return items
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue  # a line cut short by a killed run
            if e.get("event") == "kernel":
                items.add("kernel " + e.get("module", "") + "\n" + e.get("source", ""))
            elif e.get("event") == "pass":
                items.add("pass %s %s %s %s" % (e.get("graph"), e.get("name"), e.get("nodes_after"), e.get("after", "")))
            elif e.get("event") == "partition":
                items.add("partition %s %s" % (e.get("graph"), json.dumps(e.get("partition"), sort_keys=True)))
    return items


def rejected_kernel(trace_dir):
    """Whether a trace holds fallback FB001: generated code the host compiler rejected, a bug the
    outputs hide (the kernels then run on ATen); gbcheck fuzz records it as an internal error."""
    path = os.path.join(trace_dir, "trace.jsonl")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return any('"FB001"' in line for line in f)


def digest(items):
    return hashlib.sha256("\x00".join(sorted(items)).encode()).hexdigest()


class Detector:
    """Corpus checks, then the fixed-seed fuzz budget; stops at the first failure (a kill)."""

    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.gbcheck = os.path.join(args.build, "bin", "gbcheck")
        self.models = sorted(os.path.join("corpus/examples", m) for m in os.listdir(os.path.join(ROOT, "corpus/examples"))
                             if m.endswith(".yaml"))
        # One kernel cache for every run: a mutant that leaves the generated code alone compiles nothing.
        self.env = dict(os.environ, GBCHECK_THREADS="1", GBCHECK_CACHE_DIR=args.cache_dir)
        self.env.pop("GBCHECK_TRACE_DIR", None)

    def settings(self):
        return {"models": self.models, "backends": BACKENDS, "fuzz_cases": self.args.fuzz_cases,
                "fuzz_seed": self.args.fuzz_seed, "max_nodes": FUZZ_MAX_NODES}

    def _trace_dir(self, tag):
        d = os.path.join(self.work, "trace-" + tag)
        if os.path.isdir(d):
            shutil.rmtree(d)
        return d

    def corpus(self, code):
        """The first corpus model that fails (None when all pass); adds what gbc made of them to code."""
        trace = self._trace_dir("corpus")
        for m in self.models:
            rc, _ = run(check_command(self.gbcheck, m) + ["--trace", trace],
                        timeout=self.args.check_timeout, env=self.env)
            if rc != 0:
                return m + (" (timeout)" if rc == 124 else " (exit %d)" % rc)
            if rejected_kernel(trace):
                return m + " (FB001: a generated kernel the host compiler rejects)"
        code |= trace_code(trace)
        return None

    def fuzz(self, code, known=None):
        """The fuzz budget's signatures; with known given, stops at the first signature outside it."""
        out = os.path.join(self.work, "fuzz")
        if os.path.isdir(out):
            shutil.rmtree(out)
        trace = self._trace_dir("fuzz")
        cmd = [self.gbcheck, "fuzz", "--out", out, "--cases", str(self.args.fuzz_cases), "--seed", str(self.args.fuzz_seed),
               "--backends", ",".join(BACKENDS), "--jobs", "1", "--reduce-checks", "0", "--quiet",
               "--max-nodes", str(FUZZ_MAX_NODES), "--trace", trace]
        p = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        db = os.path.join(out, "fuzz.db")
        deadline = time.time() + self.args.fuzz_timeout
        sigs = set()
        while True:
            done = p.poll() is not None
            if os.path.exists(db):
                try:
                    with sqlite3.connect(db, timeout=5) as c:
                        sigs = {row[0] for row in c.execute("select key from signatures")}
                except sqlite3.Error:
                    pass  # the store is being created
            if done or (known is not None and sigs - known) or time.time() > deadline:
                break
            time.sleep(1)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)  # a kill found, or the budget ran over: the workers too
            p.wait()
            if known is None or not (sigs - known):
                sigs.add("<fuzz did not finish in %d s>" % self.args.fuzz_timeout)
        code |= trace_code(trace)
        return sigs


def check_command(gbcheck, model):
    """The corpus step's check of one model: quiet, on every backend of the detector."""
    return [gbcheck, model, "-q"] + [a for b in BACKENDS for a in ("-b", b)]


def build(args, build_dir=None, timeout=1800):
    return run(["ninja", "-C", build_dir or args.build, "-j", str(args.jobs), "gbcheck"], timeout=timeout)


# The AddressSanitizer stage: memory errors inside gbc (a read past a vector's end) change no
# output, so only a sanitizer sees them.
def asan_enabled(args):
    return not args.no_asan and os.path.exists(os.path.join(args.asan_build, "build.ninja"))


def asan_build(args):
    return build(args, args.asan_build, timeout=3600)


def asan_reports(log_dir):
    """The first line of each sanitizer report written under log_dir, with the first frame in gbc's code."""
    found = []
    for name in sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []:
        with open(os.path.join(log_dir, name), errors="replace") as f:
            text = f.read()
        error = next((l.strip() for l in text.splitlines() if "ERROR: AddressSanitizer" in l), None)
        if error is None:
            continue
        frame = next((l.strip() for l in text.splitlines() if "/compiler/" in l and " in " in l), "")
        found.append(re.sub(r"==\d+==", "", error) + ("; " + frame.split(" in ", 1)[1] if frame else ""))
    return found


def asan_corpus(det, args):
    """The first corpus model whose check under the ASan build finds a memory error (None when none
    does): a sanitizer report (to files, so those of the sandbox's children count too), a failed
    libstdc++ bounds check (_GLIBCXX_ASSERTIONS: an abort, which gbcheck reports as `caught
    SIGABRT`), or any other failure: the normal build passed the same check, so what differs is
    the instrumentation's finding. A timeout is not one (ASan runs slower). No leak check
    (LibTorch's static state); handle_segv and allocator_may_return_null as in ci/test.sh --sanitize."""
    gbcheck = os.path.join(args.asan_build, "bin", "gbcheck")
    log_dir = os.path.join(det.work, "asan")
    shutil.rmtree(log_dir, ignore_errors=True)
    os.makedirs(log_dir)
    env = dict(det.env, ASAN_OPTIONS="log_path=%s/asan:detect_leaks=0:handle_abort=1:handle_segv=0:"
               "allocator_may_return_null=1" % log_dir)
    for m in det.models:
        rc, out = run(check_command(gbcheck, m), timeout=3 * args.check_timeout, env=env)
        reports = asan_reports(log_dir)
        if reports:
            return m + ": " + reports[0]
        if rc not in (0, 124):
            lines = out.splitlines()
            why = next((l for l in lines if "caught SIG" in l), "").strip()
            assertion = next((l for l in lines if "Assertion '" in l), None)
            if assertion:  # libstdc++'s: "...[with _Tp = T; ...]: Assertion '__n < this->size()' failed."
                element = re.search(r"_Tp = ([^;\]]+)", assertion)
                why = (element.group(1) + ": " if element else "") + assertion[assertion.index("Assertion '"):].strip()
            return m + " (exit %d under ASan)" % rc + (": " + why if why else "")
    return None


def asan_baseline(det, args):
    """Whether the unmutated tree's corpus runs clean under ASan (cached per ASan gbcheck binary)."""
    code, log = asan_build(args)
    if code != 0:
        print(log[-3000:])
        print("mutants: the ASan build (%s) does not build; no ASan stage" % args.asan_build)
        return False
    key = file_hash(os.path.join(args.asan_build, "bin", "gbcheck"))
    path = os.path.join(args.asan_build, "mutants-asan-baseline.json")
    if os.path.exists(path):
        with open(path) as f:
            cached = json.load(f)
        if cached.get("key") == key:
            return cached["clean"]
    start = time.time()
    report = asan_corpus(det, args)
    if report:
        print("mutants: ASan reports on the unmutated tree (%s); no ASan stage" % report)
    else:
        print(f"asan baseline: the corpus runs clean under ASan, {time.time() - start:.0f} s")
    with open(path, "w") as f:
        json.dump({"key": key, "clean": report is None, "report": report}, f, indent=1)
    return report is None


def asan_stage(args, det):
    """A kill's reason when the mutant, rebuilt with ASan, fails a corpus check there (asan_corpus)."""
    code, _ = asan_build(args)
    if code != 0:
        return None  # it compiled in the normal build; an ASan-only compile failure is no finding
    report = asan_corpus(det, args)
    return "asan: " + report if report else None


def file_hash(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def baseline(det, args):
    """The unmutated tree's corpus verdict, code and fuzz signatures; cached per gbcheck binary."""
    key = {"gbcheck": file_hash(det.gbcheck), **det.settings()}
    path = os.path.join(args.build, "mutants-baseline.json")
    if os.path.exists(path):
        with open(path) as f:
            cached = json.load(f)
        if cached.get("key") == key:
            print("baseline: cached in " + os.path.relpath(path, ROOT))
            return cached
    start = time.time()
    code = set()
    failing = det.corpus(code)
    if failing:
        print("mutants: the corpus fails without a mutant (%s); fix that first" % failing)
        return None
    sigs = det.fuzz(code)
    result = {"key": key, "code": digest(code), "signatures": sorted(sigs)}
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"baseline: {len(sigs)} fuzz signature(s) without a mutant, {time.time() - start:.0f} s")
    return result


def mutant_id(s):
    return "%s:%d:%d" % (s["file"], s["line"] + 1, s["index"])


def choose(all_sites, args):
    """--ids, or --sample N drawn evenly across the folders (so each folder's rate has a sample)."""
    if args.ids:
        by_id = {mutant_id(s): s for s in all_sites}
        missing = [i for i in args.ids if i not in by_id]
        if missing:
            sys.exit("mutants: no such mutant: " + ", ".join(missing))
        return [by_id[i] for i in args.ids]
    if args.sample == 0:
        return all_sites
    rng = random.Random(args.seed)
    chosen = []
    for k, folder in enumerate(args.folders):
        pool = [s for s in all_sites if s["folder"] == folder]
        share = args.sample // len(args.folders) + (1 if k < args.sample % len(args.folders) else 0)
        chosen += rng.sample(pool, min(share, len(pool)))
    rng.shuffle(chosen)  # an interrupted run still has some of every folder
    return chosen


def try_mutant(s, det, base, args):
    """(verdict, why) of one applied mutant."""
    code, log = build(args)
    if code != 0:
        return "stillborn", "does not compile"
    generated = set()
    failing = det.corpus(generated)
    if failing:
        return "killed", "corpus: " + failing
    new = det.fuzz(generated, set(base["signatures"])) - set(base["signatures"])
    if new:
        return "killed", "fuzz: " + sorted(new)[0]
    memory_error = asan_stage(args, det) if args.asan else None
    if memory_error:
        return "killed", memory_error
    if os.path.basename(s["file"]) not in UNFILTERED_FILES and digest(generated) == base["code"]:
        return "equivalent", "same generated code for the corpus and the fuzz budget"
    return "survived", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=20, help="mutants to try, drawn at random evenly across the folders (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sample")
    ap.add_argument("--ids", nargs="+", help="try exactly these mutants (FILE:LINE:N as a run prints them)")
    ap.add_argument("--folders", nargs="+", default=["compiler/passes", "compiler/kernel", "compiler/codegen"])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache-dir", help="the detector's kernel cache (default: BUILD/mutants-cache)")
    ap.add_argument("--fuzz-cases", type=int, default=16, help="graphs of the fixed-seed fuzz budget")
    ap.add_argument("--fuzz-seed", type=int, default=18000)
    ap.add_argument("--fuzz-timeout", type=int, default=300, help="seconds the fuzz budget may take")
    ap.add_argument("--check-timeout", type=int, default=120, help="seconds one corpus check may take")
    ap.add_argument("--minutes", type=float, help="try no new mutant after this many minutes (the rest are reported as not run)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    ap.add_argument("--asan-build", help="the AddressSanitizer build of the ASan stage (default: BUILD-asan)")
    ap.add_argument("--no-asan", action="store_true", help="skip the ASan stage")
    args = ap.parse_args()
    args.cache_dir = args.cache_dir or os.path.join(args.build, "mutants-cache")
    args.asan_build = args.asan_build or args.build.rstrip("/") + "-asan"

    all_sites = sites(args.folders)
    chosen = choose(all_sites, args)
    print(f"mutants: {len(all_sites)} sites in {', '.join(args.folders)}; trying {len(chosen)} (seed {args.seed})")
    if args.list:
        for s in chosen:
            print(f"  {mutant_id(s)} [{s['kind']}] {s['before'].strip()}  ->  {s['after'].strip()}")
        return 0

    work = tempfile.mkdtemp(prefix="gbcheck-mutants-")
    det = Detector(args, work)
    code, log = build(args)
    if code != 0:
        print(log[-3000:])
        print("mutants: the unmutated tree does not build")
        return 4
    run_start = time.time()
    base = baseline(det, args)
    if base is None:
        return 4
    args.asan = asan_enabled(args) and asan_baseline(det, args)
    print("ASan stage: " + ("on, " + os.path.relpath(args.asan_build, ROOT) if args.asan else
                            "off (configure it: cmake -S . -B build-asan -G Ninja -DGBCHECK_BUILD_TESTS=OFF "
                            "-DGBCHECK_SANITIZE=address)"))

    results = []
    for i, s in enumerate(chosen):
        if args.minutes and time.time() - run_start > 60 * args.minutes:
            print(f"mutants: {args.minutes:g} minutes are up; {len(chosen) - i} mutant(s) not run")
            break
        path = os.path.join(ROOT, s["file"])
        with open(path) as f:
            original = f.read()
        lines = original.splitlines(keepends=True)
        lines[s["line"]] = s["after"] + "\n"
        t0 = time.time()
        try:
            with open(path, "w") as f:
                f.write("".join(lines))
            verdict, why = try_mutant(s, det, base, args)
        finally:
            with open(path, "w") as f:
                f.write(original)
        s.update(id=mutant_id(s), verdict=verdict, why=why, seconds=round(time.time() - t0))
        results.append(s)
        print(f"[{i + 1}/{len(chosen)}] {verdict:10s} {s['id']} [{s['kind']}] "
              f"{s['before'].strip()} -> {s['after'].strip()}  {why} ({s['seconds']} s)", flush=True)
    build(args)  # the unmutated tree again
    if args.asan:
        asan_build(args)

    print(f"\nkill rate by folder (killed / (killed + survived)), {time.time() - run_start:.0f} s in all:")
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
        print("survivors (rerun: ci/mutants.sh --ids " + " ".join(r["id"] for r in survivors) + "):")
        for r in survivors:
            print(f"  {r['id']} [{r['kind']}] {r['before'].strip()}  ->  {r['after'].strip()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
