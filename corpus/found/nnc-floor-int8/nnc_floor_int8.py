#!/usr/bin/env python3
"""The bug in plain PyTorch 1.13, without gbcheck: NNC (the TensorExpr fuser) cannot compile a
fusion group holding `floor` of an integer tensor (here a cast to int8, then floor): the fused
graph raises "Invalid integral op_type: 24" where eager returns the integers unchanged.
Exit code 1: reproduced."""
import sys

import torch

torch._C._jit_set_profiling_executor(True)
torch._C._jit_set_texpr_fuser_enabled(True)
torch._C._jit_override_can_fuse_on_cpu(True)
torch._C._jit_set_te_must_use_llvm_cpu(False)


@torch.jit.script
def floor_of_int8(x):
    return torch.floor(x.to(torch.int8))


x = torch.tensor([[True, False, True]])
eager = torch.floor(x.to(torch.int8))
print("torch", torch.__version__)
print("eager:", eager.tolist())
try:
    for _ in range(3):  # profiled, then optimized (fused)
        fused = floor_of_int8(x)
except RuntimeError as e:
    print("fused: raised", str(e).strip().splitlines()[-1])
    sys.exit(1)
print("fused:", fused.tolist())
sys.exit(0 if torch.equal(fused, eager) else 1)
