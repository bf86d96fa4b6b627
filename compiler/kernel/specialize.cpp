// Layout specialization (specialize.h): index kinds from collapsed sizes and strides, layout keys,
// and the GbcKernelArgs the runtime and the tests pass to kernels.
#include "compiler/kernel/specialize.h"

#include <algorithm>
#include <optional>

namespace gbc {
namespace {

int64_t product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

// Dims in the order a buffer at this level is iterated (indices into iter_shape).
std::vector<int> iteration_order(const LoweredKernel& k, kir::Level level) {
  std::vector<int> order;
  int rank = static_cast<int>(k.iter_shape.size());
  const auto& reduced = k.reduced_dims;
  for (int d = 0; d < rank; ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) order.push_back(d);
  if (k.kernel.kind == kir::KernelKind::Pointwise || level == kir::Level::Full)
    order.insert(order.end(), reduced.begin(), reduced.end());
  return order;
}

// Drops size-1 dims and merges neighbours that step through memory as one dim; the linear index
// unflattened over the result gives the same offsets.
BufferLayout collapse(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, size_t begin,
                      size_t end) {
  BufferLayout out;
  for (size_t d = begin; d < end; ++d) {
    if (sizes[d] == 1) continue;
    if (!out.sizes.empty() && out.strides.back() == strides[d] * sizes[d]) {
      out.sizes.back() *= sizes[d];
      out.strides.back() = strides[d];
      continue;
    }
    out.sizes.push_back(sizes[d]);
    out.strides.push_back(strides[d]);
  }
  return out;
}

BufferSpec strided(const BufferLayout& layout) {
  BufferLayout c = collapse(layout.sizes, layout.strides, 0, layout.sizes.size());
  BufferSpec spec;
  spec.index = kir::IndexKind::Strided;
  spec.sizes = c.sizes;
  spec.strides = c.strides;
  return spec;
}

// One linear index: i (pointwise) or o (outer level).
BufferSpec specialize_linear(const BufferLayout& layout) {
  BufferLayout c = collapse(layout.sizes, layout.strides, 0, layout.sizes.size());
  BufferSpec spec;
  if (c.sizes.empty() || (c.sizes.size() == 1 && c.strides[0] == 0)) {
    spec.index = kir::IndexKind::Scalar;
  } else if (c.sizes.size() == 1) {
    spec.index = c.strides[0] == 1 ? kir::IndexKind::Contiguous : kir::IndexKind::Affine;
    spec.s0 = c.strides[0];
  } else {
    spec = strided(layout);
  }
  return spec;
}

// Two indices: o over the first `outer_rank` dims, r over the rest.
BufferSpec specialize_full(const BufferLayout& layout, size_t outer_rank) {
  size_t rank = layout.sizes.size();
  BufferLayout co = collapse(layout.sizes, layout.strides, 0, outer_rank);
  BufferLayout ci = collapse(layout.sizes, layout.strides, outer_rank, rank);
  int64_t inner = product(layout.sizes, outer_rank, rank);
  if (co.sizes.size() > 1 || ci.sizes.size() > 1) {
    BufferSpec spec = strided(layout);
    // Each row a contiguous run (a [T, T] mask broadcast over heads): when the last merged dim
    // has stride 1 and whole rows, a row starts at the offset of its first element and r adds r.
    spec.r_contiguous = inner > 1 && !spec.sizes.empty() && spec.strides.back() == 1 && spec.sizes.back() % inner == 0;
    return spec;
  }
  BufferSpec spec;
  spec.s0 = co.sizes.empty() ? 0 : co.strides[0];
  spec.s1 = ci.sizes.empty() ? 0 : ci.strides[0];
  // A single row or a single column makes its stride irrelevant.
  bool o_contiguous = co.sizes.empty() || spec.s0 == inner;
  bool r_contiguous = ci.sizes.empty() || spec.s1 == 1;
  if (spec.s0 == 0 && spec.s1 == 0) spec.index = kir::IndexKind::Scalar;
  else if (o_contiguous && r_contiguous) spec.index = kir::IndexKind::Contiguous;
  else spec.index = kir::IndexKind::Affine;
  spec.r_contiguous = spec.index == kir::IndexKind::Affine && !ci.sizes.empty() && spec.s1 == 1;
  return spec;
}

// Fewer columns than this stay in the row schedule: a q loop that short does not pay for itself.
constexpr int64_t kMinColumns = 8;

// The stride of dims [begin, end) of a layout taken as one index: 0 when they are all broadcast
// (or absent), nullopt when they do not merge into one dim.
std::optional<int64_t> merged_stride(const BufferLayout& layout, size_t begin, size_t end) {
  BufferLayout c = collapse(layout.sizes, layout.strides, begin, end);
  if (c.sizes.size() > 1) return std::nullopt;
  return c.sizes.empty() ? 0 : c.strides[0];
}

// The stride of the innermost reduced dim that is not of size 1 (0 when there is none).
int64_t innermost_reduced_stride(const BufferLayout& layout, size_t outer_rank) {
  for (size_t d = layout.sizes.size(); d > outer_rank; --d)
    if (layout.sizes[d - 1] != 1) return layout.strides[d - 1];
  return 0;
}

// Chooses the column schedule (specialize.h) for a reduction: the longest run of trailing kept
// dims that every full-level buffer steps through with one stride, taken when the full-level
// inputs read more bytes contiguously along it than along their innermost reduced dim (outputs
// count half: they are written once, the inputs read once per pass). Buffers broadcast along
// either index (a [C] weight) stay in cache whichever way they are walked and do not count.
void plan_columns(const LoweredKernel& kernel, const std::vector<BufferLayout>& layouts, size_t outer_rank,
                  Specialization& spec) {
  const auto& buffers = kernel.kernel.buffers;
  std::vector<size_t> full;
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].level == kir::Level::Full) full.push_back(b);
  if (full.empty() || outer_rank == 0) return;
  size_t begin = outer_rank;
  std::vector<int64_t> steps(buffers.size(), 0);
  for (size_t j = outer_rank; j-- > 0;) {
    std::vector<int64_t> candidate(buffers.size(), 0);
    bool merges = true;
    for (size_t b : full) {
      std::optional<int64_t> stride = merged_stride(layouts[b], j, outer_rank);
      merges = merges && stride.has_value();
      if (stride) candidate[b] = *stride;
    }
    if (!merges) break;
    begin = j;
    steps = candidate;
  }
  const int64_t columns = product(layouts[full[0]].sizes, begin, outer_rank);
  if (begin == outer_rank || columns < kMinColumns) return;
  int64_t score = 0;
  for (size_t b : full) {
    const int64_t weight = dtype_size(buffers[b].dtype) * (buffers[b].is_output ? 1 : 2);
    const int64_t r_stride = innermost_reduced_stride(layouts[b], outer_rank);
    if (steps[b] == 0 || r_stride == 0) continue;
    if (steps[b] == 1) score += weight;
    if (r_stride == 1) score -= weight;
  }
  if (score <= 0) return;
  spec.columns = columns;
  for (size_t b : full) {
    BufferSpec& s = spec.buffers[b];
    s.col_step = steps[b] == 0 || steps[b] == 1 ? static_cast<int>(steps[b]) : 2;
    s.sq = steps[b];
  }
}

