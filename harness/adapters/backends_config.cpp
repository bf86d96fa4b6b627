#include "harness/adapters/backends_config.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "compiler/backends/backend.h"
#include "compiler/backends/backend_registry.h"
#include "compiler/ir/config_keys.h"
#include "compiler/support/config_dir.h"
#include "harness/adapters/adapter_backend.h"
#include "harness/adapters/adapter_probe.h"

namespace gbc {
namespace {

// One entry of `backends:` as written; command and args are joined once it is read.
struct BackendEntry {
  std::string description;
  std::string command;
  std::vector<std::string> args;
  double timeout_s = 120;
  double startup_timeout_s = 120;
  int64_t memory_mb = 16384;
  AdapterRequirements requires;
};

std::vector<ConfigProblem> entry_problems(const std::string& name, const BackendEntry& e) {
  std::vector<ConfigProblem> out;
  const std::string b = "backend " + name + ": ";
  if (e.command.empty()) out.push_back({{"command"}, b + "command is empty: name the program that runs the adapter"});
  if (e.timeout_s <= 0) out.push_back({{"timeout_s"}, b + "timeout_s must be positive"});
  if (e.startup_timeout_s <= 0) out.push_back({{"startup_timeout_s"}, b + "startup_timeout_s must be positive"});
  if (e.memory_mb < 0) out.push_back({{"memory_mb"}, b + "memory_mb must be 0 (no limit) or positive"});
  if (!e.requires.device.empty() && e.requires.device != "cpu" && e.requires.device != "cuda")
    out.push_back({{"requires.device"}, b + "requires.device must be cpu or cuda, got '" + e.requires.device + "'"});
  return out;
}

const std::vector<ConfigKey<BackendEntry>>& entry_keys() {
  using E = BackendEntry;
  using R = AdapterRequirements;
  static const std::vector<ConfigKey<E>> keys = {
      string_key("description", &E::description),
      string_key("command", &E::command),
      string_list_key("args", &E::args),
      number_key("timeout_s", &E::timeout_s),
      number_key("startup_timeout_s", &E::startup_timeout_s),
      integer_key("memory_mb", &E::memory_mb),
      map_key("requires", &E::requires,
              {string_key("torch", &R::torch), string_list_key("python_modules", &R::python_modules), string_key("device", &R::device)}),
  };
  return keys;
}

// {here} is resolved now; {python} when the adapter starts (with_adapter_python), since finding
// it may start a python, a cost that only a run using an adapter should pay.
std::string substitute(std::string s, const std::string& here) {
  const std::string key = "{here}";
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + here.size())) s.replace(at, key.size(), here);
  return s;
}

// `backends:` maps each name to an entry; names are not keys known in advance, so the map is
// read here rather than as a table of keys.
void read_backends(ConfigRead& in, const YAML::Node& backends, const std::string& key, std::vector<AdapterSpec>& specs) {
  YamlReader& r = in.reader;
  if (!r.expect_map(backends, key)) return;
  const std::string here =
      std::filesystem::absolute(std::filesystem::path(r.file())).parent_path().lexically_normal().string();
  for (const auto& item : backends) {
    std::optional<std::string> name = r.read_string(item.first, "backend name");
    if (!name) continue;
    if (find_backend(*name) && !is_external_backend(*name)) {
      r.error(item.first, "'" + *name + "' is a built-in backend; an adapter needs a name of its own");
      continue;
    }
    BackendEntry e;
    ConfigLocs locs;
    ConfigRead entry{r, "backend " + *name, false, "", locs};
    const size_t errors = r.diags().error_count();
    read_config_keys(entry, item.second, "", entry_keys(), e);
    if (r.diags().error_count() != errors) continue;
    if (!item.second["command"]) {
      r.error(item.first, "backend " + *name + " has no command", "command: the program that runs the adapter");
      continue;
    }
    report_config_problems(entry, "", entry_problems(*name, e));
    AdapterSpec s;
    s.name = *name;
    s.description = e.description;
    s.command.push_back(substitute(e.command, here));
    for (const auto& a : e.args) s.command.push_back(substitute(a, here));
    s.timeout_s = e.timeout_s;
    s.startup_timeout_s = e.startup_timeout_s;
    s.memory_mb = e.memory_mb;
    s.requires = e.requires;
    s.loc = r.loc(item.first);
    specs.push_back(s);
  }
}

const ConfigFormat<std::vector<AdapterSpec>>& backends_format() {
  static const ConfigFormat<std::vector<AdapterSpec>> format = {
      "backends config", "", {{"backends", read_backends, [](const std::vector<AdapterSpec>&) { return std::string(); }}}};
  return format;
}

}  // namespace

std::vector<AdapterSpec> read_backends_config(const std::string& text, const std::string& path) {
  std::vector<AdapterSpec> specs;
  read_config(text, path, backends_format(), false, specs);
  return specs;
}

std::vector<AdapterSpec> load_backends_config(const std::string& extra_file) {
  std::vector<std::string> files = {config_file("backends.yaml")};
  if (const char* env = std::getenv("GBCHECK_BACKENDS_CONFIG")) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) files.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  if (!extra_file.empty()) files.push_back(extra_file);
  std::vector<AdapterSpec> all;
  for (const std::string& f : files) {
    for (AdapterSpec& s : read_backends_config(read_config_file(f), f)) {
      bool replaced = false;
      for (AdapterSpec& old : all)
        if (old.name == s.name) old = s, replaced = true;
      if (!replaced) all.push_back(s);
    }
  }
  return all;
}

namespace {

std::map<std::string, AdapterSpec>& registered_specs() {
  static std::map<std::string, AdapterSpec> specs;
  return specs;
}

}  // namespace

const AdapterSpec* registered_adapter(const std::string& name) {
  auto it = registered_specs().find(name);
  return it == registered_specs().end() ? nullptr : &it->second;
}

void register_external_backends(const std::string& extra_file) {
  static std::set<std::string> loaded;
  if (!loaded.insert(extra_file).second) return;
  for (const AdapterSpec& spec : load_backends_config(extra_file)) {
    registered_specs()[spec.name] = spec;
    BackendInfo info;
    info.name = spec.name;
    info.description = spec.description;
    info.create = [spec] { return make_adapter_backend(spec); };
    info.compiled = true;
    register_backend(info, [spec] { return adapter_unavailable_reason(spec); });
  }
}

}  // namespace gbc
