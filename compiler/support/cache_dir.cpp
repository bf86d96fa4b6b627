#include "compiler/support/cache_dir.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace gbc {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string home_dir() {
  std::string home = env("HOME");
  if (!home.empty()) return home;
  // Services and containers sometimes run without $HOME; the passwd entry still knows it.
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "";
}

}  // namespace

std::string default_cache_dir() {
  if (std::string dir = env("GBCHECK_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG spec says relative values are invalid and must be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') return xdg + "/gbcheck";
  if (std::string home = home_dir(); !home.empty()) return home + "/.cache/gbcheck";
  return (std::filesystem::temp_directory_path() / ("gbcheck-cache-" + std::to_string(getuid()))).string();
}

}  // namespace gbc
