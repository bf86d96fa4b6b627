// The model a generator run is building, and what the generator knows about each value: its
// range (value_range.h), whether an in-place op may write it, whether it is still visible.
// Adding a node types it with the validator's own inference (a failure there is the generator's
// bug: an internal error) and keeps it only if its range is safe for its dtype and its shape
// within the configured limits. Names follow the loader's rules exactly (in-place results are
// `self.mut`, branch results `r.then`/`r.else`), so the written model.yaml reads back into the
// same graph. Internal to harness/fuzz; tested through tests/fuzz/graph_generator_test.cpp.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/fuzz/generator_config.h"
#include "harness/fuzz/value_range.h"
#include "harness/inputs/rng.h"
#include "harness/model/model.h"

namespace gbc {

/// Where the values feeding an op must lie so that it gives neither NaN nor Inf.
enum class Domain : uint8_t {
  Any,
  Small,     // |v| <= kSmall: exp, pow exponents
  Positive,  // v >= kPositive: log, sqrt, rsqrt, reciprocal, divisors, pow bases
};
constexpr double kSmall = 6.0;
constexpr double kPositive = 0.25;

struct ValueFacts {
  ValueRange range;
  bool special = false;   // NaN or Inf may reach it from a number written in args
  bool writable = false;  // a fresh tensor no view shares: in-place ops may update it
  bool visible = true;    // false once an in-place op rebinds its name, or outside its branch
  int uses = 0;
  std::string yaml_name;  // how model.yaml names it (an in-place result goes by its self's name)
};

/// What a tensor must be to feed an op, and how to make a fresh input that is.
struct Need {
  std::function<bool(DType)> dtype_ok;            // null: any dtype
  std::function<bool(const SymShape&)> shape_ok;  // null: any shape
  std::function<SymShape()> make_shape;           // a fresh input's shape (must satisfy shape_ok); null: random
  Domain domain = Domain::Any;
  bool allow_empty = false;  // values that may have no elements (nonzero's result) qualify
  bool param = false;        // a fresh tensor is a param (weights) rather than an input
};

class GraphBuilder {
 public:
  GraphBuilder(uint64_t seed, const GeneratorConfig& config);

  const GeneratorConfig& config() const { return config_; }
  const Graph& graph() const { return model_.graph; }
  const ValueType& type(ValueId v) const { return model_.graph.type(v); }
  const ValueFacts& facts(ValueId v) const { return facts_.at(static_cast<size_t>(v)); }

  // Random choices, all from the run's own generator (the same seed gives the same model).
  double uniform() { return rng_.uniform(); }  // in [0, 1)
  bool chance(double p) { return rng_.uniform() < p; }
  /// chance(rate) of a pattern (config.patterns), without a draw when the rate is 0: a config with
  /// every pattern off makes the same graphs as before the patterns existed.
  bool pattern(double rate) { return rate > 0 && chance(rate); }
  int64_t uniform_int(int64_t lo, int64_t hi) { return rng_.integer(lo, hi); }
  template <typename T>
  const T& pick_one(const std::vector<T>& items) {
    return items[static_cast<size_t>(rng_.integer(0, static_cast<int64_t>(items.size()) - 1))];
  }

  // Dtypes.
  /// A configured dtype satisfying `ok` (the main dtype half the time); nullopt if none does.
  std::optional<DType> random_dtype(const std::function<bool(DType)>& ok = nullptr);
  /// Whether inputs may have `dtype` (config.dtypes).
  bool configured(DType dtype) const;
  /// Whether eager ATen runs `op` on `dtype` on the configured device (cpu_kernels.h).
  bool kernel_exists(OpId op, DType dtype) const;
  bool custom_kernel_exists(const std::string& kernel, DType dtype) const;

  // Shapes.
  /// A constant or a declared input dim: what an input's shape or an attribute may hold.
  bool expressible(const DimExpr& d) const;
  /// What a fresh input's dim may be: expressible, and at most config.max_dim_size for every
  /// binding (a cat's or a reshape's constant result can exceed it).
  bool fits_input(const DimExpr& d) const;
  DimExpr random_dim();
  int random_rank(int lo = 0);
  SymShape random_shape(int rank);
  SymShape random_shape() { return random_shape(random_rank()); }
  /// A shape that broadcasts with `s`; with widen, it may also grow `s`'s size-1 and leading
  /// dims, otherwise the broadcast result is `s` itself.
  SymShape partner_shape(const SymShape& s, bool widen);
  int64_t min_numel(const SymShape& s) const;
  int64_t max_numel(const SymShape& s) const;
  bool always_equal(const DimExpr& a, const DimExpr& b) const;

