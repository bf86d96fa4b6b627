/* Scalar semantics of every elementwise op in gbc's kernels: ATen's, element by element.
 * This file is compiled four ways: into constant folding and the kernel interpreter (host C++),
 * and embedded verbatim at the top of every generated CPU translation unit and CUDA (NVRTC)
 * source. One definition, so folding, the interpreter and the code generators cannot drift apart;
 * it sits with the IR, below the graph passes and the kernels that both use it.
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
#if !defined(GBC_KERNEL_STD) /* generated CPU sources declare what they use (kernel_std.h) */
#include <cmath>
#include <cstdint>
#include <cstring>
#endif
/* Generated CPU sources (GBC_KERNEL_STD) inline every helper, as CUDA's __forceinline__ does: at
 * -O2 GCC left gbc_tanh (exp inside) a call, and a simd loop with a call is not vectorized (the
 * bias+gelu+layer_norm bench kernel 7x slower); forced, -O2 vectorizes what -O3 does. */
#if defined(GBC_KERNEL_STD)
#define GBC_FN static inline __attribute__((always_inline))
#else
#define GBC_FN static inline
#endif
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

/* Arguments of libm calls pass through GBC_OPAQUE on the CPU: GCC evaluates a call whose argument
 * it can prove constant (a `where` fill, a number operand) with MPFR, correctly rounded, while
 * glibc's result at run time may differ in the last bit (log1pf(2.5f) does), so one input value
 * gave two results in one kernel and a third way in the interpreter (the fuzzer saw two calls of
 * gbc differ: tests/runtime/backends_test.cpp). The empty asm hides the value from the optimizer;
 * a libm call is never vectorized anyway, so it costs nothing measurable. */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GBC_OPAQUE(v) (v)
#else
#if defined(__x86_64__) || defined(__i386__)
#define GBC_OPAQUE_CONSTRAINT "+x"
#elif defined(__aarch64__)
#define GBC_OPAQUE_CONSTRAINT "+w"
#else
#define GBC_OPAQUE_CONSTRAINT "+m"
#endif
GBC_FN float gbc_opaque(float v) { __asm__("" : GBC_OPAQUE_CONSTRAINT(v)); return v; }
GBC_FN double gbc_opaque(double v) { __asm__("" : GBC_OPAQUE_CONSTRAINT(v)); return v; }
#define GBC_OPAQUE(v) gbc_opaque(v)
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
/* float16 <-> float32 without branches, so that loops converting them vectorize (issue 19: the
 * branchy forms kept softmax_float16_io's passes at half speed). The algorithms are those of
 * FP16 (Maratyszcza), which c10::Half uses: exact, float adds and multiplies by powers of two do
 * the rounding to nearest even; NaN becomes the quiet NaN 0x7e00 with its sign. */
