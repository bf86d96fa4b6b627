#include "harness/report/drift_plot.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "compiler/support/markup_escape.h"

namespace gbc {
namespace {

constexpr double kWidth = 720, kHeight = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
// Errors below this fraction of the tolerance are drawn at the floor (a log axis has no zero).
constexpr double kFloor = 1e-6;

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

const char* color(size_t i) {
  static const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                  "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#d62728"};
  return palette[i % (sizeof palette / sizeof palette[0])];
}

std::string file_part(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

}  // namespace

std::string drift_plot_svg(const std::string& title, const std::vector<DriftSeries>& series) {
  size_t steps = 1;
  double hi = 1.0;
  for (const auto& s : series) {
    steps = std::max(steps, s.steps.size());
    for (const auto& d : s.steps)
      if (std::isfinite(d.ratio)) hi = std::max(hi, d.ratio);
  }
  const double lo_exp = std::log10(kFloor), hi_exp = std::ceil(std::log10(hi * 1.5));
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto x_of = [&](size_t step) { return kLeft + pw * (steps > 1 ? static_cast<double>(step) / (steps - 1) : 0.5); };
  auto y_of = [&](double r) {
    const double e = std::log10(std::isfinite(r) ? std::max(r, kFloor) : std::pow(10.0, hi_exp));
    return kTop + ph * (1.0 - (e - lo_exp) / (hi_exp - lo_exp));
  };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"14\">" << markup_escape(title, Markup::Html) << "</text>\n";
  for (double e = lo_exp; e <= hi_exp; e += 1) {
    const double y = y_of(std::pow(10.0, e));
    o << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << fmt(y) << "\" y2=\"" << fmt(y)
      << "\" stroke=\"#eee\"/>\n";
    o << "<text x=\"" << kLeft - 6 << "\" y=\"" << fmt(y + 4) << "\" text-anchor=\"end\">1e" << static_cast<int>(e)
      << "</text>\n";
  }
  const double ty = y_of(1.0);
  o << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << fmt(ty) << "\" y2=\"" << fmt(ty)
    << "\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/>\n";
  o << "<text x=\"" << kWidth - kRight << "\" y=\"" << fmt(ty - 4) << "\" text-anchor=\"end\" fill=\"#d62728\">tolerance</text>\n";
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  o << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << kHeight - 12 << "\" text-anchor=\"middle\">step (0 to " << steps - 1
    << ")</text>\n";
  o << "<text transform=\"translate(16," << kTop + ph / 2
    << ") rotate(-90)\" text-anchor=\"middle\">error / tolerance</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (s.steps.empty()) continue;
    o << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << (s.pass ? color(i) : "#d62728") << "\" points=\"";
    for (size_t k = 0; k < s.steps.size(); ++k) o << (k ? " " : "") << fmt(x_of(k)) << "," << fmt(y_of(s.steps[k].ratio));
    o << "\"><title>case " << s.case_index << (s.pass ? "" : " (failed)") << "</title></polyline>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::vector<std::string> write_drift_plots(const CheckReport& report, const std::string& dir) {
  std::vector<std::string> written;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
  for (const auto& b : report.backends) {
    if (b.drift.empty()) continue;
    const std::string path =
        (std::filesystem::path(dir) / (file_part(report.model_name) + "-" + file_part(b.backend) + "-drift.svg")).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
    f << drift_plot_svg(report.model_name + " on " + b.backend + ": error per step, " +
                            std::to_string(b.drift.size()) + " case(s)",
                        b.drift);
    if (!f) throw std::runtime_error("cannot write " + path);
    written.push_back(path);
  }
  return written;
}

}  // namespace gbc
