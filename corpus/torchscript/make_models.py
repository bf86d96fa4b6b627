#!/usr/bin/python3
"""Writes small TorchScript files with random weights for gbcheck's import tests (nothing is
downloaded). Run with Debian's python3-torch (/usr/bin/python3): make_models.py OUT_DIR [--resnet18].

  conv_bn_relu.pt  a conv + batch_norm + relu net, traced          --input float32[1,3,16,16]
  scripted.pt      scripted: an if on a shape, a loop-free helper  --input float32[2,8]
  mlp.pt           a two-layer MLP, traced                          --input float32[4,16]
  generic.pt       ops the format lacks (max_pool2d, hardswish)     --input float32[1,4,8,8]
  data_if.pt       scripted: a branch on the sign of a sum (data)  --input float32[3,5]
  resnet18.pt      torchvision's resnet18, traced under no_grad     --input float32[1,3,64,64]
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def scale_rows(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k + 1.0


class Scripted(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        if x.size(1) != 8:
            raise ValueError("expected 8 features")
        if x.dim() == 2:
            y = scale_rows(x, 0.5)
        else:
            y = x
        return torch.tanh(self.fc(y))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x))).softmax(dim=-1)


class Generic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = F.max_pool2d(self.conv(x), 2, ceil_mode=True)
        return F.hardswish(y) + F.adaptive_avg_pool2d(y, 1)


class DataIf(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = torch.relu(x) * 2.0
        else:
            y = x
        return y - 1.0


def save(module, example, path, script=False):
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):  # non-trivial running stats
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
        ts = torch.jit.script(module) if script else torch.jit.trace(module, example)
    ts.save(path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(ConvBnRelu(), torch.randn(1, 3, 16, 16), os.path.join(out, "conv_bn_relu.pt"))
    save(Scripted(), None, os.path.join(out, "scripted.pt"), script=True)
    save(Mlp(), torch.randn(4, 16), os.path.join(out, "mlp.pt"))
    save(Generic(), torch.randn(1, 4, 8, 8), os.path.join(out, "generic.pt"))
    save(DataIf(), None, os.path.join(out, "data_if.pt"), script=True)
    if "--resnet18" in sys.argv:
        import torchvision
        save(torchvision.models.resnet18(), torch.randn(1, 3, 64, 64), os.path.join(out, "resnet18.pt"))


if __name__ == "__main__":
    main()
