#!/usr/bin/python3
"""PyTorch 1.13: torch.jit.optimize_for_inference runs hardswish of a conv's output as MKLDNN's, which
is wrong when the channel count is not a multiple of 8 (corpus/found/ts-freeze-mkldnn-hardswish/
README.md). Plain PyTorch, no gbcheck. Exit code 1: reproduced (4 channels disagree with eager while
8 agree); 0: eager and the optimized module agree."""
import sys

import torch


class ConvHardswish(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.hardswish(self.conv(x))


def max_difference(channels):
    torch.manual_seed(0)
    model = ConvHardswish(channels).eval()
    x = torch.randn(1, channels, 8, 8)
    expected = model(x)
    optimized = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model)))
    with torch.no_grad():
        actual = optimized(x)
    return (actual - expected).abs().max().item()


def main():
    print("torch", torch.__version__, "| MKLDNN", torch.backends.mkldnn.is_available())
    four, eight = max_difference(4), max_difference(8)
    print("4 channels: max abs difference from eager %g" % four)
    print("8 channels: max abs difference from eager %g" % eight)
    reproduced = four > 1e-3
    print("REPRODUCED" if reproduced else "NOT REPRODUCED")
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
