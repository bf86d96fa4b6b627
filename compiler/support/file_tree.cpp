#include "compiler/support/file_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace gbc {
namespace {

// nftw's callback takes no user data: the counts of the walk in progress on this thread.
thread_local uintmax_t removed = 0;
thread_local int first_error = 0;

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (std::remove(path) == 0) {
    ++removed;
  } else if (errno != ENOENT && first_error == 0) {
    first_error = errno;
  }
  return 0;  // go on: remove what can be removed
}

}  // namespace

uintmax_t remove_tree(const std::string& path, std::error_code& ec) {
  ec.clear();
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) ec = std::error_code(errno, std::generic_category());
    return 0;
  }
  removed = 0;
  first_error = 0;
  // Depth first (a folder after its entries), links not followed, at most 64 descriptors open.
  if (nftw(path.c_str(), remove_entry, 64, FTW_DEPTH | FTW_PHYS) != 0 && first_error == 0) first_error = errno;
  if (first_error != 0) ec = std::error_code(first_error, std::generic_category());
  return removed;
}

}  // namespace gbc
