#include "compiler/ir/printer.h"

#include "compiler/ir/generic_op.h"

namespace gbc {
namespace {

std::string arg_str(const Graph& g, const Arg& a) { return a.is_value() ? g.name_of(a.value) : a.scalar.str(); }

void print_block(const Graph& g, const Block& block, int indent, const PrintOptions& opt, std::string& out) {
  std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const auto& n : block.nodes) {
    std::string line = pad + print_node(g, n);
    if (n.blocks.size() == 2) {
      line += " {";
      if (opt.locations && n.loc.valid()) line += "  # " + n.loc.str();
      out += line + "\n" + pad + "then:\n";
      print_block(g, n.blocks[0], indent + 1, opt, out);
      out += pad + "else:\n";
      print_block(g, n.blocks[1], indent + 1, opt, out);
      out += pad + "}\n";
      continue;
    }
    if (opt.locations && n.loc.valid()) {
      if (line.size() < 56) line.resize(56, ' ');
      line += "  # " + n.loc.str();
    }
    out += line + "\n";
  }
  if (!block.results.empty() && indent > 1) {
    out += pad + "yield";
    for (size_t i = 0; i < block.results.size(); ++i) out += (i ? ", " : " ") + g.name_of(block.results[i]);
    out += "\n";
  }
}

}  // namespace

std::string print_node(const Graph& g, const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    s += (i ? ", " : "") + g.name_of(n.outputs[i]) + ": " + g.type(n.outputs[i]).str();
  if (!n.outputs.empty()) s += " = ";
  s += op_display_name(n) + "(";  // a generic op by its ATen name; its full schema is in model.yaml
  bool first = true;
  for (const auto& a : n.args) {
    s += (first ? "" : ", ") + arg_str(g, a);
    first = false;
  }
  for (const auto& [name, value] : n.attrs) {
    if (is_generic_op(n) && name == kGenericSchemaAttr) continue;
    s += (first ? "" : ", ") + name + "=" + attr_str(value);
    first = false;
  }
  return s + ")";
}

std::string print_graph(const Graph& g, const PrintOptions& opt) {
  std::string out = "graph " + (g.name.empty() ? std::string("model") : g.name) + "(";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const auto& in = g.inputs[i];
    out += (i ? ", " : "") + std::string(in.role == GraphInput::Role::Param ? "param " : "") + g.name_of(in.value) +
           ": " + g.type(in.value).str();
  }
  out += ") {\n";
  print_block(g, g.body, 1, opt, out);
  out += "  return";
  for (size_t i = 0; i < g.outputs.size(); ++i) out += (i ? ", " : " ") + g.name_of(g.outputs[i]);
  out += "\n}\n";
  return out;
}

}  // namespace gbc
