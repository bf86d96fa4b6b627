// The `gbc-cudagraphs` backend: gbc on CUDA with the compiled graph's kernel launches captured once
// into a CUDA graph and replayed, the analog of torch.compile(mode="reduce-overhead"): one
// cuGraphLaunch replaces a launch per fused kernel, which is what small graphs spend their time on.
//
// The first call copies the inputs into static buffers (contiguous), runs gbc on them once (every
// kernel compiles and runs), then runs it again while a stream captures the launches
// (cudaStreamCaptureModeRelaxed on a stream of our own; CudaLaunchCapture in
// cuda_kernel_runner.h redirects gbc's launches to it and keeps every tensor they touch alive, so
// the addresses the graph replays on stay ours). Later calls check their own guard (each input's
// sizes, dtype and device as captured; strides and data pointers need no guard because inputs are
// copied into the static buffers), copy the inputs in, replay on the legacy default stream (ATen's,
// so the copies before and the clones after are ordered with it) and return copies of the static
// outputs, which the next replay overwrites.
//
// Static graphs only: a graph with graph breaks, ATen or extern steps (their launches are ATen's,
// not capturable here), prints or fallbacks runs as plain gbc and reports FB005; a call that fails
// the guard runs as plain gbc and reports FB006. Needs device cuda: on the CPU every run raises a
// clear error (the CLI refuses it first with exit code 4, like device cuda without a GPU).
// Tests: tests/backends/gbc_cuda_test.cpp (GPU).
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_gbc_cudagraphs_backend();

}  // namespace gbc
