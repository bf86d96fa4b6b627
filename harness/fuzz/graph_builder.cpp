#include "harness/fuzz/graph_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/ir/infer.h"
#include "compiler/ir/printer.h"
#include "harness/fuzz/cpu_kernels.h"

namespace gbc {
namespace {

// Short names that read like shapes in reports: [B, M, 4].
const std::vector<std::string> kDimNames = {"B", "M", "N", "K"};

ValueDist make_dist(ValueDist::Kind kind, double a, double b) {
  ValueDist d;
  d.kind = kind;
  d.a = a;
  d.b = b;
  d.explicit_in_model = true;
  return d;
}

// Integers up to the dtype's limits (int64 within 2^53, where the value ranges stay exact). The
// ranges then leave room only for ops that cannot overflow: comparisons, min/max, casts, where.
ValueDist integer_extremes(DType dtype) {
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::UInt8: hi = 255; break;
    case DType::Int8: lo = -128, hi = 127; break;
    case DType::Int16: lo = -32768, hi = 32767; break;
    case DType::Int32: lo = -2147483648.0, hi = 2147483647.0; break;
    default: lo = -9007199254740992.0, hi = 9007199254740992.0; break;
  }
  return make_dist(ValueDist::Kind::Int, lo, hi);
}

}  // namespace

GraphBuilder::GraphBuilder(uint64_t seed, const GeneratorConfig& config) : config_(config), rng_(seed) {
  blocks_.emplace_back();
  scopes_.emplace_back();
  // Dims come first, as in the loader (which declares them before any node): nonzero names its
  // data-dependent dims after how many are declared.
  int count = static_cast<int>(rng_.integer(0, std::min(config_.max_symbolic_dims, config_.max_rank)));
  for (int i = 0; i < count; ++i) {
    int64_t lo = chance(0.6) ? 1 : 2;
    int64_t hi = std::min<int64_t>(config_.max_dim_size, lo + rng_.integer(1, 4));
    if (chance(0.1)) hi = lo;  // a fixed dim (`D: 2`) now and then
    model_.graph.dims.declare(kDimNames[static_cast<size_t>(i)], {lo, hi});
    input_dims_.insert(kDimNames[static_cast<size_t>(i)]);
  }
}

std::optional<DType> GraphBuilder::random_dtype(const std::function<bool(DType)>& ok) {
  std::vector<DType> options;
  for (DType d : config_.dtypes)
    if (!ok || ok(d)) options.push_back(d);
  if (options.empty()) return std::nullopt;
  if (options.front() == config_.dtypes.front() && chance(config_.main_dtype_rate)) return options.front();
  return pick_one(options);
}

bool GraphBuilder::configured(DType dtype) const {
  return std::find(config_.dtypes.begin(), config_.dtypes.end(), dtype) != config_.dtypes.end();
}

bool GraphBuilder::kernel_exists(OpId op, DType dtype) const {
  return config_.device != "cpu" || cpu_kernel_exists(op, dtype);
}

bool GraphBuilder::custom_kernel_exists(const std::string& kernel, DType dtype) const {
  return config_.device != "cpu" || cpu_custom_kernel_exists(kernel, dtype);
}

bool GraphBuilder::expressible(const DimExpr& d) const {
  return (d.is_const() && d.value() >= 0) || (d.is_symbol() && input_dims_.count(d.name()) != 0);
}

bool GraphBuilder::fits_input(const DimExpr& d) const {
  return expressible(d) && model_.graph.dims.max_of(d) <= config_.max_dim_size;
}

DimExpr GraphBuilder::random_dim() {
  if (!input_dims_.empty() && chance(config_.symbolic_dim_rate)) {
    std::vector<std::string> names(input_dims_.begin(), input_dims_.end());
    return DimExpr::symbol(pick_one(names));
  }
  if (chance(config_.size_one_rate)) return 1;
  return rng_.integer(2, config_.max_dim_size);
}

int GraphBuilder::random_rank(int lo) {
  const std::vector<double>& weights = config_.rank_weights;
  int hi = config_.max_rank;
  if (lo > hi) return hi;
  double total = 0;
  for (int r = lo; r <= hi; ++r) total += weights[static_cast<size_t>(r)];
  double u = rng_.uniform() * total;
  for (int r = lo; r <= hi; ++r) {
    u -= weights[static_cast<size_t>(r)];
    if (u < 0) return r;
  }
  return hi;
}

