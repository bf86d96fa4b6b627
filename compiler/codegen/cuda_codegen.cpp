#include "compiler/codegen/cuda_codegen.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>

#include "compiler/codegen/c_emitter.h"
#include "compiler/codegen/cuda_tuning.h"
#include "compiler/codegen/reused_values.h"
#include "compiler/codegen/embedded_sources.h"
#include "compiler/codegen/translation_unit.h"
#include "compiler/cuda/module_cache.h"
#include "compiler/ir/diagnostics.h"

namespace gbc::codegen {
namespace {

constexpr unsigned kPointwiseThreads = 256;
constexpr unsigned kRowThreads = 256;  // threads per block for rows of up to a warp
constexpr unsigned kSplitThreads = 512;  // threads per block of a split row
constexpr int64_t kSplitMinInner = 16384;  // rows split from this length
constexpr int64_t kSplitMinPart = 4096;  // elements per part at least

const char* fold_object(kir::Combine c) {
  switch (c) {
    case kir::Combine::Sum: return "GbcFoldSum()";
    case kir::Combine::Prod: return "GbcFoldProd()";
    case kir::Combine::Max: return "GbcFoldMax()";
    case kir::Combine::Min: return "GbcFoldMin()";
    case kir::Combine::ArgMax: break;
  }
  internal_error("codegen: ArgMax folds through gbc_block_argmax");
}

unsigned next_pow2(int64_t v) {
  unsigned p = 1;
  while (p < v && p < (1u << 30)) p *= 2;
  return p;
}

// Threads per block of a split row: kSplitThreads within the kernel's launch bound.
unsigned split_threads(const CudaRowLayout& layout) { return std::min(kSplitThreads, cuda_max_row_threads(layout.elements)); }

// Elements of each cached input per thread: kCudaCachedRowBytes of registers shared by the cached
// inputs, a power of two from one vector access (or 4) up to 32.
int cuda_row_elements(int cached_bytes, int width) {
  if (const int forced = cuda_tuning().row_elements) return std::max(forced, width);
  int elements = 32;
  while (elements > 4 && cached_bytes > 0 && elements * cached_bytes > kCudaCachedRowBytes) elements /= 2;
  return std::max(elements, width);
}

// Writes the CUDA C++ of one kernel (see cuda_codegen.h for the loop shapes).
class CudaKernelWriter {
 public:
  explicit CudaKernelWriter(const kir::Kernel& kernel)
      : k_(kernel), em_(kernel, cuda_dialect()), layout_(cuda_row_layout(kernel)) {
    if (k_.kind == kir::KernelKind::Reduction && layout_.width > 1 && k_.fault == InjectedFault::None) plan_kept();
  }

  std::string write() {
    std::string out = as_comment(kir::print_kernel(k_));
    // Launch bounds: the registers of the largest block cuda_launch_shape gives, so that launches
    // never fail for want of registers (the compiler spills instead).
    const unsigned max_threads =
        k_.kind == kir::KernelKind::Pointwise ? kPointwiseThreads : cuda_max_row_threads(layout_.elements);
    if (k_.cuda_rows != kir::CudaRows::All)
      out += std::string("// rows of class ") + kir::cuda_rows_name(k_.cuda_rows) + " only (cuda_row_class)\n";
    // A reduction's minimum of resident blocks caps its registers (cuda_tuning.h), never below
    // 64 a thread: at most 1024 threads' worth of blocks (2048 would force 32 and spill).
    const int min_blocks = k_.kind == kir::KernelKind::Pointwise
                               ? 0
                               : std::min<int>(cuda_tuning().min_blocks, static_cast<int>(1024 / max_threads));
    const std::string bounds = std::to_string(max_threads) + (min_blocks > 1 ? ", " + std::to_string(min_blocks) : "");
    out += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + k_.name +
           "(const __grid_constant__ GbcCudaKernelArgs a) {\n";
    out += k_.kind == kir::KernelKind::Pointwise ? pointwise() : reduction();
    return out + "}\n";
  }

 private:
  std::string pointwise() {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    const int width = cuda_vector_width(k_);
    std::set<int> stored;
    for (const kir::Store& s : k_.stores) stored.insert(s.buffer);
    // Contiguous buffers move through registers in the vector path (outputs only if stored).
    std::vector<int> vectored;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (buf.index == kir::IndexKind::Contiguous && (!buf.is_output || stored.count(static_cast<int>(b))))
        vectored.push_back(static_cast<int>(b));
    }