// The row walk of pointwise kernels with Strided buffers (specialize.h): the longest run of
// trailing dims that every buffer steps through with one stride, when it has enough elements.
void plan_pointwise_rows(const std::vector<BufferLayout>& layouts, Specialization& spec) {
  const auto& buffers = spec.buffers;
  if (layouts.empty() || std::none_of(buffers.begin(), buffers.end(),
                                      [](const BufferSpec& b) { return b.index == kir::IndexKind::Strided; }))
    return;
  const size_t rank = layouts[0].sizes.size();
  size_t begin = rank;
  std::vector<int64_t> steps;
  for (size_t j = rank; j-- > 0;) {
    std::vector<int64_t> candidate;
    for (const BufferLayout& layout : layouts) {
      std::optional<int64_t> stride = merged_stride(layout, j, rank);
      if (!stride) break;
      candidate.push_back(*stride);
    }
    if (candidate.size() != layouts.size()) break;
    begin = j;
    steps = candidate;
  }
  const int64_t width = product(layouts[0].sizes, begin, rank);
  if (begin == rank || width < kMinColumns) return;
  spec.columns = width;
  for (size_t b = 0; b < buffers.size(); ++b) {
    spec.buffers[b].col_step = steps[b] == 0 || steps[b] == 1 ? static_cast<int>(steps[b]) : 2;
    spec.buffers[b].sq = steps[b];
  }
}

