/* Scalar semantics of every elementwise op in gbc's kernels: ATen's, element by element.
 * This file is compiled three ways: into the kernel interpreter (host C++), and embedded verbatim
 * at the top of every generated CPU translation unit and CUDA (NVRTC) source. One definition, so
 * the interpreter and the code generators cannot drift apart.
 *
 * Rules (the oracles rely on these):
 * - NaN propagates through maximum/minimum/clamp/relu and every arithmetic op; comparisons with
 *   NaN are false except `ne`; round is half to even.
 * - Integer add/sub/mul/neg wrap in two's complement (computed in unsigned arithmetic: signed
 *   overflow is undefined in C++); remainder follows Python (the sign of the divisor).
 * - float16/bfloat16 are stored as uint16 bits and computed in float32.
 * Code generators call gbc_<op>(...); overloads cover float, double, and integer types.
 */
#ifndef GBC_KERNEL_PRELUDE_H_
#define GBC_KERNEL_PRELUDE_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GBC_FN static __device__ __forceinline__
#define GBC_MATH(fn) ::fn
#else
#include <cmath>
#include <cstdint>
#include <cstring>
#define GBC_FN static inline
#define GBC_MATH(fn) std::fn
#endif

#if defined(__CUDACC_RTC__)
typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#endif

/* ---- bit casts and half-precision storage ---- */
GBC_FN uint32_t gbc_f32_bits(float f) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return __float_as_uint(f);
#else
  uint32_t u; std::memcpy(&u, &f, 4); return u;
#endif
}
GBC_FN float gbc_bits_f32(uint32_t u) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return __uint_as_float(u);
#else
  float f; std::memcpy(&f, &u, 4); return f;
#endif
}
GBC_FN float gbc_bf16_to_f32(uint16_t h) { return gbc_bits_f32(((uint32_t)h) << 16); }
GBC_FN uint16_t gbc_f32_to_bf16(float f) {
  uint32_t u = gbc_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);                                          /* round to nearest even */
  return (uint16_t)(u >> 16);
}
GBC_FN float gbc_f16_to_f32(uint16_t h) {
  uint32_t sign = ((uint32_t)(h & 0x8000u)) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu) return gbc_bits_f32(sign | 0x7f800000u | (man << 13)); /* inf / nan */
  if (exp == 0) {
    if (man == 0) return gbc_bits_f32(sign);
    float v = (float)man * 5.9604644775390625e-8f; /* subnormal: man * 2^-24 */
    return sign ? -v : v;
  }
  return gbc_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}
GBC_FN uint16_t gbc_f32_to_f16(float f) {
  uint32_t u = gbc_f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);        /* nan */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);       /* overflow (after rounding) to inf */
  if (a < 0x38800000u) {                                          /* subnormal or zero in half */
    float v = gbc_bits_f32(a) * 16777216.0f;                      /* scale by 2^24: exact */
    /* round half to even to an integer count of 2^-24 units */
    float r = GBC_MATH(nearbyint)(v);
    return (uint16_t)(sign | (uint32_t)r);
  }
  uint32_t mant_odd = (a >> 13) & 1u;
  a += 0xfffu + mant_odd; /* round to nearest even at bit 13 */
  return (uint16_t)(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu));
}

/* ---- arithmetic ---- */
template <typename T> GBC_FN T gbc_wrap_add(T a, T b) { return (T)((uint64_t)(int64_t)a + (uint64_t)(int64_t)b); }
template <typename T> GBC_FN T gbc_wrap_sub(T a, T b) { return (T)((uint64_t)(int64_t)a - (uint64_t)(int64_t)b); }
template <typename T> GBC_FN T gbc_wrap_mul(T a, T b) { return (T)((uint64_t)(int64_t)a * (uint64_t)(int64_t)b); }