    std::string vector_loop;
    if (width > 1) {
      Indexing ix;
      for (int b : vectored) ix.element[b] = "v" + std::to_string(b) + ".v[j]";
      Scope body(Scope::Element, "      ", ix, &kernel_scope);
      body.line("const int64_t i = i0 + j;");
      for (const kir::Store& s : k_.stores) em_.store(s, body);
      const std::string w = std::to_string(width);
      std::string aligned;
      for (int b : vectored) {
        aligned += std::string(aligned.empty() ? "" : " && ") + "gbc_aligned(" + buffer_pointer(b) + ", alignof(GbcVec<" +
                   c_type(k_.buffers[static_cast<size_t>(b)].dtype) + ", " + w + ">))";
      }
      vector_loop += "  const int64_t nv = (" + aligned + ") ? n / " + w + " : 0;\n";
      // Unrolled, several steps' loads are in flight per thread (cuda_tuning.h).
      if (cuda_tuning().pointwise_unroll > 1)
        vector_loop += "  #pragma unroll " + std::to_string(cuda_tuning().pointwise_unroll) + "\n";
      vector_loop += "  for (int64_t v = tid; v < nv; v += stride) {\n";
      vector_loop += "    const int64_t i0 = v * " + w + ";\n";
      for (int b : vectored) {
        const kir::Buffer& buf = k_.buffers[static_cast<size_t>(b)];
        const std::string vec_type = "GbcVec<" + c_type(buf.dtype) + ", " + w + ">";
        const std::string var = "v" + std::to_string(b);
        if (buf.is_output) vector_loop += "    " + vec_type + " " + var + ";\n";
        else vector_loop += "    const " + vec_type + " " + var + " = *(const " + vec_type + "*)(" + buffer_pointer(b) + " + i0);\n";
      }
      vector_loop += "    #pragma unroll\n    for (int j = 0; j < " + w + "; ++j) {\n" + body.code() + "    }\n";
      for (int b : vectored) {
        const kir::Buffer& buf = k_.buffers[static_cast<size_t>(b)];
        if (!buf.is_output) continue;
        vector_loop += "    *(GbcVec<" + c_type(buf.dtype) + ", " + w + ">*)(" + buffer_pointer(b) + " + i0) = v" +
                       std::to_string(b) + ";\n";
      }
      vector_loop += "  }\n";
    }
    Scope scalar(Scope::Element, "    ", Indexing{}, &kernel_scope);
    for (const kir::Store& s : k_.stores) em_.store(s, scalar);

    std::string out = "  const int64_t n = a.numel;\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code() + injected_crash();
    out += "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n";
    out += "  const int64_t stride = (int64_t)gridDim.x * blockDim.x;\n";
    if (width > 1) out += vector_loop;
    else out += "  const int64_t nv = 0;\n";
    out += "  for (int64_t i = nv * " + std::to_string(width) + " + tid; i < n; i += stride) {\n" + scalar.code() + "  }\n";
    return out;
  }

  // ---- Values kept in registers (Cached schedule) ----
  // A costly value that one pass computes and later passes read again (reused_values.h) replaces
  // the registers of a cached input of its dtype that no later pass reads: softmax's exp(x - max)
  // takes x's place after the sum's pass, and the store pass only scales it. No register more,
  // and a third fewer instructions in softmax's kernel.
  struct KeptValue {
    kir::ExprPtr value;
    size_t stage = 0;  // the pass that computes it and writes it over the input's registers
    int buffer = 0;    // the cached input whose registers hold it from then on
  };

  void plan_kept() {
    const std::vector<ReusedValue> reused = values_read_by_later_passes(k_, em_);
    for (const ReusedValue& v : reused) {
      std::set<const kir::Expr*> held;  // read from registers after v's pass
      for (const KeptValue& kv : kept_) held.insert(kv.value.get());
      held.insert(v.value.get());
      std::set<int> live;  // inputs a later pass still loads
      for (size_t j = v.stage + 1; j < k_.stages.size(); ++j) loads_outside(k_.stages[j].value, held, live);
      for (const kir::Store& st : k_.stores)
        if (k_.buffers.at(static_cast<size_t>(st.buffer)).level == kir::Level::Full) loads_outside(st.value, held, live);
      for (int b : layout_.loaded) {
        const bool taken = std::any_of(kept_.begin(), kept_.end(), [b](const KeptValue& kv) { return kv.buffer == b; });
        if (taken || live.count(b) || k_.buffers.at(static_cast<size_t>(b)).dtype != v.value->dtype) continue;
        kept_.push_back({v.value, v.stage, b});
        break;
      }
    }
  }
  // The buffers e loads, except through the values in `held`.
  static void loads_outside(const kir::ExprPtr& e, const std::set<const kir::Expr*>& held, std::set<int>& out) {
    if (held.count(e.get())) return;
    if (e->kind == kir::ExprKind::Load) out.insert(static_cast<int>(e->i));
    for (const kir::ExprPtr& a : e->args) loads_outside(a, held, out);
  }
  // In a Cached element body of pass `pass`: the values earlier passes kept name their registers.
  void use_kept(size_t pass, Scope& body) const {
    for (const KeptValue& kv : kept_)
      if (kv.stage < pass) body.bind(kv.value.get(), cached_name(kv.buffer) + "[j].v[e]");
  }
  // At the end of pass `pass`'s Cached element body: the values it keeps go into their registers.
  void keep(size_t pass, Scope& body) {
    for (const KeptValue& kv : kept_)
      if (kv.stage == pass) body.line(cached_name(kv.buffer) + "[j].v[e] = " + em_.value(kv.value, body) + ";");
  }

  // ---- Reductions ----
  // How a loop over a thread's elements of the row reaches them (cuda_codegen.h has the schedules).
  enum class Schedule {
    Scalar,  // r = first + threadIdx.x, step blockDim.x; element loads and stores one by one
    Vector,  // V consecutive elements per step, the vector buffers moved by one access
    Cached,  // the vector buffers' elements of the row held in registers, read once per row
  };

