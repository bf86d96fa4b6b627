#include "harness/bench/bench_suite.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "harness/runner/check_report.h"

namespace gbc {

std::vector<std::string> bench_folder_models(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

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

SuiteSummary BenchSuite::summary(const std::string& backend) const {
  SuiteSummary s;
  s.backend = backend;
  std::vector<double> speedups;
  for (const BenchReport& rep : reports)
    for (const BenchResult& r : rep.results) {
      if (r.backend != backend || !r.error.empty() || r.speedup <= 0) continue;
      speedups.push_back(r.speedup);
      if (s.worst_model.empty() || r.speedup < s.worst) {
        s.worst = r.speedup;
        s.worst_model = rep.model_name;
      }
      if (r.below_min_speedup()) ++s.below_min_speedup;
    }
  s.models = static_cast<int>(speedups.size());
  s.geomean = geometric_mean(speedups);
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