  // Values.
  /// Visible tensors satisfying `ok`.
  std::vector<ValueId> tensors(const std::function<bool(ValueId)>& ok) const;
  /// One of tensors(ok), unused ones preferred (config.prefer_unused_rate) so that graphs have few
  /// dead ends.
  std::optional<ValueId> pick(const std::function<bool(ValueId)>& ok);
  /// Visible host scalars (item results).
  std::vector<ValueId> host_scalars() const;
  bool in_domain(ValueId v, Domain d) const;
  /// An existing tensor (tried first with probability config.reuse_rate), one brought into the
  /// domain by abs/add or clamp nodes or cast to a dtype the need takes, or a fresh input, per
  /// `need`; `reserve` nodes stay free for the caller. nullopt when none can be had.
  std::optional<ValueId> obtain(const Need& need, int reserve = 1);
  ValueId new_input(DType dtype, const SymShape& shape, Domain domain, bool param);
  ValueId new_input(DType dtype, const SymShape& shape, const ValueDist& dist, bool param);
  /// A number for args: floats are NaN or +-Inf at the configured special rate (Domain::Any only).
  Scalar number(ScalarKind kind, Domain domain);

  // Nodes.
  int node_count() const { return node_count_; }
  int nodes_left() const { return config_.max_nodes - node_count_; }
  /// Whether config.op_weights leaves `op` enabled. Helper nodes (the casts and abs/clamp of
  /// obtain, an item's reduction, a branch's steps) obey it too: a disabled op never appears.
  bool enabled(OpId op) const { return op_weight(config_, op) > 0; }
  /// Types `node` (its output named `id`, or the next fresh id) and adds it to the current block;
  /// nullopt (and nothing added) when its op is disabled or its range or size is unsafe.
  std::optional<ValueId> add_node(Node node, const std::string& id = "");
  /// A node without a value (print); false when no room is left or its op is disabled.
  bool add_effect(Node node);
  /// Adds an in-place op: its result takes over self's name, self is no longer visible.
  std::optional<ValueId> add_in_place(Node node);
  /// The next fresh id ("v7"), reserved.
  std::string fresh_id();
  /// Marks a value and the value it was made from as shared by a view (not writable in place).
  void mark_aliased(ValueId v);
  /// After an in-place op `write` on a view of `base`: base's values may now be the write's (its
  /// range and special values widen), and the write's own result is hidden, so nothing reads it.
  void written_through_view(ValueId base, ValueId write);

  // Blocks: nodes go into the innermost open block; values defined there are visible until it
  // closes.
  void open_block();
  Block close_block();
  /// Adds an `if` whose blocks were built with open_block/close_block, each ending in a value
  /// named `result`; renames the branch results as the loader does.
  std::optional<ValueId> add_if(Arg predicate, const std::string& result, Block then_block, Block else_block);

  /// The finished model: outputs are the unused node results, check: from the config.
  Model finish(uint64_t seed);

 private:
  /// config.patterns.varied_dtypes: `dtypes:` lists on the inputs (at finish).
  void vary_input_dtypes();
  ValueId add_value(const std::string& name, const ValueType& type);
  std::optional<ValueId> fix_domain(const Need& need, int reserve);
  std::optional<ValueId> cast_for(const Need& need, int reserve);
  std::optional<ValueId> constant_operand(DType dtype, const SymShape& shape, Domain domain);
  bool qualifies(ValueId v, const Need& need, bool check_domain) const;
  void commit(Node node, ValueId out, const ValueRange& range);

  GeneratorConfig config_;
  Rng rng_;
  Model model_;
  std::vector<ValueFacts> facts_;
  std::set<std::string> input_dims_;
  std::vector<Block> blocks_;                  // open blocks, the graph body first
  std::vector<std::vector<ValueId>> scopes_;   // values defined in each open block
  int node_count_ = 0;
  int next_id_ = 0;
  int next_input_ = 0;
  int next_param_ = 0;
};

}  // namespace gbc
