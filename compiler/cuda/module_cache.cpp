#include "compiler/cuda/module_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "compiler/support/cache_dir.h"
#include "compiler/support/hash.h"
#include "compiler/support/log.h"

namespace gbc {
namespace {

// Entry layout: kMagic, content_hash(payload) (32 hex digits), '\n', payload.
constexpr std::string_view kMagic = "gbcc1 ";
constexpr size_t kHeaderSize = kMagic.size() + 32 + 1;

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace

ModuleCache::ModuleCache(std::string dir) : dir_(std::move(dir)) {}

std::string ModuleCache::default_dir() { return default_cache_dir() + "/cuda"; }

std::string ModuleCache::key(std::string_view source, const CompileOptions& options,
                             std::string_view nvrtc_version) {
  // NUL separators keep the fields apart: no source text can pass for an option or a version.
  std::string text(source);
  text += '\0';
  for (const std::string& flag : NvrtcCompiler::flags(options)) text += flag + '\0';
  text += "arch=" + std::to_string(options.arch) + (options.cubin ? " cubin" : " ptx") + '\0';
  text += "nvrtc=";
  text += nvrtc_version;
  return content_hash(text);
}

std::string ModuleCache::path(const std::string& key) const {
  // Keys become file names: refuse anything that could leave dir_ or hide as a dot file.
  const bool valid = !key.empty() && key.front() != '.' &&
                     key.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-") ==
                         std::string::npos;
  if (!valid) throw std::invalid_argument("invalid module cache key '" + key + "'");
  return dir_ + "/" + key;
}

std::optional<std::string> ModuleCache::load(const std::string& key) const {
  const std::string file = path(key);
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  std::string data = std::move(contents).str();
  if (data.size() < kHeaderSize || data.compare(0, kMagic.size(), kMagic) != 0 ||
      data[kHeaderSize - 1] != '\n' ||
      data.compare(kMagic.size(), 32, content_hash(std::string_view(data).substr(kHeaderSize))) != 0) {
    GBC_LOG(warn) << "module cache: ignoring damaged entry " << file;
    return std::nullopt;
  }
  return data.substr(kHeaderSize);
}

void ModuleCache::store(const std::string& key, std::string_view bytes) const {
  const std::string file = path(key);
  std::error_code error;
  std::filesystem::create_directories(dir_, error);  // a failure shows up in mkstemp below
  // A unique temporary name per writer, renamed over the entry: rename is atomic within a folder,
  // so concurrent readers and writers never see a partial file under the final name.
  std::string temp = file + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    GBC_LOG(warn) << "module cache: cannot write in " << dir_ << ": " << std::strerror(errno);
    return;
  }
  fchmod(fd, 0644);  // mkstemp makes it 0600; entries are plain shareable data
  const std::string header = std::string(kMagic) + content_hash(bytes) + "\n";
  bool ok = write_all(fd, header) && write_all(fd, bytes);
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), file.c_str()) != 0) {
    GBC_LOG(warn) << "module cache: cannot store " << file << ": " << std::strerror(errno);
    ::unlink(temp.c_str());
  }
}

}  // namespace gbc