SymShape GraphBuilder::random_shape(int rank) {
  SymShape s;
  for (int i = 0; i < rank; ++i) s.push_back(random_dim());
  if (rank >= 2 && pattern(config_.patterns.repeated_dims)) {
    // Coinciding dims (a square, [B, B, N]): an op on the wrong axis is no longer a type error.
    size_t from = static_cast<size_t>(rng_.integer(0, rank - 1)), to = static_cast<size_t>(rng_.integer(0, rank - 2));
    if (to >= from) ++to;
    if (!(s[from].is_const() && s[from].value() == 1)) s[to] = s[from];
  }
  // Shrink the largest dims until every binding fits max_numel.
  while (max_numel(s) > config_.max_numel) {
    size_t biggest = 0;
    for (size_t i = 1; i < s.size(); ++i)
      if (model_.graph.dims.max_of(s[i]) > model_.graph.dims.max_of(s[biggest])) biggest = i;
    s[biggest] = 1;
  }
  return s;
}

SymShape GraphBuilder::partner_shape(const SymShape& s, bool widen) {
  SymShape out;
  size_t drop = chance(0.3) ? static_cast<size_t>(rng_.integer(0, static_cast<int64_t>(s.size()))) : 0;
  if (widen && drop == 0 && chance(0.15) && static_cast<int>(s.size()) < config_.max_rank) out.push_back(random_dim());
  for (size_t i = drop; i < s.size(); ++i) {
    const DimExpr& d = s[i];
    bool is_one = d.is_const() && d.value() == 1;
    if (widen && is_one && chance(0.4)) out.push_back(random_dim());
    else if (!fits_input(d) || chance(0.2)) out.push_back(1);
    else out.push_back(d);
  }
  return out;
}

int64_t GraphBuilder::min_numel(const SymShape& s) const { return model_.graph.dims.min_of(numel(s)); }
int64_t GraphBuilder::max_numel(const SymShape& s) const { return model_.graph.dims.max_of(numel(s)); }

bool GraphBuilder::always_equal(const DimExpr& a, const DimExpr& b) const {
  return model_.graph.dims.equal(a, b) == Truth::Always;
}

std::vector<ValueId> GraphBuilder::tensors(const std::function<bool(ValueId)>& ok) const {
  std::vector<ValueId> out;
  for (const auto& scope : scopes_)
    for (ValueId v : scope)
      if (facts(v).visible && type(v).is_tensor() && (!ok || ok(v))) out.push_back(v);
  return out;
}

std::optional<ValueId> GraphBuilder::pick(const std::function<bool(ValueId)>& ok) {
  std::vector<ValueId> all = tensors(ok);
  if (all.empty()) return std::nullopt;
  std::vector<ValueId> unused;
  for (ValueId v : all)
    if (facts(v).uses == 0) unused.push_back(v);
  if (!unused.empty() && chance(config_.prefer_unused_rate)) return pick_one(unused);
  return pick_one(all);
}

std::vector<ValueId> GraphBuilder::host_scalars() const {
  std::vector<ValueId> out;
  for (const auto& scope : scopes_)
    for (ValueId v : scope)
      if (facts(v).visible && type(v).is_scalar()) out.push_back(v);
  return out;
}

bool GraphBuilder::in_domain(ValueId v, Domain d) const {
  const ValueRange& r = facts(v).range;
  switch (d) {
    case Domain::Any: return true;
    case Domain::Small: return r.magnitude() <= kSmall;
    case Domain::Positive: return r.lo >= kPositive;
  }
  return false;
}

bool GraphBuilder::qualifies(ValueId v, const Need& need, bool check_domain) const {
  const ValueType& t = type(v);
  if (need.dtype_ok && !need.dtype_ok(t.dtype)) return false;
  if (need.shape_ok && !need.shape_ok(t.shape)) return false;
  if (!need.allow_empty && min_numel(t.shape) < 1) return false;
  return !check_domain || in_domain(v, need.domain);
}