GBC_FN float gbc_add(float a, float b) { return a + b; }
GBC_FN double gbc_add(double a, double b) { return a + b; }
GBC_FN bool gbc_add(bool a, bool b) { return a || b; }
template <typename T> GBC_FN T gbc_add(T a, T b) { return gbc_wrap_add(a, b); }
GBC_FN float gbc_sub(float a, float b) { return a - b; }
GBC_FN double gbc_sub(double a, double b) { return a - b; }
template <typename T> GBC_FN T gbc_sub(T a, T b) { return gbc_wrap_sub(a, b); }
GBC_FN float gbc_mul(float a, float b) { return a * b; }
GBC_FN double gbc_mul(double a, double b) { return a * b; }
GBC_FN bool gbc_mul(bool a, bool b) { return a && b; }
template <typename T> GBC_FN T gbc_mul(T a, T b) { return gbc_wrap_mul(a, b); }
/* div is true division: the lowering casts integer operands to the float result type first. */
GBC_FN float gbc_div(float a, float b) { return a / b; }
GBC_FN double gbc_div(double a, double b) { return a / b; }
GBC_FN float gbc_neg(float a) { return -a; }
GBC_FN double gbc_neg(double a) { return -a; }
template <typename T> GBC_FN T gbc_neg(T a) { return (T)(0 - (uint64_t)(int64_t)a); }

GBC_FN float gbc_remainder(float a, float b) {
  float m = GBC_MATH(fmod)(a, b);
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) m += b;
  return m;
}
GBC_FN double gbc_remainder(double a, double b) {
  double m = GBC_MATH(fmod)(a, b);
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) m += b;
  return m;
}
template <typename T> GBC_FN T gbc_remainder(T a, T b) {
  if (b == 0) return 0; /* ATen raises; inputs never draw it, and kernels must not trap */
  T m = (T)(a % b);
  if (m != 0 && ((b < 0) != (m < 0))) m = (T)(m + b);
  return m;
}

