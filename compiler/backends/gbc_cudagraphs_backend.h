// The `gbc-cudagraphs` backend: gbc on CUDA with the compiled graph's kernel launches captured once
// into a CUDA graph and replayed, the analog of torch.compile(mode="reduce-overhead"): one
// cuGraphLaunch replaces a launch per fused kernel, which is what small graphs spend their time on.
//
// Each input signature (every input's sizes, dtype and device) gets its own capture, as
// torch.compile's CUDA-graph trees record one per shape, up to BackendOptions::cache_size_limit;
// after it a call with a new signature runs as plain gbc and FB006 says so (once). The first call
// of a signature copies the inputs into static buffers (contiguous), runs gbc on them once (every
// kernel compiles and runs), then runs it again while a stream captures the launches
// (cudaStreamCaptureModeRelaxed on a stream of our own; CudaLaunchCapture in cuda_kernel_runner.h
// redirects gbc's launches to it and keeps every tensor they touch alive, so the addresses the
// graph replays on stay ours). Later calls with that signature copy the inputs in, replay on the
// legacy default stream (ATen's, so the copies before and the clones after are ordered with it)
// and return copies of the static outputs, which the next replay overwrites.
//
// Graphs of fused kernels and views only: a graph with graph breaks, extern or other ATen steps
// (their launches are ATen's, not capturable here), prints or fallbacks runs as plain gbc for that
// signature and reports FB005. Needs device cuda: on the CPU every run raises a clear error (the
// CLI refuses it first with exit code 4, like device cuda without a GPU).
// Tests: tests/backends/gbc_cuda_test.cpp (GPU).
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_gbc_cudagraphs_backend();

}  // namespace gbc
