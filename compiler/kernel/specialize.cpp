// Layout specialization (specialize.h): index kinds from collapsed sizes and strides, layout keys,
// and the GbcKernelArgs the runtime and the tests pass to kernels.
#include "compiler/kernel/specialize.h"

#include <algorithm>

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
  if (co.sizes.size() > 1 || ci.sizes.size() > 1) return strided(layout);
  int64_t inner = product(layout.sizes, outer_rank, rank);
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

std::string token(const BufferSpec& spec) {
  switch (spec.index) {
    case kir::IndexKind::Contiguous: return "C";
    case kir::IndexKind::Scalar: return "S";
    case kir::IndexKind::Affine: return spec.r_contiguous ? "Ar" : "A";
    case kir::IndexKind::Strided: return "T" + std::to_string(spec.sizes.size());
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
    spec.layout_key += (b ? "," : "") + token(s);
    spec.buffers.push_back(std::move(s));
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
  }
  return out;
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
    buffers_.push_back(arg);
  }
  args_.numel = product(iter_sizes, 0, iter_sizes.size());
  args_.outer = 1;
  args_.inner = 1;
  for (size_t d = 0; d < iter_sizes.size(); ++d) {
    bool reduced = std::find(kernel.reduced_dims.begin(), kernel.reduced_dims.end(), static_cast<int>(d)) !=
                   kernel.reduced_dims.end();
    (reduced ? args_.inner : args_.outer) *= iter_sizes[d];
  }
  args_.num_threads = num_threads;
}

const GbcKernelArgs* KernelArgs::get() {
  args_.buffers = buffers_.data();
  args_.scalars = scalars_.data();
  return &args_;
}

}  // namespace gbc
