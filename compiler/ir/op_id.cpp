#include "compiler/ir/op_id.h"

#include <array>

namespace gbc {
namespace {

const std::array<std::string, kOpIdCount + 1>& names() {
  static const std::array<std::string, kOpIdCount + 1> table = {
      "?",
#define GBC_OP_ID_NAME(id, name) name,
      GBC_OP_IDS(GBC_OP_ID_NAME)
#undef GBC_OP_ID_NAME
  };
  return table;
}

}  // namespace

OpId op_id(std::string_view name) {
  const auto& table = names();
  for (size_t i = 0; i < kOpIdCount; ++i)
    if (table[i + 1] == name) return op_at_index(i);
  return OpId::Unknown;
}

const std::string& op_name(OpId id) { return names()[static_cast<size_t>(id)]; }

}  // namespace gbc
