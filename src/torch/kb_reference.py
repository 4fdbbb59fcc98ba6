#!/usr/bin/env python3
"""Runs an imported task's PyTorch reference once on given inputs: the first piece of the reference
process of docs/pytorch.md (the evaluator does not call it yet).

    python3 kb_reference.py REQUEST.json

The request names the problem file, one size set and a raw file per argument of the task, in the
signature's order (docs/pytorch.md): get_inputs()'s tensors, the model's parameters then buffers,
the outputs, the size scalars (which take no file):

  {"problem": "model.py", "sizes": {"batch_size": 7, ...},
   "args": [{"name": "x", "role": "in", "dtype": "f32", "shape": [7, 33], "file": "x.bin"},
            ...]}

Each file holds the tensor's elements, row-major, in the dtype's little-endian machine format.
The problem runs with its constants set to `sizes`; the model is built once with a fixed seed, its
parameters and buffers are overwritten with the given values, forward runs on the given inputs
(never the file's own draw) with TF32 off, and each output is written to its file. The answer on
stdout is {"ok": true}, or {"error": "one line"} with exit code 2 for a reference that raises,
returns the wrong number or shape of outputs, or is given files that do not fit.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_inspect  # noqa: E402  (the problem loader and the ops old PyTorch lacks)

EXIT_FAILED = 2
MODEL_SEED = 1
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "f64": "float64", "i32": "int32",
                "i64": "int64", "u8": "uint8"}


def tensor_from(torch, arg):
    dtype = getattr(torch, TORCH_DTYPES[arg["dtype"]])
    count = 1
    for d in arg["shape"]:
        count *= d
    with open(arg["file"], "rb") as f:
        data = f.read()
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(data) != count * itemsize:
        kb_inspect.fail(f"{arg['name']}: {arg['file']} holds {len(data)} bytes, the shape "
                        f"{arg['shape']} needs {count * itemsize}")
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(arg["shape"]).clone()


def run(request):
    try:
        import torch
    except ImportError as e:
        raise kb_inspect.NoTorch(f"PyTorch is not installed for {sys.executable} ({e})")
    kb_inspect.add_missing_ops(torch)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    problem = kb_inspect.Problem(request["problem"])
    g = problem.run({k: int(v) for k, v in request["sizes"].items()})
    model = kb_inspect.build_model(torch, g, MODEL_SEED)
    named = kb_inspect.named_tensors(model)
    args = [a for a in request["args"] if "file" in a]
    n_inputs = sum(a["role"] == "in" for a in args) - len(named)
    if n_inputs < 1 or any(a["role"] != "in" for a in args[:n_inputs + len(named)]):
        kb_inspect.fail(f"the inputs ({', '.join(a['name'] for a in args)}) do not fit a model "
                        f"with {len(named)} parameters and buffers (inputs, then parameters and "
                        "buffers, then outputs)")
    inputs = [tensor_from(torch, a) for a in args[:n_inputs]]
    with torch.no_grad():
        for (name, t), a in zip(named, args[n_inputs:n_inputs + len(named)]):
            value = tensor_from(torch, a)
            if value.numel() != t.numel():
                kb_inspect.fail(f"{a['name']} has {value.numel()} elements, the model's {name} "
                                f"{t.numel()}")
            t.copy_(value.reshape(t.shape).to(t.dtype))
    outs = kb_inspect.forward(torch, model, inputs, f"at sizes {request['sizes']}")
    out_args = args[n_inputs + len(named):]
    if len(outs) != len(out_args):
        kb_inspect.fail(f"forward returned {len(outs)} outputs, the task has {len(out_args)}")
    for o, a in zip(outs, out_args):
        if o.numel() != _count(a["shape"]):
            kb_inspect.fail(f"output {a['name']} has shape {list(o.shape)}, the task says "
                            f"{a['shape']}")
        want = getattr(torch, TORCH_DTYPES[a["dtype"]])
        with open(a["file"], "wb") as f:
            f.write(o.detach().to(want).contiguous().reshape(-1).numpy().tobytes())


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main(argv):
    if len(argv) != 2:
        print("usage: kb_reference.py REQUEST.json", file=sys.stderr)
        return EXIT_FAILED
    answer, sys.stdout = sys.stdout, sys.stderr  # the problem's prints go to stderr
    try:
        with open(argv[1], encoding="utf-8") as f:
            request = json.load(f)
        run(request)
    except kb_inspect.NoTorch as e:
        answer.write(json.dumps({"error": str(e)}) + "\n")
        return kb_inspect.EXIT_NO_TORCH
    except kb_inspect.CannotImport as e:
        answer.write(json.dumps({"error": " ".join(str(e).split())}) + "\n")
        return EXIT_FAILED
    except (OSError, ValueError, KeyError, TypeError) as e:
        answer.write(json.dumps({"error": f"bad request: {type(e).__name__}: {e}"}) + "\n")
        return EXIT_FAILED
    answer.write(json.dumps({"ok": True}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