GBC_FN float gbc_f16_to_f32(uint16_t h) {
  const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, two_w = w + w;
  const float normal = gbc_bits_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f; /* rebias the exponent */
  const float subnormal = gbc_bits_f32((two_w >> 17) | (126u << 23)) - 0.5f;     /* man * 2^-24 */
  return gbc_bits_f32(sign | (two_w < (1u << 27) ? gbc_f32_bits(subnormal) : gbc_f32_bits(normal)));
}
GBC_FN uint16_t gbc_f32_to_f16(float f) {
  const uint32_t w = gbc_f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
  /* |f| * 2^2 (through 2^112, so that values too large for a half become inf) */
  float base = (GBC_MATH(fabs)(f) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t bias = shl1_w & 0xFF000000u;
  bias = bias < 0x71000000u ? 0x71000000u : bias;
  base = gbc_bits_f32((bias >> 1) + 0x07800000u) + base; /* the add rounds the mantissa at half's width */
  const uint32_t b = gbc_f32_bits(base);
  const uint32_t nonsign = ((b >> 13) & 0x7C00u) + (b & 0x0FFFu);
  return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/* ---- casts (kir::Cast): c10::convert's semantics ----
 * To bool is x != 0 (NaN is true). Floating values go to the 8- and 16-bit integer types through
 * int64, which wraps as ATen's CPU kernels do (-1.5 -> uint8 255, 300.0 -> int8 44); C leaves
 * those conversions undefined. Rounding to a half type keeps the value in float32. */
template <typename T> GBC_FN bool gbc_cast_bool(T x) { return x != 0; }
template <typename T> GBC_FN uint8_t gbc_cast_uint8(T x) { return (uint8_t)(int64_t)x; }
template <typename T> GBC_FN int8_t gbc_cast_int8(T x) { return (int8_t)(int64_t)x; }
template <typename T> GBC_FN int16_t gbc_cast_int16(T x) { return (int16_t)(int64_t)x; }
template <typename T> GBC_FN int32_t gbc_cast_int32(T x) { return (int32_t)x; }
template <typename T> GBC_FN int64_t gbc_cast_int64(T x) { return (int64_t)x; }

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* Floating to integer on the host. C++ leaves NaN, infinities and out-of-range values undefined;
 * x86, where eager runs on the CPU, gives the type's minimum (the "integer indefinite" value) for
 * them, and so do these. The explicit range check also keeps GCC from folding (float)(int64_t)x
 * into truncf(x) under -fno-trapping-math, which turned a NaN into NaN (found by the fuzzer:
 * remainder(to(NaN, int64), 1.0) is -0 in eager). On CUDA the hardware's conversion (NaN to 0)
 * is the device's eager behaviour, so the templates above stay. */
GBC_FN int64_t gbc_float_to_int64(double x) {
  return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : (int64_t)(-9223372036854775807LL - 1);
}
GBC_FN int32_t gbc_float_to_int32(double x) {
  return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : (int32_t)(-2147483647 - 1);
}
GBC_FN uint8_t gbc_cast_uint8(float x) { return (uint8_t)gbc_float_to_int64(x); }
GBC_FN uint8_t gbc_cast_uint8(double x) { return (uint8_t)gbc_float_to_int64(x); }
GBC_FN int8_t gbc_cast_int8(float x) { return (int8_t)gbc_float_to_int64(x); }
GBC_FN int8_t gbc_cast_int8(double x) { return (int8_t)gbc_float_to_int64(x); }
GBC_FN int16_t gbc_cast_int16(float x) { return (int16_t)gbc_float_to_int64(x); }
GBC_FN int16_t gbc_cast_int16(double x) { return (int16_t)gbc_float_to_int64(x); }
GBC_FN int32_t gbc_cast_int32(float x) { return gbc_float_to_int32(x); }
GBC_FN int32_t gbc_cast_int32(double x) { return gbc_float_to_int32(x); }
GBC_FN int64_t gbc_cast_int64(float x) { return gbc_float_to_int64(x); }
GBC_FN int64_t gbc_cast_int64(double x) { return gbc_float_to_int64(x); }
#endif
template <typename T> GBC_FN float gbc_cast_float32(T x) { return (float)x; }
template <typename T> GBC_FN double gbc_cast_float64(T x) { return (double)x; }
/* An integer has no -0, so its float is +0.0 where it is 0, and the select says so: GCC folds
 * float(int64(x)) into trunc(x) under -fno-trapping-math, which gives -0.0 for x in (-1, 0)
 * (found by the fuzzer, seed 600439); it drops an added +0.0, taking the conversion for one
 * that cannot give -0, but keeps this select (corpus/examples/signed_zero_identities.yaml). */
GBC_FN float gbc_cast_float32(int64_t x) { return x == 0 ? 0.0f : (float)x; }
GBC_FN float gbc_cast_float32(int32_t x) { return x == 0 ? 0.0f : (float)x; }
GBC_FN double gbc_cast_float64(int64_t x) { return x == 0 ? 0.0 : (double)x; }
GBC_FN double gbc_cast_float64(int32_t x) { return x == 0 ? 0.0 : (double)x; }
GBC_FN float gbc_round_float16(float x) { return gbc_f16_to_f32(gbc_f32_to_f16(x)); }
GBC_FN float gbc_round_bfloat16(float x) { return gbc_bf16_to_f32(gbc_f32_to_bf16(x)); }

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
  if ((T)-1 < (T)0 && b == (T)-1) return 0; /* the exact result; INT_MIN % -1 traps on x86 */
  T m = (T)(a % b);
  if (m != 0 && ((b < 0) != (m < 0))) m = (T)(m + b);
  return m;
}

GBC_FN float gbc_pow(float a, float b) { return GBC_MATH(pow)(GBC_OPAQUE(a), GBC_OPAQUE(b)); }
GBC_FN double gbc_pow(double a, double b) { return GBC_MATH(pow)(GBC_OPAQUE(a), GBC_OPAQUE(b)); }
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

/* NaN wins: a if a is NaN, else the comparison is false for a NaN b and returns b. One compare
 * and two selects, a vector max and a blend; the earlier `(a != a || b != b) ? a + b : ...` kept
 * a max over `where(mask, x, number)` from vectorizing (GCC split its paths on the constant). */
GBC_FN float gbc_maximum(float a, float b) { const float m = a > b ? a : b; return a != a ? a : m; }
GBC_FN double gbc_maximum(double a, double b) { const double m = a > b ? a : b; return a != a ? a : m; }
template <typename T> GBC_FN T gbc_maximum(T a, T b) { return a > b ? a : b; }
GBC_FN float gbc_minimum(float a, float b) { const float m = a < b ? a : b; return a != a ? a : m; }
GBC_FN double gbc_minimum(double a, double b) { const double m = a < b ? a : b; return a != a ? a : m; }
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
/* relu keeps NaN and -0.0, as ATen's clamp_min(x, 0) does */
GBC_FN float gbc_relu(float a) { return a < 0.0f ? 0.0f : a; }
GBC_FN double gbc_relu(double a) { return a < 0.0 ? 0.0 : a; }
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

/* ---- float32 transcendentals on the host ----
 * exp, log, tanh, sigmoid, erf and gelu of float32 are ours on the host (the interpreter, constant
 * folding and generated CPU kernels), CUDA keeps its native expf/logf/tanhf/erff. Why: libm's
 * scalar calls stop GCC from vectorizing a kernel's loop; these are branch-free (selects, bit
 * tricks, no calls), so an inlined call vectorizes under `#pragma omp simd` (generated kernels are
 * built with -fno-trapping-math, which lets GCC evaluate both sides of a select).
 * Accuracy, measured over every float32 (tests/codegen/prelude_math_test.cpp samples it): exp
 * <= 0.99 ulp, log <= 0.84, tanh <= 1.31, sigmoid <= 1.9, erf <= 1.04 (Sleef's erff_u10, ATen's
 * CPU erf, is documented at 1.0), gelu <= 1.09 for x >= 0 and <= 5.01 below (ATen's float gelu
 * rounds 1 + erf(x / sqrt 2) first: its absolute error there is up to |x| 2^-22, 0 for x < -5.9).
 * erf and gelu are float32 throughout (8 lanes a vector, not float64's 4). Special values are
 * ATen's: exp(-inf) = 0, log(0) = -inf, log(x < 0) = nan, tanh/erf(+-inf) = +-1, sigmoid(-inf) = 0,
 * gelu(-inf) = nan (ATen's 0.5 * x * (1 + erf(x / sqrt 2)) gives -inf * 0). Below the float32 range
 * of exp, sigmoid(x) = e^x and gelu keep their tiny (subnormal) values, where ATen's CPU kernels
 * flush them to 0: the two differ by less than 2^-126 in absolute terms.
 * Kernels are built with -ffp-contract=off, so the compiler fuses nothing on its own and the
 * interpreter and compiled kernels round every step alike and agree bit for bit; the polynomials
 * ask for fused multiply-adds explicitly (gbc_fma), which round once on every machine. */
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* a * b + c rounded once. Polynomials step through it: half the instructions of a multiply and an
 * add (a vector fused multiply-add where -march has one), and exactly the same result everywhere,
 * the interpreter's libm fmaf included, as IEEE fma is correctly rounded. */
GBC_FN float gbc_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
GBC_FN double gbc_fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
/* c_n x^n + ... + c_0, coefficients from the highest: Horner's steps, each one gbc_fma. */
template <typename T> GBC_FN T gbc_horner(T, T c) { return c; }
template <typename T, typename... Rest> GBC_FN T gbc_horner(T x, T c_high, T c_next, Rest... rest) {
  return gbc_horner(x, gbc_fma(c_high, x, c_next), rest...);
}
#endif

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* e^x = p 2^n: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 in two parts), p = e^r =
 * 1 + r + r^2 P(r) with Cephes' coefficients; n's bits (as an unsigned difference) in *n. */
