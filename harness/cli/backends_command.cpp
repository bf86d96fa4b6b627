// `gbcheck backends [--backends-config FILE] [--json]`: every backend a command can name: the
// built-in ones, then the adapters of configs/backends.yaml, $GBCHECK_BACKENDS_CONFIG and FILE,
// each with whether it can run here and, when not, why (the adapter's probe, adapter_probe.h).
// Test: tests/adapters/python_adapters_test.cpp.
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/backends/backend.h"
#include "compiler/backends/backend_registry.h"
#include "harness/adapters/backends_config.h"
#include "harness/cli/cli.h"

namespace gbc {

std::function<int()> add_backends_command(CLI::App& sub) {
  struct Args {
    std::string backends_config;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("--backends-config", a->backends_config,
                 "a backends file whose adapters join configs/backends.yaml's (docs/adapters.md)");
  sub.add_flag("--json", a->json, "one JSON array: name, kind, available, reason, description");
  return [a] {
    register_external_backends(a->backends_config);
    nlohmann::json list = nlohmann::json::array();
    size_t width = 4;
    for (const BackendInfo& b : backend_registry()) {
      const std::string why = backend_unavailable_reason(b.name);
      list.push_back({{"name", b.name},
                      {"kind", is_external_backend(b.name) ? "adapter" : b.compiled ? "built-in" : "reference"},
                      {"available", why.empty()},
                      {"reason", why},
                      {"description", b.description}});
      width = std::max(width, b.name.size());
    }
    if (a->json) {
      std::cout << list.dump(2) << "\n";
      return 0;
    }
    for (const auto& b : list) {
      std::string name = b["name"];
      std::cout << name << std::string(width + 2 - name.size(), ' ') << b["kind"].get<std::string>()
                << std::string(11 - b["kind"].get<std::string>().size(), ' ')
                << (b["available"].get<bool>() ? "available    " : "unavailable  ") << b["description"].get<std::string>() << "\n";
      if (!b["available"].get<bool>()) std::cout << std::string(width + 13, ' ') << "why: " << b["reason"].get<std::string>() << "\n";
    }
    return 0;
  };
}

}  // namespace gbc
