// The gbcheck command line: `gbcheck MODEL.yaml` (= `gbcheck check MODEL.yaml`) and subcommands.
// Each subcommand lives in its own file and registers itself in cli.cpp's table, as ninja does.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace gbc {

/// A subcommand: `add` declares its options on `sub` and returns the action to run once parsing
/// succeeded; the action returns the process exit code.
struct CommandSpec {
  const char* name;
  const char* help;
  std::function<std::function<int()>(CLI::App& sub)> add;
};

int cli_main(int argc, char** argv);
/// The command line as typed ("gbcheck check m.yaml --trace t"), for the trace's first event.
const std::string& invoked_command_line();

// Subcommands.
std::function<int()> add_check_command(CLI::App& sub);
std::function<int()> add_ops_command(CLI::App& sub);
std::function<int()> add_explain_command(CLI::App& sub);
std::function<int()> add_bench_command(CLI::App& sub);
std::function<int()> add_reduce_command(CLI::App& sub);
std::function<int()> add_cache_command(CLI::App& sub);
std::function<int()> add_bisect_command(CLI::App& sub);
std::function<int()> add_repro_command(CLI::App& sub);
std::function<int()> add_fuzz_command(CLI::App& sub);
std::function<int()> add_db_command(CLI::App& sub);
std::function<int()> add_import_command(CLI::App& sub);
std::function<int()> add_backends_command(CLI::App& sub);
std::function<int()> add_report_command(CLI::App& sub);

}  // namespace gbc
