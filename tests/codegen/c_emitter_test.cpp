// The shared C emitter and the text both code generators produce from it: typed literals,
// addressing by index kind, half-precision conversions, hoisting of invariant values, one
// temporary per shared value, and refusal of malformed kernels. Checks essential lines, not
// whole listings.
#include <cmath>
#include "compiler/codegen/c_emitter.h"

#include <gtest/gtest.h>

#include <limits>
#include <regex>

#include "compiler/codegen/cpu_codegen.h"
#include "compiler/codegen/cuda_codegen.h"
#include "compiler/ir/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"

namespace gbc::codegen {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(CEmitter, LiteralsHaveExactCTypes) {
  const CDialect& cpu = cpu_dialect();
  EXPECT_EQ(literal(DType::Float32, 0.5, 0, cpu), "0.5f");
  EXPECT_EQ(literal(DType::Float32, 3.0, 0, cpu), "3.0f");
  EXPECT_EQ(literal(DType::Float32, 1e10, 0, cpu), "1e+10f");
  EXPECT_EQ(literal(DType::Float32, 0.1, 0, cpu), "0.1f");  // the float nearest 0.1, read back exactly
  EXPECT_EQ(literal(DType::Float64, 0.1, 0, cpu), "0.1");
  EXPECT_EQ(literal(DType::Float64, -0.0, 0, cpu), "-0.0");
  EXPECT_EQ(literal(DType::Float32, -std::numeric_limits<double>::infinity(), 0, cpu), "-__builtin_inff()");
  EXPECT_EQ(literal(DType::Float64, NAN, 0, cuda_dialect()), "__longlong_as_double(0x7ff8000000000000LL)");
  EXPECT_EQ(literal(DType::Int8, 0, -3, cpu), "(int8_t)-3");
  EXPECT_EQ(literal(DType::UInt8, 0, 255, cpu), "(uint8_t)255");
  EXPECT_EQ(literal(DType::Int64, 0, 12345678901, cpu), "(int64_t)12345678901LL");
  EXPECT_EQ(literal(DType::Int64, 0, std::numeric_limits<int64_t>::min(), cpu), "(int64_t)(-9223372036854775807LL - 1)");
  EXPECT_EQ(literal(DType::Bool, 0, 1, cpu), "true");
  EXPECT_THROW(literal(DType::Float16, 1.0, 0, cpu), InternalError);
}

TEST(CEmitter, ReductionIdentities) {
  const CDialect& cpu = cpu_dialect();
  EXPECT_EQ(identity_literal(kir::Combine::Sum, DType::Float64, cpu), "0.0");
  EXPECT_EQ(identity_literal(kir::Combine::Prod, DType::Int64, cpu), "(int64_t)1LL");
  EXPECT_EQ(identity_literal(kir::Combine::Max, DType::Float32, cpu), "-__builtin_inff()");
  EXPECT_EQ(identity_literal(kir::Combine::ArgMax, DType::Int16, cpu), "(int16_t)-32768");
  EXPECT_EQ(identity_literal(kir::Combine::Min, DType::UInt8, cpu), "(uint8_t)255");
  EXPECT_EQ(identity_literal(kir::Combine::Min, DType::Bool, cpu), "true");
  EXPECT_EQ(combine_function(kir::Combine::Max), "gbc_maximum");
  EXPECT_THROW(combine_function(kir::Combine::ArgMax), InternalError);
}

TEST(CEmitter, AddressesBuffersByIndexKind) {
  kir::Kernel k = testing::layer_norm_kernel(8);
  k.buffers.push_back(testing::buffer("s", DType::Float32, false, kir::IndexKind::Strided, 3));
  k.buffers.push_back(testing::buffer("so", DType::Float32, false, kir::IndexKind::Strided, 2, kir::Level::Outer));
  k.buffers.push_back(testing::buffer("ao", DType::Float32, false, kir::IndexKind::Affine, 0, kir::Level::Outer));
  CEmitter em(k, cpu_dialect());
  Indexing ix;
  ix.reduction = true;
  EXPECT_EQ(em.element(0, ix), "p0[o * inner + r]");
  EXPECT_EQ(em.element(1, ix), "p1[o * p1_s0 + r * p1_s1]");
  EXPECT_EQ(em.element(4, ix), "p4[o]");
  EXPECT_EQ(em.element(5, ix), "p5[gbc_strided_offset(&a->buffers[5], 3, o * inner + r)]");
  EXPECT_EQ(em.element(6, ix), "p6[gbc_strided_offset(&a->buffers[6], 2, o)]");
  EXPECT_EQ(em.element(7, ix), "p7[o * p7_s0]");
  ix.element[0] = "v0.v[j]";
  EXPECT_EQ(em.element(0, ix), "v0.v[j]");

  const std::string locals = em.buffer_locals("");
  EXPECT_TRUE(contains(locals, "const float* __restrict__ p0 = (const float*)a->buffers[0].data;\n"));
  EXPECT_TRUE(contains(locals, "float* __restrict__ p3 = (float*)a->buffers[3].data;\n"));
  EXPECT_TRUE(contains(locals, "const int64_t p1_s1 = a->buffers[1].s1;\n"));
  EXPECT_TRUE(contains(locals, "const int64_t p7_s0 = a->buffers[7].s0;\n"));
  EXPECT_FALSE(contains(locals, "p7_s1")) << "per-row affine buffers have no r stride";
  CEmitter cuda(k, cuda_dialect());
  EXPECT_TRUE(contains(cuda.buffer_locals(""), "(const float*)a.buffers[0].data;"));
}

TEST(CEmitter, ValuesGoToTheOutermostScopeTheyCanLiveIn) {
  const kir::Kernel k = testing::pointwise_mix_kernel();
  CEmitter em(k, cpu_dialect());
  Scope kernel_scope(Scope::Kernel, "", Indexing{});
  Scope body(Scope::Element, "  ", Indexing{}, &kernel_scope);
  for (const kir::Store& s : k.stores) em.store(s, body);
  // The broadcast scalar buffer is read once per kernel, not per element.
  EXPECT_TRUE(std::regex_search(kernel_scope.code(), std::regex(R"(^const float t\d+ = p3\[0\];\n$)")))
      << kernel_scope.code();
  // y and h share their value: computed once, stored twice (h narrowed to float16).
  EXPECT_EQ(count(body.code(), "gbc_gelu("), 1u);
  EXPECT_TRUE(std::regex_search(body.code(), std::regex(R"(p4\[i\] = t\d+;)")));
  EXPECT_TRUE(std::regex_search(body.code(), std::regex(R"(p5\[i\] = gbc_f32_to_f16\(t\d+\);)")));
  EXPECT_TRUE(contains(body.code(), "gbc_mul(")) << body.code();
  EXPECT_TRUE(contains(body.code(), ", sc0);"));
  EXPECT_EQ(em.depth(k.stores[0].value), Scope::Element);
}

TEST(CEmitter, StageResultsAndPerRowValuesAreComputedOncePerRow) {
  // The plain rows function (w and b, affine with r's stride at run time, also get a scratch one
  // that reads them through tiles).
  const std::string all = generate_cpu_kernel(testing::layer_norm_kernel(37));
  const std::string code = all.substr(0, all.find("static void layer_norm_rows_cached("));
  // mean = s0 / 37 in float64: once per row, before the second stage's loop reads it.
  ASSERT_EQ(count(code, "gbc_div(s0, 37.0)"), 1u) << code;
  const size_t mean = code.find("gbc_div(s0, 37.0)");
  const size_t stage1 = code.find("// s1 = sum over r");
  EXPECT_LT(code.find("double s0 = acc0[0];"), mean);
  EXPECT_LT(mean, code.find("#pragma omp simd", stage1));
  // The per-row output is stored after the stages, outside every loop over r.
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(\n    p4\[o\] = t\d+;\n  \}\n  if \(stream\) gbc_stream_fence\(\);\n\})"))) << code;
  // Float64 accumulators per lane; w and b read through their strides.
  EXPECT_TRUE(contains(code, "double acc1[GBC_LANES];"));
  EXPECT_TRUE(contains(code, "p1[o * p1_s0 + r * p1_s1]"));
  // The tiled function computes the mean once per row too.
  EXPECT_EQ(count(all.substr(code.size()), "gbc_div(s0, 37.0)"), 1u) << all.substr(code.size());
}

