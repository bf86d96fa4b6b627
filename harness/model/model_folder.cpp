#include "harness/model/model_folder.h"

#include <algorithm>
#include <filesystem>

namespace gbc {

std::vector<std::string> models_in_folder(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gbc
