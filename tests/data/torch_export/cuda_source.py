"""Writes the CUDA source an exported module would compile (its kernel and launchers) to OUT.cu
and prints its launch rule at the sizes given, as JSON (tests/integration/cli_export_test.cpp).
Usage: cuda_source.py EXPORT.py OUT.cu '{"size": value, ...}'"""
import importlib.util
import json
import sys

spec = importlib.util.spec_from_file_location("kf_exported", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with open(sys.argv[2], "w") as f:
    f.write(module._kf_cuda_source())
v = dict(json.loads(sys.argv[3]))
v.update(module._SETTINGS)
v.update(module._CONFIG)
grid, block, shared = module._LAUNCHES[0][1](v)
print(json.dumps({"grid": list(grid), "block": list(block), "shared": shared,
                  "defines": [f"-D{k}={val}" for k, val in module._DEFINES]}))