  // The register array or vector that holds vector buffer b's elements in a loop body.
  static std::string cached_name(int b) { return "c" + std::to_string(b); }
  static std::string stored_name(int b) { return "w" + std::to_string(b); }
  std::string vec_type(int b) const {
    return "GbcVec<" + c_type(k_.buffers.at(static_cast<size_t>(b)).dtype) + ", " + std::to_string(layout_.width) + ">";
  }

  // Opens the loop over the thread's elements of [begin, end) (end a multiple of the vector width
  // in the vector schedules) with `r` defined in the body; returns the closing text. The body's
  // indent is `in` + 4 (Scalar: + 2). Element reads of the vector buffers use `ix` (element map).
  // `before_elements` (vector schedules) goes where a step's V elements are about to be visited.
  std::string open_loop(Schedule sched, const std::string& in, const std::string& begin, const std::string& end,
                        bool with_loads, std::string& code, Indexing& ix, const std::string& before_elements = "") const {
    const std::string w = std::to_string(layout_.width);
    const std::string from = begin == "0" ? "" : begin + " + ";
    if (sched == Schedule::Scalar) {
      code += in + "for (int64_t r = " + from + "threadIdx.x; r < " + end + "; r += blockDim.x) {\n";
      return in + "}\n";
    }
    std::string close;
    if (sched == Schedule::Cached) {
      code += in + "#pragma unroll\n" + in + "for (int j = 0; j < " + std::to_string(layout_.items()) + "; ++j) {\n";
      code += in + "  const int64_t rv = ((int64_t)j * blockDim.x + threadIdx.x) * " + w + ";\n";
      code += in + "  if (rv < " + end + ") {\n";
      for (int b : layout_.loaded) ix.element[b] = cached_name(b) + "[j].v[e]";
      close = in + "  }\n" + in + "}\n";
    } else {
      // Unrolled so that several vector loads per thread are in flight (memory-level parallelism).
      code += in + "#pragma unroll " + std::to_string(cuda_tuning().unroll) + "\n";
      code += in + "for (int64_t rv = " + from + "(int64_t)threadIdx.x * " + w + "; rv < " + end +
              "; rv += (int64_t)blockDim.x * " + w + ") {\n";
      code += in + "  if (true) {\n";
      if (with_loads)
        for (int b : layout_.loaded)
          code += in + "    const " + vec_type(b) + " " + cached_name(b) + " = *(const " + vec_type(b) + "*)(" +
                  buffer_pointer(b) + " + o * inner + rv);\n";
      for (int b : layout_.loaded) ix.element[b] = cached_name(b) + ".v[e]";
      close = in + "  }\n" + in + "}\n";
    }
    code += before_elements;
    code += in + "    #pragma unroll\n" + in + "    for (int e = 0; e < " + w + "; ++e) {\n";
    code += in + "      const int64_t r = rv + e;\n";
    return in + "    }\n" + close;
  }

  // Folds v into the stage's accumulator (the injected fp16-accum bug rounds floating sums).
  void fold_line(const kir::Stage& st, const std::string& k, const std::string& v, Scope& body) {
    const std::string acc = "acc" + k;
    if (st.combine == kir::Combine::ArgMax) {
      const std::string take = em_.fresh("take");
      body.line("const bool " + take + " = gbc_argmax_better(" + v + ", accv" + k + ");");
      body.line("accv" + k + " = " + take + " ? " + v + " : accv" + k + ";");
      body.line("acci" + k + " = " + take + " ? r : acci" + k + ";");
    } else if (k_.fault == InjectedFault::Fp16Accum && st.combine == kir::Combine::Sum && is_floating(st.acc_dtype)) {
      // The injected fp16-accum bug: the running sum is kept in float16 precision.
      body.line(acc + " = (" + c_type(st.acc_dtype) + ")gbc_round_float16((float)gbc_add(" + acc + ", " + v + "));");
    } else {
      body.line(acc + " = " + combine_function(st.combine) + "(" + acc + ", " + v + ");");
    }
  }