GBC_FN float gbc_exp_reduced(float x, uint32_t* n_bits) {
  const float magic = 12582912.0f; /* 1.5 * 2^23 */
  const float t = gbc_fma(x, 1.44269504088896341f, magic);
  const float n = t - magic;
  *n_bits = gbc_f32_bits(t) - gbc_f32_bits(magic);
  const float r = gbc_fma(n, 2.12194440e-4f, gbc_fma(n, -0.693359375f, x));
  float p = 1.9875691500e-4f;
  p = gbc_fma(p, r, 1.3981999507e-3f);
  p = gbc_fma(p, r, 8.3334519073e-3f);
  p = gbc_fma(p, r, 4.1665795894e-2f);
  p = gbc_fma(p, r, 1.6666665459e-1f);
  p = gbc_fma(p, r, 5.0000001201e-1f);
  return gbc_fma(p, r * r, r) + 1.0f;
}
/* e^x for x in [-87, 88], where the result is a normal float: 2^n applied at once (exact), no
 * range selects. Equal to gbc_exp there, with fewer instructions (tanh's exp). */
GBC_FN float gbc_exp_normal(float x) {
  uint32_t ni;
  const float p = gbc_exp_reduced(x, &ni);
  return p * gbc_bits_f32((ni + 127u) << 23);
}
#endif

