// The kernel interpreter (interpreter.h): typed instructions generated from templates over the
// prelude's functions, one table per op arity; the driver runs pointwise chunks, or per row the
// stages, then the full-level and per-row stores.
#include "compiler/kernel/interpreter.h"

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/ir/kernel_prelude.h"

namespace gbc {
namespace {

using kir::ExprKind;
using kir::ExprPtr;
using kir::Level;

// Elements per register: large enough to amortize dispatch, small enough to stay in cache.
constexpr int64_t kChunk = 256;
constexpr size_t kSlotBytes = 8;

// ---- C types ----

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>) with the C type of a compute dtype.
template <typename F>
auto with_compute_type(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(Tag<bool>{});
    case DType::UInt8: return f(Tag<uint8_t>{});
    case DType::Int8: return f(Tag<int8_t>{});
    case DType::Int16: return f(Tag<int16_t>{});
    case DType::Int32: return f(Tag<int32_t>{});
    case DType::Int64: return f(Tag<int64_t>{});
    case DType::Float32: return f(Tag<float>{});
    case DType::Float64: return f(Tag<double>{});
    default: break;
  }
  internal_error("interpreter: " + std::string(dtype_name(d)) + " is not a compute dtype");
}

// The compute dtype of a C type, or -1 for others.
template <typename T>
constexpr int dtype_code() {
  if constexpr (std::is_same_v<T, bool>) return static_cast<int>(DType::Bool);
  else if constexpr (std::is_same_v<T, uint8_t>) return static_cast<int>(DType::UInt8);
  else if constexpr (std::is_same_v<T, int8_t>) return static_cast<int>(DType::Int8);
  else if constexpr (std::is_same_v<T, int16_t>) return static_cast<int>(DType::Int16);
  else if constexpr (std::is_same_v<T, int32_t>) return static_cast<int>(DType::Int32);
  else if constexpr (std::is_same_v<T, int64_t>) return static_cast<int>(DType::Int64);
  else if constexpr (std::is_same_v<T, float>) return static_cast<int>(DType::Float32);
  else if constexpr (std::is_same_v<T, double>) return static_cast<int>(DType::Float64);
  else return -1;
}

// Type classes an op is defined on (ATen's dtype support, as the lowering emits them).
constexpr unsigned kBoolType = 1, kIntType = 2, kFloatType = 4, kAnyType = 7, kNumeric = kIntType | kFloatType;

template <typename T>
constexpr unsigned type_class() {
  if constexpr (std::is_same_v<T, bool>) return kBoolType;
  else if constexpr (std::is_floating_point_v<T>) return kFloatType;
  else return kIntType;
}

// Storage of each dtype in memory and its conversion to and from the compute type.
template <DType D>
struct Storage;
#define GBC_PLAIN_STORAGE(D, T)                   \
  template <>                                     \
  struct Storage<D> {                             \
    using type = T;                               \
    using compute = T;                            \
    static T widen(T v) { return v; }             \
    static T narrow(T v) { return v; }            \
  };
GBC_PLAIN_STORAGE(DType::Bool, bool)
GBC_PLAIN_STORAGE(DType::UInt8, uint8_t)
GBC_PLAIN_STORAGE(DType::Int8, int8_t)
GBC_PLAIN_STORAGE(DType::Int16, int16_t)
GBC_PLAIN_STORAGE(DType::Int32, int32_t)
GBC_PLAIN_STORAGE(DType::Int64, int64_t)
GBC_PLAIN_STORAGE(DType::Float32, float)
GBC_PLAIN_STORAGE(DType::Float64, double)
#undef GBC_PLAIN_STORAGE
template <>
struct Storage<DType::Float16> {
  using type = uint16_t;
  using compute = float;
  static float widen(uint16_t v) { return gbc_f16_to_f32(v); }
  static uint16_t narrow(float v) { return gbc_f32_to_f16(v); }
};
template <>
struct Storage<DType::BFloat16> {
  using type = uint16_t;
  using compute = float;
  static float widen(uint16_t v) { return gbc_bf16_to_f32(v); }
  static uint16_t narrow(float v) { return gbc_f32_to_bf16(v); }
};

