#include "compiler/codegen/cpu_codegen.h"

#include <set>

#include "compiler/codegen/c_emitter.h"
#include "compiler/codegen/embedded_sources.h"
#include "compiler/ir/diagnostics.h"

namespace gbc::codegen {
namespace {

std::string as_comment(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "// " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string offsets_array(int buffer) { return "off" + std::to_string(buffer); }

// Writes the C++ of one kernel (see cpu_codegen.h for the loop shapes).
class CpuKernelWriter {
 public:
  explicit CpuKernelWriter(const kir::Kernel& kernel) : k_(kernel), em_(kernel, cpu_dialect()) {
    const bool reduction = k_.kind == kir::KernelKind::Reduction;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (buf.index == kir::IndexKind::Strided && (!reduction || buf.level == kir::Level::Full))
        blocked_.push_back(static_cast<int>(b));
    }
  }

  std::string write() {
    std::string out = as_comment(kir::print_kernel(k_));
    out += k_.kind == kir::KernelKind::Pointwise ? pointwise() : reduction();
    return out;
  }

 private:
  // Offsets of the block's elements for each Strided buffer read or written per element.
  std::string offset_arrays(const std::string& indent) const {
    std::string out;
    for (int b : blocked_) out += indent + "int64_t " + offsets_array(b) + "[GBC_BLOCK];\n";
    return out;
  }
  std::string fill_offsets(const std::string& indent, const std::string& first) const {
    std::string out;
    for (int b : blocked_) {
      out += indent + "gbc_strided_offsets(" + em_.buffer_arg(b) + ", " + std::to_string(k_.buffers[static_cast<size_t>(b)].rank) +
             ", " + first + ", m, " + offsets_array(b) + ");\n";
    }
    return out;
  }
  Indexing element_indexing(bool reduction) const {
    Indexing ix;
    ix.reduction = reduction;
    for (int b : blocked_) ix.element[b] = buffer_pointer(b) + "[" + offsets_array(b) + "[k]]";
    return ix;
  }

  std::string pointwise() {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    Scope body(Scope::Element, blocked_.empty() ? "    " : "      ", element_indexing(false), &kernel_scope);
    if (!blocked_.empty()) body.line("const int64_t i = i0 + k;");
    for (const kir::Store& s : k_.stores) em_.store(s, body);

    const std::string& name = k_.name;
    std::string out = "static void " + name + "_range(const GbcKernelArgs* a, int64_t begin, int64_t end) {\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code();
    if (blocked_.empty()) {
      out += "  #pragma omp simd\n  for (int64_t i = begin; i < end; ++i) {\n" + body.code() + "  }\n";
    } else {
      out += offset_arrays("  ");
      out += "  for (int64_t i0 = begin; i0 < end; i0 += GBC_BLOCK) {\n";
      out += "    const int64_t m = gbc_min_i64(GBC_BLOCK, end - i0);\n";
      out += fill_offsets("    ", "i0");
      out += "    #pragma omp simd\n    for (int64_t k = 0; k < m; ++k) {\n" + body.code() + "    }\n  }\n";
    }
    out += "}\n\n";
    out += "extern \"C\" void " + name + "(const GbcKernelArgs* a) {\n";
    out += "  const int64_t n = a->numel;\n";
    out += "  const int threads = gbc_cpu_threads(n, n, a->num_threads);\n";
    out += "  if (threads <= 1) {\n    " + name + "_range(a, 0, n);\n    return;\n  }\n";
    out += "  const int64_t chunk = gbc_cpu_chunk(n, threads);\n";
    out += "  #pragma omp parallel for num_threads(threads) schedule(static, 1)\n";
    out += "  for (int t = 0; t < threads; ++t) {\n";
    out += "    const int64_t begin = t * chunk, end = gbc_min_i64(n, begin + chunk);\n";
    out += "    if (begin < end) " + name + "_range(a, begin, end);\n";
    out += "  }\n}\n";
    return out;
  }

  // `for` over the row in blocks of GBC_BLOCK (m elements each, offsets filled), around `body`.
  std::string row_blocks(const std::string& indent, const std::string& body) const {
    std::string out = indent + "for (int64_t r0 = 0; r0 < inner; r0 += GBC_BLOCK) {\n";
    out += indent + "  const int64_t m = gbc_min_i64(GBC_BLOCK, inner - r0);\n";
    out += fill_offsets(indent + "  ", "o * inner + r0");
    return out + body + indent + "}\n";
  }

  // One stage: the lanes fold r (vectorized over whole groups of GBC_LANES, then the rest of the
  // row into the first lanes), then the lanes fold in order into s<k>.
  void stage(size_t index, Scope& row) {
    const kir::Stage& st = k_.stages[index];
    GBC_INTERNAL_ASSERT(st.value && st.value->dtype == st.acc_dtype,
                        "codegen: stage " + std::to_string(index) + " of " + k_.name + " folds a value of another dtype");
    const std::string k = std::to_string(index);
    const std::string type = c_type(st.acc_dtype);
    const bool argmax = st.combine == kir::Combine::ArgMax;
    const std::string acc = (argmax ? "accv" : "acc") + k;
    const std::string identity = identity_literal(st.combine, st.acc_dtype, cpu_dialect());
    const std::string& in = row.indent();

    row.line("// s" + k + " = " + kir::combine_name(st.combine) + " over r");
    row.line(type + " " + acc + "[GBC_LANES];");
    if (argmax) row.line("int64_t acci" + k + "[GBC_LANES];");
    row.line("for (int l = 0; l < GBC_LANES; ++l) {");
    row.line("  " + acc + "[l] = " + identity + ";");
    if (argmax) row.line("  acci" + k + "[l] = 0;");
    row.line("}");

    // The body that folds element r into lane `lane`, emitted for the vector and the tail loop.
    auto fold = [&](Scope& body, const std::string& lane) {
      const std::string v = em_.value(st.value, body);
      const std::string slot = acc + "[" + lane + "]";
      if (argmax) {
        const std::string take = em_.fresh("take");
        body.line("const bool " + take + " = gbc_argmax_better(" + v + ", " + slot + ");");
        body.line(slot + " = " + take + " ? " + v + " : " + slot + ";");
        body.line("acci" + k + "[" + lane + "] = " + take + " ? r : acci" + k + "[" + lane + "];");
      } else {
        body.line(slot + " = " + combine_function(st.combine) + "(" + slot + ", " + v + ");");
      }
    };
    Scope vec(Scope::Element, in + "      ", element_indexing(true), &row);
    vec.line("const int64_t k = k0 + l, r = r0 + k;");
    fold(vec, "l");
    Scope tail(Scope::Element, in + "    ", element_indexing(true), &row);
    tail.line("const int64_t r = r0 + k;");
    fold(tail, "k - mv");

    std::string body = in + "  const int64_t mv = m / GBC_LANES * GBC_LANES;\n";
    body += in + "  for (int64_t k0 = 0; k0 < mv; k0 += GBC_LANES) {\n";
    body += in + "    #pragma omp simd\n" + in + "    for (int l = 0; l < GBC_LANES; ++l) {\n" + vec.code() + in + "    }\n";
    body += in + "  }\n";
    body += in + "  for (int64_t k = mv; k < m; ++k) {\n" + tail.code() + in + "  }\n";
    row.append(row_blocks(in, body));

    if (argmax) {
      row.line(type + " best" + k + " = " + acc + "[0];");
      row.line("int64_t s" + k + " = acci" + k + "[0];");
      row.line("for (int l = 1; l < GBC_LANES; ++l) gbc_argmax_merge(best" + k + ", s" + k + ", " + acc + "[l], acci" + k + "[l]);");
    } else {
      row.line(type + " s" + k + " = " + acc + "[0];");
      row.line("for (int l = 1; l < GBC_LANES; ++l) s" + k + " = " + combine_function(st.combine) + "(s" + k + ", " + acc + "[l]);");
    }
  }

  std::string reduction() {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    Indexing row_ix;
    row_ix.reduction = true;
    Scope row(Scope::Row, "    ", row_ix, &kernel_scope);
    for (size_t s = 0; s < k_.stages.size(); ++s) stage(s, row);

    std::vector<const kir::Store*> full, per_row;
    for (const kir::Store& s : k_.stores)
      (k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full ? full : per_row).push_back(&s);
    if (!full.empty()) {
      Scope body(Scope::Element, "        ", element_indexing(true), &row);
      body.line("const int64_t r = r0 + k;");
      for (const kir::Store* s : full) em_.store(*s, body);
      row.append(row_blocks("    ", "      #pragma omp simd\n      for (int64_t k = 0; k < m; ++k) {\n" + body.code() + "      }\n"));
    }
    for (const kir::Store* s : per_row) em_.store(*s, row);

    const std::string& name = k_.name;
    std::string out = "static void " + name + "_rows(const GbcKernelArgs* a, int64_t o_begin, int64_t o_end) {\n";
    out += "  const int64_t inner = a->inner;\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + offset_arrays("  ") + kernel_scope.code();
    out += "  for (int64_t o = o_begin; o < o_end; ++o) {\n" + row.code() + "  }\n}\n\n";
    out += "extern \"C\" void " + name + "(const GbcKernelArgs* a) {\n";
    out += "  const int64_t outer = a->outer;\n";
    out += "  const int threads = gbc_cpu_threads(outer * a->inner, outer, a->num_threads);\n";
    out += "  if (threads <= 1) {\n    " + name + "_rows(a, 0, outer);\n    return;\n  }\n";
    out += "  const int64_t chunk = (outer + threads - 1) / threads;\n";
    out += "  #pragma omp parallel for num_threads(threads) schedule(static, 1)\n";
    out += "  for (int t = 0; t < threads; ++t) {\n";
    out += "    const int64_t begin = t * chunk, end = gbc_min_i64(outer, begin + chunk);\n";
    out += "    if (begin < end) " + name + "_rows(a, begin, end);\n";
    out += "  }\n}\n";
    return out;
  }

  const kir::Kernel& k_;
  CEmitter em_;
  std::vector<int> blocked_;  // Strided buffers indexed per element
};

}  // namespace

std::string generate_cpu_kernel(const kir::Kernel& kernel) { return CpuKernelWriter(kernel).write(); }

std::string generate_cpu_source(const std::vector<kir::Kernel>& kernels, const std::string& graph_name) {
  std::string graph = graph_name;
  for (char& c : graph)
    if (c == '\n' || c == '\r') c = ' ';
  std::string out = "// gbcheck: CPU kernels of graph '" + graph + "' (generated by compiler/codegen/cpu_codegen.cpp)\n";
  out += kernel_abi_h_source();
  out += kernel_prelude_h_source();
  out += kernel_support_h_source();
  std::set<std::string> names;
  for (const kir::Kernel& k : kernels) {
    GBC_INTERNAL_ASSERT(names.insert(k.name).second, "codegen: two kernels named " + k.name + " in graph " + graph);
    out += "\n" + generate_cpu_kernel(k);
  }
  return out;
}

}  // namespace gbc::codegen