GBC_FN float gbc_exp(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return GBC_MATH(exp)(x);
#else
  /* 2^n applied in two halves so that results below 2^-126 round once, as subnormals. Outside
   * [-104, 89] the result is 0 or inf: selected at the end, so the steps run on x itself (GCC
   * turned a clamp of x first into a dozen blends of every step's value). */
  uint32_t ni;
  const float p = gbc_exp_reduced(x, &ni);
  const uint32_t half = (uint32_t)((int32_t)ni >> 1);
  const float y = p * gbc_bits_f32((half + 127u) << 23) * gbc_bits_f32((ni - half + 127u) << 23);
  const float low = x < -104.0f ? 0.0f : y; /* nan stays nan: both comparisons are false */
  return x > 89.0f ? __builtin_inff() : low;
#endif
}
GBC_FN double gbc_exp(double x) { return GBC_MATH(exp)(GBC_OPAQUE(x)); }

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* erf(a) / a - 1 as a polynomial in z = a^2 for a in [0, 1] (absolute error 1.3e-9): erf(a) is
 * then a + a q, rounded once by a fused multiply-add. Coefficients fitted near-minimax with each
 * one rounded to float before the next was fitted. */
GBC_FN float gbc_erf_small_q(float z) {
  return gbc_horner(z, 7.920368080e-05f, -8.030761383e-04f, 5.190733820e-03f, -2.685512602e-02f, 1.128361821e-01f,
                    -3.761262894e-01f, 1.283791661e-01f);
}
/* scale * erfc(a) for a = a_hi + a_lo in [0.5, 10.5], given a^2 = sq_hi + sq_lo exactly:
 * e^(-a^2) F(a) with F = t K(t), t = 1 / (1 + a/2), K a fit of erfc(a) e^(a^2) / t (relative
 * error 3.4e-10). e^(-a^2) is e^(-sq_hi) (1 - sq_lo): a rounded square would cost |a^2| ulps.
 * t's rounding, and a_lo, change F by g rho where t (1 + rho) is the exact t and g, about
 * d log F / d log t, is 0.96 + 1.4 t (within 0.03): corrected to first order. scale (0.5 x in
 * gelu) multiplies F before e^(-a^2), so that a result near the subnormal range rounds once. */
