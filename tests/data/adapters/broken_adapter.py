#!/usr/bin/env python3
"""An adapter that fails on purpose, one way per mode (tests/adapters/adapter_failures_test.cpp):
  crash     a segmentation fault on the first case
  hang      never answers the first case
  count     answers with one output more than the model has
  truncate  sends half of an output tensor's bytes, then exits
  garbage   writes text to the protocol stream instead of a frame
  oom       asks for 4 GiB at once, over its memory_mb (3072 in tests/data/adapters/backends.yaml)
  scribble  adds 1 to every input it gives back, the ones the model never writes too
  wrong     adds 1 to every output: a compiler that diverges and, as under revision 1, shows no
            node values (tests/adapters/python_adapters_test.cpp: bisect says so)
  crash-second, hang-second  crash or hang on the second model this process was sent
      (tests/adapters/adapter_fuzz_test.cpp: one adapter serves a fuzz worker's graphs)
It compiles by doing nothing and otherwise answers like an eager adapter. With
$GBCHECK_TEST_ADAPTER_STARTS set, each start (not a probe) appends a line to that file, so a test
can count the adapters a command started.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "adapters"))
from gbcheck_adapter import Adapter, frame, main, tensor_payload  # noqa: E402


class Broken(Adapter):
    name = "broken"

    def __init__(self, mode):
        super().__init__()
        self.mode, _, self.when = mode.partition("-")
        self.channel = None
        self.models = 0

    def start(self):
        starts = os.environ.get("GBCHECK_TEST_ADAPTER_STARTS")
        if starts:
            with open(starts, "a") as f:
                f.write("%d\n" % os.getpid())

    def compile(self, model):
        self.models += 1
        model.order = self.models
        return model.python_function()

    def run(self, fn, model, inputs):
        import torch
        outputs = list(fn(*inputs))
        if self.when == "second" and model.order != 2:
            return outputs
        if self.mode == "crash":
            sys.stderr.write("broken adapter: about to crash\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "count":
            return outputs + [torch.zeros(1)]
        if self.mode == "truncate":
            meta, data = tensor_payload(outputs[0])
            out = self.channel.out
            out.write(frame(b"J", b'{"type": "outputs", "tensors": 1}'))
            payload = meta + data
            out.write(frame(b"T", payload)[:16 + len(meta) + len(data) // 2])
            out.flush()
            os._exit(0)
        if self.mode == "garbage":
            self.channel.out.write(b"Traceback? no: plain text on the protocol stream\n" * 4)
            self.channel.out.flush()
            time.sleep(3600)
        if self.mode == "oom":
            # One request over the tests' memory_mb (3072) but within the machine's memory: only
            # the limit refuses it (MemoryError), at once, before a page is touched (growing by
            # 256 MiB pieces zero-filled 2.5 GiB first: 8 s of system time).
            hoard = bytearray(4 << 30)
            del hoard
        if self.mode == "wrong":
            return [t + 1 for t in outputs]
        if self.mode == "scribble":
            for t in inputs:
                t.add_(1)
        return outputs


if __name__ == "__main__":
    import gbcheck_adapter
    mode = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "crash"
    adapter = Broken(mode)
    # The truncate and garbage modes write to the protocol stream themselves.
    original = gbcheck_adapter.Channel.__init__

    def keep(self):
        original(self)
        adapter.channel = self

    gbcheck_adapter.Channel.__init__ = keep
    sys.exit(main(adapter, [a for a in sys.argv[1:] if a != mode]))
