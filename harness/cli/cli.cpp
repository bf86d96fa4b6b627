#include "harness/cli/cli.h"

#include <cctype>
#include <filesystem>
#include <iostream>
#include <vector>

#include "compiler/aten/torch_environment.h"
#include "compiler/ir/op_schema.h"
#include "compiler/support/trace.h"
#include "harness/cli/error_exit.h"
#include "harness/cli/inject_fault.h"
#include "harness/runner/check_report.h"
#include "harness/version.h"

namespace gbc {
namespace {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      {"check", "check a model: eager LibTorch against each compiled backend (the default command)", add_check_command},
      {"import", "a TorchScript file (.pt) into a model folder: model.yaml and its weights, checked against TorchScript",
       add_import_command},
      {"ops", "list the ops of the model format with their args and attributes", add_ops_command},
      {"explain", "what gbc made of a model: compiled graphs, graph breaks, kernels, fallbacks, recompiles",
       add_explain_command},
      {"bench", "time eager LibTorch against compiled paths on one case; --profile for per-kernel times",
       add_bench_command},
      {"reduce", "the smallest model that still fails the same way (delta debugging in crash-isolated checks)",
       add_reduce_command},
      {"cache", "the compiled-kernel caches: `cache info` (path, entries, size), `cache clear`", add_cache_command},
      {"bisect", "the first diverging stage of gbc's ladder, the pass to blame and the first diverging IR node",
       add_bisect_command},
      {"fuzz", "fuzz compilers with generated graphs: crash-isolated checks, deduplicated and reduced failures (docs/fuzzing.md)",
       add_fuzz_command},
      {"db", "the fuzz store: merge shards, report new signatures (--junit), mark fixed ones", add_db_command},
      {"backends", "list the backends: built-in ones and the adapters of configs/backends.yaml, whether each can run here",
       add_backends_command},
      {"repro", "write a folder that reproduces a failing case without gbcheck (repro.cpp, repro.py, inputs)",
       add_repro_command},
      {"report", "render a trace folder (--trace DIR) as a static HTML site: graphs, kernels, breaks, failures (docs/report.md)",
       add_report_command},
  };
  return table;
}

bool is_command(const std::string& arg) {
  for (const auto& c : commands())
    if (arg == c.name) return true;
  return false;
}

std::string command_list() {
  std::string list;
  for (const auto& c : commands()) list += (list.empty() ? "" : ", ") + std::string(c.name);
  return list;
}

// `gbcheck WORD`: a word that names no command and no file is a mistyped command, not a model.
bool looks_like_command(const std::string& arg) {
  std::error_code ec;
  return !arg.empty() && arg[0] != '-' && arg.find_first_of("./") == std::string::npos && !std::filesystem::exists(arg, ec);
}

// What a parse error means in words: CLI11 names the first requirement it checks ("model is
// required") even when the real mistake is an unknown option or a missing sub-subcommand.
std::string explain_parse_error(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  std::vector<const CLI::App*> chain = {&app};
  while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
  const CLI::App* cmd = chain.back();
  if (!dynamic_cast<const CLI::RequiredError*>(&e) && !dynamic_cast<const CLI::ExtrasError*>(&e)) return e.what();
  std::string name = "gbcheck";
  for (size_t i = 1; i < chain.size(); ++i) name += " " + chain[i]->get_name();
  const auto subs = cmd->get_subcommands([](const CLI::App*) { return true; });
  if (cmd != &app && !subs.empty()) {
    std::string list;
    for (const CLI::App* s : subs) list += "\n  " + name + " " + s->get_name() + ": " + s->get_description();
    return "`" + name + "` needs one of:" + list;
  }
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg == "-h" || arg == "--help")
      continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (cmd->get_option_no_throw(flag)) continue;
    std::vector<std::string> known;
    for (const CLI::Option* o : cmd->get_options())
      for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
    const std::string close = closest_name(flag, known);
    return "unknown option '" + flag + "' for `" + name + "`" + (close.empty() ? "" : "; did you mean '" + close + "'?");
  }
  return e.what();
}

std::string& command_line_storage() {
  static std::string line;
  return line;
}

// Runs a command's action, then ends the trace (if one is open) with its exit code.
int run_and_end_trace(const std::function<int()>& action) {
  const int code = action ? action() : kExitInvalid;
  trace::close(code);
  return code;
}

}  // namespace

const std::string& invoked_command_line() { return command_line_storage(); }

int cli_main(int argc, char** argv) {
  // `gbcheck model.yaml ...` means `gbcheck check model.yaml ...`.
  std::vector<std::string> args(argv + 1, argv + argc);
  command_line_storage() = "gbcheck";
  for (const std::string& a : args) command_line_storage() += " " + a;
  bool top_level_flag = !args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "--version");
  if (args.size() == 2 && args[0] == "--inject-fault" && args[1] == "list") {
    print_fault_list(std::cout);
    return kExitPass;
  }
  if (!args.empty() && !is_command(args[0]) && !top_level_flag && looks_like_command(args[0])) {
    std::cerr << "gbcheck: unknown command '" << args[0] << "' (commands: " << command_list()
              << "; or give a model file: gbcheck MODEL.yaml)\nrun `gbcheck --help` for usage\n";
    return kExitInvalid;
  }
  if (!args.empty() && !is_command(args[0]) && !top_level_flag) args.insert(args.begin(), "check");

  CLI::App app{"gbcheck: differential testing of ML graph compilers against eager LibTorch.\n\n"
               "  gbcheck MODEL.yaml [options]      check a model (same as `gbcheck check`)\n"
               "  gbcheck A.yaml B.yaml DIR ...     check several models (a folder: its *.yaml files), then a summary\n"
               "  gbcheck MODEL.pt --input ...      import a TorchScript file in memory and check it\n"
               "  gbcheck COMMAND --help            options of a command\n"
               "  gbcheck --inject-fault list       the bugs --inject-fault plants in gbc (a testing aid)\n\n"
               "Exit codes: 0 pass, 1 divergence or failed expectation, 2 invalid model, config or usage,\n"
               "3 internal error (a gbcheck bug), 4 unusable environment (e.g. no GPU for device: cuda,\n"
               "no configs/ folder: see $GBCHECK_CONFIG_DIR); with several models, the highest of theirs.\n"
               "Docs: docs/cli.md, docs/model-format.md, docs/importing.md, docs/configs.md.",
               "gbcheck"};
  app.set_version_flag("--version", std::string("gbcheck ") + kGbcheckVersion + " (LibTorch " + torch_version() +
                                        ", CUDA " + (torch_has_cuda() ? "available" : "not available") + ")");
  app.require_subcommand(1);
  std::function<int()> action;
  for (const auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    auto make = c.add(*sub);
    sub->callback([&action, make] { action = make; });
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gbcheck: " << explain_parse_error(app, args, e) << "\nrun `gbcheck --help` for usage\n";
    return kExitInvalid;
  }
  try {
    return run_and_end_trace(action);
  } catch (const std::exception& e) {
    const ErrorExit exit = error_exit(e);
    std::cerr << exit.message;
    return exit.exit_code;
  }
}

}  // namespace gbc
