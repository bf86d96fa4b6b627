#include "harness/runner/prepare_path.h"

#include <exception>

#include "compiler/ir/diagnostics.h"

namespace gbc {
namespace {

// A backend whose prepare() threw: every run throws that exception again.
class FailedPreparation : public Backend {
 public:
  FailedPreparation(std::unique_ptr<Backend> backend, std::exception_ptr failure)
      : backend_(std::move(backend)), failure_(std::move(failure)) {}
  std::string name() const override { return backend_->name(); }
  void prepare(const Graph&, const BackendOptions&) override {}
  std::vector<at::Tensor> run(const std::vector<at::Tensor>&) override { std::rethrow_exception(failure_); }
  const BackendStats& stats() const override { return backend_->stats(); }

 private:
  std::unique_ptr<Backend> backend_;
  std::exception_ptr failure_;
};

}  // namespace

std::unique_ptr<Backend> prepare_path(const BackendInfo& info, const Graph& graph, const BackendOptions& options) {
  std::unique_ptr<Backend> b = info.create();
  GBC_INTERNAL_ASSERT(b != nullptr, "backend " + info.name + " created nothing");
  try {
    b->prepare(graph, options);
  } catch (const InputError&) {
    throw;  // the user's model or config: exit 2, whichever backend noticed
  } catch (const std::exception&) {
    return std::make_unique<FailedPreparation>(std::move(b), std::current_exception());
  }
  return b;
}

}  // namespace gbc
