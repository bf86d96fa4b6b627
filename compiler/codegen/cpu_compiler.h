// Builds generated C++ (cpu_codegen.h) into a shared object with the host compiler, caches it on
// disk by content, loads it with dlopen and finds each kernel with dlsym.
//
// Compiler: $GBCHECK_CXX, else $CXX (either may carry a launcher: "ccache g++"), else c++ or g++
// from PATH. Flags: cpu_compile_flags(); no -ffast-math, because NaN, infinities and signed zeros
// must behave as in eager; -ffp-contract=off keeps compiled kernels bit-identical to the
// interpreter. Cache entries are `<key>.so` under default_cache_dir()/cpu (or a given folder),
// the key a content hash of the source, the flags, the compiler and the CPU (-march=native code
// runs only where it was built). An entry is written under a temporary name and renamed into
// place, so concurrent processes see whole files or none; an entry that does not load is rebuilt.
// Loaded libraries stay loaded for the life of the process (kernel pointers never dangle).
// A source that begins (after its first line) with CpuCompileOptions::shared_header is built
// against a precompiled form of that header, made once per cache folder as `<key>.pch/` (the
// header and its .gch, renamed into place whole): parsing the kernel headers is about two thirds
// of a small module's compile time. GCC falls back to the header's text when the .gch does not
// fit, so results never depend on it. A compile failure is reported in the result with the
// compiler's output, never thrown: the runtime records it as a fallback. Tests: tests/codegen/cpu_compiler_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_abi.h"

namespace gbc::codegen {

struct CpuCompileOptions {
  /// Empty: default_cpu_cache_dir().
  std::string cache_dir;
  /// false: build in a private temporary folder; the cache is neither read nor written.
  bool use_cache = true;
  /// Appended to cpu_compile_flags() (and part of the cache key), e.g. -fopt-info-vec-optimized.
  std::vector<std::string> extra_flags;
  /// Text that sources share right after their first line (generated ones: cpu_kernel_header()),
  /// precompiled once per cache folder. Empty, absent from the source, or use_cache false: the
  /// source is compiled whole.
  std::string shared_header;
};

struct CpuCompileResult {
  bool ok = false;
  /// What the compiler printed (errors, warnings, -fopt-info), or why it could not run or the
  /// library could not be loaded. Empty on a cache hit.
  std::string log;
  bool cache_hit = false;
  /// The build included the precompiled shared header.
  bool used_precompiled_header = false;
  /// Wall time of compile_cpu(), cache lookup and loading included.
  double compile_ms = 0;
  /// The shared object the kernels were loaded from.
  std::string library_path;
  /// One entry point per requested name, in order.
  std::vector<GbcKernelFn> kernels;
};

/// The host compiler as a command (a launcher may come first) and its version line.
struct HostCompiler {
  std::vector<std::string> command;
  std::string version;
  std::string unavailable_reason;  // empty when the compiler ran
  bool available() const { return unavailable_reason.empty(); }
};
/// Found and run (`--version`) once per process.
const HostCompiler& host_compiler();

/// -std=c++17 -O2 -fpeel-loops -march=native -fopenmp -fPIC -shared -fno-math-errno
/// -fno-trapping-math -ffp-contract=off. -fno-trapping-math only drops the assumption that
/// floating-point exception flags are observed (gbcheck never reads them); it lets GCC if-convert
/// the prelude's selects. -O2, not -O3: the kernels' hot loops compile the same at a fifth less
/// compile time (docs/fuzzing.md, "With a cold kernel cache").
const std::vector<std::string>& cpu_compile_flags();

/// default_cache_dir() + "/cpu".
std::string default_cpu_cache_dir();

/// Compiles `source` (unless cached), loads it and looks up kernel_names.
CpuCompileResult compile_cpu(const std::string& source, const std::vector<std::string>& kernel_names,
                             const CpuCompileOptions& options = {});

/// The content hash compile_cpu() keys `text` by under `options`: the text, the flags, the
/// compiler and the CPU.
std::string cpu_cache_key(const std::string& text, const CpuCompileOptions& options);
/// Loads a library compile_cpu() built (never unloaded) and resolves names into result.kernels,
/// setting result.library_path; false with the reason in result.log.
bool load_cpu_library(const std::string& path, const std::vector<std::string>& names, CpuCompileResult& result);
/// options.cache_dir, or default_cpu_cache_dir() when it is empty.
std::string cpu_cache_dir(const CpuCompileOptions& options);

/// How many modules this process has run the compiler for in compile_cpu() (a cache hit runs
/// none; building a precompiled header is not counted).
int64_t cpu_compiler_invocations();

struct CacheClearResult {
  std::vector<std::string> removed;  // paths
  uint64_t bytes = 0;
};
/// Removes the cache entries in dir (files named by a content hash, with or without an extension,
/// and leftovers of interrupted writes); other files are left alone. A missing folder removes
/// nothing. Works on the CPU and the CUDA (ModuleCache) folders alike.
CacheClearResult clear_cache(const std::string& dir);

struct CacheContents {
  std::vector<std::string> entries;  // paths, in directory order
  uint64_t bytes = 0;
};
/// What clear_cache(dir) would remove, and its size on disk (`gbcheck cache info`).
CacheContents inspect_cache(const std::string& dir);

}  // namespace gbc::codegen
