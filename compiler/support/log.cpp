#include "compiler/support/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace gbc::log {
namespace {

std::atomic<Level> g_level{Level::warn};
std::array<std::atomic<bool>, static_cast<size_t>(Channel::count)> g_channels{};

spdlog::logger& logger() {
  // stderr, so that reports on stdout stay machine-readable.
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("gbcheck", sink);
    l->set_pattern("[gbcheck %^%l%$] %v");
    l->set_level(spdlog::level::trace);
    return l;
  }();
  return *instance;
}

spdlog::logger& channel_logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("gbcheck-channels", sink);
    l->set_pattern("%v");
    return l;
  }();
  return *instance;
}

// GBCHECK_LOGS is read once, before the first channel query, like TORCH_LOGS.
void read_environment_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const char* env = std::getenv("GBCHECK_LOGS")) enable_channels(env);
  });
}

}  // namespace

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }

void write(Level level, const std::string& message) {
  if (level < g_level || level == Level::off) return;
  switch (level) {
    case Level::debug: logger().debug(message); break;
    case Level::info: logger().info(message); break;
    case Level::warn: logger().warn(message); break;
    case Level::error: logger().error(message); break;
    case Level::off: break;
  }
}

const std::vector<std::string>& channel_names() {
  static const std::vector<std::string> names = {"graph_breaks", "recompiles", "fallbacks", "passes",
                                                 "kernels",      "guards",     "output_code"};
  return names;
}

std::vector<std::string> enable_channels(const std::string& csv) {
  std::vector<std::string> unknown;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string::npos) end = csv.size();
    std::string name = csv.substr(start, end - start);
    while (!name.empty() && (name.front() == ' ' || name.front() == '+')) name.erase(0, 1);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) {
      bool found = false;
      for (size_t i = 0; i < channel_names().size(); ++i) {
        if (name == "all" || name == channel_names()[i]) {
          g_channels[i] = true;
          found = true;
        }
      }
      if (!found) unknown.push_back(name);
    }
    start = end + 1;
  }
  return unknown;
}

void disable_all_channels() {
  for (auto& c : g_channels) c = false;
}

bool channel_enabled(Channel channel) {
  read_environment_once();
  return g_channels[static_cast<size_t>(channel)];
}

void write_channel(Channel channel, const std::string& message) {
  channel_logger().info("[{}] {}", channel_names()[static_cast<size_t>(channel)], message);
}

}  // namespace gbc::log
