"""PyTorch baselines for rope_llama3 at the size of record, on the same device as kfoundry's run:
Hugging Face `apply_rotary_pos_emb` in eager mode and under torch.compile, and the device-to-device
copy bandwidth (bytes read + written). Timed with CUDA events, L2 flushed before every launch
(a 512 MB write), median of the runs. Inputs are drawn fresh (normal), never zeros.

Prints one JSON object: {"eager_ms", "compiled_ms", "copy_gbs", "max_abs_err_vs_fp32", ...}."""
import json
import sys

import torch

B, S, HQ, HKV, D = 8, 4096, 32, 8, 128
THETA = 500000.0
RUNS = 50

try:
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb  # the real one
    source = "transformers"
except Exception:  # a verbatim copy of the Hugging Face function
    source = "local copy"

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
        cos = cos.unsqueeze(unsqueeze_dim)
        sin = sin.unsqueeze(unsqueeze_dim)
        return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def rope(q, k, cos, sin):
    # Our layout is [B, S, H, D]; HF broadcasts cos [B, S, D] over the head axis with unsqueeze_dim=2.
    return apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=2)


def timed(fn, flush):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        flush.add_(1)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def main():
    dev = torch.device("cuda")
    torch.manual_seed(int.from_bytes(open("/dev/urandom", "rb").read(4), "little"))
    q = torch.randn(B, S, HQ, D, device=dev, dtype=torch.float16)
    k = torch.randn(B, S, HKV, D, device=dev, dtype=torch.float16)
    pos = torch.arange(S, device=dev, dtype=torch.float32)
    inv_freq = THETA ** (-torch.arange(0, D // 2, device=dev, dtype=torch.float32) * 2 / D)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None].expand(B, S, D)
    cos, sin = emb.cos().half(), emb.sin().half()  # HF casts the tables to the activations' dtype
    flush = torch.empty(512 * 2**20 // 4, device=dev, dtype=torch.float32)

    eager = timed(lambda: rope(q, k, cos, sin), flush)
    compiled_fn = torch.compile(rope)
    compiled = timed(lambda: compiled_fn(q, k, cos, sin), flush)

    ref_q, _ = apply_rotary_pos_emb(q.float(), k.float(), emb.cos(), emb.sin(), unsqueeze_dim=2)
    err = (rope(q, k, cos, sin)[0].float() - ref_q).abs().max().item()

    src = torch.empty(2**30 // 2, device=dev, dtype=torch.float16).normal_()
    dst = torch.empty_like(src)
    copy_ms = timed(lambda: dst.copy_(src), flush)[1]
    out = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "apply_rotary_pos_emb": source,
        "sizes": {"B": B, "S": S, "Hq": HQ, "Hkv": HKV, "D": D},
        "eager_ms": {"median": eager[0], "min": eager[1], "max": eager[2], "runs": RUNS},
        "compiled_ms": {"median": compiled[0], "min": compiled[1], "max": compiled[2], "runs": RUNS},
        "copy_gbs": 2 * src.numel() * 2 / (copy_ms * 1e-3) / 1e9,
        "eager_max_abs_err_vs_fp32": err,
    }
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