  // One stage: each thread folds its elements of [begin, fold_end), then the row folds into
  // s<k> (every thread gets it), or, with `partial`, into that local (a split row's part).
  void stage(size_t index, Scope& row, Schedule sched, const std::string& begin, const std::string& end,
             const std::string& partial = "") {
    const kir::Stage& st = k_.stages[index];
    GBC_INTERNAL_ASSERT(st.value && st.value->dtype == st.acc_dtype,
                        "codegen: stage " + std::to_string(index) + " of " + k_.name + " folds a value of another dtype");
    const std::string k = std::to_string(index);
    const std::string type = c_type(st.acc_dtype);
    const bool argmax = st.combine == kir::Combine::ArgMax;
    row.line("// s" + k + " = " + kir::combine_name(st.combine) + " over r");
    row.line(type + " " + (argmax ? "accv" : "acc") + k + " = " + identity_literal(st.combine, st.acc_dtype, cuda_dialect()) + ";");
    if (argmax) row.line("int64_t acci" + k + " = 0;");
    std::string code;
    Indexing ix;
    ix.reduction = true;
    const std::string close = open_loop(sched, row.indent(), begin, end, true, code, ix);
    const std::string body_indent = row.indent() + (sched == Schedule::Scalar ? "  " : "      ");
    Scope body(Scope::Element, body_indent, ix, &row);
    if (sched == Schedule::Cached) use_kept(index, body);
    // The injected reduce-bound bug folds one element less than the row has.
    const bool bound = sched != Schedule::Scalar && k_.fault == InjectedFault::ReduceBound;
    if (bound) body.line("if (r < fold_inner) {");
    fold_line(st, k, em_.value(st.value, body), body);
    if (bound) body.line("}");
    if (sched == Schedule::Cached) keep(index, body);
    row.append(code + body.code() + close);
    if (argmax) {
      row.line("gbc_block_argmax(accv" + k + ", acci" + k + ", gbc_scratch);");
      row.line("const int64_t s" + k + " = acci" + k + ";");
    } else {
      row.line("const " + type + " " + (partial.empty() ? "s" + k : partial) + " = gbc_block_fold(acc" + k + ", " +
               fold_object(st.combine) + ", gbc_scratch);");
    }
  }

  // The stores of every Full-level output over the row (vector outputs through registers).
  void full_stores(Scope& row, Schedule sched) {
    std::string code;
    Indexing ix;
    ix.reduction = true;
    const std::string in = row.indent() + "  ";
    std::string declare_stored;
    if (sched != Schedule::Scalar) {
      for (int b : layout_.stored) {
        declare_stored += in + "    " + vec_type(b) + " " + stored_name(b) + ";\n";
        ix.element[b] = stored_name(b) + ".v[e]";
      }
    }
    const std::string close = open_loop(sched, in, "0", "inner", true, code, ix, declare_stored);
    const std::string body_indent = in + (sched == Schedule::Scalar ? "  " : "      ");
    Scope body(Scope::Element, body_indent, ix, &row);
    if (sched == Schedule::Cached) use_kept(k_.stages.size(), body);
    for (const kir::Store& s : k_.stores)
      if (k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full) em_.store(s, body);
    std::string after;
    if (sched != Schedule::Scalar) {
      // The vector stores follow the element loop: `close` ends it, then its enclosing block.
      const std::string end_elements = in + "    }\n";
      after = end_elements;
      for (int b : layout_.stored)
        after += in + "    *(" + vec_type(b) + "*)(" + buffer_pointer(b) + " + o * inner + rv) = " + stored_name(b) + ";\n";
      after += close.substr(end_elements.size());
    } else {
      after = close;
    }
    row.line("if (row_ok) {");
    row.append(code + body.code() + after);
    row.line("}");
  }

  bool has_full_stores() const {
    for (const kir::Store& s : k_.stores)
      if (k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full) return true;
    return false;
  }

  // The per-row stores, by one thread, in `per_row` (a Row scope below `row`, or standalone).
  void row_stores(Scope& per_row) {
    for (const kir::Store& s : k_.stores)
      if (k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Outer) em_.store(s, per_row);
  }

  // One row o (row_ok says whether it is a real one) under a schedule.
  std::string row_code(Scope& kernel_scope, Schedule sched, const std::string& indent) {
    Indexing row_ix;
    row_ix.reduction = true;
    Scope row(Scope::Row, indent, row_ix, &kernel_scope);
    if (sched == Schedule::Cached) {
      const std::string w = std::to_string(layout_.width), items = std::to_string(layout_.items());
      for (int b : layout_.loaded) {
        row.line(vec_type(b) + " " + cached_name(b) + "[" + items + "];");
        row.line("#pragma unroll");
        row.line("for (int j = 0; j < " + items + "; ++j) {");
        row.line("  const int64_t rv = ((int64_t)j * blockDim.x + threadIdx.x) * " + w + ";");
        row.line("  if (rv < inner) " + cached_name(b) + "[j] = *(const " + vec_type(b) + "*)(" + buffer_pointer(b) +
                 " + o * inner + rv);");
        row.line("}");
      }
      if (cuda_tuning().prefetch && !layout_.loaded.empty()) {
        // The block's next row reaches L2 while this one is folded: its loads then wait on L2,
        // not on DRAM. One prefetch per 128-byte line.
        row.line("if (o + rows_per_step < outer) {");
        for (int b : layout_.loaded) {
          const std::string size = std::to_string(dtype_size(k_.buffers.at(static_cast<size_t>(b)).dtype));
          row.line("  for (int64_t line = threadIdx.x; line * 128 < inner * " + size + "; line += blockDim.x)");
          row.line("    gbc_prefetch_l2((const char*)(" + buffer_pointer(b) + " + (o + rows_per_step) * inner) + line * 128);");
        }
        row.line("}");
      }
    }
    const std::string end = sched == Schedule::Scalar ? "fold_inner" : "inner";
    for (size_t s = 0; s < k_.stages.size(); ++s) stage(s, row, sched, "0", end);
    if (has_full_stores()) full_stores(row, sched);
    Scope per_row(Scope::Row, indent + "  ", row_ix, &row);
    row_stores(per_row);
    if (!per_row.code().empty()) {
      row.line("if (row_ok && threadIdx.x == 0) {");
      row.append(per_row.code());
      row.line("}");
    }
    return row.code();
  }

