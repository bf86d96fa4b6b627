// `gbcheck ops [--markdown]`: the ops of the model format, rendered from the one schema table
// (compiler/ir/op_schema.cpp). docs/model-format.md embeds the markdown output, and
// tests/cli/ops_command_test.cpp keeps the two identical.
#include <iostream>

#include "compiler/ir/custom_ops.h"
#include "compiler/ir/op_schema.h"
#include "harness/cli/cli.h"

namespace gbc {
namespace {

std::string render_ops_table(bool markdown) {
  std::string out;
  if (markdown) out += "| op | args | attributes (default) | what it does |\n|---|---|---|---|\n";
  for (const auto& s : all_op_schemas()) {
    std::string args = s.max_args < 0 ? std::to_string(s.min_args) + "+"
                       : s.min_args == s.max_args ? std::to_string(s.min_args)
                                                  : std::to_string(s.min_args) + "-" + std::to_string(s.max_args);
    if (s.arg_kind == ArgKind::TensorOrNumber) args += " (numbers allowed)";
    std::string attrs;
    for (const auto& a : s.attrs) {
      attrs += (attrs.empty() ? "" : ", ") + a.name;
      if (a.required) attrs += " (required)";
      else if (a.default_value) attrs += " (" + attr_str(*a.default_value) + ")";
      if (!a.choices.empty()) {
        std::string c;
        for (const auto& x : a.choices) c += (c.empty() ? "" : "|") + x;
        attrs += " {" + c + "}";
      }
    }
    if (markdown) {
      out += "| `" + s.name + "` | " + args + " | " + (attrs.empty() ? "-" : attrs) + " | " + s.doc + " |\n";
    } else {
      out += s.signature + "\n    " + s.doc + "\n";
    }
  }
  if (markdown) {
    out += "\nCustom kernels (`op: custom, name: ...`):\n\n| name | args | computes |\n|---|---|---|\n";
    for (const auto& k : custom_kernels())
      out += "| `" + k.name + "` | " + std::to_string(k.num_args) + " | " + k.doc + " |\n";
  }
  return out;
}

}  // namespace

std::function<int()> add_ops_command(CLI::App& sub) {
  auto markdown = std::make_shared<bool>(false);
  sub.add_flag("--markdown", *markdown, "print a markdown table (as in docs/model-format.md)");
  return [markdown] {
    std::cout << render_ops_table(*markdown);
    return 0;
  };
}

}  // namespace gbc