// Calls f(std::integral_constant<DType, D>) for a storage dtype.
template <typename F>
auto with_storage(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(std::integral_constant<DType, DType::Bool>{});
    case DType::UInt8: return f(std::integral_constant<DType, DType::UInt8>{});
    case DType::Int8: return f(std::integral_constant<DType, DType::Int8>{});
    case DType::Int16: return f(std::integral_constant<DType, DType::Int16>{});
    case DType::Int32: return f(std::integral_constant<DType, DType::Int32>{});
    case DType::Int64: return f(std::integral_constant<DType, DType::Int64>{});
    case DType::Float16: return f(std::integral_constant<DType, DType::Float16>{});
    case DType::BFloat16: return f(std::integral_constant<DType, DType::BFloat16>{});
    case DType::Float32: return f(std::integral_constant<DType, DType::Float32>{});
    case DType::Float64: return f(std::integral_constant<DType, DType::Float64>{});
  }
  internal_error("interpreter: unknown dtype");
}

// A typed value of at most 8 bytes (stage results and accumulators).
struct Slot {
  unsigned char bytes[kSlotBytes] = {};
  template <typename T>
  T get() const {
    T v;
    std::memcpy(&v, bytes, sizeof(T));
    return v;
  }
  template <typename T>
  void set(T v) {
    std::memcpy(bytes, &v, sizeof(T));
  }
};

// ---- machine state ----

struct Instr;

struct Frame {
  const kir::Kernel* kernel = nullptr;
  const GbcKernelArgs* args = nullptr;
  const InterpretOptions* options = nullptr;
  unsigned char* regs = nullptr;
  bool reduction = false;
  int64_t o = 0;
  int64_t base = 0;  // first i (pointwise) or r (reduction) of the current chunk
  std::vector<Slot> stages;  // finished stage results
  Slot acc;                  // the running stage's accumulator
  int64_t acc_index = 0;     // ArgMax: index of the best value so far
  std::vector<int64_t> offsets = std::vector<int64_t>(kChunk);
};

using ExecFn = void (*)(const Instr&, Frame&, int64_t n);

struct Instr {
  ExecFn fn = nullptr;
  int dst = -1, a = -1, b = -1, c = -1;
  int64_t index = 0;         // buffer, stage, scalar arg or node
  Level level = Level::Full;  // loads, stores: the buffer's level; observe: the value's
  int64_t ci = 0;            // integral constants
  double cf = 0.0;           // floating constants; clamp bounds below
  bool has_lo = false, has_hi = false;
  double lo = 0.0, hi = 0.0;
  kir::Combine combine = kir::Combine::Sum;
};

template <typename T>
T* reg(Frame& f, int r) {
  return reinterpret_cast<T*>(f.regs + static_cast<size_t>(r) * kChunk * kSlotBytes);
}

// ---- indexing ----

int64_t strided_offset(const GbcBufferArg& a, int64_t linear, int64_t* idx) {
  int64_t off = 0;
  for (int d = a.rank - 1; d >= 0; --d) {
    idx[d] = linear % a.sizes[d];
    linear /= a.sizes[d];
    off += idx[d] * a.strides[d];
  }
  return off;
}