  // A row split across `splits` blocks (one stage, per-row stores only): each block folds its part,
  // writes it to the workspace, and the last block of the row to finish (an atomic count) folds
  // the parts in order and stores: deterministic, whatever order the blocks ran in.
  std::string split_code(Scope& kernel_scope, Schedule sched, const std::string& indent) {
    const kir::Stage& st = k_.stages.at(0);
    const std::string type = c_type(st.acc_dtype);
    Indexing row_ix;
    row_ix.reduction = true;
    Scope row(Scope::Row, indent, row_ix, &kernel_scope);
    const std::string end = sched == Schedule::Scalar ? "gbc_min_i64(r_begin + chunk, fold_inner)" : "r_end";
    stage(0, row, sched, "r_begin", end, "part0");
    Scope per_row(Scope::Row, indent + "    ", row_ix, &kernel_scope);
    row_stores(per_row);
    const std::string combine = combine_function(st.combine);
    std::string out = row.code();
    out += indent + "if (threadIdx.x == 0) {\n";
    out += indent + "  gbc_parts[u] = part0;\n";
    out += indent + "  __threadfence();\n";
    out += indent + "  gbc_last = atomicAdd(&gbc_counts[o], 1u) == (unsigned)(splits - 1);\n";
    out += indent + "}\n";
    out += indent + "__syncthreads();\n";
    out += indent + "if (gbc_last && threadIdx.x == 0) {\n";
    out += indent + "  __threadfence();\n";
    out += indent + "  const volatile " + type + "* parts = gbc_parts + o * splits;\n";
    out += indent + "  " + type + " s0 = parts[0];\n";
    out += indent + "  for (int64_t q = 1; q < splits; ++q) s0 = " + combine + "(s0, (" + type + ")parts[q]);\n";
    out += indent + "  gbc_counts[o] = 0;  // ready for the next launch\n";
    out += indent + "  {\n" + per_row.code() + indent + "  }\n";
    out += indent + "}\n";
    out += indent + "__syncthreads();  // gbc_last is rewritten for the next part\n";
    return out;
  }

  std::string reduction() {
    const kir::CudaRows rows = k_.cuda_rows;
    const bool all = rows == kir::CudaRows::All;
    const bool vector = layout_.width > 1;
    const bool split_class = rows == kir::CudaRows::SplitScalar || rows == kir::CudaRows::SplitVector;
    const bool vector_class = rows != kir::CudaRows::Scalar && rows != kir::CudaRows::SplitScalar;
    GBC_INTERNAL_ASSERT(all || ((!split_class || layout_.splittable) && (!vector_class || vector)),
                        std::string("codegen: kernel ") + k_.name + " has no " + kir::cuda_rows_name(rows) + " rows");
    if (!all) return one_class(rows, split_class);
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    std::string split_scalar, split_vector;
    if (layout_.splittable) {
      split_scalar = split_code(kernel_scope, Schedule::Scalar, "        ");
      if (vector) split_vector = split_code(kernel_scope, Schedule::Vector, "        ");
    }
    const std::string row_scalar = row_code(kernel_scope, Schedule::Scalar, vector ? "        " : "    ");
    std::string row_vector, row_cached;
    if (vector) {
      row_vector = row_code(kernel_scope, Schedule::Vector, "        ");
      row_cached = row_code(kernel_scope, Schedule::Cached, "        ");
    }

    std::string out = reduction_head(kernel_scope);
    if (vector) {
      // The vector schedules need rows that start on vector boundaries and aligned pointers.
      std::string ok = "inner % " + std::to_string(layout_.width) + " == 0";
      for (int b : layout_.vector_buffers())
        ok += " && gbc_aligned(" + buffer_pointer(b) + ", alignof(" + vec_type(b) + "))";
      out += "  const bool gbc_vec = " + ok + ";\n";
      out += "  const bool gbc_cached = gbc_vec && inner <= (int64_t)" + std::to_string(layout_.elements) + " * blockDim.x;\n";
    }
    if (layout_.splittable) {
      out += "  if (a.splits > 1) {\n";
      std::string units;
      if (vector) {
        units = "      if (gbc_vec) {\n" + split_vector + "      } else {\n" + split_scalar + "      }\n";
      } else {
        units = split_scalar;
      }
      out += split_loop("    ", units) + "    return;\n  }\n";
    }
    std::string schedules;
    if (vector) {
      schedules = "    if (gbc_cached) {\n" + row_cached + "    } else if (gbc_vec) {\n" + row_vector + "    } else {\n" +
                  row_scalar + "    }\n";
    } else {
      schedules = row_scalar;
    }
    return out + row_loop(schedules);
  }

