// The one reader of the files under configs/ (and of the override files --fuzz-config,
// --reduce-config, --tolerances-config, --backends-config name): parsing with file:line:col
// errors, tables of keys (each key of a map says how its value is read into a struct, with type
// and range errors at the value, and how it is written back), unknown and missing keys, and the
// shipped file with an override on top. A defaults file must hold every key; an override sets
// only the keys it names. Validation that needs the whole struct reports its problems at the key
// they concern. Used by the loaders of fuzz.yaml, reduce.yaml, pipeline.yaml, tolerances.yaml and
// backends.yaml; tested through tests/fuzz/fuzz_config_test.cpp, tests/reduce/reduce_config_test.cpp
// and tests/harness/config_files_test.cpp (every diagnostic of corpus/config-errors/).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/config_problem.h"
#include "compiler/ir/yaml_reader.h"
#include "compiler/support/config_dir.h"

namespace gbc {

/// Where each key was last set, by its full name ("generator.max_rank", "values.max_parts").
using ConfigLocs = std::map<std::string, SourceLoc>;

/// What a read collects besides the values: locations, and the keys this file set.
struct ConfigRead {
  YamlReader& reader;
  std::string kind;   // "fuzz config": names the top-level map in messages
  bool complete;      // every key must be present (a defaults file)
  std::string hint;   // for a missing key: which file must hold it
  ConfigLocs& locs;
  std::set<std::string> here = {};
};

template <typename C>
struct ConfigKey {
  std::string name;
  /// Reads `value` into c; `key` is the full name for messages.
  std::function<void(ConfigRead& in, const YAML::Node& value, const std::string& key, C& c)> read;
  /// The value as YAML text that `read` reads back exactly.
  std::function<std::string(const C& c)> write;
};

/// Shortest text that reads back as the same double.
std::string config_number_text(double v);
/// A double-quoted YAML string.
std::string config_quoted(const std::string& s);

template <typename T>
std::string config_flow_list(const std::vector<T>& items, const std::function<std::string(const T&)>& text) {
  std::string s;
  for (const T& item : items) s += (s.empty() ? "" : ", ") + text(item);
  return "[" + s + "]";
}

/// Reads the keys of the map `node` (full names prefixed with `prefix`, e.g. "generator.") into c:
/// unknown keys are errors, and with in.complete so are missing ones.
template <typename C>
void read_config_keys(ConfigRead& in, const YAML::Node& node, const std::string& prefix,
                      const std::vector<ConfigKey<C>>& keys, C& c) {
  const std::string what = prefix.empty() ? in.kind : prefix.substr(0, prefix.size() - 1);
  if (!in.reader.expect_map(node, what)) return;
  std::vector<std::string> names;
  for (const auto& k : keys) names.push_back(k.name);
  in.reader.check_keys(node, names, what);
  for (const auto& k : keys) {
    const std::string full = prefix + k.name;
    const YAML::Node value = node[k.name];
    if (!value) {
      if (in.complete) in.reader.error(node, what + " has no key '" + k.name + "'", in.hint);
      continue;
    }
    in.locs[full] = in.reader.loc(value);
    in.here.insert(full);
    k.read(in, value, full, c);
  }
}

/// The keys of a map written as one flow map: {a: 1, b: 2}.
template <typename C>
std::string write_config_keys(const std::vector<ConfigKey<C>>& keys, const C& c) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k.name + ": " + k.write(c);
  return "{" + s + "}";
}

template <typename C, typename T>
ConfigKey<C> integer_key(const char* name, T C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            std::optional<int64_t> x = in.reader.read_int(v, key);
            if (!x) return;
            if constexpr (sizeof(T) < sizeof(int64_t)) {
              if (*x < std::numeric_limits<T>::min() || *x > std::numeric_limits<T>::max()) {
                in.reader.error(v, key + " is out of range, got " + std::to_string(*x));
                return;
              }
            }
            c.*field = static_cast<T>(*x);
          },
          [field](const C& c) { return std::to_string(c.*field); }};
}

template <typename C>
ConfigKey<C> number_key(const char* name, double C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            if (std::optional<double> x = in.reader.read_float(v, key)) c.*field = *x;
          },
          [field](const C& c) { return config_number_text(c.*field); }};
}

template <typename C>
ConfigKey<C> bool_key(const char* name, bool C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            if (std::optional<bool> x = in.reader.read_bool(v, key)) c.*field = *x;
          },
          [field](const C& c) { return std::string(c.*field ? "true" : "false"); }};
}

template <typename C>
ConfigKey<C> string_key(const char* name, std::string C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            if (std::optional<std::string> x = in.reader.read_string(v, key)) c.*field = *x;
          },
          [field](const C& c) { return config_quoted(c.*field); }};
}

