#include "compiler/codegen/cpu_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "compiler/support/cache_dir.h"
#include "compiler/support/file_tree.h"
#include "compiler/support/hash.h"
#include "compiler/support/log.h"

extern char** environ;

namespace gbc::codegen {
namespace {

namespace fs = std::filesystem;

std::atomic<int64_t> invocations{0};

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct RunResult {
  int status = -1;      // exit status; -1 when the program could not be started or was killed
  std::string output;   // stdout and stderr together
  std::string error;    // why it could not be started
};

// Runs argv (argv[0] searched in PATH) with stdout and stderr sent to log_path; no shell, so no
// quoting problems with paths.
RunResult run(const std::vector<std::string>& argv, const std::string& log_path) {
  RunResult result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(spawn_error);
    return result;
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.output = read_file(log_path);
  if (WIFEXITED(wstatus)) result.status = WEXITSTATUS(wstatus);
  else result.error = argv[0] + " was killed by signal " + std::to_string(WTERMSIG(wstatus));
  return result;
}

HostCompiler find_host_compiler() {
  HostCompiler compiler;
  std::vector<std::vector<std::string>> candidates;
  for (const char* var : {"GBCHECK_CXX", "CXX"}) {
    if (const char* value = std::getenv(var); value && *value) candidates.push_back(split_words(value));
  }
  candidates.push_back({"c++"});
  candidates.push_back({"g++"});
  std::string tried;
  const fs::path log = fs::temp_directory_path() / ("gbcheck-cxx-version-" + std::to_string(getpid()));
  for (const auto& command : candidates) {
    if (command.empty()) continue;
    std::vector<std::string> argv = command;
    argv.push_back("--version");
    RunResult r = run(argv, log.string());
    if (r.status == 0) {
      compiler.command = command;
      compiler.version = r.output.substr(0, r.output.find('\n'));
      break;
    }
    tried += "\n  " + (r.error.empty() ? argv[0] + " --version failed:\n" + r.output : r.error);
  }
  std::error_code ignored;
  fs::remove(log, ignored);
  if (compiler.command.empty()) {
    compiler.unavailable_reason = "no C++ compiler found (set GBCHECK_CXX); tried:" + tried;
  } else {
    GBC_LOG(debug) << "cpu codegen: compiler " << compiler.command.back() << " (" << compiler.version << ")";
  }
  return compiler;
}

// What -march=native depends on: the CPU model and its feature flags.
const std::string& cpu_identity() {
  static const std::string identity = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string model, flags;
    for (std::string line; std::getline(in, line) && (model.empty() || flags.empty());) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
    }
    return model + "\n" + flags;
  }();
  return identity;
}

std::string cache_key(const std::string& source, const std::vector<std::string>& flags, const HostCompiler& cxx) {
  // NUL separators keep the fields apart: no source text can pass for a flag.
  std::string text = source;
  text += '\0';
  for (const std::string& f : flags) text += f + '\0';
  for (const std::string& c : cxx.command) text += c + ' ';
  text += '\0' + cxx.version + '\0' + cpu_identity();
  return content_hash(text);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Loads path and resolves names; on failure returns false with the reason in result.log.
bool load(const std::string& path, const std::vector<std::string>& names, CpuCompileResult& result) {
  // Never dlclose'd: kernel pointers handed out stay valid for the process.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    result.log += std::string("cannot load ") + path + ": " + (error ? error : "dlopen failed");
    return false;
  }
  result.kernels.clear();
  for (const std::string& name : names) {
    void* symbol = dlsym(library, name.c_str());
    if (!symbol) {
      result.log += "kernel " + name + " not found in " + path;
      return false;
    }
    result.kernels.push_back(reinterpret_cast<GbcKernelFn>(symbol));
  }
  result.library_path = path;
  return true;
}

// A folder of its own for one build: unique per writer, inside `parent` so that the finished
// library can be renamed into the cache atomically (rename does not cross file systems).
std::string make_work_dir(const std::string& parent, const std::string& prefix, std::string& error) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string dir = parent + "/" + prefix + ".tmp.XXXXXX";
  if (!mkdtemp(dir.data())) {
    error = "cannot create a build folder in " + parent + ": " + std::strerror(errno);
    return "";
  }
  return dir;
}

