// adapter_python(): the python that runs the Python adapters when $GBCHECK_PYTHON is unset.
#include "harness/adapters/adapter_python.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace gbc {
namespace {

namespace fs = std::filesystem;

// A folder holding an executable python3 that answers the torch question with `exit_code`.
fs::path fake_python_folder(const std::string& name, int exit_code) {
  const fs::path dir = fs::temp_directory_path() / ("gbcheck_adapter_python_" + name + "_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path python = dir / "python3";
  std::ofstream(python) << "#!/bin/sh\nexit " << exit_code << "\n";
  chmod(python.c_str(), 0755);
  return dir;
}

TEST(AdapterPython, APythonOnPathThatFindsTorchIsChosen) {
  const fs::path with_torch = fake_python_folder("torch", 0);
  EXPECT_EQ(choose_adapter_python("/nonexistent:" + with_torch.string() + ":/usr/bin", "/usr/bin/python3"),
            (with_torch / "python3").string());
  fs::remove_all(with_torch);
}

TEST(AdapterPython, WithoutTorchOnPathTheSystemPythonIsChosen) {
  const fs::path without_torch = fake_python_folder("plain", 1);
  EXPECT_EQ(choose_adapter_python(without_torch.string() + ":/usr/bin", "/usr/bin/python3"), "/usr/bin/python3");
  EXPECT_EQ(choose_adapter_python("", "/usr/bin/python3"), "/usr/bin/python3") << "nothing on PATH";
  fs::remove_all(without_torch);
}

TEST(AdapterPython, TheFirstPython3OnPathIsTheOneAsked) {
  const fs::path plain = fake_python_folder("first", 1);
  const fs::path with_torch = fake_python_folder("second", 0);
  EXPECT_EQ(choose_adapter_python(plain.string() + ":" + with_torch.string(), "/usr/bin/python3"), "/usr/bin/python3")
      << "as a shell would, the first python3 on PATH is the one meant";
  fs::remove_all(plain);
  fs::remove_all(with_torch);
}

TEST(AdapterPython, CommandsGetThePythonWhenTheyStart) {
  const std::string python = adapter_python();
  EXPECT_FALSE(python.empty());
  EXPECT_EQ(with_adapter_python({"{python}", "--flag", "a{python}b"}),
            (std::vector<std::string>{python, "--flag", "a" + python + "b"}));
  EXPECT_EQ(with_adapter_python({"/bin/other"}), std::vector<std::string>{"/bin/other"});
}

}  // namespace
}  // namespace gbc
