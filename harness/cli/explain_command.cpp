// `gbcheck explain MODEL.yaml`: what a compiler made of a model, like torch._dynamo.explain. It runs
// the check's cases through a backend (gbc unless --backend names others; no oracle judges them)
// and reports the compiled graphs and the graph breaks between them (code, location, reason,
// hint), for each graph its ops, fused kernels (which model nodes each computes), extern calls and
// ATen steps, then the fallbacks and recompiles the cases caused. --fullgraph makes a graph break a
// failure (exit 1); --json writes schema gbcheck.explain/v1 (docs/json-report.md).
// Test: tests/cli/explain_command_test.cpp.
#include <ATen/ATen.h>
#include <torch/version.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/aten/eager_executor.h"
#include "compiler/runtime/backend_device.h"
#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/runtime_events.h"
#include "compiler/support/trace.h"
#include "harness/cli/cli.h"
#include "harness/cli/html_output.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/inputs/input_generator.h"
#include "harness/report/json_report.h"
#include "harness/report/program_json.h"
#include "harness/version.h"

namespace gbc {
namespace {

struct CaseError {
  int index = 0;
  std::string message;
  SourceLoc loc;
};

struct Explained {
  std::string backend;
  BackendStats stats;
  std::optional<ProgramDescription> program;  // for gbc's tiers
  std::vector<CaseError> errors;
  int cases_run = 0;
};

Explained explain_backend(const Model& model, const RunOptions& opt, const std::string& name) {
  Explained out;
  out.backend = name;
  std::unique_ptr<Backend> backend = make_backend(name);
  GBC_INTERNAL_ASSERT(backend != nullptr, "unvalidated backend " + name);
  backend->prepare(model.graph, opt.backend_options);
  c10::Device device = backend_device(opt.backend_options);
  InputGenerator gen(model, device);
  const int first = opt.only_case.value_or(0);
  const int end = opt.only_case ? first + 1 : opt.cases;
  for (int k = first; k < end; ++k) {
    TestCase tc = gen.make_case(k);
    at::manual_seed(tc.seed);
    ++out.cases_run;
    try {
      backend->run(tc.fresh_inputs());
    } catch (const OpError& e) {
      out.errors.push_back({k, e.what(), e.loc()});
    } catch (const InternalError&) {
      throw;
    } catch (const std::exception& e) {
      std::string what = e.what();
      out.errors.push_back({k, what.substr(0, what.find('\n')), {}});
    }
  }
  out.stats = backend->stats();
  trace_program(name, *backend);
  if (const auto* rt = dynamic_cast<const GraphRuntime*>(backend.get())) out.program = rt->describe();
  return out;
}

std::string plural(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

void print_events(std::ostream& out, const BackendStats& stats, CompileEvent::Kind kind, const std::string& title) {
  std::vector<const CompileEvent*> events;
  for (const auto& e : stats.events)
    if (e.kind == kind) events.push_back(&e);
  if (events.empty()) {
    out << title << ": none\n";
    return;
  }
  out << title << " (" << events.size() << "):\n";
  for (const CompileEvent* e : events) {
    out << "  " << e->code << (e->loc.valid() ? " at " + e->loc.str() : "") << ": " << e->message << "\n";
    if (!e->hint.empty()) out << "    hint: " << e->hint << "\n";
  }
}

void print_graph(std::ostream& out, const SegmentDescription& seg, bool verbose) {
  std::vector<std::string> ops = seg.ops;
  out << "graph " << seg.region << ": " << plural(static_cast<int>(ops.size()), "op") << " (" << join(ops) << ")";
  if (!seg.locs.empty()) out << " at " << seg.locs.front().str() << (seg.locs.size() > 1 ? " .. " + seg.locs.back().str() : "");
  out << "\n  reads " << (seg.inputs.empty() ? "nothing" : join(seg.inputs)) << "; returns "
      << (seg.outputs.empty() ? "nothing" : join(seg.outputs)) << "\n";
  if (seg.entries.empty()) {
    out << "  not compiled: no case reached it\n";
    return;
  }
  // The first entry shows the structure; later entries differ in their specialization only.
  const RegionDescription& region = seg.entries.front().region;
  for (const StepDescription& step : region.steps) {
    std::string locs;
    for (const SourceLoc& l : step.locs)
      if (locs.find(l.str()) == std::string::npos) locs += (locs.empty() ? "" : " ") + l.str();
    std::string what = join(step_model_nodes(seg, step));
    switch (step.kind) {
      case StepDescription::Kind::Kernel:
        out << "  kernel " << step.name << " (" << step.note << ") computes " << what << "  [" << locs << "]\n";
        if (verbose) out << "      " << join(step.nodes, "\n      ") << "\n";
        break;
      case StepDescription::Kind::Extern: out << "  extern " << step.name << " -> " << what << "  [" << locs << "]\n"; break;
      default:
        out << "  " << StepDescription::kind_name(step.kind) << " " << step.name << " -> " << (what.empty() ? "-" : what)
            << "  [" << locs << "]" << (step.note.empty() ? "" : "  (" + step.note + ")") << "\n";
    }
  }
  std::vector<std::string> calls;
  for (const EntryDescription& e : seg.entries) calls.push_back(std::to_string(e.calls));
  out << "  compiled " << plural(static_cast<int>(seg.entries.size()), "time") << " (calls per entry: " << join(calls) << ")";
  if (seg.eager_calls) out << "; " << plural(seg.eager_calls, "call") << " ran eagerly after the cache limit";
  out << "\n";
  if (!verbose) return;
  for (size_t i = 0; i < seg.entries.size(); ++i) out << "  entry " << i << " guards:\n  " << seg.entries[i].guards;
  out << "  graph as run:\n" << region.graph_text;
  for (const std::string& k : region.kernels) out << k;
}

void print_explained(std::ostream& out, const Model& model, const RunOptions& opt, const Explained& ex, bool verbose) {
  const BackendStats& st = ex.stats;
  out << "gbcheck explain | " << model.name << " (" << model.path << ") | " << ex.backend << " | "
      << plural(ex.cases_run, "case") << " | " << opt.backend_options.device << " | seed " << model.check.seed << "\n";
  out << "summary: " << plural(st.graphs, "compiled graph") << ", " << plural(st.graph_breaks, "graph break") << ", "
      << plural(st.fallbacks, "fallback") << ", " << plural(st.recompiles, "recompile") << ", "
      << plural(st.fusion_groups, "fused kernel") << ", " << plural(st.extern_calls, "extern call") << ", compile "
      << static_cast<int64_t>(st.compile_ms + 0.5) << " ms\n";
  if (!ex.program && !st.graph_notes.empty()) {
    // An adapter describes its graphs in a line each (docs/adapters.md, stats graph_notes).
    out << "\n";
    for (const std::string& note : st.graph_notes) out << "graph " << note << "\n";
  } else if (!ex.program) {
    out << "\n(" << ex.backend << " does not describe its graphs; its events follow)\n";
  } else {
    for (const SourceLoc& l : ex.program->rewritten_ifs)
      out << "\nrewrite_if: the if at " << l.str() << " runs both branches and selects with where\n";
    for (const SegmentDescription& seg : ex.program->segments) {
      out << "\n";
      if (seg.island) {
        const CompileEvent& e = seg.graph_break;
        out << "graph break " << e.code << " at " << e.loc.str() << ": " << e.message << "\n  hint: " << e.hint << "\n";
      } else {
        print_graph(out, seg, verbose);
      }
    }
  }
  out << "\n";
  if (!ex.program) print_events(out, st, CompileEvent::Kind::GraphBreak, "graph breaks");
  print_events(out, st, CompileEvent::Kind::Fallback, "fallbacks");
  print_events(out, st, CompileEvent::Kind::Recompile, "recompiles");
  for (const CaseError& e : ex.errors) out << "case " << e.index << " raised: " << e.message << "\n";
}

nlohmann::json explained_json(const Explained& ex, int exit_code) {
  const BackendStats& st = ex.stats;
  nlohmann::json j;
  j["name"] = ex.backend;
  j["cases_run"] = ex.cases_run;
  j["exit_code"] = exit_code;
  j["graphs"] = st.graphs;
  j["graph_breaks"] = st.graph_breaks;
  j["fallbacks"] = st.fallbacks;
  j["recompiles"] = st.recompiles;
  j["fusion_groups"] = st.fusion_groups;
  j["extern_calls"] = st.extern_calls;
  j["compile_ms"] = st.compile_ms;
  j["graph_notes"] = st.graph_notes;
  j["events"] = nlohmann::json::array();
  for (const CompileEvent& e : st.events) j["events"].push_back(compile_event_to_json(e));
  j["program"] = nullptr;
  if (ex.program) {
    j["program"] = program_to_json(*ex.program);
    nlohmann::json rewrites = nlohmann::json::array();
    for (const SourceLoc& l : ex.program->rewritten_ifs) rewrites.push_back(source_loc_json(l));
    j["rewritten_ifs"] = rewrites;
  }
  nlohmann::json errors = nlohmann::json::array();
  for (const CaseError& e : ex.errors) errors.push_back({{"case", e.index}, {"message", e.message}, {"loc", source_loc_json(e.loc)}});
  j["errors"] = errors;
  return j;
}

}  // namespace

std::function<int()> add_explain_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    std::string json_path;
    std::string html_path;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;  // cases as drawn
  scope.shrink = scope.tolerances = false;  // nothing is judged
  scope.reference = false;  // nothing is compared
  args->run.add_to(sub, scope);
  sub.add_option("--json", args->json_path, "also write the explanation as JSON (schema: docs/json-report.md)")
      ->check(writable_file());
  sub.add_option("--html", args->html_path,
                 "also write the HTML report (docs/report.md): FILE and its pages beside it, self-contained")
      ->check(writable_file());
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    HtmlOutput html(args->html_path);
    if (!html.begin()) return kExitInvalid;
    Model model = args->run.load();
    RunOptions opt;
    RunArgs run = args->run;
    if (run.backends.empty()) run.backends = {"gbc"};  // explain is about gbc unless told otherwise
    if (auto stop = run.resolve(model, opt)) return *stop;
    int exit_code = kExitPass;
    nlohmann::json reports = nlohmann::json::array();
    const std::string& fault = opt.backend_options.inject_fault;
    if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
    for (size_t b = 0; b < opt.backends.size(); ++b) {
      Explained ex = explain_backend(model, opt, opt.backends[b]);
      if (b) std::cout << "\n";
      print_explained(std::cout, model, opt, ex, args->run.verbose);
      int code = ex.errors.empty() ? kExitPass : kExitDivergence;
      if (opt.fullgraph && ex.stats.graph_breaks > 0) {
        for (const CompileEvent& e : ex.stats.events)
          if (e.kind == CompileEvent::Kind::GraphBreak) {
            std::cout << "fullgraph: " << ex.backend << " breaks the graph: " << event_line(e) << "\n";
            break;
          }
        code = kExitDivergence;
      }
      exit_code = std::max(exit_code, code);
      reports.push_back(explained_json(ex, code));
    }
    if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
    if (!args->json_path.empty() || trace::enabled()) {
      nlohmann::json j;
      j["schema"] = "gbcheck.explain/v1";
      j["gbcheck_version"] = kGbcheckVersion;
      j["torch_version"] = TORCH_VERSION;
      j["model"] = {{"name", model.name}, {"path", model.path}};
      j["device"] = opt.backend_options.device;
      j["seed"] = model.check.seed;
      j["exit_code"] = exit_code;
      j["backends"] = reports;
      if (!opt.backend_options.inject_fault.empty()) j["injected_fault"] = opt.backend_options.inject_fault;
      if (trace::enabled()) trace::emit("explain_report", {{"report", j}});
      try {
        if (!args->json_path.empty()) write_json_file(args->json_path, j);
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    if (!html.write(exit_code, false)) return kExitInvalid;
    return exit_code;
  };
}

}  // namespace gbc