  // A kernel of one call class (kir::Kernel::cuda_rows): only that schedule, no choice on the
  // device; the launcher guarantees every call is of the class.
  std::string one_class(kir::CudaRows rows, bool split) {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    const Schedule sched = rows == kir::CudaRows::Cached ? Schedule::Cached
                           : rows == kir::CudaRows::Vector || rows == kir::CudaRows::SplitVector ? Schedule::Vector
                                                                                                 : Schedule::Scalar;
    const std::string code = split ? split_code(kernel_scope, sched, "    ") : row_code(kernel_scope, sched, "    ");
    const std::string out = reduction_head(kernel_scope);
    return out + (split ? split_loop("  ", code) : row_loop(code));
  }

  // What every reduction starts with: the sizes, the buffers and host scalars, the crash fault.
  std::string reduction_head(Scope& kernel_scope) {
    std::string out = "  __shared__ long long gbc_scratch[64];\n";
    out += "  const int64_t outer = a.outer, inner = a.inner;\n";
    // The injected reduce-bound bug folds one element less than the row has.
    out += std::string("  const int64_t fold_inner = ") +
           (k_.fault == InjectedFault::ReduceBound ? "inner > 0 ? inner - 1 : 0" : "inner") + ";\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code();
    return out + injected_crash();
  }

  // The grid's walk over (row, part) units of split rows, `units` the body of one (at `in` + 4).
  std::string split_loop(const std::string& in, const std::string& units) const {
    std::string out = in + "// A split row: the grid walks (row, part) units; blockDim.y is 1.\n";
    out += in + "__shared__ bool gbc_last;\n";
    out += in + "const int64_t splits = a.splits;\n";
    out += in + "const int64_t chunk = (inner + splits * " + std::to_string(layout_.width) + " - 1) / (splits * " +
           std::to_string(layout_.width) + ") * " + std::to_string(layout_.width) + ";\n";
    out += in + "unsigned int* gbc_counts = (unsigned int*)a.workspace;\n";
    out += in + c_type(k_.stages[0].acc_dtype) + "* gbc_parts = (" + c_type(k_.stages[0].acc_dtype) +
           "*)((char*)a.workspace + GBC_SPLIT_COUNTS_BYTES(outer));\n";
    out += in + "for (int64_t u = blockIdx.x; u < outer * splits; u += gridDim.x) {\n";
    out += in + "  const int64_t o = u / splits, r_begin = (u - o * splits) * chunk;\n";
    out += in + "  const int64_t r_end = gbc_min_i64(r_begin + chunk, inner);\n";
    return out + units + in + "}\n";
  }

  // The grid's walk over rows, blockDim.y rows per block step, `schedules` the body of one row.
  static std::string row_loop(const std::string& schedules) {
    std::string out = "  const int64_t rows_per_step = (int64_t)gridDim.x * blockDim.y;\n";
    out += "  for (int64_t o0 = (int64_t)blockIdx.x * blockDim.y; o0 < outer; o0 += rows_per_step) {\n";
    out += "    const bool row_ok = o0 + threadIdx.y < outer;\n";
    out += "    const int64_t o = row_ok ? o0 + threadIdx.y : outer - 1;\n";
    // Rows past `outer` (the last block's spare threadIdx.y) compute row outer - 1 for the
    // collective folds; they store nothing.
    return out + schedules + "  }\n";
  }

  // The injected crash bug: kernels computing kCrashFaultOp write through a null pointer first.
  std::string injected_crash() const {
    if (k_.fault != InjectedFault::Crash || !kir::computes_op(k_, kCrashFaultOp)) return "";
    return "  { int* volatile gbc_null = nullptr; *gbc_null = 1; }  // injected fault: crash\n";
  }

  const kir::Kernel& k_;
  CEmitter em_;
  CudaRowLayout layout_;
  std::vector<KeptValue> kept_;
};

}  // namespace

std::string cuda_unsupported_reason(const kir::Kernel& kernel) {
  if (kernel.buffers.size() > GBC_CUDA_MAX_BUFFERS)
    return "kernel " + kernel.name + " has " + std::to_string(kernel.buffers.size()) + " buffers; CUDA kernels take at most " +
           std::to_string(GBC_CUDA_MAX_BUFFERS);
  if (kernel.scalar_args.size() > GBC_CUDA_MAX_SCALARS)
    return "kernel " + kernel.name + " has " + std::to_string(kernel.scalar_args.size()) +
           " host scalars; CUDA kernels take at most " + std::to_string(GBC_CUDA_MAX_SCALARS);
  return "";
}

int cuda_vector_width(const kir::Kernel& kernel) {
  if (kernel.kind != kir::KernelKind::Pointwise) return 1;
  int narrowest = 0;
  for (const kir::Buffer& b : kernel.buffers) {
    if (b.index != kir::IndexKind::Contiguous) continue;
    const int size = dtype_size(b.dtype);
    narrowest = narrowest == 0 ? size : std::min(narrowest, size);
  }
  return narrowest == 0 ? 1 : std::min(8, 16 / narrowest);
}

unsigned cuda_max_row_threads(int elements) {
  return static_cast<unsigned>(std::clamp(16384 / std::max(elements, 1), 256, 1024));
}

std::vector<int> CudaRowLayout::vector_buffers() const {
  std::vector<int> all = loaded;
  all.insert(all.end(), stored.begin(), stored.end());
  return all;
}

