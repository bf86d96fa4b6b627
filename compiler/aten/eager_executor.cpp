// The eager executor: binds dims from the inputs, then runs the graph's blocks node by node with
// run_aten_node, taking the branch of each `if` that its predicate picks at run time (as Python's
// `if tensor:` does). Values live in an environment indexed by ValueId; an in-place op's output is
// the very tensor it mutated, so aliasing behaves as in PyTorch.
#include "compiler/aten/eager_executor.h"

#include <c10/util/Exception.h>

#include <stdexcept>

#include "compiler/aten/aten_convert.h"

namespace gbc {

OpError::OpError(const Node& node, const std::string& message)
    : std::runtime_error(node.loc.str() + ": " + op_name(node.op) + ": " + message),
      loc_(node.loc),
      op_(op_name(node.op)),
      message_(message) {}

DimBindings bind_dims(const Graph& graph, const std::vector<at::Tensor>& inputs) {
  if (inputs.size() != graph.inputs.size())
    throw std::invalid_argument("graph '" + graph.name + "' takes " + std::to_string(graph.inputs.size()) +
                                " tensors (inputs, then params), got " + std::to_string(inputs.size()));
  DimBindings bindings;
  std::map<std::string, std::string> bound_by;  // dim -> "x dim 0", for contradiction messages
  struct Pending {
    std::string where;
    DimExpr expr;
    int64_t size;
  };
  std::vector<Pending> compound;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = graph.name_of(graph.inputs[i].value);
    const ValueType& type = graph.type(graph.inputs[i].value);
    const at::Tensor& t = inputs[i];
    if (!t.defined()) throw std::invalid_argument("input '" + name + "' is an undefined tensor");
    if (static_cast<size_t>(t.dim()) != type.rank())
      throw std::invalid_argument("input '" + name + "' has " + std::to_string(t.dim()) + " dims, expected " +
                                  std::to_string(type.rank()) + " (" + type.str() + ")");
    for (size_t k = 0; k < type.rank(); ++k) {
      const DimExpr& e = type.shape[k];
      int64_t size = t.size(static_cast<int64_t>(k));
      std::string where = "'" + name + "' dim " + std::to_string(k);
      if (e.is_symbol()) {
        auto [it, inserted] = bindings.emplace(e.name(), size);
        if (inserted) {
          bound_by[e.name()] = where;
        } else if (it->second != size) {
          throw std::invalid_argument("dim " + e.name() + " is " + std::to_string(it->second) + " from " +
                                      bound_by[e.name()] + " but " + std::to_string(size) + " from " + where);
        }
      } else if (e.is_const()) {
        if (e.value() != size)
          throw std::invalid_argument(where + " has size " + std::to_string(size) + ", expected " + e.str());
      } else {
        compound.push_back({where, e, size});
      }
    }
  }
  // Expressions (graphs rewritten by passes may have them) are checked once every plain dim is bound.
  for (const auto& p : compound) {
    auto v = p.expr.eval(bindings);
    if (!v) throw std::invalid_argument(p.where + " has size " + p.expr.str() + ", which no input binds");
    if (*v != p.size)
      throw std::invalid_argument(p.where + " has size " + std::to_string(p.size) + ", expected " + p.expr.str() +
                                  " = " + std::to_string(*v));
  }
  return bindings;
}

namespace {

c10::Device environment_device(const std::vector<RtValue>& env) {
  for (const auto& v : env)
    if (!v.is_scalar() && v.tensor.defined()) return v.tensor.device();
  return c10::Device(c10::DeviceType::CPU);
}

const RtValue& lookup(const Graph& graph, const std::vector<RtValue>& env, ValueId id) {
  GBC_INTERNAL_ASSERT(id >= 0 && static_cast<size_t>(id) < env.size(), "value id " + std::to_string(id) + " out of range");
  const RtValue& v = env[static_cast<size_t>(id)];
  GBC_INTERNAL_ASSERT(v.is_scalar() || v.tensor.defined(), "'" + graph.name_of(id) + "' is used before it is computed");
  return v;
}

// Python's `if x:`: a host number is true when non-zero (NaN too); a tensor must have exactly one
// element (Tensor.__bool__).
bool predicate(const Node& node, const RtValue& v) {
  if (v.is_scalar()) {
    const Scalar& s = *v.scalar;
    switch (s.kind) {
      case ScalarKind::Bool: return s.b;
      case ScalarKind::Int: return s.i != 0;
      case ScalarKind::Float: return s.f != 0.0;  // NaN != 0 is true, as bool(nan) is
    }
  }
  try {
    return v.tensor.is_nonzero();
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    throw OpError(node, "condition: " + msg.substr(0, msg.find('\n')));
  }
}

void set_value(const Node& node, ValueId id, RtValue value, std::vector<RtValue>& env, const EagerOptions& options) {
  env[static_cast<size_t>(id)] = std::move(value);
  if (options.on_value) options.on_value(node, id, env[static_cast<size_t>(id)]);
}

void run_nodes(const Graph& graph, const Block& block, std::vector<RtValue>& env, DimBindings& bindings,
               const EagerOptions& options, c10::Device device) {
  for (const Node& node : block.nodes) {
    if (node.op == OpId::If) {
      GBC_INTERNAL_ASSERT(node.blocks.size() == 2 && node.args.size() == 1, "malformed if node");
      const Arg& a = node.args[0];
      bool taken = predicate(node, a.is_value() ? lookup(graph, env, a.value) : RtValue::of(a.scalar));
      const Block& branch = node.blocks[taken ? 0 : 1];
      run_nodes(graph, branch, env, bindings, options, device);
      GBC_INTERNAL_ASSERT(branch.results.size() == 1, "if branch without a result");
      if (node.output() != kNoValue) set_value(node, node.output(), lookup(graph, env, branch.results[0]), env, options);
      continue;
    }
    std::vector<RtValue> args;
    args.reserve(node.args.size());
    for (const Arg& a : node.args) args.push_back(a.is_value() ? lookup(graph, env, a.value) : RtValue::of(a.scalar));
    std::vector<RtValue> outs = run_aten_node(graph, node, args, bindings, options.print_sink, device);
    for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i)
      set_value(node, node.outputs[i], std::move(outs[i]), env, options);
  }
}

}  // namespace

void run_block(const Graph& graph, const Block& block, std::vector<RtValue>& env, DimBindings& bindings,
               const EagerOptions& options) {
  if (env.size() < graph.values.size()) env.resize(graph.values.size());
  c10::Device device = options.device ? *options.device : environment_device(env);
  run_nodes(graph, block, env, bindings, options, device);
}

std::vector<at::Tensor> run_eager(const Graph& graph, const std::vector<at::Tensor>& inputs, const EagerOptions& options) {
  DimBindings bindings = bind_dims(graph, inputs);
  std::vector<RtValue> env(graph.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(graph.inputs[i].value)] = RtValue::of(inputs[i]);
  EagerOptions resolved = options;
  if (!resolved.device) resolved.device = inputs.empty() ? c10::Device(c10::DeviceType::CPU) : inputs[0].device();
  run_block(graph, graph.body, env, bindings, resolved);
  std::vector<at::Tensor> outputs;
  outputs.reserve(graph.outputs.size());
  for (ValueId v : graph.outputs) {
    const RtValue& r = lookup(graph, env, v);
    GBC_INTERNAL_ASSERT(!r.is_scalar(), "output '" + graph.name_of(v) + "' is a host scalar");
    outputs.push_back(r.tensor);
  }
  return outputs;
}

}  // namespace gbc
