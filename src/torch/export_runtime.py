# The runtime of a module `kfoundry export --torch` writes (docs/pytorch.md "Exporting the best
# kernel"): the spec above it (the kernel, its configuration, the task's signature, and the launch
# rules, shapes and scalar values translated to Python) is what varies; this part is the same in
# every export.
import copy as _kf_copy
import hashlib as _kf_hashlib
import os as _kf_os
import types as _kf_types

import torch
import torch.nn as nn

_KF_DTYPES = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
              "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
              "bf16": torch.bfloat16}
_KF_SPEC_HASH = _kf_hashlib.sha256(
    (_KERNEL_SOURCE + repr(_DEFINES) + repr(_ARGS)).encode()).hexdigest()[:12]


def _kf_load_problem():
    module = _kf_types.ModuleType(f"kfoundry_export_{_TASK}_problem")
    exec(compile(_PROBLEM_SOURCE, f"<{_TASK}/model.py, as exported>", "exec"), module.__dict__)
    return module


_kf_problem = _kf_load_problem()


def _kf_bind(tensors):
    """The sizes, settings and configuration the launch rules read, from the input tensors'
    shapes (`tensors`: the signature's input buffers in order), and every buffer's shape."""
    inputs = [a for a in _ARGS if a["buffer"] and a["role"] != "out"]
    if len(tensors) != len(inputs):
        raise TypeError(f"{_TASK}: the kernel takes {len(inputs)} input tensors "
                        f"({', '.join(a['name'] for a in inputs)}), got {len(tensors)}")
    v = {}
    for i, dim, size in _SIZE_DIMS:
        t = tensors[i]
        if dim >= t.dim():
            continue
        d = int(t.shape[dim])
        if v.get(size, d) != d:
            raise ValueError(f"{_TASK}: the inputs disagree on the size {size}: {v[size]} and "
                             f"{d} ({inputs[i]['name']} dimension {dim})")
        v[size] = d
    fixed = [s for s in _SIZE_NAMES if s not in v]
    for s in fixed:
        v[s] = _EXPORT_SIZES[s]
    v.update(_SETTINGS)
    v.update(_CONFIG)
    shapes = _shapes(v)
    for t, a in zip(tensors, inputs):
        want = shapes[_ARGS.index(a)]
        count = 1
        for d in want:
            count *= d
        if (tuple(t.shape) != want if t.dim() == len(want) else t.numel() != count):
            note = (f"; {', '.join(f'{s} = {v[s]}' for s in fixed)} fixed at export (no input "
                    "dimension is that size alone)") if fixed else ""
            raise ValueError(f"{_TASK}: {a['name']} has shape {tuple(t.shape)}, the kernel "
                             f"expects {want} at {dict((s, v[s]) for s in _SIZE_NAMES)}{note}")
        if t.dtype != _KF_DTYPES[a["dtype"]]:
            raise TypeError(f"{_TASK}: {a['name']} is {t.dtype}, the kernel takes "
                            f"{_KF_DTYPES[a['dtype']]}")
    return v, shapes


class _KfOpenCL:
    """The kernel through OpenCL (pyopencl): any OpenCL device, PoCL on a CPU included; the
    tensors are copied to it and the outputs back. PYOPENCL_CTX picks the device."""

    def __init__(self):
        try:
            import pyopencl as cl
            import numpy  # noqa: F401  (pyopencl's buffers are numpy arrays)
        except ImportError as e:
            raise RuntimeError(f"{_TASK}: the exported kernel is OpenCL and needs pyopencl "
                               f"(Debian: python3-pyopencl; pip: pyopencl): {e}") from e
        self.cl = cl
        self.context = cl.create_some_context(interactive=False)
        self.queue = cl.CommandQueue(self.context)
        options = ["-cl-std=CL1.2"] + [f"-D{k}={val}" for k, val in _DEFINES]
        self.program = cl.Program(self.context, _KERNEL_SOURCE).build(options=options)

    def run(self, values, v):
        import numpy as np
        cl, scalars = self.cl, {"i32": np.int32, "i64": np.int64, "f32": np.float32,
                                "f64": np.float64}
        args, back = [], []
        for a, value in zip(_ARGS, values):
            if not a["buffer"]:
                args.append(scalars[a["dtype"]](value))
                continue
            host = value.detach().cpu().contiguous().numpy()
            flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
            args.append(cl.Buffer(self.context, flags, hostbuf=host))
            if a["role"] != "in":
                back.append((value, host, args[-1]))
        for (name, dtype), count in zip(_SCRATCH, _scratch_counts(v)):  # the launches' own
            size = max(1, count) * torch.empty((), dtype=_KF_DTYPES[dtype]).element_size()
            args.append(cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size=size))
        for entry, launch in _LAUNCHES:
            grid, block, _shared = launch(v)
            kernel = cl.Kernel(self.program, entry)
            kernel.set_args(*args)
            cl.enqueue_nd_range_kernel(self.queue, kernel,
                                       tuple(g * b for g, b in zip(grid, block)), block)
        for value, host, buffer in back:
            cl.enqueue_copy(self.queue, host, buffer)
        self.queue.finish()
        for value, host, _ in back:
            value.copy_(torch.from_numpy(host))


