#include "harness/bench/bench_suite.h"

#include <algorithm>
#include <cmath>

#include "harness/runner/check_report.h"

namespace gbc {

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double log_sum = 0.0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

std::vector<std::string> BenchSuite::backends() const {
  std::vector<std::string> out;
  for (const BenchReport& rep : reports)
    for (const BenchResult& r : rep.results)
      if (r.backend != "eager" && std::find(out.begin(), out.end(), r.backend) == out.end()) out.push_back(r.backend);
  return out;
}

namespace {

// The geomean and worst case of one speedup (plain or with outputs reused) over the models.
struct SpeedupSpread {
  std::vector<double> all;
  double worst = 0.0;
  std::string worst_model;
  void add(double speedup, const std::string& model) {
    if (speedup <= 0) return;
    all.push_back(speedup);
    if (worst_model.empty() || speedup < worst) {
      worst = speedup;
      worst_model = model;
    }
  }
};

}  // namespace

SuiteSummary BenchSuite::summary(const std::string& backend) const {
  SuiteSummary s;
  s.backend = backend;
  SpeedupSpread plain, reused;
  for (const BenchReport& rep : reports)
    for (const BenchResult& r : rep.results) {
      if (r.backend != backend || !r.error.empty()) continue;
      plain.add(r.speedup, rep.model_name);
      reused.add(r.reused_speedup, rep.model_name);
      if (r.below_min_speedup()) ++s.below_min_speedup;
    }
  s.models = static_cast<int>(plain.all.size());
  s.geomean = geometric_mean(plain.all);
  s.worst = plain.worst;
  s.worst_model = plain.worst_model;
  s.reused_geomean = geometric_mean(reused.all);
  s.reused_worst = reused.worst;
  s.reused_worst_model = reused.worst_model;
  return s;
}

std::vector<std::string> BenchSuite::failures() const {
  std::vector<std::string> out;
  for (const BenchReport& rep : reports)
    for (const std::string& f : rep.failures()) out.push_back(rep.model_name + ": " + f);
  return out;
}

int BenchSuite::exit_code() const {
  if (!invalid.empty()) return kExitInvalid;
  return failures().empty() ? kExitPass : kExitDivergence;
}

}  // namespace gbc
