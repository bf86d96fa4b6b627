// The loop-level kernel IR: what one fused kernel computes, independent of the target (C++ for the
// CPU, CUDA through NVRTC, or the interpreter).
//
// Semantics. A kernel runs over an iteration space and reads/writes strided buffers:
// - Pointwise: for i in [0, numel): evaluate the stores' expressions at element i.
// - Reduction: the iteration space is [outer, inner] (the reduced dims last, flattened). For each
//   outer index o, the stages run in order, each a full pass over the inner index r that folds
//   `value(o, r)` into an accumulator with `combine`; a stage's result (StageResult) is visible to
//   later stages and to the stores. Full-level stores then write every (o, r); outer-level stores
//   write once per o. Softmax is three stages' worth of work in one kernel: max, sum of exp(x - max),
//   then a full-level store of exp(x - max) / sum.
// - Every buffer is indexed through strides the runtime passes per call, so broadcast inputs
//   (stride 0), transposed and sliced views need no copies. A load's IndexKind says what the
//   compiled code may assume about those strides (specialized under a guard).
// - Expressions compute in compute_dtype(storage) (float32 for float16/bfloat16, as ATen does);
//   loads widen and stores narrow. Scalar semantics of each op (NaN propagation, integer wrap,
//   Python-style remainder, round half to even) are those of kernel_prelude.h, shared verbatim by
//   the interpreter and every code generator so that they cannot drift apart.
// - Every Expr's dtype is a compute dtype, never float16/bfloat16. A Cast converts as
//   gbc_cast_<dtype> does; rounding a value to a half type (a `to` node) is the op
//   `round_float16`/`round_bfloat16` (float32 in, float32 out). An Op calls gbc_<op> with operands
//   of one dtype (where: bool, then two of the result dtype; comparisons and logical ops return
//   bool); `clamp` reads has_min/min/has_max/max, converted to its dtype.
// - A Stage's value has dtype acc_dtype and is folded in increasing r. ArgMax compares values of
//   acc_dtype and its StageResult is the int64 index r of the first maximum (NaN counts as the
//   maximum, as in ATen). Identities: 0 (sum), 1 (prod), the lowest/highest value (max/min).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "compiler/ir/dim.h"
#include "compiler/ir/dtype.h"
#include "compiler/kernel/fault_injection.h"

