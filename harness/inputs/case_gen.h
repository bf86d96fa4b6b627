// The RapidCheck generator of a model's case recipes (case_recipe.h). Each case index has its own
// tree: the root is the case as first drawn, and its shrinks lead to smaller dims, contiguous
// layouts, fewer special values and values with fewer significant bits. Sampling happens outside a
// property, with an explicit rc::Random from the case seed and RapidCheck's nominal size, so a tree
// is the same on every machine. Test: tests/inputs/input_generator_test.cpp.
#pragma once

#include <rapidcheck/Gen.h>
#include <rapidcheck/Shrinkable.h>

#include "harness/inputs/case_recipe.h"
#include "harness/model/model.h"

namespace gbc {

/// The generator for case `index` (case 0 draws every dim at its maximum, case 1 at its minimum,
/// as docs/model-format.md promises; later cases draw them, with 0 and 1 favoured where allowed).
rc::Gen<CaseRecipe> case_recipe_gen(const Model& model, int index);

/// The shrink tree of case `index`, drawn from `case_seed`.
rc::Shrinkable<CaseRecipe> case_recipe_tree(const Model& model, int index, uint64_t case_seed);

}  // namespace gbc
