#include "harness/bisect/node_compare.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "compiler/aten/eager_executor.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/runtime/kernel_region.h"
#include "harness/inputs/input_generator.h"

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

// Watches a region's kernels run in the interpreter and compares each one's nodes with eager's
// values; done at the first node that diverges.
class KernelWatch : public KernelObserver {
 public:
  KernelWatch(const Model& model, const ValueMap& eager, NodeComparison& out) : model_(model), eager_(eager), out_(out) {}

  void begin_kernel(const ObservedKernel& k) override {
    graph_ = &k.graph;
    nodes_ = k.nodes;
    kernel_ = &k.kernel;
    iter_ = k.iteration_sizes;
    kept_sizes_.clear();
    order_.clear();  // iteration order of full-level elements: kept dims, then reduced
    for (size_t d = 0; d < iter_.size(); ++d) {
      bool reduced = std::find(k.reduced_dims.begin(), k.reduced_dims.end(), static_cast<int>(d)) != k.reduced_dims.end();
      if (!reduced) {
        kept_sizes_.push_back(iter_[d]);
        order_.push_back(static_cast<int64_t>(d));
      }
    }
    for (int d : k.reduced_dims) order_.push_back(d);
    outer_ = product(kept_sizes_);
    numel_ = product(iter_);
    ++out_.kernels;
    const bool reduction = k.kernel.kind == kir::KernelKind::Reduction;
    FullLevel full(k.kernel);
    observed_.assign(k.kernel.node_values.size(), {});
    node_full_.assign(k.kernel.node_values.size(), true);
    if (numel_ == 0) return;
    for (size_t n = 0; n < observed_.size(); ++n) {
      node_full_[n] = !reduction || full(k.kernel.node_values[n]);
      observed_[n].assign(static_cast<size_t>(node_full_[n] ? numel_ : outer_), std::nan(""));
    }
  }

  void node_value(int node, int64_t element, double value) override {
    if (numel_ == 0) return;
    observed_[static_cast<size_t>(node)][static_cast<size_t>(element)] = value;
  }

  void end_kernel() override {
    if (numel_ == 0) return;
    const kir::Kernel& kernel = *kernel_;
    const bool reduction = kernel.kind == kir::KernelKind::Reduction;
    std::vector<int64_t> full_sizes;
    for (int64_t d : order_) full_sizes.push_back(iter_[static_cast<size_t>(d)]);
    for (size_t n = 0; n < observed_.size(); ++n) {
      const Node& node = *nodes_.at(n);
      const std::string& name = kernel.node_names[n];
      auto it = eager_.find(name);
      if (it == eager_.end()) {
        out_.skipped.push_back(name);
        continue;
      }
      at::Tensor expected = it->second;
      if (node_full_[n]) {
        expected = expected.expand(iter_);
        if (reduction) expected = expected.permute(order_);
      } else if (expected.numel() != outer_) {
        out_.skipped.push_back(name);
        continue;
      }
      expected = expected.contiguous().reshape({-1});
      ++out_.nodes_compared;
      Tolerance tol = model_.check.tolerance_for(graph_->type(node.output()).dtype, name);
      auto d = compare_values(observed_[n], expected, tol, model_.check.equal_nan, node_full_[n] ? full_sizes : kept_sizes_);
      if (!d) continue;
      d->node = name;
      d->op = op_name(node.op);
      d->loc = kernel.node_locs[n];
      d->kernel = kernel.name;
      out_.first = *d;
      return;
    }
  }

  bool done() const override { return out_.first.has_value(); }

 private:
  const Model& model_;
  const ValueMap& eager_;
  NodeComparison& out_;
  // The kernel being watched.
  const Graph* graph_ = nullptr;
  std::vector<const Node*> nodes_;
  const kir::Kernel* kernel_ = nullptr;
  std::vector<int64_t> iter_, kept_sizes_, order_;
  int64_t outer_ = 0, numel_ = 0;
  std::vector<std::vector<double>> observed_;
  std::vector<bool> node_full_;
};

// gbc-interp and gbc: the stage's own region (graph pipeline, partition, lowering, with the same
// disabled passes and injected fault), every kernel in the interpreter, watched.
void compare_kernels(const Model& model, const ValueMap& eager, const TestCase& tc, const BackendOptions& options,
                     NodeComparison& out) {
  BackendStats stats;
  CompileContext ctx{options, stats, "bisect"};
  KernelWatch watch(model, eager, out);
  KernelRegionOptions region_options;
  region_options.label = "bisect";
  region_options.observer = &watch;
  std::unique_ptr<RegionExecutable> region = make_kernel_region(model.graph, ctx, region_options);
  std::vector<at::Tensor> inputs = tc.fresh_inputs();
  std::vector<RtValue> values;
  for (const at::Tensor& t : inputs) values.push_back(RtValue::of(t));
  RunContext run;
  region->run(values, bind_dims(model.graph, inputs), run);
}