// Element offsets of a buffer for the n elements of the current chunk.
void compute_offsets(Frame& f, int buffer, Level level, int64_t n) {
  const kir::Buffer& buf = f.kernel->buffers[static_cast<size_t>(buffer)];
  const GbcBufferArg& a = f.args->buffers[buffer];
  int64_t* out = f.offsets.data();
  bool per_row = f.reduction && level == Level::Outer;
  int64_t linear0 = per_row ? f.o : f.reduction ? f.o * f.args->inner + f.base : f.base;
  int64_t step = per_row ? 0 : 1;
  switch (buf.index) {
    case kir::IndexKind::Contiguous:
      for (int64_t k = 0; k < n; ++k) out[k] = linear0 + k * step;
      return;
    case kir::IndexKind::Scalar:
      for (int64_t k = 0; k < n; ++k) out[k] = 0;
      return;
    case kir::IndexKind::Affine:
      if (f.reduction && !per_row) {
        for (int64_t k = 0; k < n; ++k) out[k] = f.o * a.s0 + (f.base + k) * a.s1;
      } else {
        for (int64_t k = 0; k < n; ++k) out[k] = (linear0 + k * step) * a.s0;
      }
      return;
    case kir::IndexKind::Strided: {
      int64_t idx[GBC_MAX_RANK];
      int64_t off = strided_offset(a, linear0, idx);
      for (int64_t k = 0; k < n; ++k) {
        out[k] = off;
        if (step == 0 || a.rank == 0) continue;
        // Advance the multi-index by one, carrying into outer dims.
        int d = a.rank - 1;
        ++idx[d];
        off += a.strides[d];
        while (idx[d] == a.sizes[d] && d > 0) {
          off -= a.strides[d] * a.sizes[d];
          idx[d] = 0;
          --d;
          ++idx[d];
          off += a.strides[d];
        }
      }
      return;
    }
  }
}

// ---- instructions ----

template <DType S>
void exec_load(const Instr& in, Frame& f, int64_t n) {
  using St = typename Storage<S>::type;
  using C = typename Storage<S>::compute;
  compute_offsets(f, static_cast<int>(in.index), in.level, n);
  const St* data = static_cast<const St*>(f.args->buffers[in.index].data);
  C* d = reg<C>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = Storage<S>::widen(data[f.offsets[static_cast<size_t>(k)]]);
}

template <DType S>
void exec_store(const Instr& in, Frame& f, int64_t n) {
  using St = typename Storage<S>::type;
  using C = typename Storage<S>::compute;
  compute_offsets(f, static_cast<int>(in.index), in.level, n);
  St* data = static_cast<St*>(f.args->buffers[in.index].data);
  const C* v = reg<C>(f, in.a);
  for (int64_t k = 0; k < n; ++k) data[f.offsets[static_cast<size_t>(k)]] = Storage<S>::narrow(v[k]);
}

template <typename T>
void exec_const(const Instr& in, Frame& f, int64_t n) {
  T v = std::is_floating_point_v<T> ? static_cast<T>(in.cf) : static_cast<T>(in.ci);
  T* d = reg<T>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = v;
}

template <typename T>
void exec_scalar(const Instr& in, Frame& f, int64_t n) {
  T v = static_cast<T>(f.args->scalars[in.index]);
  T* d = reg<T>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = v;
}

template <typename T>
void exec_stage_result(const Instr& in, Frame& f, int64_t n) {
  T v = f.stages[static_cast<size_t>(in.index)].get<T>();
  T* d = reg<T>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = v;
}

template <typename F, typename T>
void exec_unary(const Instr& in, Frame& f, int64_t n) {
  using R = decltype(F::f(std::declval<T>()));
  const T* a = reg<T>(f, in.a);
  R* d = reg<R>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = F::f(a[k]);
}

template <typename F, typename T>
void exec_binary(const Instr& in, Frame& f, int64_t n) {
  using R = decltype(F::f(std::declval<T>(), std::declval<T>()));
  const T* a = reg<T>(f, in.a);
  const T* b = reg<T>(f, in.b);
  R* d = reg<R>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = F::f(a[k], b[k]);
}

template <typename T>
void exec_where(const Instr& in, Frame& f, int64_t n) {
  const bool* c = reg<bool>(f, in.a);
  const T* a = reg<T>(f, in.b);
  const T* b = reg<T>(f, in.c);
  T* d = reg<T>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = gbc_where(c[k], a[k], b[k]);
}

