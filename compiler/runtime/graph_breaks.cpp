#include "compiler/runtime/graph_breaks.h"

#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

CompileEvent make_break(const Node& node, std::string code, std::string message, std::string hint) {
  CompileEvent e;
  e.kind = CompileEvent::Kind::GraphBreak;
  e.code = std::move(code);
  e.message = std::move(message);
  e.hint = std::move(hint);
  e.loc = node.loc;
  e.op = op_name(node.op);
  return e;
}

std::string describe_predicate(const Graph& graph, const Arg& arg) {
  if (!arg.is_value()) return "the constant " + arg.scalar.str();
  if (graph.type(arg.value).is_scalar()) return "the host number '" + graph.name_of(arg.value) + "'";
  return "the value of tensor '" + graph.name_of(arg.value) + "'";
}

}  // namespace

bool is_deferred_print(const Node& node, const CaptureOptions& options) {
  return options.reorderable_logging && node.op == OpId::Print;
}

std::optional<CompileEvent> graph_break(const Graph& graph, const Node& node, const CaptureOptions& options,
                                        const std::string& if_refusal) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "capture: no schema for op '" + op_name(node.op) + "'");
  switch (schema->cls) {
    case OpClass::Effect:
      if (is_deferred_print(node, options)) return std::nullopt;
      return make_break(node, "GB001", "print has a side effect: it must run while the values exist, outside a compiled graph",
                        "set check.reorderable_logging: true to print after the graph instead, or remove the print");
    case OpClass::HostScalar:
      if (options.capture_scalar_outputs) return std::nullopt;
      return make_break(node, "GB002", "item copies a tensor value to the host as a number the compiled graph cannot hold",
                        "set check.capture_scalar_outputs: true to keep item inside the graph, or keep the value a "
                        "0-d tensor and use it as a tensor argument");
    case OpClass::Control: {
      std::string message = "data-dependent if: the branch taken depends on " +
                            describe_predicate(graph, node.args.at(0));
      if (!if_refusal.empty()) message += "; rewrite_if cannot apply: " + if_refusal;
      return make_break(node, "GB003", message,
                        if_refusal.empty()
                            ? "set check.rewrite_if: true to compute both branches and select with where "
                              "(branches must be free of side effects), or write the where yourself"
                            : "make both branches free of side effects (no print, item, in-place ops, random ops), "
                              "or select with where yourself");
    }
    case OpClass::DataDependent:
      return make_break(node, "GB004", "nonzero: the size of its output depends on the data",
                        "keep shapes fixed: use a mask (ne) with where or mul instead of indices");
    case OpClass::Custom:
      if (node.attr_string("meta", "none") == "same_as_input") return std::nullopt;
      return make_break(node, "GB005",
                        "custom kernel '" + node.attr_string("name", "") +
                            "' has no meta: the compiler cannot know its output type",
                        "give the node `meta: same_as_input` (a fake implementation, as torch.library.register_fake "
                        "provides for a custom op)");
    default: return std::nullopt;
  }
}

CompileEvent input_mutation_break(const Graph& graph, const Node& node, ValueId target, bool graph_input) {
  const std::string name = graph.name_of(target);
  const std::string out_of_place = op_name(node.op).substr(0, op_name(node.op).size() - 1);  // add_ -> add
  if (node.op == OpId::CopyInPlace)
    return make_break(node, "GB006", "copy_ overwrites " + std::string(graph_input ? "graph input '" : "'") + name +
                                         "'" + (graph_input ? "" : ", which an earlier graph computed (an input of this graph)"),
                      "return the copied value as an output instead");
  if (graph_input)
    return make_break(node, "GB006", op_name(node.op) + " mutates graph input '" + name + "' in place",
                      "use " + out_of_place + " (out of place) and return the result as an output");
  return make_break(node, "GB006",
                    op_name(node.op) + " mutates '" + name + "' in place, which an earlier graph computed (an input of this graph)",
                    "use " + out_of_place + " (out of place), or remove the graph break before it");
}

}  // namespace gbc
