#include "compiler/cuda/nvrtc_compiler.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "compiler/cuda/bind_symbol.h"
#include "compiler/support/log.h"

namespace gbc {
namespace {

// Sorted descending so versioned names (libnvrtc.so.13) come before the bare dev symlink.
std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> paths;
  glob_t matches{};
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  std::sort(paths.rbegin(), paths.rend());
  return paths;
}

std::vector<std::string> candidates() {
  std::vector<std::string> names;
  if (const char* explicit_path = std::getenv("GBCHECK_NVRTC"); explicit_path && *explicit_path) {
    names.emplace_back(explicit_path);
  }
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.emplace_back(soname);
  std::vector<std::string> dirs = {"/usr/local/cuda/lib64"};
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home && *cuda_home) {
    dirs.push_back(std::string(cuda_home) + "/lib64");
  }
  for (const std::string& dir : dirs) {
    for (std::string& path : glob_paths(dir + "/libnvrtc.so*")) names.push_back(std::move(path));
  }
  return names;
}

// NVRTC dlopens libnvrtc-builtins by soname when it first compiles, through the loader's search
// path, not from its own folder: with libnvrtc opened by full path and that folder neither in
// LD_LIBRARY_PATH nor ld.so.cache, every compile fails with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE.
// Loading the builtins from the same folder first makes the later by-soname dlopen find them.
void preload_builtins(void* library) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || map->l_name[0] != '/') return;
  std::string path = map->l_name;
  std::string dir = path.substr(0, path.rfind('/'));
  for (const std::string& builtins : glob_paths(dir + "/libnvrtc-builtins.so*")) {
    if (dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL)) return;  // kept open for the process
  }
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

NvrtcCompiler& NvrtcCompiler::get() {
  static NvrtcCompiler compiler;
  return compiler;
}

NvrtcCompiler::NvrtcCompiler() {
  const char* explicit_path = std::getenv("GBCHECK_NVRTC");
  std::string tried;
  for (const std::string& candidate : candidates()) {
    std::string error = try_load(candidate);
    if (error.empty()) {
      GBC_LOG(debug) << "cuda: NVRTC " << version_ << " from " << path_;
      return;
    }
    // An explicit choice that does not load deserves a word even if a fallback works.
    if (explicit_path && candidate == explicit_path) {
      GBC_LOG(warn) << "GBCHECK_NVRTC ignored: " << error;
    }
    tried += "\n  " + error;
  }
  reason_ = "NVRTC not found; tried (set GBCHECK_NVRTC to the library's path):" + tried;
  GBC_LOG(debug) << "cuda: " << reason_;
}

// Returns why path cannot be used, empty on success. Libraries are never dlclose'd.
std::string NvrtcCompiler::try_load(const std::string& path) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    return error ? error : path + ": dlopen failed";
  }
  const bool ok = bind_symbol(library, nvrtcGetErrorString_, "nvrtcGetErrorString") &&
                  bind_symbol(library, nvrtcVersion_, "nvrtcVersion") &&
                  bind_symbol(library, nvrtcCreateProgram_, "nvrtcCreateProgram") &&
                  bind_symbol(library, nvrtcDestroyProgram_, "nvrtcDestroyProgram") &&
                  bind_symbol(library, nvrtcCompileProgram_, "nvrtcCompileProgram") &&
                  bind_symbol(library, nvrtcGetPTXSize_, "nvrtcGetPTXSize") &&
                  bind_symbol(library, nvrtcGetPTX_, "nvrtcGetPTX") &&
                  bind_symbol(library, nvrtcGetCUBINSize_, "nvrtcGetCUBINSize") &&
                  bind_symbol(library, nvrtcGetCUBIN_, "nvrtcGetCUBIN") &&
                  bind_symbol(library, nvrtcGetProgramLogSize_, "nvrtcGetProgramLogSize") &&
                  bind_symbol(library, nvrtcGetProgramLog_, "nvrtcGetProgramLog");
  int major = 0;
  int minor = 0;
  if (!ok || nvrtcVersion_(&major, &minor) != NVRTC_SUCCESS) {
    const char* error = dlerror();
    dlclose(library);  // nothing of it is used yet
    return path + ": not a usable NVRTC (" + (error ? error : "nvrtcVersion failed") + ")";
  }
  preload_builtins(library);
  version_ = std::to_string(major) + "." + std::to_string(minor);
  link_map* map = nullptr;
  path_ = dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : path;
  return "";
}

std::vector<std::string> NvrtcCompiler::flags(const CompileOptions& options) {
  const std::string arch = std::to_string(options.arch);
  std::vector<std::string> result = {"--gpu-architecture=" +
                                     (options.cubin ? "sm_" + arch : "compute_" + arch)};
  if (options.fast_math) result.emplace_back("--use_fast_math");
  result.insert(result.end(), options.extra.begin(), options.extra.end());
  return result;
}

CompileResult NvrtcCompiler::compile(const std::string& source, const std::string& name,
                                     const CompileOptions& options) const {
  CompileResult result;
  if (!available()) {
    result.log = reason_;
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram program = nullptr;
  if (nvrtcResult status = nvrtcCreateProgram_(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
      status != NVRTC_SUCCESS) {
    result.log = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString_(status);
    return result;
  }
  const std::vector<std::string> option_strings = flags(options);
  std::vector<const char*> option_pointers;
  for (const std::string& option : option_strings) option_pointers.push_back(option.c_str());
  const nvrtcResult status =
      nvrtcCompileProgram_(program, static_cast<int>(option_pointers.size()), option_pointers.data());

  size_t log_size = 0;
  if (nvrtcGetProgramLogSize_(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    result.log.resize(log_size);
    nvrtcGetProgramLog_(program, result.log.data());
    result.log.resize(log_size - 1);  // drop the terminating NUL
  }
  if (status != NVRTC_SUCCESS) {
    // The log has the diagnostics for NVRTC_ERROR_COMPILATION; other codes (bad option, missing
    // builtins) may leave it empty, so always say which call failed.
    result.log += std::string(result.log.empty() || result.log.back() == '\n' ? "" : "\n") +
                  "nvrtcCompileProgram: " + nvrtcGetErrorString_(status);
  } else {
    size_t size = 0;
    nvrtcResult got = options.cubin ? nvrtcGetCUBINSize_(program, &size) : nvrtcGetPTXSize_(program, &size);
    if (got == NVRTC_SUCCESS) {
      result.binary.resize(size);
      got = options.cubin ? nvrtcGetCUBIN_(program, result.binary.data())
                          : nvrtcGetPTX_(program, result.binary.data());
    }
    if (got == NVRTC_SUCCESS) {
      // PTX sizes count the terminating NUL; keep the text alone (std::string still terminates it).
      if (!options.cubin && !result.binary.empty() && result.binary.back() == '\0') result.binary.pop_back();
      result.ok = true;
    } else {
      result.binary.clear();
      result.log += std::string(options.cubin ? "nvrtcGetCUBIN: " : "nvrtcGetPTX: ") + nvrtcGetErrorString_(got);
    }
  }
  nvrtcDestroyProgram_(&program);
  result.compile_ms = ms_since(start);
  GBC_LOG_CHANNEL(kernels) << "nvrtc: compiled " << name << " for " << option_strings.front() << " in "
                           << result.compile_ms << " ms" << (result.ok ? "" : " (failed)");
  return result;
}

}  // namespace gbc
