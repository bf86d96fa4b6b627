#!/usr/bin/env python3
"""Writes the TorchScript files of this folder with PyTorch 2.x: models saved by a newer PyTorch
than the LibTorch gbcheck is built on (Debian's 1.13), each with the inputs it was run on and the
outputs PyTorch 2.x gave. tests/import/torch2_saved_test.cpp imports them and compares. Run with a
PyTorch 2.x python (ci/torch2_env.sh makes one; the files here were written by Debian 13's 2.6):
  $(ci/torch2_env.sh) corpus/torchscript/torch2/make_torch2_models.py corpus/torchscript/torch2

  torch2_ops.pt          operators 2.x added: scaled_dot_product_attention (causal; a boolean
                         mask with a scale; a float mask; grouped-query heads), nn.RMSNorm,
                         squeeze over several dims, all/any over several dims, traced
                                                        --input float32[2,5,16]
  encoder_layer_grad.pt  nn.TransformerEncoderLayer(32, 4), batch first, traced with grad on: in
                         2.x its attention is scaled_dot_product_attention  --input float32[2,10,32]
  unknown_op.pt          nonzero_static, an operator 2.1 added that gbcheck does not add: on
                         LibTorch 1.13 it does not load (a clear error, exit 2)
                                                        --input float32[6]
  conv_bn_relu.pt, scripted.pt, mlp.pt, pieces.pt, natives.pt, vit.pt
                         the same models as ../make_models.py writes, saved by 2.x
NAME.inputs.pt holds the inputs (a tuple, torch.save) and NAME.outputs.pt the outputs (a tuple).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import make_models as mm  # noqa: E402


class Torch2Ops(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(16)
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):  # [2, 5, 16]
        h = self.norm(x)
        q, k, v = self.qkv(h).view(2, 5, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)  # each [2, 2, 5, 8]
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        keep = (x.sum(-1) > -2.0)[:, None, None, :]  # a boolean mask over keys, [2, 1, 1, 5]
        masked = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=0.5)
        bias = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tanh(x[:, None, :, :5]))
        grouped = F.scaled_dot_product_attention(q, k[:, :1], v[:, :1], enable_gqa=True)
        unit = x[:, :1, None, :].squeeze((1, 2))  # [2, 16]
        dims = (torch.all(x > -3.0, dim=(1, 2)), torch.any(x > 2.0, dim=(0, 2), keepdim=True))
        return causal, masked, bias, grouped, unit, F.rms_norm(x, (16,)), dims[0], dims[1]


class UnknownOp(nn.Module):
    def forward(self, x):
        return torch.nonzero_static(x > 0, size=4)


def save(module, example, out, name, script=False, no_grad=True):
    path = os.path.join(out, name + ".pt")
    mm.save(module, example, path, script=script, no_grad=no_grad)
    loaded = torch.jit.load(path)
    with torch.no_grad():
        outputs = loaded(example)
    outputs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    torch.save((example,), os.path.join(out, name + ".inputs.pt"))
    torch.save(tuple(t.detach() for t in outputs), os.path.join(out, name + ".outputs.pt"))


def main():
    if int(torch.__version__.split(".")[0]) < 2:
        sys.exit("make_torch2_models.py: needs PyTorch 2.x, this is " + torch.__version__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(Torch2Ops(), torch.randn(2, 5, 16), out, "torch2_ops")
    save(nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True), torch.randn(2, 10, 32), out,
         "encoder_layer_grad", no_grad=False)
    save(UnknownOp(), torch.randn(6), out, "unknown_op")
    save(mm.ConvBnRelu(), torch.randn(1, 3, 16, 16), out, "conv_bn_relu")
    save(mm.Scripted(), torch.randn(2, 8), out, "scripted", script=True)
    save(mm.Mlp(), torch.randn(4, 16), out, "mlp")
    save(mm.Pieces(), torch.randn(2, 6, 4), out, "pieces")
    save(mm.Natives(), torch.randn(2, 4, 6), out, "natives")
    save(mm.VisionTransformer(), torch.randn(1, 3, 64, 64), out, "vit")
    print("make_torch2_models.py: wrote %s with PyTorch %s" % (out, torch.__version__))


if __name__ == "__main__":
    main()