TEST(CEmitter, HalfStorageClampAndCasts) {
  const std::string half = generate_cpu_kernel(testing::half_kernel());
  EXPECT_TRUE(std::regex_search(half, std::regex(R"(const float t\d+ = gbc_f16_to_f32\(p0\[i\]\);)")));
  EXPECT_TRUE(std::regex_search(half, std::regex(R"(const float t\d+ = gbc_bf16_to_f32\(p1\[i\]\);)")));
  EXPECT_TRUE(std::regex_search(half, std::regex(R"(p3\[i\] = gbc_f32_to_bf16\(t\d+\);)"))) << half;
  // A value rounded to the buffer's half type by a cast is narrowed once, without the rounding.
  kir::Kernel cast = testing::half_kernel();
  cast.stores = {{2, kir::op("round_float16", DType::Float32, {kir::load(0, DType::Float32)})},
                 {3, kir::op("round_bfloat16", DType::Float32, {kir::load(1, DType::Float32)})},
                 {4, kir::op("round_float16", DType::Float32, {kir::load(1, DType::Float32)})}};
  // No costly op in the store pass: contiguous outputs are stored through d<b>, the block's start
  // in the output (or a block that streams past the caches).
  const std::string narrowed = generate_cpu_kernel(cast);
  EXPECT_TRUE(std::regex_search(narrowed, std::regex(R"(d2\[k\] = gbc_f32_to_f16\(t\d+\);)"))) << narrowed;
  EXPECT_TRUE(std::regex_search(narrowed, std::regex(R"(d3\[k\] = gbc_f32_to_bf16\(t\d+\);)"))) << narrowed;
  EXPECT_EQ(count(narrowed, "gbc_round_float16("), 1u) << "only the float32 output keeps its rounding:\n" << narrowed;
  EXPECT_EQ(count(narrowed, "gbc_round_bfloat16("), 0u) << narrowed;
  const std::string ints = generate_cpu_kernel(testing::int8_kernel());
  EXPECT_TRUE(std::regex_search(ints, std::regex(R"(gbc_clamp_max\(gbc_clamp_min\(t\d+, \(int8_t\)-5\), \(int8_t\)7\))"))) << ints;
  EXPECT_TRUE(std::regex_search(ints, std::regex(R"(const int8_t t\d+ = gbc_cast_int8\(t\d+\);)")));
  EXPECT_TRUE(std::regex_search(ints, std::regex(R"(gbc_sub\(t\d+, \(int8_t\)100\))")));
  EXPECT_TRUE(std::regex_search(ints, std::regex(R"(const bool t\d+ = gbc_lt\(t\d+, t\d+\);)")));
}

