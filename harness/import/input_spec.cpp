#include "harness/import/input_spec.h"

#include <cctype>

#include "compiler/ir/diagnostics.h"
#include "compiler/ir/yaml_reader.h"

namespace gbc {
namespace {

const SourceLoc kCommandLine{"command line", 0, 0};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::optional<int64_t> parse_int(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::stoll(s);
}

void parse_dim(const std::string& text, DimSpace& dims, Diagnostics& d) {
  const std::string hint = "write --dim NAME=MIN:MAX, e.g. --dim B=1:8";
  size_t eq = text.find('='), colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos) {
    d.error(kCommandLine, "--dim '" + text + "': expected NAME=MIN:MAX", hint);
    return;
  }
  std::string name = trim(text.substr(0, eq));
  auto lo = parse_int(trim(text.substr(eq + 1, colon - eq - 1))), hi = parse_int(trim(text.substr(colon + 1)));
  if (!YamlReader::is_identifier(name)) {
    d.error(kCommandLine, "--dim '" + text + "': '" + name + "' is not a name", hint);
  } else if (!lo || !hi || *lo < 1 || *hi < *lo) {
    d.error(kCommandLine, "--dim '" + text + "': the range must be two sizes with 1 <= MIN <= MAX", hint);
  } else if (dims.has(name)) {
    d.error(kCommandLine, "--dim '" + text + "': dim " + name + " is declared twice");
  } else {
    dims.declare(name, {*lo, *hi});
  }
}

void parse_input(const std::string& text, ImportSpecs& specs, Diagnostics& d) {
  const std::string hint = "write --input [NAME=]DTYPE[SHAPE], e.g. --input x=float32[1,3,224,224]";
  InputSpec spec;
  spec.text = text;
  std::string rest = text;
  if (size_t eq = rest.find('='); eq != std::string::npos) {
    spec.name = trim(rest.substr(0, eq));
    rest = rest.substr(eq + 1);
    if (!YamlReader::is_identifier(spec.name)) {
      d.error(kCommandLine, "--input '" + text + "': '" + spec.name + "' is not a name", hint);
      return;
    }
  }
  size_t open = rest.find('['), close = rest.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close < open || trim(rest.substr(close + 1)) != "") {
    d.error(kCommandLine, "--input '" + text + "': expected DTYPE[SHAPE]", hint);
    return;
  }
  std::string dtype = trim(rest.substr(0, open));
  auto dt = parse_dtype(dtype);
  if (!dt) {
    d.error(kCommandLine, "--input '" + text + "': unknown dtype '" + dtype + "'",
            "one of float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool");
    return;
  }
  spec.dtype = *dt;
  std::string inside = rest.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (!trim(inside).empty() && start <= inside.size()) {
    size_t comma = inside.find(',', start);
    std::string item = trim(inside.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (auto n = parse_int(item)) {
      spec.shape.push_back(*n);
    } else if (YamlReader::is_identifier(item)) {
      if (!specs.dims.has(item)) {
        d.error(kCommandLine, "--input '" + text + "': dim '" + item + "' is not declared",
                "declare it with --dim " + item + "=MIN:MAX");
        return;
      }
      spec.shape.push_back(DimExpr::symbol(item));
    } else {
      d.error(kCommandLine, "--input '" + text + "': '" + item + "' is neither a size nor a dim name", hint);
      return;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  specs.inputs.push_back(spec);
}

}  // namespace

ImportSpecs parse_import_specs(const std::vector<std::string>& inputs, const std::vector<std::string>& dims) {
  ImportSpecs specs;
  Diagnostics d;
  for (const auto& text : dims) parse_dim(text, specs.dims, d);
  for (const auto& text : inputs) parse_input(text, specs, d);
  if (d.has_errors()) throw ModelError(d);
  return specs;
}

}  // namespace gbc
