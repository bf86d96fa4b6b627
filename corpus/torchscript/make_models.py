#!/usr/bin/python3
"""Writes small TorchScript files with random weights for gbcheck's import tests (nothing is
downloaded). Run with Debian's python3-torch (/usr/bin/python3): make_models.py OUT_DIR [--real].
The small models are always written; --real adds the real models (torchvision's, random weights):

  conv_bn_relu.pt  a conv + batch_norm + relu net, traced          --input float32[1,3,16,16]
  scripted.pt      scripted: an if on a shape, a loop-free helper  --input float32[2,8]
  mlp.pt           a two-layer MLP, traced                          --input float32[4,16]
  generic.pt       ops the format lacks (softplus, cumsum)          --input float32[1,4,8,8]
  data_if.pt       scripted: a branch on the sign of a sum (data)  --input float32[3,5]
  pieces.pt        chunk, split, unbind, select, zeros, ones, relu6, hardtanh, contiguous, traced
                                                                    --input float32[2,6,4]
  natives.pt       ATen ops that import as the format's own: hardswish, hardsigmoid, masked_fill,
                   addmm (and one with beta = alpha = 1, which TorchScript runs as mm + add),
                   baddbmm, embedding, adaptive_avg_pool2d to 2x3; and a masked_fill that does
                   not (a float into an int64 tensor), traced
                                                                    --input float32[2,4,6]

  resnet18.pt, mobilenet_v2.pt, mobilenet_v3_small.pt, squeezenet1_0.pt, efficientnet_b0.pt, convnext_tiny.pt
                   torchvision's, traced under no_grad              --input float32[1,3,64,64]
  vit.pt           torchvision's VisionTransformer: 2 layers, 64x64 --input float32[1,3,64,64]
  encoder_layer.pt nn.TransformerEncoderLayer(32, 4), batch first, traced under no_grad (the fused
                   fast path)                                       --input float32[2,10,32]
  encoder_layer_grad.pt  the same traced with grad on (the path of separate ops)
  lstm.pt          a 2-layer nn.LSTM, batch first; returns the output and (h, c)
                                                                    --input float32[2,7,12]
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
        return F.softplus(y) + F.adaptive_avg_pool2d(y, 1) + torch.cumsum(y, dim=1)


class DataIf(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = torch.relu(x) * 2.0
        else:
            y = x
        return y - 1.0


class Pieces(nn.Module):
    def forward(self, x):
        a, b, c = x.chunk(3, dim=1)
        p, q = torch.split(x, 4, dim=1)
        first, second = torch.unbind(x, dim=0)
        last = x.select(2, -1)
        filled = torch.zeros(x.shape) + torch.ones(x.shape, dtype=torch.float64)  # sizes from x: not folded by the tracer
        return (F.relu6(a * 4.0 + b) * c.contiguous(), p.sum(dim=1) + q.sum(dim=1), first - second, last,
                F.hardtanh(x, -0.5, 0.5) + filled)


class Natives(nn.Module):
    """What transformers and MobileNetV3 reach through ATen names of their own."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(16, 6)
        self.weight = nn.Parameter(torch.randn(6, 6))
        self.bias = nn.Parameter(torch.randn(6))

    def forward(self, x):
        tokens = (x.abs() * 10.0).long() % 16  # indices within the table, from the data
        scores = self.table(tokens).sum(dim=2).masked_fill(x > 1.0, float("-inf")).softmax(dim=-1)
        h = torch.addmm(self.bias, x.reshape(8, 6), self.weight, beta=0.5).reshape(2, 4, 6)
        projected = torch.addmm(self.bias, x.reshape(8, 6), self.weight)  # TorchScript runs it as mm + add
        attn = torch.baddbmm(h[:, :, :4], x, x.transpose(1, 2), beta=0.5, alpha=0.25)
        truncated = tokens.masked_fill(x > 1.0, 2.5)  # the value becomes 2: where would promote (stays generic)
        return F.hardswish(h) * F.hardsigmoid(scores), attn, F.adaptive_avg_pool2d(x, (2, 3)), truncated, projected


def save(module, example, path, script=False, no_grad=True):
    module.eval()
    for p in module.parameters():
        p.requires_grad_(not no_grad)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):  # non-trivial running stats
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    with torch.set_grad_enabled(not no_grad):
        # The trace check reruns the module under no_grad, where the encoder layer takes its fast path.
        ts = torch.jit.script(module) if script else torch.jit.trace(module, example, check_trace=no_grad)
    ts.save(path)


class VisionTransformer(nn.Module):
    """torchvision's class, small: 64x64 images in 16x16 patches, 2 layers of width 32."""

    def __init__(self):
        super().__init__()
        from torchvision.models.vision_transformer import VisionTransformer as Vit
        self.vit = Vit(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64,
                       num_classes=10)

    def forward(self, x):
        return self.vit(x)


def save_real_models(out):
    import torchvision.models as tvm
    image = torch.randn(1, 3, 64, 64)
    for name in ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_0", "efficientnet_b0", "convnext_tiny"]:
        save(getattr(tvm, name)(), image, os.path.join(out, name + ".pt"))
    save(VisionTransformer(), image, os.path.join(out, "vit.pt"))
    tokens = torch.randn(2, 10, 32)
    save(nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True), tokens,
         os.path.join(out, "encoder_layer.pt"))
    save(nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True), tokens,
         os.path.join(out, "encoder_layer_grad.pt"), no_grad=False)
    save(nn.LSTM(12, 16, num_layers=2, batch_first=True), torch.randn(2, 7, 12), os.path.join(out, "lstm.pt"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(ConvBnRelu(), torch.randn(1, 3, 16, 16), os.path.join(out, "conv_bn_relu.pt"))
    save(Scripted(), None, os.path.join(out, "scripted.pt"), script=True)
    save(Mlp(), torch.randn(4, 16), os.path.join(out, "mlp.pt"))
    save(Generic(), torch.randn(1, 4, 8, 8), os.path.join(out, "generic.pt"))
    save(DataIf(), None, os.path.join(out, "data_if.pt"), script=True)
    save(Pieces(), torch.randn(2, 6, 4), os.path.join(out, "pieces.pt"))
    save(Natives(), torch.randn(2, 4, 6), os.path.join(out, "natives.pt"))
    if "--real" in sys.argv:
        save_real_models(out)


if __name__ == "__main__":
    main()
