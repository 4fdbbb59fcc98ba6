#!/usr/bin/env python3
"""Synthetic KernelFoundry runs in the shape src/report/run_view.cpp produces (docs/report.md).

world = make_world(kernels=N, evals=M, seed=S, flops=True/False)
view, details = build(world, upto=None)   # upto: how many evaluations have landed (live runs)
"""
import hashlib
import json
import random

DIMS = [
    {"name": "memory", "levels": ["basic", "vectorised", "local_tiling", "hierarchical"]},
    {"name": "algorithm", "levels": ["direct", "looped", "unrolled", "matrix_units"]},
    {"name": "coordination", "levels": ["independent", "group_barriers", "sub_group_collectives", "atomics"]},
]
STATUSES = [("ok", 62), ("incorrect", 9), ("compile_error", 11), ("nan", 3), ("crash", 3), ("timeout", 3),
            ("implausible", 2), ("invalid_config", 5), ("launch_error", 2)]
MUTATIONS = ["vectorise", "unroll", "local_tile", "coalesce", "fuse_loads", "prefetch", "sub_group", "block_size"]
DEVICE = "opencl:0 (NVIDIA H200, OpenCL 3.0 CUDA)"
BASELINE_MS = 0.412
MIN_BYTES = 4.0e8
FLOPS = 5.0e8
PEAK = 4225.0

BASE_SOURCE = """// @kernel rope
// @grid (n + BLOCK - 1) / BLOCK
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @param VEC in [1, 2, 4, 8] default 1
// @constraint BLOCK * VEC <= 4096 && VEC >= 1
#define PAIR(a, b) ((a) < (b) ? (a) : (b))
__kernel void rope(__global const float* restrict x, __global const float* restrict freqs,
                   __global float* restrict y, const int n, const int dim) {
  const int i = get_global_id(0);
  if (i >= n) return;  // ragged tail: n & 7 != 0 is allowed
  const int d = i % dim;
  const float f = freqs[d >> 1];
  const float c = native_cos(f), s = native_sin(f);
  const float a = x[i & ~1], b = x[i | 1];
  y[i] = (d & 1) ? a * s + b * c : a * c - b * s;
}
"""

EXTRA_LINES = [
    "  // vectorised: vload4 / vstore4 when (n & 3) == 0 && dim >= 8",
    "  float4 v = vload4(0, x + (i & ~3));",
    "  __local float tile[BLOCK * VEC];",
    "  barrier(CLK_LOCAL_MEM_FENCE);",
    "  #pragma unroll 4",
    "  for (int k = 0; k < VEC && i + k < n; ++k) {",
    "  }",
    "  if (d < dim / 2 && (i & 1) == 0) { /* pairs <even, odd> */ }",
    "  const float r = sub_group_reduce_add(a);",
    "  prefetch(x + i + 256, 64);",
    "  atomic_add((volatile __global int*)y, 0);",
    "  // </script><script>document.body.dataset.pwned = '1'</script> & <b class=\"kf-xss\">x</b>",
]


def kid(source):
    return "k" + hashlib.sha256(source.encode()).hexdigest()[:15]


def mutate(rng, source):
    lines = source.split("\n")
    body_start = 9
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randint(body_start, max(body_start, len(lines) - 2))
        if op < 0.5:
            lines.insert(pos, rng.choice(EXTRA_LINES))
        elif op < 0.8 and len(lines) > body_start + 4:
            lines[pos] = lines[pos].replace("x[", "x[(").replace("]", ")]", 1) if "x[" in lines[pos] else lines[pos] + "  // tweak " + str(rng.randint(0, 99))
        elif len(lines) > body_start + 6:
            del lines[pos]
    return "\n".join(lines)


