#include "compiler/runtime/region_executable.h"

namespace gbc {

std::string StepDescription::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Kernel: return "kernel";
    case Kind::Extern: return "extern";
    case Kind::Library: return "library";
    case Kind::Eager: return "eager";
    case Kind::Aten: return "aten";
  }
  return "?";
}

}  // namespace gbc
