// Whether a CPU kernel call writes its contiguous outputs with streaming (non-temporal) stores,
// GbcKernelArgs::stream_stores (the generated code: gbc_stream_store in kernel_support.h): when
// the memory the call touches exceeds the last-level cache, its outputs leave the cache before
// anything reads them again, so reading each output line in before writing it (what a plain store
// does) is wasted traffic. GBCHECK_STREAM_STORES=always or never overrides the choice (tests, A/B
// measurements). Tests: tests/runtime/kernel_call_test.cpp, tests/codegen/cpu_codegen_test.cpp.
#pragma once

#include <cstdint>

namespace gbc {

/// The largest data cache of this machine in bytes (sysfs, then sysconf; 32 MiB if neither says).
int64_t last_level_cache_bytes();

/// Whether a call touching `footprint_bytes` of memory (inputs and outputs) streams its outputs.
bool stream_stores_pay(int64_t footprint_bytes);

/// The bytes a tensor's elements span in memory: broadcast (stride 0) dims count once.
int64_t memory_span_bytes(const int64_t* sizes, const int64_t* strides, int64_t rank, int64_t element_size);

}  // namespace gbc