namespace gbc::kir {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// How a buffer's element offset follows from the loop indices.
enum class IndexKind : uint8_t {
  Contiguous,  // pointwise: offset = i; reduction full level: o * inner + r; outer level: o
  Scalar,      // offset = 0 (a broadcast 0-d or all-stride-0 input)
  Affine,      // pointwise: i * s0; reduction: o * s0 + r * s1 (strides passed at run time)
  Strided,     // general: per-dim strides over the buffer's own (permuted, expanded) dims
};

/// Where in a reduction kernel an expression is evaluated.
enum class Level : uint8_t { Full, Outer };

enum class ExprKind : uint8_t {
  Const,        // a number of `dtype`
  Load,         // buffer[offset at the current (i) or (o, r)]
  StageResult,  // the accumulator of an earlier reduction stage (per o)
  ScalarArg,    // a host scalar passed per call (an `item` value captured in the graph)
  Op,           // an elementwise op of the model format: unary, binary, where, clamp
  Cast,         // conversion to `dtype` with ATen's semantics (float to int truncates; to bool is != 0)
};

struct Expr {
  ExprKind kind = ExprKind::Const;
  DType dtype = DType::Float32;  // compute dtype of the result
  double f = 0.0;                // Const (floating)
  int64_t i = 0;                 // Const (integral/bool), Load: buffer, StageResult: stage, ScalarArg: index
  std::string op;                // Op: the model-format op name ("exp", "add", "where", "clamp", "gelu_tanh", ...)
  std::vector<ExprPtr> args;
  // Op attributes that are not operands: clamp bounds (nullopt = absent).
  bool has_min = false, has_max = false;
  double min = 0.0, max = 0.0;
  // The graph node this expression computes part of: an index into Kernel::node_names (-1: none).
  // Lets the bisector and profiles attribute values inside a fused kernel to graph nodes.
  int node = -1;
};

ExprPtr constant(DType dtype, double value);
/// An integral or bool constant without the detour through double (exact for all of int64).
ExprPtr constant_int(DType dtype, int64_t value);
ExprPtr load(int buffer, DType compute);
ExprPtr stage_result(int stage, DType dtype);
ExprPtr scalar_arg(int index, DType dtype);
ExprPtr op(const std::string& name, DType dtype, std::vector<ExprPtr> args);
ExprPtr cast(ExprPtr value, DType dtype);

struct Buffer {
  std::string name;       // the graph value it holds (for printing and debugging)
  DType dtype;            // storage dtype
  bool is_output = false;
  Level level = Level::Full;  // reduction kernels: indexed per (o, r) or per o
  IndexKind index = IndexKind::Contiguous;
  int rank = 0;           // Strided: number of dims (strides and sizes passed at run time)
  // Affine at a reduction's full level with r's stride 1 (a row broadcast over o, a padded row):
  // offset o * s0 + r, so that a row's elements load as one vector instead of a gather. Strided
  // there with each row one contiguous run (the last merged dim of stride 1 holds whole rows):
  // offset strided(o * inner) + r, the row's start computed once per row.
  bool r_contiguous = false;
  // Full-level buffers of a kernel in the CPU column schedule (Kernel::columns): the stride of q,
  // 0, 1, or 2 for one passed at run time (GbcBufferArg::sq); -1 elsewhere.
  int col_step = -1;
};

enum class Combine : uint8_t { Sum, Prod, Max, Min, ArgMax };
std::string combine_name(Combine c);

struct Stage {
  Combine combine = Combine::Sum;
  DType acc_dtype = DType::Float32;  // may be wider than the inputs (float64 sums on the CPU)
  ExprPtr value;                     // evaluated at (o, r)
};

struct Store {
  int buffer = 0;  // index into Kernel::buffers (an output)
  ExprPtr value;
};

enum class KernelKind : uint8_t { Pointwise, Reduction };

/// The row schedules a CUDA reduction's code contains (Kernel::cuda_rows, cuda_codegen.h).
enum class CudaRows : uint8_t {
  All,          // every schedule, chosen on the device per call
  Scalar,       // one class of calls each: the schedule cuda_row_class names
  Vector,
  Cached,
  SplitScalar,  // rows split across blocks (GbcCudaKernelArgs::splits > 1)
  SplitVector,
};
/// "all", "scalar", "vector", "cached", "split_scalar", "split_vector" (variant keys, listings).
const char* cuda_rows_name(CudaRows rows);

struct Kernel {
  std::string name;  // a C identifier, unique within a compiled graph
  KernelKind kind = KernelKind::Pointwise;
  std::vector<Buffer> buffers;  // inputs first, then outputs
  std::vector<DType> scalar_args;
  std::vector<Stage> stages;    // reduction kernels only
  std::vector<Store> stores;
  // The graph nodes this kernel computes, for explain, profiles and the bisector.
  std::vector<std::string> node_names;
  std::vector<SourceLoc> node_locs;
  // Per node_names entry: the expression of that node's value (what the bisector reads).
  std::vector<ExprPtr> node_values;
  // A reduction the CPU walks in memory order: o = p * cols + q with q the trailing kept dims,
  // contiguous in its inputs; each block of q keeps one accumulator per output. A pointwise kernel
  // the CPU walks in rows: i = p * cols + q, each buffer's offset found once per p (specialize.h).
  // Other targets and the interpreter ignore it: buffers keep their index kinds.
  bool columns = false;
  // CUDA reductions: the row schedules the generated code contains. All holds every one, picked
  // on the device per call; another class holds only its own, which is smaller and compiles
  // faster (NVRTC and ptxas grow superlinearly with the schedules), and every call of it must be
  // of that class (cuda_row_class; the CUDA launcher checks, kernel_region.cpp keys variants by
  // it). Other targets, pointwise kernels and the interpreter ignore it.
  CudaRows cuda_rows = CudaRows::All;
  // A deliberate bug to build this kernel with (--inject-fault, a testing aid); None in real use.
  InjectedFault fault = InjectedFault::None;
};

/// A readable listing (`--log kernels`, `gbcheck explain --kernels`, tests):
///   kernel fused_0 reduction(o, r) {
///     in  x: float32 contiguous
///     out y: float32 contiguous
///     s0 = max over r: load(x)
///     s1 = sum over r: exp(sub(load(x), s0))
///     y[o, r] = div(exp(sub(load(x), s0)), s1)
///   }
std::string print_kernel(const Kernel& kernel);
/// Whether the kernel applies the elementwise op `op` anywhere (e.g. kCrashFaultOp).
bool computes_op(const Kernel& kernel, const std::string& op);
std::string print_expr(const ExprPtr& expr, const Kernel& kernel);

}  // namespace gbc::kir
