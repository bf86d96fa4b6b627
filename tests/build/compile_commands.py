"""What an entry of compile_commands.json compiles, for the tests of the build's flags
(torch_pch_test.py, optimization_levels_test.py): the project sources themselves, or for a CMake
unity source (tests/CMakeLists.txt, GBCHECK_UNITY_TESTS; cmake/unity_libraries.cmake) the project
sources it includes."""
import os
import re

UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"$', re.M)


def project_sources(entry, source_dir, binary_dir):
    """The project sources (absolute paths) that ENTRY compiles; none for other generated files."""
    source = os.path.realpath(entry["file"])
    if source.startswith(binary_dir + os.sep):
        if os.sep + "Unity" + os.sep not in source:
            return []
        with open(source) as f:
            # CMake's unity sources name their sources by absolute path, the libraries' ones
            # (cmake/unity_libraries.cmake) relative to the project root.
            return [os.path.realpath(os.path.join(source_dir, path)) for path in UNITY_INCLUDE.findall(f.read())]
    return [source] if source.startswith(source_dir + os.sep) else []
