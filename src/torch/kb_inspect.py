#!/usr/bin/env python3
"""Reads a PyTorch problem in KernelBench's form and says, as one JSON object on stdout, what a
task needs from it: `kfoundry import` runs this in a child process (src/torch/import.cpp).

    python3 kb_inspect.py PROBLEM.py

The file must define `class Model`, `get_inputs()` and `get_init_inputs()`, with its sizes as
module-level integer constants (`batch_size = 16`, or the elements of a literal tuple such as
`row_shape = (24576,)`, named `row_shape_0`). The answer:

  {"sizes": [{"name", "value"}],                  the constants the tensors' shapes follow
   "constants": [{"name", "value"}],              every module-level integer, for the record
   "inputs": [{"name", "dtype", "shape", "dist"}], get_inputs() in order
   "parameters": [{"name", "torch_name", "kind", "dtype", "shape", "init"}],
   "outputs": [{"name", "dtype", "shape"}],       forward's result, in order
   "size_sets": {"bench": {...}, "cpu": {...}, "check": [{"name", "sizes"}]},
   "op": {"class", ...} or null}                  the op class forward is, where recognised

with every shape a list of expressions over the sizes ("dim1", "height - 1", "1"). `op` says which
of the library's op classes forward is, read from a torch.fx trace (recognise_op below), so import
can offer starting kernels: "elementwise" (one unary op, `expr` its OpenCL form over `v`),
"softmax", "rmsnorm", "layernorm", "reduction" (sum or mean) and "scan" (cumsum) over one line of
the input viewed as [outer, extent, inner] (C expressions over the sizes), and "matmul" (m, n, k).
A problem that cannot be imported exits 2 with {"error": "one line"}.

How shapes are found: the file runs with chosen values for its constants (its own assignments
are followed by an override, so `input_shape = (num_classes,)` follows num_classes). A constant is
a size when changing it changes an input's shape; get_inputs() runs on the meta device there, so
the problem's own (large) values cost no memory. Then the model runs for real at five small
probes where every size has its own value: each dimension is fitted as `a * size + b`, else as
`(size + b) // q` (a strided window; where several such forms fit the probes, the model runs again
where they part), and the first probe runs twice with different seeds, so an output whose shape
follows the data is caught. Every derived size set is run again and must give the
shapes the expressions say. Distributions are read from get_inputs' source (ast), never guessed
from values: torch.rand is uniform [0, 1), torch.randn normal (0, 1), torch.randint integers.
"""

import ast
import inspect
import json
import math
import sys

EXIT_CANNOT_IMPORT = 2
EXIT_NO_TORCH = 3  # kPythonNoTorch in python_process.hpp: kfoundry then tries /usr/bin/python3
# Elements of all tensors together at the CPU benchmark set (PoCL runs an evaluation of it, the
# checks and the timed runs, in well under a second) and at the largest check set.
CPU_ELEMENTS = 1 << 18
CHECK_ELEMENTS = 1 << 16
# Probe values: each size gets its own at each probe, and no two differences coincide.
# Five probes, so a strided window's floor ((height + 1) // 2) is told from chance.
PROBES = [
    [11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53],
    [14, 18, 23, 26, 31, 38, 41, 48, 53, 56, 61, 68],
    [9, 16, 20, 24, 27, 34, 36, 43, 46, 50, 54, 62],
    [12, 15, 21, 22, 25, 33, 35, 39, 44, 45, 49, 57],
    [17, 10, 26, 29, 35, 40, 46, 51, 58, 63, 65, 71],
]
# A dimension is a * size + b, else (size + b) // q for a stride q up to this.
MAX_STRIDE = 16
# Check sets: small and ragged values, none a multiple of a block or vector width.
TINY = [3, 5, 7, 2, 9, 6, 11, 13, 4, 15, 17, 19]
RAGGED = [37, 29, 23, 19, 17, 13, 11, 31, 41, 43, 47, 53]
DTYPES = {
    "torch.float32": "f32",
    "torch.float16": "f16",
    "torch.bfloat16": "bf16",
    "torch.float64": "f64",
    "torch.int32": "i32",
    "torch.int64": "i64",
    "torch.uint8": "u8",
}
FACTORIES = ["rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
             "zeros", "ones", "empty", "full", "tensor", "arange"]


