#include "harness/cli/option_checks.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <string>

namespace gbc {

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  const std::string range = hi == std::numeric_limits<int64_t>::max()
                                ? "a whole number >= " + std::to_string(lo)
                                : "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == s.data() + s.size() && (v < lo || v > hi)))
          return "'" + s + "' is out of range: expected " + range;
        if (ec != std::errc() || end != s.data() + s.size()) return "'" + s + "' is not " + range;
        return "";
      },
      range.substr(2), "WHOLE_NUMBER");
}

CLI::Validator number_at_least(double lo) {
  const std::string what = "a number >= " + CLI::detail::to_string(lo);
  return CLI::Validator(
      [lo, what](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v)) return "'" + s + "' is not " + what;
        return v < lo ? "'" + s + "' is out of range: expected " + what : "";
      },
      what.substr(2), "NUMBER");
}

CLI::Validator writable_file() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        namespace fs = std::filesystem;
        const fs::path p(s);
        const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
        std::error_code ec;
        if (fs::is_directory(p, ec)) return "cannot write " + s + ": it is a directory";
        if (!fs::is_directory(dir, ec)) return "cannot write " + s + ": no folder " + dir.string();
        // Written as PATH.tmp, then renamed over PATH (harness/report/json_report.h).
        if (::access(dir.c_str(), W_OK) != 0) return "cannot write " + s + ": folder " + dir.string() + " is not writable";
        return "";
      },
      "FILE", "WRITABLE_FILE");
}

CLI::Validator writable_folder() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::path p = fs::absolute(fs::path(s), ec).lexically_normal();
        while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
        if (!fs::is_directory(p, ec)) return "cannot write into " + s + ": " + p.string() + " is not a folder";
        if (::access(p.c_str(), W_OK) != 0) return "cannot write into " + s + ": " + p.string() + " is not writable";
        return "";
      },
      "DIR", "WRITABLE_FOLDER");
}

}  // namespace gbc