_KF_CUDA_TYPES = {"i32": "int", "i64": "long long", "f32": "float", "f64": "double"}


def _kf_cuda_launcher(index, entry):
    """A C++ function that launches `entry` with the signature's arguments, whatever their C
    types (the arguments go by address, as cuLaunchKernel takes them)."""
    lines, ptrs, n_int, n_float, b = [], [], 0, 0, 0
    for a in _ARGS:
        if a["buffer"]:
            lines.append(f"  void* a{len(ptrs)} = buffers[{b}].data_ptr();")
            b += 1
        elif a["dtype"] in ("i32", "i64"):
            lines.append(f"  {_KF_CUDA_TYPES[a['dtype']]} a{len(ptrs)} = "
                         f"static_cast<{_KF_CUDA_TYPES[a['dtype']]}>(ints[{n_int}]);")
            n_int += 1
        else:
            lines.append(f"  {_KF_CUDA_TYPES[a['dtype']]} a{len(ptrs)} = "
                         f"static_cast<{_KF_CUDA_TYPES[a['dtype']]}>(floats[{n_float}]);")
            n_float += 1
        ptrs.append(f"&a{len(ptrs)}")
    for _ in _SCRATCH:  # the candidate's scratch buffers, after the signature's arguments
        lines.append(f"  void* a{len(ptrs)} = buffers[{b}].data_ptr();")
        b += 1
        ptrs.append(f"&a{len(ptrs)}")
    body = "\n".join(lines)
    return f"""
void kf_launch_{index}(std::vector<int64_t> g, std::vector<int64_t> b, int64_t shared,
                       std::vector<at::Tensor> buffers, std::vector<int64_t> ints,
                       std::vector<double> floats) {{
{body}
  void* args[] = {{{', '.join(ptrs)}}};
  const void* fn = reinterpret_cast<const void*>(&{entry});
  if (shared > 48 * 1024)
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
  cudaError_t e = cudaLaunchKernel(fn, dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2]), args,
                                   (size_t)shared, at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(e == cudaSuccess, "kfoundry export: launching {entry} failed: ",
              cudaGetErrorString(e));
}}
"""


def _kf_cuda_source():
    """The .cu file load_inline compiles: the kernel as it won, then one launcher per launch."""
    head = "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
    head += "#include <cuda_runtime.h>\n#include <vector>\n"
    return head + _KERNEL_SOURCE + "".join(
        _kf_cuda_launcher(i, entry) for i, (entry, _) in enumerate(_LAUNCHES))


class _KfCuda:
    """The kernel through torch.utils.cpp_extension.load_inline (nvcc, at PyTorch's C++
    standard), on PyTorch's current stream; the configuration arrives as -D defines, as
    kfoundry's NVRTC compile gives it."""

    def __init__(self):
        from torch.utils.cpp_extension import load_inline
        decl = ("void kf_launch_{}(std::vector<int64_t>, std::vector<int64_t>, int64_t, "
                "std::vector<at::Tensor>, std::vector<int64_t>, std::vector<double>);")
        self.ext = load_inline(
            name=f"kfoundry_{_TASK}_{_KF_SPEC_HASH}",
            cpp_sources=["#include <torch/extension.h>\n#include <vector>\n"] +
            [decl.format(i) for i in range(len(_LAUNCHES))],
            cuda_sources=[_kf_cuda_source()],
            functions=[f"kf_launch_{i}" for i in range(len(_LAUNCHES))],
            extra_cuda_cflags=["-lineinfo"] + [f"-D{k}={val}" for k, val in _DEFINES])

    def run(self, values, v):
        buffers = [x for a, x in zip(_ARGS, values) if a["buffer"]]
        device = buffers[0].device if buffers else torch.device("cuda")
        buffers += [torch.empty(max(1, count), dtype=_KF_DTYPES[dtype], device=device)
                    for (_, dtype), count in zip(_SCRATCH, _scratch_counts(v))]
        ints = [int(x) for a, x in zip(_ARGS, values) if not a["buffer"] and a["dtype"][0] == "i"]
        floats = [float(x) for a, x in zip(_ARGS, values)
                  if not a["buffer"] and a["dtype"][0] == "f"]
        for i, (_, launch) in enumerate(_LAUNCHES):
            grid, block, shared = launch(v)
            pad = lambda d: list(d) + [1] * (3 - len(d))  # noqa: E731
            getattr(self.ext, f"kf_launch_{i}")(pad(grid), pad(block), shared, buffers, ints,
                                                floats)


_kf_backends = {}


def _kf_backend(device):
    if _LANGUAGE == "opencl":
        kind = "opencl"
    elif device.type == "cuda":
        kind = "cuda"
    else:
        raise RuntimeError(f"{_TASK}: the exported kernel is CUDA; its tensors must be on a CUDA "
                           f"device (got {device})")
    if kind not in _kf_backends:
        _kf_backends[kind] = _KfOpenCL() if kind == "opencl" else _KfCuda()
    return _kf_backends[kind]