// A full-level input of a reduction that every reduced dim broadcasts (stride 0, or size 1) holds
// one value per row: it is specialized as an outer-level buffer over the kept dims, so that kernels
// load it once per row instead of computing (often gathering) the same offset for every r. The
// column schedule walks r outside q and keeps its own handling of such buffers.
void read_per_row(const BufferLayout& layout, size_t outer_rank, BufferSpec& spec) {
  if (spec.index == kir::IndexKind::Scalar) return;
  int64_t inner = 1;
  for (size_t d = outer_rank; d < layout.sizes.size(); ++d) {
    if (layout.sizes[d] != 1 && layout.strides[d] != 0) return;
    inner *= layout.sizes[d];
  }
  if (inner <= 1) return;
  BufferLayout outer;
  outer.sizes.assign(layout.sizes.begin(), layout.sizes.begin() + static_cast<std::ptrdiff_t>(outer_rank));
  outer.strides.assign(layout.strides.begin(), layout.strides.begin() + static_cast<std::ptrdiff_t>(outer_rank));
  spec = specialize_linear(outer);
  spec.per_row = true;
}

std::string token(const BufferSpec& spec) {
  if (spec.per_row) {
    BufferSpec linear = spec;
    linear.per_row = false;
    return "o" + token(linear);
  }
  switch (spec.index) {
    case kir::IndexKind::Contiguous: return "C";
    case kir::IndexKind::Scalar: return "S";
    case kir::IndexKind::Affine: return spec.r_contiguous ? "Ar" : "A";
    case kir::IndexKind::Strided: return "T" + std::to_string(spec.sizes.size()) + (spec.r_contiguous ? "r" : "");
  }
  return "?";
}

}  // namespace

std::vector<int64_t> iteration_sizes(const LoweredKernel& kernel, const DimBindings& bindings) {
  auto sizes = eval_shape(kernel.iter_shape, bindings);
  GBC_INTERNAL_ASSERT(sizes.has_value(), "specialize: unbound dim in iteration shape " + shape_str(kernel.iter_shape));
  return *sizes;
}

BufferLayout iteration_layout(const LoweredKernel& kernel, size_t buffer, const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, const std::vector<int64_t>& iter_sizes) {
  const auto& dims = kernel.buffer_dims.at(buffer);
  const std::string& name = kernel.kernel.buffers.at(buffer).name;
  GBC_INTERNAL_ASSERT(sizes.size() == dims.size() && strides.size() == dims.size(),
                      "specialize: buffer '" + name + "' has rank " + std::to_string(sizes.size()) + ", expected " +
                          std::to_string(dims.size()));
  GBC_INTERNAL_ASSERT(iter_sizes.size() == kernel.iter_shape.size(), "specialize: iteration sizes of the wrong rank");
  std::vector<int> order = iteration_order(kernel, kernel.kernel.buffers[buffer].level);
  std::vector<int64_t> stride_of(iter_sizes.size(), 0);
  for (size_t j = 0; j < dims.size(); ++j) {
    size_t d = static_cast<size_t>(dims[j]);
    bool iterated = std::find(order.begin(), order.end(), dims[j]) != order.end();
    if (iterated && sizes[j] == iter_sizes[d]) {
      stride_of[d] = strides[j];
      continue;
    }
    GBC_INTERNAL_ASSERT(sizes[j] == 1, "specialize: buffer '" + name + "' dim " + std::to_string(j) + " has size " +
                                           std::to_string(sizes[j]) + ", which does not broadcast to " +
                                           std::to_string(iter_sizes[d]));
  }
  BufferLayout layout;
  for (int d : order) {
    layout.sizes.push_back(iter_sizes[static_cast<size_t>(d)]);
    layout.strides.push_back(stride_of[static_cast<size_t>(d)]);
  }
  if (kernel.kernel.fault == InjectedFault::Broadcast) {
    // The injected broadcast bug: every dim after the first broadcast one loses its stride too.
    bool broadcast = false;
    for (size_t j = 0; j < layout.sizes.size(); ++j) {
      if (broadcast) layout.strides[j] = 0;
      else broadcast = layout.strides[j] == 0 && layout.sizes[j] > 1;
    }
  }
  return layout;
}