TEST(CpuCodegenText, LoopShapes) {
  const std::string pointwise = generate_cpu_kernel(testing::pointwise_mix_kernel());
  EXPECT_TRUE(contains(pointwise, "extern \"C\" void pointwise_mix(const GbcKernelArgs* a) {"));
  EXPECT_TRUE(contains(pointwise, "gbc_strided_offsets(&a->buffers[2], 2, i0, m, off2);"));
  EXPECT_TRUE(contains(pointwise, "p2[off2[k]]"));
  EXPECT_TRUE(contains(pointwise, "p1[i * p1_s0]"));
  EXPECT_TRUE(contains(pointwise, "gbc_cpu_threads(n, n, a->num_threads)"));
  EXPECT_TRUE(contains(pointwise, "#pragma omp parallel for num_threads(threads)"));
  EXPECT_TRUE(contains(pointwise, "// kernel pointwise_mix pointwise(i) {")) << "the listing heads the kernel";

  const std::string contiguous = generate_cpu_kernel(testing::int8_kernel());
  // Contiguous outputs are written per block, to the output or to a block that streams past the
  // caches (GbcKernelArgs::stream_stores); no offsets without strided buffers.
  EXPECT_TRUE(contains(contiguous, "  for (int64_t i0 = begin; i0 < end; i0 += GBC_BLOCK) {\n")) << contiguous;
  EXPECT_TRUE(std::regex_search(contiguous, std::regex(R"(\* __restrict__ const d(\d+) = stream \? sb\1 : p\1 \+ i0;)"))) << contiguous;
  EXPECT_TRUE(std::regex_search(contiguous, std::regex(R"(gbc_stream_store\(p(\d+) \+ i0, sb\1, m \* \(int64_t\)sizeof)"))) << contiguous;
  EXPECT_FALSE(contains(contiguous, "gbc_strided_offsets")) << contiguous;

  // Two costly float32 values (tanh, sigmoid), each computed in two steps (the exp, then the
  // rest): a pass over the block for each step, writing block arrays, the last step in the
  // stores' pass.
  const std::string staged = generate_cpu_kernel(testing::half_kernel());
  EXPECT_TRUE(contains(staged, "  for (int64_t i0 = begin; i0 < end; i0 += GBC_BLOCK) {\n")) << staged;
  std::smatch tanh_exp, tanh_x, tanh_pass;
  ASSERT_TRUE(std::regex_search(staged, tanh_exp, std::regex(R"((blk\d+)\[k\] = gbc_tanh_exp\((t\d+)\);\n +(blk\d+)\[k\] = \2;)"))) << staged;
  ASSERT_TRUE(std::regex_search(staged, tanh_pass, std::regex("(blk\\d+)\\[k\\] = gbc_tanh_finish\\(" + tanh_exp[3].str() + "\\[k\\], " + tanh_exp[1].str() + "\\[k\\]\\);"))) << staged;
  EXPECT_TRUE(std::regex_search(staged, std::regex(R"(const float t\d+ = gbc_sigmoid_finish\(blk\d+\[k\], blk\d+\[k\]\);)"))) << staged;
  EXPECT_TRUE(std::regex_search(staged, std::regex("gbc_add\\(" + tanh_pass[1].str() + "\\[k\\], t\\d+\\)"))) << staged;
  EXPECT_EQ(count(staged, "gbc_tanh_exp("), 1u);
  EXPECT_EQ(count(staged, "gbc_tanh("), 0u);
  EXPECT_EQ(count(staged, "#pragma omp simd"), 4u);

  const std::string argmax = generate_cpu_kernel(testing::argmax_kernel(DType::Float32));
  EXPECT_TRUE(std::regex_search(argmax, std::regex(R"(const bool (take\d+) = gbc_argmax_better\(t\d+, accv0\[l\]\);)")));
  EXPECT_TRUE(contains(argmax, "acci0[l] = take"));
  EXPECT_TRUE(contains(argmax, "gbc_argmax_merge(best0, s0, accv0[l], acci0[l]);"));
  EXPECT_TRUE(contains(argmax, "p1[o] = s0;"));
  // The first pass over a row prefetches the next row's contiguous inputs, not the outputs.
  EXPECT_TRUE(contains(argmax, "if (o + 1 < o_end) {\n        for (int64_t j = 0; j < m; j += 16) __builtin_prefetch(p0 + (o + 1) * inner + r0 + j, 0, 3);\n")) << argmax;
  EXPECT_FALSE(contains(argmax, "__builtin_prefetch(p1"));
}

