// EagerBackend: no compilation, no events; stats stay zero.
#include "compiler/backends/eager_backend.h"

#include "compiler/aten/eager_executor.h"

namespace gbc {
namespace {

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }

  void prepare(const Graph& graph, const BackendOptions& options) override {
    graph_ = graph;
    options_ = options;
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    EagerOptions eo;
    eo.print_sink = options_.print_sink;
    // Tensors the graph creates (full) follow the check's device even when there are no inputs.
    if (options_.device == "cuda") eo.device = c10::Device(c10::DeviceType::CUDA, 0);
    return run_eager(graph_, inputs, eo);
  }

  const BackendStats& stats() const override { return stats_; }

 private:
  Graph graph_;
  BackendOptions options_;
  BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_eager_backend() { return std::make_unique<EagerBackend>(); }

}  // namespace gbc
