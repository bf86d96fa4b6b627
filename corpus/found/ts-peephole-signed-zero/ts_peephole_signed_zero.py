"""TorchScript drops the sign of a zero in x + 0.0 and x - (-0.0) (plain PyTorch, no gbcheck).

IEEE 754: -0.0 + 0.0 is +0.0 and -0.0 - (-0.0) is +0.0. Eager PyTorch gives +0.0; a frozen
TorchScript module (its peephole pass rewrites `x + 0` and `x - 0` to x) gives -0.0. Scripting
alone also loses `x - (-0.0)`: the constant -0.0 is pooled with 0.0, which compares equal.
Exit 1 when reproduced, 0 when this PyTorch gets the signs right.
"""
import sys
import torch


class Identities(torch.nn.Module):
    def forward(self, x):
        return x + 0.0, x - (-0.0)


x = torch.tensor([-0.0, 0.0, 1.0])
eager = Identities().eval()
frozen = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(eager)))
for _ in range(3):  # let the profiling executor optimize
    got = frozen(x)
want = eager(x)
reproduced = False
for name, w, g in zip(["x + 0.0", "x - (-0.0)"], want, got):
    ws, gs = torch.signbit(w).tolist(), torch.signbit(g).tolist()
    print(f"{name}: eager signbit {ws}, frozen TorchScript signbit {gs}")
    reproduced |= ws != gs
print("torch", torch.__version__, "REPRODUCED" if reproduced else "not reproduced")
sys.exit(1 if reproduced else 0)
