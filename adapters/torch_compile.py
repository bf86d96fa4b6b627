#!/usr/bin/env python3
"""torch.compile as a compiler under test: inductor, aot_eager, cudagraphs (docs/adapters.md).

Needs PyTorch >= 2.0; on an older torch the probe says so and gbcheck reports the backend as
unavailable. The model's forward (a Python function in a real file, so dynamo sees its source) is
compiled once per model with `torch.compile(backend=Recorder(...), dynamic=..., fullgraph=False)`,
dynamic from the model's check.dynamic (auto: torch.compile's default, static first, dynamic after
a shape change). The Recorder wraps the named backend as torch._dynamo's ExplainWithBackend does:
it sees every graph dynamo hands the backend, on every input signature, so nothing is ever reset
and what gbcheck reports is what torch.compile did. gbcheck itself fails a run with --fullgraph on
the first graph break, naming it, so breaks are always reported rather than raised. Events:
  GB301  a graph break: dynamo's reason (and GB code where the PyTorch version has one), at the
         model line of its user frame
  RC301  a recompile: the guards that failed (dynamo's guard-failure record), and whether the new
         code is shape-generic (automatic dynamic shapes)
  FB301  torch.compile raised where eager does not: the case ran eagerly
  FB302  dynamo hit cache_size_limit: a frame runs eagerly for inputs its compiled entries reject
Stats: graphs (frames dynamo compiled: forward, and a resume function after each break),
compiles, fusion_groups (kernels inductor generated), extern_calls (inductor's calls into ATen),
compile_ms (the calls that compiled), graph_notes (a line per graph, for explain). Test: tests/adapters/torch_compile_test.cpp.
Run by gbcheck as `python3 torch_compile.py --backend inductor|aot_eager|cudagraphs`.
"""

import os
import re
import sys
import time

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


def inductor_counts():
    """(kernels generated, extern calls) so far in this process: inductor's global counters."""
    try:
        from torch._inductor import metrics
        from torch._dynamo.utils import counters
    except ImportError:
        return 0, 0
    return int(getattr(metrics, "generated_kernel_count", 0)), int(counters["inductor"]["extern_calls"])


def is_symbolic(value):
    import torch
    if isinstance(value, torch.SymInt):
        return True
    return isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape)


class Recorder:
    """torch.compile's backend, wrapped: records each graph dynamo compiles (its compile id, why it
    ended, whether its shapes are symbolic, what the backend generated), then compiles it with the
    backend itself."""

    def __init__(self, backend):
        from torch._dynamo.backends.registry import lookup_backend
        self.inner = lookup_backend(backend)
        self.__name__ = backend  # dynamo's errors name the backend by it: "backend='inductor' raised"
        self.graphs = []

    def __call__(self, gm, example_inputs):
        try:
            from torch._guards import CompileContext
            compile_id = CompileContext.current_compile_id()
        except (ImportError, AttributeError):  # PyTorch 2.0 has no compile ids: no recompile is told apart
            compile_id = None
        kernels, externs = inductor_counts()
        compiled = self.inner(gm, example_inputs)
        kernels_after, externs_after = inductor_counts()
        self.graphs.append({
            "id": str(compile_id) if compile_id is not None else str(len(self.graphs)),
            "ops": graph_ops(gm),
            "frame": getattr(compile_id, "frame_id", None),
            "recompile": getattr(compile_id, "frame_compile_id", 0) > 0,
            "reason": getattr(gm, "compile_subgraph_reason", None),
            "dynamic": any(is_symbolic(v) for v in example_inputs),
            "kernels": kernels_after - kernels,
            "externs": externs_after - externs,
        })
        return compiled

    def get_compiler_config(self):  # dynamo asks the backend for it (the FX graph cache's key)
        get = getattr(self.inner, "get_compiler_config", None)
        return get() if get else None


