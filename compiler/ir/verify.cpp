#include "compiler/ir/verify.h"

#include <vector>

#include "compiler/ir/op_schema.h"
#include "compiler/ir/printer.h"

namespace gbc {
namespace {

class Verifier {
 public:
  Verifier(const Graph& g, std::string after) : g_(g), after_(std::move(after)), defined_(g.values.size(), false) {}

  void run() {
    for (const auto& in : g_.inputs) define(in.value, "graph input");
    visit(g_.body);
    for (ValueId o : g_.outputs) use(o, "graph output");
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    internal_error("invalid IR" + (after_.empty() ? "" : " after pass '" + after_ + "'") + ": " + what + "\n" +
                   print_graph(g_));
  }
  void check_id(ValueId v, const std::string& where) {
    if (v < 0 || static_cast<size_t>(v) >= g_.values.size()) fail(where + " refers to value id " + std::to_string(v));
  }
  void define(ValueId v, const std::string& where) {
    check_id(v, where);
    if (defined_[static_cast<size_t>(v)]) fail("value '" + g_.name_of(v) + "' is defined twice (" + where + ")");
    defined_[static_cast<size_t>(v)] = true;
  }
  void use(ValueId v, const std::string& where) {
    check_id(v, where);
    if (!defined_[static_cast<size_t>(v)]) fail(where + " uses '" + g_.name_of(v) + "' before it is defined");
  }
  void visit(const Block& block) {
    for (const auto& n : block.nodes) {
      const OpSchema* schema = find_op_schema(n.op);
      if (!schema) fail("unknown op '" + op_name(n.op) + "'");
      for (const auto& a : n.args)
        if (a.is_value()) use(a.value, op_name(n.op));
      for (const auto& b : n.blocks) {
        visit(b);
        for (ValueId r : b.results) use(r, op_name(n.op) + " block result");
      }
      for (ValueId o : n.outputs) {
        define(o, op_name(n.op));
        if (!g_.type(o).known()) fail("output '" + g_.name_of(o) + "' of " + op_name(n.op) + " has no type");
      }
    }
  }

  const Graph& g_;
  std::string after_;
  std::vector<bool> defined_;
};

}  // namespace

void verify_graph(const Graph& graph, const std::string& after_pass) { Verifier(graph, after_pass).run(); }

}  // namespace gbc
