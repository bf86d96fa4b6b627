// The host-compiler driver: cache hits run no compiler, bypassing the cache leaves nothing behind,
// entries appear whole (and a damaged one is rebuilt), compile errors come back as the compiler's
// log, a shared header is precompiled once per folder (and a damaged one is harmless), and
// clear_cache removes cache entries only.
#include "compiler/codegen/cpu_compiler.h"
#include "compiler/support/file_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace gbc::codegen {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "gbcheck-cpu-compiler-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    remove_tree(fs::path(path_).string(), ec);
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

// A kernel that writes `value` into buffer 0's first int64; the value makes sources distinct.
std::string kernel_source(int value) {
  return "#include <stdint.h>\n"
         "typedef struct GbcBufferArg { void* data; int64_t s0, s1; int32_t rank; int64_t sizes[8], strides[8]; } GbcBufferArg;\n"
         "typedef struct GbcKernelArgs { int64_t numel, outer, inner; const GbcBufferArg* buffers; const double* scalars;\n"
         "                               int32_t num_threads; } GbcKernelArgs;\n"
         "extern \"C\" void store_value(const GbcKernelArgs* a) { *(int64_t*)a->buffers[0].data = " +
         std::to_string(value) + "; }\n";
}

int64_t call(GbcKernelFn fn) {
  int64_t out = 0;
  GbcBufferArg buffer{};
  buffer.data = &out;
  GbcKernelArgs args{};
  args.buffers = &buffer;
  fn(&args);
  return out;
}

CpuCompileOptions in(const TempDir& dir) {
  CpuCompileOptions options;
  options.cache_dir = dir.path();
  return options;
}

TEST(CpuCompiler, FindsTheHostCompiler) {
  const HostCompiler& cxx = host_compiler();
  ASSERT_TRUE(cxx.available()) << cxx.unavailable_reason;
  EXPECT_FALSE(cxx.command.empty());
  EXPECT_FALSE(cxx.version.empty());
  const std::vector<std::string>& flags = cpu_compile_flags();
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "-ffast-math"), 0);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "-fopenmp"), 1);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "-ffp-contract=off"), 1);
}

TEST(CpuCompiler, SecondCompileIsACacheHitWithoutTheCompiler) {
  TempDir dir;
  const int64_t before = cpu_compiler_invocations();
  CpuCompileResult first = compile_cpu(kernel_source(41), {"store_value"}, in(dir));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(cpu_compiler_invocations(), before + 1);
  EXPECT_GT(first.compile_ms, 0.0);
  ASSERT_EQ(first.kernels.size(), 1u);
  EXPECT_EQ(call(first.kernels[0]), 41);
  EXPECT_EQ(fs::path(first.library_path).parent_path(), fs::path(dir.path()));

  CpuCompileResult second = compile_cpu(kernel_source(41), {"store_value"}, in(dir));
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(cpu_compiler_invocations(), before + 1);
  EXPECT_EQ(second.library_path, first.library_path);
  EXPECT_EQ(call(second.kernels[0]), 41);

  // Other flags are another entry.
  CpuCompileOptions o0 = in(dir);
  o0.extra_flags = {"-O0"};
  CpuCompileResult third = compile_cpu(kernel_source(41), {"store_value"}, o0);
  ASSERT_TRUE(third.ok) << third.log;
  EXPECT_FALSE(third.cache_hit);
  EXPECT_EQ(dir.files().size(), 2u);
}

TEST(CpuCompiler, BypassingTheCacheCompilesEveryTimeAndKeepsNothing) {
  TempDir dir;
  CpuCompileOptions options = in(dir);
  options.use_cache = false;
  const int64_t before = cpu_compiler_invocations();
  for (int round = 0; round < 2; ++round) {
    CpuCompileResult r = compile_cpu(kernel_source(7), {"store_value"}, options);
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cache_hit);
    EXPECT_EQ(call(r.kernels[0]), 7) << "a loaded library outlives its deleted file";
    EXPECT_FALSE(fs::exists(r.library_path));
  }
  EXPECT_EQ(cpu_compiler_invocations(), before + 2);
  EXPECT_TRUE(dir.files().empty());
}

