#!/usr/bin/env python3
"""An example proposer for `kfoundry optimize --proposer command` (docs/proposers.md).

Reads one proposal request (JSON) on stdin and writes one kernel on stdout: the parent kernel
with one or two tunable parameters' value lists walked one step each (twice the largest value or
half the smallest added, or the largest or smallest dropped) and a default drawn from the new
list (the parent's best value half the time); the other parameters keep the parent's best values
as their defaults. With no parent (the archive is empty) or no numeric list to walk it answers
{"nothing_new": true}. Random choices come from the request's seed, so a request always gets the
same answer.

  --delay S      sleep S seconds before answering (a stand-in for a model that takes its time)
  --json         answer with a JSON object {"source", "name", "notes"} instead of the bare source
  --templates    walk from the parent, an inspiration or one of the task's own templates (read
                 from the task folder the request names), chosen at random: a longer search
  --steps N      take 1 to N walks in a row (default 1): a wider neighbourhood, so a long search
                 at many evaluations a second runs out of new kernels later
"""
import argparse
import json
import os
import random
import re
import sys
import time

PARAM = re.compile(r"^(\s*//\s*@param\s+)(\w+)(\s+in\s+)\[([^\]]*)\](.*)$")


def walk(source, config, rng):
    """The source with one or two parameters' lists walked one step, and what was done; or None."""
    lines = source.split("\n")
    options = {}  # line index -> the walks of that parameter
    for i, line in enumerate(lines):
        m = PARAM.match(line)
        if not m:
            continue
        values = [v.strip() for v in m.group(4).split(",") if v.strip()]
        if not values or not all(v.isdigit() for v in values):
            continue
        n = sorted(int(v) for v in values)
        name = m.group(2)
        walks = []
        if n[-1] * 2 <= 4096:
            walks.append((n + [n[-1] * 2], f"{name} up to {n[-1] * 2}"))
        if n[0] // 2 >= 1 and n[0] // 2 not in n:
            walks.append(([n[0] // 2] + n, f"{name} down to {n[0] // 2}"))
        if len(n) > 2:
            walks.append((n[:-1], f"{name} without {n[-1]}"))
            walks.append((n[1:], f"{name} without {n[0]}"))
        if walks:
            options[i] = (m, walks)
    if not options:
        return None, None
    chosen = rng.sample(sorted(options), min(len(options), rng.choice([1, 2])))
    done = []
    for i, line in enumerate(lines):
        m = PARAM.match(line)
        if not m:
            continue
        name = m.group(2)
        if i in chosen:
            numbers, what = rng.choice(options[i][1])
            best = config.get(name)
            if best is not None and int(best) in numbers and rng.random() < 0.5:
                default = best
            else:
                default = str(rng.choice(numbers))
            lines[i] = f"{m.group(1)}{name}{m.group(3)}[{', '.join(map(str, numbers))}] default {default}"
            done.append(f"{what}, default {default}")
        elif name in config and config[name] in [v.strip() for v in m.group(4).split(",")]:
            # the other parameters start from the parent's best value (when an earlier step of
            # this walk has not dropped it)
            rest = re.sub(r"\s+default\s+\S+", "", m.group(5))
            lines[i] = f"{m.group(1)}{name}{m.group(3)}[{m.group(4)}] default {config[name]}{rest}"
    return "\n".join(lines), "; ".join(done)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--templates", action="store_true")
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    request = json.load(sys.stdin)
    if args.delay > 0:
        time.sleep(args.delay)
    parent = request.get("parent")
    if not parent:
        print(json.dumps({"nothing_new": True, "notes": "no parent to start from"}))
        return
    rng = random.Random(request["seed"])
    bases = [(parent["kernel"]["source"], parent["config"])]
    if args.templates:
        bases += [(e["kernel"]["source"], e["config"]) for e in request.get("inspirations", [])]
        task = request.get("task") or {}
        for name in (task.get("templates") or {}).get(request.get("language", ""), []):
            try:
                with open(os.path.join(task["path"], name)) as f:
                    bases.append((f.read(), {}))
            except OSError:
                pass
    source, config = rng.choice(bases)
    config = {k: str(v) for k, v in config.items()}
    steps = []
    for _ in range(rng.randint(1, max(1, args.steps))):
        walked, what = walk(source, config, rng)
        if walked is None:
            break
        source = walked
        steps.append(what)
    what = "; then ".join(steps)
    if not steps:
        print(json.dumps({"nothing_new": True, "notes": "no numeric parameter list to walk"}))
        return
    target = (request.get("target_cell") or {}).get("description", "")
    notes = f"{what} (asked for: {target})" if target else what
    if args.json:
        name = f"walk-p{request['index']}"
        print(json.dumps({"source": source, "name": name, "notes": notes}))
    else:
        sys.stdout.write(source)


if __name__ == "__main__":
    main()