bool compare_node(const Model& model, const Graph& g, const Node& node, const std::string& name, const at::Tensor& actual,
                  const at::Tensor& expected, NodeComparison& out);

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
    if (compare_node(model, g, *node, name, actual[name], it->second, out)) return;
  }
}

// A node's whole tensor against eager's (same sizes): counted, and the first divergence kept.
bool compare_node(const Model& model, const Graph& g, const Node& node, const std::string& name, const at::Tensor& actual,
                  const at::Tensor& expected, NodeComparison& out) {
  ++out.nodes_compared;
  at::Tensor a = actual.to(at::kDouble).contiguous().reshape({-1});
  std::vector<double> values(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
  Tolerance tol = model.check.tolerance_for(g.type(node.output()).dtype, name);
  auto d = compare_values(values, expected.reshape({-1}), tol, model.check.equal_nan, expected.sizes().vec());
  if (!d) return false;
  d->node = name;
  d->op = op_name(node.op);
  d->loc = node.loc;
  out.first = *d;
  return true;
}

// Why node values cannot be compared for this model here ("" when they can).
std::string not_comparable(const Model& model, const std::string& device) {
  if (device != "cpu") return "node values are compared on the CPU only";
  if (has_blocks(model.graph)) return "node values are not compared in models with `if` blocks";
  return "";
}

}  // namespace

NodeComparison compare_shown_nodes(const Model& model, NodeValueSource& backend, const TestCase& tc, const std::string& device) {
  NodeComparison out;
  out.note = not_comparable(model, device);
  if (!out.note.empty()) return out;
  ValueMap eager = eager_values(model, tc);
  const Graph& g = model.graph;
  std::vector<std::string> names;
  std::vector<const Node*> nodes;
  for (const Node& n : g.body.nodes)
    for (ValueId v : n.outputs)
      if (eager.count(g.name_of(v))) {
        names.push_back(g.name_of(v));
        nodes.push_back(&n);
      }
  NodeValues shown = backend.node_values(names, tc.fresh_inputs());
  if (!shown.offered) {
    out.note = shown.not_offered;
    return out;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const at::Tensor& expected = eager.at(names[i]);
    const at::Tensor& actual = shown.values[i];
    if (!actual.defined() || actual.sizes() != expected.sizes()) {
      out.declined.push_back(names[i] + ": " + (actual.defined() ? "its value came with other sizes" : shown.declined[i]));
      continue;
    }
    if (compare_node(model, g, *nodes[i], names[i], actual.to(at::kCPU), expected, out)) return out;
  }
  out.note = "every node it shows agrees with eager on this case";
  return out;
}

bool ladder_shows_node_values(const std::string& backend) {
  return backend == "decomp" || backend == "gbc-interp" || backend == "gbc";
}

std::string shows_only_outputs(const std::string& backend) {
  return backend + " shows only its outputs (gbc's ladder shows node values: decomp, gbc-interp, gbc; adapters may offer them)";
}

PreparedNodeSource prepare_node_source(const Model& model, const std::string& backend, const BackendOptions& options) {
  PreparedNodeSource p;
  const BackendInfo* info = find_backend(backend);
  p.backend = info ? info->create() : nullptr;
  p.source = dynamic_cast<NodeValueSource*>(p.backend.get());
  if (p.source) p.backend->prepare(model.graph, options);
  return p;
}

NodeComparison compare_backend_nodes(const Model& model, const std::string& backend, const TestCase& tc,
                                     const BackendOptions& options) {
  if (ladder_shows_node_values(backend)) return compare_nodes(model, backend, tc, options);
  NodeComparison out;
  try {
    PreparedNodeSource p = prepare_node_source(model, backend, options);
    if (!p.source) {
      out.note = shows_only_outputs(backend);
      return out;
    }
    return compare_shown_nodes(model, *p.source, tc, options.device);
  } catch (const std::exception& e) {
    out.note = std::string("its node values could not be had: ") + e.what();
  }
  return out;
}

NodeComparison compare_nodes(const Model& model, const std::string& stage, const TestCase& tc,
                             const BackendOptions& options) {
  NodeComparison out;
  out.note = not_comparable(model, options.device);
  if (!out.note.empty()) return out;
  if (!ladder_shows_node_values(stage)) {
    out.note = stage + " runs every node on ATen as eager does; there are no compiled node values to compare";
    return out;
  }
  ValueMap eager = eager_values(model, tc);
  if (stage == "decomp") {
    compare_pipeline(model, eager, tc, options, out);
    if (!out.first) out.note = "every node of the pipeline's graph agrees with eager on this case";
    return out;
  }
  compare_kernels(model, eager, tc, options, out);
  if (!out.first) {
    out.note = stage == "gbc" ? "the kernel-IR interpreter agrees with eager on every node of every fused kernel: "
                                "the divergence is in gbc's native code for them (code generation, the C++ compiler)"
                              : "every node the interpreter computes agrees with eager on this case";
  }
  return out;
}

}  // namespace gbc
