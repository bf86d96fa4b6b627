#!/usr/bin/env python3
"""Tests cmake/optimization_levels.cmake on a configured tree: in a build that is not Debug, every
project source under a hot folder (GBCHECK_HOT_FOLDERS) compiles at the build type's level and
every other project source at GBCHECK_COLD_OPTIMIZATION, the last -O flag of its command deciding.
    optimization_levels_test.py SOURCE_DIR BINARY_DIR
Exit 0 pass, 1 fail, 77 skipped (a Debug build)."""
import json
import os
import re
import shlex
import sys

from compile_commands import project_sources


def cmake_set(text, name):
    """The words of `set(NAME ...)` in cmake/optimization_levels.cmake."""
    match = re.search(r"set\(%s\s+([^)]*)\)" % name, text)
    if not match:
        raise ValueError("no set(%s ...) in cmake/optimization_levels.cmake" % name)
    return match.group(1).split()


def last_optimization(command):
    levels = [arg for arg in shlex.split(command) if re.fullmatch(r"-O[0-3sgz]?|-Ofast", arg)]
    return levels[-1] if levels else "-O0"


def main():
    source_dir, binary_dir = (os.path.realpath(arg) for arg in sys.argv[1:3])
    with open(os.path.join(binary_dir, "CMakeCache.txt")) as cache:
        build_type = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache.read(), re.M).group(1)
    if build_type == "Debug":
        print("skipped: a Debug build keeps -O0 everywhere")
        return 77
    with open(os.path.join(source_dir, "cmake", "optimization_levels.cmake")) as f:
        text = f.read()
    hot = [os.path.join(source_dir, folder) + os.sep for folder in cmake_set(text, "GBCHECK_HOT_FOLDERS")]
    cold_level = cmake_set(text, "GBCHECK_COLD_OPTIMIZATION")[0]
    with open(os.path.join(binary_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    problems, counts = [], {"hot": 0, "cold": 0}
    for entry in entries:
        level = last_optimization(entry["command"])
        for source in project_sources(entry, source_dir, binary_dir):
            is_hot = any(source.startswith(folder) for folder in hot)
            counts["hot" if is_hot else "cold"] += 1
            if is_hot and level == cold_level:
                problems.append("%s: hot code compiled at %s" % (os.path.relpath(source, source_dir), level))
            if not is_hot and level != cold_level:
                problems.append("%s: cold code compiled at %s, not %s"
                                % (os.path.relpath(source, source_dir), level, cold_level))
    if not counts["hot"] or not counts["cold"]:
        problems.append("expected sources of both kinds, found %s" % counts)
    for problem in problems:
        print(problem)
    print("%d hot and %d cold sources checked, %d problems" % (counts["hot"], counts["cold"], len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
