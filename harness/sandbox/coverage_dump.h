// Child processes (the sandbox's, the fuzz workers) leave through _exit, which skips the atexit
// handler that writes gcov's counters: under ci/coverage.sh's --coverage build, whatever they ran
// would count as never run. dump_coverage() writes the counters first; in a build without
// -DGBCHECK_COVERAGE=ON it does nothing. Checked by ci/coverage.sh (gbc runs only in such children).
#pragma once

namespace gbc {

/// Writes gcov's counters of this process when it was built with --coverage; else a no-op.
void dump_coverage();

}  // namespace gbc