GBC_FN float gbc_erfc_large(float a_hi, float a_lo, float sq_hi, float sq_lo, float scale) {
  const float h = 0.5f * a_hi;
  const float d = 1.0f + h;
  const float big = h > 1.0f ? h : 1.0f, little = h > 1.0f ? 1.0f : h;
  const float d_lo = (little - (d - big)) + 0.5f * a_lo; /* 1 + a/2 = d + d_lo */
  const float t = 1.0f / d;
  const float rho = gbc_fma(-d_lo, t, gbc_fma(-t, d, 1.0f));
  const float k = gbc_horner(t, 6.273176521e-02f, -3.288419843e-01f, 6.902273297e-01f, -6.882087588e-01f, 3.054814041e-01f,
                            -1.430075020e-01f, 1.200244650e-01f, 1.698884368e-01f, 2.475676686e-01f, 2.820457816e-01f,
                            2.820962369e-01f);
  const float f0 = t * k;
  const float f = scale * gbc_fma(f0 * rho, gbc_fma(1.4f, t, 0.96f), f0);
  const float e = gbc_exp(-sq_hi);
  return gbc_fma(e, -sq_lo, e) * f;
}
#endif

GBC_FN float gbc_log(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return GBC_MATH(log)(x);
#else
  /* Cephes' logf: x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1 (exact), log(1 + f) =
   * f - f^2/2 + f^3 P(f), k ln2 added in two parts; subnormals are scaled by 2^25 first. At most
   * 0.83 ulp from the true log over every float (FreeBSD's logf, with a division, 0.84), and a
   * quarter faster in vector loops (the log of masked softmax's store pass: docs/performance.md). */
  const uint32_t ux = gbc_f32_bits(x);
  const bool subnormal = ux < 0x00800000u;
  uint32_t ix = gbc_f32_bits(x * (subnormal ? 33554432.0f : 1.0f));
  ix += 0x3f800000u - 0x3f3504f3u;
  const int32_t k = (int32_t)(ix >> 23) - 0x7f - (subnormal ? 25 : 0);
  ix = (ix & 0x007fffffu) + 0x3f3504f3u;
  const float f = gbc_bits_f32(ix) - 1.0f;
  const float z = f * f;
  const float p = gbc_horner(f, 7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                             -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f);
  const float dk = (float)k;
  float y = f * z * p;
  y = gbc_fma(dk, -2.12194440e-4f, y);
  y = gbc_fma(-0.5f, z, y);
  const float r = gbc_fma(dk, 0.693359375f, f + y);
  /* Outside (0, inf): negatives give NaN, +-0 -inf, +inf and NaN themselves. */
  const bool finite_positive = (x > 0.0f) & (x < __builtin_inff());
  const float special = x < 0.0f ? gbc_bits_f32(0x7fc00000u) : (x == 0.0f ? -__builtin_inff() : x);
  return finite_positive ? r : special;
#endif
}
GBC_FN double gbc_log(double x) { return GBC_MATH(log)(GBC_OPAQUE(x)); }

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* tanh, sigmoid and silu in two steps on the CPU: the exp, then what follows it (gbc_tanh(x) is
 * defined as gbc_tanh_finish(x, gbc_tanh_exp(x)), so split or not it is one result; the codegen's
 * two_steps() names these three ops). Generated CPU kernels may run
 * the steps as passes of their own over a block of elements (cpu_codegen.cpp): an exp and a
 * division in one chain of dependent vector instructions leave the out-of-order core waiting. */
/* e^(2|x|), limited to e^88: past |x| = 44 tanh rounds to 1 all the same (NaN stays NaN). */
GBC_FN float gbc_tanh_exp(float x) {
  const float v = 2.0f * GBC_MATH(fabs)(x);
  return gbc_exp_normal(v > 88.0f ? 88.0f : v);
}
/* |x| < 0.625: |x| + |x| z P(z), z = x^2, P a Chebyshev fit (relative error 7e-10); above,
 * 1 - 2 / (e^(2|x|) + 1), which rounds to 1 once e^(2|x|) overflows. The sign is x's. */
