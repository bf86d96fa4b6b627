// Random model generation for fuzzing graph compilers (the NNSmith idea): pick an op, then pick
// or make inputs whose dtypes and shapes it accepts, so every graph is valid by construction.
// Value ranges are tracked so that graphs rarely drown in NaN (log gets positive inputs, exp
// small ones), while check.special_values and NaN/Inf numbers still inject special values at a
// set rate. A model is a plain Model: write_model_yaml writes it, load_model_text reads it back
// into the same graph. The same seed and config always give the same model.
// Tested in tests/fuzz/graph_generator_test.cpp; `gbcheck-gen` (tools/gen_main.cpp) writes them.
#pragma once

#include <cstdint>

#include "harness/fuzz/generator_config.h"
#include "harness/model/model.h"

namespace gbc {

/// A random valid model. Throws std::invalid_argument for an invalid config (start from
/// default_generator_config(), fuzz_config.h).
Model generate_model(uint64_t seed, const GeneratorConfig& config);

}  // namespace gbc
