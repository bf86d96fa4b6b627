// Reads the `check:` section of a model into a CheckConfig, validating every key and value.
// Names that only later stages know (backends, oracles) are recorded with their locations in
// CheckConfig::key_locs and validated by the harness.
#pragma once

#include <yaml-cpp/yaml.h>

#include "compiler/ir/yaml_reader.h"
#include "harness/model/model.h"

namespace gbc {

/// Fills model.check from `node` (the value of `check:`); needs the graph and tensor specs loaded,
/// to validate output names in tolerances and iterations.
void read_check_config(YamlReader& reader, const YAML::Node& key, const YAML::Node& node, Model& model);

}  // namespace gbc
