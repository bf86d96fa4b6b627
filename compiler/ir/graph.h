// The typed graph IR that the YAML frontend builds and everything else consumes.
//
// SSA over value ids: a Value is defined once (a graph input, a param, or a node's output) and
// referred to by its ValueId. Graph is a plain value type: copying it copies the whole program,
// which is what passes (functional style: Graph in, Graph out), the reducer and the bisector want.
//
// Semantics are ATen's (see dtype.h for promotion): broadcasting follows NumPy's rules; reductions
// over float types may be reordered by compiled paths (the fp64 oracle accounts for that); NaN
// propagates through max/min/amax/amin and comparisons with NaN are false except `ne`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "compiler/ir/dim.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/op_id.h"

namespace gbc {

/// A plain number: in `args`, an attribute, or a host scalar at run time (from `item`).
struct Scalar {
  ScalarKind kind = ScalarKind::Float;
  double f = 0.0;
  int64_t i = 0;
  bool b = false;

  static Scalar from_float(double v) { return {ScalarKind::Float, v, 0, false}; }
  static Scalar from_int(int64_t v) { return {ScalarKind::Int, 0.0, v, false}; }
  static Scalar from_bool(bool v) { return {ScalarKind::Bool, 0.0, 0, v}; }
  double to_double() const;
  int64_t to_int() const;
  bool operator==(const Scalar& o) const;
  /// As written in a model ("2.5", "-3", "true", "nan", "inf").
  std::string str() const;
};

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;

struct ValueType {
  enum class Kind : uint8_t { Unknown, Tensor, Scalar };
  Kind kind = Kind::Unknown;  // Unknown: its producer had an error; suppresses follow-on errors
  DType dtype = DType::Float32;
  SymShape shape;                          // tensors
  ScalarKind scalar_kind = ScalarKind::Float;  // scalars

  static ValueType tensor(DType dtype, SymShape shape) { return {Kind::Tensor, dtype, std::move(shape), {}}; }
  static ValueType scalar(ScalarKind kind) { return {Kind::Scalar, scalar_kind_default_dtype(kind), {}, kind}; }
  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool known() const { return kind != Kind::Unknown; }
  size_t rank() const { return shape.size(); }
  /// "float32[B, 64]", "scalar(float)", "?".
  std::string str() const;
};

/// An argument: a value (tensor or host scalar) or a number written in the model.
struct Arg {
  ValueId value = kNoValue;
  Scalar scalar;
  bool is_value() const { return value != kNoValue; }
  static Arg of(ValueId v) { Arg a; a.value = v; return a; }
  static Arg number(Scalar s) { Arg a; a.scalar = s; return a; }
};

/// An argument of a generic `aten` op that is None (an absent optional: `bias: null`).
struct NoneAttr {};

/// Attribute values. `dim` may be an int or a list; shapes may hold symbolic dims. The float list
/// and None occur only in the arguments of a generic `aten` op.
using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, SymShape, DType, Scalar,
                               std::vector<double>, NoneAttr>;
std::string attr_str(const AttrValue& value);

struct Node;

/// A list of nodes; `if` has two (then, else), each ending in `results`.
struct Block {
  std::vector<Node> nodes;
  std::vector<ValueId> results;
};

struct Node {
  OpId op = OpId::Unknown;  // op_name(op) is its name in models, explain and repro files
  std::vector<Arg> args;
  std::map<std::string, AttrValue> attrs;
  std::vector<ValueId> outputs;  // empty for nodes that produce nothing (print)
  std::vector<Block> blocks;     // `if`: then, else
  SourceLoc loc;

  ValueId output() const { return outputs.empty() ? kNoValue : outputs[0]; }
  bool has_attr(const std::string& name) const { return attrs.count(name) != 0; }
  const AttrValue* attr(const std::string& name) const;
  // Typed attribute getters with defaults for absent ones; a present attribute of another type is an
  // internal error (the frontend checked types against the schema).
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  bool attr_bool(const std::string& name, bool fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  /// `dim` as a list: an int gives one element; absent gives nullopt (meaning "all dims").
  std::optional<std::vector<int64_t>> attr_int_list(const std::string& name) const;
  std::optional<SymShape> attr_shape(const std::string& name) const;
  std::optional<DType> attr_dtype(const std::string& name) const;
  std::optional<Scalar> attr_scalar(const std::string& name) const;
};

struct ValueInfo {
  std::string name;  // the model's id, or a generated one ("softmax.max.3")
  ValueType type;
  SourceLoc loc;     // where it is defined
};

struct GraphInput {
  enum class Role : uint8_t { Input, Param };
  ValueId value = kNoValue;
  Role role = Role::Input;
};

struct Graph {
  std::string name;
  DimSpace dims;
  std::vector<ValueInfo> values;  // indexed by ValueId
  std::vector<GraphInput> inputs; // inputs then params, in the model's order
  Block body;
  std::vector<ValueId> outputs;

  ValueId add_value(std::string name, ValueType type, SourceLoc loc = {});
  const ValueInfo& value(ValueId id) const;
  ValueInfo& value(ValueId id);
  const ValueType& type(ValueId id) const { return value(id).type; }
  const std::string& name_of(ValueId id) const { return value(id).name; }
  /// A name not used by any value yet, built from `base`.
  std::string fresh_name(const std::string& base) const;
  std::optional<ValueId> find_value(const std::string& name) const;
  bool is_graph_input(ValueId id) const;
  /// Number of nodes, nested blocks included.
  size_t node_count() const;
};

/// Adds every value `node` reads to `out`: its value args, and its nested blocks' args and results.
void collect_uses(const Node& node, std::set<ValueId>& out);

/// The node that computes each value, nested blocks included (values no node computes, graph
/// inputs and block parameters, are absent).
std::map<ValueId, const Node*> value_producers(const Graph& graph);
/// v and every value it is computed from (through any chain of nodes, blocks included), each once;
/// `producers` as value_producers gives them.
std::set<ValueId> upstream_values(const std::map<ValueId, const Node*>& producers, ValueId v);

/// Calls f(node) for every node, nested blocks included, in program order.
template <typename F>
void for_each_node(const Block& block, F&& f) {
  for (const auto& n : block.nodes) {
    f(n);
    for (const auto& b : n.blocks) for_each_node(b, f);
  }
}

}  // namespace gbc