GBC_FN float gbc_tanh_finish(float x, float exp_2a) {
  const float a = GBC_MATH(fabs)(x);
  const float z = a * a;
  float p = 0.00229274481618f;
  p = gbc_fma(p, z, -0.00834394551584f);
  p = gbc_fma(p, z, 0.021768918651f);
  p = gbc_fma(p, z, -0.0539592595772f);
  p = gbc_fma(p, z, 0.133333035569f);
  p = gbc_fma(p, z, -0.333333331721f);
  const float small = gbc_fma(a, z * p, a);
  const float large = 1.0f - 2.0f / (exp_2a + 1.0f);
  const float y = a < 0.625f ? small : large;
  return gbc_bits_f32(gbc_f32_bits(y) | (gbc_f32_bits(x) & 0x80000000u));
}
GBC_FN float gbc_sigmoid_exp(float x) { return gbc_exp(-GBC_MATH(fabs)(x)); }
/* With e = e^-|x| <= 1: 1 / (1 + e) for x >= 0, e / (1 + e) below (no overflow of e^-x, so
 * tiny results keep their value). The rounding error of 1 + e is corrected to first order,
 * q * err / d, with 1 / d taken as q or 1 - q (within an ulp of it: the correction is itself
 * below an ulp of q, so this costs nothing in accuracy and saves a second division). */
GBC_FN float gbc_sigmoid_finish(float x, float e) {
  const float d = 1.0f + e;
  const float err = (1.0f - d) + e; /* d + err == 1 + e exactly, as 1 >= e */
  const bool positive = x >= 0.0f;
  const float q = (positive ? 1.0f : e) / d;
  const float inv_d = positive ? q : 1.0f - q;
  /* A NaN returns itself: through -|x| and GCC's choice of fused negations its sign would
   * depend on how the code was vectorized, and compiled kernels match the interpreter bit for bit. */
  return x != x ? x + x : q - q * err * inv_d;
}
GBC_FN float gbc_silu_exp(float x) { return gbc_exp(-x); }
GBC_FN float gbc_silu_finish(float x, float e) { return x / (1.0f + e); }
/* The exp steps for operands the code generator knows to be small (kir::abs_bound; tanh's at most
 * 44, sigmoid's and silu's at most 87 in magnitude, NaN aside): the exp's argument stays where
 * gbc_exp_normal equals gbc_exp, so the range handling goes. Equal results, fewer instructions
 * (sigmoid of a tanh: 34 -> 22 AVX2 instructions per 8 elements). */
GBC_FN float gbc_tanh_exp_bounded(float x) { return gbc_exp_normal(2.0f * GBC_MATH(fabs)(x)); }
GBC_FN float gbc_sigmoid_exp_bounded(float x) { return gbc_exp_normal(-GBC_MATH(fabs)(x)); }
GBC_FN float gbc_silu_exp_bounded(float x) { return gbc_exp_normal(-x); }
#endif

GBC_FN float gbc_tanh(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return GBC_MATH(tanh)(x);
#else
  return gbc_tanh_finish(x, gbc_tanh_exp(x));
#endif
}
GBC_FN double gbc_tanh(double x) { return GBC_MATH(tanh)(GBC_OPAQUE(x)); }

GBC_FN float gbc_erf(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return GBC_MATH(erf)(x);
#else
  /* a + a q(a^2) up to 1; above, 1 - e^P(a - 1), P a fit of log erfc(a) weighted by erfc(a)
   * (erf's error 8e-9 absolute; a - 1 is exact): erfc <= 0.16 there, so the few ulps of e^P
   * shrink to a fraction of erf's. The polynomial takes a = 1 itself: it rounds erf(1), the erf
   * of a bool, correctly. Past a = 4, 1 - erfc(a) rounds to 1. No division, one exp. */
  const float a = GBC_MATH(fabs)(x);
  const bool below_one = a <= 1.0f;
  const float small = gbc_fma(a, gbc_erf_small_q(a * a), a);
  const float s = (below_one ? 1.0f : (a > 4.0f ? 4.0f : a)) - 1.0f;
  const float p = gbc_horner(s, 9.697717178e-05f, -1.506147208e-03f, 9.484545328e-03f, -4.127929732e-02f,
                             -8.431686759e-01f, -2.638962984e+00f, -1.849605560e+00f);
  const float y = below_one ? small : 1.0f - gbc_exp(p);
  return x != x ? x : gbc_bits_f32(gbc_f32_bits(y) | (gbc_f32_bits(x) & 0x80000000u));
#endif
}
GBC_FN double gbc_erf(double x) { return GBC_MATH(erf)(GBC_OPAQUE(x)); }