GBC_FN float gbc_pow(float a, float b) { return GBC_MATH(pow)(a, b); }
GBC_FN double gbc_pow(double a, double b) { return GBC_MATH(pow)(a, b); }
template <typename T> GBC_FN T gbc_pow(T base, T exp) {
  if (exp < 0) return (T)(base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  T result = 1;
  while (exp) {
    if (exp & 1) result = gbc_wrap_mul(result, base);
    exp = (T)(exp >> 1);
    base = gbc_wrap_mul(base, base);
  }
  return result;
}

GBC_FN float gbc_maximum(float a, float b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
GBC_FN double gbc_maximum(double a, double b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
template <typename T> GBC_FN T gbc_maximum(T a, T b) { return a > b ? a : b; }
GBC_FN float gbc_minimum(float a, float b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
GBC_FN double gbc_minimum(double a, double b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
template <typename T> GBC_FN T gbc_minimum(T a, T b) { return a < b ? a : b; }

/* clamp(x, lo, hi) = min(max(x, lo), hi); NaN x stays NaN; lo > hi gives hi (as ATen). */
template <typename T> GBC_FN T gbc_clamp_min(T x, T lo) { return (x != x) ? x : (x < lo ? lo : x); }
template <typename T> GBC_FN T gbc_clamp_max(T x, T hi) { return (x != x) ? x : (x > hi ? hi : x); }

/* ---- comparisons and logic (operands already promoted to a common type) ---- */
template <typename T> GBC_FN bool gbc_eq(T a, T b) { return a == b; }
template <typename T> GBC_FN bool gbc_ne(T a, T b) { return a != b; }
template <typename T> GBC_FN bool gbc_lt(T a, T b) { return a < b; }
template <typename T> GBC_FN bool gbc_le(T a, T b) { return a <= b; }
template <typename T> GBC_FN bool gbc_gt(T a, T b) { return a > b; }
template <typename T> GBC_FN bool gbc_ge(T a, T b) { return a >= b; }
template <typename T> GBC_FN bool gbc_logical_not(T a) { return !(a != 0); }
template <typename T> GBC_FN bool gbc_logical_and(T a, T b) { return (a != 0) && (b != 0); }
template <typename T> GBC_FN bool gbc_logical_or(T a, T b) { return (a != 0) || (b != 0); }
template <typename T> GBC_FN T gbc_where(bool c, T a, T b) { return c ? a : b; }

/* ---- unary ---- */
GBC_FN float gbc_abs(float a) { return GBC_MATH(fabs)(a); }
GBC_FN double gbc_abs(double a) { return GBC_MATH(fabs)(a); }
template <typename T> GBC_FN T gbc_abs(T a) { return a < 0 ? gbc_neg(a) : a; }
GBC_FN float gbc_relu(float a) { return (a != a) ? a : (a > 0.0f ? a : 0.0f); }
GBC_FN double gbc_relu(double a) { return (a != a) ? a : (a > 0.0 ? a : 0.0); }
template <typename T> GBC_FN T gbc_relu(T a) { return a > 0 ? a : (T)0; }
template <typename T> GBC_FN T gbc_sign(T a) { return (T)((T)0 < a) - (T)(a < (T)0); }
GBC_FN float gbc_floor(float a) { return GBC_MATH(floor)(a); }
GBC_FN double gbc_floor(double a) { return GBC_MATH(floor)(a); }
template <typename T> GBC_FN T gbc_floor(T a) { return a; }
GBC_FN float gbc_ceil(float a) { return GBC_MATH(ceil)(a); }
GBC_FN double gbc_ceil(double a) { return GBC_MATH(ceil)(a); }
template <typename T> GBC_FN T gbc_ceil(T a) { return a; }
GBC_FN float gbc_round(float a) { return GBC_MATH(nearbyint)(a); }
GBC_FN double gbc_round(double a) { return GBC_MATH(nearbyint)(a); }
template <typename T> GBC_FN T gbc_round(T a) { return a; }

#define GBC_UNARY_FLOAT(name, expr_f, expr_d)   \
  GBC_FN float gbc_##name(float x) { return expr_f; } \
  GBC_FN double gbc_##name(double x) { return expr_d; }

GBC_UNARY_FLOAT(exp, GBC_MATH(exp)(x), GBC_MATH(exp)(x))
GBC_UNARY_FLOAT(log, GBC_MATH(log)(x), GBC_MATH(log)(x))
GBC_UNARY_FLOAT(log1p, GBC_MATH(log1p)(x), GBC_MATH(log1p)(x))
GBC_UNARY_FLOAT(expm1, GBC_MATH(expm1)(x), GBC_MATH(expm1)(x))
GBC_UNARY_FLOAT(sqrt, GBC_MATH(sqrt)(x), GBC_MATH(sqrt)(x))
GBC_UNARY_FLOAT(rsqrt, 1.0f / GBC_MATH(sqrt)(x), 1.0 / GBC_MATH(sqrt)(x))
GBC_UNARY_FLOAT(sin, GBC_MATH(sin)(x), GBC_MATH(sin)(x))
GBC_UNARY_FLOAT(cos, GBC_MATH(cos)(x), GBC_MATH(cos)(x))
GBC_UNARY_FLOAT(tanh, GBC_MATH(tanh)(x), GBC_MATH(tanh)(x))
GBC_UNARY_FLOAT(erf, GBC_MATH(erf)(x), GBC_MATH(erf)(x))
GBC_UNARY_FLOAT(sigmoid, 1.0f / (1.0f + GBC_MATH(exp)(-x)), 1.0 / (1.0 + GBC_MATH(exp)(-x)))
GBC_UNARY_FLOAT(reciprocal, 1.0f / x, 1.0 / x)
GBC_UNARY_FLOAT(silu, x / (1.0f + GBC_MATH(exp)(-x)), x / (1.0 + GBC_MATH(exp)(-x)))
GBC_UNARY_FLOAT(gelu, 0.5f * x * (1.0f + GBC_MATH(erf)(x * 0.70710678118654752440f)),
                0.5 * x * (1.0 + GBC_MATH(erf)(x * 0.70710678118654752440)))
GBC_UNARY_FLOAT(gelu_tanh,
                0.5f * x * (1.0f + GBC_MATH(tanh)(0.79788456080286535588f * (x + 0.044715f * x * x * x))),
                0.5 * x * (1.0 + GBC_MATH(tanh)(0.79788456080286535588 * (x + 0.044715 * x * x * x))))
#undef GBC_UNARY_FLOAT

#endif /* GBC_KERNEL_PRELUDE_H_ */
