// Every op of model format v1 as a typed value, so code compares `node.op == OpId::Var` and a
// misspelt op name fails to compile. The list below is in the order of the schema table
// (op_schema.cpp), which checks it entry by entry when it is built; the textual name stays what
// models, explain and repro files print. Test: tests/ir/op_id_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gbc {

// X(enumerator, name as written in model.yaml)
#define GBC_OP_IDS(X)                                                                                          \
  X(Neg, "neg") X(Abs, "abs") X(Exp, "exp") X(Log, "log") X(Log1p, "log1p") X(Expm1, "expm1") X(Sqrt, "sqrt")  \
  X(Rsqrt, "rsqrt") X(Sin, "sin") X(Cos, "cos") X(Tanh, "tanh") X(Sigmoid, "sigmoid") X(Relu, "relu")          \
  X(Silu, "silu") X(Hardswish, "hardswish") X(Hardsigmoid, "hardsigmoid") X(Erf, "erf")                         \
  X(Reciprocal, "reciprocal") X(Floor, "floor") X(Ceil, "ceil") X(Round, "round")                               \
  X(Sign, "sign") X(LogicalNot, "logical_not") X(Gelu, "gelu")                                                  \
  X(Add, "add") X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(Pow, "pow") X(Maximum, "maximum")                   \
  X(Minimum, "minimum") X(Remainder, "remainder") X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt")   \
  X(Ge, "ge") X(LogicalAnd, "logical_and") X(LogicalOr, "logical_or")                                           \
  X(Where, "where") X(Clamp, "clamp") X(To, "to")                                                               \
  X(Sum, "sum") X(Mean, "mean") X(Amax, "amax") X(Amin, "amin") X(Prod, "prod") X(Logsumexp, "logsumexp")       \
  X(Var, "var") X(Argmax, "argmax")                                                                             \
  X(Softmax, "softmax") X(LogSoftmax, "log_softmax") X(LayerNorm, "layer_norm") X(BatchNorm, "batch_norm")      \
  X(Matmul, "matmul") X(Linear, "linear") X(Bmm, "bmm") X(Conv2d, "conv2d") X(MaxPool2d, "max_pool2d")          \
  X(AvgPool2d, "avg_pool2d") X(AdaptiveAvgPool2d, "adaptive_avg_pool2d") X(Addmm, "addmm")                      \
  X(Baddbmm, "baddbmm") X(Embedding, "embedding") X(Generic, "aten")                                            \
  X(Reshape, "reshape") X(Permute, "permute") X(Transpose, "transpose") X(Expand, "expand")                     \
  X(Squeeze, "squeeze") X(Unsqueeze, "unsqueeze") X(Slice, "slice") X(Flatten, "flatten") X(Cat, "cat")         \
  X(Full, "full") X(Dropout, "dropout") X(Print, "print") X(Item, "item") X(If, "if") X(Nonzero, "nonzero")     \
  X(Custom, "custom") X(AddInPlace, "add_") X(MulInPlace, "mul_") X(CopyInPlace, "copy_")

// Unknown comes first, so a default OpId{} (a Node not yet given its op) is no op rather than a
// real one that would run.
enum class OpId : uint8_t {
  Unknown,  // a name that is no op (a model's typo, before the loader reports it)
#define GBC_OP_ID_ENUMERATOR(id, name) id,
  GBC_OP_IDS(GBC_OP_ID_ENUMERATOR)
#undef GBC_OP_ID_ENUMERATOR
};

/// How many ops there are (OpId::Unknown not counted).
inline constexpr size_t kOpIdCount = 0
#define GBC_OP_ID_ONE(id, name) +1
    GBC_OP_IDS(GBC_OP_ID_ONE);
#undef GBC_OP_ID_ONE

/// An op's position in the schema table (op_schema.cpp), from 0; not for OpId::Unknown.
constexpr size_t op_index(OpId id) { return static_cast<size_t>(id) - 1; }
/// The op at `index` of the schema table.
constexpr OpId op_at_index(size_t index) { return static_cast<OpId>(index + 1); }

/// The op named `name` as written in a model; OpId::Unknown for any other word.
OpId op_id(std::string_view name);
/// The op's name as written in a model ("log_softmax"); "?" for OpId::Unknown.
const std::string& op_name(OpId id);

}  // namespace gbc
