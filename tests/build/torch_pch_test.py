#!/usr/bin/env python3
"""Tests cmake/torch_pch.cmake on a configured and built tree: every source that includes a LibTorch
header compiles with a precompiled header, and GCC accepts that header with each distinct set of
flags its consumers use (GCC silently parses the headers again when it refuses one, e.g. for other
-fpic/-fpie settings; the build is then minutes slower and nothing else says so).
    torch_pch_test.py SOURCE_DIR BINARY_DIR CXX_COMPILER CXX_COMPILER_ID
Exit 0 pass, 1 fail, 77 skipped (not GCC)."""
import json
import os
import re
import shlex
import subprocess
import sys

from compile_commands import project_sources

TORCH_INCLUDE = re.compile(r"^\s*#\s*include\s*<(ATen|c10|torch)/", re.M)


def compiler_args(entry, compiler):
    """The entry's command from the compiler on (without the ccache launcher)."""
    args = shlex.split(entry["command"])
    real = os.path.realpath(compiler)
    for i, arg in enumerate(args):
        if os.path.realpath(arg) == real:
            return args[i:]
    raise ValueError("compiler %s not in: %s" % (compiler, entry["command"]))


def flags_only(args, source):
    """The flags that decide whether a precompiled header is valid: no output, input or depfile."""
    flags, skip = [], False
    for arg in args[1:]:
        if skip:
            skip = False
        elif arg in ("-o", "-MT", "-MF", "-MQ"):
            skip = True
        elif arg in ("-c", "-MD", "-MMD") or arg == source:
            pass
        else:
            flags.append(arg)
    return flags


def main():
    source_dir, binary_dir, compiler, compiler_id = sys.argv[1:5]
    source_dir, binary_dir = os.path.realpath(source_dir), os.path.realpath(binary_dir)
    if compiler_id != "GNU":
        print("torch_pch_test: skipped, the check reads GCC's -H output (compiler: %s)" % compiler_id)
        return 77
    with open(os.path.join(binary_dir, "compile_commands.json")) as f:
        entries = json.load(f)

    failures, groups = [], {}
    for entry in entries:
        source = entry["file"]
        args = compiler_args(entry, compiler)
        pch = next((args[i + 1] for i, a in enumerate(args[:-1])
                    if a == "-include" and args[i + 1].endswith("cmake_pch.hxx")), None)
        compiled = project_sources(entry, source_dir, binary_dir)
        for path in compiled if pch is None else []:
            with open(path) as f:
                if TORCH_INCLUDE.search(f.read()):
                    failures.append("%s includes LibTorch but compiles without the precompiled header (the sources "
                                    "are sorted when CMake configures: re-run cmake)"
                                    % os.path.relpath(path, source_dir))
        if pch is not None and compiled:
            groups.setdefault(tuple(flags_only(args, source)), (pch, compiled[0]))

    if not groups:
        failures.append("no source compiles with a precompiled header")
    for flags, (pch, example) in groups.items():
        # An empty source with the consumer's flags: -H prints "! FILE.gch" for a precompiled header
        # GCC uses and "x FILE.gch" for one it refuses.
        run = subprocess.run([compiler, *flags, "-fsyntax-only", "-H", "-x", "c++", os.devnull],
                             cwd=binary_dir, capture_output=True, text=True)
        if run.returncode != 0 or ("! %s.gch" % pch) not in run.stderr.splitlines():
            refused = [l for l in run.stderr.splitlines() if "gch" in l][:3]
            failures.append("the flags of %s do not take %s.gch: %s"
                            % (os.path.relpath(example, source_dir), pch, " | ".join(refused)))
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("torch_pch_test: %d flag sets, each takes its precompiled header" % len(groups))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