GBC_FN float gbc_sigmoid(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return 1.0f / (1.0f + GBC_MATH(exp)(-x));
#else
  return gbc_sigmoid_finish(x, gbc_sigmoid_exp(x));
#endif
}
GBC_FN double gbc_sigmoid(double x) { return 1.0 / (1.0 + GBC_MATH(exp)(GBC_OPAQUE(-x))); }

GBC_FN float gbc_gelu(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return 0.5f * x * (1.0f + GBC_MATH(erf)(x * 0.70710678118654752440f));
#else
  /* 0.5 x (1 + erf(a)), a = |x| / sqrt 2 carried as a + a_lo. Below zero 1 + erf(-a) is erfc(a),
   * taken from the series only while a < 0.5 (1 - erf(a) >= 0.48: no cancellation), else as
   * erfc itself, with a^2 = x^2 / 2 from x's exact square, so that the tail keeps its relative
   * accuracy. Past |x| = 14.85 (a = 10.5) erfc is 0 in float32. */
  const float c_hi = 0.70710676908493042f, c_lo = 1.2101617485882343e-08f; /* 1/sqrt(2) = c_hi + c_lo */
  const float ax = GBC_MATH(fabs)(x), half = 0.5f * x;
  const bool negative = x < 0.0f;
  const float a = ax * c_hi, a_lo = gbc_fma(ax, c_lo, gbc_fma(ax, c_hi, -a));
  const float erf_a = a + gbc_fma(a, gbc_erf_small_q(a * a), a_lo);
  const bool series = a < (negative ? 0.5f : 1.0f); /* not a select of two bools: a byte GCC would not vectorize */
  const float xc = series ? 1.0f : (ax > 14.849242f ? 14.849242f : ax);
  const float b = xc * c_hi, b_lo = gbc_fma(xc, c_lo, gbc_fma(xc, c_hi, -b));
  const float sq = xc * xc;
  const float c = gbc_erfc_large(b, b_lo, 0.5f * sq, 0.5f * gbc_fma(xc, xc, -sq), negative ? half : 1.0f);
  /* 0.5 x (1 + erf) and 0.5 x (2 - erfc) round once; below the series, c is 0.5 x erfc(a).
   * Past 14.85 the result is x (+inf included: inf * erfc would be nan); +-0 and nan return
   * themselves, so the sign of a zero and a nan does not depend on how the code vectorized. */
  const float y = series ? gbc_fma(0.5f * ax, erf_a, half) : (negative ? c : (ax > 14.849242f ? x : gbc_fma(-half, c, x)));
  return (x != x || x == 0.0f) ? x + x : y;
#endif
}
GBC_FN double gbc_gelu(double x) { return 0.5 * x * (1.0 + GBC_MATH(erf)(GBC_OPAQUE(x * 0.70710678118654752440))); }

GBC_FN float gbc_silu(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return x / (1.0f + gbc_exp(-x));
#else
  return gbc_silu_finish(x, gbc_silu_exp(x));
#endif
}
GBC_FN double gbc_silu(double x) { return x / (1.0 + GBC_MATH(exp)(GBC_OPAQUE(-x))); }
/* hardsigmoid and hardswish in the order ATen's CPU kernels compute them (min(max(x + 3, 0), 6) / 6,
 * and x times the clamp before the division), so float32 rounds the same; NaN propagates. */