template <typename T>
void exec_clamp(const Instr& in, Frame& f, int64_t n) {
  const T lo = static_cast<T>(in.lo), hi = static_cast<T>(in.hi);
  const T* a = reg<T>(f, in.a);
  T* d = reg<T>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) {
    T x = a[k];
    if (in.has_lo) x = gbc_clamp_min(x, lo);
    if (in.has_hi) x = gbc_clamp_max(x, hi);
    d[k] = x;
  }
}

template <typename D>
struct CastTo;
#define GBC_CAST_TO(T, name)                       \
  template <>                                      \
  struct CastTo<T> {                               \
    template <typename S>                          \
    static T f(S x) {                              \
      return gbc_cast_##name(x);                   \
    }                                              \
  };
GBC_CAST_TO(bool, bool)
GBC_CAST_TO(uint8_t, uint8)
GBC_CAST_TO(int8_t, int8)
GBC_CAST_TO(int16_t, int16)
GBC_CAST_TO(int32_t, int32)
GBC_CAST_TO(int64_t, int64)
GBC_CAST_TO(float, float32)
GBC_CAST_TO(double, float64)
#undef GBC_CAST_TO

template <typename S, typename D>
void exec_cast(const Instr& in, Frame& f, int64_t n) {
  const S* a = reg<S>(f, in.a);
  D* d = reg<D>(f, in.dst);
  for (int64_t k = 0; k < n; ++k) d[k] = CastTo<D>::f(a[k]);
}

template <typename T>
T pairwise_sum(const T* v, int64_t n) {
  if (n <= 8) {
    T s = v[0];
    for (int64_t k = 1; k < n; ++k) s = gbc_add(s, v[k]);
    return s;
  }
  const int64_t half = n / 2;
  return gbc_add(pairwise_sum(v, half), pairwise_sum(v + half, n - half));
}

template <typename T>
void exec_fold(const Instr& in, Frame& f, int64_t n) {
  const T* v = reg<T>(f, in.a);
  T acc = f.acc.get<T>();
  switch (in.combine) {
    case kir::Combine::Sum:
      if constexpr (std::is_floating_point_v<T>) {
        if (f.kernel->fault == InjectedFault::Fp16Accum) {
          // The injected fp16-accum bug: the running sum is kept in float16 precision.
          for (int64_t k = 0; k < n; ++k) acc = static_cast<T>(gbc_round_float16(static_cast<float>(gbc_add(acc, v[k]))));
          break;
        }
      }
      if constexpr (std::is_floating_point_v<T>) {
        // Pairwise within the chunk, as vector lanes and GPU thread trees add: a running sum of
        // tens of thousands of float32 terms drifts further from eager than any compiled order.
        if (n > 0) acc = gbc_add(acc, pairwise_sum(v, n));
      } else {
        for (int64_t k = 0; k < n; ++k) acc = gbc_add(acc, v[k]);
      }
      break;
    case kir::Combine::Prod:
      for (int64_t k = 0; k < n; ++k) acc = gbc_mul(acc, v[k]);
      break;
    case kir::Combine::Max:
      for (int64_t k = 0; k < n; ++k) acc = gbc_maximum(acc, v[k]);
      break;
    case kir::Combine::Min:
      for (int64_t k = 0; k < n; ++k) acc = gbc_minimum(acc, v[k]);
      break;
    case kir::Combine::ArgMax:
      // The first maximum wins; a NaN beats every number, and the first NaN every later one.
      for (int64_t k = 0; k < n; ++k) {
        T x = v[k];
        if (x > acc || (x != x && !(acc != acc))) {
          acc = x;
          f.acc_index = f.base + k;
        }
      }
      break;
  }
  f.acc.set(acc);
}

template <typename T>
void exec_observe(const Instr& in, Frame& f, int64_t n) {
  const T* v = reg<T>(f, in.a);
  bool per_row = f.reduction && in.level == Level::Outer;
  for (int64_t k = 0; k < n; ++k) {
    int64_t element = per_row ? f.o : f.reduction ? f.o * f.args->inner + f.base + k : f.base + k;
    f.options->observer(static_cast<int>(in.index), element, static_cast<double>(v[k]));
  }
}