TEST(CpuCompiler, EntriesAppearWholeAndDamagedOnesAreRebuilt) {
  TempDir first_dir, second_dir;
  CpuCompileResult built = compile_cpu(kernel_source(3), {"store_value"}, in(first_dir));
  ASSERT_TRUE(built.ok) << built.log;
  // Only the finished entry is left: no source, log or temporary file.
  const std::vector<std::string> files = first_dir.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(files[0], std::regex("[0-9a-f]{32}\\.so"))) << files[0];

  // The same entry, truncated by a crash of some other writer, in another cache folder.
  std::ofstream(second_dir.path() + "/" + files[0]) << "\x7f" "ELF garbage";
  const int64_t before = cpu_compiler_invocations();
  CpuCompileResult rebuilt = compile_cpu(kernel_source(3), {"store_value"}, in(second_dir));
  ASSERT_TRUE(rebuilt.ok) << rebuilt.log;
  EXPECT_FALSE(rebuilt.cache_hit);
  EXPECT_EQ(cpu_compiler_invocations(), before + 1);
  EXPECT_EQ(call(rebuilt.kernels[0]), 3);
  EXPECT_EQ(second_dir.files(), files);
}

TEST(CpuCompiler, ConcurrentBuildsOfOneSourceAgree) {
  TempDir dir;
  std::vector<CpuCompileResult> results(2);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t)
    threads.emplace_back([&, t] { results[t] = compile_cpu(kernel_source(99), {"store_value"}, in(dir)); });
  for (std::thread& t : threads) t.join();
  for (const CpuCompileResult& r : results) {
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_EQ(call(r.kernels[0]), 99);
  }
  EXPECT_EQ(dir.files().size(), 1u);
}

TEST(CpuCompiler, CompileErrorsReturnTheCompilersLog) {
  TempDir dir;
  const int64_t before = cpu_compiler_invocations();
  CpuCompileResult r = compile_cpu("extern \"C\" void broken(const void*) { undeclared_thing(); }\n", {"broken"}, in(dir));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_NE(r.log.find("undeclared_thing"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("error"), std::string::npos) << r.log;
  EXPECT_EQ(cpu_compiler_invocations(), before + 1);
  EXPECT_TRUE(dir.files().empty()) << "a failed build leaves nothing in the cache";
}

TEST(CpuCompiler, MissingKernelIsReported) {
  TempDir dir;
  CpuCompileResult r = compile_cpu(kernel_source(1), {"store_value", "no_such_kernel"}, in(dir));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernel no_such_kernel not found"), std::string::npos) << r.log;
}

// A shared header (the kernel ABI's typedefs here) and sources that begin with it after a first
// comment line, as generated translation units do.
const std::string kSharedHeader =
    "#include <stdint.h>\n"
    "typedef struct GbcBufferArg { void* data; int64_t s0, s1; int32_t rank; int64_t sizes[8], strides[8]; } GbcBufferArg;\n"
    "typedef struct GbcKernelArgs { int64_t numel, outer, inner; const GbcBufferArg* buffers; const double* scalars;\n"
    "                               int32_t num_threads; } GbcKernelArgs;\n";

std::string source_with_shared_header(int value) {
  return "// module " + std::to_string(value) + "\n" + kSharedHeader +
         "extern \"C\" void store_value(const GbcKernelArgs* a) { *(int64_t*)a->buffers[0].data = " +
         std::to_string(value) + "; }\n";
}

std::vector<std::string> pch_folders(const TempDir& dir) {
  std::vector<std::string> found;
  for (const std::string& f : dir.files())
    if (std::regex_match(f, std::regex("[0-9a-f]{32}\\.pch"))) found.push_back(f);
  return found;
}

TEST(CpuCompiler, ASharedHeaderIsPrecompiledOncePerFolder) {
  TempDir dir;
  CpuCompileOptions options = in(dir);
  options.shared_header = kSharedHeader;
  for (int value : {21, 22}) {
    CpuCompileResult r = compile_cpu(source_with_shared_header(value), {"store_value"}, options);
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_TRUE(r.used_precompiled_header);
    EXPECT_EQ(call(r.kernels[0]), value);
  }
  ASSERT_EQ(pch_folders(dir).size(), 1u);
  EXPECT_TRUE(fs::exists(dir.path() + "/" + pch_folders(dir)[0] + "/gbc_shared_header.h.gch"));
  EXPECT_EQ(dir.files().size(), 3u);  // two modules and the header

  // A source without the header, or a build that bypasses the cache, compiles whole.
  CpuCompileResult plain = compile_cpu(kernel_source(23), {"store_value"}, options);
  ASSERT_TRUE(plain.ok) << plain.log;
  EXPECT_FALSE(plain.used_precompiled_header);
  options.use_cache = false;
  CpuCompileResult uncached = compile_cpu(source_with_shared_header(24), {"store_value"}, options);
  ASSERT_TRUE(uncached.ok) << uncached.log;
  EXPECT_FALSE(uncached.used_precompiled_header);
  EXPECT_EQ(call(uncached.kernels[0]), 24);

  // The header folder is a cache entry like the modules.
  EXPECT_EQ(clear_cache(dir.path()).removed.size(), 4u);
  EXPECT_TRUE(dir.files().empty());
}

TEST(CpuCompiler, ADamagedPrecompiledHeaderFallsBackToItsText) {
  TempDir dir;
  CpuCompileOptions options = in(dir);
  options.shared_header = kSharedHeader;
  ASSERT_TRUE(compile_cpu(source_with_shared_header(31), {"store_value"}, options).ok);
  ASSERT_EQ(pch_folders(dir).size(), 1u);
  std::ofstream(dir.path() + "/" + pch_folders(dir)[0] + "/gbc_shared_header.h.gch", std::ios::trunc) << "gpch garbage";
  CpuCompileResult r = compile_cpu(source_with_shared_header(32), {"store_value"}, options);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(call(r.kernels[0]), 32);
}

TEST(CpuCompiler, ClearCacheRemovesEntriesOnly) {
  TempDir dir;
  ASSERT_TRUE(compile_cpu(kernel_source(5), {"store_value"}, in(dir)).ok);
  const std::string key(32, 'a');
  std::ofstream(dir.path() + "/" + key) << "a CUDA module cache entry";
  std::ofstream(dir.path() + "/" + key + ".tmp.Ab12Cd") << "left by an interrupted write";
  fs::create_directory(dir.path() + "/" + std::string(32, 'b') + ".tmp.Xy34Zw");
  std::ofstream(dir.path() + "/notes.txt") << "not ours";
  std::ofstream(dir.path() + "/" + std::string(32, 'c') + ".txt") << "not ours either";

  CacheClearResult cleared = clear_cache(dir.path());
  EXPECT_EQ(cleared.removed.size(), 4u);
  EXPECT_GT(cleared.bytes, 1000u);
  EXPECT_EQ(dir.files(), (std::vector<std::string>{std::string(32, 'c') + ".txt", "notes.txt"}));
  EXPECT_TRUE(clear_cache(dir.path() + "/missing").removed.empty());
}

}  // namespace
}  // namespace gbc::codegen

