#include "harness/bisect/bisect.h"

#include <c10/core/Device.h>

#include <algorithm>

#include "harness/inputs/input_generator.h"

namespace gbc {
namespace {

const std::vector<std::string>& ladder() {
  static const std::vector<std::string> stages = {"trace", "decomp", "gbc-interp", "gbc"};
  return stages;
}

// The options every command printed shares: seed, fault, the user's disabled passes.
std::string common_flags(const BisectResult& r) {
  std::string s = " --seed " + std::to_string(r.seed);
  for (const auto& p : r.disabled_passes) s += " --disable-pass " + p;
  if (!r.fault.empty()) s += " --inject-fault " + r.fault;
  return s + r.inputs_flags;
}

void fill_commands(BisectResult& r) {
  if (r.stage.empty()) return;
  std::string c = r.failing_case >= 0 ? " --case " + std::to_string(r.failing_case) : "";
  std::string base = "gbcheck " + r.model_path + " --backend ";
  r.stage_command = base + r.stage + common_flags(r) + c;
  if (r.passes && !r.passes->pass.empty())
    r.pass_command = r.stage_command + " --disable-pass " + r.passes->pass;
  // gbc's kernels are shown by explain; a backend that shows node values itself by --intermediates.
  if (r.nodes && r.nodes->first)
    r.node_command = ladder_shows_node_values(r.stage)
                         ? "gbcheck explain " + r.model_path + " --backend " + r.stage + common_flags(r) + c
                         : "gbcheck " + r.model_path + " --backend " + r.stage + " --intermediates" + common_flags(r) + c;
}

}  // namespace

std::vector<std::string> bisect_ladder(const std::string& target) {
  auto it = std::find(ladder().begin(), ladder().end(), target);
  if (it == ladder().end()) return {target};
  return std::vector<std::string>(ladder().begin(), it + 1);
}

BisectResult run_bisect(const Model& model, const BisectOptions& options) {
  BisectResult r;
  r.model_path = model.path;
  r.target = options.backend;
  r.fault = options.run.backend_options.inject_fault;
  r.seed = model.check.seed;
  r.inputs_flags = given_inputs_flags(options.run.given_input_paths, options.run.cases);
  r.disabled_passes = options.run.backend_options.disabled_passes;
  auto progress = [&](const std::string& line) {
    if (options.on_progress) options.on_progress(line);
  };

  ProbeOptions probe;
  probe.run = options.run;
  probe.timeout_s = options.timeout_s;
  for (const std::string& stage : bisect_ladder(options.backend)) {
    progress("checking stage " + stage);
    ProbeResult p = probe_backend(model, stage, probe);
    r.ladder.push_back({stage, p});
    if (!p.diverged) continue;
    r.stage = stage;
    r.failing_case = p.failing_case >= 0 ? p.failing_case : options.run.only_case.value_or(-1);
    break;
  }
  if (!r.diverged()) return r;

  // Later checks replay the failing case alone: faster, and the same divergence.
  if (r.failing_case >= 0) probe.run.only_case = r.failing_case;
  progress("disabling passes of " + r.stage);
  r.passes = bisect_passes(model, r.stage, probe);

  progress("comparing node values of " + r.stage + " with eager");
  InputGenerator inputs(model, c10::Device(c10::DeviceType::CPU));
  TestCase tc = inputs.run_case(std::max(r.failing_case, 0), options.run.cases, options.run.given_cases, options.run.shrink_path);
  r.nodes = compare_backend_nodes(model, r.stage, tc, options.run.backend_options);
  fill_commands(r);
  return r;
}

}  // namespace gbc