TEST(CudaCodegenText, KernelShapes) {
  const std::string pointwise = generate_cuda_kernel(testing::pointwise_mix_kernel());
  EXPECT_TRUE(contains(pointwise, "extern \"C\" __global__ void __launch_bounds__(256) pointwise_mix(const __grid_constant__ GbcCudaKernelArgs a) {"));
  EXPECT_TRUE(contains(pointwise, "const GbcVec<float, 8> v0 = *(const GbcVec<float, 8>*)(p0 + i0);"));
  EXPECT_TRUE(contains(pointwise, "*(GbcVec<uint16_t, 8>*)(p5 + i0) = v5;"));
  EXPECT_TRUE(contains(pointwise, "p2[gbc_strided_offset(&a.buffers[2], 2, i)]"));
  EXPECT_TRUE(contains(pointwise, "for (int64_t i = nv * 8 + tid; i < n; i += stride) {"));

  const std::string softmax = generate_cuda_kernel(testing::softmax_kernel());
  EXPECT_TRUE(contains(softmax, "__shared__ long long gbc_scratch[64];"));
  // Three schedules, chosen per call: registers, vector steps, elements.
  EXPECT_TRUE(contains(softmax, "if (gbc_cached) {"));
  EXPECT_TRUE(contains(softmax, "GbcVec<float, 4> c0[8];"));
  EXPECT_TRUE(contains(softmax, "__launch_bounds__(512, 2)"))
      << "32 elements per thread: blocks of 512 at most, two resident (64 registers a thread)";
  EXPECT_TRUE(contains(softmax, "#pragma unroll 4\n")) << "the vector schedule keeps four loads in flight";
  EXPECT_TRUE(contains(softmax, "} else if (gbc_vec) {"));
  EXPECT_TRUE(contains(softmax, "for (int64_t r = threadIdx.x; r < fold_inner; r += blockDim.x) {"));
  EXPECT_TRUE(contains(softmax, "*(GbcVec<float, 4>*)(p1 + o * inner + rv) = w1;"));
  EXPECT_FALSE(contains(softmax, "a.splits")) << "two-stage rows are never split";
  EXPECT_TRUE(contains(softmax, "const float s0 = gbc_block_fold(acc0, GbcFoldMax(), gbc_scratch);"));
  EXPECT_TRUE(contains(softmax, "const float s1 = gbc_block_fold(acc1, GbcFoldSum(), gbc_scratch);"));
  EXPECT_LT(softmax.find("s1 = gbc_block_fold"), softmax.find("if (row_ok) {")) << "stores follow both stages";

  const std::string argmax = generate_cuda_kernel(testing::argmax_kernel(DType::Int16));
  EXPECT_TRUE(contains(argmax, "int16_t accv0 = (int16_t)-32768;"));
  EXPECT_TRUE(contains(argmax, "gbc_block_argmax(accv0, acci0, gbc_scratch);"));
  EXPECT_TRUE(contains(argmax, "if (row_ok && threadIdx.x == 0) {"));
}

