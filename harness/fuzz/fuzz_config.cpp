#include "harness/fuzz/fuzz_config.h"

#include <utility>

#include "compiler/ir/config_keys.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

using G = GeneratorConfig;

ConfigKey<G> dtypes_key() {
  return {"dtypes",
          [](ConfigRead& in, const YAML::Node& v, const std::string& key, G& c) {
            if (!in.reader.expect_sequence(v, key)) return;
            std::vector<DType> dtypes;
            bool ok = true;
            for (const YAML::Node& item : v) {
              std::optional<std::string> name = in.reader.read_string(item, key + " entry");
              std::optional<DType> d = name ? parse_dtype(*name) : std::nullopt;
              if (name && !d) {
                std::string all;
                for (DType x : all_dtypes()) all += (all.empty() ? "" : ", ") + std::string(dtype_name(x));
                in.reader.error(item, "unknown dtype '" + *name + "'", "dtypes: " + all);
              }
              if (d) dtypes.push_back(*d);
              else ok = false;
            }
            if (ok) c.dtypes = dtypes;
          },
          [](const G& c) { return config_flow_list<DType>(c.dtypes, [](const DType& d) { return std::string(dtype_name(d)); }); }};
}

// A partial map sets only the ops it names.
ConfigKey<G> op_weights_key() {
  return {"op_weights",
          [](ConfigRead& in, const YAML::Node& v, const std::string& key, G& c) {
            if (!in.reader.expect_map(v, key)) return;
            for (auto it = v.begin(); it != v.end(); ++it) {
              const YAML::Node op = it->first, weight = it->second;
              const std::string name = op.IsScalar() ? op.Scalar() : "";
              if (!find_op_schema(name)) {
                std::string close = closest_op_name(name);
                in.reader.error(op, key + ": unknown op '" + name + "'",
                                close.empty() ? "`gbcheck ops` lists the ops" : "did you mean '" + close + "'?");
              } else if (std::optional<double> w = in.reader.read_float(weight, key + "." + name)) {
                c.op_weights[name] = *w;
                in.locs[key + "." + name] = in.reader.loc(weight);
              }
            }
          },
          [](const G& c) {
            std::string s;
            for (const auto& [op, w] : c.op_weights) s += (s.empty() ? "" : ", ") + op + ": " + config_number_text(w);
            return "{" + s + "}";
          }};
}

ConfigKey<G> rank_weights_key() {
  return {"rank_weights",
          [](ConfigRead& in, const YAML::Node& v, const std::string& key, G& c) {
            if (!in.reader.expect_sequence(v, key)) return;
            std::vector<double> weights;
            for (const YAML::Node& item : v)
              if (std::optional<double> w = in.reader.read_float(item, key + " entry")) weights.push_back(*w);
              else return;
            c.rank_weights = weights;
          },
          [](const G& c) { return config_flow_list<double>(c.rank_weights, config_number_text); }};
}

const std::vector<ConfigKey<G>>& generator_keys() {
  using W = InputValueWeights;
  using P = PatternRates;
  static const std::vector<ConfigKey<G>> keys = {
      integer_key("min_nodes", &G::min_nodes),
      integer_key("max_nodes", &G::max_nodes),
      dtypes_key(),
      number_key("main_dtype_rate", &G::main_dtype_rate),
      op_weights_key(),
      bool_key("allow_breaks", &G::allow_breaks),
      bool_key("allow_random", &G::allow_random),
      number_key("special_values", &G::special_values),
      integer_key("max_rank", &G::max_rank),
      rank_weights_key(),
      integer_key("max_numel", &G::max_numel),
      integer_key("max_dim_size", &G::max_dim_size),
      integer_key("max_symbolic_dims", &G::max_symbolic_dims),
      number_key("symbolic_dim_rate", &G::symbolic_dim_rate),
      number_key("size_one_rate", &G::size_one_rate),
      number_key("reuse_rate", &G::reuse_rate),
      number_key("prefer_unused_rate", &G::prefer_unused_rate),
      map_key("input_values", &G::input_values,
              {number_key("normal", &W::normal), number_key("uniform", &W::uniform),
               number_key("integers", &W::integers), number_key("constant", &W::constant)}),
      map_key("patterns", &G::patterns,
              {number_key("identity", &P::identity), number_key("identity_special", &P::identity_special),
               number_key("fractional_numbers", &P::fractional_numbers),
               number_key("negative_divisor", &P::negative_divisor),
               number_key("integer_extremes", &P::integer_extremes), number_key("repeated_dims", &P::repeated_dims),
               number_key("varied_layouts", &P::varied_layouts), number_key("varied_dtypes", &P::varied_dtypes),
               number_key("recompile_sequence", &P::recompile_sequence),
               number_key("view_mutation", &P::view_mutation),
               number_key("constant_operands", &P::constant_operands)}),
      string_list_key("backends", &G::backends),
      string_key("device", &G::device),
      integer_key("cases", &G::cases),
  };
  return keys;
}

const std::vector<ConfigKey<FuzzCampaignConfig>>& campaign_keys() {
  using C = FuzzCampaignConfig;
  static const std::vector<ConfigKey<C>> keys = {string_list_key("backends", &C::backends),
                                                 integer_key("graph_cases", &C::graph_cases)};
  return keys;
}

std::vector<ConfigProblem> campaign_problems(const FuzzCampaignConfig& c) {
  std::vector<ConfigProblem> out;
  if (c.backends.empty()) out.push_back({{"backends"}, "backends names no backend"});
  if (c.graph_cases < 1)
    out.push_back({{"graph_cases"}, "graph_cases must be at least 1, got " + std::to_string(c.graph_cases)});
  return out;
}

const ConfigFormat<FuzzConfig>& fuzz_format() {
  static const ConfigFormat<FuzzConfig> format = {
      "fuzz config",
      "configs/fuzz.yaml holds every key (docs/configs.md); a --fuzz-config file may leave keys out",
      {map_key("generator", &FuzzConfig::generator, generator_keys()),
       map_key("campaign", &FuzzConfig::campaign, campaign_keys())},
      [](ConfigRead& in, const FuzzConfig& c) {
        report_config_problems(in, "generator.", generator_config_problems(c.generator));
        report_config_problems(in, "campaign.", campaign_problems(c.campaign));
      },
      "fuzz.yaml"};
  return format;
}

}  // namespace

SourceLoc FuzzConfig::loc_of(const std::string& key) const {
  auto it = locs.find(key);
  return it == locs.end() ? SourceLoc{} : it->second;
}

void read_fuzz_config(const std::string& text, const std::string& path, bool complete, FuzzConfig& config) {
  read_config(text, path, fuzz_format(), complete, config, config.locs);
}

FuzzConfig load_fuzz_config(const std::string& override_path) {
  LoadedConfig<FuzzConfig> loaded = load_config(fuzz_format(), override_path);
  loaded.config.locs = std::move(loaded.locs);
  return loaded.config;
}

GeneratorConfig default_generator_config() { return shipped_config(fuzz_format()).config.generator; }

std::string write_fuzz_config(const FuzzConfig& config) {
  std::string s = "# A whole fuzz config as gbcheck wrote it: every key (docs/configs.md).\ngenerator:\n";
  for (const auto& k : generator_keys()) s += "  " + k.name + ": " + k.write(config.generator) + "\n";
  s += "campaign:\n";
  for (const auto& k : campaign_keys()) s += "  " + k.name + ": " + k.write(config.campaign) + "\n";
  return s;
}

}  // namespace gbc