CudaRowLayout cuda_row_layout(const kir::Kernel& kernel) {
  CudaRowLayout layout;
  if (kernel.kind != kir::KernelKind::Reduction) return layout;
  std::set<int> stored_buffers, full_stores;
  for (const kir::Store& s : kernel.stores) {
    stored_buffers.insert(s.buffer);
    if (kernel.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full) full_stores.insert(s.buffer);
  }
  // Registers for at most this many cached inputs; the rest are read in place.
  constexpr size_t kMaxCachedInputs = 4;
  int narrowest = 0;
  for (size_t k = 0; k < kernel.buffers.size(); ++k) {
    const kir::Buffer& b = kernel.buffers[k];
    if (b.level != kir::Level::Full || b.index != kir::IndexKind::Contiguous) continue;
    const int index = static_cast<int>(k);
    if (b.is_output) {
      if (!stored_buffers.count(index)) continue;
      layout.stored.push_back(index);
    } else {
      if (layout.loaded.size() == kMaxCachedInputs) continue;
      layout.loaded.push_back(index);
    }
    const int size = dtype_size(b.dtype);
    narrowest = narrowest == 0 ? size : std::min(narrowest, size);
  }
  if (narrowest > 0) layout.width = std::min(8, 16 / narrowest);
  int cached_bytes = 0;
  for (int b : layout.loaded) cached_bytes += dtype_size(kernel.buffers.at(static_cast<size_t>(b)).dtype);
  layout.elements = cuda_row_elements(cached_bytes, layout.width);
  layout.splittable = kernel.stages.size() == 1 && kernel.stages[0].combine != kir::Combine::ArgMax && full_stores.empty();
  return layout;
}

std::string generate_cuda_kernel(const kir::Kernel& kernel) {
  const std::string reason = cuda_unsupported_reason(kernel);
  GBC_INTERNAL_ASSERT(reason.empty(), "codegen: " + reason);
  return CudaKernelWriter(kernel).write();
}

std::string generate_cuda_source(const std::vector<kir::Kernel>& kernels, const std::string& graph_name) {
  // The prelude comes first: under NVRTC it defines the fixed-width types the ABI headers use.
  const TranslationUnitParts parts{
      "CUDA kernels",
      "compiler/codegen/cuda_codegen.cpp",
      {kernel_prelude_h_source(), kernel_abi_h_source(), cuda_kernel_abi_h_source(), kernel_support_h_source()},
      generate_cuda_kernel};
  return assemble_translation_unit(parts, kernels, graph_name);
}

unsigned cuda_split_threads(const kir::Kernel& kernel) { return split_threads(cuda_row_layout(kernel)); }

namespace {

// Whether cuda_launch_shape splits the rows: too few to fill the device, each long. (No rows:
// nothing to launch, and nothing to split.)
bool split_rows(const CudaRowLayout& layout, int64_t outer, int64_t inner, int multiprocessors) {
  const int sms = multiprocessors > 0 ? multiprocessors : 1;
  return layout.splittable && outer > 0 && outer < sms && inner >= kSplitMinInner;
}

// Threads per row of an unsplit reduction launch: what cuda_launch_shape gives, and what the
// cached schedule's rows must fit (`elements` per thread).
unsigned row_block_x(const CudaRowLayout& layout, int64_t inner) {
  if (inner <= 32) return next_pow2(std::max<int64_t>(inner, 1));
  if (inner <= 512) return 32;
  // The cached schedule's elements per thread, at least two warps per row and at most the
  // kernel's launch bound.
  const int elements = layout.elements;
  return std::min<unsigned>(cuda_max_row_threads(elements), std::max<unsigned>(64, next_pow2((inner + elements - 1) / elements)));
}

}  // namespace

CudaLaunchShape cuda_launch_shape(const kir::Kernel& kernel, const GbcCudaKernelArgs& args, int multiprocessors,
                                  int split_blocks_per_multiprocessor) {
  const int64_t max_grid = multiprocessors > 0 ? int64_t{multiprocessors} * 32 : 65535;
  CudaLaunchShape shape;
  int64_t blocks = 1;
  if (kernel.kind == kir::KernelKind::Pointwise) {
    shape.block_x = kPointwiseThreads;
    const int64_t per_block = int64_t{kPointwiseThreads} * cuda_vector_width(kernel);
    blocks = (args.numel + per_block - 1) / per_block;
  } else {
    const int sms = multiprocessors > 0 ? multiprocessors : 1;
    const CudaRowLayout layout = cuda_row_layout(kernel);  // once per launch: it walks the buffers
    if (split_rows(layout, args.outer, args.inner, multiprocessors)) {
      // Too few rows to fill the device: one wave of resident blocks, each part of a row at least
      // kSplitMinPart elements. Always 2 parts or more: resident >= sms > outer makes the first
      // term 2 or more, inner >= kSplitMinInner = 4 * kSplitMinPart the second 4 or more.
      static_assert(kSplitMinInner >= 2 * kSplitMinPart, "split rows have two parts at least");
      const int64_t resident = int64_t{std::max(split_blocks_per_multiprocessor, 1)} * sms;
      const int64_t splits = std::min<int64_t>((resident + args.outer - 1) / args.outer, args.inner / kSplitMinPart);
      shape.block_x = split_threads(layout);
      shape.splits = splits;
      shape.grid = static_cast<unsigned>(std::clamp<int64_t>(args.outer * splits, 1, max_grid));
      return shape;
    }
    shape.block_x = row_block_x(layout, args.inner);
    shape.block_y = args.inner <= 512 ? kRowThreads / shape.block_x : 1;  // several short rows per block
    blocks = (args.outer + shape.block_y - 1) / shape.block_y;
  }
  shape.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, max_grid));
  return shape;
}

