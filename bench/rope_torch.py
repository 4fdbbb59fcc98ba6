"""PyTorch baselines for rope_llama3 at the size of record, on the same device as kfoundry's run:
Hugging Face `apply_rotary_pos_emb` in eager mode and under torch.compile, and the device-to-device
copy bandwidth (bytes read + written). Timed with CUDA events, L2 flushed before every launch
(a 512 MB write), median of the runs. Inputs are drawn fresh (normal), never zeros.

With `--kernel FILE.cu` (a kfoundry kernel, e.g. optimize's best.cu), that kernel is compiled with
NVRTC at its @param defaults and launched through the driver API on the same q/k tensors, timed the
same way in the same process, and checked against the fp32 reference; the bandwidth floor (the
task's minimum bytes over the measured copy bandwidth) is reported beside it.

Prints one JSON object: {"eager_ms", "compiled_ms", "copy_gbs", "max_abs_err_vs_fp32", ...}."""
import ctypes
import glob
import json
import re
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


class OurKernel:
    """A kfoundry CUDA kernel file, compiled by NVRTC at its @param defaults, launched by cuLaunchKernel."""

    def __init__(self, path, arch):
        self.source = open(path).read()
        ann = dict(re.findall(r"//\s*@(kernel|grid|block)\s+(.+)", self.source))
        self.entry, self.grid_expr, self.block_expr = ann["kernel"].strip(), ann["grid"], ann["block"]
        self.params = {m[0]: m[1] for m in re.findall(r"//\s*@param\s+(\w+)\s+in\s+.*\bdefault\s+(\w+)", self.source)}
        lib = lambda pat: sorted(glob.glob(pat))[-1]
        nvrtc = ctypes.CDLL(lib("/usr/local/cuda*/lib64/libnvrtc.so*"))
        self.cu = ctypes.CDLL("libcuda.so.1")
        prog = ctypes.c_void_p()
        assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), self.source.encode(), b"best.cu", 0, None, None) == 0
        inc = glob.glob("/usr/local/cuda*/include")[0]
        opts = [f"--gpu-architecture=sm_{arch}", "-std=c++17", f"-I{inc}"] + [f"-D{k}={v}" for k, v in self.params.items()]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if rc != 0:
            raise RuntimeError("NVRTC: " + log.value.decode())
        nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetCUBIN(prog, cubin)
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        assert self.cu.cuModuleLoadData(ctypes.byref(self.module), cubin) == 0
        assert self.cu.cuModuleGetFunction(ctypes.byref(self.function), self.module, self.entry.encode()) == 0

    def launcher(self, args, sizes):
        env = dict(sizes, **{k: int(v) for k, v in self.params.items()}, ceil_div=lambda a, b: -(-a // b))
        grid, block = int(eval(self.grid_expr, {}, env)), int(eval(self.block_expr, {}, env))
        holders = [ctypes.c_void_p(a.data_ptr()) if isinstance(a, torch.Tensor) else ctypes.c_int(a) for a in args]
        params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])

        def launch():
            rc = self.cu.cuLaunchKernel(self.function, grid, 1, 1, block, 1, 1, 0, None, params, None)
            if rc != 0:
                raise RuntimeError(f"cuLaunchKernel: {rc}")
        launch.keep = (holders, params)
        return launch


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
    copy_gbs = 2 * src.numel() * 2 / (copy_ms * 1e-3) / 1e9
    ours = None
    if "--kernel" in sys.argv:
        path = sys.argv[sys.argv.index("--kernel") + 1]
        major, minor = torch.cuda.get_device_capability()
        kernel = OurKernel(path, f"{major}{minor}")
        cos_t = torch.outer(pos, inv_freq).cos().contiguous()  # our task's tables: fp32 [S, D/2]
        sin_t = torch.outer(pos, inv_freq).sin().contiguous()
        q_out, k_out = torch.empty_like(q).fill_(float("nan")), torch.empty_like(k).fill_(float("nan"))
        sizes = {"B": B, "S": S, "Hq": HQ, "Hkv": HKV, "D": D}
        launch = kernel.launcher([q, k, cos_t, sin_t, q_out, k_out, B, S, HQ, HKV, D], sizes)
        t = timed(launch, flush)
        torch.cuda.synchronize()
        ref_q, ref_k = apply_rotary_pos_emb(q.float(), k.float(), emb.cos(), emb.sin(), unsqueeze_dim=2)
        min_bytes = 2 * 2 * B * S * (HQ + HKV) * D + 2 * 4 * S * (D // 2)
        floor_ms = min_bytes / (copy_gbs * 1e9) * 1e3
        ours = {"file": path, "config": kernel.params,
                "ms": {"median": t[0], "min": t[1], "max": t[2], "runs": RUNS},
                "max_abs_err_vs_fp32": max((q_out.float() - ref_q).abs().max().item(),
                                           (k_out.float() - ref_k).abs().max().item()),
                "bandwidth_floor_ms": floor_ms,
                "fraction_of_floor": floor_ms / t[0],
                "speedup_vs_eager": eager[0] / t[0], "speedup_vs_compiled": compiled[0] / t[0]}
    out = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "apply_rotary_pos_emb": source,
        "sizes": {"B": B, "S": S, "Hq": HQ, "Hkv": HKV, "D": D},
        "eager_ms": {"median": eager[0], "min": eager[1], "max": eager[2], "runs": RUNS},
        "compiled_ms": {"median": compiled[0], "min": compiled[1], "max": compiled[2], "runs": RUNS},
        "copy_gbs": copy_gbs,
        "eager_max_abs_err_vs_fp32": err,
        "ours": ours,
    }
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
