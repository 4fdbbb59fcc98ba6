"""Library anchors for the task library (issue 15) at each task's size of record, on the GPU that
kfoundry's runs use, in the same call: PyTorch eager, torch.compile, and the vendor library where
there is one (cuBLAS through torch.matmul, cuSPARSE through torch.sparse_csr, SDPA), and the
device-to-device copy bandwidth. Sizes are read from tasks/NAME/task.toml (the `record` set);
inputs are drawn fresh with the task's distributions (never zeros). Timed with CUDA events, L2
flushed before every launch (a 512 MB read-modify-write, then a read of it: the L2 is left with
clean lines, as kfoundry's flush leaves it), median of the runs.

Usage: python3 bench/task_anchors.py [TASK...]   (default: every library task; a variant such as
gemm_f16.bf16 is timed in its own element type at its task's sizes)
Prints one JSON object per task on its own line: {"task", "sizes", "anchors": {name: ms},
"copy_same_bytes_gbs"} (the last: a copy moving the task's min_bytes, read + written).
"""
import json
import math
import sys
import tomllib

import torch
import torch.nn.functional as F

RUNS = 30
torch.backends.cuda.matmul.allow_tf32 = False  # gemm_f32 is an fp32 product: no TF32 anchor
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")
flush = torch.empty(512 * 1024 * 1024 // 4, dtype=torch.float32, device=dev)
flush_sum = torch.empty((), dtype=torch.float32, device=dev)


def flush_l2():
    """As kfoundry's evaluator: a write over the L2's size, then a read of it, so that the L2 holds
    no input of the next launch and no dirty line it would have to write back."""
    flush.add_(1)
    flush_sum.copy_(flush.sum())


def timed(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        flush_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def task_file(task):
    """A variant (gemm_f16.bf16) is a setting of its task's folder."""
    return f"tasks/{task.split('.')[0]}/task.toml"


def record_sizes(task):
    with open(task_file(task), "rb") as f:
        t = tomllib.load(f)
    for s in t["bench"]:
        if s["name"] == "record":
            return {k: v for k, v in s.items() if k not in ("name", "device_class")}
    raise SystemExit(f"{task}: no record size set")


def eager_and_compiled(fn, *args):
    out = {"eager": timed(lambda: fn(*args))}
    try:
        compiled = torch.compile(fn)
        out["torch.compile"] = timed(lambda: compiled(*args))
    except Exception as e:  # noqa: BLE001 (reported, not fatal)
        out["torch.compile_error"] = str(e)[:200]
    return out


def softmax_rows(s):
    x = torch.randn(s["R"], s["N"], device=dev, dtype=torch.float16) * 2
    return eager_and_compiled(lambda x: torch.softmax(x.float(), -1).half(), x) | {
        "eager_fp16 (torch.softmax on half)": timed(lambda: torch.softmax(x, -1))}


def rmsnorm(s):
    x = torch.randn(s["R"], s["C"], device=dev, dtype=torch.float16)
    w = torch.randn(s["C"], device=dev, dtype=torch.float16)
    eps = 1e-5

    def ref(x, w):  # Llama's LlamaRMSNorm
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).half() * w
    out = eager_and_compiled(ref, x, w)
    if hasattr(F, "rms_norm"):
        out["F.rms_norm"] = timed(lambda: F.rms_norm(x, (s["C"],), w, eps))
    return out


def layernorm(s):
    x = torch.randn(s["R"], s["C"], device=dev, dtype=torch.float16)
    w = torch.randn(s["C"], device=dev, dtype=torch.float16)
    b = torch.randn(s["C"], device=dev, dtype=torch.float16)
    return eager_and_compiled(lambda x, w, b: F.layer_norm(x, (s["C"],), w, b, 1e-5), x, w, b)


def gemm(dtype):
    def run(s):
        a = torch.rand(s["M"], s["K"], device=dev, dtype=dtype) * 2 - 1
        b = torch.rand(s["K"], s["N"], device=dev, dtype=dtype) * 2 - 1
        return {"cuBLAS (torch.matmul)": timed(lambda: torch.matmul(a, b))}
    return run


def transpose_f32(s):
    x = torch.randn(s["R"], s["C"], device=dev)
    return eager_and_compiled(lambda x: x.t().contiguous(), x)


def reduce_sum(s):
    x = torch.randn(s["N"], device=dev)
    return eager_and_compiled(lambda x: x.sum(), x)


def spmv_csr(s):
    R, C, NNZ = s["R"], s["C"], s["NNZ"]
    # The same power-law structure kfoundry generates would need its generator; cuSPARSE is timed
    # on a matrix with the same shape, nonzero count and row-length skew drawn here.
    with open("tasks/spmv_csr/task.toml", "rb") as f:
        t = tomllib.load(f)
    init = next(a["init"] for a in t["args"] if a.get("init", {}).get("dist") == "csr_row_ptr")
    skew = init.get("skew", 0.0)
    g = torch.Generator().manual_seed(1)
    rank = torch.randperm(R, generator=g).double()
    w = (rank + 1) ** (-skew)
    lengths = torch.clamp(torch.floor(NNZ * w / w.sum()), max=C).long()
    lengths[torch.argsort(rank)[: NNZ - int(lengths.sum())]] += 1
    row_ptr = torch.zeros(R + 1, dtype=torch.int64)
    row_ptr[1:] = torch.cumsum(lengths, 0)
    cols = torch.randint(0, C, (NNZ,), generator=g)  # duplicates within a row: fine for timing
    vals = torch.rand(NNZ)
    A = torch.sparse_csr_tensor(row_ptr.int(), cols.int(), vals, (R, C)).to(dev)
    x = torch.rand(C, device=dev)
    return {"cuSPARSE (torch.sparse_csr @ x)": timed(lambda: torch.mv(A, x)),
            "longest_row": int(lengths.max())}


def attention(dtype):
    def run(s):
        q, k, v = (torch.randn(s["B"], s["H"], s["S"], s["D"], device=dev, dtype=dtype)
                   for _ in range(3))
        return {"SDPA (causal)": timed(
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))}
    return run