bool is_hex_key(const std::string& name) {
  if (name.size() < 32) return false;
  for (size_t i = 0; i < 32; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])) || std::isupper(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

// The name generated sources include the shared header by; the .gch beside it is found first.
constexpr const char* kSharedHeaderName = "gbc_shared_header.h";

// The folder holding the precompiled shared header for these flags, built on first use; "" when it
// cannot be built (the caller compiles the whole source). A failed build is not retried by this
// process.
std::string precompiled_header_dir(const std::string& header, std::vector<std::string> flags, const HostCompiler& cxx,
                                   const std::string& cache_dir) {
  flags.erase(std::remove(flags.begin(), flags.end(), "-shared"), flags.end());
  const std::string key = cache_key(header, flags, cxx);
  const std::string dir = cache_dir + "/" + key + ".pch";
  const std::string gch = std::string("/") + kSharedHeaderName + ".gch";
  static std::mutex mutex;
  static std::set<std::string> failed;
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  if (fs::exists(dir + gch, ec)) return dir;
  if (failed.count(dir)) return "";
  std::string error;
  const std::string work = make_work_dir(cache_dir, key, error);
  if (work.empty()) {
    failed.insert(dir);
    return "";
  }
  const std::string text = work + "/" + kSharedHeaderName;
  std::ofstream(text, std::ios::binary) << header;
  std::vector<std::string> argv = cxx.command;
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", text, "-o", work + gch});
  RunResult r = run(argv, work + "/log.txt");
  if (r.status != 0 || !fs::exists(work + gch, ec)) {
    GBC_LOG(debug) << "cpu kernel cache: no precompiled header (" << r.error << r.output << ")";
    failed.insert(dir);
    remove_tree(work, ec);
    return "";
  }
  fs::remove(work + "/log.txt", ec);
  // A whole folder appears at once; when another process got there first, its folder serves.
  if (std::rename(work.c_str(), dir.c_str()) != 0) remove_tree(work, ec);
  return fs::exists(dir + gch, ec) ? dir : "";
}

// The source with the shared header that follows its first line replaced by an #include of it;
// "" when the source does not have it there.
std::string include_shared_header(const std::string& source, const std::string& header) {
  const size_t first_line_end = source.find('\n');
  if (header.empty() || first_line_end == std::string::npos ||
      source.compare(first_line_end + 1, header.size(), header) != 0)
    return "";
  return source.substr(0, first_line_end + 1) + "#include \"" + kSharedHeaderName + "\"\n" +
         source.substr(first_line_end + 1 + header.size());
}

}  // namespace

const HostCompiler& host_compiler() {
  static const HostCompiler compiler = find_host_compiler();
  return compiler;
}

const std::vector<std::string>& cpu_compile_flags() {
  // -fpeel-loops (on at -O3, off at -O2) unrolls a reduction's 16-lane vector loop, so that its
  // accumulators stay in registers: without it layer_norm loaded and stored them at every step.
  static const std::vector<std::string> flags = {"-std=c++17", "-O2", "-fpeel-loops", "-march=native", "-fopenmp",
                                                 "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math",
                                                 "-ffp-contract=off"};
  return flags;
}

std::string default_cpu_cache_dir() { return default_cache_dir() + "/cpu"; }

int64_t cpu_compiler_invocations() { return invocations.load(); }

namespace {

// cpu_compile_flags() and the options' extra flags: what a build runs with and is keyed by.
std::vector<std::string> build_flags(const CpuCompileOptions& options) {
  std::vector<std::string> flags = cpu_compile_flags();
  flags.insert(flags.end(), options.extra_flags.begin(), options.extra_flags.end());
  return flags;
}

}  // namespace

std::string cpu_cache_key(const std::string& text, const CpuCompileOptions& options) {
  return cache_key(text, build_flags(options), host_compiler());
}

bool load_cpu_library(const std::string& path, const std::vector<std::string>& names, CpuCompileResult& result) {
  return load(path, names, result);
}

std::string cpu_cache_dir(const CpuCompileOptions& options) {
  return options.cache_dir.empty() ? default_cpu_cache_dir() : options.cache_dir;
}

