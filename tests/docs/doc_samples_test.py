#!/usr/bin/env python3
"""Runs every sample command of README.md and docs/*.md and compares the printed output with the
tool's real output, so that the samples cannot drift from the code (issue 15).

A sample is a fenced block right after a marker comment:

    <!-- sample -->                       the block holds `$ COMMAND` lines, each followed by the
                                          command's whole output
    <!-- sample: COMMAND -->              the block holds COMMAND's whole output
    <!-- sample excerpt -->               as above, but the block's lines need only appear in the
    <!-- sample excerpt: COMMAND -->      output in order (`...` marks left-out lines)

Commands run in a scratch folder holding a copy of corpus/, with an empty kernel cache;
`gbcheck` and `./gbcheck` mean the built binary. Both sides are compared modulo times (`96 ms`,
`1.2 s`, `0:00:05`) and trailing spaces; progress lines are left out.

  doc_samples_test.py SOURCE_DIR GBCHECK [--update]   (--update rewrites whole samples from the tool)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!-- sample( excerpt)?(?::\s*(.*?))?\s*-->\s*$")
TIME = re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\s?(?:ms|us|s)\b|\b\d+:\d\d:\d\d\b")
PROGRESS = re.compile(r"^(checking .*: case \d+/\d+|reduce: |fuzz: |bisect: (checking|disabling|comparing) )")


def normalize(line):
    return TIME.sub("<time>", line).rstrip()


def run(command, binary, scratch):
    shell = re.sub(r"(^|&&\s*|;\s*|\|\s*)(\./)?gbcheck(?=\s|$)", lambda m: m.group(1) + binary, command)
    env = dict(os.environ, GBCHECK_CACHE_DIR=os.path.join(scratch, ".cache"), COLUMNS="100")
    env.pop("GBCHECK_LOGS", None)
    p = subprocess.run(shell, shell=True, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    return [l for l in p.stdout.replace(scratch + "/", "").splitlines() if not PROGRESS.match(l)]


def samples(path):
    """(marker line index, excerpt, command or None, first and last line index of the block body)."""
    lines = open(path).read().split("\n")
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise SystemExit(f"{path}:{i + 1}: a sample marker must be followed by a fenced block")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        found.append((i, bool(m.group(1)), m.group(2), i + 2, end))
    return lines, found


def runs_of(body, command):
    """[(command, expected lines)] of one block."""
    if command:
        return [(command, body)]
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        else:
            raise ValueError("the block does not start with a `$ COMMAND` line and the marker names no command")
    return out


def matches_excerpt(expected, actual):
    at = 0
    for want in expected:
        if want.strip() == "...":
            continue
        while at < len(actual) and normalize(actual[at]) != normalize(want):
            at += 1
        if at == len(actual):
            return want
        at += 1
    return None


def main():
    source, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    update = "--update" in sys.argv
    docs = [os.path.join(source, "README.md")] + sorted(
        os.path.join(source, "docs", f) for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    failures, checked = [], 0
    for doc in docs:
        lines, found = samples(doc)
        rel = os.path.relpath(doc, source)
        for marker, excerpt, command, start, end in reversed(found):  # reversed: updates keep indices
            scratch = tempfile.mkdtemp(prefix="gbcheck-doc-sample-")
            try:
                shutil.copytree(os.path.join(source, "corpus"), os.path.join(scratch, "corpus"))
                new_body = []
                for cmd, expected in runs_of(lines[start:end], command):
                    checked += 1
                    actual = run(cmd, binary, scratch)
                    new_body += ([] if command else ["$ " + cmd]) + actual
                    where = f"{rel}:{marker + 1}: `{cmd}`"
                    if excerpt:
                        missing = matches_excerpt(expected, actual)
                        if missing is not None:
                            failures.append(f"{where}: the sample's line\n    {missing}\nis not in the output:\n" +
                                            "\n".join("    " + l for l in actual))
                    elif [normalize(l) for l in expected] != [normalize(l) for l in actual]:
                        failures.append(f"{where}: the sample differs from the output\n--- sample\n" +
                                        "\n".join(expected) + "\n--- output\n" + "\n".join(actual))
                if update and not excerpt:
                    lines[start:end] = new_body
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        if update:
            open(doc, "w").write("\n".join(lines))
    print(f"{checked} sample commands checked")
    for f in failures:
        print("\nFAIL " + f)
    if failures and not update:
        print(f"\n{len(failures)} samples drifted; regenerate whole samples with: python3 tests/docs/doc_samples_test.py "
              f"SOURCE_DIR build/bin/gbcheck --update (excerpts are fixed by hand)")
    return 1 if failures and not update else 0


if __name__ == "__main__":
    sys.exit(main())
