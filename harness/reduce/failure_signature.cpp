#include "harness/reduce/failure_signature.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "compiler/support/hash.h"

namespace gbc {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// "model.yaml:12:7: " at the start of an error names where, not what: a reduced model has other
// file names and lines.
std::string strip_location(const std::string& line) {
  size_t end = line.find(": ");
  if (end == std::string::npos) return line;
  std::string prefix = line.substr(0, end);
  int colons = 0;
  size_t i = prefix.size();
  while (i > 0 && colons < 2) {
    size_t digits = 0;
    while (i > 0 && std::isdigit(static_cast<unsigned char>(prefix[i - 1]))) --i, ++digits;
    if (digits == 0 || i == 0 || prefix[i - 1] != ':') return line;
    --i;
    ++colons;
  }
  return line.substr(end + 2);
}

}  // namespace

std::string FailureSignature::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Divergence: return "divergence";
    case Kind::Error: return "error";
    case Kind::InternalError: return "internal-error";
    case Kind::Crash: return "crash";
    case Kind::Timeout: return "timeout";
    case Kind::Oom: return "oom";
    case Kind::GraphBreak: return "graph-break";
    case Kind::Generator: return "generator";
  }
  return "?";
}

std::optional<FailureSignature::Kind> FailureSignature::kind_from_name(const std::string& name) {
  for (Kind k : {Kind::Divergence, Kind::Error, Kind::InternalError, Kind::Crash, Kind::Timeout, Kind::Oom, Kind::GraphBreak, Kind::Generator})
    if (kind_name(k) == name) return k;
  return std::nullopt;
}

std::string FailureSignature::str() const {
  std::string s = backend + " " + kind_name(kind);
  if (!detail.empty()) s += " " + detail;
  return s + " [" + join(ops, ",") + "]";
}

std::string FailureSignature::hash() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(str())));
  return buf;
}

bool FailureSignature::same_failure(const FailureSignature& o) const {
  return backend == o.backend && kind == o.kind && detail == o.detail;
}

bool FailureSignature::operator==(const FailureSignature& o) const { return same_failure(o) && ops == o.ops; }

nlohmann::json FailureSignature::to_json() const {
  return {{"backend", backend}, {"kind", kind_name(kind)}, {"detail", detail}, {"ops", ops}, {"text", str()}, {"hash", hash()}};
}

FailureSignature FailureSignature::from_json(const nlohmann::json& j) {
  FailureSignature s;
  s.backend = j.at("backend").get<std::string>();
  const std::string kind = j.at("kind").get<std::string>();
  std::optional<Kind> k = kind_from_name(kind);
  if (!k) throw std::invalid_argument("failure signature of unknown kind '" + kind + "'");
  s.kind = *k;
  s.detail = j.at("detail").get<std::string>();
  s.ops = j.at("ops").get<std::vector<std::string>>();
  return s;
}

std::vector<std::string> all_ops(const Model& model) {
  std::vector<std::string> ops;
  for_each_node(model.graph.body, [&](const Node& n) { ops.push_back(op_name(n.op)); });
  sort_unique(ops);
  return ops;
}

std::vector<std::string> ops_involved(const Model& model, const std::vector<std::string>& names) {
  const Graph& g = model.graph;
  // Which node (nested ones included) defines each value, then a walk back from the named values.
  std::map<ValueId, const Node*> producer;
  for_each_node(g.body, [&](const Node& n) {
    for (ValueId v : n.outputs) producer[v] = &n;
    for (const Block& b : n.blocks)
      for (ValueId r : b.results)
        if (!producer.count(r)) producer[r] = &n;
  });
  std::vector<ValueId> work;
  for (const std::string& name : names) {
    // Outputs are judged under their model name; the IR may also know the name as a later
    // (in-place) value, so take every value of that name.
    for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v)
      if (g.name_of(v) == name) work.push_back(v);
  }
  std::set<ValueId> seen;
  std::set<const Node*> visited;
  std::vector<std::string> ops;
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    auto it = producer.find(v);
    if (it == producer.end() || !visited.insert(it->second).second) continue;
    const Node& n = *it->second;
    auto visit = [&](const Node& inner) {
      ops.push_back(op_name(inner.op));
      for (const Arg& a : inner.args)
        if (a.is_value()) work.push_back(a.value);
    };
    visit(n);
    for (const Block& b : n.blocks) for_each_node(b, visit);
  }
  if (ops.empty()) return all_ops(model);
  sort_unique(ops);
  return ops;
}

std::string normalize_error(const std::string& error) {
  std::string line = strip_location(error.substr(0, error.find('\n')));
  std::string out;
  for (size_t i = 0; i < line.size();) {
    if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      out += 'N';
    } else {
      out += line[i++];
    }
  }
  constexpr size_t kMaxDetail = 120;
  return out.size() > kMaxDetail ? out.substr(0, kMaxDetail) : out;
}

FailureSignature signature_of_divergence(const Model& model, const std::string& backend,
                                         const std::vector<OutputCheck>& failing) {
  FailureSignature s;
  s.backend = backend;
  s.kind = FailureSignature::Kind::Divergence;
  std::vector<std::string> oracles, names;
  for (const OutputCheck& c : failing) {
    for (const std::string& o : c.failed_oracles()) oracles.push_back(o);
    names.push_back(c.output);
  }
  sort_unique(oracles);
  s.detail = join(oracles, ",");
  s.ops = ops_involved(model, names);
  return s;
}

FailureSignature signature_of_error(const Model& model, const std::string& backend, const std::string& error,
                                    const SourceLoc& error_loc, PathErrorKind error_kind) {
  FailureSignature s;
  s.backend = backend;
  s.kind = error_kind == PathErrorKind::InternalError ? FailureSignature::Kind::InternalError : FailureSignature::Kind::Error;
  s.detail = normalize_error(error);
  if (error_loc.valid()) {
    for_each_node(model.graph.body, [&](const Node& n) {
      if (n.loc.line == error_loc.line && n.loc.col == error_loc.col) s.ops.push_back(op_name(n.op));
    });
    sort_unique(s.ops);
  }
  if (s.ops.empty()) s.ops = all_ops(model);
  return s;
}

FailureSignature signature_of_failure(const Model& model, const std::string& backend, const CaseFailure& failure) {
  if (!failure.error.empty()) return signature_of_error(model, backend, failure.error, failure.error_loc, failure.error_kind);
  return signature_of_divergence(model, backend, failure.outputs);
}

FailureSignature signature_of_sandbox(const Model& model, const std::string& backend, const SandboxResult& result) {
  FailureSignature s;
  s.backend = backend;
  s.ops = all_ops(model);
  switch (result.status) {
    case SandboxResult::Status::Crash:
      s.kind = FailureSignature::Kind::Crash;
      s.detail = result.signal_name;
      break;
    case SandboxResult::Status::Timeout: s.kind = FailureSignature::Kind::Timeout; break;
    case SandboxResult::Status::OutOfMemory:
      s.kind = FailureSignature::Kind::Oom;
      s.detail = result.exception_type;
      break;
    case SandboxResult::Status::Exited:
      s.kind = FailureSignature::Kind::Crash;
      s.detail = "exit " + std::to_string(result.exit_code);
      break;
    case SandboxResult::Status::Exception:
    case SandboxResult::Status::Ok:
      // An exception that escaped the check itself (the check catches what backends raise).
      s.kind = FailureSignature::Kind::Error;
      s.detail = result.exception_type + ": " + normalize_error(result.error);
      break;
  }
  return s;
}

}  // namespace gbc
