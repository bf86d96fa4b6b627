"""The Python side of gbcheck's adapter protocol, gbcheck-adapter/1 revision 2 (docs/adapters.md).

An adapter is a program that gbcheck starts once per backend and keeps alive across models and
cases. It subclasses Adapter, says how to compile a model and how to run it, and calls main():

    class MyAdapter(Adapter):
        def compile(self, model):           # once per model; returns anything
            return model.python_function()
        def run(self, compiled, model, inputs):   # once per case; returns the output tensors
            return list(compiled(*inputs))

    if __name__ == "__main__":
        main(MyAdapter())

An adapter that overrides node_values() offers node values (check --intermediates); one that
does not works as under revision 1.

This module owns the framing (16-byte header "GBAD", kind, length; control frames of JSON and
tensor frames of raw bytes), the message loop, error reporting, and the probe. It imports torch
only when a session starts: `--probe` must answer fast (gbcheck backends probes every adapter).
Tests: tests/adapters/ (python_adapters_test.cpp runs the shipped adapters through gbcheck).
"""

import importlib.machinery
import importlib.util
import json
import os
import re
import signal
import struct
import sys
import tempfile
import time
import traceback

PROTOCOL = "gbcheck-adapter/1"
REVISION = 2  # 2: the node_values feature (the `values` request)
MAGIC = b"GBAD"

# gbcheck's dtype names (the model format's) to torch attribute names.
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


class ProtocolError(Exception):
    pass


# ---- framing ----

class Channel:
    """Frames over the adapter's stdin and a private copy of its stdout. fd 1 is pointed at stderr,
    so that anything printed (by the model's print nodes, by torch, by the adapter) cannot corrupt
    the protocol."""

    def __init__(self):
        self.inp = os.fdopen(os.dup(0), "rb", buffering=0)
        self.out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def _read_exact(self, n):
        chunks, got = [], 0
        while got < n:
            b = self.inp.read(n - got)
            if not b:
                if got == 0:
                    return None
                raise ProtocolError("stream ended inside a frame")
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)

    def read_frame(self):
        header = self._read_exact(16)
        if header is None:
            return None, None
        if header[:4] != MAGIC:
            raise ProtocolError("bad magic %r" % header[:4])
        kind = chr(header[4])
        (length,) = struct.unpack("<Q", header[8:16])
        payload = self._read_exact(length) if length else b""
        if payload is None:
            raise ProtocolError("stream ended inside a frame")
        return kind, payload

    def read_message(self):
        """(control dict, [tensors]) or (None, None) at the end of input."""
        kind, payload = self.read_frame()
        if kind is None:
            return None, None
        if kind != "J":
            raise ProtocolError("expected a control frame")
        msg = json.loads(payload.decode("utf-8"))
        tensors = []
        for _ in range(int(msg.get("tensors", 0))):
            k, p = self.read_frame()
            if k != "T":
                raise ProtocolError("expected a tensor frame")
            tensors.append(decode_tensor(p))
        return msg, tensors

    def write(self, data):
        self.out.write(data)

    def send(self, msg, tensors=()):
        tensors = list(tensors)
        msg = dict(msg, tensors=len(tensors))
        parts = [frame(b"J", json.dumps(msg).encode("utf-8"))]
        parts += [encode_tensor(t) for t in tensors]
        self.write(b"".join(parts))


def frame(kind, payload):
    return MAGIC + kind + b"\0\0\0" + struct.pack("<Q", len(payload)) + payload


def tensor_payload(t):
    """The meta header and the bytes of a tensor frame's payload (C-contiguous, on the CPU)."""
    import torch
    t = t.detach().to("cpu").contiguous()
    name = str(t.dtype).replace("torch.", "")
    meta = json.dumps({"dtype": name, "shape": list(t.shape)}).encode("utf-8")
    if t.dtype == torch.bfloat16:
        data = t.view(torch.int16).numpy().tobytes()
    elif t.dtype == torch.bool:
        data = t.to(torch.uint8).numpy().tobytes()
    else:
        data = t.numpy().tobytes()
    return struct.pack("<I", len(meta)) + meta, data


def encode_tensor(t):
    meta, data = tensor_payload(t)
    return frame(b"T", meta + data)


def decode_tensor(payload):
    import torch
    (meta_len,) = struct.unpack("<I", payload[:4])
    meta = json.loads(payload[4:4 + meta_len].decode("utf-8"))
    dtype = getattr(torch, meta["dtype"])
    data = bytearray(payload[4 + meta_len:])
    flat = torch.frombuffer(data, dtype=dtype) if data else torch.empty(0, dtype=dtype)
    return flat.reshape(meta["shape"]).clone()