std::optional<ValueId> GraphBuilder::obtain(const Need& need, int reserve) {
  if (chance(config_.reuse_rate))
    if (auto v = pick([&](ValueId x) { return qualifies(x, need, true); })) return v;
  if (need.domain != Domain::Any && chance(0.5))
    if (auto v = fix_domain(need, reserve)) return v;
  if (need.dtype_ok && chance(0.5))
    if (auto v = cast_for(need, reserve)) return v;
  auto dtype = random_dtype([&](DType d) {
    return (!need.dtype_ok || need.dtype_ok(d)) && !(need.domain == Domain::Positive && d == DType::Bool);
  });
  if (!dtype) return std::nullopt;
  SymShape shape = need.make_shape ? need.make_shape() : random_shape();
  if (need.shape_ok && !need.shape_ok(shape)) return std::nullopt;
  if (!need.param && nodes_left() >= 1 + reserve && enabled(OpId::Full) && pattern(config_.patterns.constant_operands))
    if (auto c = constant_operand(*dtype, shape, need.domain)) return c;
  return new_input(*dtype, shape, need.domain, need.param);
}

// A `full` in place of a fresh input (config.patterns.constant_operands): what its readers compute
// is a constant, which constant folding evaluates at compile time instead of the kernels.
std::optional<ValueId> GraphBuilder::constant_operand(DType dtype, const SymShape& shape, Domain domain) {
  Node full;
  full.op = OpId::Full;
  full.attrs["shape"] = shape;
  full.attrs["value"] = number(scalar_kind_of(dtype), domain);
  full.attrs["dtype"] = dtype;
  return add_node(std::move(full));
}

// Brings an existing value into the domain: abs(x) + 0.5 is positive, clamp(x, -4, 4) small.
std::optional<ValueId> GraphBuilder::fix_domain(const Need& need, int reserve) {
  int cost = need.domain == Domain::Positive ? 2 : 1;
  if (nodes_left() < cost + reserve) return std::nullopt;
  auto candidate = pick([&](ValueId v) {
    DType d = type(v).dtype;
    if (!qualifies(v, need, false) || d == DType::Bool) return false;
    return need.domain == Domain::Positive ? kernel_exists(OpId::Abs, d) : kernel_exists(OpId::Clamp, d);
  });
  if (!candidate) return std::nullopt;
  bool integral = is_integral(type(*candidate).dtype);
  if (need.domain == Domain::Small) {
    Node clamp;
    clamp.op = OpId::Clamp;
    clamp.args = {Arg::of(*candidate)};
    clamp.attrs["min"] = integral ? Scalar::from_int(-4) : Scalar::from_float(-4.0);
    clamp.attrs["max"] = integral ? Scalar::from_int(4) : Scalar::from_float(4.0);
    return add_node(std::move(clamp));
  }
  Node abs;
  abs.op = OpId::Abs;
  abs.args = {Arg::of(*candidate)};
  auto a = add_node(std::move(abs));
  if (!a) return std::nullopt;
  Node shift;
  shift.op = OpId::Add;
  shift.args = {Arg::of(*a), Arg::number(integral ? Scalar::from_int(1) : Scalar::from_float(0.5))};
  return add_node(std::move(shift));
}

// An existing value of another dtype, cast to one the need takes: keeps graphs connected.
std::optional<ValueId> GraphBuilder::cast_for(const Need& need, int reserve) {
  if (nodes_left() < 1 + reserve) return std::nullopt;
  Need any_dtype = need;
  any_dtype.dtype_ok = nullptr;
  auto candidate = pick([&](ValueId v) { return qualifies(v, any_dtype, false); });
  if (!candidate) return std::nullopt;
  DType from = type(*candidate).dtype;
  auto to = random_dtype([&](DType d) {
    // NaN or Inf cast to an integer is undefined behaviour in C++ kernels.
    bool unsafe = is_floating(from) && is_integral(d) && facts(*candidate).special;
    return need.dtype_ok(d) && d != from && !unsafe;
  });
  if (!to) return std::nullopt;
  Node cast;
  cast.op = OpId::To;
  cast.args = {Arg::of(*candidate)};
  cast.attrs["dtype"] = *to;
  auto v = add_node(std::move(cast));
  if (!v || !in_domain(*v, need.domain)) return std::nullopt;
  return v;
}

