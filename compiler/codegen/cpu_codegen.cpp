#include "compiler/codegen/cpu_codegen.h"

#include <functional>
#include <memory>
#include <regex>
#include <set>

#include "compiler/codegen/c_emitter.h"
#include "compiler/codegen/embedded_sources.h"
#include "compiler/codegen/reused_values.h"
#include "compiler/codegen/translation_unit.h"
#include "compiler/ir/diagnostics.h"
#include "compiler/kernel/value_bounds.h"

namespace gbc::codegen {
namespace {

std::string offsets_array(int buffer) { return "off" + std::to_string(buffer); }

// Rows a column stage folds per pass of its q loop (the column schedule).
constexpr int kColumnUnroll = 4;

// A value computed in one stage's pass and read again by later passes from a per-thread row.
struct RowCacheEntry {
  kir::ExprPtr value;
  size_t stage = 0;   // the pass that computes and stores it
  std::string array;  // the row's C name
};

// Writes the C++ of one kernel (see cpu_codegen.h for the loop shapes).
class CpuKernelWriter {
 public:
  explicit CpuKernelWriter(const kir::Kernel& kernel) : k_(kernel), em_(kernel, cpu_dialect()) {
    const bool reduction = k_.kind == kir::KernelKind::Reduction;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (buf.index != kir::IndexKind::Strided || (reduction && buf.level != kir::Level::Full)) continue;
      (reduction && buf.r_contiguous ? row_started_ : blocked_).push_back(static_cast<int>(b));
    }
    if (reduction && k_.fault == InjectedFault::None && !k_.columns) {
      plan_row_cache();
      plan_tiles();
    }
    if (reduction && reads_bytes_per_element()) lanes_ = "GBC_LANES_WIDE";
    plan_streams();
  }

  std::string write() {
    std::string out = as_comment(kir::print_kernel(k_));
    out += k_.kind == kir::KernelKind::Pointwise ? pointwise() : reduction();
    return out;
  }

 private:
  // Whether a reduction's passes load 1-byte elements (a bool mask): GCC sizes a loop's vectors by
  // its narrowest type, so 16 lanes of bytes are one 16-byte vector and the floats beside them
  // ran 4 to a vector (issue 19's masked softmax); those kernels fold into GBC_LANES_WIDE lanes.
  bool reads_bytes_per_element() const {
    for (const kir::Buffer& b : k_.buffers)
      if (b.level == kir::Level::Full && b.index != kir::IndexKind::Scalar && dtype_size(b.dtype) == 1) return true;
    return false;
  }

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
  // `scratch`: in the rows function with scratch memory, where tiled buffers read their tile.
  Indexing element_indexing(bool reduction, bool scratch = false) const {
    Indexing ix;
    ix.reduction = reduction;
    for (int b : blocked_) ix.element[b] = buffer_pointer(b) + "[" + offsets_array(b) + "[k]]";
    for (int b : row_started_) ix.element[b] = buffer_pointer(b) + "[" + row_start(b) + " + r]";
    if (scratch)
      for (int b : tiled_) ix.element[b] = tile_row(b) + "[r]";
    for (int b : streamed_) ix.element[b] = stream_target(b) + "[k]";
    return ix;
  }

  // ---- streaming stores (gbc_stream_store, kernel_support.h) ----
  // Contiguous full-level outputs are written through d<b>, per block of GBC_BLOCK elements: the
  // output itself, or when the call streams (GbcKernelArgs::stream_stores) a block in L1 that
  // gbc_stream_store then writes past the caches. One loop either way; only the pointer differs.
  // Only where the pass that stores is memory-bound: in a pass that computes a costly value the
  // line fills of plain stores overlap the arithmetic, and the block costs more than streaming
  // saves (masked softmax's store pass, which takes a log, 11% slower; the 8-op chain 7%; softmax,
  // layer_norm and the bias + gelu + layer_norm epilogue, whose costly values the row cache kept,
  // 12-14% faster: docs/performance.md). Rows too long for the row cache recompute those values in
  // the store pass of the function without scratch memory, which streams all the same.
  void plan_streams() {
    if (k_.columns) return;
    for (const kir::Store& st : k_.stores)
      if (k_.buffers.at(static_cast<size_t>(st.buffer)).level == kir::Level::Full && costly_to_store(*st.value)) return;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (buf.is_output && buf.level == kir::Level::Full && buf.index == kir::IndexKind::Contiguous)
        streamed_.push_back(static_cast<int>(b));
    }
  }
  // Whether the store pass computes a costly op for e: values in the row cache it only reads.
  bool costly_to_store(const kir::Expr& e) const {
    if (row_cached(&e)) return false;
    if (costly_op(e)) return true;
    for (const kir::ExprPtr& a : e.args)
      if (costly_to_store(*a)) return true;
    return false;
  }
  static std::string stream_target(int buffer) { return "d" + std::to_string(buffer); }
  static std::string stream_block(int buffer) { return "sb" + std::to_string(buffer); }
  // The flag and the blocks, once per function.
  std::string stream_locals(const std::string& indent) const {
    if (streamed_.empty()) return "";
    std::string out = indent + "const bool stream = a->stream_stores != 0;\n";
    for (int b : streamed_) out += indent + "alignas(64) " + storage_c_type(b) + " " + stream_block(b) + "[GBC_BLOCK];\n";
    return out;
  }
  // Before a block's loop: where its elements [base, base + m) go.
  std::string stream_targets(const std::string& indent, const std::string& base) const {
    std::string out;
    for (int b : streamed_) {
      const std::string type = storage_c_type(b);
      out += indent + type + "* __restrict__ const " + stream_target(b) + " = stream ? " + stream_block(b) + " : " +
             buffer_pointer(b) + " + " + base + ";\n";
    }
    return out;
  }
  // After it: the streamed block's stores.
  std::string stream_flush(const std::string& indent, const std::string& base) const {
    if (streamed_.empty()) return "";
    std::string out = indent + "if (stream) {\n";
    for (int b : streamed_) {
      out += indent + "  gbc_stream_store(" + buffer_pointer(b) + " + " + base + ", " + stream_block(b) + ", m * (int64_t)sizeof(" +
             storage_c_type(b) + "));\n";
    }
    return out + indent + "}\n";
  }
  // At the end of a function that streamed: its stores ordered before the caller's next step.
  std::string stream_fence(const std::string& indent) const {
    return streamed_.empty() ? "" : indent + "if (stream) gbc_stream_fence();\n";
  }
  // Strided buffers whose rows are contiguous (kir::Buffer::r_contiguous): each row's first
  // element's offset, once per row, so that the row loads as vectors instead of a gather.
  static std::string row_start(int buffer) { return buffer_pointer(buffer) + "_row"; }
  void start_rows(Scope& row, bool scratch) const {
    for (int b : row_started_) {
      row.line("const int64_t " + row_start(b) + " = gbc_strided_offset(" + em_.buffer_arg(b) + ", " +
               std::to_string(k_.buffers[static_cast<size_t>(b)].rank) + ", o * inner);");
    }
    if (!scratch) return;
    for (int b : tiled_) {
      const std::string type = storage_c_type(b);
      row.line("const " + type + "* __restrict__ " + tile_row(b) + " = " + tile(b) + " + (o - o0) * inner;");
    }
  }

