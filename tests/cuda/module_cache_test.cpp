#include "compiler/cuda/module_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "compiler/support/cache_dir.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class ModuleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gbc_module_cache_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = (root_ / "cuda").string();
  }
  void TearDown() override { { std::error_code ignored; remove_tree(fs::path(root_).string(), ignored); } }

  static void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }

  fs::path root_;
  std::string dir_;
};

TEST_F(ModuleCacheTest, StoreLoadRoundTripKeepsBinaryBytes) {
  ModuleCache cache(dir_);
  const std::string bytes("\x7f" "ELF\0\x01\xff binary", 14);
  cache.store("abc123", bytes);
  std::optional<std::string> loaded = cache.load("abc123");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, bytes);

  cache.store("abc123", "replaced");
  EXPECT_EQ(cache.load("abc123"), "replaced");
  cache.store("empty", "");
  EXPECT_EQ(cache.load("empty"), "");
}

TEST_F(ModuleCacheTest, MissReturnsNullopt) {
  ModuleCache cache(dir_);
  EXPECT_EQ(cache.load("nothing-here"), std::nullopt);  // the folder does not even exist yet
  cache.store("other", "x");
  EXPECT_EQ(cache.load("nothing-here"), std::nullopt);
}

TEST_F(ModuleCacheTest, PartialTempFileIsNeverVisible) {
  ModuleCache cache(dir_);
  const std::string key = "deadbeef";
  // What a writer killed halfway leaves behind.
  fs::create_directories(dir_);
  write_file(fs::path(dir_) / (key + ".tmp.Ab12Cd"), "gbcc1 0123");
  EXPECT_EQ(cache.load(key), std::nullopt);
  cache.store(key, "whole entry");
  EXPECT_EQ(cache.load(key), "whole entry");
}

TEST_F(ModuleCacheTest, DamagedEntryReadsAsMiss) {
  ModuleCache cache(dir_);
  cache.store("k", std::string(1000, 'p'));
  const fs::path file = fs::path(dir_) / "k";
  fs::resize_file(file, fs::file_size(file) - 1);  // truncated
  EXPECT_EQ(cache.load("k"), std::nullopt);
  write_file(file, "not a cache entry at all");
  EXPECT_EQ(cache.load("k"), std::nullopt);
}

TEST_F(ModuleCacheTest, ConcurrentWritersAndReadersSeeWholeEntries) {
  ModuleCache cache(dir_);
  const std::string payload(256 << 10, 'q');
  std::atomic<int> partial{0};
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) cache.store("shared", payload);
    });
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (std::optional<std::string> got = cache.load("shared")) {
          ++hits;
          if (*got != payload) ++partial;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(partial.load(), 0);
  EXPECT_EQ(cache.load("shared"), payload);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "shared") << "temporary file left behind";
  }
}

TEST_F(ModuleCacheTest, UnwritableDirectoryIsNotAnError) {
  write_file(root_ / "file", "x");
  ModuleCache cache((root_ / "file" / "cuda").string());  // a folder under a regular file
  EXPECT_NO_THROW(cache.store("k", "bytes"));
  EXPECT_EQ(cache.load("k"), std::nullopt);
}

TEST_F(ModuleCacheTest, RejectsKeysThatAreNotPlainNames) {
  ModuleCache cache(dir_);
  EXPECT_THROW(cache.load("../escape"), std::invalid_argument);
  EXPECT_THROW(cache.store("", "x"), std::invalid_argument);
  EXPECT_THROW(cache.store(".hidden", "x"), std::invalid_argument);
}

TEST(ModuleCacheKeyTest, CoversSourceOptionsArchAndVersion) {
  CompileOptions base;
  const std::string key = ModuleCache::key("src", base, "13.0");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(ModuleCache::key("src", base, "13.0"), key);
  EXPECT_NE(ModuleCache::key("src2", base, "13.0"), key);
  EXPECT_NE(ModuleCache::key("src", base, "12.8"), key);
  CompileOptions other = base;
  other.arch = 90;
  EXPECT_NE(ModuleCache::key("src", other, "13.0"), key);
  other = base;
  other.cubin = true;
  EXPECT_NE(ModuleCache::key("src", other, "13.0"), key);
  other = base;
  other.fast_math = true;
  EXPECT_NE(ModuleCache::key("src", other, "13.0"), key);
  other = base;
  other.extra.push_back("-lineinfo");
  EXPECT_NE(ModuleCache::key("src", other, "13.0"), key);
}

// Sets an environment variable for one scope and restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CacheDirTest, FollowsEnvironmentInOrder) {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv explicit_dir("GBCHECK_CACHE_DIR", "/tmp/explicit");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), "/tmp/explicit");
    EXPECT_EQ(ModuleCache::default_dir(), "/tmp/explicit/cuda");
  }
  ScopedEnv no_explicit("GBCHECK_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), "/xdg/gbcheck");
  }
  {
    ScopedEnv relative_xdg("XDG_CACHE_HOME", "relative");  // invalid per the XDG spec
    EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/gbcheck");
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/gbcheck");
}

}  // namespace
}  // namespace gbc