GBC_FN float gbc_hardsigmoid(float x) { return gbc_minimum(gbc_maximum(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
GBC_FN double gbc_hardsigmoid(double x) { return gbc_minimum(gbc_maximum(x + 3.0, 0.0), 6.0) / 6.0; }
GBC_FN float gbc_hardswish(float x) { return x * gbc_minimum(gbc_maximum(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
GBC_FN double gbc_hardswish(double x) { return x * gbc_minimum(gbc_maximum(x + 3.0, 0.0), 6.0) / 6.0; }
GBC_FN float gbc_gelu_tanh(float x) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return 0.5f * x * (1.0f + gbc_tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
#else
  /* 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) as ATen rounds it
   * (-2u is -2 sqrt(2/pi) times the sum, exactly twice ATen's rounded u): one exp and one
   * division, where tanh's exp, division and small-|u| polynomial, then 1 + t, cost a tenth more
   * of the bias + gelu + residual + layer_norm kernel (docs/performance.md). e^(-2u) is taken
   * between e^-87 (1 + e rounds to 1: the result is x) and e^20, so the exp needs no range
   * handling. Above 2^25 (|u| > 8.6643397, Sleef's cutoff) ATen's float tanh(u) is -1 and its
   * result is x * 0: so is this one, and a discrete op after a gelu (eq 0, sign) sees eager's
   * zeros, not values of 1e-28. */
  const float s = x + 0.044715f * (x * x * x);
  const float a = s * -1.5957691216057308f;
  const float e = gbc_exp_normal(a < -87.0f ? -87.0f : (a > 20.0f ? 20.0f : a));
  return e > 33554432.0f ? x * 0.0f : x / (1.0f + e);
#endif
}
GBC_FN double gbc_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + GBC_MATH(tanh)(GBC_OPAQUE(0.79788456080286535588 * (x + 0.044715 * x * x * x))));
}

#define GBC_UNARY_FLOAT(name, expr_f, expr_d)   \
  GBC_FN float gbc_##name(float x) { return expr_f; } \
  GBC_FN double gbc_##name(double x) { return expr_d; }

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
GBC_UNARY_FLOAT(log1p, GBC_MATH(log1p)(GBC_OPAQUE(x)), GBC_MATH(log1p)(GBC_OPAQUE(x)))
GBC_UNARY_FLOAT(expm1, GBC_MATH(expm1)(GBC_OPAQUE(x)), GBC_MATH(expm1)(GBC_OPAQUE(x)))
#else
/* In double, then rounded: glibc's log1pf and expm1f are off by an ulp where ATen's (Sleef's, 1.0
 * ulp) may not be (log1pf(6) is 1.94591022, log(7) rounds to 1.94591010), and an exp and a ceil
 * after it turned that ulp into 8 against eager's 7 (found by the fuzzer, seed 7400938). Rounded
 * from double they are correctly rounded but for rare double roundings, so a discrete difference
 * after them is eager's own, which the float64 reference settles. */
GBC_UNARY_FLOAT(log1p, (float)GBC_MATH(log1p)((double)GBC_OPAQUE(x)), GBC_MATH(log1p)(GBC_OPAQUE(x)))
GBC_UNARY_FLOAT(expm1, (float)GBC_MATH(expm1)((double)GBC_OPAQUE(x)), GBC_MATH(expm1)(GBC_OPAQUE(x)))
#endif
GBC_UNARY_FLOAT(sqrt, GBC_MATH(sqrt)(x), GBC_MATH(sqrt)(x))
GBC_UNARY_FLOAT(rsqrt, 1.0f / GBC_MATH(sqrt)(x), 1.0 / GBC_MATH(sqrt)(x))
GBC_UNARY_FLOAT(sin, GBC_MATH(sin)(GBC_OPAQUE(x)), GBC_MATH(sin)(GBC_OPAQUE(x)))
GBC_UNARY_FLOAT(cos, GBC_MATH(cos)(GBC_OPAQUE(x)), GBC_MATH(cos)(GBC_OPAQUE(x)))
GBC_UNARY_FLOAT(reciprocal, 1.0f / x, 1.0 / x)
#undef GBC_UNARY_FLOAT

#endif /* GBC_KERNEL_PRELUDE_H_ */