template <typename C>
ConfigKey<C> string_list_key(const char* name, std::vector<std::string> C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            if (auto x = in.reader.read_string_list(v, key)) c.*field = *x;
          },
          [field](const C& c) { return config_flow_list<std::string>(c.*field, config_quoted); }};
}

/// A list of names; each entry's location is kept as `key.N` (N from 0), so that a problem with
/// one entry points at it.
template <typename C>
ConfigKey<C> name_list_key(const char* name, std::vector<std::string> C::*field) {
  return {name,
          [field](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            if (!in.reader.expect_sequence(v, key)) return;
            std::vector<std::string> names;
            for (const YAML::Node& item : v) {
              std::optional<std::string> s = in.reader.read_string(item, key + " entry");
              if (!s) return;
              in.locs[key + "." + std::to_string(names.size())] = in.reader.loc(item);
              names.push_back(*s);
            }
            c.*field = names;
          },
          [field](const C& c) { return config_flow_list<std::string>(c.*field, config_quoted); }};
}

/// A nested map of keys (a partial one sets only the keys it names).
template <typename C, typename M>
ConfigKey<C> map_key(const char* name, M C::*field, std::vector<ConfigKey<M>> keys) {
  return {name,
          [field, keys](ConfigRead& in, const YAML::Node& v, const std::string& key, C& c) {
            read_config_keys(in, v, key + ".", keys, c.*field);
          },
          [field, keys](const C& c) { return write_config_keys(keys, c.*field); }};
}

/// A kind of config file: its keys, and the validation of the whole struct they fill.
template <typename C>
struct ConfigFormat {
  std::string kind;  // "fuzz config"
  std::string hint;  // for a key missing from the defaults file
  std::vector<ConfigKey<C>> keys;
  /// Reports the problems of the struct as read (report_config_problems); runs only when the
  /// values themselves read without errors. Empty: nothing to check beyond the keys.
  std::function<void(ConfigRead& in, const C& c)> validate = {};
  /// The shipped file under configs/ ("fuzz.yaml"); empty for a format without one.
  std::string shipped_file = {};
};

/// Parses `text` (the file at `path`) and hands its top-level node to `read` (an empty file reads
/// as an empty map). Throws ConfigError with every diagnostic, in file order.
void read_config_text(const std::string& text, const std::string& path,
                      const std::function<void(YamlReader& reader, const YAML::Node& root)>& read);

/// Sets the keys `text` names in c (every key with `complete`), then validates. Throws ConfigError
/// with every diagnostic, in file order.
template <typename C>
void read_config(const std::string& text, const std::string& path, const ConfigFormat<C>& format, bool complete, C& c,
                 ConfigLocs& locs) {
  read_config_text(text, path, [&](YamlReader& r, const YAML::Node& root) {
    ConfigRead in{r, format.kind, complete, format.hint, locs};
    read_config_keys(in, root, "", format.keys, c);
    if (!r.diags().has_errors() && format.validate) format.validate(in, c);
  });
}

/// read_config, for a caller that has no use for the keys' locations.
template <typename C>
void read_config(const std::string& text, const std::string& path, const ConfigFormat<C>& format, bool complete, C& c) {
  ConfigLocs locs;
  read_config(text, path, format, complete, c, locs);
}

/// read_config on the file at `path`; ConfigError when it cannot be read.
template <typename C>
void load_config_file(const std::string& path, const ConfigFormat<C>& format, bool complete, C& c, ConfigLocs& locs) {
  read_config(read_config_file(path), path, format, complete, c, locs);
}

/// A config as read, with where each of its keys was set.
template <typename C>
struct LoadedConfig {
  C config{};
  ConfigLocs locs;
};

/// configs/<format.shipped_file>, read whole (every key must be there) once per process. Throws
/// ConfigNotFound when it is missing, ConfigError when it is invalid.
template <typename C>
const LoadedConfig<C>& shipped_config(const ConfigFormat<C>& format) {
  static const LoadedConfig<C> shipped = [&format] {
    LoadedConfig<C> l;
    load_config_file(config_file(format.shipped_file), format, true, l.config, l.locs);
    return l;
  }();
  return shipped;
}

/// The shipped config with the keys of the file at `override_path` on top (none when it is empty).
template <typename C>
LoadedConfig<C> load_config(const ConfigFormat<C>& format, const std::string& override_path) {
  LoadedConfig<C> l = shipped_config(format);
  if (!override_path.empty()) load_config_file(override_path, format, false, l.config, l.locs);
  return l;
}

/// Reports each problem (message prefixed with `prefix`) at the first of its keys this read set;
/// "op_weights.add" falls back to where the op_weights map was set.
void report_config_problems(ConfigRead& in, const std::string& prefix, const std::vector<ConfigProblem>& problems);

}  // namespace gbc