def graph_ops(gm):
    """(the function dynamo traced, the names of the graph's calls in order)."""
    names, function = [], ""
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            names.append(node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target)))
            frames = re.findall(r"line \d+, in (\w+)", str(node.meta.get("stack_trace", "")))
            function = function or (frames[-1] if frames else "")
    return function, names


def graph_note(graph):
    """explain's line for a compiled graph:
    `forward 0/1: shape-generic, 3 ops (relu, exp, softmax), 4 kernels generated, 0 extern calls`."""
    function, ops = graph["ops"]
    shown = ", ".join(ops[:8]) + (", ..." if len(ops) > 8 else "")
    note = "%s%s: %s, %d op%s (%s)" % (function + " " if function else "", graph["id"],
                                      "shape-generic" if graph["dynamic"] else "static shapes",
                                      len(ops), "" if len(ops) == 1 else "s", shown)
    if graph["kernels"] or graph["externs"]:
        note += ", %d kernel%s generated, %d extern call%s" % (graph["kernels"], "" if graph["kernels"] == 1 else "s",
                                                             graph["externs"], "" if graph["externs"] == 1 else "s")
    reason = graph["reason"]
    if reason is not None and getattr(reason, "graph_break", False):
        note += "; ends at a graph break (GB301)"
    return note


def guard_failures():
    """dynamo's record of failed guards: {code object: ["0/1: the guard's failure", ...]}."""
    from torch._dynamo import utils as dynamo_utils
    return getattr(dynamo_utils, "guard_failures", {})


def code_line(code):
    """The model line a compiled frame starts at: 0 for forward itself, the breaking line for
    dynamo's resume functions (torch_dynamo_resume_in_forward_at_N resumes in the middle of line N)."""
    m = re.search(r"_at_(\d+)$", code.co_name)
    return Model.source_line(int(m.group(1))) if m else 0


