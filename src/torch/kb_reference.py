#!/usr/bin/env python3
"""The reference process of a task whose reference is a PyTorch module (docs/pytorch.md): runs the
module on the inputs the kernel got, and times PyTorch itself as the baseline.

    python3 kb_reference.py REQUEST.json                  one run, answer on stdout
    python3 kb_reference.py --serve PARENT_PID DEVICE [--allow-tf32]

A run request names the problem file, one size set and a raw file per argument of the task, in the
signature's order (docs/pytorch.md): get_inputs()'s tensors, the model's parameters then buffers,
the outputs, the size scalars (which take no file):

  {"problem": "model.py", "sizes": {"batch_size": 7, ...},
   "args": [{"name": "x", "role": "in", "dtype": "f32", "shape": [7, 33], "file": "x.bin"},
            ...]}

Each file holds the tensor's elements, row-major, in the dtype's little-endian machine format.
The problem runs with its constants set to `sizes`; the model is built with a fixed seed (once per
size set when serving), its parameters and buffers are overwritten with the given values, forward
runs on the given inputs (never the file's own draw) with TF32 off, and each output is written to
its file. The answer is {"ok": true}, or {"error": "one line"} (exit code 2 for a single run) for a
reference that raises, returns the wrong number or shape of outputs, or is given files that do not
fit.

Serving (`kfoundry`'s evaluator, src/torch/torch_reference.cpp): requests come as JSON lines on fd
3, answers go as JSON lines on fd 4 (the executor's wire, src/eval/protocol.hpp), first
{"ready": true, "torch": VERSION, "device": LABEL} or {"fatal": WHY, "exit_code": N}. Each request
carries an "id", echoed in its answer, and an "op":
  "run"   as above;
  "time"  the same inputs (the outputs' files are not written), with "settings" (warmup_runs,
          min_runs, max_runs, min_timed_ms, max_timing_ms) and "flush_bytes": forward timed eager,
          then under torch.compile where this PyTorch has it, each by the kernels' protocol
          (warm-up, the cache flushed before every run, CUDA events on a GPU, the wall clock on a
          CPU, the median of the timed runs). The answer: {"baselines": [{"name", "times_ms"} or
          {"name", "unavailable": WHY}]}.
DEVICE is "cpu" or "cuda". The process dies with its parent (PR_SET_PDEATHSIG).
"""

import ctypes
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_inspect  # noqa: E402  (the problem loader and the ops old PyTorch lacks)

EXIT_FAILED = 2
MODEL_SEED = 1
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "f64": "float64", "i32": "int32",
                "i64": "int64", "u8": "uint8", "bf16": "bfloat16"}


def setup_torch(allow_tf32):
    try:
        import torch
    except ImportError as e:
        raise kb_inspect.NoTorch(f"PyTorch is not installed for {sys.executable} ({e})")
    kb_inspect.add_missing_ops(torch)
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    torch.backends.cudnn.allow_tf32 = allow_tf32
    return torch


def tensor_from(torch, arg):
    dtype = getattr(torch, TORCH_DTYPES[arg["dtype"]])
    count = _count(arg["shape"])
    with open(arg["file"], "rb") as f:
        data = f.read()
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(data) != count * itemsize:
        kb_inspect.fail(f"{arg['name']}: {arg['file']} holds {len(data)} bytes, the shape "
                        f"{arg['shape']} needs {count * itemsize}")
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(arg["shape"]).clone()