// ---- op tables: each prelude function, with the type classes it is used on ----

#define GBC_UNARY_OPS(X)                                                                                     \
  X(neg, kNumeric) X(abs, kNumeric) X(relu, kNumeric) X(sign, kAnyType) X(floor, kNumeric) X(ceil, kNumeric) \
  X(round, kNumeric) X(exp, kFloatType) X(log, kFloatType) X(log1p, kFloatType) X(expm1, kFloatType)         \
  X(sqrt, kFloatType) X(rsqrt, kFloatType) X(sin, kFloatType) X(cos, kFloatType) X(tanh, kFloatType)          \
  X(erf, kFloatType) X(sigmoid, kFloatType) X(reciprocal, kFloatType) X(silu, kFloatType) X(gelu, kFloatType) \
  X(hardswish, kFloatType) X(hardsigmoid, kFloatType)                                                         \
  X(gelu_tanh, kFloatType) X(round_float16, kFloatType) X(round_bfloat16, kFloatType) X(logical_not, kAnyType)
#define GBC_BINARY_OPS(X)                                                                                    \
  X(add, kAnyType) X(sub, kNumeric) X(mul, kAnyType) X(div, kFloatType) X(pow, kNumeric)                    \
  X(maximum, kAnyType) X(minimum, kAnyType) X(remainder, kNumeric) X(eq, kAnyType) X(ne, kAnyType)          \
  X(lt, kAnyType) X(le, kAnyType) X(gt, kAnyType) X(ge, kAnyType) X(logical_and, kAnyType)                  \
  X(logical_or, kAnyType)

#define GBC_DEFINE_UNARY(name, classes)                                           \
  struct Fn_##name {                                                              \
    static constexpr unsigned types = classes;                                    \
    template <typename T>                                                         \
    static auto f(T x) -> decltype(gbc_##name(x)) {                              \
      return gbc_##name(x);                                                       \
    }                                                                             \
  };
#define GBC_DEFINE_BINARY(name, classes)                                          \
  struct Fn_##name {                                                              \
    static constexpr unsigned types = classes;                                    \
    template <typename T>                                                         \
    static auto f(T x, T y) -> decltype(gbc_##name(x, y)) {                       \
      return gbc_##name(x, y);                                                    \
    }                                                                             \
  };
GBC_UNARY_OPS(GBC_DEFINE_UNARY)
GBC_BINARY_OPS(GBC_DEFINE_BINARY)
#undef GBC_DEFINE_UNARY
#undef GBC_DEFINE_BINARY

struct OpImpl {
  ExecFn fn = nullptr;
  int result = -1;  // dtype code of the result
};
using OpFactory = OpImpl (*)(DType operand);

template <typename F>
OpImpl unary_impl(DType operand) {
  return with_compute_type(operand, [](auto tag) -> OpImpl {
    using T = typename decltype(tag)::type;
    if constexpr ((F::types & type_class<T>()) != 0) {
      return {&exec_unary<F, T>, dtype_code<decltype(F::f(std::declval<T>()))>()};
    } else {
      return {};
    }
  });
}

template <typename F>
OpImpl binary_impl(DType operand) {
  return with_compute_type(operand, [](auto tag) -> OpImpl {
    using T = typename decltype(tag)::type;
    if constexpr ((F::types & type_class<T>()) != 0) {
      return {&exec_binary<F, T>, dtype_code<decltype(F::f(std::declval<T>(), std::declval<T>()))>()};
    } else {
      return {};
    }
  });
}

const std::map<std::string, OpFactory>& unary_ops() {
#define GBC_ENTRY(name, classes) {#name, &unary_impl<Fn_##name>},
  static const std::map<std::string, OpFactory> table = {GBC_UNARY_OPS(GBC_ENTRY)};
#undef GBC_ENTRY
  return table;
}

