// Backends with known bugs for the reducer's tests: each runs the graph eagerly after a planted
// change, so the bug and where it lives are known exactly (fault injection for gbc is the other
// way to get such bugs; these need nothing compiled).
#pragma once

#include <ATen/ATen.h>

#include <csignal>
#include <fstream>
#include <string>

#include "compiler/aten/eager_executor.h"
#include "compiler/backends/backend.h"

namespace gbc::testing {

/// Miscompiles one op kind: every `from` node runs as `to` (same arity and types).
class MiscompilingBackend : public Backend {
 public:
  MiscompilingBackend(const std::string& from, const std::string& to) : from_(op_id(from)), to_(op_id(to)) {}
  std::string name() const override { return "planted"; }
  void prepare(const Graph& graph, const BackendOptions&) override { load(graph, true); }
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    return run_eager(miscompiles(inputs) ? planted_ : correct_, inputs);
  }
  const BackendStats& stats() const override { return stats_; }

 protected:
  /// Keeps `graph`, and a copy with the bug planted when `plant` (else the same graph).
  void load(const Graph& graph, bool plant) {
    correct_ = planted_ = graph;
    if (!plant) return;
    for (Node& n : planted_.body.nodes)
      if (n.op == from_) n.op = to_;
  }
  /// Whether the planted copy runs on these inputs: always, unless a subclass narrows the bug.
  virtual bool miscompiles(const std::vector<at::Tensor>& /*inputs*/) const { return true; }

 private:
  OpId from_, to_;
  Graph correct_, planted_;
  BackendStats stats_;
};

/// Miscompiles `from` into `to` only when an input is an expanded view (a stride of 0 on a dim
/// longer than 1), as a kernel that assumes distinct elements would: a bug only a layout reaches.
class ExpandedInputBackend : public MiscompilingBackend {
 public:
  using MiscompilingBackend::MiscompilingBackend;
  std::string name() const override { return "views"; }

 protected:
  bool miscompiles(const std::vector<at::Tensor>& inputs) const override {
    for (const at::Tensor& t : inputs)
      for (int64_t d = 0; d < t.dim(); ++d)
        if (t.stride(d) == 0 && t.size(d) > 1) return true;
    return false;
  }
};

/// Segfaults whenever the graph holds an op of kind `op`, as generated code with a bad index would.
class CrashingBackend : public Backend {
 public:
  explicit CrashingBackend(const std::string& op) : op_(op_id(op)) {}
  std::string name() const override { return "crashing"; }
  void prepare(const Graph& graph, const BackendOptions&) override { graph_ = graph; }
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    for (const Node& n : graph_.body.nodes)
      if (n.op == op_) std::raise(SIGSEGV);
    return run_eager(graph_, inputs);
  }
  const BackendStats& stats() const override { return stats_; }

 private:
  OpId op_;
  Graph graph_;
  BackendStats stats_;
};

/// Miscompiles tanh into sigmoid on every other preparation, counted in a file because every
/// check runs in a fresh child process: a flaky compiler.
class FlakyBackend : public MiscompilingBackend {
 public:
  explicit FlakyBackend(std::string counter_file) : MiscompilingBackend("tanh", "sigmoid"), file_(std::move(counter_file)) {}
  std::string name() const override { return "flaky"; }
  void prepare(const Graph& graph, const BackendOptions&) override {
    int count = 0;
    std::ifstream(file_) >> count;
    std::ofstream(file_) << count + 1;
    load(graph, count % 2 == 0);
  }

 private:
  std::string file_;
};

}  // namespace gbc::testing
