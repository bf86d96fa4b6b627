// Logging for every gbcheck library, behind a header that includes neither spdlog nor fmt.
// Why: torch 2.x ships fmt 12 headers in its include dir while Debian's spdlog needs fmt 9, so
// spdlog lives only in log.cpp (target gbc_support, which never links torch).
//
// Two kinds of output: leveled messages (GBC_LOG(info) << ...), and channels that mirror
// TORCH_LOGS: `--log graph_breaks,recompiles,fallbacks,passes,kernels` or GBCHECK_LOGS.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace gbc::log {

enum class Level { debug, info, warn, error, off };

// kernels: kernel IR, partitions, compile and cache status; output_code: the generated C++/CUDA
// source alone (long: TORCH_LOGS splits it off the same way).
enum class Channel { graph_breaks, recompiles, fallbacks, passes, kernels, guards, output_code, count };

void set_level(Level level);
Level level();
void write(Level level, const std::string& message);

/// Names of all channels, in the order of the enum (for --help and validation).
const std::vector<std::string>& channel_names();
/// Enables channels from a comma-separated list ("all" enables every one). Returns the unknown
/// names, empty when all were known.
std::vector<std::string> enable_channels(const std::string& csv);
void disable_all_channels();
bool channel_enabled(Channel channel);
void write_channel(Channel channel, const std::string& message);

/// Collects a message with operator<< and writes it when destroyed.
class Line {
 public:
  explicit Line(Level level) : level_(level) {}
  Line(const Line&) = delete;
  ~Line() { write(level_, stream_.str()); }
  template <typename T>
  Line& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  Level level_;
  std::ostringstream stream_;
};

class ChannelLine {
 public:
  explicit ChannelLine(Channel channel) : channel_(channel) {}
  ChannelLine(const ChannelLine&) = delete;
  ~ChannelLine() { write_channel(channel_, stream_.str()); }
  template <typename T>
  ChannelLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  Channel channel_;
  std::ostringstream stream_;
};

}  // namespace gbc::log

#define GBC_LOG(lvl)                                                \
  if (::gbc::log::Level::lvl < ::gbc::log::level()) {               \
  } else                                                            \
    ::gbc::log::Line(::gbc::log::Level::lvl)

#define GBC_LOG_CHANNEL(ch)                                             \
  if (!::gbc::log::channel_enabled(::gbc::log::Channel::ch)) {          \
  } else                                                                \
    ::gbc::log::ChannelLine(::gbc::log::Channel::ch)
