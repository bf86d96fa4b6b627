#!/usr/bin/env python3
"""The bug in plain PyTorch 1.13, without gbcheck: NNC (the TensorExpr fuser) with TensorExpr
reductions on turns the softmax of a row whose values are all below about -104 into NaN; eager
gives a uniform row. Exit code 1: reproduced."""
import sys

import torch

torch._C._jit_set_profiling_executor(True)
torch._C._jit_set_texpr_fuser_enabled(True)
torch._C._jit_override_can_fuse_on_cpu(True)
torch._C._jit_set_te_must_use_llvm_cpu(False)
torch._C._jit_set_texpr_reductions_enabled(True)  # without it softmax stays out of the fusion group


@torch.jit.script
def masked_softmax(scores, mask):
    return torch.softmax(scores + mask, -1)


scores = torch.randn(2, 8)
mask = torch.zeros(2, 8)
mask[1] = -1.0e9  # row 1 fully masked, as in attention over padding
for _ in range(3):  # profiled, then optimized (fused)
    fused = masked_softmax(scores, mask)
eager = torch.softmax(scores + mask, -1)
print("torch", torch.__version__)
print("eager row 1:", eager[1].tolist())
print("fused row 1:", fused[1].tolist())
sys.exit(1 if torch.isnan(fused).any() and not torch.isnan(eager).any() else 0)
