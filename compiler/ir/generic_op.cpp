#include "compiler/ir/generic_op.h"

namespace gbc {
namespace {

GenericOpTyper& typer_slot() {
  static GenericOpTyper typer;
  return typer;
}

GenericOpEffectsReader& effects_slot() {
  static GenericOpEffectsReader reader;
  return reader;
}

}  // namespace

bool is_generic_op(const Node& node) { return node.op == OpId::Generic; }

std::string generic_op_name(const Node& node) {
  std::string schema = node.attr_string(kGenericSchemaAttr, "");
  return schema.substr(0, schema.find('('));
}

std::string op_display_name(const Node& node) { return is_generic_op(node) ? generic_op_name(node) : op_name(node.op); }

GenericOpEffects generic_op_effects(const Node& node) {
  if (effects_slot()) return effects_slot()(node);
  const std::string schema = node.attr_string(kGenericSchemaAttr, "");
  const size_t arrow = schema.find("->");
  GenericOpEffects e;
  e.mutates = schema.find("!)") != std::string::npos;
  e.random = schema.find("Generator") != std::string::npos;
  e.returns_alias = arrow != std::string::npos && schema.find("(a", arrow) != std::string::npos;
  return e;
}

void set_generic_op_effects_reader(GenericOpEffectsReader reader) { effects_slot() = std::move(reader); }

void set_generic_op_typer(GenericOpTyper typer) { typer_slot() = std::move(typer); }

const GenericOpTyper& generic_op_typer() { return typer_slot(); }

}  // namespace gbc
