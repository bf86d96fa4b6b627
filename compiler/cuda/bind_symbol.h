// Binding a function pointer to a symbol of a dlopen'ed library (libcuda, libnvrtc): the loaders in
// cuda_driver.cpp and nvrtc_compiler.cpp share it.
#pragma once

#include <dlfcn.h>

namespace gbc {

/// Points SLOT at SYMBOL in LIBRARY; false (and SLOT null) when the library lacks it.
template <typename F>
bool bind_symbol(void* library, F*& slot, const char* symbol) {
  slot = reinterpret_cast<F*>(dlsym(library, symbol));
  return slot != nullptr;
}

}  // namespace gbc
