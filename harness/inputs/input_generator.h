// Draws the inputs of each test case from the model's tensor specs. A case is a recipe from
// RapidCheck's generator (case_gen.h: dims, layouts, special values, value simplification) plus
// values from gbcheck's own RNG (rng.h), seeded from (check.seed, case index, tensor index): the
// same (seed, case, shrink path) gives the same tensors on every machine and LibTorch version, and
// no ATen RNG is involved. Params are drawn from check.seed alone: the same values in every case,
// always contiguous and without special values. Shrinking a failing case walks its RapidCheck
// shrink tree (shrink_case). Test: tests/inputs/input_generator_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <vector>

#include "harness/inputs/case_recipe.h"
#include "harness/inputs/user_inputs.h"
#include "harness/model/model.h"

namespace gbc {

struct TestCase {
  int index = 0;
  uint64_t seed = 0;  // the case's own seed (derived from check.seed and index)
  ShrinkPath shrink;  // where in the case's shrink tree this is ("" : as first drawn)
  DimBindings dims;
  std::vector<at::Tensor> tensors;  // graph.inputs order: inputs, then params; views as generated
  std::vector<at::Tensor> bases;    // the contiguous tensor each view is of (the tensor itself if contiguous)
  /// Per input (not params): "x: float32[1, 64] transposed, 1 special value (nan)".
  std::vector<std::string> descriptions;
  int64_t special_values = 0;  // special values placed over all inputs

  /// Independent copies of the inputs with the same sizes, strides and offsets, for one run
  /// (runs mutate inputs in place; a plain clone() would make strided inputs contiguous).
  std::vector<at::Tensor> fresh_inputs() const;
  /// Appends a tensor given from outside (the user's, the reducer's), keeping a view's layout in
  /// fresh_inputs' copies.
  void add_given(const at::Tensor& t);
};

class InputGenerator {
 public:
  InputGenerator(const Model& model, c10::Device device);

  /// Case `index` as first drawn (the root of its shrink tree).
  TestCase make_case(int index) const;
  /// The case at `path` in case `index`'s shrink tree. Throws ModelError (a usage error located
  /// at the command line) when the path does not exist in this model's tree.
  TestCase make_case(int index, const ShrinkPath& path) const;

  /// Case `index` of the user's own input values (--inputs), with the params every case has. It
  /// has no shrink tree: a given case is as the user gave it.
  TestCase given_case(int index, const GivenCase& given) const;

  /// Case `index` of a run as check, reduce, repro and bisect number them: its `generated` drawn
  /// cases first (at `path` in the shrink tree, when given), then the user's `given` ones (--inputs)
  /// as cases `generated` and up. Throws ModelError (located at the command line) past both.
  TestCase run_case(int index, int generated, const std::vector<GivenCase>& given, const ShrinkPath& path = {}) const;

  struct Shrunk {
    TestCase smallest;  // the last case that still failed (`start` itself if no shrink did)
    int tried = 0;      // candidates run
    int accepted = 0;   // shrink steps taken
    bool budget_exhausted = false;
  };
  /// Greedy shrinking as RapidCheck does it: from the case at `start`, take the first shrink for
  /// which `fails` holds, and repeat from there until none does or `max_tries` candidates ran.
  Shrunk shrink_case(int index, const ShrinkPath& start, const std::function<bool(const TestCase&)>& fails,
                     int max_tries) const;

 private:
  TestCase materialize(int index, uint64_t seed, const ShrinkPath& path, const CaseRecipe& recipe) const;
  at::Tensor param_tensor(size_t index, const std::vector<int64_t>& sizes) const;  // graph.inputs index

  const Model& model_;
  c10::Device device_;
};

uint64_t case_seed(uint64_t check_seed, int index);
/// A contiguous tensor of `dtype` and `sizes` with values from `dist`, deterministic in `seed`.
/// A param's values from its weights file (a fresh copy on `device`).
at::Tensor weights_tensor(const WeightValues& weights, DType dtype, const std::vector<int64_t>& sizes, c10::Device device);
at::Tensor draw_tensor(const ValueDist& dist, DType dtype, const std::vector<int64_t>& sizes, uint64_t seed,
                       c10::Device device);

}  // namespace gbc
