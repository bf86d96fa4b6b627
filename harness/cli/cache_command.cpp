// `gbcheck cache info` and `gbcheck cache clear`: the on-disk caches of compiled kernels (cpu/:
// gbc's shared objects, cuda/: NVRTC binaries) under one root, --cache-dir, else
// default_cache_dir() ($GBCHECK_CACHE_DIR, $XDG_CACHE_HOME/gbcheck, ~/.cache/gbcheck). Only cache
// entries are counted or removed (codegen::inspect_cache, clear_cache); other files in the folders
// stay. Test: tests/cli/cache_command_test.cpp.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "compiler/codegen/cpu_compiler.h"
#include "compiler/support/cache_dir.h"
#include "harness/cli/cli.h"
#include "harness/runner/check_report.h"

namespace gbc {
namespace {

// The caches under a root, as their subfolders are named by their owners (cpu_compiler.h,
// compiler/cuda/module_cache.h).
const char* const kCacheKinds[] = {"cpu", "cuda"};

std::string size_str(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

std::string entries_str(size_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

struct CacheRoot {
  std::string path;
  std::string source;  // where the path came from, for the user
};

CacheRoot resolve_root(const std::string& flag) {
  if (!flag.empty()) return {flag, "--cache-dir"};
  const char* env = std::getenv("GBCHECK_CACHE_DIR");
  return {default_cache_dir(), env && *env ? "$GBCHECK_CACHE_DIR" : "default"};
}

int run_info(const CacheRoot& root) {
  std::cout << "cache: " << root.path << " (" << root.source << ")\n";
  size_t total_entries = 0;
  uint64_t total_bytes = 0;
  for (const char* kind : kCacheKinds) {
    const std::string dir = root.path + "/" + kind;
    codegen::CacheContents c = codegen::inspect_cache(dir);
    std::cout << "  " << kind << ": " << entries_str(c.entries.size()) << ", " << size_str(c.bytes) << "  " << dir
              << "\n";
    total_entries += c.entries.size();
    total_bytes += c.bytes;
  }
  std::cout << "  total: " << entries_str(total_entries) << ", " << size_str(total_bytes) << "\n";
  return kExitPass;
}

int run_clear(const CacheRoot& root) {
  size_t removed = 0;
  uint64_t bytes = 0;
  for (const char* kind : kCacheKinds) {
    codegen::CacheClearResult r = codegen::clear_cache(root.path + "/" + kind);
    removed += r.removed.size();
    bytes += r.bytes;
  }
  std::cout << "removed " << entries_str(removed) << " (" << size_str(bytes) << ") from " << root.path << " ("
            << root.source << ")\n";
  return kExitPass;
}

}  // namespace

std::function<int()> add_cache_command(CLI::App& sub) {
  auto cache_dir = std::make_shared<std::string>();
  auto action = std::make_shared<std::function<int(const CacheRoot&)>>();
  sub.require_subcommand(1);
  const std::string dir_help = "the cache root (default: $GBCHECK_CACHE_DIR, else $XDG_CACHE_HOME/gbcheck or ~/.cache/gbcheck)";
  CLI::App* info = sub.add_subcommand("info", "where the kernel caches are, how many entries they hold and their size");
  info->add_option("--cache-dir", *cache_dir, dir_help);
  info->callback([action] { *action = run_info; });
  CLI::App* clear = sub.add_subcommand("clear", "remove every cached kernel (other files in the folders stay)");
  clear->add_option("--cache-dir", *cache_dir, dir_help);
  clear->callback([action] { *action = run_clear; });
  return [cache_dir, action] { return (*action)(resolve_root(*cache_dir)); };
}

}  // namespace gbc
