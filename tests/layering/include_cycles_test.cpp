// The tree's layering: no #include cycle between folders (the folder of a file, such as
// compiler/runtime or harness/model) nor between the three floors (compiler, oracles, harness),
// so the pipeline reads in folder order and oracles/ stays a leaf above the compiler. A failure
// names the cycle and, for each step of it, one #include line that makes it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFloors = {"compiler", "oracles", "harness"};

// Folder -> folder it includes from -> one include that does it ("a/x.cpp:3 includes b/y.h").
using IncludeGraph = std::map<std::string, std::map<std::string, std::string>>;

struct Layering {
  IncludeGraph folders;  // by the directory of each file
  IncludeGraph floors;   // by the first component of its path
};

std::string floor_of(const std::string& path) { return path.substr(0, path.find('/')); }

// Reads the quoted #include lines of every C++ source under root/<floor> that name a file of a
// floor (system and third-party includes are not the tree's layering).
Layering scan(const fs::path& root) {
  static const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
  Layering out;
  for (const std::string& floor : kFloors) {
    if (!fs::exists(root / floor)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / floor)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp" && ext != ".cu") continue;
      const std::string file = entry.path().lexically_relative(root).generic_string();
      const std::string folder = fs::path(file).parent_path().generic_string();
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        const std::string target = m[1];
        if (std::find(kFloors.begin(), kFloors.end(), floor_of(target)) == kFloors.end()) continue;
        const std::string where = file + ":" + std::to_string(n) + " includes " + target;
        const std::string target_folder = fs::path(target).parent_path().generic_string();
        if (target_folder != folder) out.folders[folder].emplace(target_folder, where);
        if (floor_of(target) != floor_of(file)) out.floors[floor_of(file)].emplace(floor_of(target), where);
      }
    }
  }
  return out;
}

// One cycle per strongly connected component of more than one folder (Tarjan), written
// "a -> b -> a" with the include behind each arrow on the lines below.
std::vector<std::string> cycles(const IncludeGraph& graph) {
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::set<std::string>> components;
  int next = 0;
  std::function<void(const std::string&)> connect = [&](const std::string& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    auto it = graph.find(v);
    if (it != graph.end()) {
      for (const auto& [w, why] : it->second) {
        if (!index.count(w)) {
          connect(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    }
    if (low[v] != index[v]) return;
    std::set<std::string> component;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      component.insert(w);
    } while (w != v);
    if (component.size() > 1) components.push_back(component);
  };
  for (const auto& [v, edges] : graph)
    if (!index.count(v)) connect(v);

  std::vector<std::string> out;
  for (const auto& component : components) {
    // The shortest way back to the component's first folder, found breadth first inside it.
    const std::string start = *component.begin();
    std::map<std::string, std::string> parent;
    std::vector<std::string> frontier = {start};
    std::string last;
    while (last.empty() && !frontier.empty()) {
      std::vector<std::string> following;
      for (const std::string& v : frontier) {
        for (const auto& [w, why] : graph.at(v)) {
          if (!component.count(w)) continue;
          if (w == start) {
            last = v;
            break;
          }
          if (parent.emplace(w, v).second) following.push_back(w);
        }
        if (!last.empty()) break;
      }
      frontier = following;
    }
    std::vector<std::string> path = {start};
    for (std::string v = last; v != start; v = parent.at(v)) path.insert(path.begin() + 1, v);
    path.push_back(start);
    std::string text, reasons;
    for (size_t i = 0; i < path.size(); ++i) {
      text += (i ? " -> " : "") + path[i];
      if (i) reasons += "\n  " + graph.at(path[i - 1]).at(path[i]);
    }
    out.push_back(text + reasons);
  }
  return out;
}

std::string joined(const std::vector<std::string>& cycles) {
  std::string s;
  for (const auto& c : cycles) s += "\ncycle: " + c;
  return s;
}

TEST(IncludeCycles, NoneBetweenFoldersOrFloors) {
  Layering tree = scan(GBCHECK_SOURCE_DIR);
  ASSERT_TRUE(tree.folders.count("compiler/runtime")) << "the scan found no includes";
  std::vector<std::string> folder_cycles = cycles(tree.folders);
  std::vector<std::string> floor_cycles = cycles(tree.floors);
  EXPECT_TRUE(folder_cycles.empty()) << "folders that include each other:" << joined(folder_cycles);
  EXPECT_TRUE(floor_cycles.empty()) << "floors that include each other:" << joined(floor_cycles);
}

// A planted tree, so the check above is known to see what it looks for.
class PlantedTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gbcheck-include-cycles-test-" + std::to_string(getpid()));
    std::error_code ignored;
    remove_tree(root_.string(), ignored);
  }
  void TearDown() override {
    std::error_code ignored;
    remove_tree(root_.string(), ignored);
  }
  void write(const std::string& file, const std::string& text) {
    fs::create_directories((root_ / file).parent_path());
    std::ofstream(root_ / file) << text;
  }
  fs::path root_;
};

TEST_F(PlantedTree, NamesAFolderCycleWithItsIncludes) {
  write("compiler/a/x.h", "#pragma once\n#include <vector>\n#include \"compiler/b/y.h\"\n");
  write("compiler/b/y.cpp", "// #include \"compiler/c/w.h\" is a comment\n#include \"compiler/a/z.h\"\n");
  write("compiler/c/w.h", "#include \"compiler/a/x.h\"\n");
  std::vector<std::string> found = cycles(scan(root_).folders);
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_EQ(found[0],
            "compiler/a -> compiler/b -> compiler/a\n"
            "  compiler/a/x.h:3 includes compiler/b/y.h\n"
            "  compiler/b/y.cpp:2 includes compiler/a/z.h");
  EXPECT_TRUE(cycles(scan(root_).floors).empty());
}

TEST_F(PlantedTree, NamesAFloorCycleThatNoFolderCycleShows) {
  write("oracles/judge.h", "#include \"harness/model/check.h\"\n");
  write("harness/runner/run.cpp", "#include \"oracles/judge.h\"\n");
  EXPECT_TRUE(cycles(scan(root_).folders).empty());
  std::vector<std::string> found = cycles(scan(root_).floors);
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_EQ(found[0],
            "harness -> oracles -> harness\n"
            "  harness/runner/run.cpp:1 includes oracles/judge.h\n"
            "  oracles/judge.h:1 includes harness/model/check.h");
}

TEST_F(PlantedTree, LayersInOneDirectionAreNoCycle) {
  write("compiler/ir/graph.h", "#pragma once\n");
  write("compiler/passes/dce.cpp", "#include \"compiler/ir/graph.h\"\n");
  write("compiler/kernel/lower.h", "#include \"compiler/passes/dce.h\"\n#include \"compiler/ir/graph.h\"\n");
  write("oracles/o.h", "#include \"compiler/ir/graph.h\"\n");
  write("harness/r.cpp", "#include \"oracles/o.h\"\n#include \"compiler/kernel/lower.h\"\n");
  Layering tree = scan(root_);
  EXPECT_EQ(tree.folders.at("compiler/kernel").size(), 2u);
  EXPECT_TRUE(cycles(tree.folders).empty()) << joined(cycles(tree.folders));
  EXPECT_TRUE(cycles(tree.floors).empty()) << joined(cycles(tree.floors));
}

}  // namespace
}  // namespace gbc
