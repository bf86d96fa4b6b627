// What a test case is made of, before any tensor exists: the dims, and per model input its memory
// layout and how its values are simplified. The recipe is what RapidCheck generates and shrinks
// (case_gen.h); the tensors follow from it and the case seed (input_generator.h). A shrunk case is
// named by its ShrinkPath: the index of the chosen shrink at each step from the case's root, so
// `--case 7 --shrink 0.2.1` rebuilds it exactly. Test: tests/inputs/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/dim.h"

namespace gbc {

/// How an input tensor lies in memory. Shrinking goes towards Contiguous.
enum class Layout : uint8_t {
  Contiguous,
  Transposed,  // the last two dims swapped in memory (a .transpose(-1, -2) view)
  Sliced,      // every second element of a longer dim, from an offset (a strided .slice view)
  Expanded,    // a size-1 dim broadcast to its size (stride 0, as .expand gives)
};
const char* layout_name(Layout layout);

struct TensorRecipe {
  Layout layout = Layout::Contiguous;
  int64_t layout_pick = 0;     // chooses the sliced or expanded dim among those that fit
  int64_t value_bits = 0;      // 0: values as drawn; k > 0: rounded to k significant bits
  // The special values kept, by the order they are drawn in: [special_first, special_first +
  // special_count); special_count -1 keeps every one.
  int64_t special_first = 0;
  int64_t special_count = -1;
};

struct CaseRecipe {
  DimBindings dims;
  std::vector<TensorRecipe> inputs;  // model.inputs order (params are fixed, not generated)
  int64_t dtype_variant = 0;         // entry k of the inputs' `dtypes:` lists (TensorSpec::dtype_in)
};

/// A path from a case's root to one of its shrinks: child indices, "" for the root.
struct ShrinkPath {
  std::vector<int> steps;

  bool empty() const { return steps.empty(); }
  /// "0.2.1"; "" for the root.
  std::string str() const;
  /// From "0.2.1" (non-negative indices separated by dots); nullopt when malformed.
  static std::optional<ShrinkPath> parse(const std::string& text);
};

}  // namespace gbc
