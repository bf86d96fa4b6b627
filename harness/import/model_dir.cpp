#include "harness/import/model_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compiler/support/file_tree.h"
#include "harness/model/model_writer.h"
#include "harness/model/weights_file.h"

namespace gbc {
namespace {

[[noreturn]] void fail(const std::string& message, const std::string& hint = "") {
  Diagnostics d;
  d.error({"command line", 0, 0}, message, hint);
  throw ModelError(d);
}

}  // namespace

void write_model_dir(const Model& model, const std::string& dir, const std::string& header_comment) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    fail("--out " + dir + " already exists and is not an empty folder", "choose a new folder");
  const std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
  remove_tree(tmp, ec);
  if (!fs::create_directories(tmp, ec)) fail("cannot create " + tmp + ": " + ec.message());
  auto abandon = [&](const std::string& why) {
    std::error_code ignored;
    remove_tree(tmp, ignored);
    fail(why);
  };
  std::string why;
  if (!write_weights_file(tmp + "/weights.safetensors", model.params, &why)) abandon(why);
  WriteOptions options;
  options.header_comment = header_comment;
  std::ofstream yaml(tmp + "/model.yaml");
  yaml << write_model_yaml(model, options);
  yaml.close();
  if (!yaml) abandon("cannot write " + tmp + "/model.yaml");
  if (fs::exists(dir, ec)) fs::remove(dir, ec);  // the empty folder the rename replaces
  fs::rename(tmp, dir, ec);
  if (ec) abandon("cannot move " + tmp + " to " + dir + ": " + ec.message());
}

}  // namespace gbc