// A costly value that a later pass reads again is computed once per element in the Cached
// schedule and kept in the registers of an input no later pass reads; with no such input it is
// computed again.
TEST(CudaCodegenText, KeptValuesTakeTheRegistersOfAnInputNoLaterPassReads) {
  // The Cached branch: from its register loads to the vector schedule's branch.
  auto cached_branch = [](const std::string& source) {
    const size_t begin = source.find("if (gbc_cached) {");
    return source.substr(begin, source.find("} else if (gbc_vec) {") - begin);
  };
  const std::string softmax = cached_branch(generate_cuda_kernel(testing::softmax_kernel()));
  EXPECT_TRUE(contains(softmax, "c0[j].v[e] = ")) << softmax;
  EXPECT_EQ(softmax.find("gbc_exp"), softmax.rfind("gbc_exp")) << "exp once per element:\n" << softmax;
  // g is read by the store pass: exp(x) goes into x's registers.
  const std::string gate = cached_branch(generate_cuda_kernel(testing::exp_gate_kernel()));
  EXPECT_TRUE(contains(gate, "c0[j].v[e] = ")) << gate;
  EXPECT_FALSE(contains(gate, "c1[j].v[e] = ")) << gate;
  // x is read again: nothing to overwrite, exp computed in both passes.
  const std::string again = cached_branch(generate_cuda_kernel(testing::exp_gate_kernel(true)));
  EXPECT_FALSE(contains(again, "[j].v[e] = ")) << again;
  EXPECT_NE(again.find("gbc_exp"), again.rfind("gbc_exp")) << again;
  // Faulty kernels keep their plain passes (the reduce-bound fault folds one element less).
  kir::Kernel faulty = testing::softmax_kernel();
  faulty.fault = InjectedFault::ReduceBound;
  EXPECT_FALSE(contains(cached_branch(generate_cuda_kernel(faulty)), "c0[j].v[e] = "));
}

TEST(CEmitter, RefusesMalformedKernels) {
  kir::Kernel wrong_load = testing::half_kernel();
  wrong_load.stores[0].value = kir::op("add", DType::Float32, {kir::load(0, DType::Float64), kir::load(1, DType::Float32)});
  EXPECT_THROW(generate_cpu_kernel(wrong_load), InternalError);

  kir::Kernel half_value = testing::half_kernel();
  half_value.stores[2].value = kir::load(0, DType::Float16);
  EXPECT_THROW(generate_cpu_kernel(half_value), InternalError);

  kir::Kernel store_to_input = testing::half_kernel();
  store_to_input.stores[0].buffer = 0;
  EXPECT_THROW(generate_cuda_kernel(store_to_input), InternalError);

  kir::Kernel bad_name = testing::half_kernel();
  bad_name.name = "half kernel";
  EXPECT_THROW(generate_cpu_kernel(bad_name), InternalError);

  kir::Kernel per_row_reads_row = testing::argmax_kernel(DType::Float32);
  per_row_reads_row.stores[1].value = kir::load(0, DType::Float32);  // a full-level value in a per-row store
  EXPECT_THROW(generate_cpu_kernel(per_row_reads_row), InternalError);

  EXPECT_THROW(generate_cpu_source({testing::half_kernel(), testing::half_kernel()}, "twice"), InternalError);
}

}  // namespace
}  // namespace gbc::codegen