# ---- models ----

_scratch = []


def scratch_folder():
    """A folder for this process's files. gbcheck makes one for each adapter and removes it when
    the adapter has ended, however it ended ($GBCHECK_ADAPTER_SCRATCH, docs/adapters.md); run by
    hand, the adapter makes its own and removes it at exit, on SIGTERM and SIGHUP too."""
    if not _scratch:
        given = os.environ.get("GBCHECK_ADAPTER_SCRATCH", "")
        if given and os.path.isdir(given):
            _scratch.append(given)
        else:
            import atexit
            import shutil
            _scratch.append(tempfile.mkdtemp(prefix="gbcheck-adapter-"))
            atexit.register(shutil.rmtree, _scratch[0], True)
            for sig in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) == signal.SIG_DFL:
                    signal.signal(sig, _exit_on_signal)
    return _scratch[0]


def _exit_on_signal(signum, frame):
    sys.exit(128 + signum)  # SystemExit runs the atexit handlers that a plain death skips


class Model:
    """What gbcheck sent about a model (docs/adapters.md, "the model message")."""

    def __init__(self, msg):
        self.msg = msg
        self.id = msg["model_id"]
        self.name = msg.get("name", "model")
        self.torchscript = msg["torchscript"]
        self.python = msg["python"]
        self.model_yaml = msg.get("model_yaml", "")
        self.inputs = msg["inputs"]    # [{"name", "dtype", "shape", "param"}], forward's order
        self.outputs = msg["outputs"]  # [{"name", "dtype", "shape"}]
        self.mutates_inputs = bool(msg.get("mutates_inputs", False))
        self.events = []
        self.stats = {}
        self._module = None

    def event(self, kind, code, message, hint="", line=0):
        """Reports a compile event: kind graph_break, fallback or recompile; line is a line of the
        model's source (torchscript and python share their line numbers)."""
        self.events.append({"kind": kind, "code": code, "message": message, "hint": hint, "line": int(line)})

    def python_module(self):
        """The model's source as an imported Python module (file-backed, so that torch.jit.script,
        inspect and dynamo find its source). Its `forward` is the graph."""
        if self._module is None:
            path = os.path.join(scratch_folder(), "gbcheck_model_%d.py" % self.id)
            with open(path, "w") as f:
                f.write(self.module_source())
            spec = importlib.util.spec_from_file_location("gbcheck_model_%d" % self.id, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            self._module = module
        return self._module

    def module_source(self):
        # The imports take line 1, so every line of gbcheck's source is one further down in the
        # module: source_line() maps a module line back (events carry gbcheck's line numbers).
        return "import torch; from torch import Tensor; from typing import List, Optional, Tuple\n" + \
            aten_calls(self.python)

    @staticmethod
    def source_line(module_line):
        """The line of gbcheck's source for a line of python_module()'s file."""
        return max(0, int(module_line) - 1)

    def python_function(self):
        return self.python_module().forward


def aten_calls(source):
    """The source with `torch.X(` spelled `torch.ops.aten.X(` where Python's torch has no X.
    gbcheck writes every op as `torch.X`, which TorchScript's C++ frontend resolves to aten::X;
    in Python some ATen ops live elsewhere (torch.nn.functional.gelu): torch.ops.aten names them
    all, for eager Python, torch.jit.script and dynamo alike."""
    import torch

    def spell(m):
        name = m.group(1)
        return m.group(0) if hasattr(torch, name) else "torch.ops.aten.%s(" % name
    return re.sub(r"\btorch\.([A-Za-z_][A-Za-z0-9_]*)\(", spell, source)


_custom_ops = []


def register_custom_ops():
    """The model format's custom kernels (compiler/ir/custom_ops.cpp) as torch.ops.gbcheck.*, with
    the reference's semantics (compiler/aten/custom_kernels.cpp), so that models using them run in
    eager Python, TorchScript and dynamo. Composite: compilers may see through them."""
    import torch
    if _custom_ops:
        return
    lib = torch.library.Library("gbcheck", "DEF")
    kernels = {
        "scaled_tanh(Tensor a0) -> Tensor": lambda x: torch.tanh(x / 2) * 2,
        "row_l2_normalize(Tensor a0) -> Tensor":
            lambda x: x / torch.clamp_min(torch.linalg.vector_norm(x, 2, [-1], True), 1e-12),
        "bias_relu(Tensor a0, Tensor a1) -> Tensor": lambda x, b: torch.relu(x + b),
    }
    for schema, fn in kernels.items():
        lib.define(schema)
        lib.impl(schema.split("(")[0], fn, "CompositeImplicitAutograd")
    _custom_ops.append(lib)


# ---- the loop ----

class Adapter:
    """Subclass and override compile() and run(); unavailable() for the probe."""

    name = "adapter"

    def __init__(self):
        self.hello_msg = {}

    @property
    def device(self):
        return self.hello_msg.get("device", "cpu")

    @property
    def options(self):
        return self.hello_msg.get("options", {})

    def unavailable(self, probe):
        """Why this adapter cannot run here ("" when it can). Must not import torch: `probe` says
        what there is (torch version, cuda)."""
        return ""

    def start(self):
        """Called once after hello (torch may be imported here)."""

    def compile(self, model):
        raise NotImplementedError

    def run(self, compiled, model, inputs):
        raise NotImplementedError

    def node_values(self, compiled, model, inputs, nodes):
        """Override to offer node values (check --intermediates): runs the model on inputs and
        returns, for each of `nodes` ({"name": model id, "variable": its name in the source}),
        (tensor, "") or (None, why the compiler has no value for it). graph_node_values() does
        this for a TorchScript graph."""
        raise NotImplementedError

    def features(self):
        return ["node_values"] if type(self).node_values is not Adapter.node_values else []

    def versions(self):
        import torch
        return {"python": sys.version.split()[0], "torch": torch.__version__}


def is_out_of_memory(e):
    text = str(e)
    return isinstance(e, MemoryError) or "can't allocate memory" in text or "out of memory" in text.lower()


def summary_line(e):
    """The line that says what went wrong. TorchScript's interpreter wraps the error of the op
    that failed in a traceback that opens with a fixed sentence: its last line is the op's own
    ("RuntimeError: Invalid integral op_type: 24"), and every such failure would otherwise read
    the same (and be deduplicated as one bug)."""
    lines = [line for line in ("%s: %s" % (type(e).__name__, e)).split("\n") if line.strip()]
    if len(lines) > 1 and "failed in the TorchScript interpreter" in lines[0]:
        last = lines[-1].strip()
        return last if ": " in last else "%s: %s" % (type(e).__name__, last)
    return lines[0] if lines else type(e).__name__


def error_message(e, kind):
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()
    return {"type": "error", "kind": "oom" if is_out_of_memory(e) else kind, "message": summary_line(e)}


def serve(adapter, channel):
    msg, _ = channel.read_message()
    if msg is None:
        return
    if msg.get("type") != "hello" or msg.get("protocol") != PROTOCOL:
        channel.send({"type": "error", "kind": "protocol", "message": "expected hello with protocol " + PROTOCOL})
        return
    adapter.hello_msg = msg
    register_custom_ops()
    threads = int(adapter.options.get("threads", 0))
    if threads > 0:  # as many as gbcheck's eager reference (docs/adapters.md, the hello message)
        import torch
        torch.set_num_threads(threads)
    adapter.start()
    channel.send(dict({"type": "hello", "protocol": PROTOCOL, "revision": REVISION, "adapter": adapter.name,
                       "features": adapter.features()}, versions=adapter.versions()))
    models = {}
    while True:
        msg, tensors = channel.read_message()
        if msg is None or msg.get("type") == "bye":
            return
        kind = msg.get("type")
        if kind == "drop":
            models.pop(msg.get("model_id"), None)
            continue
        if kind == "model":
            model = Model(msg)
            start = time.perf_counter()
            try:
                compiled = adapter.compile(model)
            except Exception as e:  # the compiler's failure: reported, the session lives on
                channel.send(dict(error_message(e, "compile"), model_id=model.id))
                continue
            model.stats["compile_ms"] = model.stats.get("compile_ms", 0.0) + (time.perf_counter() - start) * 1e3
            models[model.id] = (model, compiled)
            channel.send(answer("ready", model))
            continue
        if kind == "run":
            model, compiled = models[msg["model_id"]]
            import torch
            torch.manual_seed(int(msg.get("seed", 0)) & 0xFFFFFFFFFFFFFFFF)
            try:
                outputs = list(adapter.run(compiled, model, tensors))
            except Exception as e:
                channel.send(dict(error_message(e, "raise"), model_id=model.id))
                continue
            if msg.get("return_inputs"):
                outputs += tensors
            channel.send(answer("outputs", model), outputs)
            continue
        if kind == "values":
            model, compiled = models[msg["model_id"]]
            import torch
            torch.manual_seed(int(msg.get("seed", 0)) & 0xFFFFFFFFFFFFFFFF)
            nodes = msg.get("nodes", [])
            try:
                got = list(adapter.node_values(compiled, model, tensors, nodes))
            except Exception as e:
                channel.send(dict(error_message(e, "raise"), model_id=model.id))
                continue
            entries, values = [], []
            for node, (value, reason) in zip(nodes, got):
                if value is None:
                    entries.append({"name": node["name"], "value": False, "reason": reason})
                else:
                    entries.append({"name": node["name"], "value": True})
                    values.append(value.to_dense() if value.is_mkldnn else value)
            channel.send(dict(answer("values", model), nodes=entries), values)
            continue
        channel.send({"type": "error", "kind": "protocol", "message": "unknown message type %r" % kind})


def graph_node_values(graph, args, nodes, declined, warm_up=0):
    """Node values from a TorchScript graph as its compiler left it: the values named after the
    nodes' variables (TorchScript keeps them as debug names, "h.1") become extra outputs of a
    copy of the graph, which runs as a function on args (a module's graph takes the module
    first), after `warm_up` calls on copies (what the profiling executor needs to optimize it).
    A node whose variable is not in the graph (folded, fused or eliminated) is declined."""
    import torch
    g = graph.copy()
    by_variable, overwritten = {}, {}
    for n in g.nodes():
        for o in n.outputs():
            if o.type().isSubtypeOf(torch._C.TensorType.get()):
                name = o.debugName().split(".")[0]
                by_variable.setdefault(name, o)
                # An in-place op later writes over it (relu_ after a conv): its value is gone by the end.
                writers = [u.user.kind() for u in o.uses() if u.offset == 0 and u.user.kind().endswith("_")]
                if writers:
                    overwritten[name] = writers[0]
    for name in overwritten:
        by_variable.pop(name, None)
    found = [node["variable"] for node in nodes if node.get("variable") in by_variable]
    values = [list(g.outputs())[0]] + [by_variable[v] for v in found]
    pack = g.create("prim::TupleConstruct", values, 1)
    g.appendNode(pack)
    pack.output().setType(torch._C.TupleType([v.type() for v in values]))
    g.eraseOutput(0)
    g.registerOutput(pack.output())
    fn = torch._C._create_function_from_graph("gbcheck_node_values", g)
    state = torch.get_rng_state()
    with torch.no_grad():
        for _ in range(warm_up):
            fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        torch.set_rng_state(state)
        out = fn(*args)
    got = dict(zip(found, out[1:]))
    result = []
    for n in nodes:
        v = n.get("variable")
        if v in got:
            result.append((got[v], ""))
        elif v in overwritten:
            result.append((None, "overwritten in place by %s in the compiled graph" % overwritten[v]))
        else:
            result.append((None, declined))
    return result


def source_uses(source):
    """{variable: the variables its line reads} for the model source's `name = expr` lines."""
    lines = [re.match(r"\s*([A-Za-z_]\w*)\s*=\s*(.*)", line) for line in source.split("\n")]
    defined = {m.group(1) for m in lines if m}
    return {m.group(1): set(re.findall(r"[A-Za-z_]\w*", m.group(2))) & defined for m in lines if m}


def answer(kind, model):
    events, model.events = model.events, []
    return {"type": kind, "model_id": model.id, "events": events, "stats": model.stats}


# ---- the probe ----

def find_module(name):
    """The module's spec without importing it (nor its parents): the probe must stay fast."""
    path = None
    spec = None
    for part in name.split("."):
        spec = importlib.machinery.PathFinder.find_spec(part, path)
        if spec is None:
            return None
        path = spec.submodule_search_locations
    return spec


def torch_facts():
    """torch's version and CUDA build from torch/version.py, read as text."""
    spec = find_module("torch")
    if spec is None or not spec.submodule_search_locations:
        return None, False
    try:
        with open(os.path.join(list(spec.submodule_search_locations)[0], "version.py")) as f:
            text = f.read()
    except OSError:
        return None, False
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    has_gpu = os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")
    return (version.group(1) if version else None), bool(cuda) and has_gpu


def probe(adapter, modules):
    version, cuda = torch_facts()
    info = {"protocol": PROTOCOL, "adapter": adapter.name, "python": sys.version.split()[0], "torch": version,
            "cuda": cuda, "modules": {m: find_module(m) is not None for m in modules}}
    info["unavailable"] = adapter.unavailable(info)
    return info


def version_tuple(v):
    out = []
    for part in (v or "").split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group(0)))
    return tuple(out)


def main(adapter, argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--probe":
        sys.stdout.write(json.dumps(probe(adapter, argv[1:])) + "\n")
        return 0
    channel = Channel()
    try:
        serve(adapter, channel)
    except ProtocolError as e:
        sys.stderr.write("%s: protocol error from gbcheck: %s\n" % (adapter.name, e))
        return 2
    return 0
