#include "harness/adapters/adapter_python.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

extern char** environ;

namespace gbc {
namespace {

// The first executable `name` in the PATH value's folders, or "".
std::string find_on_path(const std::string& name, const std::string& path) {
  std::stringstream folders(path);
  for (std::string folder; std::getline(folders, folder, ':');) {
    if (folder.empty()) continue;
    const std::string candidate = folder + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Whether `python` finds a torch package, asked without importing it (tens of milliseconds).
bool finds_torch(const std::string& python) {
  std::vector<std::string> words = {python, "-c",
                                    "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::string choose_adapter_python(const std::string& path, const std::string& system_python) {
  const std::string on_path = find_on_path("python3", path);
  // Paths, not files, are compared: a virtual environment's python3 is a link to the system's
  // interpreter, and what makes it see the environment's packages is the path it runs as.
  if (!on_path.empty() && on_path != system_python && finds_torch(on_path)) return on_path;
  return system_python;
}

std::vector<std::string> with_adapter_python(std::vector<std::string> command) {
  const std::string key = "{python}";
  for (std::string& word : command) {
    if (word.find(key) == std::string::npos) continue;
    const std::string python = adapter_python();
    for (size_t at = word.find(key); at != std::string::npos; at = word.find(key, at + python.size()))
      word.replace(at, key.size(), python);
  }
  return command;
}

std::string adapter_python() {
  static const std::string python = [] {
    if (const char* explicit_python = std::getenv("GBCHECK_PYTHON"); explicit_python && *explicit_python) return std::string(explicit_python);
    const char* path = std::getenv("PATH");
    return choose_adapter_python(path ? path : "");
  }();
  return python;
}

}  // namespace gbc
