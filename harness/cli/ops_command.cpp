// `gbcheck ops [--markdown | --json]`: the ops of the model format, rendered from the one schema
// table (compiler/ir/op_schema.cpp). docs/model-format.md embeds the markdown output, and
// tests/cli/ops_command_test.cpp keeps the two identical; tests/cli/new_user_test.cpp reads the JSON.
#include <nlohmann/json.hpp>

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

std::string render_ops_json() {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& s : all_op_schemas()) {
    nlohmann::json attrs = nlohmann::json::array();
    for (const auto& a : s.attrs)
      attrs.push_back({{"name", a.name},
                       {"type", std::string(attr_type_name(a.type))},
                       {"required", a.required},
                       {"default", a.default_value ? nlohmann::json(attr_str(*a.default_value)) : nlohmann::json(nullptr)},
                       {"choices", a.choices},
                       {"doc", a.doc}});
    ops.push_back({{"name", s.name},
                   {"min_args", s.min_args},
                   {"max_args", s.max_args < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.max_args)},
                   {"numbers_allowed", s.arg_kind == ArgKind::TensorOrNumber},
                   {"produces_value", s.produces_value},
                   {"signature", s.signature},
                   {"doc", s.doc},
                   {"attrs", attrs}});
  }
  nlohmann::json custom = nlohmann::json::array();
  for (const auto& k : custom_kernels()) custom.push_back({{"name", k.name}, {"args", k.num_args}, {"doc", k.doc}});
  nlohmann::json j = {{"schema", "gbcheck.ops/v1"}, {"ops", ops}, {"custom_kernels", custom}};
  return j.dump(2) + "\n";
}

}  // namespace

std::function<int()> add_ops_command(CLI::App& sub) {
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--markdown", *markdown, "print a markdown table (as in docs/model-format.md)");
  sub.add_flag("--json", *json, "print the ops as JSON (schema gbcheck.ops/v1, docs/json-report.md)")->excludes("--markdown");
  return [markdown, json] {
    std::cout << (*json ? render_ops_json() : render_ops_table(*markdown));
    return 0;
  };
}

}  // namespace gbc
