#include "harness/sandbox/coverage_dump.h"

// libgcov's entry point, present only when the program was linked with --coverage.
extern "C" void __gcov_dump(void) __attribute__((weak));

namespace gbc {

void dump_coverage() {
  if (__gcov_dump) __gcov_dump();
}

}  // namespace gbc
