#include "harness/inputs/saved_cases.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "compiler/support/file_tree.h"
#include "harness/inputs/tensor_files.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

void write_manifest(const fs::path& dir, int index, const std::string& key, const NamedTensors& tensors) {
  nlohmann::json m;
  m["case"] = index;
  m[key] = nlohmann::json::array();
  for (const auto& [name, tensor] : tensors)
    m[key].push_back(save_tensor_file(tensor, name, dir.string(), key + "/" + name + ".bin"));
  fs::create_directories(dir);
  std::ofstream f(dir / "manifest.json");
  f << m.dump(2) << "\n";
  if (!f.flush()) throw std::runtime_error("cannot write " + (dir / "manifest.json").string());
}

void remove_or_throw(const fs::path& path) {
  std::error_code ec;
  remove_tree(path.string(), ec);
  if (ec) throw std::runtime_error("cannot remove " + path.string() + ": " + ec.message());
}

}  // namespace

std::string case_folder_name(int index) { return "case-" + std::to_string(index); }

void save_case_folder(const std::string& dir, int index, const std::string& key, const NamedTensors& tensors,
                      const std::vector<std::pair<std::string, NamedTensors>>& subfolders) {
  const fs::path final_dir = fs::path(dir) / case_folder_name(index);
  // Hidden and named by process, so neither a reader of DIR nor a concurrent run takes it for a case.
  const fs::path tmp = fs::path(dir) / ("." + case_folder_name(index) + ".tmp-" + std::to_string(getpid()));
  remove_or_throw(tmp);
  write_manifest(tmp, index, key, tensors);
  for (const auto& [name, sub] : subfolders) write_manifest(tmp / name, index, key, sub);
  remove_or_throw(final_dir);
  std::error_code ec;
  fs::rename(tmp, final_dir, ec);
  if (ec) throw std::runtime_error("cannot rename " + tmp.string() + " to " + final_dir.string() + ": " + ec.message());
}

}  // namespace gbc