  // ---- transposed tiles (GBC_TILE_ROWS, kernel_support.h) ----
  // Full-level inputs read across rows: affine with an r stride passed at run time (x of a
  // layer_norm over a transposed view). Each pass would gather them; in the scratch function a
  // block of rows is copied once into a tile, r outside the rows, and the passes read its rows.
  void plan_tiles() {
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (!buf.is_output && buf.level == kir::Level::Full && buf.index == kir::IndexKind::Affine && !buf.r_contiguous)
        tiled_.push_back(static_cast<int>(b));
    }
  }
  static std::string tile(int buffer) { return buffer_pointer(buffer) + "_tile"; }
  static std::string tile_row(int buffer) { return buffer_pointer(buffer) + "_trow"; }
  std::string storage_c_type(int buffer) const {
    const DType d = k_.buffers[static_cast<size_t>(buffer)].dtype;
    return d == DType::Bool ? "uint8_t" : c_type(d);
  }
  // Copies rows [o0, o1) of each tiled buffer into its tile.
  std::string fill_tiles() const {
    std::string out = "    for (int64_t r = 0; r < inner; ++r) {\n";
    for (int b : tiled_) {
      const std::string p = buffer_pointer(b);
      out += "      for (int64_t o = o0; o < o1; ++o) " + tile(b) + "[(o - o0) * inner + r] = " + p + "[o * " + p + "_s0 + r * " +
             p + "_s1];\n";
    }
    return out + "    }\n";
  }
  // Bytes of scratch per element of a row: the row cache's, and GBC_TILE_ROWS rows of each tile.
  std::string scratch_bytes() const {
    size_t tile_bytes = 0;
    for (int b : tiled_) tile_bytes += static_cast<size_t>(dtype_size(k_.buffers[static_cast<size_t>(b)].dtype));
    const std::string cache = std::to_string(row_cache_bytes());
    return tile_bytes == 0 ? cache : "(" + cache + " + GBC_TILE_ROWS * " + std::to_string(tile_bytes) + ")";
  }

  std::string pointwise() {
    if (k_.columns) {
      const std::string fn = k_.name + "_columns";
      return pointwise_columns_function(fn) + entry("  const int64_t units = a->numel / a->cols;\n", "units", "a->numel",
                                                    "(units + threads - 1) / threads", fn);
    }
    std::vector<kir::ExprPtr> roots;
    for (const kir::Store& st : k_.stores) roots.push_back(st.value);
    const std::vector<kir::ExprPtr> staged = staged_values(roots);
    if (step_count(staged) >= 2) return pointwise_staged(staged);
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    const bool blocks = !blocked_.empty() || !streamed_.empty();
    Scope body(Scope::Element, blocks ? "      " : "    ", element_indexing(false), &kernel_scope);
    if (blocks) body.line("const int64_t i = i0 + k;");
    for (const kir::Store& s : k_.stores) em_.store(s, body);

    const std::string& name = k_.name;
    std::string out = "static void " + name + "_range(const GbcKernelArgs* a, int64_t begin, int64_t end) {\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code();
    if (!blocks) {
      out += "  #pragma omp simd\n  for (int64_t i = begin; i < end; ++i) {\n" + body.code() + "  }\n";
    } else {
      out += offset_arrays("  ") + stream_locals("  ");
      out += "  for (int64_t i0 = begin; i0 < end; i0 += GBC_BLOCK) {\n";
      out += "    const int64_t m = gbc_min_i64(GBC_BLOCK, end - i0);\n";
      out += fill_offsets("    ", "i0") + stream_targets("    ", "i0");
      out += "    #pragma omp simd\n    for (int64_t k = 0; k < m; ++k) {\n" + body.code() + "    }\n";
      out += stream_flush("    ", "i0") + "  }\n" + stream_fence("  ");
    }
    out += "}\n\n";
    return out + entry("  const int64_t n = a->numel;\n", "n", "n", "gbc_cpu_chunk(n, threads)", name + "_range");
  }

  // The float32 costly values that `roots` compute per element, each once, arguments first; not
  // those `skip` names (values an earlier pass kept). The prelude's float32 exp, tanh, sigmoid, ...
  // are polynomials: dozens of dependent vector instructions each.
  std::vector<kir::ExprPtr> staged_values(const std::vector<kir::ExprPtr>& roots,
                                          const std::function<bool(const kir::Expr*)>& skip = nullptr) {
    std::vector<kir::ExprPtr> out;
    std::set<const kir::Expr*> seen;
    std::function<void(const kir::ExprPtr&)> visit = [&](const kir::ExprPtr& e) {
      if (!seen.insert(e.get()).second || (skip && skip(e.get()))) return;
      for (const kir::ExprPtr& a : e->args) visit(a);
      if (costly_op(*e) && e->dtype == DType::Float32 && em_.depth(e) == Scope::Element) out.push_back(e);
    };
    for (const kir::ExprPtr& root : roots) visit(root);
    return out;
  }

  // Costly ops the CPU prelude computes in two steps, gbc_<op>_exp and gbc_<op>_finish
  // (kernel_prelude.h): in staged loops each step is a pass.
  static bool two_steps(const kir::Expr& e) { return e.op == "tanh" || e.op == "sigmoid" || e.op == "silu"; }
  // Whether a two-step op's operand is small enough for its exp step without range handling
  // (gbc_<op>_exp_bounded, kernel_prelude.h): sigmoid(tanh(x)), silu of a clamp, ...
  static bool exp_step_bounded(const kir::Expr& e) {
    const double bound = kir::abs_bound(*e.args.at(0));
    return bound <= (e.op == "tanh" ? 44.0 : 87.0);
  }
  static size_t step_count(const std::vector<kir::ExprPtr>& staged) {
    size_t steps = 0;
    for (const kir::ExprPtr& e : staged) steps += two_steps(*e) ? 2 : 1;
    return steps;
  }

  // Staged loops: passes over the elements k in [0, count) of a block, one per costly step of
  // `staged` (each writes its value to a float32 block array, in L1, that later passes read),
  // the last step in the pass that then runs `finish` (the stores, or a row cache's fill). Cheap
  // values a later pass needs again (loads, adds) it computes again, but a two-step op's operand
  // is kept for its finish. In one loop, the long chains of dependent vector instructions of an
  // exp and the division after it leave the out-of-order core waiting: the 8-op chain's tanh then
  // sigmoid ran at 3.3 ns per element (one thread, in L2), as staged loops at 1.8 ns, the same
  // results bit for bit (docs/performance.md). `open` makes each pass's scope (with the values
  // earlier code kept); `index` ("i = i0 + k") is declared in the passes that read it. The block
  // arrays go to `arrays`, for the caller to declare.
  std::string staged_loops(const std::vector<kir::ExprPtr>& staged, const std::function<std::unique_ptr<Scope>()>& open,
                           const std::function<void(Scope&)>& finish, const std::string& indent, const std::string& count,
                           const std::string& index, std::vector<std::string>& arrays) {
    std::vector<std::unique_ptr<Scope>> passes;
    std::vector<std::pair<const kir::Expr*, std::string>> kept;  // staged values and their block arrays
    auto new_pass = [&] {
      passes.push_back(open());
      for (const auto& [e, array] : kept) passes.back()->bind(e, array + "[k]");
      return passes.back().get();
    };
    auto keep = [&](Scope* pass, const std::string& value) {
      arrays.push_back(em_.fresh("blk"));
      pass->line(arrays.back() + "[k] = " + value + ";");
      return arrays.back();
    };
    std::string last_finish;  // the last value's `gbc_<op>_finish(x, exp)`, when it takes two steps
    for (size_t j = 0; j < staged.size(); ++j) {
      const kir::ExprPtr& e = staged[j];
      const bool last = j + 1 == staged.size();
      if (!two_steps(*e)) {
        if (last) break;
        Scope* pass = new_pass();
        kept.emplace_back(e.get(), keep(pass, em_.value(e, *pass)));
        continue;
      }
      // The exp's pass keeps the operand too, unless an earlier pass did: the finish reads both.
      Scope* pass = new_pass();
      const kir::Expr* x = e->args.at(0).get();
      GBC_INTERNAL_ASSERT(x->dtype == DType::Float32, "codegen: " + e->op + " of " + k_.name + " has a " +
                                                          std::string(dtype_name(x->dtype)) + " operand; block arrays hold float32");
      const std::string xv = em_.value(e->args[0], *pass);
      const std::string exp = keep(pass, "gbc_" + e->op + (exp_step_bounded(*e) ? "_exp_bounded(" : "_exp(") + xv + ")");
      std::string x_kept;
      for (const auto& [value, array] : kept)
        if (value == x) x_kept = array + "[k]";
      if (x_kept.empty()) {
        x_kept = keep(pass, xv) + "[k]";
        kept.emplace_back(x, arrays.back());
      }
      const std::string step = "gbc_" + e->op + "_finish(" + x_kept + ", " + exp + "[k])";
      if (last) {
        last_finish = step;
        break;
      }
      kept.emplace_back(e.get(), keep(new_pass(), step));
    }
    Scope* final_pass = new_pass();
    if (!last_finish.empty()) {
      const std::string name = em_.fresh("t");
      final_pass->line("const float " + name + " = " + last_finish + ";");
      final_pass->bind(staged.back().get(), name);
    }
    finish(*final_pass);

    // The index only where a pass reads or writes by it: GCC names a vectorized loop by its first
    // statement, which the vectorization test reads (tests/codegen/cpu_codegen_test.cpp).
    const std::string name = index.substr(0, index.find(' '));
    const std::regex uses_index("\\b" + name + "\\b");
    std::string out;
    for (const auto& pass : passes) {
      out += indent + "#pragma omp simd\n" + indent + "for (int64_t k = 0; k < " + count + "; ++k) {\n";
      if (std::regex_search(pass->code(), uses_index)) out += indent + "  const int64_t " + index + ";\n";
      out += pass->code() + indent + "}\n";
    }
    return out;
  }

  // A pointwise body with two or more costly steps, as staged loops over blocks of GBC_BLOCK.
  std::string pointwise_staged(const std::vector<kir::ExprPtr>& staged) {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    std::vector<std::string> arrays;
    const std::string loops = staged_loops(
        staged, [&] { return std::make_unique<Scope>(Scope::Element, "      ", element_indexing(false), &kernel_scope); },
        [&](Scope& pass) {
          for (const kir::Store& st : k_.stores) em_.store(st, pass);
        },
        "    ", "m", "i = i0 + k", arrays);

    const std::string& name = k_.name;
    std::string out = "static void " + name + "_range(const GbcKernelArgs* a, int64_t begin, int64_t end) {\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + kernel_scope.code() + offset_arrays("  ") + stream_locals("  ");
    for (const std::string& array : arrays) out += "  float " + array + "[GBC_BLOCK];\n";
    out += "  for (int64_t i0 = begin; i0 < end; i0 += GBC_BLOCK) {\n";
    out += "    const int64_t m = gbc_min_i64(GBC_BLOCK, end - i0);\n";
    out += fill_offsets("    ", "i0") + stream_targets("    ", "i0") + loops + stream_flush("    ", "i0") + "  }\n" +
           stream_fence("  ") + "}\n\n";
    return out + entry("  const int64_t n = a->numel;\n", "n", "n", "gbc_cpu_chunk(n, threads)", name + "_range");
  }

  // `for` over the row in blocks of GBC_BLOCK (m elements each, offsets filled), around `body`.
  std::string row_blocks(const std::string& indent, const std::string& body, const std::string& inner = "inner") const {
    std::string out = indent + "for (int64_t r0 = 0; r0 < " + inner + "; r0 += GBC_BLOCK) {\n";
    out += indent + "  const int64_t m = gbc_min_i64(GBC_BLOCK, " + inner + " - r0);\n";
    out += fill_offsets(indent + "  ", "o * inner + r0");
    return out + body + indent + "}\n";
  }

  // One stage: the lanes fold r (vectorized over whole groups of lanes_, then the rest of the
  // row into the first lanes), then the lanes fold in order into s<k>.
  void stage(size_t index, Scope& row, bool cached) {
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
    row.line(type + " " + acc + "[" + lanes_ + "];");
    if (argmax) row.line("int64_t acci" + k + "[" + lanes_ + "];");
    row.line("for (int l = 0; l < " + lanes_ + "; ++l) {");
    row.line("  " + acc + "[l] = " + identity + ";");
    if (argmax) row.line("  acci" + k + "[l] = 0;");
    row.line("}");

    // The body that folds element r into lane `lane`, emitted for the vector and the tail loop.
    auto fold = [&](Scope& body, const std::string& lane) {
      const std::string v = em_.value(st.value, body);
      const std::string slot = acc + "[" + lane + "]";
      if (argmax) {
        argmax_fold(body, v, slot, "acci" + k + "[" + lane + "]");
      } else {
        body.line(fold_statement(st, slot, v));
      }
    };
    // A pass that fills the row cache does so in staged loops of its own over the block's whole
    // lane groups, then folds what it kept in a loop over them (in L1): GCC vectorized the fused
    // loop with the float64 accumulation's conversions interleaved in the costly value's selects
    // (vpmovsxdq and vblendvpd in softmax's exp), 9% slower on softmax_4096, and a costly value's
    // chain of dependent instructions runs faster in passes of its own (docs/performance.md).
    // Likewise a costly float32 value folded in float64 (log_softmax's sum of exp): it goes
    // through a block of lanes, `lane<k>`.
    const bool fills = cached && fills_row_cache(index);
    // A value an earlier pass kept in the row cache is read from it, not computed again through
    // lane<k> (a logsumexp's second max over the same cast: the fold read rc[r] without an r).
    const bool kept_earlier = cached && kept_before(st.value.get(), index);
    const kir::Expr* widened = fills || kept_earlier ? nullptr : costly_narrow_operand(st);
    std::string block_fill;
    if (fills || widened) {
      std::vector<kir::ExprPtr> roots;
      for (const RowCacheEntry& c : row_cache_)
        if (fills && c.stage == index) roots.push_back(c.value);
      if (widened) roots.push_back(st.value->args[0]);
      const std::vector<kir::ExprPtr> staged =
          staged_values(roots, [&](const kir::Expr* e) { return cached && kept_before(e, index); });
      std::vector<std::string> arrays;
      block_fill = staged_loops(
          staged,
          [&] {
            auto pass = std::make_unique<Scope>(Scope::Element, in + "    ", element_indexing(true, cached), &row);
            if (cached) use_row_cache(index, *pass);
            return pass;
          },
          [&](Scope& pass) {
            if (fills) fill_row_cache(index, pass);
            if (widened) pass.line("lane" + k + "[k] = " + em_.value(st.value->args[0], pass) + ";");
          },
          in + "  ", "mv", "r = r0 + k", arrays);
      for (const std::string& array : arrays) row.line("float " + array + "[GBC_BLOCK];");
      if (widened) row.line(c_type(widened->dtype) + " lane" + k + "[GBC_BLOCK];");
    }
    Scope vec(Scope::Element, in + "      ", element_indexing(true, cached), &row);
    if (!widened) vec.line("const int64_t k = k0 + l, r = r0 + k;");  // the fold of lane<k> reads no element
    if (cached) use_row_cache(fills ? index + 1 : index, vec);
    if (widened) vec.bind(widened, "lane" + k + "[k0 + l]");
    fold(vec, "l");
    Scope tail(Scope::Element, in + "    ", element_indexing(true, cached), &row);
    tail.line("const int64_t r = r0 + k;");
    if (cached) use_row_cache(index, tail);
    fold(tail, "k - mv");
    if (cached) fill_row_cache(index, tail);

    std::string body = (index == 0 ? prefetch_next_row(in + "  ") : "") + in + "  const int64_t mv = m / " + lanes_ + " * " +
                       lanes_ + ";\n" + block_fill;
    // Not unrolled: -fpeel-loops must peel the lane loop inside (its accumulators then stay in
    // registers), but it also peeled this one completely, GBC_BLOCK / lanes copies of the vector
    // body, since its trip count is bounded: up to 10x the compile time of a kernel, and no faster.
    body += in + "  #pragma GCC unroll 1\n";
    body += in + "  for (int64_t k0 = 0; k0 < mv; k0 += " + lanes_ + ") {\n";
    body += in + "    #pragma omp simd\n" + in + "    for (int l = 0; l < " + lanes_ + "; ++l) {\n" + vec.code() + in + "    }\n";
    body += in + "  }\n";
    body += in + "  for (int64_t k = mv; k < m; ++k) {\n" + tail.code() + in + "  }\n";
    row.append(row_blocks(in, body, folded_count()));

    if (argmax) {
      row.line(type + " best" + k + " = " + acc + "[0];");
      row.line("int64_t s" + k + " = acci" + k + "[0];");
      row.line("for (int l = 1; l < " + lanes_ + "; ++l) gbc_argmax_merge(best" + k + ", s" + k + ", " + acc + "[l], acci" + k + "[l]);");
    } else {
      row.line(type + " s" + k + " = " + acc + "[0];");
      row.line("for (int l = 1; l < " + lanes_ + "; ++l) s" + k + " = " + combine_function(st.combine) + "(s" + k + ", " + acc + "[l]);");
    }
  }

  // `slot = combine(slot, v);` for every combine but ArgMax.
  std::string fold_statement(const kir::Stage& st, const std::string& slot, const std::string& v) const {
    if (k_.fault == InjectedFault::Fp16Accum && st.combine == kir::Combine::Sum && is_floating(st.acc_dtype)) {
      // The injected fp16-accum bug: the running sum is kept in float16 precision.
      return slot + " = (" + c_type(st.acc_dtype) + ")gbc_round_float16((float)gbc_add(" + slot + ", " + v + "));";
    }
    return slot + " = " + combine_function(st.combine) + "(" + slot + ", " + v + ");";
  }
  // Folds element r (value v) into an argmax's running best value `slot` and its index `index_slot`.
  void argmax_fold(Scope& body, const std::string& v, const std::string& slot, const std::string& index_slot) {
    const std::string take = em_.fresh("take");
    body.line("const bool " + take + " = gbc_argmax_better(" + v + ", " + slot + ");");
    body.line(slot + " = " + take + " ? " + v + " : " + slot + ";");
    body.line(index_slot + " = " + take + " ? r : " + index_slot + ";");
  }
  // The first pass over a row asks for the same block of the next row's contiguous inputs: the
  // hardware prefetcher does not cross 4 KiB pages, so a row of 1024 floats started cold in
  // DRAM (the bias + gelu + layer_norm kernel 12% faster; rows of 4096 floats unchanged).
  std::string prefetch_next_row(const std::string& indent) const {
    std::string out;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (buf.is_output || buf.level != kir::Level::Full || buf.index != kir::IndexKind::Contiguous) continue;
      const std::string step = std::to_string(std::max<int64_t>(1, 64 / dtype_size(buf.dtype)));
      out += indent + "  for (int64_t j = 0; j < m; j += " + step + ") __builtin_prefetch(" + buffer_pointer(static_cast<int>(b)) +
             " + (o + 1) * inner + r0 + j, 0, 3);\n";
    }
    return out.empty() ? out : indent + "if (o + 1 < o_end) {\n" + out + indent + "}\n";
  }

  // How many elements of r a stage folds: all of them, but for the injected reduce-bound bug.
  std::string folded_count() const {
    return k_.fault == InjectedFault::ReduceBound ? "(inner > 0 ? inner - 1 : 0)" : "inner";
  }

  // Which costly values of a stage's pass later passes read again (softmax's exp(x - max) in the
  // sum and in the store): those are kept in rows of the thread's scratch memory instead of being
  // computed twice (reused_values.h).
  void plan_row_cache() {
    for (ReusedValue& v : values_read_by_later_passes(k_, em_))
      row_cache_.push_back({std::move(v.value), v.stage, "rc" + std::to_string(row_cache_.size())});
  }
  // Whether a pass before `stage` keeps e in the row cache.
  bool kept_before(const kir::Expr* e, size_t stage) const {
    for (const RowCacheEntry& c : row_cache_)
      if (c.stage < stage && c.value.get() == e) return true;
    return false;
  }
  bool row_cached(const kir::Expr* e) const {
    for (const RowCacheEntry& c : row_cache_)
      if (c.value.get() == e) return true;
    return false;
  }
  // Names the values earlier passes kept as their rows' elements r.
  void use_row_cache(size_t pass, Scope& body) const {
    for (const RowCacheEntry& c : row_cache_)
      if (c.stage < pass) body.bind(c.value.get(), c.array + "[r]");
  }
  // The float32 operand of a stage's float64 value, when that is a widening cast of a costly
  // per-element value.
  const kir::Expr* costly_narrow_operand(const kir::Stage& st) {
    const kir::ExprPtr& v = st.value;
    if (st.combine == kir::Combine::ArgMax || v->kind != kir::ExprKind::Cast || v->dtype != DType::Float64) return nullptr;
    const kir::ExprPtr& operand = v->args.at(0);
    if (operand->dtype != DType::Float32 || em_.depth(operand) < Scope::Element || !costly(*operand)) return nullptr;
    return operand.get();
  }
  bool fills_row_cache(size_t stage) const {
    for (const RowCacheEntry& c : row_cache_)
      if (c.stage == stage) return true;
    return false;
  }
  void fill_row_cache(size_t stage, Scope& body) {
    for (const RowCacheEntry& c : row_cache_)
      if (c.stage == stage) body.line(c.array + "[r] = " + em_.value(c.value, body) + ";");
  }
  // Bytes of scratch per element of a row.
  size_t row_cache_bytes() const {
    size_t bytes = 0;
    for (const RowCacheEntry& c : row_cache_) bytes += static_cast<size_t>(dtype_size(c.value->dtype));
    return bytes;
  }

  // `static void fn(a, o_begin, o_end)`: rows [o_begin, o_end), each stage a pass over the row,
  // then the full-level stores' pass and the per-row stores. `cached`: with scratch memory, the
  // row cache's rows and the transposed tiles, carved from one allocation per call (64-byte
  // aligned each); without memory for it, the plain function runs instead.
  std::string rows_function(const std::string& fn, bool cached) {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    Indexing row_ix;
    row_ix.reduction = true;
    Scope row(Scope::Row, "    ", row_ix, &kernel_scope);
    start_rows(row, cached);
    for (size_t s = 0; s < k_.stages.size(); ++s) stage(s, row, cached);

    std::vector<const kir::Store*> full, per_row;
    for (const kir::Store& s : k_.stores)
      (k_.buffers.at(static_cast<size_t>(s.buffer)).level == kir::Level::Full ? full : per_row).push_back(&s);
    if (!full.empty()) {
      Scope body(Scope::Element, "        ", element_indexing(true, cached), &row);
      body.line("const int64_t r = r0 + k;");
      if (cached) use_row_cache(k_.stages.size(), body);
      for (const kir::Store* s : full) em_.store(*s, body);
      const std::string base = "o * inner + r0";
      row.append(row_blocks("    ", stream_targets("      ", base) + "      #pragma omp simd\n      for (int64_t k = 0; k < m; ++k) {\n" +
                                         body.code() + "      }\n" + stream_flush("      ", base)));
    }
    for (const kir::Store* s : per_row) em_.store(*s, row);

    std::string out = "static void " + fn + "(const GbcKernelArgs* a, int64_t o_begin, int64_t o_end) {\n";
    out += "  const int64_t inner = a->inner;\n";
    out += em_.buffer_locals("  ") + em_.scalar_locals("  ") + offset_arrays("  ") + stream_locals("  ") + kernel_scope.code();
    if (cached) {
      out += "  char* const gbc_rows = (char*)std::malloc((size_t)inner * " + scratch_bytes() + " + " +
             std::to_string(64 * (row_cache_.size() + tiled_.size() + 1)) + ");\n";
      out += "  if (!gbc_rows) {\n    " + k_.name + "_rows(a, o_begin, o_end);\n    return;\n  }\n";
      out += "  char* gbc_next_row = gbc_rows + (64 - (uintptr_t)gbc_rows % 64) % 64;\n";
      for (const RowCacheEntry& c : row_cache_) {
        const std::string type = c_type(c.value->dtype);
        out += "  " + type + "* __restrict__ " + c.array + " = (" + type + "*)gbc_next_row;\n";
        out += "  gbc_next_row += (inner * (int64_t)sizeof(" + type + ") + 63) / 64 * 64;\n";
      }
      for (int b : tiled_) {
        const std::string type = storage_c_type(b);
        out += "  " + type + "* __restrict__ " + tile(b) + " = (" + type + "*)gbc_next_row;\n";
        out += "  gbc_next_row += (GBC_TILE_ROWS * inner * (int64_t)sizeof(" + type + ") + 63) / 64 * 64;\n";
      }
    }
    if (cached && !tiled_.empty()) {
      out += "  for (int64_t o0 = o_begin; o0 < o_end; o0 += GBC_TILE_ROWS) {\n";
      out += "    const int64_t o1 = gbc_min_i64(o_end, o0 + GBC_TILE_ROWS);\n" + fill_tiles();
      out += "  for (int64_t o = o0; o < o1; ++o) {\n" + row.code() + "  }\n  }\n";
    } else {
      out += "  for (int64_t o = o_begin; o < o_end; ++o) {\n" + row.code() + "  }\n";
    }
    out += stream_fence("  ");
    if (cached) out += "  std::free(gbc_rows);\n";
    return out + "}\n\n";
  }

  // ---- the column schedule (kir::Kernel::columns; specialize.h) ----
  // Units of work are blocks of up to qb columns (q) of one p: each stage is a pass that walks r
  // outside a vectorized loop over the block's q, folding into one accumulator per column (s<k>[q],
  // in order of r: a fixed order, whatever the thread count); the full-level stores are one more
  // such pass, the per-o stores a loop over q. Reading r outside q reads the inputs in memory order.

  bool column_buffer(size_t b) const {
    return k_.buffers[b].level == kir::Level::Full && k_.buffers[b].index != kir::IndexKind::Scalar;
  }
  // The pointwise form: rows p of `cols` elements, each buffer's base offset once per row.
  std::string pointwise_columns_function(const std::string& fn) {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    Indexing ix = column_indexing();
    ix.reduction = false;
    Scope body(Scope::Element, "      ", ix, &kernel_scope);
    for (const kir::Store& s : k_.stores) em_.store(s, body);
    Indexing at;
    at.i = "ob";
    std::string out = "static void " + fn + "(const GbcKernelArgs* a, int64_t u_begin, int64_t u_end) {\n";
    out += "  const int64_t cols = a->cols;\n" + em_.buffer_locals("  ") + step_locals() + em_.scalar_locals("  ") +
           kernel_scope.code();
    out += "  for (int64_t u = u_begin; u < u_end; ++u) {\n    const int64_t ob = u * cols;\n";
    for (size_t b = 0; b < k_.buffers.size(); ++b)
      if (column_buffer(b))
        out += "    const int64_t base" + std::to_string(b) + " = " + em_.offset(static_cast<int>(b), at) + ";\n";
    out += "    #pragma omp simd\n    for (int64_t q = 0; q < cols; ++q) {\n" + body.code() + "    }\n";
    return out + "  }\n}\n\n";
  }
  // p<b>_sq for the buffers whose q step is passed at run time.
  std::string step_locals() const {
    std::string out;
    for (size_t b = 0; b < k_.buffers.size(); ++b)
      if (column_buffer(b) && k_.buffers[b].col_step == 2)
        out += "  const int64_t " + buffer_pointer(static_cast<int>(b)) + "_sq = a->buffers[" + std::to_string(b) + "].sq;\n";
    return out;
  }
  // The column buffers a pass touches: those its expressions load, and those it stores.
  std::set<int> column_buffers_of(const std::vector<kir::ExprPtr>& exprs, const std::vector<int>& stored = {}) const {
    std::set<const kir::Expr*> seen;
    for (const kir::ExprPtr& e : exprs) collect(e, seen);
    std::set<int> out(stored.begin(), stored.end());
    for (const kir::Expr* e : seen)
      if (e->kind == kir::ExprKind::Load && column_buffer(static_cast<size_t>(e->i))) out.insert(static_cast<int>(e->i));
    return out;
  }
  // The q loop's addressing: full-level buffers at base<b> (their offset at (ob, r)) plus q times
  // their q step, per-o buffers at o = ob + q, stage results at q.
  Indexing column_indexing(const std::string& suffix = "") const {
    Indexing ix;
    ix.reduction = true;
    ix.o = "(ob + q)";
    ix.stage = "q";
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      if (!column_buffer(b)) continue;
      const int step = k_.buffers[b].col_step;
      const std::string p = buffer_pointer(static_cast<int>(b));
      const std::string q = step == 0 ? "" : step == 1 ? " + q" : " + q * " + p + "_sq";
      ix.element[static_cast<int>(b)] = p + "[base" + std::to_string(b) + suffix + q + "]";
    }
    return ix;
  }
  // A stage's pass with kColumnUnroll rows folded per q loop: each column still folds r in
  // order (the same result as one row at a time), while the loop reads several rows' streams at
  // once and loads and stores its accumulator once for them; the rest of the rows one at a time.
  std::string unrolled_column_pass(const kir::Stage& st, const std::string& slot, Scope& kernel_scope,
                                   const std::string& single) {
    std::string body;
    std::vector<std::string> values;
    for (int u = 0; u < kColumnUnroll; ++u) {
      Scope row(Scope::Element, "        ", column_indexing("_" + std::to_string(u)), &kernel_scope);
      values.push_back(em_.value(st.value, row));
      body += row.code();
    }
    for (const std::string& v : values) body += "        " + fold_statement(st, slot, v) + "\n";
    const std::set<int> buffers = column_buffers_of({st.value});
    std::string out = "    int64_t r = 0;\n";
    const std::string unroll = std::to_string(kColumnUnroll);
    out += "    for (; r + " + unroll + " <= " + folded_count() + "; r += " + unroll + ") {\n";
    for (int u = 0; u < kColumnUnroll; ++u) {
      Indexing at;
      at.reduction = true;
      at.o = "ob";
      at.r = "(r + " + std::to_string(u) + ")";
      for (int b : buffers)
        out += "      const int64_t base" + std::to_string(b) + "_" + std::to_string(u) + " = " + em_.offset(b, at) + ";\n";
    }
    out += "      #pragma omp simd\n      for (int64_t q = 0; q < qm; ++q) {\n" + body + "      }\n    }\n";
    return out + column_pass(buffers, single, folded_count(), "");
  }
  // `for r` over `count` elements around the vectorized q loop `body`, with the bases of `buffers`;
  // `first` declares where r starts ("" to go on from an r declared before).
  std::string column_pass(const std::set<int>& buffers, const std::string& body, const std::string& count,
                          const std::string& first = "int64_t r = 0") const {
    Indexing at;
    at.reduction = true;
    at.o = "ob";
    std::string out = "    for (" + first + "; r < " + count + "; ++r) {\n";
    for (int b : buffers) out += "      const int64_t base" + std::to_string(b) + " = " + em_.offset(b, at) + ";\n";
    return out + "      #pragma omp simd\n      for (int64_t q = 0; q < qm; ++q) {\n" + body + "      }\n    }\n";
  }
  std::string column_stage(size_t index, Scope& kernel_scope) {
    const kir::Stage& st = k_.stages[index];
    const std::string k = std::to_string(index);
    const bool argmax = st.combine == kir::Combine::ArgMax;
    const std::string slot = (argmax ? "accv" : "s") + k + "[q]";
    std::string out = "    // s" + k + " = " + kir::combine_name(st.combine) + " over r\n";
    out += "    for (int64_t q = 0; q < qm; ++q) " + slot + " = " + identity_literal(st.combine, st.acc_dtype, cpu_dialect()) + ";\n";
    if (argmax) out += "    for (int64_t q = 0; q < qm; ++q) s" + k + "[q] = 0;\n";
    Scope body(Scope::Element, "        ", column_indexing(), &kernel_scope);
    const std::string v = em_.value(st.value, body);
    if (argmax) {
      argmax_fold(body, v, slot, "s" + k + "[q]");
      return out + column_pass(column_buffers_of({st.value}), body.code(), folded_count());
    }
    body.line(fold_statement(st, slot, v));
    return "    {\n" + out + unrolled_column_pass(st, slot, kernel_scope, body.code()) + "    }\n";
  }
  // The passes over the block: qb columns, sized by gbc_column_block from what a pass reads.
  std::string column_block_size(const std::string& inner) const {
    int64_t bytes = 0;
    for (size_t b = 0; b < k_.buffers.size(); ++b)
      if (column_buffer(b) && !k_.buffers[b].is_output && k_.buffers[b].col_step != 0) bytes += dtype_size(k_.buffers[b].dtype);
    bool full_stores = false;
    for (const kir::Store& s : k_.stores) full_stores = full_stores || column_buffer(static_cast<size_t>(s.buffer));
    const size_t passes = k_.stages.size() + (full_stores ? 1 : 0);
    return "gbc_column_block(" + inner + ", " + std::to_string(bytes) + ", " + std::to_string(passes) + ")";
  }
  std::string columns_function(const std::string& fn) {
    Scope kernel_scope(Scope::Kernel, "  ", Indexing{});
    std::string loop;
    for (size_t s = 0; s < k_.stages.size(); ++s) loop += column_stage(s, kernel_scope);
    std::vector<kir::ExprPtr> full_values;
    std::vector<int> full_buffers;
    Scope full(Scope::Element, "        ", column_indexing(), &kernel_scope);
    Scope per_o(Scope::Element, "      ", column_indexing(), &kernel_scope);
    for (const kir::Store& s : k_.stores) {
      if (!column_buffer(static_cast<size_t>(s.buffer))) {
        em_.store(s, per_o);
        continue;
      }
      em_.store(s, full);
      full_values.push_back(s.value);
      full_buffers.push_back(s.buffer);
    }
    if (!full_values.empty()) loop += column_pass(column_buffers_of(full_values, full_buffers), full.code(), "inner");
    if (!per_o.code().empty()) loop += "    #pragma omp simd\n    for (int64_t q = 0; q < qm; ++q) {\n" + per_o.code() + "    }\n";

    std::string out = "static void " + fn + "(const GbcKernelArgs* a, int64_t u_begin, int64_t u_end) {\n";
    out += "  const int64_t inner = a->inner, cols = a->cols;\n";
    out += "  const int64_t qb = " + column_block_size("inner") + ", blocks = (cols + qb - 1) / qb;\n";
    out += em_.buffer_locals("  ") + step_locals() + em_.scalar_locals("  ") + kernel_scope.code();
    for (size_t s = 0; s < k_.stages.size(); ++s) {
      const kir::Stage& st = k_.stages[s];
      const std::string k = std::to_string(s);
      if (st.combine == kir::Combine::ArgMax) {
        out += "  alignas(64) " + c_type(st.acc_dtype) + " accv" + k + "[GBC_COLUMN_BLOCK];\n";
        out += "  alignas(64) int64_t s" + k + "[GBC_COLUMN_BLOCK];\n";
      } else {
        out += "  alignas(64) " + c_type(st.acc_dtype) + " s" + k + "[GBC_COLUMN_BLOCK];\n";
      }
    }
    out += "  for (int64_t u = u_begin; u < u_end; ++u) {\n";
    out += "    const int64_t p = u / blocks, q0 = (u - p * blocks) * qb;\n";
    out += "    const int64_t qm = gbc_min_i64(qb, cols - q0), ob = p * cols + q0;\n";
    return out + loop + "  }\n}\n\n";
  }

  std::string reduction() {
    const std::string& name = k_.name;
    if (k_.columns) {
      std::string setup = "  const int64_t qb = " + column_block_size("a->inner") + ";\n";
      setup += "  const int64_t units = a->outer / a->cols * ((a->cols + qb - 1) / qb);\n";
      return columns_function(name + "_columns") +
             entry(setup, "units", "a->outer * a->inner", "(units + threads - 1) / threads", name + "_columns");
    }
    std::string out = rows_function(name + "_rows", false);
    std::string setup = "  const int64_t outer = a->outer;\n";
    if (row_cache_.empty() && tiled_.empty()) {
      setup += "  void (*const rows)(const GbcKernelArgs*, int64_t, int64_t) = " + name + "_rows;\n";
    } else {
      out += rows_function(name + "_rows_cached", true);
      setup += "  void (*const rows)(const GbcKernelArgs*, int64_t, int64_t) =\n";
      setup += "      a->inner <= GBC_ROW_CACHE_BYTES / " + scratch_bytes() + " ? " + name + "_rows_cached : " + name + "_rows;\n";
    }
    return out + entry(setup, "outer", "outer * a->inner", "(outer + threads - 1) / threads", "rows");
  }

  // The exported function: `range(a, begin, end)` over [0, count) on the calling thread, or in
  // chunks over OpenMP threads when `work` elements are worth it (gbc_cpu_threads). `work` is also
  // the element count of Contiguous full-level outputs, whose large ones get huge pages before
  // anything touches them (gbc_advise_huge_pages).
  std::string entry(const std::string& setup, const std::string& count, const std::string& work, const std::string& chunk,
                    const std::string& range) const {
    std::string out = "extern \"C\" void " + k_.name + "(const GbcKernelArgs* a) {\n";
    out += injected_crash();
    out += setup;
    for (size_t b = 0; b < k_.buffers.size(); ++b) {
      const kir::Buffer& buf = k_.buffers[b];
      if (!buf.is_output || buf.index != kir::IndexKind::Contiguous || buf.level != kir::Level::Full) continue;
      out += "  gbc_advise_huge_pages(a->buffers[" + std::to_string(b) + "].data, (" + work + ") * " +
             std::to_string(dtype_size(buf.dtype)) + ");\n";
    }
    out += "  const int threads = gbc_cpu_threads(" + work + ", " + count + ", a->num_threads);\n";
    out += "  if (threads <= 1) {\n    " + range + "(a, 0, " + count + ");\n    return;\n  }\n";
    out += "  const int64_t chunk = " + chunk + ";\n";
    out += "  #pragma omp parallel for num_threads(threads) schedule(static, 1)\n";
    out += "  for (int t = 0; t < threads; ++t) {\n";
    out += "    const int64_t begin = t * chunk, end = gbc_min_i64(" + count + ", begin + chunk);\n";
    out += "    if (begin < end) " + range + "(a, begin, end);\n";
    out += "  }\n}\n";
    return out;
  }

  // The injected crash bug: kernels computing kCrashFaultOp write through a null pointer first.
  std::string injected_crash() const {
    if (k_.fault != InjectedFault::Crash || !kir::computes_op(k_, kCrashFaultOp)) return "";
    return "  { int* volatile gbc_null = nullptr; *gbc_null = 1; }  // injected fault: crash\n";
  }

  const kir::Kernel& k_;
  CEmitter em_;
  std::vector<int> blocked_;       // Strided buffers indexed per element
  std::vector<int> row_started_;   // Strided buffers indexed from each row's start
  std::vector<RowCacheEntry> row_cache_;
  std::vector<int> tiled_;         // inputs copied into transposed tiles in the scratch function
  std::vector<int> streamed_;      // contiguous full-level outputs, written through d<b> (plan_streams)
  std::string lanes_ = "GBC_LANES";  // the accumulators per stage (a macro of kernel_support.h)
};

}  // namespace

std::string generate_cpu_kernel(const kir::Kernel& kernel) { return CpuKernelWriter(kernel).write(); }

const std::string& cpu_kernel_header() {
  static const std::string header =
      std::string(kernel_abi_h_source()) + std::string(kernel_std_h_source()) + std::string(kernel_prelude_h_source()) +
      std::string(kernel_support_h_source());
  return header;
}

std::string generate_cpu_source(const std::vector<kir::Kernel>& kernels, const std::string& graph_name) {
  const TranslationUnitParts parts{"CPU kernels", "compiler/codegen/cpu_codegen.cpp", {cpu_kernel_header()},
                                   generate_cpu_kernel};
  return assemble_translation_unit(parts, kernels, graph_name);
}

}  // namespace gbc::codegen