ValueId GraphBuilder::new_input(DType dtype, const SymShape& shape, Domain domain, bool param) {
  using K = ValueDist::Kind;
  ValueDist dist;
  if (dtype == DType::Bool) {
    dist = make_dist(K::Bernoulli, pick_one(std::vector<double>{0.5, 0.25, 0.75}), 0.0);
  } else if (is_floating(dtype)) {
    switch (domain) {
      case Domain::Positive:
        dist = chance(0.8) ? make_dist(K::Uniform, kPositive, 4.0) : make_dist(K::Int, 1, 4);
        break;
      case Domain::Small: dist = chance(0.7) ? make_dist(K::Normal, 0.0, 1.0) : make_dist(K::Uniform, -2.0, 2.0); break;
      case Domain::Any: {
        // Integer-valued floats make ties (argmax, comparisons); a constant now and then.
        const InputValueWeights& w = config_.input_values;
        const double u = rng_.uniform() * (w.normal + w.uniform + w.integers + w.constant);
        dist = u < w.normal                            ? make_dist(K::Normal, 0.0, 1.0)
               : u < w.normal + w.uniform              ? make_dist(K::Uniform, -2.0, 2.0)
               : u < w.normal + w.uniform + w.integers ? make_dist(K::Int, -4, 4)
                                                       : make_dist(K::Const, 1.5, 0.0);
        break;
      }
    }
  } else if (domain == Domain::Any && dtype != DType::Bool && pattern(config_.patterns.integer_extremes)) {
    dist = integer_extremes(dtype);
  } else {
    int64_t lo = domain == Domain::Positive ? 1 : domain == Domain::Small ? -3 : -8;
    int64_t hi = domain == Domain::Positive ? 6 : domain == Domain::Small ? 3 : 8;
    if (dtype == DType::UInt8) lo = std::max<int64_t>(lo, 0);
    dist = chance(0.1) && domain != Domain::Positive ? make_dist(K::Bernoulli, 0.5, 0.0)
                                                      : make_dist(K::Int, static_cast<double>(lo), static_cast<double>(hi));
  }
  return new_input(dtype, shape, dist, param);
}

ValueId GraphBuilder::new_input(DType dtype, const SymShape& shape, const ValueDist& dist, bool param) {
  for (const auto& d : shape) GBC_INTERNAL_ASSERT(fits_input(d), "generated input shape has dim " + d.str());
  std::string name = param ? "w" + std::to_string(next_param_++) : "x" + std::to_string(next_input_++);
  ValueId v = add_value(name, ValueType::tensor(dtype, shape));
  model_.graph.inputs.push_back({v, param ? GraphInput::Role::Param : GraphInput::Role::Input});
  TensorSpec spec;
  spec.name = name;
  spec.value = v;
  spec.dtype = dtype;
  spec.shape = shape;
  spec.dist = dist;
  spec.is_param = param;
  (param ? model_.params : model_.inputs).push_back(spec);
  facts_[static_cast<size_t>(v)].range = dist_range(dist, dtype);
  // Inputs are visible everywhere, also when made while a branch is being built.
  scopes_.front().push_back(v);
  return v;
}

Scalar GraphBuilder::number(ScalarKind kind, Domain domain) {
  switch (kind) {
    case ScalarKind::Bool: return Scalar::from_bool(domain == Domain::Positive || chance(0.5));
    case ScalarKind::Int: {
      if (domain == Domain::Positive) return Scalar::from_int(rng_.integer(1, 4));
      if (domain == Domain::Small) return Scalar::from_int(rng_.integer(-3, 3));
      return Scalar::from_int(rng_.integer(-3, 5));
    }
    case ScalarKind::Float: {
      if (domain == Domain::Any && chance(config_.special_values)) {
        static const std::vector<double> special = {std::numeric_limits<double>::quiet_NaN(),
                                                    std::numeric_limits<double>::infinity(),
                                                    -std::numeric_limits<double>::infinity()};
        return Scalar::from_float(pick_one(special));
      }
      if (domain == Domain::Positive) return Scalar::from_float(pick_one(std::vector<double>{0.5, 1.5, 2.0, 0.25, 3.0}));
      return Scalar::from_float(pick_one(std::vector<double>{0.5, -1.5, 2.0, 0.25, -0.75, 3.0, 1.0, 0.0, -2.0, -0.0}));
    }
  }
  return Scalar::from_int(1);
}

