// The ops of model format v1: their arity, attributes (names follow the ATen signature) and class.
// One table (op_schema.cpp) is the single source the frontend validates against, the docs list,
// and the fuzzer draws from. Each op's semantics live in compiler/aten (eager) and compiler/kernel
// (fused); its result type in infer.cpp. Each op's typed identity is in op_id.h, in this table's order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_id.h"

namespace gbc {

enum class OpClass : uint8_t {
  Unary,          // elementwise, one tensor
  Binary,         // elementwise, two operands (tensors or numbers), broadcasting
  Where,          // where(condition, self, other)
  Clamp,          // clamp(self, min, max)
  Cast,           // to(dtype)
  Reduction,      // sum mean amax amin prod var logsumexp argmax
  Normalization,  // softmax log_softmax layer_norm batch_norm
  Extern,         // matmul linear bmm conv2d, the pools, addmm baddbmm embedding, generic aten ops: ATen calls
                  // inside compiled graphs
  View,           // reshape permute transpose expand squeeze unsqueeze slice flatten
  Cat,
  Creation,       // full
  Random,         // dropout
  Effect,         // print
  HostScalar,     // item
  Control,        // if
  DataDependent,  // nonzero
  Custom,         // custom kernels from a built-in registry
  InPlace,        // add_ mul_ copy_
};

enum class AttrType : uint8_t {
  Bool,
  Int,
  Float,
  Number,   // int, float or bool, kept as a Scalar
  String,   // one of AttrSpec::choices when given
  IntList,  // an int or a list of ints
  Shape,    // a list of ints and dim names
  DType,
  Stride2,  // an int or a list of two ints (conv2d)
};

/// How `gbcheck ops --json` names an attribute's type.
std::string_view attr_type_name(AttrType type);

struct AttrSpec {
  std::string name;
  AttrType type;
  bool required = false;
  std::optional<AttrValue> default_value;  // documented default (absent: the op decides)
  std::vector<std::string> choices;         // for String
  std::string doc;
};

/// What a positional argument may be.
enum class ArgKind : uint8_t { Tensor, TensorOrNumber };

struct OpSchema {
  OpId id = OpId::Unknown;
  std::string name;
  OpClass cls;
  int min_args = 1;
  int max_args = 1;  // -1: any number (cat, print, custom)
  ArgKind arg_kind = ArgKind::Tensor;
  std::vector<AttrSpec> attrs;
  bool produces_value = true;
  std::string signature;  // as shown in hints: "matmul(self, other)"
  std::string doc;        // one line for docs and --help

  const AttrSpec* find_attr(std::string_view attr) const;
};

const std::vector<OpSchema>& all_op_schemas();
const OpSchema* find_op_schema(std::string_view name);
const OpSchema* find_op_schema(OpId id);  // nullptr for OpId::Unknown
const OpSchema& op_schema(OpId id);       // id must not be OpId::Unknown
/// The op's name closest to `name` by edit distance, for "did you mean" hints ("" if none close).
std::string closest_op_name(std::string_view name);
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

/// True for ops whose every output element depends only on the same (broadcast) element of the
/// inputs: Unary, Binary, Where, Clamp, Cast.
bool is_elementwise(OpClass cls);
bool is_elementwise_op(OpId op);

/// True for the ops that write into their first argument (OpClass::InPlace: add_, mul_, copy_).
bool is_in_place_op(OpId op);

}  // namespace gbc
