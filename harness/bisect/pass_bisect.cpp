#include "harness/bisect/pass_bisect.h"

#include <algorithm>

#include "compiler/passes/pass_manager.h"

namespace gbc {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

class PassSearch {
 public:
  PassSearch(const Model& model, const std::string& stage, const ProbeOptions& options, PassBisection& out)
      : model_(model), stage_(stage), options_(options), out_(out) {}

  bool diverges_without(const std::vector<std::string>& passes) {
    ProbeOptions o = options_;
    o.disabled_passes.insert(o.disabled_passes.end(), passes.begin(), passes.end());
    bool diverged = probe_backend(model_, stage_, o).diverged;
    out_.probes.push_back({passes, diverged});
    return diverged;
  }

  void run() {
    std::vector<std::string> suspects = out_.candidates;
    if (suspects.empty()) {
      out_.note = stage_ + " runs no pass that can be disabled";
      return;
    }
    if (diverges_without(suspects)) {
      out_.note = "the divergence remains with every pass disabled (" + join(suspects) + "): it is in " + stage_ +
                  "'s lowering, runtime or code generation, not in a pass";
      return;
    }
    while (suspects.size() > 1) {
      size_t half = suspects.size() / 2;
      std::vector<std::string> first(suspects.begin(), suspects.begin() + static_cast<long>(half));
      std::vector<std::string> second(suspects.begin() + static_cast<long>(half), suspects.end());
      if (!diverges_without(first)) {
        suspects = first;
      } else if (!diverges_without(second)) {
        suspects = second;
      } else {
        one_at_a_time(suspects);
        return;
      }
    }
    out_.pass = suspects.front();
  }

 private:
  void one_at_a_time(const std::vector<std::string>& suspects) {
    for (const auto& p : suspects) {
      if (!diverges_without({p})) {
        out_.pass = p;
        return;
      }
    }
    out_.together = suspects;
    out_.note = "no single pass: the divergence goes away only when " + join(suspects) + " are disabled together";
  }

  const Model& model_;
  const std::string& stage_;
  const ProbeOptions& options_;
  PassBisection& out_;
};

}  // namespace

std::vector<std::string> passes_of_stage(const std::string& stage) {
  std::vector<std::string> names;
  if (stage == "decomp") {
    for (const auto& p : graph_pipeline()) names.push_back(p.name);
  } else if (stage == "gbc-interp" || stage == "gbc") {
    names = all_pass_names();
  }
  return names;
}

PassBisection bisect_passes(const Model& model, const std::string& stage, const ProbeOptions& options) {
  PassBisection out;
  const auto& already = options.run.backend_options.disabled_passes;
  for (const auto& p : passes_of_stage(stage))
    if (std::find(already.begin(), already.end(), p) == already.end()) out.candidates.push_back(p);
  PassSearch(model, stage, options, out).run();
  return out;
}

}  // namespace gbc
