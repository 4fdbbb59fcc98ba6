#!/usr/bin/env python3
"""A KernelBench-style check of an exported ModelNew against its problem's Model (our own code,
written after KernelBench's published protocol, not copied from it).

Both modules are loaded from source; each is built with the same seed before its constructor
(`Model(*get_init_inputs())`, `ModelNew(*get_init_inputs())`), so parameters drawn by the
constructors agree. Correctness: TRIALS trials (5), each with fresh inputs from the problem's
get_inputs() under its own seed, every output compared with torch.allclose at atol = rtol = 1e-2
and the shapes equal. Timing, only when every trial passed: WARMUP untimed calls, then TIMED
calls (100), each between two CUDA events with a synchronize (wall clock on a CPU), of ModelNew,
Model (PyTorch eager) and torch.compile(Model) where this PyTorch has it; mean, std, min, max and
median in milliseconds. Prints one JSON object.

Usage: kb_eval.py --problem PROBLEM.py --new MODELNEW.py [--device cuda] [--trials 5]
                  [--timed 100] [--atol 1e-2] [--rtol 1e-2]
"""
import argparse
import importlib.util
import json
import statistics
import sys
import time


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on(device, value):
    if hasattr(value, "to"):
        return value.to(device)
    return value


def outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def build(torch, cls, init, device, seed):
    torch.manual_seed(seed)
    if device.startswith("cuda"):
        torch.cuda.manual_seed(seed)
    return cls(*init).to(device)


def check(torch, problem, model, new, device, trials, atol, rtol):
    """Every trial's outputs compared; the first failure says why."""
    worst = 0.0
    for trial in range(trials):
        torch.manual_seed(1000 + trial)
        inputs = [on(device, x) for x in problem.get_inputs()]
        with torch.no_grad():
            want = outputs(model(*inputs))
            got = outputs(new(*inputs))
        if len(want) != len(got):
            return False, worst, f"trial {trial}: {len(got)} outputs, the Model gives {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            if tuple(w.shape) != tuple(g.shape):
                return False, worst, (f"trial {trial}: output {i} has shape {tuple(g.shape)}, "
                                      f"the Model's {tuple(w.shape)}")
            diff = (w.float() - g.float()).abs().max().item() if w.numel() else 0.0
            worst = max(worst, diff)
            if not torch.allclose(w.float(), g.float(), atol=atol, rtol=rtol):
                return False, worst, f"trial {trial}: output {i} differs, max abs diff {diff:.3g}"
    return True, worst, ""


def timed(torch, fn, inputs, device, warmup, runs):
    """Milliseconds of `runs` calls, each alone between events (CUDA) or clock reads (CPU)."""
    cuda = device.startswith("cuda")
    with torch.no_grad():
        for _ in range(warmup):
            fn(*inputs)
        if cuda:
            torch.cuda.synchronize()
        samples = []
        for _ in range(runs):
            if cuda:
                begin = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                begin.record()
                fn(*inputs)
                end.record()
                torch.cuda.synchronize()
                samples.append(begin.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                fn(*inputs)
                samples.append(1e3 * (time.perf_counter() - t0))
    return {"mean": statistics.fmean(samples),
            "std": statistics.pstdev(samples),
            "min": min(samples),
            "max": max(samples),
            "median": statistics.median(samples),
            "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", required=True, help="the problem file (class Model)")
    ap.add_argument("--new", required=True, help="the exported file (class ModelNew)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--timed", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--atol", type=float, default=1e-2)
    ap.add_argument("--rtol", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    result = {"problem": a.problem, "new": a.new, "device": a.device,
              "torch": torch.__version__, "trials": a.trials, "atol": a.atol, "rtol": a.rtol}
    try:
        problem = load(a.problem, "kb_problem")
        exported = load(a.new, "kb_new")
        init = [on(a.device, x) for x in problem.get_init_inputs()]
        model = build(torch, problem.Model, init, a.device, a.seed)
        new = build(torch, exported.ModelNew, init, a.device, a.seed)
    except Exception as e:  # a file that does not load is this problem's verdict
        result.update(compiled=False, correct=False, reason=f"{type(e).__name__}: {e}")
        print(json.dumps(result))
        return 0
    result["compiled"] = True
    try:
        ok, worst, why = check(torch, problem, model, new, a.device, a.trials, a.atol, a.rtol)
    except Exception as e:
        ok, worst, why = False, None, f"{type(e).__name__}: {e}"
    result.update(correct=ok, max_abs_diff=worst, reason=why)
    if ok:
        torch.manual_seed(a.seed)
        inputs = [on(a.device, x) for x in problem.get_inputs()]
        result["new_ms"] = timed(torch, new, inputs, a.device, a.warmup, a.timed)
        result["eager_ms"] = timed(torch, model, inputs, a.device, a.warmup, a.timed)
        result["speedup_vs_eager"] = result["eager_ms"]["mean"] / result["new_ms"]["mean"]
        if hasattr(torch, "compile"):
            try:
                compiled = torch.compile(model)
                result["compile_ms"] = timed(torch, compiled, inputs, a.device, a.warmup, a.timed)
                result["speedup_vs_compile"] = (result["compile_ms"]["mean"]
                                                / result["new_ms"]["mean"])
            except Exception as e:
                result["compile_unavailable"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        else:
            result["compile_unavailable"] = f"torch.compile is not in PyTorch {torch.__version__}"
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