const std::map<std::string, OpFactory>& binary_ops() {
#define GBC_ENTRY(name, classes) {#name, &binary_impl<Fn_##name>},
  static const std::map<std::string, OpFactory> table = {GBC_BINARY_OPS(GBC_ENTRY)};
#undef GBC_ENTRY
  return table;
}

// ---- programs ----

struct Program {
  std::vector<Instr> code;
  int num_regs = 0;
  bool empty() const { return code.empty(); }
};

// Flattens expressions into one program; shared subexpressions are computed once per chunk.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(const kir::Kernel& kernel) : k_(kernel) {}

  int value(const ExprPtr& e) {
    auto it = reg_of_.find(e.get());
    if (it != reg_of_.end()) return it->second;
    Instr in;
    std::vector<int> args;
    for (const auto& a : e->args) args.push_back(value(a));
    in.dst = program_.num_regs++;
    auto dtype_mismatch = [&](const std::string& what) {
      internal_error("interpreter: " + what + " in kernel " + k_.name + ": " + kir::print_expr(e, k_));
    };
    switch (e->kind) {
      case ExprKind::Const:
        in.ci = e->i;
        in.cf = e->f;
        in.fn = with_compute_type(e->dtype, [](auto tag) -> ExecFn { return &exec_const<typename decltype(tag)::type>; });
        break;
      case ExprKind::ScalarArg:
        in.index = e->i;
        in.fn = with_compute_type(e->dtype, [](auto tag) -> ExecFn { return &exec_scalar<typename decltype(tag)::type>; });
        break;
      case ExprKind::StageResult:
        in.index = e->i;
        in.fn = with_compute_type(e->dtype,
                                  [](auto tag) -> ExecFn { return &exec_stage_result<typename decltype(tag)::type>; });
        break;
      case ExprKind::Load: {
        const kir::Buffer& b = k_.buffers.at(static_cast<size_t>(e->i));
        if (compute_dtype(b.dtype) != e->dtype) dtype_mismatch("load of the wrong dtype");
        in.index = e->i;
        in.level = b.level;
        in.fn = with_storage(b.dtype, [](auto d) -> ExecFn { return &exec_load<decltype(d)::value>; });
        break;
      }
      case ExprKind::Cast: {
        DType from = e->args.at(0)->dtype;
        in.a = args[0];
        in.fn = with_compute_type(from, [&](auto s) -> ExecFn {
          return with_compute_type(e->dtype, [](auto d) -> ExecFn {
            return &exec_cast<typename decltype(s)::type, typename decltype(d)::type>;
          });
        });
        break;
      }
      case ExprKind::Op: in.fn = op_fn(e, args, in, dtype_mismatch); break;
    }
    program_.code.push_back(in);
    reg_of_[e.get()] = in.dst;
    return in.dst;
  }

  void store(const kir::Store& s) {
    const kir::Buffer& b = k_.buffers.at(static_cast<size_t>(s.buffer));
    if (!b.is_output || s.value->dtype != compute_dtype(b.dtype))
      internal_error("interpreter: store to '" + b.name + "' of kernel " + k_.name + " has the wrong dtype or target");
    Instr in;
    in.a = value(s.value);
    in.index = s.buffer;
    in.level = b.level;
    in.fn = with_storage(b.dtype, [](auto d) -> ExecFn { return &exec_store<decltype(d)::value>; });
    program_.code.push_back(in);
  }

  void fold(const kir::Stage& s) {
    if (s.value->dtype != s.acc_dtype) internal_error("interpreter: stage value and accumulator dtypes differ in " + k_.name);
    Instr in;
    in.a = value(s.value);
    in.combine = s.combine;
    in.fn = with_compute_type(s.acc_dtype, [](auto tag) -> ExecFn { return &exec_fold<typename decltype(tag)::type>; });
    program_.code.push_back(in);
  }

  void observe(int node, const ExprPtr& e, Level level) {
    Instr in;
    in.a = value(e);
    in.index = node;
    in.level = level;
    in.fn = with_compute_type(e->dtype, [](auto tag) -> ExecFn { return &exec_observe<typename decltype(tag)::type>; });
    program_.code.push_back(in);
  }

  Program finish() { return std::move(program_); }

 private:
  template <typename Fail>
  ExecFn op_fn(const ExprPtr& e, const std::vector<int>& args, Instr& in, Fail fail) {
    for (size_t i = 0; i < args.size(); ++i) (i == 0 ? in.a : i == 1 ? in.b : in.c) = args[i];
    const auto& a = e->args;
    if (e->op == "where") {
      if (a.size() != 3 || a[0]->dtype != DType::Bool || a[1]->dtype != e->dtype || a[2]->dtype != e->dtype)
        fail("where with operands of the wrong dtypes");
      return with_compute_type(e->dtype, [](auto tag) -> ExecFn { return &exec_where<typename decltype(tag)::type>; });
    }
    if (e->op == "clamp") {
      if (a.size() != 1 || a[0]->dtype != e->dtype || e->dtype == DType::Bool) fail("clamp of the wrong dtype");
      in.has_lo = e->has_min;
      in.has_hi = e->has_max;
      in.lo = e->min;
      in.hi = e->max;
      return with_compute_type(e->dtype, [](auto tag) -> ExecFn { return &exec_clamp<typename decltype(tag)::type>; });
    }
    const auto& table = a.size() == 1 ? unary_ops() : binary_ops();
    auto it = table.find(e->op);
    if (it == table.end() || a.size() > 2) fail("unknown op '" + e->op + "' with " + std::to_string(a.size()) + " operands");
    if (a.size() == 2 && a[0]->dtype != a[1]->dtype) fail("operands of different dtypes");
    OpImpl impl = it->second(a[0]->dtype);
    if (!impl.fn) fail(e->op + " is not defined on " + std::string(dtype_name(a[0]->dtype)));
    if (impl.result != static_cast<int>(e->dtype)) fail(e->op + " has the wrong result dtype");
    return impl.fn;
  }

  const kir::Kernel& k_;
  Program program_;
  std::map<const kir::Expr*, int> reg_of_;
};

