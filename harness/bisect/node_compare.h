// The third step of `gbcheck bisect`: the first IR node whose value diverges from eager's. Eager
// runs the model and records every intermediate value (EagerOptions::on_value); the stage's kernel
// region (compiler/runtime/kernel_region.h: graph pipeline, partition, lowering, with the same
// disabled passes and injected fault) runs with every fused kernel in the kernel-IR interpreter,
// watched by a KernelObserver that sees each member node's value at each element. Intermediates
// are never made kernel outputs, so looking does not change what gets fused. Nodes the pipeline
// created (decompositions) have no eager value and are skipped. For decomp the pipeline's graph
// runs op by op on ATen instead. CPU only. Backends that show node values by name themselves
// (adapters, compiler/backends/node_value_source.h) are compared value by value in graph order.
// Test: tests/bisect/bisect_test.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "compiler/backends/node_value_source.h"
#include "harness/model/model.h"

namespace gbc {

struct TestCase;  // harness/inputs/input_generator.h (its tensors need LibTorch's headers)

struct NodeDivergence {
  std::string node;    // the graph value (the model's id)
  std::string op;
  SourceLoc loc;       // where the model defines it
  std::string kernel;  // the fused kernel computing it ("" when it runs on ATen)
  int64_t elements = 0, mismatches = 0;
  std::vector<int64_t> index;  // the first mismatching element, in the kernel's iteration order
  double expected = 0.0, actual = 0.0;
};

struct NodeComparison {
  std::optional<NodeDivergence> first;
  int kernels = 0;         // fused kernels interpreted
  int nodes_compared = 0;
  std::vector<std::string> skipped;   // nodes without an eager value
  std::vector<std::string> declined;  // nodes a backend has no value for, with its reason ("b: why")
  std::string note;        // why nothing could be compared, or what agreement means
};

/// Whether `backend` is one of gbc's ladder's stages that show node values through gbcheck
/// (decomp, gbc-interp, gbc); others show them themselves, if at all (prepare_node_source()).
bool ladder_shows_node_values(const std::string& backend);

/// A backend outside the ladder, prepared for the model, and the node values it shows (an adapter
/// with the node_values feature); `source` is nullptr when it shows only its outputs.
struct PreparedNodeSource {
  std::unique_ptr<Backend> backend;
  NodeValueSource* source = nullptr;
};
PreparedNodeSource prepare_node_source(const Model& model, const std::string& backend, const BackendOptions& options);

/// The note for a backend that shows only its outputs.
std::string shows_only_outputs(const std::string& backend);

/// Compares eager's values with `stage`'s (decomp, gbc-interp or gbc) on one test case.
NodeComparison compare_nodes(const Model& model, const std::string& stage, const TestCase& tc,
                             const BackendOptions& options);

/// Compares eager's values with those a prepared backend shows itself, in the graph's order, on
/// one test case; the nodes it declines are listed in `declined` with its reason.
NodeComparison compare_shown_nodes(const Model& model, NodeValueSource& backend, const TestCase& tc, const std::string& device);

/// Any backend's node values against eager's on one test case: the ladder's through compare_nodes,
/// others prepared here and compared through compare_shown_nodes; one that shows none, or whose
/// values cannot be had (its adapter failed), gets a note saying why.
NodeComparison compare_backend_nodes(const Model& model, const std::string& backend, const TestCase& tc,
                                     const BackendOptions& options);

}  // namespace gbc
