#include "harness/bisect/node_compare.h"

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <map>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/kernel/fault_injection.h"
#include "compiler/kernel/interpreter.h"
#include "compiler/kernel/specialize.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/kernel_plan.h"

namespace gbc {
namespace {

using ValueMap = std::map<std::string, at::Tensor>;

bool has_blocks(const Graph& g) {
  for (const Node& n : g.body.nodes)
    if (!n.blocks.empty()) return true;
  return false;
}

// Eager's value of every node, by the model's ids.
ValueMap eager_values(const Model& model, const TestCase& tc) {
  ValueMap values;
  EagerOptions eo;
  eo.on_value = [&](const Node&, ValueId v, const RtValue& r) {
    if (!r.is_scalar() && r.tensor.defined()) values[model.graph.name_of(v)] = r.tensor.detach().clone();
  };
  run_eager(model.graph, tc.fresh_inputs(), eo);
  return values;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = sizes[d] ? linear % sizes[d] : 0;
    linear = sizes[d] ? linear / sizes[d] : 0;
  }
  return index;
}

// Compares actual with expected element by element; fills the divergence (if any) and returns it.
std::optional<NodeDivergence> compare_values(const std::vector<double>& actual, const at::Tensor& expected_flat,
                                             const Tolerance& tol, bool equal_nan,
                                             const std::vector<int64_t>& iteration_sizes) {
  at::Tensor e = expected_flat.to(at::kDouble).contiguous();
  const double* exp = e.data_ptr<double>();
  NodeDivergence d;
  d.elements = static_cast<int64_t>(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], x = exp[i];
    bool same;
    if (std::isnan(a) || std::isnan(x)) same = equal_nan && std::isnan(a) && std::isnan(x);
    else if (std::isinf(a) || std::isinf(x)) same = a == x;
    else same = std::abs(a - x) <= tol.atol + tol.rtol * std::abs(x);
    if (same) continue;
    if (d.mismatches++ == 0) {
      d.index = unravel(static_cast<int64_t>(i), iteration_sizes);
      d.expected = x;
      d.actual = a;
    }
  }
  if (d.mismatches == 0) return std::nullopt;
  return d;
}

// Whether a kernel expression varies with r: the interpreter's rule for where it observes a node.
class FullLevel {
 public:
  explicit FullLevel(const kir::Kernel& k) : k_(k) {}
  bool operator()(const kir::ExprPtr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    bool r = e->kind == kir::ExprKind::Load && k_.buffers.at(static_cast<size_t>(e->i)).level == kir::Level::Full;
    for (const auto& a : e->args) r = (*this)(a) || r;
    return memo_[e.get()] = r;
  }

 private:
  const kir::Kernel& k_;
  std::map<const kir::Expr*, bool> memo_;
};

class KernelWalk {
 public:
  KernelWalk(const Model& model, const ValueMap& eager, NodeComparison& out) : model_(model), eager_(eager), out_(out) {}

  void run(const TestCase& tc, const PlanOptions& popt) {
    plan_ = plan_kernels(model_.graph, popt);
    const Graph& g = plan_.graph;
    std::vector<at::Tensor> inputs = tc.fresh_inputs();
    env_.assign(g.values.size(), RtValue{});
    for (size_t i = 0; i < inputs.size(); ++i) env_[static_cast<size_t>(g.inputs[i].value)] = RtValue::of(inputs[i]);
    dims_ = bind_dims(g, inputs);
    for (const Step& step : plan_.partition.steps) {
      if (step.kind == Step::Kind::Kernel) {
        if (run_kernel(step.index)) return;
      } else {
        run_node_on_aten(g, g.body.nodes[step.index], env_, dims_, nullptr, c10::Device(c10::DeviceType::CPU));
      }
    }
  }