class CannotImport(Exception):
    pass


class NoTorch(CannotImport):
    pass


class ModelRaised(CannotImport):
    """The problem's own code raised (the file, get_inputs, the constructor or forward)."""


def fail(message):
    raise CannotImport(message)


# --- The problem file, run with chosen values for its constants ---------------------------------

class Problem:
    def __init__(self, path):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                self.source = f.read()
        except (OSError, UnicodeDecodeError) as e:
            fail(f"cannot read it: {e}")
        try:
            self.tree = ast.parse(self.source, filename=path)
        except SyntaxError as e:
            fail(f"line {e.lineno}: syntax error: {e.msg}")
        self.assigned = []       # top-level names assigned, in order
        self.literal_tuples = set()
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name not in self.assigned:
                    self.assigned.append(name)
                if isinstance(node.value, ast.Tuple) and all(
                        isinstance(e, ast.Constant) and type(e.value) is int
                        for e in node.value.elts):
                    self.literal_tuples.add(name)
        functions = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        classes = {n.name for n in self.tree.body if isinstance(n, ast.ClassDef)}
        if "Model" not in classes:
            fail("no class Model (KernelBench's form: class Model, get_inputs(), get_init_inputs())")
        for name in ("get_inputs", "get_init_inputs"):
            if name not in functions:
                fail(f"no function {name}() (KernelBench's form: class Model, get_inputs(), "
                     "get_init_inputs())")
        self.get_inputs_ast = functions["get_inputs"]

    def run(self, overrides):
        """The module's globals with `overrides` (constant name -> int) in force."""
        tree = ast.parse(self.source, filename=self.path)
        body = []
        for node in tree.body:
            body.append(node)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                body.append(ast.parse(f"{name} = __kf_override({name!r}, {name})").body[0])
        tree.body = body
        ast.fix_missing_locations(tree)

        def override(name, value):
            if type(value) is int and name in overrides:
                return overrides[name]
            if name in self.literal_tuples and isinstance(value, tuple):
                return tuple(overrides.get(f"{name}_{i}", v) for i, v in enumerate(value))
            return value

        g = {"__name__": "kf_problem", "__file__": self.path, "__kf_override": override}
        try:
            exec(compile(tree, self.path, "exec"), g)
        except Exception as e:  # the file's own code: any failure is the file's
            fail(f"running the file raised {describe(e)}")
        return g

    def constants(self, g):
        """Module-level integer constants, in assignment order (literal tuples by element)."""
        out = []
        for name in self.assigned:
            v = g.get(name)
            if type(v) is int:
                out.append((name, v))
            elif name in self.literal_tuples and isinstance(v, tuple):
                out.extend((f"{name}_{i}", e) for i, e in enumerate(v))
        return out