kir::CudaRows cuda_row_class(const CudaRowLayout& layout, int64_t outer, int64_t inner, bool vector_aligned,
                             int multiprocessors) {
  // gbc_vec and gbc_cached of an All kernel, with blockDim.x from cuda_launch_shape.
  const bool vec = layout.width > 1 && inner % layout.width == 0 && vector_aligned;
  if (split_rows(layout, outer, inner, multiprocessors)) return vec ? kir::CudaRows::SplitVector : kir::CudaRows::SplitScalar;
  if (!vec) return kir::CudaRows::Scalar;
  return inner <= int64_t{layout.elements} * row_block_x(layout, inner) ? kir::CudaRows::Cached : kir::CudaRows::Vector;
}

kir::CudaRows cuda_row_class(const kir::Kernel& kernel, int64_t outer, int64_t inner, bool vector_aligned,
                             int multiprocessors) {
  if (kernel.kind != kir::KernelKind::Reduction) return kir::CudaRows::All;
  return cuda_row_class(cuda_row_layout(kernel), outer, inner, vector_aligned, multiprocessors);
}

bool cuda_vector_aligned(const kir::Kernel& kernel, const CudaRowLayout& layout, const void* const* data) {
  // alignof(GbcVec<T, width>) (kernel_support.h), as the kernels' gbc_aligned checks; the two
  // lists walked apart: vector_buffers() would allocate on every call.
  auto aligned = [&](int b) {
    const uintptr_t bytes = static_cast<uintptr_t>(
        std::min(dtype_size(kernel.buffers.at(static_cast<size_t>(b)).dtype) * layout.width, 16));
    return reinterpret_cast<uintptr_t>(data[b]) % bytes == 0;
  };
  return std::all_of(layout.loaded.begin(), layout.loaded.end(), aligned) &&
         std::all_of(layout.stored.begin(), layout.stored.end(), aligned);
}

kir::CudaRows cuda_call_row_class(const kir::Kernel& kernel, const CudaRowLayout& layout, const GbcCudaKernelArgs& args,
                                  int multiprocessors) {
  if (kernel.kind != kir::KernelKind::Reduction) return kir::CudaRows::All;
  const void* data[GBC_CUDA_MAX_BUFFERS] = {};
  for (size_t b = 0; b < kernel.buffers.size(); ++b) data[b] = args.buffers[b].data;
  return cuda_row_class(layout, args.outer, args.inner, cuda_vector_aligned(kernel, layout, data), multiprocessors);
}

size_t cuda_split_workspace_bytes(int64_t outer, int64_t splits) {
  return static_cast<size_t>(GBC_SPLIT_COUNTS_BYTES(outer)) + static_cast<size_t>(outer * splits) * 8;
}

GbcCudaKernelArgs make_cuda_args(const kir::Kernel& kernel, const GbcKernelArgs& args) {
  const std::string reason = cuda_unsupported_reason(kernel);
  GBC_INTERNAL_ASSERT(reason.empty(), "codegen: " + reason);
  GbcCudaKernelArgs cuda{};
  cuda.numel = args.numel;
  cuda.outer = args.outer;
  cuda.inner = args.inner;
  cuda.splits = 1;
  cuda.workspace = nullptr;
  for (size_t b = 0; b < kernel.buffers.size(); ++b) cuda.buffers[b] = args.buffers[b];
  for (size_t s = 0; s < kernel.scalar_args.size(); ++s) cuda.scalars[s] = args.scalars[s];
  return cuda;
}

CudaPtx compile_cuda_ptx(const std::string& source, int arch, bool use_cache, const std::string& cache_dir) {
  CudaPtx ptx;
  const NvrtcCompiler& nvrtc = NvrtcCompiler::get();
  CompileOptions options;
  options.arch = arch;
  // 177: "declared but never referenced", said of every prelude function a graph does not use.
  options.extra.push_back("--diag-suppress=177");
  std::string key;
  ModuleCache cache(cache_dir.empty() ? ModuleCache::default_dir() : cache_dir);
  if (use_cache && nvrtc.available()) {
    key = ModuleCache::key(source, options, nvrtc.version());
    if (std::optional<std::string> hit = cache.load(key)) {
      ptx.build.ok = true;
      ptx.build.binary = std::move(*hit);
      ptx.cache_hit = true;
      return ptx;
    }
  }
  ptx.build = nvrtc.compile(source, "gbc_kernels.cu", options);
  if (ptx.build.ok && !key.empty()) cache.store(key, ptx.build.binary);
  return ptx;
}

}  // namespace gbc::codegen
