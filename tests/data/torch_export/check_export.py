"""Imports a module `kfoundry export --torch` wrote and compares its ModelNew with the problem's
Model on fresh random inputs at other sizes than the problem's (tests/integration/
cli_export_test.cpp). Usage: check_export.py EXPORT.py PROBLEM.py '{"size": value, ...}'.
The module is loaded twice: imported from its file, and, as KernelBench's harness loads a ModelNew
file, its source exec'd into the dict the problem's source was exec'd into (which registers its
torch.library op a second time in this process). Prints one JSON line: the largest absolute errors
and the output's shape; check=True raising makes the script fail."""
import importlib.util
import json
import sys
import types

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(export_path, problem_path, sizes):
    exported = load(export_path, "kf_exported")
    problem = types.ModuleType("problem")
    exec(open(problem_path).read(), problem.__dict__)
    problem.__dict__.update(sizes)  # fresh inputs at these sizes, not the problem's
    torch.manual_seed(1234)
    inputs = problem.get_inputs()
    init = problem.get_init_inputs()
    torch.manual_seed(7)
    model = problem.Model(*init)
    torch.manual_seed(7)
    new = exported.ModelNew(*init)
    with torch.no_grad():
        want = model(*inputs)
        got = new(*inputs)
    if tuple(got.shape) != tuple(want.shape):
        print(json.dumps({"error": f"shape {tuple(got.shape)}, the reference {tuple(want.shape)}"}))
        return 1
    err = float((got.double() - want.double()).abs().max())
    checked = exported.ModelNew(*init, check=True)
    with torch.no_grad():
        checked(*inputs)  # raises if the kernel's outputs differ from the Model's

    context = {}
    exec(open(problem_path).read(), context)  # KernelBench: the reference, then ModelNew
    exec(open(export_path).read(), context)
    torch.manual_seed(7)
    harness_new = context["ModelNew"](*init)
    with torch.no_grad():
        harness_got = harness_new(*inputs)
    harness_err = float((harness_got.double() - want.double()).abs().max())
    print(json.dumps({"max_abs_err": max(err, harness_err), "shape": list(got.shape),
                      "op": type(exported.kfoundry_op).__name__}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