def describe(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def add_missing_ops(torch):
    """Ops of newer PyTorch that the problems use, written out where this PyTorch lacks them
    (Debian 12 ships PyTorch 1.13, before scaled_dot_product_attention). Same definition as
    PyTorch 2's documentation gives, in the inputs' precision."""
    F = torch.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        return

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        if dropout_p != 0.0:
            raise NotImplementedError("scaled_dot_product_attention with dropout_p > 0")
        s = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
        scores = query @ key.transpose(-2, -1) * s
        if is_causal:
            L, S = query.size(-2), key.size(-2)
            keep = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
            scores = scores.masked_fill(~keep, float("-inf"))
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            else:
                scores = scores + attn_mask
        return torch.softmax(scores, dim=-1) @ value

    F.scaled_dot_product_attention = sdpa


# --- Calling into the problem -------------------------------------------------------------------

class OnMeta:
    """Makes torch's factory functions build meta tensors (shapes, no memory) while in force."""

    def __init__(self, torch):
        self.torch = torch
        self.saved = {}

    def __enter__(self):
        for name in FACTORIES:
            f = getattr(self.torch, name, None)
            if f is None:
                continue
            self.saved[name] = f

            def meta(*args, _f=f, **kwargs):
                kwargs["device"] = "meta"
                return _f(*args, **kwargs)
            setattr(self.torch, name, meta)
        return self

    def __exit__(self, *exc):
        for name, f in self.saved.items():
            setattr(self.torch, name, f)


def call_get_inputs(torch, g):
    try:
        inputs = g["get_inputs"]()
    except CannotImport:
        raise
    except Exception as e:
        raise ModelRaised(f"get_inputs() raised {describe(e)}")
    if not isinstance(inputs, (list, tuple)):
        fail(f"get_inputs() returns a {type(inputs).__name__}, not a list of tensors")
    if not inputs:
        fail("get_inputs() returns no tensors")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            fail(f"get_inputs() element {i} is a {type(x).__name__}, not a tensor "
                 "(scalar arguments of forward are not supported yet)")
    return list(inputs)


def named_tensors(model):
    """Parameters, then buffers, by their names in the module tree."""
    return list(model.named_parameters()) + list(model.named_buffers())


def build_model(torch, g, seed):
    try:
        init_inputs = g["get_init_inputs"]()
        torch.manual_seed(seed)
        return g["Model"](*init_inputs)
    except Exception as e:
        raise ModelRaised(f"Model(*get_init_inputs()) raised {describe(e)}")


def forward(torch, model, inputs, where):
    try:
        with torch.no_grad():
            out = model(*inputs)
    except Exception as e:
        raise ModelRaised(f"forward raised {describe(e)} {where}".strip())
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            fail(f"forward returns a {type(o).__name__} as output {i}, not a tensor")
    return outs


def dtype_name(t, what):
    name = DTYPES.get(str(t.dtype))
    if name is None:
        fail(f"{what} is {str(t.dtype).replace('torch.', '')}, which tasks do not have "
             "(f16 bf16 f32 f64 i32 i64 u8)")
    return name


# --- Sizes and shape expressions ----------------------------------------------------------------

def find_sizes(torch, problem, constants):
    """The constants whose value decides an input's shape (get_inputs on the meta device)."""
    def shapes(overrides):
        g = problem.run(overrides)
        with OnMeta(torch):
            return [tuple(x.shape) for x in call_get_inputs(torch, g)]

    base = shapes({})
    sizes = []
    for name, value in constants:
        if value < 1:
            continue
        if shapes({name: value + 1}) != base:
            sizes.append((name, value))
    return sizes


class Shape:
    """One tensor's dimensions as (size name or None, a, b, q): (a * size + b) // q, or the
    constant b."""

    def __init__(self, dims):
        self.dims = dims

    def at(self, values):
        return [b if s is None else (a * values[s] + b) // q for s, a, b, q in self.dims]

    def exprs(self):
        out = []
        for s, a, b, q in self.dims:
            if s is None:
                out.append(str(b))
                continue
            e = s if a == 1 else f"{a} * {s}"
            if b:
                e += f" + {b}" if b > 0 else f" - {-b}"
            out.append(e if q == 1 else f"({e}) // {q}" if " " in e else f"{e} // {q}")
        return out


def fit_shape(observed, probes, sizes, what, observe=None):
    """Fits each dimension of `observed` (one shape per probe) to a * size + b, else to
    (size + b) // q; `observe(values)` gives the tensor's shape at other sizes (or None), to tell
    apart strided forms that all fit the probes."""
    ranks = {len(s) for s in observed}
    if len(ranks) != 1:
        fail(f"{what} has {' or '.join(str(r) for r in sorted(ranks))} dimensions depending on "
             "the sizes")
    dims = []
    for d in range(len(observed[0])):
        v = [s[d] for s in observed]
        if len(set(v)) == 1:
            dims.append((None, 0, v[0], 1))
            continue
        found = fit_affine(v, probes, sizes) or fit_strided(v, probes, sizes, d, observe)
        if found is None:
            fail(f"dimension {d} of {what} ({', '.join(map(str, v))} at {len(v)} probes) is "
                 "neither a * size + b nor (size + b) // stride of one module-level size "
                 "constant")
        dims.append(found)
    return Shape(dims)


def fit_affine(v, probes, sizes):
    for name, _ in sizes:
        x = [p[name] for p in probes]
        if x[1] == x[0] or (v[1] - v[0]) % (x[1] - x[0]):
            continue
        a = (v[1] - v[0]) // (x[1] - x[0])
        b = v[0] - a * x[0]
        if a != 0 and all(a * xi + b == vi for xi, vi in zip(x, v)):
            return (name, a, b, 1)
    return None


def fit_strided(v, probes, sizes, d, observe):
    """(size + b) // q: a strided window ((height + 2 * padding - kernel) // stride + 1). Several
    forms may fit the probes (x // 11 and (x + 1) // 12 agree on small x): the model runs again
    where they part, until one is left; none or several left is no fit."""
    cands = []
    for q in range(2, MAX_STRIDE + 1):
        for name, _ in sizes:
            x = [p[name] for p in probes]
            for b in range(-8 * q - 64, 8 * q + 65):
                if all((xi + b) // q == vi for xi, vi in zip(x, v)):
                    cands.append((name, 1, b, q))
    tried = set()
    for _ in range(12):
        if len(cands) <= 1 or observe is None:
            break
        # Where the forms part the most, sizes past the probes' first (small windows raise).
        options = []
        for name in dict.fromkeys(c[0] for c in cands):
            for x in range(8, 257):
                values = dict(probes[0], **{name: x})
                parts = len({(values[c[0]] + c[2]) // c[3] for c in cands})
                if parts > 1 and (name, x) not in tried:
                    options.append((-parts, x, name, values))
        shape = None
        for _, x, name, values in sorted(options, key=lambda o: (o[0], o[1]))[:6]:
            tried.add((name, x))
            shape = observe(values)
            if shape is not None and len(shape) > d:
                break
            shape = None
        if shape is None:
            break
        cands = [c for c in cands if (values[c[0]] + c[2]) // c[3] == shape[d]]
    return cands[0] if len(cands) == 1 else None


def probe_values(sizes, k):
    return {name: PROBES[k][i % len(PROBES[k])] + 60 * (i // len(PROBES[k]))
            for i, (name, _) in enumerate(sizes)}


def elements(shapes, values):
    return sum(math.prod(s.at(values)) for s in shapes)


# --- Distributions, from get_inputs' source -----------------------------------------------------

def returned_elements(fn):
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1 or not isinstance(returns[0].value, (ast.List, ast.Tuple)):
        return None
    assigned = {}
    for node in fn.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    out = []
    for e in returns[0].value.elts:
        if isinstance(e, ast.Starred):
            return None
        name = e.id if isinstance(e, ast.Name) else None
        out.append((name, assigned.get(name, e) if name else e))
    return out


def factory_call(node):
    """The torch factory call under `.cuda()`, `.to(...)`, `.contiguous()`... or None."""
    while isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in FACTORIES:
            return name, node
        if isinstance(f, ast.Attribute) and name in ("cuda", "to", "contiguous", "float", "half",
                                                     "double", "long", "int", "cpu"):
            node = f.value
            continue
        return None
    return None


def distribution(problem, node, index, probes_globals):
    found = factory_call(node)
    if found is None:
        fail(f"get_inputs() element {index} (line {getattr(node, 'lineno', '?')}) is not drawn "
             "by torch.rand, torch.randn or torch.randint")
    name, call = found
    if name in ("rand", "rand_like"):
        return {"kind": "uniform", "low": 0, "high": 1}
    if name in ("randn", "randn_like"):
        return {"kind": "normal", "mean": 0, "std": 1}
    if name == "randint":
        args = list(call.args)
        kw = {k.arg: k.value for k in call.keywords}
        low = kw.get("low", args[0] if len(args) >= 3 else ast.Constant(0))
        high = kw.get("high", args[1] if len(args) >= 3 else args[0] if args else None)
        if high is None:
            fail(f"get_inputs() element {index}: torch.randint without a high bound")
        bounds = {}
        for key, expr in (("low", low), ("high", high)):
            values = []
            for g in probes_globals:
                try:
                    values.append(eval(compile(ast.Expression(expr), problem.path, "eval"), g))
                except Exception as e:
                    fail(f"get_inputs() element {index}: torch.randint's {key} bound is not an "
                         f"expression of module-level names ({describe(e)})")
            if any(type(v) is not int for v in values):
                fail(f"get_inputs() element {index}: torch.randint's {key} bound is not an int")
            bounds[key] = values
        return {"kind": "randint", "low_at": bounds["low"], "high_at": bounds["high"]}
    fail(f"get_inputs() element {index} is made by torch.{name}, not drawn at random by "
         "torch.rand, torch.randn or torch.randint")


def bound_expr(values, probes, sizes):
    if len(set(values)) == 1:
        return str(values[0])
    shape = fit_shape([(v,) for v in values], probes, sizes, "a torch.randint bound")
    return shape.exprs()[0]


# --- Size sets ----------------------------------------------------------------------------------

def scaled_down(start, shapes, budget, floor_values=None):
    """Halves the largest size until all tensors together hold at most `budget` elements."""
    values = dict(start)
    for _ in range(400):
        if elements(shapes, values) <= budget:
            return values
        name = max(values, key=lambda n: (values[n], n))
        if values[name] <= 1:
            break
        values[name] = max(1, (values[name] + 1) // 2)
        if floor_values and values[name] < floor_values[name]:
            values[name] = floor_values[name]
    return values


def ragged(values):
    """The same values made odd (v - 1 for an even v), so no set is a multiple of a block."""
    return {n: v - 1 if v > 2 and v % 2 == 0 else v for n, v in values.items()}


# --- The op class, from a torch.fx trace ----------------------------------------------------------

# Unary elementwise ops by the names fx records (a torch function, a Tensor method, a module's
# class), as OpenCL expressions over the float `v`.
UNARY = {
    "relu": "fmax(v, 0.0f)",
    "sigmoid": "1.0f / (1.0f + exp(-v))",
    "tanh": "tanh(v)",
    "gelu": "0.5f * v * (1.0f + erf(v * 0.70710678f))",
}
UNARY_MODULES = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "GELU": "gelu"}


def product(dims):
    """The C expression of a product of dimension expressions ("1" for none)."""
    terms = [d for d in dims if d != "1"]
    if not terms:
        return "1"
    return " * ".join(f"({t})" if " " in t else t for t in terms)


def node_name(gm, node):
    """What a call node computes: a function's or method's name, or a module's class name."""
    if node.op == "call_function":
        return getattr(node.target, "__name__", str(node.target))
    if node.op == "call_method":
        return node.target
    if node.op == "call_module":
        return type(gm.get_submodule(node.target)).__name__
    return None


def argument(node, index, key, default=None):
    if key in node.kwargs:
        return node.kwargs[key]
    return node.args[index] if len(node.args) > index else default


def line_view(shape, dim):
    """Input dims split around `dim`: {"outer", "extent", "inner"} as C expressions."""
    d = dim + len(shape) if dim < 0 else dim
    if not 0 <= d < len(shape):
        return None
    return {"outer": product(shape[:d]), "extent": shape[d], "inner": product(shape[d + 1:])}


def recognise_op(torch, model, inputs, parameters, outputs):
    """The op class forward is, or None: only exact, small graphs are recognised, and the starting
    kernels import writes for a class are checked against the module like any other kernel."""
    import operator
    if any(t["dtype"] != "f32" for t in inputs + parameters + outputs) or len(outputs) != 1:
        return None
    shapes = [t["shape"].exprs() for t in inputs]
    if any("//" in d for s in shapes for d in s):
        return None
    try:
        import torch.fx
        gm = torch.fx.symbolic_trace(model)
    except Exception:  # forward does what fx cannot trace: no starting kernels, nothing else
        return None
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    if any(n.op == "get_attr" for n in gm.graph.nodes) and not parameters:
        return None
    names = [node_name(gm, n) for n in calls]
    x = placeholders[0] if placeholders else None
    out_shape = outputs[0]["shape"].exprs()

    if len(calls) == 1 and len(inputs) == 1 and calls[0].args and calls[0].args[0] is x:
        c, name = calls[0], names[0]
        name = UNARY_MODULES.get(name, name)
        if name in UNARY and out_shape == shapes[0] and not parameters and \
                argument(c, 1, "inplace", False) in (False, None) and \
                (name != "gelu" or argument(c, 1, "approximate", "none") == "none"):
            return {"class": "elementwise", "fn": name, "expr": UNARY[name],
                    "elements": product(shapes[0])}
        if name in ("softmax", "cumsum", "sum", "mean") and not parameters:
            dim = argument(c, 1, "dim")
            if type(dim) is not int or argument(c, 2, "dtype") is not None:
                return None
            view = line_view(shapes[0], dim)
            if view is None:
                return None
            if name == "softmax" and out_shape == shapes[0]:
                return dict(view, **{"class": "softmax"})
            if name == "cumsum" and out_shape == shapes[0]:
                return dict(view, **{"class": "scan", "fn": "cumsum"})
            if name in ("sum", "mean"):
                return dict(view, **{"class": "reduction", "fn": name})
            return None
        if name == "LayerNorm" and len(parameters) == 2 and [p["torch_name"].split(".")[-1]
                                                             for p in parameters] == ["weight", "bias"]:
            ln = gm.get_submodule(c.target)
            k = len(ln.normalized_shape)
            view = line_view(shapes[0], len(shapes[0]) - k)
            if view is None or k == 0:
                return None
            view = dict(view, extent=product(shapes[0][-k:]), inner="1")
            return dict(view, **{"class": "layernorm", "eps": float(ln.eps)})
        return None

    if len(calls) == 1 and len(inputs) == 2 and names[0] in ("matmul", "mm") and \
            list(calls[0].args[:2]) == placeholders[:2] and not parameters:
        a, b = shapes
        if len(a) == 2 and len(b) == 2 and a[1] == b[0] and out_shape == [a[0], b[1]]:
            return {"class": "matmul", "m": a[0], "n": b[1], "k": a[1]}
        return None

    # RMSNorm written out: x / sqrt(mean(x * x, dim, keepdim=True) + eps).
    if len(calls) == 5 and len(inputs) == 1 and not parameters and \
            names == ["mul", "mean", "add", "sqrt", "truediv"]:
        sq, mean, add, root, div = calls
        dim = argument(mean, 1, "dim")
        if type(dim) in (list, tuple) and len(dim) == 1:
            dim = dim[0]
        eps = add.args[1] if len(add.args) == 2 else None
        if list(sq.args) == [x, x] and mean.args[0] is sq and argument(mean, 2, "keepdim") \
                and type(dim) is int and add.args[0] is mean and isinstance(eps, float) \
                and root.args[0] is add and list(div.args) == [x, root] and \
                out_shape == shapes[0]:
            view = line_view(shapes[0], dim)
            if view is not None:
                return dict(view, **{"class": "rmsnorm", "eps": eps})
    return None


# --- Main ---------------------------------------------------------------------------------------

def inspect_problem(path):
    problem = Problem(path)
    try:
        import torch
    except ImportError as e:
        raise NoTorch(f"PyTorch is not installed for {sys.executable} ({e}); on Debian: apt-get install "
             "python3-torch")
    add_missing_ops(torch)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    base_globals = problem.run({})
    constants = problem.constants(base_globals)
    sizes = find_sizes(torch, problem, constants)
    bench = {name: value for name, value in sizes}

    # The probes, every size at its own value; the first again with another seed.
    probes, globals_at, runs = [], [], []
    for k in range(len(PROBES)):
        values = probe_values(sizes, k)
        g = problem.run(values)
        torch.manual_seed(1000 + k)
        inputs = call_get_inputs(torch, g)
        model = build_model(torch, g, 1)
        # As built: a forward in training mode moves BatchNorm's running statistics.
        state = {n: t.detach().clone() for n, t in named_tensors(model)}
        outs = forward(torch, model, inputs, f"at probe sizes {values}")
        probes.append(values)
        globals_at.append(g)
        runs.append((inputs, state, outs, model))
    torch.manual_seed(7)
    again = forward(torch, build_model(torch, globals_at[0], 2),
                    call_get_inputs(torch, globals_at[0]), "")
    first = [tuple(o.shape) for o in runs[0][2]]
    if [tuple(o.shape) for o in again] != first:
        fail("the output's shape depends on the data (two draws at the same sizes gave "
             f"{first} and {[tuple(o.shape) for o in again]})")

    cache = {}

    def shapes_at(values):
        """Every tensor's shape at `values` (the model run once per values), or None."""
        key = tuple(sorted(values.items()))
        if key not in cache:
            try:
                g = problem.run(values)
                torch.manual_seed(5)
                xs = call_get_inputs(torch, g)
                model = build_model(torch, g, 1)
                named = {n: tuple(t.shape) for n, t in named_tensors(model)}
                outs = forward(torch, model, xs, "")
                cache[key] = ([tuple(x.shape) for x in xs], named, [tuple(o.shape) for o in outs])
            except CannotImport:
                cache[key] = None
        return cache[key]

    def observer(kind, index):
        def observe(values):
            at = shapes_at(values)
            if at is None:
                return None
            part = at[kind]
            return part.get(index) if isinstance(part, dict) else \
                part[index] if index < len(part) else None
        return observe

    forward_params = list(inspect.signature(runs[0][3].forward).parameters)
    get_inputs_names = returned_elements(problem.get_inputs_ast)
    n_inputs = len(runs[0][0])
    if any(len(r[0]) != n_inputs for r in runs):
        fail("get_inputs() returns a different number of tensors at different sizes")

    inputs = []
    for i in range(n_inputs):
        what = f"get_inputs() element {i}"
        if forward_params and len(forward_params) == n_inputs:
            name = forward_params[i]
        elif get_inputs_names and get_inputs_names[i][0]:
            name = get_inputs_names[i][0]
        else:
            name = f"in{i}"
        if get_inputs_names is None or len(get_inputs_names) != n_inputs:
            fail("get_inputs() does not end in `return [x, y, ...]`, so the distribution of each "
                 "input cannot be read from its source")
        dist = distribution(problem, get_inputs_names[i][1], i, globals_at)
        if dist["kind"] == "randint":
            dist = {"kind": "randint", "low": bound_expr(dist["low_at"], probes, sizes),
                    "high": bound_expr(dist["high_at"], probes, sizes)}
        shape = fit_shape([tuple(r[0][i].shape) for r in runs], probes, sizes, what,
                          observer(0, i))
        inputs.append({"name": name, "dtype": dtype_name(runs[0][0][i], what), "shape": shape,
                       "dist": dist})

    parameters = []
    model = runs[0][3]
    named = [("parameter", n) for n, _ in model.named_parameters()] + \
            [("buffer", n) for n, _ in model.named_buffers()]
    for kind, torch_name in named:
        what = f"the model's {kind} {torch_name}"
        t = runs[0][1][torch_name]
        at = [r[1].get(torch_name) for r in runs]
        if any(x is None for x in at):
            fail(f"{what} exists at some sizes only")
        shape = fit_shape([tuple(x.shape) for x in at], probes, sizes, what,
                          observer(1, torch_name))
        flat = t.detach().double().flatten()
        lo, hi = (float(flat.min()), float(flat.max())) if flat.numel() else (0.0, 0.0)
        init = {"kind": "constant", "value": lo} if lo == hi else \
            {"kind": "uniform", "low": lo, "high": hi}
        parameters.append({"name": torch_name.replace(".", "_"), "torch_name": torch_name,
                           "kind": kind, "dtype": dtype_name(t, what), "shape": shape,
                           "init": init})

    outputs = []
    for i in range(len(first)):
        what = f"output {i}"
        shape = fit_shape([tuple(r[2][i].shape) for r in runs], probes, sizes, what,
                          observer(2, i))
        name = "out" if len(first) == 1 else f"out{i}"
        outputs.append({"name": name, "dtype": dtype_name(runs[0][2][i], what), "shape": shape})

    tensors = [t["shape"] for t in inputs + parameters + outputs]
    size_sets = derive_size_sets(bench, tensors)
    confirm(torch, problem, size_sets["cpu"], inputs, parameters, outputs)
    # A check set the model refuses (a convolution window wider than a tiny input) is left out;
    # one where a shape breaks its expression fails the import.
    kept = []
    for c in size_sets["check"]:
        try:
            confirm(torch, problem, c["sizes"], inputs, parameters, outputs)
            kept.append(c)
        except ModelRaised:
            continue
    if not kept:
        fail("the model runs at none of the derived check sets "
             f"({', '.join(str(c['sizes']) for c in size_sets['check'])})")
    size_sets["check"] = kept

    op = recognise_op(torch, build_model(torch, base_globals, 1), inputs, parameters, outputs)
    for t in inputs + parameters + outputs:
        t["shape"] = t["shape"].exprs()
    doc = inspect.getdoc(base_globals["Model"]) or ""
    return {"file": path, "description": " ".join(doc.split("\n\n")[0].split()),
            "sizes": [{"name": n, "value": v} for n, v in sizes],
            "constants": [{"name": n, "value": v} for n, v in constants],
            "inputs": inputs, "parameters": parameters, "outputs": outputs,
            "size_sets": size_sets, "op": op, "torch_version": torch.__version__}


def derive_size_sets(bench, tensors):
    for name, value in bench.items():
        if value < 1:
            fail(f"size {name} = {value} is not positive")
    if any(d <= 0 for s in tensors for d in s.at(bench)):
        fail("a tensor has a dimension that is not positive at the problem's own sizes")
    cpu = scaled_down(bench, tensors, CPU_ELEMENTS)
    names = list(bench)
    tiny = {n: min(bench[n], TINY[i % len(TINY)]) for i, n in enumerate(names)}
    rag = scaled_down({n: min(bench[n], RAGGED[i % len(RAGGED)]) for i, n in enumerate(names)},
                      tensors, CHECK_ELEMENTS)
    cpu_ragged = scaled_down(ragged(cpu), tensors, CPU_ELEMENTS // 2)
    cpu_ragged = ragged(cpu_ragged)
    checks = []
    for set_name, values in (("tiny", tiny), ("ragged", rag), ("cpu_ragged", cpu_ragged)):
        if any(d <= 0 for s in tensors for d in s.at(values)):
            continue
        if values == bench or any(values == c["sizes"] for c in checks):
            continue
        checks.append({"name": set_name, "sizes": values})
    if not checks:
        fail("no check size set smaller than the problem's own gives every tensor a dimension")
    return {"bench": bench, "cpu": cpu, "check": checks}


def confirm(torch, problem, values, inputs, parameters, outputs):
    """Runs the model at `values`: every tensor must have the shape its expressions give."""
    g = problem.run(values)
    torch.manual_seed(3)
    xs = call_get_inputs(torch, g)
    model = build_model(torch, g, 1)
    outs = forward(torch, model, xs, f"at derived sizes {values}")
    named = dict(named_tensors(model))
    pairs = [(t, x) for t, x in zip(inputs, xs)] + \
            [(t, named.get(t["torch_name"])) for t in parameters] + \
            [(t, o) for t, o in zip(outputs, outs)]
    for t, x in pairs:
        want = t["shape"].at(values)
        if x is None or list(x.shape) != want:
            got = None if x is None else list(x.shape)
            fail(f"{t['name']} has shape {got} at sizes {values}, where the probes say {want}: "
                 "its shape does not follow the size constants")


def main(argv):
    if len(argv) != 2:
        print("usage: kb_inspect.py PROBLEM.py", file=sys.stderr)
        return EXIT_CANNOT_IMPORT
    # What the problem file prints goes to stderr: stdout carries the one JSON answer.
    answer, sys.stdout = sys.stdout, sys.stderr
    try:
        result = inspect_problem(argv[1])
    except CannotImport as e:
        answer.write(json.dumps({"error": " ".join(str(e).split())}) + "\n")
        return EXIT_NO_TORCH if isinstance(e, NoTorch) else EXIT_CANNOT_IMPORT
    answer.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
