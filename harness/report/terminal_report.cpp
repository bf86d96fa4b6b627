#include "harness/report/terminal_report.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "oracles/tolerance_oracle.h"

namespace gbc {
namespace {

std::string paint(const TerminalStyle& s, const char* code, const std::string& text) {
  return s.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

std::string dims_str(const DimBindings& dims) {
  std::string s;
  for (const auto& [k, v] : dims) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

std::string ms_str(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.1f ms" : "%.0f ms", ms);
  return buf;
}

void print_events(const BackendStats& st, std::ostream& out, const std::string& indent) {
  for (const auto& e : st.events) {
    out << indent << CompileEvent::kind_name(e.kind) << " " << e.code;
    if (e.loc.valid()) out << " at " << e.loc.str();
    out << ": " << e.message << "\n";
    if (!e.hint.empty()) out << indent << "  hint: " << e.hint << "\n";
  }
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

std::string subject(const OutputCheck& o) {
  switch (o.kind) {
    case OutputCheck::Kind::State: return "input " + o.output + " after the run";
    case OutputCheck::Kind::Drift: return "drift of " + o.output;
    case OutputCheck::Kind::Output: break;
  }
  return "output " + o.output;
}

// One failing tensor: the deciding oracle's reason, the other failing or overruled verdicts, and
// the least tolerance that would have passed.
void print_check(const OutputCheck& o, std::ostream& out, const TerminalStyle& style, const std::string& indent) {
  std::ostringstream text;
  text << indent << subject(o) << " " << paint(style, "31", "[" + o.oracle + "]") << ": " << o.detail << "\n";
  for (const auto& v : o.verdicts) {
    if (v.pass || v.oracle == o.oracle || v.why == o.detail) continue;
    text << indent << "  " << v.oracle << (v.overruled_by.empty() ? "" : " (overruled by " + v.overruled_by + ")")
         << ": " << v.why << "\n";
  }
  if (!o.min_passing.empty()) text << indent << "  would pass with: " << o.min_passing << "\n";
  // The tolerance in force, unless a line above already names it (the tolerance oracle's does).
  const std::string tolerance = "(" + tolerance_str(o.tolerance) + ")";
  if ((o.kind == OutputCheck::Kind::Output || o.kind == OutputCheck::Kind::State) && text.str().find(tolerance) == std::string::npos)
    text << indent << "  " << tolerance << "\n";
  out << text.str();
}

void print_failure(const CheckReport& r, const BackendReport& b, const CaseFailure& f, std::ostream& out,
                   const TerminalStyle& style) {
  out << "  case " << f.index << (f.shrink_path.empty() ? "" : " --shrink " + f.shrink_path) << " (seed " << f.seed
      << (f.dims.empty() ? "" : ", " + dims_str(f.dims)) << ")";
  const auto failed = f.failed_oracles();
  const std::string error_label = f.error_kind == PathErrorKind::InternalError ? "internal error" : "raised";
  out << ": " << (f.error.empty() ? "failed " + join(failed, ", ") : error_label) << "\n";
  for (const auto& in : f.inputs) out << "    input " << in << "\n";
  if (!f.error.empty()) out << "    " << error_label << ": " << (f.error_loc.valid() ? f.error_loc.str() + ": " : "") << f.error << "\n";
  for (const auto& o : f.outputs) print_check(o, out, style, "    ");
  if (f.shrunk) {
    const ShrunkCase& s = *f.shrunk;
    out << "    shrunk in " << s.steps << " step(s) (" << s.tried << " candidates tried"
        << (s.budget_exhausted ? ", stopped at the limit" : "") << ") to" << (s.dims.empty() ? "" : " " + dims_str(s.dims))
        << ":\n";
    for (const auto& in : s.inputs) out << "      input " << in << "\n";
    if (!s.error.empty()) out << "      " << error_label << ": " << (s.error_loc.valid() ? s.error_loc.str() + ": " : "") << s.error << "\n";
    for (const auto& o : s.outputs) print_check(o, out, style, "      ");
    out << "    replay shrunk: " << r.replay_command(b.backend, f.index, s.path) << "\n";
    out << "    replay:        " << r.replay_command(b.backend, f.index, f.shrink_path) << "\n";
  } else {
    if (!f.shrink_note.empty()) out << "    " << f.shrink_note << "\n";
    out << "    replay: " << r.replay_command(b.backend, f.index, f.shrink_path) << "\n";
  }
}

void print_drift(const BackendReport& b, std::ostream& out) {
  double worst = 0;
  int worst_case = 0;
  size_t worst_step = 0, steps = 0;
  for (const auto& d : b.drift) {
    steps = std::max(steps, d.steps.size());
    for (size_t s = 0; s < d.steps.size(); ++s)
      if (!(d.steps[s].ratio <= worst)) {
        worst = d.steps[s].ratio;
        worst_case = d.case_index;
        worst_step = s;
      }
  }
  out << "  drift over " << steps << " steps: worst " << fmt_num(worst) << "x the tolerance (case " << worst_case
      << ", step " << worst_step << "); per-step errors in --json and --plots\n";
}

// " (RC001 1, RC003 2)": which guards failed (docs/graph-breaks.md), "" without recompiles.
std::string recompiles_by_code(const BackendStats& stats) {
  std::map<std::string, int> by_code;
  for (const CompileEvent& e : stats.events)
    if (e.kind == CompileEvent::Kind::Recompile) ++by_code[e.code];
  std::string s;
  for (const auto& [code, n] : by_code) s += (s.empty() ? " (" : ", ") + code + " " + std::to_string(n);
  return s.empty() ? s : s + ")";
}

}  // namespace

std::string report_header(const CheckReport& r) {
  return "gbcheck " + r.gbcheck_version + " | " + r.model_name + (r.model_path.empty() ? "" : " (" + r.model_path + ")") +
         " | " + (r.only_case ? "case " + std::to_string(*r.only_case) : std::to_string(r.cases) + (r.cases == 1 ? " case" : " cases")) + " | " +
         r.device + (r.eager_reference() ? "" : " | reference " + r.reference) + " | seed " + std::to_string(r.seed) + " | LibTorch " + r.torch_version;
}

void print_terminal_report(const CheckReport& r, std::ostream& out, const TerminalStyle& style) {
  out << report_header(r) << "\n";

  if (style.verbose)
    out << "  oracles: " << join(r.oracles, ", ") << " | error stat " << r.error_stat
        << (r.iterations ? " | " + std::to_string(r.iterations) + " steps per case" : "") << "\n";

  if (!r.eager_error.empty()) {
    out << paint(style, "31", "error") << ": the " << (r.eager_reference() ? "eager" : r.reference) << " reference failed on case "
        << r.eager_error_case << ": " << (r.eager_error_loc.valid() ? r.eager_error_loc.str() + ": " : "") << r.eager_error << "\n"
        << (r.eager_reference() ? "  the model cannot be checked with these inputs; fix the model or its value ranges\n"
                                : "  nothing was compared with it; check " + r.reference + " against eager (without --reference)\n");
    return;
  }

  size_t width = 0;
  for (const auto& b : r.backends) width = std::max(width, b.backend.size());
  for (const auto& b : r.backends) {
    std::string name = b.backend + std::string(width - b.backend.size(), ' ');
    out << "  " << name << "  " << (b.pass() ? paint(style, "32", "PASS") : paint(style, "31", "FAIL")) << "  "
        << (b.cases_run - b.cases_failed) << "/" << b.cases_run << " cases"
        << "  worst abs " << fmt_num(b.worst_abs) << " rel " << fmt_num(b.worst_rel)
        << "  fusion groups " << b.stats.fusion_groups << "  graph breaks " << b.stats.graph_breaks << "  fallbacks "
        << b.stats.fallbacks;
    // A first compile is not a recompile: both counts, whenever the path compiled anything.
    if (b.stats.compiles || b.stats.recompiles)
      out << "  compiles " << b.stats.compiles << "  recompiles " << b.stats.recompiles << recompiles_by_code(b.stats);
    if (b.stats.compile_ms > 0) out << "  compile " << ms_str(b.stats.compile_ms);
    out << "\n";
  }

  for (const auto& b : r.backends) {
    const bool show = !b.pass() || style.verbose || !b.notes.empty();
    if (!show) continue;
    if (!b.pass()) out << "\n" << paint(style, "1", b.backend + ":") << "\n";
    else if (style.verbose || !b.notes.empty()) out << "\n" << b.backend << ":\n";
    for (const auto& f : b.failures) print_failure(r, b, f, out, style);
    if (b.cases_failed > static_cast<int>(b.failures.size()))
      out << "  ... and " << (b.cases_failed - static_cast<int>(b.failures.size())) << " more failing cases\n";
    for (const auto& e : b.expectation_failures) out << "  expectation failed: " << e << "\n";
    for (const auto& n : b.notes) out << "  note: " << n << "\n";
    if (!b.drift.empty() && (style.verbose || !b.pass())) print_drift(b, out);
    if (!b.pass() || style.verbose) print_events(b.stats, out, "  ");
  }
  if (style.verbose && !r.print_output.empty()) {  // docs/model-format.md: print output shows with -v
    out << "\nprint output (eager reference):\n";
    std::istringstream lines(r.print_output);
    for (std::string line; std::getline(lines, line);) out << "  " << line << "\n";
  }
  if (!r.unusable.empty()) {
    out << "\n" << paint(style, "33", "unusable reference") << ": " << r.reference << " disagrees with itself on " << r.unusable.size()
        << " case(s); no backend was judged on them ("
        << (r.eager_reference() ? "a nondeterministic model or ATen kernel, not a compiler bug" : "the reference is nondeterministic there")
        << "):\n";
    for (const auto& u : r.unusable) out << "  case " << u.index << " (seed " << u.seed << "): " << u.reason << "\n";
  }
  out << "result: " << (r.pass() ? paint(style, "32", "PASS") : paint(style, "31", "FAIL")) << " (";
  if (r.no_usable_case()) out << "no case had a usable reference; ";
  else if (!r.unusable.empty()) out << r.unusable.size() << " case(s) not judged; ";
  out << ms_str(r.elapsed_ms) << ")\n";
}

}  // namespace gbc
