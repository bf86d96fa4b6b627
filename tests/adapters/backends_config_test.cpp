// harness/adapters/backends_config.h, adapter_probe.h and compiler/backends/backend_registry.h:
// configs/backends.yaml-shaped files read into adapter specs with placeholders resolved, their
// mistakes reported at file:line:col, a probe's answer checked against a backend's requirements,
// and backends registered at run time next to the built-in ones.
#include "harness/adapters/backends_config.h"

#include <gtest/gtest.h>

#include "compiler/backends/backend_registry.h"
#include "compiler/ir/diagnostics.h"
#include "harness/adapters/adapter_frames.h"
#include "harness/adapters/adapter_probe.h"

namespace gbc {
namespace {

std::string error_of(const std::string& text) {
  try {
    read_backends_config(text, "/cfg/b.yaml");
  } catch (const ConfigError& e) {
    return e.diagnostics().str();
  }
  return "";
}

TEST(BackendsConfig, ReadsEachBackendWithPlaceholdersResolved) {
  std::vector<AdapterSpec> specs = read_backends_config(
      "backends:\n"
      "  mine:\n"
      "    description: my compiler\n"
      "    command: \"{python}\"\n"
      "    args: [\"{here}/mine.py\", --fast]\n"
      "    timeout_s: 7.5\n"
      "    requires: {torch: \"2.1\", python_modules: [torch._dynamo], device: cuda}\n"
      "  other:\n"
      "    command: /bin/other\n",
      "/cfg/b.yaml");
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "mine");
  EXPECT_EQ(specs[0].command, (std::vector<std::string>{"{python}", "/cfg/mine.py", "--fast"}))
      << "{python} is resolved when the adapter starts (adapter_python_test.cpp)";
  EXPECT_EQ(specs[0].timeout_s, 7.5);
  EXPECT_EQ(specs[0].requires.torch, "2.1");
  EXPECT_EQ(specs[0].requires.device, "cuda");
  EXPECT_EQ(specs[0].loc.str(), "/cfg/b.yaml:2:3");
  EXPECT_EQ(specs[1].command, std::vector<std::string>{"/bin/other"});
  EXPECT_EQ(specs[1].memory_mb, 16384);
}

TEST(BackendsConfig, MistakesAreReportedAtTheirLocation) {
  EXPECT_EQ(error_of("backends:\n  nnc:\n    command: x\n"),
            "/cfg/b.yaml:2:3: error: 'nnc' is a built-in backend; an adapter needs a name of its own\n");
  EXPECT_NE(error_of("backends:\n  a:\n    comand: x\n").find("/cfg/b.yaml:3:5: error: "), std::string::npos);
  EXPECT_NE(error_of("backends:\n  a:\n    command: x\n    timeout_s: soon\n").find("/cfg/b.yaml:4:16: error: "), std::string::npos);
  EXPECT_EQ(error_of("backends:\n  a:\n    description: no command\n"),
            "/cfg/b.yaml:2:3: error: backend a has no command; hint: command: the program that runs the adapter\n");
  EXPECT_NE(error_of("backends:\n  a:\n    command: x\n    timeout_s: -1\n").find("/cfg/b.yaml:4:16: error: backend a: timeout_s must be positive"),
            std::string::npos);
  EXPECT_NE(error_of("backend:\n  a: {}\n").find("/cfg/b.yaml:1:1: error: "), std::string::npos);
}

TEST(BackendsConfig, TheShippedFileDefinesTheShippedAdapters) {
  std::vector<AdapterSpec> specs = load_backends_config();
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  for (const char* n : {"ts-freeze", "nnc-py", "inductor", "aot-eager"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

// compiler/backends/backend_registry.h: registered backends join the registry after the built-in
// ones, with their availability; a built-in name cannot be taken.
TEST(BackendRegistry, RegisteredBackendsJoinTheBuiltInOnes) {
  const size_t before = backend_registry().size();
  register_backend({"test-only-adapter", "a test's backend", [] { return std::unique_ptr<Backend>(); }},
                   [] { return std::string("not here"); });
  ASSERT_NE(find_backend("test-only-adapter"), nullptr);
  EXPECT_EQ(backend_registry().size(), before + 1);
  EXPECT_EQ(backend_registry().back().name, "test-only-adapter");
  EXPECT_TRUE(is_external_backend("test-only-adapter"));
  EXPECT_FALSE(is_external_backend("gbc"));
  EXPECT_EQ(backend_unavailable_reason("test-only-adapter"), "not here");
  EXPECT_EQ(backend_unavailable_reason("gbc"), "");
  // A second registration replaces the first.
  register_backend({"test-only-adapter", "again", [] { return std::unique_ptr<Backend>(); }}, [] { return std::string(); });
  EXPECT_EQ(backend_registry().size(), before + 1);
  EXPECT_EQ(find_backend("test-only-adapter")->description, "again");
  EXPECT_EQ(backend_unavailable_reason("test-only-adapter"), "");
  EXPECT_THROW(register_backend({"nnc", "", nullptr}, nullptr), std::invalid_argument);
}

TEST(AdapterProbe, RequirementsAreCheckedAgainstTheProbe) {
  nlohmann::json probe = {{"protocol", kAdapterProtocol}, {"torch", "1.13.0a0"}, {"cuda", false},
                          {"modules", {{"torch._dynamo", false}}}, {"unavailable", ""}};
  AdapterRequirements r;
  EXPECT_EQ(unavailable_reason(r, probe), "");
  r.torch = "2.0";
  EXPECT_EQ(unavailable_reason(r, probe),
            "needs torch >= 2.0, found 1.13.0a0; $GBCHECK_PYTHON can name a python with a newer torch (ci/torch2_env.sh "
            "makes one with PyTorch 2.6)");
  r.torch = "1.10";
  r.python_modules = {"torch._dynamo"};
  EXPECT_EQ(unavailable_reason(r, probe), "needs the python module torch._dynamo, which its python lacks");
  r.python_modules.clear();
  r.device = "cuda";
  EXPECT_EQ(unavailable_reason(r, probe), "needs a CUDA device and a CUDA build of torch");
  r.device.clear();
  probe["unavailable"] = "its own reason";
  EXPECT_EQ(unavailable_reason(r, probe), "its own reason");
  probe["protocol"] = "gbcheck-adapter/0";
  EXPECT_EQ(unavailable_reason(r, probe), "its adapter speaks 'gbcheck-adapter/0', not gbcheck-adapter/1");
}

TEST(AdapterProbe, VersionsCompareByTheirNumbers) {
  EXPECT_LT(compare_versions("1.13.0a0", "2.0"), 0);
  EXPECT_EQ(compare_versions("2.0", "2.0.0"), 0);
  EXPECT_GT(compare_versions("2.11.0+cu128", "2.1"), 0);
  EXPECT_LT(compare_versions("1.9", "1.10"), 0);
}

}  // namespace
}  // namespace gbc
