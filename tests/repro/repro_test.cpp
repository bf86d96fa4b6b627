// `gbcheck repro` end to end: the folder for an injected const fault holds the model, the saved
// inputs and outputs, manifest, README (expected, observed, environment, replay), repro.py and a
// repro.cpp that cmake builds against this LibTorch and that exits 1 printing REPRODUCED; a
// crashing backend is packaged with its signal; a passing model writes nothing; inputs drawn as views
// keep their layout in repro.cpp and repro.py. Label: repro.
#include "harness/repro/repro.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "harness/model/model_loader.h"
#include "harness/repro/repro_sources.h"
#include "harness/inputs/tensor_files.h"
#include "compiler/support/file_tree.h"
#include "tests/support/single_threaded.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ReproResult repro(const std::string& kind, const std::string& fault, const fs::path& out) {
  { std::error_code ignored; remove_tree(fs::path(out).string(), ignored); }
  Model model = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/corpus/faults/" + kind + ".yaml");
  ReproOptions o;
  o.run = run_options_from_model(model);
  o.run.backend_options.inject_fault = fault;
  o.backend = "gbc";
  o.out_dir = out.string();
  o.timeout_s = 120;
  return write_repro(model, o);
}

// Runs a shell command; returns its exit status and appends its output to `output`.
int shell(const std::string& command, std::string& output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The LibTorch this build uses, from its CMake cache, so the repro builds against the same one.
std::string torch_dir() {
  std::smatch m;
  std::string cache = read(fs::path(GBCHECK_BINARY_DIR) / "CMakeCache.txt");
  if (std::regex_search(cache, m, std::regex("Torch_DIR:PATH=([^\n]*)"))) return m[1];
  return "";
}

// Builds the folder's repro.cpp with cmake against this LibTorch into out/build; false (the log in
// `log`) when it does not build.
bool build_repro(const fs::path& out, std::string& log) {
  std::string launcher = std::system("command -v ccache >/dev/null 2>&1") == 0 ? " -DCMAKE_CXX_COMPILER_LAUNCHER=ccache" : "";
  const std::string build = (out / "build").string();
  return shell("cmake -S " + out.string() + " -B " + build + " -DTorch_DIR=" + torch_dir() + launcher, log) == 0 &&
         shell("cmake --build " + build + " -j 2", log) == 0;
}

TEST(Repro, ConstFaultFolderBuildsWithCmakeAndReproduces) {
  const fs::path out = fs::path(GBCHECK_BINARY_DIR) / "repro-test" / "const";
  ReproResult r = repro("const", "const", out);
  ASSERT_TRUE(r.reproduced);
  ASSERT_GE(r.case_index, 0);
  for (const char* f : {"model.yaml", "manifest.json", "repro.py", "repro.cpp", "CMakeLists.txt", "README.md",
                        "inputs/x.bin", "expected/y.bin", "observed/y.bin"})
    EXPECT_TRUE(fs::exists(out / f)) << f;

  nlohmann::json m = nlohmann::json::parse(read(out / "manifest.json"));
  EXPECT_EQ(m["backend"], "gbc");
  EXPECT_EQ(m["case"], r.case_index);
  at::Tensor expected = load_tensor_file(m["expected"][0], out.string());
  at::Tensor observed = load_tensor_file(m["observed"][0], out.string());
  EXPECT_FALSE(expected.allclose(observed));

  std::string readme = read(out / "README.md");
  for (const char* s : {"## Expected", "## Observed", "## Environment", "LibTorch", "host C++ compiler", "FAULT INJECTION",
                        "--inject-fault const", "./build/repro", "python3 repro.py"})
    EXPECT_NE(readme.find(s), std::string::npos) << s;
  std::string py = read(out / "repro.py");
  EXPECT_NE(py.find("def forward("), std::string::npos);
  EXPECT_NE(py.find("torch.compile"), std::string::npos);

  std::string run;
  ASSERT_TRUE(build_repro(out, run)) << run;
  EXPECT_EQ(shell((out / "build" / "repro").string(), run), 1) << run;
  EXPECT_NE(run.find("REPRODUCED"), std::string::npos) << run;
  EXPECT_EQ(run.find("NOT REPRODUCED"), std::string::npos) << run;
  // This LibTorch's eager agrees with gbcheck's saved reference.
  EXPECT_NE(run.find("y: match"), std::string::npos) << run;
}

// A case whose inputs are a transposed, a sliced and an expanded view: repro.cpp and repro.py lay
// each out as that view again, with the strides gbcheck gives it (harness/inputs/tensor_layout.cpp),
// and print them. A clone of a sliced or expanded view is contiguous: both programs rebuild the
// view for every call instead.
TEST(Repro, ViewInputsKeepTheirLayoutInBothPrograms) {
  const fs::path out = fs::path(GBCHECK_BINARY_DIR) / "repro-test" / "layouts";
  { std::error_code ignored; remove_tree(out.string(), ignored); }
  Model model = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/tests/data/repro_layouts.yaml");
  ReproOptions o;
  o.run = run_options_from_model(model);
  o.backend = "gbc";
  o.out_dir = out.string();
  o.timeout_s = 120;
  o.case_index = 1;
  write_repro(model, o);
  nlohmann::json m = nlohmann::json::parse(read(out / "manifest.json"));
  std::vector<std::string> lines;
  std::set<std::string> layouts;
  for (const auto& e : m["inputs"]) {
    if (!e.contains("layout")) continue;
    const std::string layout = e["layout"];
    layouts.insert(layout);
    const at::Tensor view = read_layout(e, load_tensor_file(e, out.string()));
    std::ostringstream line;
    line << "input " << e["name"].get<std::string>() << ": " << layout
         << (layout == "transposed" ? std::string() : " along dim " + std::to_string(e["dim"].get<int64_t>())) << ", strides "
         << view.strides();
    lines.push_back(line.str());
  }
  ASSERT_EQ(layouts, (std::set<std::string>{"transposed", "sliced", "expanded"})) << m.dump();

  std::string run;
  ASSERT_TRUE(build_repro(out, run)) << run;
  EXPECT_EQ(shell((out / "build" / "repro").string(), run), 0) << run;  // gbc agrees with eager on this case
  std::string py;
  EXPECT_EQ(shell("cd " + out.string() + " && ${GBCHECK_PYTHON:-/usr/bin/python3} repro.py", py), 0) << py;
  for (const std::string& line : lines) {
    EXPECT_NE(run.find(line), std::string::npos) << line << "\n" << run;
    EXPECT_NE(py.find(line), std::string::npos) << line << "\n" << py;
  }
  EXPECT_NE(run.find("y: match"), std::string::npos) << run;
}

TEST(Repro, CrashingBackendIsPackagedWithItsSignal) {
  const fs::path out = fs::path(GBCHECK_BINARY_DIR) / "repro-test" / "crash";
  ReproResult r = repro("crash", "crash", out);
  ASSERT_TRUE(r.reproduced);
  EXPECT_NE(r.observed_error.find("SIGSEGV"), std::string::npos) << r.observed_error;
  nlohmann::json m = nlohmann::json::parse(read(out / "manifest.json"));
  EXPECT_FALSE(m.contains("observed"));
  EXPECT_NE(read(out / "README.md").find("SIGSEGV"), std::string::npos);
}

TEST(Repro, PassingModelWritesNothing) {
  const fs::path out = fs::path(GBCHECK_BINARY_DIR) / "repro-test" / "clean";
  ReproResult r = repro("const", "", out);
  EXPECT_FALSE(r.reproduced);
  EXPECT_TRUE(r.files.empty());
  EXPECT_FALSE(fs::exists(out));
}

TEST(ReproSources, SpellsTorchScriptDtypeCodesAsTorchDtypes) {
  EXPECT_EQ(python_dtypes("a = x.to(5)\nb = torch.full([2], 1, dtype=11, device=d)\nc = y.to(15)\n"),
            "a = x.to(torch.float16)\nb = torch.full([2], 1, dtype=torch.bool, device=d)\nc = y.to(torch.bfloat16)\n");
}

}  // namespace
}  // namespace gbc
