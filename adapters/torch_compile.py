#!/usr/bin/env python3
"""torch.compile as a compiler under test: inductor, aot_eager, cudagraphs (docs/adapters.md).

Needs PyTorch >= 2.0; on an older torch the probe says so and gbcheck reports the backend as
unavailable. The model's forward (a Python function in a real file, so dynamo sees its source) is
compiled with `torch.compile(backend=..., dynamic=..., fullgraph=False)`, dynamic from the
model's check.dynamic (auto: torch.compile's default, static first, dynamic after a shape change).
gbcheck itself fails a run with --fullgraph on the first graph break, naming it, so breaks are
always reported rather than raised. Events:
  GB301  a graph break, from torch._dynamo.explain: its reason (and GB code where the PyTorch
         version has one), at the model line of its user frame
  RC301  a recompile: a guard failed (the guard, from dynamo's guard-failure record)
  FB301  torch.compile raised where eager does not: the case ran eagerly
Run by gbcheck as `python3 torch_compile.py --backend inductor|aot_eager|cudagraphs`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbcheck_adapter import Adapter, Model, main, version_tuple  # noqa: E402


def model_line(model, frames):
    """The line of gbcheck's source that a stack of dynamo frame summaries points at."""
    path = getattr(model.python_module(), "__file__", None)
    line = 0
    for f in frames or []:
        if getattr(f, "filename", None) == path:
            line = Model.source_line(getattr(f, "lineno", 0))
    return line


class TorchCompile(Adapter):
    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.name = backend.replace("_", "-")

    def unavailable(self, probe):
        v = probe.get("torch")
        if v is None:
            return "its python has no torch"
        if version_tuple(v) < (2, 0):
            return "needs torch >= 2.0 for torch.compile, found " + v
        if self.backend == "cudagraphs" and not probe.get("cuda"):
            return "the cudagraphs backend needs a CUDA device"
        return ""

    def compile(self, model):
        import torch
        dynamic = str(self.options.get("dynamic", "auto"))
        fn = model.python_function()
        kwargs = {"backend": self.backend, "fullgraph": False}
        if dynamic in ("true", "false"):
            kwargs["dynamic"] = dynamic == "true"
        torch._dynamo.config.cache_size_limit = int(self.options.get("cache_size_limit", 8))
        model.stats.update(graphs=0, compiles=0)
        return {"fn": fn, "compiled": torch.compile(fn, **kwargs), "explained": set(), "frames": 0, "eager": False}

    def explain(self, compiled, model, inputs):
        """Graph breaks of this input signature, from torch._dynamo.explain."""
        import torch
        try:
            out = torch._dynamo.explain(compiled["fn"])(*[t.clone() for t in inputs])
        except TypeError:  # PyTorch 2.0: explain(fn, *args) returns a tuple
            out = torch._dynamo.explain(compiled["fn"], *[t.clone() for t in inputs])
        torch._dynamo.reset()
        breaks = getattr(out, "break_reasons", None)
        graphs = getattr(out, "graph_count", None)
        if breaks is None and isinstance(out, tuple):  # 2.0: (explanation, out_guards, graphs, ops, break_reasons, ...)
            graphs, breaks = len(out[2]), out[4]
        model.stats["graphs"] = max(model.stats.get("graphs", 0), int(graphs or 0))
        for b in breaks or []:
            reason = str(getattr(b, "reason", b)).split("\n")[0]
            code = ""
            for token in reason.replace("(", " ").replace(")", " ").split():
                if token.startswith("GB") and token[2:].isdigit():
                    code = token
            message = "dynamo graph break: " + reason + (" [%s]" % code if code else "")
            model.event("graph_break", "GB301", message, "torch.compile splits the graph here and runs the break eagerly",
                        model_line(model, getattr(b, "user_stack", None)))

    def run(self, compiled, model, inputs):
        import torch
        from torch._dynamo import utils as dynamo_utils
        sig = tuple((str(t.dtype), tuple(t.shape)) for t in inputs)
        if sig not in compiled["explained"]:
            state = torch.get_rng_state()
            self.explain(compiled, model, inputs)
            torch.set_rng_state(state)
            compiled["explained"].add(sig)
        failures_before = {k: len(v) for k, v in getattr(dynamo_utils, "guard_failures", {}).items()}
        frames_before = dynamo_utils.counters["stats"]["unique_graphs"]
        if compiled["eager"]:
            out = compiled["fn"](*inputs)
        else:
            try:
                out = compiled["compiled"](*inputs)
            except Exception as e:  # noqa: BLE001 - torch.compile's failure where eager may not fail
                compiled["fn"](*[t.clone() for t in inputs])  # eager raises too: the model's own error
                compiled["eager"] = True
                model.event("fallback", "FB301", "torch.compile raised where eager does not: %s" % str(e).split("\n")[0],
                            "a failure inside torch.compile; later cases run eagerly")
                out = compiled["fn"](*inputs)
        new_graphs = dynamo_utils.counters["stats"]["unique_graphs"] - frames_before
        if new_graphs > 0:
            model.stats["compiles"] = model.stats.get("compiles", 0) + new_graphs
            if compiled["frames"] > 0:
                guards = []
                for k, v in getattr(dynamo_utils, "guard_failures", {}).items():
                    guards += [str(g) for g in v[failures_before.get(k, 0):]]
                guard = guards[-1].split("\n")[0] if guards else "a guard on the inputs failed"
                model.event("recompile", "RC301", "torch.compile recompiled for inputs %s: %s" %
                            ([list(t.shape) for t in inputs], guard),
                            "check.dynamic: true compiles shape-generic code from the first call")
            compiled["frames"] += new_graphs
        return list(out) if isinstance(out, (tuple, list)) else [out]


if __name__ == "__main__":
    args = sys.argv[1:]
    backend = "inductor"
    if len(args) >= 2 and args[0] == "--backend":
        backend, args = args[1], args[2:]
    if backend not in ("inductor", "aot_eager", "cudagraphs", "eager"):
        sys.stderr.write("torch_compile.py: --backend is inductor, aot_eager, cudagraphs or eager, got %s\n" % backend)
        sys.exit(2)
    sys.exit(main(TorchCompile(backend), args))
