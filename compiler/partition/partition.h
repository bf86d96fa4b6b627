// The fusion partitioner: splits one straight-line block into the steps a compiled region runs, in
// an order that respects every data dependence:
// - Kernel steps: groups of elementwise ops and reductions fused into one generated kernel.
//   A pointwise group computes values of one shape (inputs may broadcast to it). A reduction
//   group reduces one input shape over one set of dims; elementwise prologues and epilogues at the
//   full shape and epilogues at the reduced shape join it, so a decomposed softmax, log_softmax or
//   layer_norm is one kernel.
// - Extern steps: matmul, linear, bmm, conv2d (ATen calls inside the compiled graph).
// - Library steps: view/shape ops, cat, full, dropout, normalizations left undecomposed, custom ops
//   with meta: run through ATen by the runtime, deliberately.
// - Eager steps: anything a compiled region cannot hold (print, item, nonzero, in-place, custom
//   without meta), each with the reason.
// Groups never create a cycle between steps, and nothing moves across an Eager step or a node with
// side effects (random dropout, batch_norm updating its running stats).
// Runs after the graph passes (decompose first, so normalizations become primitives); the runtime
// has already split the graph at its graph breaks. Tests: tests/kernel/partition_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

struct FusionGroup {
  enum class Kind { Pointwise, Reduction } kind = Kind::Pointwise;
  std::vector<size_t> nodes;     // indices into block.nodes, program order
  std::vector<ValueId> inputs;   // tensors (and host scalars) read from outside, first use first
  std::vector<ValueId> outputs;  // values used after the group or graph/block outputs, program order
};

struct Step {
  enum class Kind { Kernel, Extern, Library, Eager } kind = Kind::Kernel;
  size_t index = 0;    // group index for Kernel, else node index
  std::string reason;  // Eager: why the node has no lowering; Library: why it runs on ATen
};

struct PartitionPlan {
  std::vector<FusionGroup> groups;
  std::vector<Step> steps;  // execution order; every node in exactly one step
};

struct PartitionOptions {
  bool fuse = true;  // false ("fuse" disabled): every fusible op is its own kernel
  size_t max_group_nodes = 64;
};

PartitionPlan partition_block(const Graph& graph, const Block& block, const PartitionOptions& options = {});

/// A readable listing (`--log kernels`, `gbcheck explain`, tests):
///   kernel 0 reduction [m, s, e, t, y]  in: x  out: y
///   extern h = matmul(x, w)
///   eager print: side effect
std::string print_partition(const Graph& graph, const Block& block, const PartitionPlan& plan);

/// The dims a reduction node reduces, normalized and ascending (every dim when `dim` is absent or
/// empty; none for a 0-d input). Shared with the lowering so both agree on the iteration space.
std::vector<int> reduced_dims_of(const Graph& graph, const Node& node);

}  // namespace gbc