def make_world(n_kernels=12, n_evals=40, seed=1, flops=True, big_sources=False, llm_share=0.4):
    rng = random.Random(seed)
    t = 0.0
    kernels = []  # dicts with id, source, parent, proposal, origin, mutations, proposer, quality, cell, model
    base_src = BASE_SOURCE
    if big_sources:
        base_src = BASE_SOURCE + "\n".join("// filler line %d <%d> & more" % (i, i) for i in range(400)) + "\n"
    kernels.append({"id": kid(base_src), "name": "baseline.cl", "source": base_src, "parent": "", "proposal": -1,
                    "origin": "baseline", "mutations": [], "proposer": "", "quality": 1.0, "cell": [0, 0, 0],
                    "model": "", "state": "baseline"})
    proposals = []
    seen = {kernels[0]["id"]}
    index = 0
    while len(kernels) < n_kernels:
        # a few proposals that produced nothing
        if rng.random() < 0.05:
            proposals.append({"index": index, "kernel": None, "state": rng.choice(["nothing_new", "bad_reply"]),
                              "parent": rng.choice(kernels)["id"], "proposer": "llm", "model": "gpt-x",
                              "reason": "the reply had no kernel <code> block", "after": len(kernels)})
            index += 1
            continue
        # prefer good parents
        pool = sorted(kernels, key=lambda k: -k["quality"])[:max(3, len(kernels) // 4)]
        parent = rng.choice(pool) if rng.random() < 0.8 else rng.choice(kernels)
        src = mutate(rng, parent["source"])
        if kid(src) in seen:
            src += "\n// variant %d" % index
        seen.add(kid(src))
        llm = rng.random() < llm_share
        muts = [] if llm else rng.sample(MUTATIONS, rng.randint(1, 2))
        cell = list(parent["cell"])
        d = rng.randrange(3)
        cell[d] = max(0, min(3, cell[d] + rng.choice([-1, 1, 1])))
        name = ("llm-p%d.cl" % index) if llm else ("%s_%d.cl" % (muts[0], index))
        if index == 3:
            name = "<b class=\"kf-xss\">evil</b> & name.cl"
        kernels.append({"id": kid(src), "name": name, "source": src, "parent": parent["id"], "proposal": index,
                        "origin": ("llm gpt-x" if llm else "%s of %s" % ("+".join(muts), parent["name"])),
                        "mutations": muts, "proposer": "llm" if llm else "builtin",
                        "quality": max(0.3, parent["quality"] * rng.uniform(0.85, 1.25)), "cell": cell,
                        "model": rng.choice(["gpt-x", "claude-y"]) if llm else "", "state": "done"})
        index += 1
    # evaluations, kernel by kernel (the baseline first), ~n_evals in all
    per = max(1, n_evals // len(kernels))
    evals = []
    seq = 0
    for k in kernels:
        count = per + (1 if rng.random() < (n_evals / len(kernels) - per) else 0)
        if k is kernels[0]:
            count = max(1, count)
        fate = rng.random()
        for c in range(count):
            seq += 1
            t += rng.uniform(0.2, 2.0)
            statuses, weights = zip(*STATUSES)
            status = "ok" if k is kernels[0] else rng.choices(statuses, weights)[0]
            if fate < 0.08 and k is not kernels[0]:
                status = "compile_error"
            config = {"BLOCK": rng.choice([64, 128, 256, 512]), "VEC": rng.choice([1, 2, 4, 8])}
            if k is kernels[0] and c == 0:
                config = {}
            ev = {"seq": seq, "t": round(t, 3), "status": status, "kernel": k["id"], "proposal": k["proposal"],
                  "config": config, "device": DEVICE, "purpose": "search", "reason": "",
                  "time_ms": None, "min_ms": None, "max_ms": None, "runs": None, "speedup": None, "gbs": None,
                  "roofline": None, "cell": [], "compiled": status != "compile_error"}
            if status == "ok":
                sp = k["quality"] * rng.uniform(0.8, 1.1)
                sp = min(sp, 0.97 * PEAK * BASELINE_MS / (MIN_BYTES / 1e6))
                ms = BASELINE_MS / sp
                gbs = MIN_BYTES / (ms * 1e-3) / 1e9
                ev.update(time_ms=ms, min_ms=ms * 0.97, max_ms=ms * 1.06, runs=30, speedup=sp, gbs=gbs,
                          roofline=gbs / PEAK, cell=list(k["cell"]))
            elif status == "incorrect":
                ev["reason"] = "max_rel_err 0.31 > 1e-05 at index 4095 (expected 1.25, got <0.86>)"
            elif status == "compile_error":
                ev["reason"] = "build failed"
            elif status == "timeout":
                ev["reason"] = "no answer in 10 s"
            elif status == "implausible":
                ev["reason"] = "4900 GB/s is over the copy bandwidth"
            else:
                ev["reason"] = status.replace("_", " ")
            evals.append(ev)
    return {"kernels": kernels, "proposals": proposals, "evals": evals, "flops": flops, "t": t, "rng_seed": seed}


def grade_of(evs):
    if not evs:
        return 0
    if all(e["status"] == "compile_error" for e in evs):
        return 1
    if not any(e["status"] == "ok" for e in evs):
        return 2
    return 3


def build(world, upto=None, settings=None):
    """The run view and the details after `upto` evaluations (None: all, plus the finals)."""
    rng = random.Random(world["rng_seed"] + 7)
    all_evals = world["evals"]
    finished = upto is None or upto >= len(all_evals)
    evals = [dict(e) for e in (all_evals if finished else all_evals[:upto])]
    by_id = {k["id"]: k for k in world["kernels"]}
    present = []
    present_ids = set()
    evals_of = {}
    for e in evals:
        evals_of.setdefault(e["kernel"], []).append(e)
        if e["kernel"] not in present_ids:
            present_ids.add(e["kernel"])
            present.append(by_id[e["kernel"]])
    last = present[-1] if present else None
    # archive, grades (improved cell / new best) in proposal order
    archive = {}
    best_overall = 0.0
    grades = {}
    for k in present:
        evs = evals_of[k["id"]]
        g = grade_of(evs)
        oks = [e for e in evs if e["status"] == "ok"]
        complete = finished or k is not last
        if oks and complete:
            b = max(oks, key=lambda e: e["speedup"])
            cell = tuple(b["cell"])
            if cell not in archive or archive[cell]["speedup"] < b["speedup"]:
                archive[cell] = {"cell": list(cell), "kernel": k["id"], "name": k["name"], "config": b["config"],
                                 "speedup": b["speedup"], "time_ms": b["time_ms"], "device": DEVICE}
                g = 4
            if b["speedup"] > best_overall:
                best_overall = b["speedup"]
                g = 5
        grades[k["id"]] = g if complete else 0
    # finals: the top elites re-verified three times each
    finals = []
    seq = len(all_evals)
    t = world["t"]
    if finished:
        top = sorted(archive.values(), key=lambda a: -a["speedup"])[:5]
        for a in top:
            runs = []
            for r in range(3):
                seq += 1
                t += 1.5
                ok = rng.random() > 0.1
                sp = a["speedup"] * rng.uniform(0.95, 1.03)
                ms = BASELINE_MS / sp
                gbs = MIN_BYTES / (ms * 1e-3) / 1e9
                ev = {"seq": seq, "t": round(t, 3), "status": "ok" if ok else "incorrect", "kernel": a["kernel"],
                      "proposal": by_id[a["kernel"]]["proposal"], "config": a["config"], "device": DEVICE,
                      "purpose": "final", "reason": "" if ok else "max_abs_err 2.0 at index 7",
                      "time_ms": ms if ok else None, "min_ms": ms * 0.98 if ok else None,
                      "max_ms": ms * 1.04 if ok else None, "runs": 30 if ok else None, "speedup": sp if ok else None,
                      "gbs": gbs if ok else None, "roofline": gbs / PEAK if ok else None,
                      "cell": a["cell"] if ok else [], "compiled": True}
                evals.append(ev)
                runs.append(ev)
            oks = [e for e in runs if e["status"] == "ok"]
            sps = sorted(e["speedup"] for e in oks)
            times = [e["time_ms"] for e in oks]
            finals.append({"kernel": a["kernel"], "name": a["name"], "config": a["config"],
                           "verified": len(oks) == len(runs), "speedups": [e["speedup"] for e in oks],
                           "median": sps[len(sps) // 2] if sps else 0, "runs": len(runs),
                           "time_ms": sorted(times)[len(times) // 2] if times else None,
                           "min_ms": min(times) if times else None, "max_ms": max(times) if times else None,
                           "roofline": (sum(e["roofline"] for e in oks) / len(oks)) if oks else None,
                           "device": DEVICE})
    # kernels
    kernels = {}
    evals_of = {}
    for e in evals:
        evals_of.setdefault(e["kernel"], []).append(e)
    for k in present:
        evs = evals_of[k["id"]]
        sps = [e["speedup"] for e in evs if e["status"] == "ok" and e["purpose"] == "search"]
        state = k["state"]
        if k is last and not finished and k["proposal"] >= 0:
            state = "proposed"
        kernels[k["id"]] = {"name": k["name"], "language": "opencl", "proposal": k["proposal"],
                            "parent": k["parent"], "origin": k["origin"], "mutations": k["mutations"],
                            "proposer": k["proposer"], "state": state, "grade": grades.get(k["id"], 0),
                            "model": k["model"], "cost": 0.0123 if k["proposer"] == "llm" else 0,
                            "evaluations": len(evs), "best_speedup": max(sps) if sps else None}
    # proposals in index order (with the nothing-new ones)
    proposals = []
    max_index = max([k["proposal"] for k in present] + [-1])
    nothing = [p for p in world["proposals"] if p["index"] <= max_index]
    for k in present:
        if k["proposal"] < 0:
            continue
        llm = k["proposer"] == "llm"
        proposals.append({"index": k["proposal"], "state": kernels[k["id"]]["state"], "kernel": k["id"],
                          "parent": k["parent"], "origin": k["origin"], "proposer": k["proposer"],
                          "mutations": k["mutations"], "grade": kernels[k["id"]]["grade"], "reason": "",
                          "model": k["model"],
                          "components": ["role.expert@2", "hint.vectorise@1", "target.cell@1"] if llm else [],
                          "prompt_tokens": 1830 if llm else 0, "completion_tokens": 912 if llm else 0,
                          "cost": 0.0123 if llm else 0, "evaluations": kernels[k["id"]]["evaluations"]})
    for p in nothing:
        proposals.append({"index": p["index"], "state": p["state"], "kernel": None, "parent": p["parent"],
                          "origin": "", "proposer": "llm", "mutations": [], "grade": 0, "reason": p["reason"],
                          "model": p["model"], "components": ["role.expert@2"], "prompt_tokens": 1500,
                          "completion_tokens": 40, "cost": 0.004, "evaluations": None})
    proposals.sort(key=lambda p: p["index"])
    cols = ["seq", "t", "status", "kernel", "proposal", "time_ms", "min_ms", "max_ms", "speedup", "gbs",
            "roofline", "cell", "config", "device", "purpose"]
    verdicts = {}
    for e in evals:
        if e["purpose"] == "search":
            verdicts[e["status"]] = verdicts.get(e["status"], 0) + 1
    states = {}
    for p in proposals:
        states[p["state"]] = states.get(p["state"], 0) + 1
    llm_props = [p for p in proposals if p["proposer"] == "llm"]
    view = {
        "run": {"name": world.get("name", "rope_llama3-20261204-101500"), "task": "rope_llama3", "device": DEVICE,
                "created_at": "2026-12-04T10:15:00.123Z",
                "settings": settings or {"budget": len(all_evals), "proposer": "mixed", "seed": 7, "devices": [DEVICE],
                                         "llm": {"models": ["gpt-x", "claude-y"], "temperature": 0.7},
                                         "task_dir": "/nowhere/tasks/rope_llama3", "note": "<i>not html</i>"},
                "finished": finished, "stop_reason": "budget" if finished else "",
                "devices": [{"device": DEVICE, "evaluations": len(evals), "busy_seconds": world["t"] * 0.72,
                             "busy_fraction": 0.72},
                            {"device": "opencl:1 (NVIDIA H200)", "evaluations": 3, "busy_seconds": 10,
                             "busy_fraction": 0.05}] if finished else []},
        "behaviour": DIMS,
        "baseline_ms": BASELINE_MS,
        "roofline": {"peak_gbs": PEAK, "sizes": "bench", "min_bytes": MIN_BYTES,
                     "flops": FLOPS if world["flops"] else None,
                     "flops_per_byte": FLOPS / MIN_BYTES if world["flops"] else None},
        "columns": cols,
        "evaluations": [[e[c] for c in cols] for e in evals],
        "kernels": kernels,
        "proposals": proposals,
        "archive": sorted(archive.values(), key=lambda a: a["cell"]),
        "finals": finals,
        "verdicts": verdicts,
        "proposal_states": states,
        "llm": {"requests": len(llm_props), "failed_requests": 1, "prompt_tokens": sum(p["prompt_tokens"] for p in llm_props),
                "completion_tokens": sum(p["completion_tokens"] for p in llm_props),
                "cost_usd": sum(p["cost"] for p in llm_props), "repaired_replies": 2,
                "by_model": {"gpt-x": {"requests": 5, "cost": 0.05}, "claude-y": {"requests": 3, "cost": 0.04}},
                "meta_versions": 1},
        "version": "%d:%d:%d" % (len(evals), len(proposals), 5 if finished else 1),
    }
    verified = [f for f in finals if f["verified"]]
    if verified:
        b = max(verified, key=lambda f: f["median"])
        view["best"] = {"kernel": b["kernel"], "config": b["config"], "speedup": b["median"]}
    details = {}
    for k in present:
        details[k["id"]] = detail(k, evals_of[k["id"]], by_id, kernels)
    return view, details


def detail(k, evals, by_id, kernels, with_parent_source=False):
    figures = []
    for e in evals:
        if e["kernel"] != k["id"]:
            continue
        compared = e["status"] in ("ok", "incorrect", "nan", "implausible")
        log = ""
        if e["status"] == "compile_error":
            log = ("<source>:12:3: error: use of undeclared identifier 'tile'\n  tile[i] = a < b && c;\n  ^\n"
                   "1 error generated.\n")
        elif e["compiled"] and e["status"] != "invalid_config":
            log = "<source>:20:9: warning: unused variable 'r' [-Wunused-variable]\n" if "sub_group_reduce" in k["source"] else ""
        figures.append({
            "seq": e["seq"], "config": e["config"], "status": e["status"], "reason": e["reason"],
            "purpose": e["purpose"], "proposal": e["proposal"], "device": e["device"],
            "at": "2026-12-04T10:%02d:%02d.000Z" % (15 + int(e["t"]) // 60 % 40, int(e["t"]) % 60),
            "time_ms": e["time_ms"], "min_ms": e["min_ms"], "max_ms": e["max_ms"], "runs": e["runs"],
            "baseline_ms": BASELINE_MS if e["time_ms"] else None, "speedup": e["speedup"], "gbs": e["gbs"],
            "roofline": e["roofline"], "compared": compared,
            "max_abs_err": (1.2e-7 if e["status"] == "ok" else 0.31) if compared else None,
            "max_rel_err": (3.4e-6 if e["status"] == "ok" else 0.5) if compared else None,
            "bad_ratio": (0 if e["status"] == "ok" else 0.012) if compared else None,
            "nan_count": (0 if e["status"] != "nan" else 17) if compared else None,
            "cell": e["cell"], "bench_sizes": "bench" if e["time_ms"] else "",
            "hints": ["uncoalesced stores"] if e["status"] == "ok" and e["seq"] % 5 == 0 else [],
            "check_seeds": [1, 2], "phase_ms": {"compile": 41.5, "check": 3.2, "time": 12.0},
            "compile_log": log})
    out = {"id": k["id"], "name": k["name"], "language": "opencl", "source": k["source"], "parent": "",
           "parent_source": None, "proposal": None, "evaluations": figures}
    if k["proposal"] < 0:
        return out
    out["parent"] = k["parent"]
    if with_parent_source and k["parent"] in by_id:
        out["parent_source"] = by_id[k["parent"]]["source"]
    llm = k["proposer"] == "llm"
    trail = {}
    if llm:
        trail = {"model": k["model"], "components": ["role.expert@2", "hint.vectorise@1", "target.cell@1"],
                 "cost": 0.0123, "prompt_tokens": 1830, "completion_tokens": 912,
                 "messages": [{"role": "system", "content": "You write fast OpenCL kernels. Answer with one ```c block."},
                              {"role": "user", "content": "Parent kernel:\n```c\n" + by_id[k["parent"]]["source"] +
                               "\n```\nTarget cell: memory=vectorised, algorithm=unrolled. Keep i < n checks & bounds."}],
                 "exchanges": [{"model": k["model"], "ok": True, "reply": "Here is a faster kernel <b>really</b>:\n```c\n" +
                                k["source"] + "\n```\nNotes: vload4 & unroll.", "finish_reason": "stop", "attempts": 1,
                                "http_status": 200, "seconds": 12.5, "prompt_tokens": 1830, "completion_tokens": 912,
                                "cost": 0.0123}]}
    kv = kernels.get(k["id"], {})
    out["proposal"] = {"index": k["proposal"], "state": kv.get("state", "done"), "proposer": k["proposer"],
                       "origin": k["origin"], "mutations": k["mutations"],
                       "notes": "wider loads & fewer branches" if not llm else "from the model's notes: vload4",
                       "request": {"by": k["proposer"], "parent": {"kernel_id": k["parent"]},
                                   "target": {"cell": k["cell"], "description": "memory=%s" % DIMS[0]["levels"][k["cell"][0]]},
                                   "seed": 1234},
                       "outcome": {"verdict": "ok", "grade": kv.get("grade", 0), "evaluations": kv.get("evaluations", 0),
                                   "best": kv.get("best_speedup")},
                       "trail": trail}
    return out


def kernel_detail(world, view, kernel_id):
    """The serve endpoint's detail: with parent_source."""
    by_id = {k["id"]: k for k in world["kernels"]}
    if kernel_id not in view["kernels"]:
        return None
    cols = view["columns"]
    evals = [dict(zip(cols, row)) for row in view["evaluations"]]
    for e in evals:
        e["runs"] = 30 if e["time_ms"] else None
        e["reason"] = "" if e["status"] == "ok" else e["status"] + " <reason>"
        e["compiled"] = e["status"] != "compile_error"
    return detail(by_id[kernel_id], evals, by_id, view["kernels"], with_parent_source=True)


if __name__ == "__main__":
    w = make_world()
    v, d = build(w)
    print(json.dumps(v)[:2000])
