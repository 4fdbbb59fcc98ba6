"""A CPU model of FlashAttention's numerics against attention_fwd's tolerance: would a kernel that
rounds P to fp16 once before P V (as FlashAttention and PyTorch's SDPA do) pass the task's check?

One head of causal attention with the task's inputs (fp16, N(0, 1)), computed as the tensor-core
templates do it: tiles of BLOCK_N keys, an online softmax in fp32 (running max, rescaled sums),
P V accumulated in fp32 with P either kept at fp32 accuracy ("split": flash_pipe's fp16 hi + lo
parts) or rounded once to fp16 ("once"); and, for contrast, a wrong kernel that drops the keys
S - 128 or more behind each query ("drop": the last 128 rows miss some of their first 128 keys).
Each is compared with a float64 reference rounded to fp16, with kfoundry's figures
(src/eval/compare.cpp): the largest absolute error, the share of elements past 1% relative error
(|out - ref| / (|ref| + 1e-6)), and the elements past atol + rtol * |ref| for several atol.

With --bf16 the same for the attention_fwd.bf16 variant: inputs, P ("once") and the outputs in
bfloat16 (rounded to nearest even from fp32; numpy has no bfloat16 type).

Usage: python3 bench/attention_numerics.py [--bf16] [S ...]   (default: 300 1024 4096; D = 128,
BLOCK_N = 64). Needs numpy (Debian: python3-numpy). Prints one line per length and variant.
"""
import sys

import numpy as np

D, BLOCK_N, RTOL = 128, 64, 1e-2
ATOLS = (5e-3, 2e-3, 1e-3, 2e-4)
BF16 = "--bf16" in sys.argv[1:]


def to_bf16(x):
    """x rounded to bfloat16 (nearest even; NaN kept), held as float32."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return np.where(np.isnan(x), np.float32(np.nan), r.view(np.float32)).astype(np.float32)


def narrow(x):
    """x in the task's element type (fp16, or bf16 with --bf16), held as float32."""
    return to_bf16(x) if BF16 else np.asarray(x).astype(np.float16).astype(np.float32)


def scores(q, k, dtype):
    """scale * Q K^T in `dtype`, -inf where a key comes after its query."""
    s = (q.astype(dtype) @ k.astype(dtype).T) / dtype(np.sqrt(D))
    s[np.triu(np.ones(s.shape, bool), 1)] = -np.inf
    return s


def attention(q, k, v, p_once):
    S = q.shape[0]
    s = scores(q, k, np.float32)
    m = np.full(S, -np.inf, np.float32)
    l = np.zeros(S, np.float32)
    o = np.zeros((S, D), np.float32)
    for n0 in range(0, S, BLOCK_N):
        tile = s[:, n0:n0 + BLOCK_N]
        m_new = np.maximum(m, tile.max(axis=1))
        seen = np.isfinite(m_new)  # rows with a key in this tile or before it
        m_safe = np.where(seen, m_new, 0).astype(np.float32)
        alpha = np.where(seen, np.exp(np.where(seen, m - m_safe, 0)), 1).astype(np.float32)
        p = np.exp(tile - m_safe[:, None]).astype(np.float32)  # 0 where masked
        p_mma = narrow(p) if p_once else p
        l = l * alpha + p.sum(axis=1)
        o = o * alpha[:, None] + p_mma @ v[n0:n0 + BLOCK_N].astype(np.float32)
        m = m_new
    return narrow(o / l[:, None])


def reference(q, k, v, window=None):
    """float64, rounded to fp16; with `window`, the keys window or more behind a query are
    dropped (a wrong kernel that the tolerance must catch)."""
    s = scores(q, k, np.float64)
    if window:
        s[np.tril(np.ones(s.shape, bool), -window)] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return narrow((p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64))


for S in [int(a) for a in sys.argv[1:] if a != "--bf16"] or [300, 1024, 4096]:
    rng = np.random.default_rng(S)
    q, k, v = (narrow(rng.standard_normal((S, D))) for _ in range(3))
    ref = reference(q, k, v).astype(np.float64)
    variants = (("split", lambda: attention(q, k, v, False)),
                ("once", lambda: attention(q, k, v, True)),
                ("drop", lambda: reference(q, k, v, window=S - 128)))
    for name, run in variants[:3 if S > 256 else 2]:
        err = np.abs(run().astype(np.float64) - ref)
        over = (err / (np.abs(ref) + 1e-6) > 0.01).mean()
        oot = " ".join(f"atol {a:g}: {int((err > a + RTOL * np.abs(ref)).sum())}" for a in ATOLS)
        print(f"S {S:5d} {name:5s}  max_abs_err {err.max():.2e}  over 1%: {100 * over:.3f}%  "
              f"past tolerance ({oot})  median |ref| {np.median(np.abs(ref)):.3g}", flush=True)
