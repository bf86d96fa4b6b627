#!/usr/bin/env python3
"""nnc-py: PyTorch's TensorExpr fuser (NNC) on the profiling executor, driven from Python
(docs/adapters.md). The model's forward is scripted and run with the fuser forced on for the
device (the CPU needs _jit_override_can_fuse_on_cpu; without LLVM NNC interprets its kernels),
TensorExpr reductions on (sum, softmax, log_softmax join fusion groups, as in gbcheck's built-in
nnc backend), and the fusion strategy from check.dynamic. Each new input signature is warmed up
on copies (profiled runs, then the optimizing one) with the RNG restored, so the fused graph is
the one checked. Events:
  FB101  no fusion group formed: the graph ran on the TorchScript interpreter
  FB201  scripting failed: the model runs eagerly in Python
  RC101  a new input signature made the executor specialize again
Run by gbcheck as `python3 nnc_py.py`.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbcheck_adapter import Adapter, graph_node_values, main, version_tuple  # noqa: E402

SPECIALIZATIONS = 20


def signature(tensors):
    return tuple((str(t.dtype), tuple(t.shape), tuple(t.stride()), str(t.device)) for t in tensors)


def count_groups(graph):
    if graph is None:
        return 0
    n = 0
    for node in graph.nodes():
        if node.kind() == "prim::TensorExprGroup":
            n += 1
        for block in node.blocks():
            n += count_groups(block)
    return n


class NncPy(Adapter):
    name = "nnc-py"

    def unavailable(self, probe):
        if probe.get("torch") is None:
            return "its python has no torch"
        return ""

    def start(self):
        import torch
        torch._C._jit_set_profiling_executor(True)
        torch._C._set_graph_executor_optimize(True)
        torch._C._jit_set_texpr_fuser_enabled(True)
        torch._C._jit_set_texpr_reductions_enabled(True)
        if self.device == "cuda":
            torch._C._jit_override_can_fuse_on_gpu(True)
        else:
            torch._C._jit_override_can_fuse_on_cpu(True)
            torch._C._jit_set_te_must_use_llvm_cpu(False)
        dynamic = str(self.options.get("dynamic", "auto"))
        if dynamic == "false":
            torch.jit.set_fusion_strategy([("STATIC", SPECIALIZATIONS)])
        elif dynamic == "true":
            torch.jit.set_fusion_strategy([("DYNAMIC", SPECIALIZATIONS)])
        else:
            torch.jit.set_fusion_strategy([("STATIC", 1), ("DYNAMIC", SPECIALIZATIONS)])

    def compile(self, model):
        import torch
        model.stats.update(graphs=1, compiles=0, fusion_groups=0)
        try:
            return {"fn": torch.jit.script(model.python_function()), "warmed": set(), "eager": False}
        except Exception as e:  # noqa: BLE001 - the compiler's failure, reported
            model.event("fallback", "FB201", "torch.jit.script failed: %s; the model runs eagerly" % str(e).split("\n")[0],
                        "TorchScript cannot compile this graph")
            return {"fn": model.python_function(), "warmed": set(), "eager": True}

    def run(self, compiled, model, inputs):
        import torch
        fn = compiled["fn"]
        if compiled["eager"]:
            return list(fn(*inputs))
        sig = signature(inputs)
        if sig not in compiled["warmed"]:
            start = time.perf_counter()
            state = torch.get_rng_state()
            for _ in range(torch._C._jit_get_num_profiled_runs() + 1):
                fn(*[t.clone() for t in inputs])
            torch.set_rng_state(state)
            groups = count_groups(torch.jit.last_executed_optimized_graph())
            model.stats["fusion_groups"] = max(model.stats["fusion_groups"], groups)
            model.stats["compiles"] += 1
            if groups == 0:
                model.event("fallback", "FB101", "nnc-py formed no fusion group: the graph ran on the TorchScript interpreter",
                            "NNC fuses chains of two or more elementwise ops, reductions, cat and inference batch_norm")
            if compiled["warmed"]:
                model.event("recompile", "RC101", "nnc-py specialized again for input shapes %s" %
                            [list(t.shape) for t in inputs], "check.dynamic: true compiles shape-generic kernels")
            compiled["warmed"].add(sig)
            model.stats["compile_ms"] = model.stats.get("compile_ms", 0.0) + (time.perf_counter() - start) * 1e3
        out = fn(*inputs)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    def node_values(self, compiled, model, inputs, nodes):
        """Every node of the scripted graph made an output (Polygraphy's mark-all): the TensorExpr
        fuser then exports them from its kernels, so a value is the fused kernel's, though marking
        can change where fusion groups end."""
        import torch
        if compiled["eager"]:
            return [(None, "nnc-py ran this model eagerly (FB201): it has no compiled values")] * len(nodes)
        return graph_node_values(compiled["fn"].graph, list(inputs), nodes, "not a value of the scripted graph",
                                 torch._C._jit_get_num_profiled_runs() + 1)


if __name__ == "__main__":
    sys.exit(main(NncPy()))
