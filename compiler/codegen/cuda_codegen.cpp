#include "compiler/codegen/cuda_codegen.h"

#include <algorithm>
#include <set>

#include "compiler/codegen/c_emitter.h"
#include "compiler/codegen/embedded_sources.h"
#include "compiler/codegen/translation_unit.h"
#include "compiler/cuda/module_cache.h"
#include "compiler/ir/diagnostics.h"

namespace gbc::codegen {
namespace {

constexpr unsigned kPointwiseThreads = 256;
constexpr unsigned kRowThreads = 256;  // threads per block for rows of up to a warp

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

// Writes the CUDA C++ of one kernel (see cuda_codegen.h for the loop shapes).
class CudaKernelWriter {
 public:
  explicit CudaKernelWriter(const kir::Kernel& kernel) : k_(kernel), em_(kernel, cuda_dialect()) {}

  std::string write() {
    std::string out = as_comment(kir::print_kernel(k_));
    out += "extern \"C\" __global__ void " + k_.name + "(const __grid_constant__ GbcCudaKernelArgs a) {\n";
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
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code();
    out += "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n";
    out += "  const int64_t stride = (int64_t)gridDim.x * blockDim.x;\n";
    if (width > 1) out += vector_loop;
    else out += "  const int64_t nv = 0;\n";
    out += "  for (int64_t i = nv * " + std::to_string(width) + " + tid; i < n; i += stride) {\n" + scalar.code() + "  }\n";
    return out;
  }

  // One stage: each thread folds its share of the row, then the row folds into s<k>.
  void stage(size_t index, Scope& row) {
    const kir::Stage& st = k_.stages[index];
    GBC_INTERNAL_ASSERT(st.value && st.value->dtype == st.acc_dtype,
                        "codegen: stage " + std::to_string(index) + " of " + k_.name + " folds a value of another dtype");
    const std::string k = std::to_string(index);
    const std::string type = c_type(st.acc_dtype);
    const bool argmax = st.combine == kir::Combine::ArgMax;
    const std::string acc = (argmax ? "accv" : "acc") + k;
    row.line("// s" + k + " = " + kir::combine_name(st.combine) + " over r");
    row.line(type + " " + acc + " = " + identity_literal(st.combine, st.acc_dtype, cuda_dialect()) + ";");
    if (argmax) row.line("int64_t acci" + k + " = 0;");
    Indexing ix;
    ix.reduction = true;
    Scope body(Scope::Element, row.indent() + "  ", ix, &row);
    const std::string v = em_.value(st.value, body);
    if (argmax) {
      const std::string take = em_.fresh("take");
      body.line("const bool " + take + " = gbc_argmax_better(" + v + ", " + acc + ");");
      body.line(acc + " = " + take + " ? " + v + " : " + acc + ";");
      body.line("acci" + k + " = " + take + " ? r : acci" + k + ";");
    } else {
      body.line(acc + " = " + combine_function(st.combine) + "(" + acc + ", " + v + ");");
    }
    row.line("for (int64_t r = threadIdx.x; r < inner; r += blockDim.x) {");
    row.append(body.code());
    row.line("}");
    if (argmax) {
      row.line("gbc_block_argmax(" + acc + ", acci" + k + ", gbc_scratch);");
      row.line("const int64_t s" + k + " = acci" + k + ";");
    } else {
      row.line("const " + type + " s" + k + " = gbc_block_fold(" + acc + ", " + fold_object(st.combine) + ", gbc_scratch);");
    }
  }

  std::string reduction() {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    Indexing row_ix;
    row_ix.reduction = true;
    Scope row(Scope::Row, "    ", row_ix, &kernel_scope);
    for (size_t s = 0; s < k_.stages.size(); ++s) stage(s, row);

    Indexing ix;
    ix.reduction = true;
    Scope full(Scope::Element, "        ", ix, &row);
    Scope per_row(Scope::Row, "      ", row_ix, &row);
    bool any_full = false, any_per_row = false;
    for (const kir::Store& s : k_.stores) {
      const bool is_full = k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full;
      em_.store(s, is_full ? full : per_row);
      (is_full ? any_full : any_per_row) = true;
    }
    // Rows past `outer` (the last block's spare threadIdx.y) computed row outer - 1 for the
    // collective folds above; they store nothing.
    if (any_full) {
      row.line("if (row_ok) {");
      row.line("  for (int64_t r = threadIdx.x; r < inner; r += blockDim.x) {");
      row.append(full.code());
      row.line("  }");
      row.line("}");
    }
    if (any_per_row) {
      row.line("if (row_ok && threadIdx.x == 0) {");
      row.append(per_row.code());
      row.line("}");
    }

    std::string out = "  __shared__ long long gbc_scratch[64];\n";
    out += "  const int64_t outer = a.outer, inner = a.inner;\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code();
    out += "  const int64_t rows_per_step = (int64_t)gridDim.x * blockDim.y;\n";
    out += "  for (int64_t o0 = (int64_t)blockIdx.x * blockDim.y; o0 < outer; o0 += rows_per_step) {\n";
    out += "    const bool row_ok = o0 + threadIdx.y < outer;\n";
    out += "    const int64_t o = row_ok ? o0 + threadIdx.y : outer - 1;\n";
    out += row.code() + "  }\n";
    return out;
  }

  const kir::Kernel& k_;
  CEmitter em_;
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

CudaLaunchShape cuda_launch_shape(const kir::Kernel& kernel, const GbcCudaKernelArgs& args, int multiprocessors) {
  const int64_t max_grid = multiprocessors > 0 ? int64_t{multiprocessors} * 32 : 65535;
  CudaLaunchShape shape;
  int64_t blocks = 1;
  if (kernel.kind == kir::KernelKind::Pointwise) {
    shape.block_x = kPointwiseThreads;
    const int64_t per_block = int64_t{kPointwiseThreads} * cuda_vector_width(kernel);
    blocks = (args.numel + per_block - 1) / per_block;
  } else {
    if (args.inner <= 32) {
      shape.block_x = next_pow2(std::max<int64_t>(args.inner, 1));
      shape.block_y = kRowThreads / shape.block_x;
    } else if (args.inner <= 1024) {
      shape.block_x = 32;
      shape.block_y = kRowThreads / 32;
    } else {
      // About 8 elements per thread, at least two warps and at most 1024 threads per row.
      shape.block_x = std::min<unsigned>(1024, std::max<unsigned>(64, next_pow2((args.inner + 7) / 8)));
    }
    blocks = (args.outer + shape.block_y - 1) / shape.block_y;
  }
  shape.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, max_grid));
  return shape;
}

GbcCudaKernelArgs make_cuda_args(const kir::Kernel& kernel, const GbcKernelArgs& args) {
  const std::string reason = cuda_unsupported_reason(kernel);
  GBC_INTERNAL_ASSERT(reason.empty(), "codegen: " + reason);
  GbcCudaKernelArgs cuda{};
  cuda.numel = args.numel;
  cuda.outer = args.outer;
  cuda.inner = args.inner;
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
