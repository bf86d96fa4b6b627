#!/usr/bin/env python3
"""ts-freeze: TorchScript's inference pipeline as a compiler under test (docs/adapters.md).

The graph is scripted (or traced, with --mode trace) as a torch.nn.Module whose params are
attributes, then torch.jit.freeze (params become constants: conv/batch_norm folding, dead code,
constant propagation) and torch.jit.optimize_for_inference (linear/conv fusions, MKLDNN layouts
where the build has them). Models that mutate their inputs keep their params as arguments.
Each new input signature is warmed up on copies first, so that the profiling executor's
optimized graph is the one checked. What could not be done is a fallback event:
  FB201  scripting or tracing failed: the case ran eagerly in Python
  FB202  optimize_for_inference failed: the frozen module ran without it
  RC201  (trace mode) a new input signature was traced again
  RC202  the params changed (their shapes follow the case's dims): frozen again
Run by gbcheck as `python3 ts_freeze.py [--mode script|trace]`.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbcheck_adapter import Adapter, graph_node_values, main, source_uses, tensor_payload, version_tuple  # noqa: E402

WARM_UP_CALLS = 2  # the profiling executor optimizes on its second call


def signature(tensors):
    return tuple((str(t.dtype), tuple(t.shape), tuple(t.stride()), str(t.device)) for t in tensors)


def params_digest(params):
    import hashlib
    h = hashlib.sha1()
    for p in params:
        meta, data = tensor_payload(p)
        h.update(meta)
        h.update(data)
    return h.hexdigest()


def copies(tensors):
    return [t.clone() for t in tensors]


class Compiled:
    def __init__(self, model, mode):
        import torch
        self.model = model
        self.mode = mode
        self.param_index = [] if model.mutates_inputs else [i for i, s in enumerate(model.inputs) if s.get("param")]
        self.input_index = [i for i in range(len(model.inputs)) if i not in self.param_index]
        self.params_key = None
        self.modules = {}   # input signature -> compiled module (one entry in script mode)
        self.warmed = set()
        self.failed = None  # why the model runs eagerly
        self.torch = torch

    def module_class(self):
        """A torch.nn.Module around the model's forward, its params as attributes."""
        params = self.param_index
        inputs = self.input_index
        n = len(self.model.inputs)

        # TorchScript compiles the class from source: write it next to the model's source.
        args = ", ".join("x%d: Tensor" % i for i in range(len(inputs)))
        call = []
        for i in range(n):
            call.append("self.p%d" % params.index(i) if i in params else "x%d" % inputs.index(i))
        source = ("import torch\nfrom torch import Tensor\nfrom gbcheck_model_%d import forward\n\n"
                  "class GbcheckModule(torch.nn.Module):\n"
                  "    def __init__(self, params):\n"
                  "        super().__init__()\n" % self.model.id)
        for k in range(len(params)):
            source += "        self.p%d = torch.nn.Parameter(params[%d], requires_grad=False)\n" % (k, k)
        source += "\n    def forward(self%s):\n        return forward(%s)\n" % (", " + args if args else "", ", ".join(call))
        return self.load_class(source)

    def load_class(self, source):
        import importlib.util
        from gbcheck_adapter import scratch_folder
        folder = scratch_folder()
        if folder not in sys.path:
            sys.path.insert(0, folder)
        name = "gbcheck_module_%d" % self.model.id
        path = os.path.join(folder, name + ".py")
        with open(path, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module.GbcheckModule

    def build(self, params, example):
        torch = self.torch
        self.model.python_module()  # gbcheck_model_<id> must be importable for the module's source
        module = self.module_class()([p.detach() for p in params]).eval()
        if self.mode == "trace":
            # Tracing runs the model once: whatever it writes in place (batch_norm's running stats,
            # add_ on an input) is restored, so that the call being traced updates them only once.
            written = [t for t in list(params) + list(example) if isinstance(t, torch.Tensor)]
            saved = [t.detach().clone() for t in written]
            scripted = torch.jit.trace(module, tuple(example), check_trace=False)
            with torch.no_grad():
                for t, before in zip(written, saved):
                    t.copy_(before)
        else:
            scripted = torch.jit.script(module)
        frozen = torch.jit.freeze(scripted.eval())
        try:
            return torch.jit.optimize_for_inference(frozen)
        except Exception as e:  # noqa: BLE001 - a compiler failure, reported
            self.model.event("fallback", "FB202", "torch.jit.optimize_for_inference failed: %s; the frozen module ran" %
                             str(e).split("\n")[0], "a failure inside TorchScript's inference passes")
            return frozen

    def __call__(self, inputs):
        torch = self.torch
        params = [inputs[i] for i in self.param_index]
        args = [inputs[i] for i in self.input_index]
        if self.failed is not None:
            return list(self.model.python_function()(*inputs))
        key = params_digest(params)
        if self.params_key != key:  # params are frozen into the module: new values, new module
            if self.params_key is not None:
                self.model.event("recompile", "RC202", "ts-freeze froze the module again: the params changed (shapes %s)" %
                                 [list(p.shape) for p in params], "params whose shapes use dims differ from case to case")
            self.params_key = key
            self.modules.clear()
            self.warmed.clear()
        sig = signature(args) if self.mode == "trace" else ()
        start = time.perf_counter()
        if sig not in self.modules:
            try:
                self.modules[sig] = self.build(params, args)
            except Exception as e:  # noqa: BLE001
                self.failed = str(e).split("\n")[0]
                self.model.event("fallback", "FB201", "torch.jit.%s failed: %s; the model runs eagerly" %
                                 (self.mode, self.failed), "TorchScript cannot compile this graph")
                return list(self.model.python_function()(*inputs))
            if self.mode == "trace" and len(self.modules) > 1:
                self.model.event("recompile", "RC201", "ts-freeze traced again for new input shapes %s" %
                                 [list(a.shape) for a in args], "a trace is specialized to its example shapes")
            self.model.stats["compiles"] = self.model.stats.get("compiles", 0) + 1
        module = self.modules[sig]
        run_sig = signature(args)
        if run_sig not in self.warmed:
            state = torch.get_rng_state()
            with torch.no_grad():
                for _ in range(WARM_UP_CALLS):
                    module(*copies(args))
            torch.set_rng_state(state)
            self.warmed.add(run_sig)
            self.model.stats["compile_ms"] = self.model.stats.get("compile_ms", 0.0) + (time.perf_counter() - start) * 1e3
        with torch.no_grad():
            out = module(*args)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    def node_values(self, inputs, nodes):
        """The nodes' values in the frozen, optimized module; the ones freezing folded or
        optimize_for_inference fused away are declined."""
        self(copies(inputs))  # built and warmed up for these inputs
        if self.failed is not None:
            return [(None, "ts-freeze ran this model eagerly (FB201): it has no compiled values")] * len(nodes)
        module = self.modules[signature([inputs[i] for i in self.input_index]) if self.mode == "trace" else ()]
        args = [module._c] + [inputs[i] for i in self.input_index]
        got = graph_node_values(module.graph, args, nodes,
                                "not in the frozen, optimized graph: folded or fused away by freeze/optimize_for_inference",
                                WARM_UP_CALLS)
        # A node folded into the one before it (batch_norm into its conv) leaves that one's name on
        # the folded result: the producers of a missing node cannot vouch for their own value.
        uses = source_uses(self.model.torchscript)
        variables = [n.get("variable") for n in nodes]
        missing = {v for v, (value, _) in zip(variables, got) if value is None}
        absorbed = {}
        for v in missing:
            for producer in uses.get(v, ()):
                absorbed.setdefault(producer, v)
        names = {n.get("variable"): n["name"] for n in nodes}
        return [(None, "may hold the folded %s too (freezing folds a node into the one before it)" % names.get(absorbed[v], absorbed[v]))
                if value is not None and v in absorbed else (value, why) for v, (value, why) in zip(variables, got)]


class TsFreeze(Adapter):
    name = "ts-freeze"

    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def unavailable(self, probe):
        if probe.get("torch") is None:
            return "its python has no torch"
        if version_tuple(probe["torch"]) < (1, 10):
            return "needs torch >= 1.10 (torch.jit.optimize_for_inference), found " + probe["torch"]
        return ""

    def compile(self, model):
        model.stats.update(graphs=1, compiles=0)
        return Compiled(model, self.mode)

    def run(self, compiled, model, inputs):
        return compiled(inputs)

    def node_values(self, compiled, model, inputs, nodes):
        return compiled.node_values(inputs, nodes)


if __name__ == "__main__":
    mode = "script"
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--mode":
        mode = args[1]
        args = args[2:]
    if mode not in ("script", "trace"):
        sys.stderr.write("ts_freeze.py: --mode is script or trace, got %s\n" % mode)
        sys.exit(2)
    sys.exit(main(TsFreeze(mode), args))
