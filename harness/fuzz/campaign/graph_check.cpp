#include "harness/fuzz/campaign/graph_check.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "harness/adapters/adapter_backend.h"
#include "harness/runner/check_runner.h"

namespace gbc {
namespace {

using json = nlohmann::json;

// The fallback of kernels whose generated module did not compile, and the signature detail of
// that finding (one per backend: the compiler's message names modules and lines of one graph).
constexpr const char* kRejectedKernelCode = "FB001";
constexpr const char* kRejectedKernelDetail = "generated kernel rejected by the host compiler (FB001)";

// The ops whose results are the failing outputs; the model's ancestry of them when none is a
// node result (a graph input judged after an in-place update).
std::vector<std::string> producer_ops(const Model& model, const std::vector<OutputCheck>& failing) {
  const Graph& g = model.graph;
  std::map<ValueId, std::string> producer;
  for_each_node(g.body, [&](const Node& n) {
    for (ValueId v : n.outputs) producer[v] = op_name(n.op);
  });
  std::vector<std::string> ops, names;
  for (const OutputCheck& c : failing) {
    names.push_back(c.output);
    for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v)
      if (g.name_of(v) == c.output && producer.count(v)) ops.push_back(producer[v]);
  }
  if (ops.empty()) return ops_involved(model, names);
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

std::string summary_of(const FailureSignature& s, const SandboxLimits& limits) {
  using Kind = FailureSignature::Kind;
  switch (s.kind) {
    case Kind::Divergence: return s.backend + " diverges from eager (" + s.detail + ")";
    case Kind::Error: return s.backend + " raised: " + s.detail;
    case Kind::InternalError: return s.backend + " failed an internal assertion: " + s.detail;
    case Kind::Crash: return s.backend + " crashed (" + s.detail + ")";
    case Kind::Timeout: return s.backend + " ran past the " + std::to_string(static_cast<int>(limits.timeout_s)) + " s limit";
    case Kind::Oom: return s.backend + " ran out of memory";
    case Kind::Generator: return "the generator made a graph eager cannot judge: " + s.detail;
    case Kind::GraphBreak: break;
  }
  return s.backend + " " + FailureSignature::kind_name(s.kind) + " " + s.detail;
}

GraphFailure make_failure(FailureSignature s, const std::string& detail, const SandboxLimits& limits) {
  if (s.kind != FailureSignature::Kind::Divergence) s.ops.clear();
  GraphFailure f;
  f.signature = s;
  f.hit.key = dedupe_key(s);
  f.hit.kind = FailureSignature::kind_name(s.kind);
  f.hit.backend = s.backend;
  f.hit.summary = summary_of(s, limits);
  f.hit.detail = detail;
  return f;
}

}  // namespace

RunOptions graph_check_run_options(const Model& model, const GraphCheckOptions& options) {
  RunOptions run = run_options_from_model(model);
  run.backends = options.backends;
  run.backend_options.cache_dir = options.backend_options.cache_dir;
  run.backend_options.use_cache = options.backend_options.use_cache;
  run.backend_options.inject_fault = options.backend_options.inject_fault;
  run.max_shrink_tries = 0;  // the reducer shrinks the graph of a new signature instead
  run.max_failures_kept = 1;
  return run;
}

namespace {

// The check as the child runs it: the report reduced to what the fuzzer keeps.
json check_in_child(const Model& model, const GraphCheckOptions& options) {
  CheckReport report = run_check(model, graph_check_run_options(model, options));
  json out = {{"outcome", "pass"}, {"failures", json::array()}};
  auto add = [&](const FailureSignature& s, const std::string& detail) {
    out["failures"].push_back({{"signature", s.to_json()}, {"detail", detail}});
  };
  if (!report.eager_error.empty()) {
    out["outcome"] = "invalid";
    add(FailureSignature{"eager", FailureSignature::Kind::Generator, normalize_error(report.eager_error), {}},
        report.eager_error);
    return out;
  }
  if (report.no_usable_case()) {
    out["outcome"] = "invalid";
    add(FailureSignature{"eager", FailureSignature::Kind::Generator, "eager disagrees with itself on every case", {}},
        report.unusable.front().reason);
    return out;
  }
  for (const BackendReport& b : report.backends) {
    if (b.failures.empty()) {
      // A generated kernel the host compiler rejects runs on ATen (FB001), so its results pass:
      // the code generator's bug is the finding (docs/graph-breaks.md: a gbc bug).
      for (const CompileEvent& e : b.stats.events)
        if (e.code == kRejectedKernelCode) {
          add(FailureSignature{b.backend, FailureSignature::Kind::InternalError, kRejectedKernelDetail, {}}, e.message);
          out["outcome"] = "fail";
          break;
        }
      continue;
    }
    const CaseFailure& f = b.failures.front();
    FailureSignature s = signature_of_failure(model, b.backend, f);
    if (s.kind == FailureSignature::Kind::Divergence) s.ops = producer_ops(model, f.outputs);
    std::string detail = !f.error.empty() ? f.error : f.outputs.empty() ? "" : f.outputs.front().output + ": " + f.outputs.front().detail;
    add(s, "case " + std::to_string(f.index) + ": " + detail);
    out["outcome"] = "fail";
  }
  return out;
}

GraphVerdict from_child(const SandboxResult& r, const GraphCheckOptions& options) {
  GraphVerdict v;
  v.outcome = r.value.at("outcome").get<std::string>();
  for (const json& f : r.value.at("failures"))
    v.failures.push_back(make_failure(FailureSignature::from_json(f.at("signature")), f.at("detail").get<std::string>(),
                                      options.limits));
  return v;
}

std::string death_detail(const SandboxResult& r) {
  std::string d = r.summary();
  if (!r.stderr_tail.empty()) d += "\n" + r.stderr_tail.substr(r.stderr_tail.size() > 1000 ? r.stderr_tail.size() - 1000 : 0);
  return d;
}

}  // namespace

std::string dedupe_key(const FailureSignature& signature) { return signature.str(); }

GraphVerdict check_graph(const Model& model, const GraphCheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto run_child = [&](const GraphCheckOptions& o) {
    // The adapters run here, across graphs: the child borrows them (adapter_backend.h).
    keep_adapters_running(o.backends, graph_check_run_options(model, o).backend_options);
    return run_sandboxed([&] { return check_in_child(model, o); }, o.limits);
  };
  SandboxResult r = run_child(options);
  GraphVerdict v;
  if (r.ok()) {
    v = from_child(r, options);
  } else if (r.status == SandboxResult::Status::Exception) {
    // The check itself threw: the generator made a model the harness rejects, or a harness bug
    // (a compiled path's exceptions are that path's failures, caught in the check).
    v.outcome = "invalid";
    FailureSignature s{"gbcheck", FailureSignature::Kind::Error, r.exception_type + ": " + normalize_error(r.error), {}};
    v.failures.push_back(make_failure(s, r.error, options.limits));
  } else {
    v.outcome = "fail";
    // Eager itself may die (LibTorch 1.13's integer remainder of INT_MIN by -1 raises SIGFPE): then
    // the death is the reference's, no compiled path is to blame, and the failure is not reduced
    // (the reducer and repro run eager in the worker's own process).
    GraphCheckOptions reference = options;
    reference.backends = {"eager"};
    SandboxResult eager_alone = run_child(reference);
    if (!eager_alone.ok() && eager_alone.status != SandboxResult::Status::Exception) {
      v.failures.push_back(make_failure(signature_of_sandbox(model, "eager", eager_alone), death_detail(eager_alone), options.limits));
      v.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      return v;
    }
    std::vector<std::string> culprits;
    if (options.backends.size() > 1) {
      for (const std::string& b : options.backends) {
        GraphCheckOptions alone = options;
        alone.backends = {b};
        SandboxResult again = run_child(alone);
        if (!again.ok() && again.status != SandboxResult::Status::Exception) {
          culprits.push_back(b);
          v.failures.push_back(make_failure(signature_of_sandbox(model, b, again), death_detail(again), options.limits));
        }
      }
    }
    if (culprits.empty()) {
      // One backend alone, or a death that only happens with all of them in one process.
      std::string all;
      for (const std::string& b : options.backends) all += (all.empty() ? "" : ",") + b;
      v.failures.push_back(make_failure(signature_of_sandbox(model, all, r), death_detail(r), options.limits));
    }
  }
  v.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return v;
}

}  // namespace gbc