class Reference:
    """The problem's models, built once per size set, on one device."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.models = {}

    def prepare(self, request):
        """The model with the request's parameters and buffers, its inputs, and the output
        arguments."""
        torch = self.torch
        key = (request["problem"], json.dumps(request["sizes"], sort_keys=True))
        if key not in self.models:
            problem = kb_inspect.Problem(request["problem"])
            g = problem.run({k: int(v) for k, v in request["sizes"].items()})
            model = kb_inspect.build_model(torch, g, MODEL_SEED).to(self.device)
            self.models[key] = model
        model = self.models[key]
        named = kb_inspect.named_tensors(model)
        args = [a for a in request["args"] if "file" in a]
        n_inputs = sum(a["role"] == "in" for a in args) - len(named)
        if n_inputs < 1 or any(a["role"] != "in" for a in args[:n_inputs + len(named)]):
            kb_inspect.fail(f"the inputs ({', '.join(a['name'] for a in args)}) do not fit a "
                            f"model with {len(named)} parameters and buffers (inputs, then "
                            "parameters and buffers, then outputs)")
        inputs = [tensor_from(torch, a).to(self.device) for a in args[:n_inputs]]
        with torch.no_grad():
            for (name, t), a in zip(named, args[n_inputs:n_inputs + len(named)]):
                value = tensor_from(torch, a)
                if value.numel() != t.numel():
                    kb_inspect.fail(f"{a['name']} has {value.numel()} elements, the model's "
                                    f"{name} {t.numel()}")
                t.copy_(value.reshape(t.shape).to(t.dtype))
        return model, inputs, args[n_inputs + len(named):]

    def run(self, request):
        torch = self.torch
        model, inputs, out_args = self.prepare(request)
        outs = kb_inspect.forward(torch, model, inputs, f"at sizes {request['sizes']}")
        if len(outs) != len(out_args):
            kb_inspect.fail(f"forward returned {len(outs)} outputs, the task has {len(out_args)}")
        for o, a in zip(outs, out_args):
            if o.numel() != _count(a["shape"]):
                kb_inspect.fail(f"output {a['name']} has shape {list(o.shape)}, the task says "
                                f"{a['shape']}")
            want = getattr(torch, TORCH_DTYPES[a["dtype"]])
            with open(a["file"], "wb") as f:
                f.write(o.detach().to(want).cpu().contiguous().reshape(-1).numpy().tobytes())

    def time(self, request):
        torch = self.torch
        model, inputs, _ = self.prepare(request)
        settings = request.get("settings", {})
        flush = torch.empty(max(int(request.get("flush_bytes", 0)) // 4, 1), dtype=torch.float32,
                            device=self.device)
        where = f"at sizes {request['sizes']}"
        baselines = []

        def eager():
            with torch.no_grad():
                return model(*inputs)

        kb_inspect.forward(torch, model, inputs, where)  # raises with the file's error if broken
        baselines.append({"name": "torch eager",
                          "times_ms": self.timed(eager, flush, settings)})
        if request.get("eager_only"):
            return baselines
        compiled = {"name": "torch.compile"}
        if not hasattr(torch, "compile"):
            compiled["unavailable"] = f"torch.compile is not in PyTorch {torch.__version__}"
        else:
            try:
                fast = torch.compile(model)

                def run_compiled():
                    with torch.no_grad():
                        return fast(*inputs)

                run_compiled()  # compiles (on a CPU it needs a C++ compiler)
                compiled["times_ms"] = self.timed(run_compiled, flush, settings)
            except Exception as e:  # any failure of the compiler: say why, keep eager's figure
                compiled["unavailable"] = kb_inspect.describe(e)
        baselines.append(compiled)
        return baselines

    def timed(self, fn, flush, settings):
        """The kernels' protocol: warm-up runs, then timed runs with the cache flushed before
        each, until min_runs and min_timed_ms are reached (at most max_runs, or max_timing_ms of
        wall time)."""
        torch = self.torch
        cuda = self.device == "cuda"
        warmup = int(settings.get("warmup_runs", 3))
        min_runs = int(settings.get("min_runs", 10))
        max_runs = max(int(settings.get("max_runs", 100)), 1)
        min_timed = float(settings.get("min_timed_ms", 0))
        max_wall = float(settings.get("max_timing_ms", 0))
        samples, total, start = [], 0.0, time.perf_counter()
        for i in range(warmup + max_runs):
            flush.zero_()
            if cuda:
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                    enable_timing=True)
                begin.record()
                fn()
                end.record()
                end.synchronize()
                ms = begin.elapsed_time(end)
            else:
                t0 = time.perf_counter()
                fn()
                ms = (time.perf_counter() - t0) * 1e3
            if i < warmup:
                continue
            samples.append(ms)
            total += ms
            if len(samples) >= min_runs and total >= min_timed:
                break
            if max_wall > 0 and (time.perf_counter() - start) * 1e3 >= max_wall:
                break
        return samples


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def one_line(e):
    return " ".join(str(e).split())


def answer_for(reference, request):
    try:
        op = request.get("op")
        if op == "run":
            reference.run(request)
            return {"ok": True}
        if op == "time":
            return {"baselines": reference.time(request)}
        return {"error": f"bad request: unknown op {op!r}"}
    except kb_inspect.CannotImport as e:
        return {"error": one_line(e)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        return {"error": f"bad request: {type(e).__name__}: {one_line(e)}"}
    except Exception as e:  # the problem's own code outside forward (a model's .to, say)
        return {"error": f"raised {kb_inspect.describe(e)}"}


def serve(argv):
    parent, device = int(argv[0]), argv[1]
    allow_tf32 = "--allow-tf32" in argv[2:]
    try:  # die with the evaluator, even when it is killed
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        return 1
    requests = os.fdopen(3, "r", encoding="utf-8")
    answers = os.fdopen(4, "w", encoding="utf-8")
    sys.stdout = sys.stderr  # the problem's prints go to stderr

    def send(message):
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    try:
        torch = setup_torch(allow_tf32)
    except kb_inspect.NoTorch as e:
        send({"fatal": str(e), "exit_code": kb_inspect.EXIT_NO_TORCH})
        return kb_inspect.EXIT_NO_TORCH
    if device == "cuda" and not torch.cuda.is_available():
        send({"fatal": f"PyTorch {torch.__version__} has no CUDA device here", "exit_code": 3})
        return 3
    if device == "cuda":
        label = f"cuda ({torch.cuda.get_device_name(0)}, PyTorch {torch.__version__})"
    else:
        threads = torch.get_num_threads()
        label = (f"cpu (PyTorch {torch.__version__}, {threads} thread"
                 f"{'s' if threads != 1 else ''})")
    send({"ready": True, "torch": torch.__version__, "device": label})
    reference = Reference(torch, device)
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        message = answer_for(reference, request)
        message["id"] = request.get("id", 0)
        send(message)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "--serve":
        return serve(argv[2:])
    if len(argv) != 2:
        print("usage: kb_reference.py REQUEST.json | --serve PARENT_PID DEVICE [--allow-tf32]",
              file=sys.stderr)
        return EXIT_FAILED
    answer, sys.stdout = sys.stdout, sys.stderr  # the problem's prints go to stderr
    try:
        with open(argv[1], encoding="utf-8") as f:
            request = json.load(f)
        request["op"] = "run"
        reference = Reference(setup_torch(False), "cpu")
    except kb_inspect.NoTorch as e:
        answer.write(json.dumps({"error": str(e)}) + "\n")
        return kb_inspect.EXIT_NO_TORCH
    except (OSError, ValueError, KeyError, TypeError) as e:
        answer.write(json.dumps({"error": f"bad request: {type(e).__name__}: {e}"}) + "\n")
        return EXIT_FAILED
    result = answer_for(reference, request)
    answer.write(json.dumps(result) + "\n")
    return EXIT_FAILED if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
