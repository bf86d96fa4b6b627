#include "compiler/ir/generic_op.h"

namespace gbc {
namespace {

GenericOpTyper& typer_slot() {
  static GenericOpTyper typer;
  return typer;
}

}  // namespace

bool is_generic_op(const Node& node) { return node.op == kGenericOp; }

std::string generic_op_name(const Node& node) {
  std::string schema = node.attr_string(kGenericSchemaAttr, "");
  return schema.substr(0, schema.find('('));
}

void set_generic_op_typer(GenericOpTyper typer) { typer_slot() = std::move(typer); }

const GenericOpTyper& generic_op_typer() { return typer_slot(); }

}  // namespace gbc