def compile_error(e):
    """What went wrong inside torch.compile, in a line: dynamo wraps a backend's exception in one
    whose first line only names the backend ("backend='inductor' raised:")."""
    inner = getattr(e, "inner_exception", None) or e.__cause__
    where = "%s raised " % getattr(e, "backend_name", "the backend") if inner is not None else ""
    cause = inner if inner is not None else e
    text = "%s: %s" % (type(cause).__name__, cause)
    return where + next((line.strip() for line in text.split("\n") if line.strip()), type(cause).__name__)


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

    def start(self):
        import torch
        torch._dynamo.config.cache_size_limit = int(self.options.get("cache_size_limit", 8))
        torch._dynamo.config.capture_scalar_outputs = bool(self.options.get("capture_scalar_outputs", False))

    def compile(self, model):
        import torch
        dynamic = str(self.options.get("dynamic", "auto"))
        fn = model.python_function()
        recorder = Recorder(self.backend)
        kwargs = {"backend": recorder, "fullgraph": False}
        if dynamic in ("true", "false"):
            kwargs["dynamic"] = dynamic == "true"
        model.stats.update(graphs=0, compiles=0, fusion_groups=0, extern_calls=0, graph_notes=[])
        return {"fn": fn, "compiled": torch.compile(fn, **kwargs), "recorder": recorder, "frames": set(),
                "eager": False, "dynamic": dynamic}

    def run(self, compiled, model, inputs):
        if compiled["eager"]:
            out = compiled["fn"](*inputs)
            return list(out) if isinstance(out, (tuple, list)) else [out]
        recorder = compiled["recorder"]
        seen = len(recorder.graphs)
        failures_before = {code: len(v) for code, v in guard_failures().items()}
        start = time.perf_counter()
        try:
            out = compiled["compiled"](*inputs)
        except Exception as e:  # noqa: BLE001 - torch.compile's failure where eager may not fail
            compiled["fn"](*[t.clone() for t in inputs])  # eager raises too: the model's own error
            compiled["eager"] = True
            model.event("fallback", "FB301", "torch.compile raised where eager does not: " + compile_error(e),
                        "a failure inside torch.compile; later cases run eagerly")
            out = compiled["fn"](*inputs)
        new = recorder.graphs[seen:]
        if new:
            model.stats["compile_ms"] = model.stats.get("compile_ms", 0.0) + (time.perf_counter() - start) * 1e3
            self.report(compiled, model, inputs, new, failures_before)
        else:
            self.cache_limit_event(model, inputs, failures_before)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    def cache_limit_event(self, model, inputs, failures_before):
        """Guards failed and nothing compiled: dynamo hit cache_size_limit and runs the frame eagerly
        (from then on, for every input its compiled entries reject, silently)."""
        import torch
        for code, v in guard_failures().items():
            failures = v[failures_before.get(code, 0):]
            if failures and code.co_filename == getattr(model.python_module(), "__file__", None):
                model.event("fallback", "FB302", "torch.compile hit cache_size_limit (%d) for %s with inputs %s: it runs "
                            "eagerly for inputs its %d compiled entries reject; the last guard failure: %s" %
                            (torch._dynamo.config.cache_size_limit, code.co_name, [list(t.shape) for t in inputs],
                             len(failures), failures[-1].split("\n")[0]),
                            "raise check.cache_size_limit, or use check.dynamic: auto or true", code_line(code))

    def report(self, compiled, model, inputs, graphs, failures_before):
        """Stats and events of the graphs one call compiled."""
        failed = {code: v[failures_before.get(code, 0):] for code, v in guard_failures().items()}
        for g in graphs:
            compiled["frames"].add(g["frame"])
            model.stats["compiles"] += 1
            model.stats["fusion_groups"] += g["kernels"]
            model.stats["extern_calls"] += g["externs"]
            model.stats["graph_notes"].append(graph_note(g))
            reason = g["reason"]
            if reason is not None and getattr(reason, "graph_break", False):
                text = str(getattr(reason, "reason", reason)).strip().split("\n")[0]
                code = next((t for t in re.split(r"[\s()\[\]]+", text) if re.fullmatch(r"GB\d+", t)), "")
                model.event("graph_break", "GB301", "dynamo graph break: " + text + (" [%s]" % code if code else ""),
                            "torch.compile splits the graph here and runs the break eagerly",
                            model_line(model, getattr(reason, "user_stack", None)))
            if g["recompile"]:
                self.recompile_event(compiled, model, inputs, g, failed)
        model.stats["graphs"] = len(compiled["frames"])

    def recompile_event(self, compiled, model, inputs, graph, failed):
        prefix = "%s/" % graph["frame"]
        for code, failures in failed.items():
            guards = [f.split("\n")[0] for f in failures if f.startswith(prefix)]
            if not guards:
                continue
            shapes = "shape-generic code (dynamic shapes)" if graph["dynamic"] else "code for these shapes"
            hint = {"true": "check.dynamic: true asked for shape-generic code; a guard on a specialized value failed",
                    "false": "check.dynamic: false compiles again for every new shape, up to cache_size_limit"}.get(
                compiled["dynamic"], "check.dynamic: auto (torch.compile's default) specializes first and goes "
                                     "shape-generic after a size changes; check.dynamic: true starts shape-generic")
            model.event("recompile", "RC301", "torch.compile recompiled %s for inputs %s, as %s: %s" %
                        (code.co_name, [list(t.shape) for t in inputs], shapes, "; ".join(guards)),
                        hint, code_line(code))


if __name__ == "__main__":
    args = sys.argv[1:]
    backend = "inductor"
    if len(args) >= 2 and args[0] == "--backend":
        backend, args = args[1], args[2:]
    if backend not in ("inductor", "aot_eager", "cudagraphs", "eager"):
        sys.stderr.write("torch_compile.py: --backend is inductor, aot_eager, cudagraphs or eager, got %s\n" % backend)
        sys.exit(2)
    sys.exit(main(TorchCompile(backend), args))
