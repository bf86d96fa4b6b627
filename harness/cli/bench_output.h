// What `gbcheck bench` prints and writes: one model's report (a row per backend, the per-kernel
// profiles, the failures) or a folder's one table (a row per model, geomean and worst case per
// backend), as text and as JSON (schemas gbcheck.bench/v1 and gbcheck.bench_suite/v1,
// docs/cli.md). Test: tests/cli/bench_command_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/bench/bench_runner.h"
#include "harness/bench/bench_suite.h"

namespace gbc {

void print_bench(std::ostream& out, const BenchReport& rep);
nlohmann::json bench_json(const BenchReport& rep);

/// The per-kernel tables of --profile (nothing when no backend was profiled).
void print_profiles(std::ostream& out, const BenchReport& rep);

void print_suite(std::ostream& out, const BenchSuite& suite);
nlohmann::json suite_json(const BenchSuite& suite);

}  // namespace gbc
