/* The few C++ standard library functions that kernel_prelude.h and generated CPU kernels call,
 * each defined as the GCC builtin libstdc++'s own inline definition calls, so a generated CPU
 * source needs none of <cmath>, <cstring>, <cstdlib>: their precompiled form is 12 of the 15 MB
 * every module's compiler run loads (0.04 s of CPU of a median module's 0.25 s; docs/fuzzing.md,
 * "With a cold kernel cache"). The generated code is the same instruction for instruction.
 * Embedded before the prelude in generated CPU sources only (GBC_KERNEL_STD tells the prelude and
 * kernel_support.h to skip their standard includes); host code includes the real headers.
 * Tests: tests/codegen/cpu_codegen_test.cpp (KernelStd).
 */
#ifndef GBC_KERNEL_STD_H_
#define GBC_KERNEL_STD_H_
#define GBC_KERNEL_STD 1

#include <stddef.h>
#include <stdint.h>

namespace std {
#define GBC_STD_UNARY(fn)                                             \
  inline float fn(float x) { return __builtin_##fn##f(x); }           \
  inline double fn(double x) { return __builtin_##fn(x); }
#define GBC_STD_BINARY(fn)                                            \
  inline float fn(float x, float y) { return __builtin_##fn##f(x, y); } \
  inline double fn(double x, double y) { return __builtin_##fn(x, y); }
GBC_STD_UNARY(ceil)
GBC_STD_UNARY(cos)
GBC_STD_UNARY(erf)
GBC_STD_UNARY(exp)
GBC_STD_UNARY(expm1)
GBC_STD_UNARY(fabs)
GBC_STD_UNARY(floor)
GBC_STD_UNARY(log)
GBC_STD_UNARY(log1p)
GBC_STD_UNARY(nearbyint)
GBC_STD_UNARY(sin)
GBC_STD_UNARY(sqrt)
GBC_STD_UNARY(tanh)
GBC_STD_BINARY(fmod)
GBC_STD_BINARY(pow)
#undef GBC_STD_UNARY
#undef GBC_STD_BINARY
inline void* memcpy(void* to, const void* from, size_t n) { return __builtin_memcpy(to, from, n); }
inline void* malloc(size_t n) { return __builtin_malloc(n); }
inline void free(void* p) { __builtin_free(p); }
}  // namespace std

#endif  // GBC_KERNEL_STD_H_
