#include "harness/adapters/adapter_probe.h"

#include <cctype>
#include <map>

#include "harness/adapters/adapter_frames.h"
#include "harness/adapters/adapter_python.h"
#include "harness/adapters/adapter_process.h"

namespace gbc {
namespace {

std::vector<long> version_numbers(const std::string& v) {
  std::vector<long> out;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) n = n * 10 + (v[i++] - '0');
    out.push_back(n);
    if (i < v.size() && v[i] == '.') ++i;
    else break;
  }
  return out;
}

std::string probe_once(const AdapterSpec& spec) {
  std::vector<std::string> argv = with_adapter_python(spec.command);
  argv.push_back("--probe");
  for (const auto& m : spec.requires.python_modules) argv.push_back(m);
  std::unique_ptr<AdapterProcess> p;
  try {
    p = AdapterProcess::start(argv, 0);
  } catch (const std::runtime_error& e) {
    return std::string("its adapter does not start: ") + e.what();
  }
  std::string out;
  auto deadline = AdapterProcess::Clock::now() + std::chrono::duration_cast<AdapterProcess::Clock::duration>(
                                                     std::chrono::duration<double>(spec.startup_timeout_s));
  AdapterProcess::Io io = p->read_exact(1 << 20, out, deadline);
  if (io == AdapterProcess::Io::Timeout) return "its probe did not answer within startup_timeout_s";
  std::string how = p->wait_exit(std::chrono::milliseconds(2000));
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    std::string err = p->stderr_tail();
    std::string last = err.substr(err.find_last_of('\n', err.size() > 1 ? err.size() - 2 : 0) + 1);
    while (!last.empty() && last.back() == '\n') last.pop_back();
    return "its probe (" + argv[0] + " ... --probe) " + how + " without answering" + (last.empty() ? "" : ": " + last);
  }
  return unavailable_reason(spec.requires, j);
}

}  // namespace

int compare_versions(const std::string& a, const std::string& b) {
  std::vector<long> x = version_numbers(a), y = version_numbers(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    long u = i < x.size() ? x[i] : 0, v = i < y.size() ? y[i] : 0;
    if (u != v) return u < v ? -1 : 1;
  }
  return 0;
}

std::string unavailable_reason(const AdapterRequirements& requires, const nlohmann::json& probe) {
  if (probe.value("protocol", "") != kAdapterProtocol)
    return "its adapter speaks '" + probe.value("protocol", std::string("?")) + "', not " + kAdapterProtocol;
  const nlohmann::json torch = probe.value("torch", nlohmann::json());
  if (!requires.torch.empty()) {
    if (!torch.is_string()) return "needs torch >= " + requires.torch + ", and its python has no torch";
    if (compare_versions(torch.get<std::string>(), requires.torch) < 0)
      return "needs torch >= " + requires.torch + ", found " + torch.get<std::string>() +
             "; $GBCHECK_PYTHON can name a python with a newer torch (ci/torch2_env.sh makes one with PyTorch 2.6)";
  }
  const nlohmann::json modules = probe.value("modules", nlohmann::json::object());
  for (const auto& m : requires.python_modules)
    if (!modules.is_object() || !modules.value(m, false)) return "needs the python module " + m + ", which its python lacks";
  if (requires.device == "cuda" && !probe.value("cuda", false)) return "needs a CUDA device and a CUDA build of torch";
  std::string own = probe.value("unavailable", "");
  return own;
}

std::string adapter_unavailable_reason(const AdapterSpec& spec) {
  static std::map<std::string, std::string> cache;
  const std::string key = spec.name + "\n" + spec.loc.str();
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, probe_once(spec)).first;
  return it->second;
}

}  // namespace gbc
