// On-disk cache of NVRTC output (PTX or CUBIN), so a process does not recompile what an earlier
// one already built. Entries are immutable files named by key; safe for concurrent processes:
// writes go to a temporary file that is renamed into place, so a reader sees a whole entry or
// none, and every entry carries a checksum so a damaged file reads as a miss, never as code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compiler/cuda/nvrtc_compiler.h"

namespace gbc {

class ModuleCache {
 public:
  /// dir holds the entries and is created on the first store.
  explicit ModuleCache(std::string dir = default_dir());

  /// default_cache_dir() + "/cuda".
  static std::string default_dir();
  /// content_hash over the source, the exact NVRTC flags (architecture and PTX/CUBIN included)
  /// and the NVRTC version.
  static std::string key(std::string_view source, const CompileOptions& options,
                         std::string_view nvrtc_version);

  const std::string& dir() const { return dir_; }
  /// nullopt on a miss or an unreadable or damaged entry.
  std::optional<std::string> load(const std::string& key) const;
  /// Best effort: a cache that cannot be written (read-only, disk full) only logs a warning.
  void store(const std::string& key, std::string_view bytes) const;

 private:
  std::string path(const std::string& key) const;

  std::string dir_;
};

}  // namespace gbc
