"""How far PyTorch's scaled_dot_product_attention (the anchor of attention_fwd) lands from an
fp32 reference, measured with kfoundry's own figures (src/eval/compare.cpp): the largest absolute
error, the elements past atol + rtol * |ref|, and the share past 1% relative error
(|out - ref| / (|ref| + 1e-6)), at each of the task's check sizes and at its size of record:
the elements past tolerance for several atol, rtol being the task's.
The reference is computed in fp32 (float64 where the size is small) and rounded to fp16, as the
task's reference kernel writes it. Inputs are drawn fresh with the task's distribution, N(0, 1).

Usage: python3 bench/attention_tolerance.py
Prints one JSON object per size set.
"""
import json
import tomllib

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")

with open("tasks/attention_fwd/task.toml", "rb") as f:
    task = tomllib.load(f)
tol = task["tolerance"]
rtol = float(tol["rtol"])
ATOLS = (5e-3, 1e-3, 5e-4, 2e-4)


def reference(q, k, v):
    """fp32 (or float64) causal attention, a few heads at a time, rounded to fp16."""
    B, H, S, D = q.shape
    dtype = torch.float64 if S <= 1024 else torch.float32
    out = torch.empty(B, H, S, D, dtype=torch.float16, device=dev)
    mask = torch.ones(S, S, dtype=torch.bool, device=dev).triu(1)
    for b in range(B):
        for h0 in range(0, H, 8):
            qs, ks, vs = (x[b, h0:h0 + 8].to(dtype) for x in (q, k, v))
            s = (qs @ ks.transpose(-1, -2)) / (D ** 0.5)
            s.masked_fill_(mask, float("-inf"))
            out[b, h0:h0 + 8] = (torch.softmax(s, dim=-1) @ vs).to(torch.float16)
    return out


def figures(ref, out):
    r, o = ref.double().flatten(), out.double().flatten()
    err = (r - o).abs()
    rel = err / (r.abs() + 1e-6)
    return {"max_abs_err": err.max().item(),
            "p99_abs_err": err.quantile(0.99).item() if err.numel() < 1 << 24 else None,
            "out_of_tol": {f"{a:g}": int((err > a + rtol * r.abs()).sum()) for a in ATOLS},
            "over_1pct_ratio": (rel > 0.01).double().mean().item(),
            "ref_abs_median": r.abs().median().item(),
            "elements": r.numel()}


sets = [dict(c, kind="check") for c in task["check"]] + \
       [dict(b, kind="bench") for b in task["bench"] if b["device_class"] == "gpu"]
for s in sets:
    torch.manual_seed(0)
    q, k, v = (torch.randn(s["B"], s["H"], s["S"], s["D"], device=dev).to(torch.float16)
               for _ in range(3))
    ref = reference(q, k, v)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print(json.dumps({"set": s["name"], "sizes": {n: s[n] for n in "BHSD"}, "rtol": rtol,
                      "SDPA": figures(ref, out)}),
          flush=True)
