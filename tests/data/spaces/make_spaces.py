"""Regenerates the small recorded spaces the unit tests use, from formulas with known optima, in
Kernel Tuner's cache format: bowl.json (80 configurations, optimum 1.0 at BLOCK=128, VEC=4,
UNROLL=2) and ridge.json.gz (768 configurations, gzipped, some RuntimeFailedConfig, optimum 2.0 at
X=11, Y=3, MODE=1)."""
import gzip, itertools, json, math, os

HERE = os.path.dirname(os.path.abspath(__file__))


def space(params, f, fail=None):
    keys = list(params)
    cache = {}
    for vals in itertools.product(*params.values()):
        cfg = dict(zip(keys, vals))
        rec = dict(cfg)
        rec["time"] = "RuntimeFailedConfig" if fail and fail(cfg) else f(cfg)
        cache[",".join(str(v) for v in vals)] = rec
    return {"device_name": "synthetic", "kernel_name": "bowl", "tune_params_keys": keys,
            "tune_params": params, "objective": "time", "cache": cache}


bowl = space({"BLOCK": [32, 64, 128, 256, 512], "VEC": [1, 2, 4, 8], "UNROLL": [1, 2, 3, 4]},
             lambda c: round(1.0 + (math.log2(c["BLOCK"]) - 7) ** 2 * 0.3
                             + (math.log2(c["VEC"]) - 2) ** 2 * 0.2 + abs(c["UNROLL"] - 2) * 0.1, 6))
json.dump(bowl, open(os.path.join(HERE, "bowl.json"), "w"), indent=1)
ridge = space({"X": list(range(16)), "Y": list(range(16)), "MODE": [0, 1, 2]},
              lambda c: round(2.0 + ((c["X"] - 11) ** 2 + (c["Y"] - 3) ** 2) / 50 + [0.5, 0.0, 0.9][c["MODE"]], 6),
              fail=lambda c: (c["X"] * c["Y"]) % 7 == 5)
with gzip.open(os.path.join(HERE, "ridge.json.gz"), "wt") as f:
    json.dump(ridge, f)