ValueId GraphBuilder::add_value(const std::string& name, const ValueType& type) {
  ValueId v = model_.graph.add_value(name, type);
  facts_.resize(model_.graph.values.size());
  facts_[static_cast<size_t>(v)].yaml_name = name;
  return v;
}

std::string GraphBuilder::fresh_id() { return "v" + std::to_string(next_id_++); }

std::optional<ValueId> GraphBuilder::add_node(Node node, const std::string& id) {
  if (nodes_left() <= 0 || !enabled(node.op)) return std::nullopt;
  Graph& g = model_.graph;
  size_t dims_before = g.dims.ranges().size();
  ValueId out = add_value(id.empty() ? fresh_id() : id, ValueType{});
  node.outputs = {out};
  Diagnostics diags;
  if (!infer_node_types(g, node, diags))
    internal_error("the graph generator made an invalid node: " + print_node(g, node) + "\n" + diags.str());
  const ValueType& t = g.type(out);
  auto range = node_range(g, node, [&](ValueId v) { return facts(v).range; });
  bool ok = range && range_fits(*range, t.dtype) &&
            (t.is_scalar() || (static_cast<int>(t.rank()) <= config_.max_rank && max_numel(t.shape) <= config_.max_numel));
  if (!ok) {
    // Only nonzero declares a dim, and its builder checks the limits first.
    GBC_INTERNAL_ASSERT(g.dims.ranges().size() == dims_before, "a rejected node declared a dim");
    g.values.pop_back();
    facts_.pop_back();
    return std::nullopt;
  }
  commit(std::move(node), out, *range);
  return out;
}

void GraphBuilder::commit(Node node, ValueId out, const ValueRange& range) {
  ValueFacts& f = facts_[static_cast<size_t>(out)];
  f.range = range;
  f.writable = true;
  for (const Arg& a : node.args) {
    if (a.is_value()) {
      ValueFacts& in = facts_[static_cast<size_t>(a.value)];
      ++in.uses;
      f.special = f.special || in.special;
    } else if (a.scalar.kind == ScalarKind::Float && !std::isfinite(a.scalar.f)) {
      f.special = true;
    }
  }
  if (node.op == OpId::Full) f.special = !std::isfinite(node.attr_scalar("value")->to_double());
  scopes_.back().push_back(out);
  blocks_.back().nodes.push_back(std::move(node));
  ++node_count_;
}

bool GraphBuilder::add_effect(Node node) {
  if (nodes_left() <= 0 || !enabled(node.op)) return false;
  Diagnostics diags;
  if (!infer_node_types(model_.graph, node, diags))
    internal_error("the graph generator made an invalid node: " + print_node(model_.graph, node) + "\n" + diags.str());
  for (const Arg& a : node.args)
    if (a.is_value()) ++facts_[static_cast<size_t>(a.value)].uses;
  blocks_.back().nodes.push_back(std::move(node));
  ++node_count_;
  return true;
}

std::optional<ValueId> GraphBuilder::add_in_place(Node node) {
  ValueId self = node.args[0].value;
  // The loader names the result after the name the model uses for self.
  std::string self_name = facts(self).yaml_name;
  auto out = add_node(std::move(node), model_.graph.fresh_name(self_name + ".mut"));
  if (!out) return std::nullopt;
  ValueFacts& f = facts_[static_cast<size_t>(*out)];
  f.yaml_name = self_name;
  facts_[static_cast<size_t>(self)].visible = false;
  return out;
}

void GraphBuilder::mark_aliased(ValueId v) { facts_[static_cast<size_t>(v)].writable = false; }

void GraphBuilder::written_through_view(ValueId base, ValueId write) {
  ValueFacts& b = facts_[static_cast<size_t>(base)];
  ValueFacts& w = facts_[static_cast<size_t>(write)];
  b.range = range_union(b.range, w.range);
  b.special = b.special || w.special;
  w.visible = false;
}

void GraphBuilder::open_block() {
  blocks_.emplace_back();
  scopes_.emplace_back();
}

Block GraphBuilder::close_block() {
  GBC_INTERNAL_ASSERT(blocks_.size() > 1, "close_block without open_block");
  for (ValueId v : scopes_.back()) facts_[static_cast<size_t>(v)].visible = false;
  scopes_.pop_back();
  Block b = std::move(blocks_.back());
  blocks_.pop_back();
  return b;
}

