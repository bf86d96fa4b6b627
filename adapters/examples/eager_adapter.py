#!/usr/bin/env python3
"""The smallest useful adapter (docs/adapters.md): runs the model's forward as plain eager
PyTorch. A compiler's adapter differs only in compile(). Tested as the `eager-py` backend of
tests/data/adapters/backends.yaml by tests/adapters/adapter_failures_test.cpp."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gbcheck_adapter import Adapter, main  # noqa: E402


class EagerAdapter(Adapter):
    name = "eager-py"

    def compile(self, model):
        # model.python_function() is the graph as a Python function of torch calls; a compiler
        # would compile it here (model.torchscript holds the same source for torch.jit).
        return model.python_function()

    def run(self, compiled, model, inputs):
        # model.event("fallback", "FB999", "what happened", line=N) reports a compile event.
        return list(compiled(*inputs))


if __name__ == "__main__":
    sys.exit(main(EagerAdapter()))
