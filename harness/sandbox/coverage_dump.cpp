#include "harness/sandbox/coverage_dump.h"

#ifdef GBCHECK_COVERAGE
// libgcov's entry point. A strong reference: a weak one would not pull it out of the static
// libgcov archive, and would stay null.
extern "C" void __gcov_dump(void);
#endif

namespace gbc {

void dump_coverage() {
#ifdef GBCHECK_COVERAGE
  __gcov_dump();
#endif
}

}  // namespace gbc
