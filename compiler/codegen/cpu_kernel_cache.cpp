#include "compiler/codegen/cpu_kernel_cache.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "compiler/codegen/cpu_codegen.h"
#include "compiler/support/hash.h"
#include "compiler/support/log.h"

namespace gbc::codegen {
namespace {

namespace fs = std::filesystem;

// The kernel with every name made canonical: its code then depends on what it computes only.
kir::Kernel canonical(const kir::Kernel& kernel) {
  kir::Kernel k = kernel;
  k.name = "gbc_kernel";
  for (size_t b = 0; b < k.buffers.size(); ++b) k.buffers[b].name = "b" + std::to_string(b);
  k.node_names.clear();
  k.node_locs.clear();
  k.node_values.clear();
  return k;
}

// Where a cached kernel lives: a library of the cache folder and its symbol there.
struct KernelRecord {
  std::string library;  // file name in the cache folder
  std::string symbol;
};

std::string record_path(const std::string& dir, const std::string& key) { return dir + "/" + key + ".kernel"; }

bool read_record(const std::string& path, KernelRecord& record) {
  std::ifstream in(path);
  return in && std::getline(in, record.library) && std::getline(in, record.symbol) && !record.library.empty() &&
         !record.symbol.empty() && record.library.find('/') == std::string::npos;
}

// Written under a temporary name and renamed into place: readers see a whole record or none.
void write_record(const std::string& dir, const std::string& key, const KernelRecord& record) {
  const std::string path = record_path(dir, key);
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out << record.library << "\n" << record.symbol << "\n";
    if (!out.flush()) {
      GBC_LOG(warn) << "cpu kernel cache: cannot write " << temporary << ": " << std::strerror(errno);
      return;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    GBC_LOG(warn) << "cpu kernel cache: cannot store " << path << ": " << std::strerror(errno);
    std::remove(temporary.c_str());
  }
}

}  // namespace

std::string cpu_kernel_key(const kir::Kernel& kernel, const CpuCompileOptions& options) {
  // The header's hash stands for its text: every kernel is compiled after it.
  static const std::string header_hash = content_hash(cpu_kernel_header());
  return cpu_cache_key(header_hash + "\n" + generate_cpu_kernel(canonical(kernel)), options);
}

CpuKernelsBuild compile_cpu_kernels(const std::vector<kir::Kernel>& kernels, const std::string& module,
                                    const CpuCompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&start] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  CpuKernelsBuild build;
  if (!options.use_cache) {
    std::vector<std::string> names;
    for (const kir::Kernel& k : kernels) names.push_back(k.name);
    build.compiled_source = generate_cpu_source(kernels, module);
    build.result = compile_cpu(build.compiled_source, names, options);
    return build;
  }
  if (!host_compiler().available()) {
    build.result.log = host_compiler().unavailable_reason;
    return build;
  }
  const std::string dir = cpu_cache_dir(options);
  std::vector<GbcKernelFn> functions(kernels.size(), nullptr);
  std::vector<std::string> keys(kernels.size());
  std::map<std::string, size_t> first_with_key;  // a kernel twice in one module compiles once
  std::vector<size_t> missing;
  for (size_t i = 0; i < kernels.size(); ++i) {
    keys[i] = cpu_kernel_key(kernels[i], options);
    if (!first_with_key.emplace(keys[i], i).second) continue;
    KernelRecord record;
    CpuCompileResult loaded;
    if (read_record(record_path(dir, keys[i]), record) && load_cpu_library(dir + "/" + record.library, {record.symbol}, loaded)) {
      functions[i] = loaded.kernels.front();
      ++build.kernels_from_cache;
    } else {
      missing.push_back(i);
    }
  }
  build.result.cache_hit = missing.empty();
  if (!missing.empty()) {
    std::vector<kir::Kernel> batch;
    std::vector<std::string> batch_names;
    for (size_t i : missing) {
      batch.push_back(kernels[i]);
      batch_names.push_back(kernels[i].name);
    }
    build.compiled_source = generate_cpu_source(batch, module);
    CpuCompileResult compiled = compile_cpu(build.compiled_source, batch_names, options);
    if (!compiled.ok) {
      compiled.compile_ms = elapsed_ms();
      build.result = std::move(compiled);
      return build;
    }
    // Recorded only when the library landed in the cache folder (compile_cpu loads it from its
    // work folder when the rename into the cache failed).
    const fs::path library = fs::path(compiled.library_path).lexically_normal();
    const bool in_cache = library.parent_path() == (fs::path(dir) / "").lexically_normal().parent_path();
    for (size_t j = 0; j < missing.size(); ++j) {
      functions[missing[j]] = compiled.kernels[j];
      if (in_cache) write_record(dir, keys[missing[j]], {library.filename().string(), batch_names[j]});
    }
    build.result.cache_hit = compiled.cache_hit;  // the same kernels missed together before
    build.result.log = std::move(compiled.log);
    build.result.used_precompiled_header = compiled.used_precompiled_header;
    build.result.library_path = compiled.library_path;
  }
  for (size_t i = 0; i < kernels.size(); ++i)
    if (!functions[i]) functions[i] = functions[first_with_key.at(keys[i])];
  build.result.kernels = std::move(functions);
  build.result.ok = true;
  build.result.compile_ms = elapsed_ms();
  return build;
}

}  // namespace gbc::codegen