def kfoundry_kernel(tensors):
    """Runs the exported kernel on `tensors` (the task's input buffers in signature order:
    forward's inputs, then the module's parameters and buffers); returns its outputs."""
    tensors = [t.detach().contiguous() for t in tensors]
    v, shapes = _kf_bind(tensors)
    device = tensors[0].device
    scalars = _scalars(v)
    values, outs, it = [], [], iter(tensors)
    for i, a in enumerate(_ARGS):
        if not a["buffer"]:
            values.append(scalars[i])
        elif a["role"] == "out":
            values.append(torch.empty(shapes[i], dtype=_KF_DTYPES[a["dtype"]], device=device))
            outs.append(values[-1])
        elif a["role"] == "inout":  # the kernel updates a copy, returned among the outputs
            values.append(next(it).clone())
            outs.append(values[-1])
        else:
            values.append(next(it))
    with torch.cuda.device(device) if device.type == "cuda" else _kf_no_context():
        _kf_backend(device).run(values, v)
    return outs


class _kf_no_context:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _kf_register_op():
    """kfoundry_kernel as the operator torch.ops.kfoundry_<hash>.<task> (torch.library), so
    torch.compile and TorchScript see one opaque op; forward only (no gradient)."""
    ns, name = f"kfoundry_{_KF_SPEC_HASH}", _TASK
    try:
        existing = getattr(getattr(torch.ops, ns), name)
    except (AttributeError, RuntimeError):  # not registered yet
        existing = None
    try:
        if hasattr(torch.library, "custom_op"):  # PyTorch >= 2.4
            def run(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
                return kfoundry_kernel(tensors)

            def fake(tensors):  # the outputs' shapes alone, for torch.compile
                _, shapes = _kf_bind(tensors)
                return [torch.empty(shapes[i], dtype=_KF_DTYPES[a["dtype"]],
                                    device=tensors[0].device)
                        for i, a in enumerate(_ARGS) if a["buffer"] and a["role"] != "in"]

            op = torch.library.custom_op(f"{ns}::{name}", mutates_args=())(run)
            op.register_fake(fake)
            return op

        lib = torch.library.Library(ns, "DEF")  # PyTorch 1.13 to 2.3
        lib.define(f"{name}(Tensor[] tensors) -> Tensor[]")
        for key in ("CPU", "CUDA"):
            lib.impl(name, kfoundry_kernel, key)
        _kf_libraries.append(lib)
        return getattr(getattr(torch.ops, ns), name)
    except Exception:  # the module imported twice, or a PyTorch without torch.library
        return existing or kfoundry_kernel


_kf_libraries = []


def _kf_flag(name):
    return _kf_os.environ.get(name, "") not in ("", "0", "false", "no")


class ModelNew(nn.Module):
    """The problem's Model with its forward done by the exported kernel: the same constructor
    arguments (the reference Model is built inside, so its parameters are created as Model
    creates them) and the same forward. `check=True` (or KFOUNDRY_EXPORT_CHECK=1) compares the
    first call's outputs with the reference Model's at the task's tolerance and raises with the
    largest error if they differ."""

    def __init__(self, *init_inputs, check=None):
        super().__init__()
        self.model = _kf_problem.Model(*init_inputs)
        self.check = _kf_flag("KFOUNDRY_EXPORT_CHECK") if check is None else bool(check)
        self._checked = False

    def forward(self, *inputs):
        named = list(self.model.named_parameters()) + list(self.model.named_buffers())
        outs = kfoundry_op(list(inputs) + [t for _, t in named])
        if self.check and not self._checked:
            self._compare(inputs, outs)
            self._checked = True
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _compare(self, inputs, outs):
        with torch.no_grad():
            ref = _kf_copy.deepcopy(self.model)(*inputs)  # a copy: training mode updates buffers
        refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        v, _ = _kf_bind([t.detach() for t in list(inputs) + [t for _, t in list(
            self.model.named_parameters()) + list(self.model.named_buffers())]])
        atol, rtol, max_bad_ratio = _tolerance(v)
        for out, want in zip(outs, refs):
            o, r = out.double().reshape(-1), want.detach().double().reshape(-1).to(out.device)
            err = (o - r).abs()
            bad = (err > atol + rtol * r.abs()) | (o.isnan() != r.isnan())
            worst = float(err[~err.isnan()].max()) if err.numel() else 0.0
            if int(bad.sum()) > max_bad_ratio * o.numel() or o.numel() != r.numel():
                raise RuntimeError(f"{_TASK}: the exported kernel's output differs from the "
                                   f"reference Model's: {int(bad.sum())} of {o.numel()} elements "
                                   f"past atol {atol} + rtol {rtol} * |ref|, max abs error "
                                   f"{worst:g}")


kfoundry_op = _kf_register_op()