std::optional<ValueId> GraphBuilder::add_if(Arg predicate, const std::string& result, Block then_block, Block else_block) {
  Graph& g = model_.graph;
  GBC_INTERNAL_ASSERT(!then_block.nodes.empty() && !else_block.nodes.empty(), "if with an empty branch");
  GBC_INTERNAL_ASSERT(nodes_left() > 0, "no room left for the if node");
  ValueId then_v = then_block.nodes.back().output();
  ValueId else_v = else_block.nodes.back().output();
  // The loader renames each branch's result when the branch ends: result.then, result.else.
  g.value(then_v).name = g.fresh_name(result + ".then");
  g.value(else_v).name = g.fresh_name(result + ".else");
  then_block.results = {then_v};
  else_block.results = {else_v};
  Node node;
  node.op = OpId::If;
  node.args = {predicate};
  node.attrs["result"] = result;
  node.blocks = {std::move(then_block), std::move(else_block)};
  ValueId out = add_value(result, ValueType{});
  node.outputs = {out};
  Diagnostics diags;
  if (!infer_node_types(g, node, diags))
    internal_error("the graph generator made an invalid if: " + print_node(g, node) + "\n" + diags.str());
  ValueRange range = range_union(facts(then_v).range, facts(else_v).range);
  commit(std::move(node), out, range);
  ValueFacts& f = facts_[static_cast<size_t>(out)];
  f.special = facts(then_v).special || facts(else_v).special || f.special;
  f.writable = false;  // the branch result may be an alias of an outer value
  return out;
}

// config.patterns.varied_dtypes: every input of a widenable dtype takes [dtype, wider] (float64 for
// float32, float32 for the halves, int64 for int32), kept only when the whole graph type-checks
// with the wider ones (a matmul with a float32 param does not). Widening only: the value ranges
// that keep overflow away hold in the wider dtype too, and ATen has every CPU kernel for it.
void GraphBuilder::vary_input_dtypes() {
  auto wider = [](DType d) -> std::optional<DType> {
    switch (d) {
      case DType::Float32: return DType::Float64;
      case DType::Float16: case DType::BFloat16: return DType::Float32;
      case DType::Int32: return DType::Int64;
      default: return std::nullopt;
    }
  };
  bool any = false;
  for (TensorSpec& s : model_.inputs)
    if (auto w = wider(s.dtype)) {
      s.dtypes = {s.dtype, *w};
      any = true;
    }
  if (!any) return;
  Graph retyped;
  Diagnostics diags;
  if (!model_.graph_for_variant(1, retyped, diags))
    for (TensorSpec& s : model_.inputs) s.dtypes.clear();
}

Model GraphBuilder::finish(uint64_t seed) {
  GBC_INTERNAL_ASSERT(blocks_.size() == 1, "finish with an open block");
  Graph& g = model_.graph;
  g.body = std::move(blocks_.front());
  // The loader declares inputs, then params, each in file order.
  std::stable_partition(g.inputs.begin(), g.inputs.end(),
                        [](const GraphInput& in) { return in.role == GraphInput::Role::Input; });
  for (ValueId v : scopes_.front())
    if (facts(v).visible && facts(v).uses == 0 && type(v).is_tensor() && !g.is_graph_input(v)) g.outputs.push_back(v);
  if (g.outputs.empty()) {
    // Every result was consumed (or there are only prints): the last tensor computed, else an input.
    std::vector<ValueId> all = tensors([&](ValueId v) { return !g.is_graph_input(v); });
    g.outputs.push_back(all.empty() ? g.inputs.front().value : all.back());
  }
  model_.name = "gen_" + std::to_string(seed);
  g.name = model_.name;
  CheckConfig& c = model_.check;
  c.seed = seed & static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  c.cases = config_.cases;
  c.device = config_.device;
  if (!config_.backends.empty()) c.backends = config_.backends;
  c.special_values = config_.special_values;
  if (pattern(config_.patterns.varied_layouts)) c.layouts = "any";
  if (pattern(config_.patterns.varied_dtypes)) vary_input_dtypes();
  if (pattern(config_.patterns.recompile_sequence)) c.recompile_sequence = true;
  return std::move(model_);
}

}  // namespace gbc
