// `gbcheck import MODEL.pt --input [NAME=]DTYPE[SHAPE]... [--dim NAME=MIN:MAX] --out DIR`: a
// TorchScript file into DIR/model.yaml and DIR/weights.safetensors, after checking that the import
// computes what TorchScript computes (docs/importing.md).
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/import/model_dir.h"
#include "harness/import/torchscript_import.h"
#include "harness/runner/check_report.h"

namespace gbc {

std::string import_summary(const ImportResult& r) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", r.seconds);
  return std::to_string(r.native_nodes) + " native ops, " + std::to_string(r.generic_nodes) +
         " generic aten ops (extern calls), " + std::to_string(r.model.params.size()) + " weights; " + seconds + " s";
}

std::function<int()> add_import_command(CLI::App& sub) {
  struct Args {
    std::string path;
    std::vector<std::string> inputs;
    std::vector<std::string> dims;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  sub.add_option("model", args->path, "the TorchScript file (torch.jit.trace/script(...).save(path))")->required();
  sub.add_option("--input", args->inputs, "forward's inputs in order: [NAME=]DTYPE[SHAPE], e.g. x=float32[1,3,224,224]")
      ->required();
  sub.add_option("--dim", args->dims, "a symbolic size usable in --input shapes: NAME=MIN:MAX");
  sub.add_option("--out", args->out, "the folder to write model.yaml and weights.safetensors into")->required();
  return [args]() -> int {
    ImportSpecs specs = parse_import_specs(args->inputs, args->dims);
    ImportResult r = import_torchscript(args->path, specs);
    std::cout << "import " << args->path << ": " << import_summary(r) << "\n";
    std::cout << "fidelity: " << (r.fidelity.identical ? "PASS " : "FAIL ") << r.fidelity.detail << "\n";
    if (!r.fidelity.identical) {
      std::cerr << "gbcheck: the import does not compute what TorchScript computes (a gbcheck bug); nothing written\n";
      return kExitInternal;
    }
    write_model_dir(r.model, args->out, "imported by gbcheck import from " + args->path);
    std::cout << "wrote " << args->out << "/model.yaml and " << args->out << "/weights.safetensors\n";
    return kExitPass;
  };
}

}  // namespace gbc