namespace gbc {
namespace {

namespace fs = std::filesystem;

TEST(RemoveTree, RemovesNestedFoldersAndLinksNotTheirTargets) {
  const fs::path root = fs::temp_directory_path() / ("gbc-remove-tree-" + std::to_string(getpid()));
  const fs::path outside = fs::temp_directory_path() / ("gbc-remove-tree-target-" + std::to_string(getpid()));
  std::error_code ec;
  fs::create_directories(root / "a" / "b");
  fs::create_directories(outside);
  std::ofstream(root / "a" / "b" / "f.txt") << "x";
  std::ofstream(root / "g.txt") << "y";
  std::ofstream(outside / "keep.txt") << "z";
  fs::create_directory_symlink(outside, root / "a" / "link");
  EXPECT_EQ(remove_tree(root.string(), ec), 6u) << ec.message();  // root, a, b, f.txt, g.txt, link
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(outside / "keep.txt")) << "a link is removed, never followed";
  EXPECT_EQ(remove_tree(root.string(), ec), 0u);
  EXPECT_FALSE(ec) << "a missing path is no error";
  remove_tree(outside.string(), ec);
}

// pip's LibTorch 2.x binds std::filesystem::remove_all to a copy that crashes (file_tree.h): the
// tree must keep using remove_tree, which CI cannot notice otherwise (Debian's LibTorch is fine).
TEST(RemoveTree, NoSourceCallsStdFilesystemRemoveAll) {
  std::vector<std::string> offenders;
  for (const char* folder : {"compiler", "harness", "oracles", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const size_t at = line.find("remove_all(");
        if (at == std::string::npos || line.find("//") < at || line.find("find(\"remove_all") != std::string::npos) continue;
        offenders.push_back(entry.path().string() + ":" + std::to_string(n));
      }
    }
  }
  EXPECT_TRUE(offenders.empty()) << "use gbc::remove_tree (compiler/support/file_tree.h) at: " << offenders.front();
}

}  // namespace
}  // namespace gbc
