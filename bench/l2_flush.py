"""Does the L2 flush before a timed launch tax the launch? (BENCHMARKS.md, 2026-12-04 "the L2
flush".) A torch device-to-device copy of N bytes, timed with CUDA events after each of four
flushes, median of 40: a read-modify-write of 512 MB (as the evaluator's flush was: it leaves the
L2 full of dirty lines), a plain write of it, the write followed by a read of the same bytes
(what kfoundry's CUDA flush does now: the L2 is left with clean lines), and no flush at all.
Sizes: the bytes rmsnorm, layernorm and softmax_rows move at their size of record, and 2 GiB.

Usage (on the GPU machine, with PyTorch): python3 bench/l2_flush.py
"""
import torch

dev = torch.device("cuda")
flush = torch.empty(512 * 1024 * 1024 // 4, dtype=torch.float32, device=dev)
sink = torch.empty(1, dtype=torch.float32, device=dev)
modes = {
    "add_(write+read)": lambda: flush.add_(1),
    "zero_(write)": lambda: flush.zero_(),
    "add_then_sum(read last)": lambda: (flush.add_(1), sink.copy_(flush.sum().reshape(1))),
    "none": lambda: None,
}


def timed(fn, pre, runs=40):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        pre()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


sizes = [("rmsnorm", 2 * 2 * 8192 * 4096), ("layernorm", 2 * 2 * 8192 * 4544),
         ("softmax", 2 * 2 * 4096 * 32000), ("2GiB", 2 * 2**30)]
for name, nbytes in sizes:
    n = nbytes // 2 // 2  # fp16 elements, each read once and written once
    a = torch.randn(n, device=dev).half()
    b = torch.empty_like(a)
    row = {m: timed(lambda: b.copy_(a), pre) for m, pre in modes.items()}
    print(name, nbytes, {m: f"{t * 1e3:.1f}us {nbytes / t / 1e6:.0f}GB/s" for m, t in row.items()},
          flush=True)
