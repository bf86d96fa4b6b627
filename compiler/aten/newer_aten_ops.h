// ATen operators that PyTorch 2.x added and models saved by it call, for a gbcheck built on an
// older LibTorch (Debian's 1.13): without them such a TorchScript file does not even load ("Unknown
// builtin op: aten::scaled_dot_product_attention" for any nn.MultiheadAttention traced by 2.x).
// Each one this LibTorch lacks is registered with the 2.x schema and a kernel composed of older
// ATen ops, which follows PyTorch's own composite definition: scaled_dot_product_attention (its
// math path: scaled query and key, boolean masks as -inf, a fully masked row gives zeros),
// rms_norm, squeeze.dims, all.dims and any.dims. Being composite, they run on meta tensors too, so
// the generic op's shape inference works on them. On a LibTorch that has them, nothing is
// registered. Tests: tests/aten/newer_aten_ops_test.cpp, tests/import/torch2_saved_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

/// Registers the missing ones (once per process; later calls return at once). Called before a
/// TorchScript file is loaded and before a generic op's schema is looked up.
void register_newer_aten_ops();

/// The operators ("aten::rms_norm") that register_newer_aten_ops added in this process.
const std::vector<std::string>& newer_aten_ops_registered();

}  // namespace gbc