def ray_sphere(s):
    return {}  # no library anchor: a brute-force nearest hit has no vendor routine


ANCHORS = {"softmax_rows": softmax_rows, "rmsnorm": rmsnorm, "layernorm": layernorm,
           "gemm_f32": gemm(torch.float32), "gemm_f16": gemm(torch.float16),
           "gemm_f16.bf16": gemm(torch.bfloat16),
           "transpose_f32": transpose_f32, "reduce_sum": reduce_sum, "spmv_csr": spmv_csr,
           "attention_fwd": attention(torch.float16), "attention_fwd.bf16": attention(torch.bfloat16),
           "ray_sphere": ray_sphere}


def copy_gbs(total_bytes=2 << 30):
    """GB/s of a device-to-device copy moving `total_bytes` (half read, half written)."""
    a = torch.empty(max(1, int(total_bytes) // 8), dtype=torch.float32, device=dev).normal_()
    b = torch.empty_like(a)
    ms = timed(lambda: b.copy_(a))
    return 2 * a.numel() * 4 / ms / 1e6


def task_bytes(task, sizes):
    """The task's min_bytes at these sizes (its expression uses + - * // and names only)."""
    with open(task_file(task), "rb") as f:
        expr = tomllib.load(f)["cost"]["min_bytes"]
    return eval(expr, {"__builtins__": {}}, dict(sizes))  # noqa: S307 - our own task files


def main():
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "copy_gbs": copy_gbs()}), flush=True)
    for task in sys.argv[1:] or ANCHORS:
        s = record_sizes(task)
        try:
            anchors = ANCHORS[task](s)
        except Exception as e:  # noqa: BLE001
            anchors = {"error": str(e)[:300]}
        # A copy that moves the task's own bytes: what a kernel of that size can reach (launch
        # and ramp-up weigh more on 100 MB than on the 2 GiB copy above).
        same = copy_gbs(task_bytes(task, s))
        print(json.dumps({"task": task, "sizes": s, "anchors": anchors,
                          "copy_same_bytes_gbs": same}), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
