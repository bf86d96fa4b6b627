// Compiles generated CUDA C++ to PTX or CUBIN with NVRTC, loaded with dlopen on first use. NVRTC
// needs no GPU, so this works (and is tested) on build machines that only have the toolkit.
//
// Library search order: $GBCHECK_NVRTC, libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so (the dynamic
// loader's path), then libnvrtc.so* in /usr/local/cuda/lib64 and $CUDA_HOME/lib64 by full path.
#pragma once

#include <string>
#include <vector>

#include "compiler/cuda/cuda_api.h"

namespace gbc {

struct CompileOptions {
  /// Compute capability as major * 10 + minor, e.g. 80 (A100) or 90 (H100).
  int arch = 80;
  /// false: PTX for compute_XX (the driver JITs it, so it also runs on newer GPUs);
  /// true: CUBIN for sm_XX (no JIT at load, but only for that GPU family).
  bool cubin = false;
  /// Off by default: fast math changes results (flush-to-zero, approximate division and
  /// transcendentals) and gbcheck compares numerics against eager.
  bool fast_math = false;
  /// Passed to NVRTC after the architecture flag.
  std::vector<std::string> extra = {"-std=c++17", "-default-device"};
};

struct CompileResult {
  bool ok = false;
  /// PTX text (without a trailing NUL) or CUBIN bytes; empty when !ok.
  std::string binary;
  /// NVRTC's diagnostics (warnings too), or why NVRTC could not run at all.
  std::string log;
  double compile_ms = 0;
};

class NvrtcCompiler {
 public:
  /// Loads NVRTC the first time; thread-safe.
  static NvrtcCompiler& get();

  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  bool available() const { return reason_.empty(); }
  /// Empty when available; otherwise lists every library that was tried.
  std::string unavailable_reason() const { return reason_; }
  /// "13.0"; empty when unavailable. Part of every cache key: a new NVRTC may emit other code.
  std::string version() const { return version_; }
  /// The file that was loaded, for logs.
  std::string library_path() const { return path_; }

  /// The exact option list passed to NVRTC (architecture flag first).
  static std::vector<std::string> flags(const CompileOptions& options);

  /// name is the file name NVRTC uses in diagnostics ("kernel.cu" -> "kernel.cu(3): error ...").
  /// Compilation errors are returned in the result, never thrown.
  CompileResult compile(const std::string& source, const std::string& name,
                        const CompileOptions& options) const;

 private:
  NvrtcCompiler();
  std::string try_load(const std::string& path);

  std::string reason_;
  std::string version_;
  std::string path_;

  const char* (*nvrtcGetErrorString_)(nvrtcResult result) = nullptr;
  nvrtcResult (*nvrtcVersion_)(int* major, int* minor) = nullptr;
  nvrtcResult (*nvrtcCreateProgram_)(nvrtcProgram* program, const char* source, const char* name,
                                     int num_headers, const char* const* headers,
                                     const char* const* include_names) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram_)(nvrtcProgram* program) = nullptr;
  nvrtcResult (*nvrtcCompileProgram_)(nvrtcProgram program, int num_options,
                                      const char* const* options) = nullptr;
  nvrtcResult (*nvrtcGetPTXSize_)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetPTX_)(nvrtcProgram program, char* ptx) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize_)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN_)(nvrtcProgram program, char* cubin) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize_)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog_)(nvrtcProgram program, char* log) = nullptr;
};

}  // namespace gbc