// Whether an expression varies with r (it reads a full-level buffer of a reduction kernel).
class LevelOf {
 public:
  explicit LevelOf(const kir::Kernel& k) : k_(k) {}
  bool full(const ExprPtr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    bool r = e->kind == ExprKind::Load && k_.buffers.at(static_cast<size_t>(e->i)).level == Level::Full;
    for (const auto& a : e->args) r = full(a) || r;
    memo_[e.get()] = r;
    return r;
  }

 private:
  const kir::Kernel& k_;
  std::map<const kir::Expr*, bool> memo_;
};

void run_program(const Program& p, Frame& f, int64_t n) {
  for (const Instr& in : p.code) in.fn(in, f, n);
}

// Runs a program over [0, count) in chunks, with f.base at each chunk's start.
void run_chunks(const Program& p, Frame& f, int64_t count) {
  for (int64_t start = 0; start < count; start += kChunk) {
    f.base = start;
    run_program(p, f, std::min(kChunk, count - start));
  }
}

Slot identity(kir::Combine c, DType acc) {
  return with_compute_type(acc, [c](auto tag) {
    using T = typename decltype(tag)::type;
    Slot s;
    constexpr bool floating = std::is_floating_point_v<T>;
    switch (c) {
      case kir::Combine::Sum: s.set<T>(T(0)); break;
      case kir::Combine::Prod: s.set<T>(T(1)); break;
      case kir::Combine::Max:
      case kir::Combine::ArgMax:
        s.set<T>(floating ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
        break;
      case kir::Combine::Min:
        s.set<T>(floating ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max());
        break;
    }
    return s;
  });
}

void check_args(const kir::Kernel& k, const GbcKernelArgs& args) {
  GBC_INTERNAL_ASSERT(args.buffers != nullptr || k.buffers.empty(), "interpreter: no buffers passed to " + k.name);
  GBC_INTERNAL_ASSERT(args.scalars != nullptr || k.scalar_args.empty(), "interpreter: no scalars passed to " + k.name);
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const kir::Buffer& buf = k.buffers[b];
    if (buf.index == kir::IndexKind::Strided)
      GBC_INTERNAL_ASSERT(args.buffers[b].rank == buf.rank && buf.rank <= GBC_MAX_RANK,
                          "interpreter: strided buffer '" + buf.name + "' of " + k.name + " has rank " +
                              std::to_string(args.buffers[b].rank) + ", compiled for " + std::to_string(buf.rank));
  }
}

}  // namespace