Specialization specialize_layouts(const LoweredKernel& kernel, const std::vector<BufferLayout>& layouts) {
  const auto& buffers = kernel.kernel.buffers;
  GBC_INTERNAL_ASSERT(layouts.size() == buffers.size(), "specialize: one layout per buffer expected");
  size_t outer_rank = kernel.iter_shape.size() - kernel.reduced_dims.size();
  Specialization spec;
  for (size_t b = 0; b < buffers.size(); ++b) {
    const BufferLayout& layout = layouts[b];
    BufferSpec s;
    if (product(layout.sizes, 0, layout.sizes.size()) == 0) {
      s.index = kir::IndexKind::Contiguous;  // nothing is read or written
    } else if (kernel.kernel.kind == kir::KernelKind::Reduction && buffers[b].level == kir::Level::Full) {
      s = specialize_full(layout, outer_rank);
    } else {
      s = specialize_linear(layout);
    }
    GBC_INTERNAL_ASSERT(s.sizes.size() <= GBC_MAX_RANK,
                        "specialize: buffer '" + buffers[b].name + "' needs more than " +
                            std::to_string(GBC_MAX_RANK) + " strided dims");
    spec.buffers.push_back(std::move(s));
  }
  if (kernel.kernel.kind == kir::KernelKind::Reduction) {
    plan_columns(kernel, layouts, outer_rank, spec);
    if (spec.columns == 0) {
      for (size_t b = 0; b < buffers.size(); ++b)
        if (buffers[b].level == kir::Level::Full && !buffers[b].is_output) read_per_row(layouts[b], outer_rank, spec.buffers[b]);
    }
  } else {
    plan_pointwise_rows(layouts, spec);
  }
  for (size_t b = 0; b < spec.buffers.size(); ++b) spec.layout_key += (b ? "," : "") + token(spec.buffers[b]);
  if (spec.columns > 0) {
    spec.layout_key += "|q";
    for (const BufferSpec& s : spec.buffers) spec.layout_key += s.col_step < 0 ? "-" : s.col_step == 2 ? "s" : std::to_string(s.col_step);
  }
  return spec;
}

kir::Kernel specialized_kernel(const kir::Kernel& kernel, const Specialization& spec) {
  kir::Kernel out = kernel;
  GBC_INTERNAL_ASSERT(spec.buffers.size() == out.buffers.size(), "specialize: specialization of another kernel");
  for (size_t b = 0; b < out.buffers.size(); ++b) {
    out.buffers[b].index = spec.buffers[b].index;
    out.buffers[b].rank = static_cast<int>(spec.buffers[b].sizes.size());
    out.buffers[b].r_contiguous = spec.buffers[b].r_contiguous;
    out.buffers[b].col_step = spec.buffers[b].col_step;
    if (spec.buffers[b].per_row) out.buffers[b].level = kir::Level::Outer;
  }
  out.columns = spec.columns > 0;
  return out;
}

RowSizes row_sizes(const LoweredKernel& kernel, const std::vector<int64_t>& iter_sizes) {
  RowSizes rows;
  for (size_t d = 0; d < iter_sizes.size(); ++d) {
    bool reduced = std::find(kernel.reduced_dims.begin(), kernel.reduced_dims.end(), static_cast<int>(d)) !=
                   kernel.reduced_dims.end();
    (reduced ? rows.inner : rows.outer) *= iter_sizes[d];
  }
  return rows;
}

KernelArgs::KernelArgs(const LoweredKernel& kernel, const Specialization& spec, const std::vector<void*>& data,
                       const std::vector<int64_t>& iter_sizes, std::vector<double> scalars, int32_t num_threads)
    : scalars_(std::move(scalars)) {
  GBC_INTERNAL_ASSERT(data.size() == spec.buffers.size(), "kernel args: one data pointer per buffer expected");
  GBC_INTERNAL_ASSERT(scalars_.size() == kernel.scalar_values.size(), "kernel args: wrong number of host scalars");
  for (size_t b = 0; b < data.size(); ++b) {
    const BufferSpec& s = spec.buffers[b];
    GbcBufferArg arg{};
    arg.data = data[b];
    arg.s0 = s.s0;
    arg.s1 = s.s1;
    arg.rank = static_cast<int32_t>(s.sizes.size());
    std::copy(s.sizes.begin(), s.sizes.end(), arg.sizes);
    std::copy(s.strides.begin(), s.strides.end(), arg.strides);
    arg.sq = s.sq;
    buffers_.push_back(arg);
  }
  args_.numel = product(iter_sizes, 0, iter_sizes.size());
  const RowSizes rows = row_sizes(kernel, iter_sizes);
  args_.outer = rows.outer;
  args_.inner = rows.inner;
  args_.cols = spec.columns;
  args_.num_threads = num_threads;
}

const GbcKernelArgs* KernelArgs::get() {
  args_.buffers = buffers_.data();
  args_.scalars = scalars_.data();
  return &args_;
}

}  // namespace gbc