CpuCompileResult compile_cpu(const std::string& source, const std::vector<std::string>& kernel_names,
                             const CpuCompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CpuCompileResult result;
  const HostCompiler& cxx = host_compiler();
  if (!cxx.available()) {
    result.log = cxx.unavailable_reason;
    return result;
  }
  const std::vector<std::string> flags = build_flags(options);
  const std::string key = cache_key(source, flags, cxx);
  const std::string cache_dir = cpu_cache_dir(options);
  const std::string entry = cache_dir + "/" + key + ".so";

  std::error_code ec;
  if (options.use_cache && fs::exists(entry, ec)) {
    if (load(entry, kernel_names, result)) {
      result.ok = result.cache_hit = true;
      result.compile_ms = ms_since(start);
      return result;
    }
    GBC_LOG(warn) << "cpu kernel cache: rebuilding unusable entry (" << result.log << ")";
    result.log.clear();
    fs::remove(entry, ec);
  }

  std::string error;
  const std::string work = make_work_dir(options.use_cache ? cache_dir : fs::temp_directory_path().string(),
                                         options.use_cache ? key : "gbcheck-cpu", error);
  if (work.empty()) {
    result.log = error;
    return result;
  }
  const std::string src = work + "/" + key + ".cpp";
  const std::string built = work + "/" + key + ".so";
  std::string pch_dir;
  std::string text = options.use_cache ? include_shared_header(source, options.shared_header) : "";
  if (!text.empty()) pch_dir = precompiled_header_dir(options.shared_header, flags, cxx, cache_dir);
  if (pch_dir.empty()) text = source;
  {
    std::ofstream out(src, std::ios::binary);
    out << text;
    if (!out.flush()) {
      result.log = "cannot write " + src + ": " + std::strerror(errno);
      remove_tree(work, ec);
      return result;
    }
  }
  std::vector<std::string> argv = cxx.command;
  argv.insert(argv.end(), flags.begin(), flags.end());
  if (!pch_dir.empty()) argv.insert(argv.end(), {"-I", pch_dir});
  argv.insert(argv.end(), {"-o", built, src});
  result.used_precompiled_header = !pch_dir.empty();
  ++invocations;
  RunResult run_result = run(argv, work + "/log.txt");
  result.log = run_result.output;
  if (run_result.status != 0 || !fs::exists(built, ec)) {
    if (!run_result.error.empty()) result.log += run_result.error;
    else result.log += "\n" + cxx.command.back() + " exited with status " + std::to_string(run_result.status);
    remove_tree(work, ec);
    result.compile_ms = ms_since(start);
    return result;
  }
  std::string library = built;
  if (options.use_cache) {
    // Atomic within the folder: a concurrent reader sees the old state or the whole library.
    if (std::rename(built.c_str(), entry.c_str()) == 0) library = entry;
    else GBC_LOG(warn) << "cpu kernel cache: cannot store " << entry << ": " << std::strerror(errno);
  }
  result.ok = load(library, kernel_names, result);
  // The mapping outlives the files: a library loaded from the work folder stays usable.
  remove_tree(work, ec);
  result.compile_ms = ms_since(start);
  return result;
}

namespace {

// The cache entries in dir (content-hash names, with or without an extension, and leftovers of
// interrupted writes), each with its size; other files are not the cache's.
std::vector<std::pair<fs::path, uint64_t>> cache_entries(const std::string& dir) {
  std::vector<std::pair<fs::path, uint64_t>> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_hex_key(name)) continue;
    const std::string rest = name.substr(32);
    const bool entry = rest.empty() || rest == ".so" || rest == ".pch" || rest == ".kernel";  // .kernel: cpu_kernel_cache.h
    const bool leftover = rest.rfind(".tmp.", 0) == 0 || rest.rfind(".so.tmp.", 0) == 0 || rest.rfind(".kernel.tmp.", 0) == 0;
    if (!entry && !leftover) continue;
    uint64_t bytes = 0;
    if (e.is_directory(ec)) {
      for (const fs::directory_entry& f : fs::recursive_directory_iterator(e.path(), ec))
        if (f.is_regular_file(ec)) bytes += f.file_size(ec);
    } else {
      bytes = e.file_size(ec);
    }
    found.emplace_back(e.path(), bytes);
  }
  return found;
}

}  // namespace

CacheContents inspect_cache(const std::string& dir) {
  CacheContents result;
  for (const auto& [path, bytes] : cache_entries(dir)) {
    result.entries.push_back(path.string());
    result.bytes += bytes;
  }
  return result;
}

CacheClearResult clear_cache(const std::string& dir) {
  CacheClearResult result;
  std::error_code ec;
  for (const auto& [path, bytes] : cache_entries(dir)) {
    if (remove_tree(path.string(), ec) > 0 && !ec) {
      result.removed.push_back(path.string());
      result.bytes += bytes;
    }
  }
  return result;
}

}  // namespace gbc::codegen