void interpret_kernel(const kir::Kernel& kernel, const GbcKernelArgs& args, const InterpretOptions& options) {
  check_args(kernel, args);
  Frame f;
  f.kernel = &kernel;
  f.args = &args;
  f.options = &options;
  f.reduction = kernel.kind == kir::KernelKind::Reduction;
  bool observing = static_cast<bool>(options.observer);

  if (!f.reduction) {
    ProgramBuilder b(kernel);
    for (const auto& s : kernel.stores) b.store(s);
    if (observing)
      for (size_t n = 0; n < kernel.node_values.size(); ++n) b.observe(static_cast<int>(n), kernel.node_values[n], Level::Full);
    Program p = b.finish();
    std::unique_ptr<unsigned char[]> regs(new unsigned char[static_cast<size_t>(p.num_regs) * kChunk * kSlotBytes]);
    f.regs = regs.get();
    run_chunks(p, f, args.numel);
    return;
  }

  // Reduction: one program per stage, then the full-level and the per-row stores.
  LevelOf level(kernel);
  std::vector<Program> stages;
  for (const auto& s : kernel.stages) {
    ProgramBuilder b(kernel);
    b.fold(s);
    stages.push_back(b.finish());
  }
  ProgramBuilder full_b(kernel), outer_b(kernel);
  for (const auto& s : kernel.stores) {
    bool full_store = kernel.buffers.at(static_cast<size_t>(s.buffer)).level == Level::Full;
    GBC_INTERNAL_ASSERT(full_store || !level.full(s.value),
                        "interpreter: a per-row store of " + kernel.name + " reads a full-level buffer");
    (full_store ? full_b : outer_b).store(s);
  }
  if (observing) {
    for (size_t n = 0; n < kernel.node_values.size(); ++n) {
      bool full = level.full(kernel.node_values[n]);
      (full ? full_b : outer_b).observe(static_cast<int>(n), kernel.node_values[n], full ? Level::Full : Level::Outer);
    }
  }
  Program full = full_b.finish(), outer = outer_b.finish();
  int num_regs = std::max(full.num_regs, outer.num_regs);
  for (const auto& p : stages) num_regs = std::max(num_regs, p.num_regs);
  std::unique_ptr<unsigned char[]> regs(new unsigned char[static_cast<size_t>(std::max(num_regs, 1)) * kChunk * kSlotBytes]);
  f.regs = regs.get();
  f.stages.resize(kernel.stages.size());
  // The injected reduce-bound bug folds one element less than the row has.
  const int64_t stage_inner = kernel.fault == InjectedFault::ReduceBound ? std::max<int64_t>(args.inner - 1, 0) : args.inner;
  for (int64_t o = 0; o < args.outer; ++o) {
    f.o = o;
    for (size_t s = 0; s < stages.size(); ++s) {
      const kir::Stage& stage = kernel.stages[s];
      f.acc = identity(stage.combine, stage.acc_dtype);
      f.acc_index = 0;
      run_chunks(stages[s], f, stage_inner);
      if (stage.combine == kir::Combine::ArgMax) f.stages[s].set<int64_t>(f.acc_index);
      else f.stages[s] = f.acc;
    }
    if (!full.empty()) run_chunks(full, f, args.inner);
    if (!outer.empty()) {
      f.base = 0;
      run_program(outer, f, 1);
    }
  }
}

}  // namespace gbc