 private:
  // Runs kernel k in the interpreter and compares its nodes; true once a node diverged.
  bool run_kernel(size_t k) {
    const Graph& g = plan_.graph;
    const LoweredKernel& lk = plan_.kernels[k];
    const FusionGroup& group = plan_.partition.groups[k];
    std::vector<int64_t> iter = iteration_sizes(lk, dims_);
    std::vector<BufferBinding> buffers;
    for (size_t b = 0; b < lk.kernel.buffers.size(); ++b) {
      RtValue& slot = env_[static_cast<size_t>(lk.buffer_values[b])];
      if (lk.kernel.buffers[b].is_output) {
        auto sizes = concrete_shape(g.type(lk.buffer_values[b]).shape, dims_);
        slot = RtValue::of(at::empty(sizes, at::TensorOptions().dtype(to_aten(lk.kernel.buffers[b].dtype))));
      }
      const at::Tensor& t = slot.tensor;
      buffers.push_back({t.data_ptr(), t.sizes().vec(), t.strides().vec()});
    }
    std::vector<double> scalars;
    for (ValueId v : lk.scalar_values) scalars.push_back(env_[static_cast<size_t>(v)].scalar->to_double());

    std::vector<int64_t> kept_sizes, reduced_sizes;
    std::vector<int64_t> order;  // iteration order of full-level elements: kept dims, then reduced
    for (size_t d = 0; d < iter.size(); ++d) {
      bool reduced = std::find(lk.reduced_dims.begin(), lk.reduced_dims.end(), static_cast<int>(d)) != lk.reduced_dims.end();
      if (!reduced) {
        kept_sizes.push_back(iter[d]);
        order.push_back(static_cast<int64_t>(d));
      }
    }
    for (int d : lk.reduced_dims) {
      reduced_sizes.push_back(iter[static_cast<size_t>(d)]);
      order.push_back(d);
    }
    const int64_t outer = product(kept_sizes), numel = product(iter);
    ++out_.kernels;
    if (numel == 0) return false;

    Launch launch = prepare_launch(lk, buffers, iter, scalars, 1);
    kir::Kernel kernel = specialized_kernel(lk.kernel, launch.spec);
    const bool reduction = kernel.kind == kir::KernelKind::Reduction;
    FullLevel full(kernel);
    std::vector<std::vector<double>> observed(kernel.node_values.size());
    std::vector<bool> node_full(kernel.node_values.size(), true);
    for (size_t n = 0; n < observed.size(); ++n) {
      node_full[n] = !reduction || full(kernel.node_values[n]);
      observed[n].assign(static_cast<size_t>(node_full[n] ? numel : outer), std::nan(""));
    }
    InterpretOptions io;
    io.observer = [&](int node, int64_t element, double value) {
      observed[static_cast<size_t>(node)][static_cast<size_t>(element)] = value;
    };
    interpret_kernel(kernel, *launch.args.get(), io);

    std::vector<int64_t> full_sizes;
    for (int64_t d : order) full_sizes.push_back(iter[static_cast<size_t>(d)]);
    for (size_t n = 0; n < observed.size(); ++n) {
      const Node& node = g.body.nodes.at(group.nodes.at(n));
      const std::string& name = kernel.node_names[n];
      auto it = eager_.find(name);
      if (it == eager_.end()) {
        out_.skipped.push_back(name);
        continue;
      }
      at::Tensor expected = it->second;
      if (node_full[n]) {
        expected = expected.expand(iter);
        if (reduction) expected = expected.permute(order);
      } else if (expected.numel() != outer) {
        out_.skipped.push_back(name);
        continue;
      }
      expected = expected.contiguous().reshape({-1});
      ++out_.nodes_compared;
      Tolerance tol = model_.check.tolerance_for(g.type(node.output()).dtype, name);
      auto d = compare_values(observed[n], expected, tol, model_.check.equal_nan, node_full[n] ? full_sizes : kept_sizes);
      if (!d) continue;
      d->node = name;
      d->op = node.op;
      d->loc = kernel.node_locs[n];
      d->kernel = kernel.name;
      out_.first = *d;
      return true;
    }
    return false;
  }

  const Model& model_;
  const ValueMap& eager_;
  NodeComparison& out_;
  KernelPlan plan_;
  std::vector<RtValue> env_;
  DimBindings dims_;
};

// decomp: the pipeline's graph op by op on ATen, compared node by node.
void compare_pipeline(const Model& model, const ValueMap& eager, const TestCase& tc, const BackendOptions& options,
                      NodeComparison& out) {
  PassRunOptions popt;
  popt.disabled.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  Graph g = run_graph_pipeline(model.graph, popt);
  ValueMap actual;
  std::vector<std::pair<std::string, const Node*>> order;
  EagerOptions eo;
  eo.on_value = [&](const Node& n, ValueId v, const RtValue& r) {
    if (r.is_scalar() || !r.tensor.defined()) return;
    actual[g.name_of(v)] = r.tensor.detach().clone();
    order.push_back({g.name_of(v), &n});
  };
  run_eager(g, tc.fresh_inputs(), eo);
  for (const auto& [name, node] : order) {
    auto it = eager.find(name);
    if (it == eager.end() || it->second.sizes() != actual[name].sizes()) {
      out.skipped.push_back(name);
      continue;
    }
    ++out.nodes_compared;
    at::Tensor a = actual[name].to(at::kDouble).contiguous().reshape({-1});
    std::vector<double> values(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
    Tolerance tol = model.check.tolerance_for(g.type(node->output()).dtype, name);
    auto d = compare_values(values, it->second.reshape({-1}), tol, model.check.equal_nan, it->second.sizes().vec());
    if (!d) continue;
    d->node = name;
    d->op = node->op;
    d->loc = node->loc;
    out.first = *d;
    return;
  }
}

}  // namespace

NodeComparison compare_nodes(const Model& model, const std::string& stage, const TestCase& tc,
                             const BackendOptions& options) {
  NodeComparison out;
  if (options.device != "cpu") {
    out.note = "node values are compared on the CPU only";
    return out;
  }
  if (has_blocks(model.graph)) {
    out.note = "node values are not compared in models with `if` blocks";
    return out;
  }
  if (stage != "decomp" && stage != "gbc-interp" && stage != "gbc") {
    out.note = stage + " runs every node on ATen as eager does; there are no compiled node values to compare";
    return out;
  }
  ValueMap eager = eager_values(model, tc);
  if (stage == "decomp") {
    compare_pipeline(model, eager, tc, options, out);
    if (!out.first) out.note = "every node of the pipeline's graph agrees with eager on this case";
    return out;
  }
  PlanOptions popt;
  popt.disabled_passes = options.disabled_passes;
  popt.capture_scalar_outputs = options.capture_scalar_outputs;
  std::optional<InjectedFault> fault = parse_fault(options.inject_fault);
  GBC_INTERNAL_ASSERT(fault.has_value(), "bisect: unknown fault '" + options.inject_fault + "'");
  popt.fault = *fault;
  KernelWalk(model, eager, out).run(tc, popt);
  if (!out.first) {
    out.note = stage == "gbc" ? "the kernel-IR interpreter agrees with eager on every node of every fused kernel: "
                                "the divergence is in gbc's native code for them (code generation, the C++ compiler)"
                              : "every node the interpreter computes agrees with eager on this case";
  }
  return out;
}

}  // namespace gbc
