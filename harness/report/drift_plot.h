// SVG plots of the drift oracle's per-step errors (`--plots DIR`): one file per backend, the error
// of each case in units of the tolerance against the step, on a log scale, with the tolerance
// (1.0) drawn across. Plain SVG 1.1 text, viewable in any browser. Test: tests/runner/check_runner_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/runner/check_report.h"

namespace gbc {

/// The SVG document for one backend's drift series.
std::string drift_plot_svg(const std::string& title, const std::vector<DriftSeries>& series);

/// Writes DIR/<model>-<backend>-drift.svg for every backend with drift series; creates DIR.
/// Returns the paths written. Throws std::runtime_error when a file cannot be written.
std::vector<std::string> write_drift_plots(const CheckReport& report, const std::string& dir);

}  // namespace gbc
