// The HTML report of a trace (`gbcheck report DIR -o OUT/`, `--html FILE` on check and explain):
// an index (the model and its picture coloured by what ran each node, the verdict per backend,
// counts of graphs, breaks, fallbacks and recompiles, compile time per pass and for kernels, the
// failing cases, fuzz and reduce progress), a page per compiled graph (its ops with source lines,
// the fused kernels with their generated source, collapsible and highlighted, the guards of every
// entry), the graph breaks and fallbacks (code, reason, hint, the model's lines, a link to the code's
// section of docs/graph-breaks.md, which the report carries as a page), the failures (worst element,
// error statistics, the tolerance that would pass, drift plots, replay and reduce commands) and the
// passes (IR before and after). Docs: docs/report.md. Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/report/site_files.h"
#include "harness/report/trace_reader.h"

namespace gbc {

/// docs_dir: where docs/graph-breaks.md is ("" to leave the docs page out).
std::vector<SitePage> trace_site(const Trace& trace, const SiteNames& names, const std::string& docs_dir);

/// The docs/ folder beside the configs/ gbcheck uses ("" when there is none).
std::string default_docs_dir();

/// docs/graph-breaks.md's anchor for a code ("GB001" -> "gb001-print"), "" when it has no section.
std::string graph_break_anchor(const std::string& docs_markdown, const std::string& code);

}  // namespace gbc
