// Where gbcheck keeps on-disk caches (NVRTC binaries, compiled CPU kernels). One function so every
// cache agrees on the root and honours the same environment variables.
#pragma once

#include <string>

namespace gbc {

/// $GBCHECK_CACHE_DIR, else $XDG_CACHE_HOME/gbcheck, else ~/.cache/gbcheck. Not created here:
/// each cache makes its own subfolder (cuda/, cpu/) when it first writes.
std::string default_cache_dir();

}  // namespace gbc
