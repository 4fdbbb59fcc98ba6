#!/usr/bin/env python3
"""The layer arrows point one way: checks src/CMakeLists.txt and every source against them.

The arrows (docs/architecture.md, "Layers") are written once, in ARROWS below: a layer may link
and include only the layers it points at. The build already refuses an include of a layer a
target does not link (each layer's include folder holds its own folder alone); this check covers
what the build cannot see:
  1. every `kf_layer(...)` of src/CMakeLists.txt links only layers ARROWS allows it (a new link
     upward, or a new layer nobody placed in ARROWS, fails here, not in review);
  2. the allowed graph has no cycle;
  3. every file of a layer's folder, headers included (a header no source includes is never
     compiled), includes ("folder/...") only its own folder and the folders of the layers it
     links;
  4. every folder under src/ but cli/ is some layer's (a new layer has its own CMake target).
Exit 0 and one summary line, or exit 1 and one line per breach naming the file and line.
Usage: scripts/check_layers.py [REPO_ROOT]
"""
import re
import sys
from pathlib import Path

# layer target -> the layers it may link (directly). cli (the kfoundry executable) sits on top
# and may use every layer.
ARROWS = {
    "kf_core": set(),
    "kf_backend": {"kf_core"},
    "kf_eval": {"kf_backend", "kf_core"},
    "kf_host": {"kf_eval", "kf_backend", "kf_core"},
    "kf_torch": {"kf_eval", "kf_backend", "kf_core"},
    "kf_tune": {"kf_host", "kf_eval", "kf_backend", "kf_core"},
    "kf_store": {"kf_core"},
    "kf_prompt": {"kf_core"},
    "kf_propose_api": {"kf_core"},
    "kf_propose": {"kf_propose_api", "kf_prompt", "kf_core"},
    "kf_search": {"kf_tune", "kf_host", "kf_eval", "kf_backend", "kf_propose_api", "kf_store",
                  "kf_core"},
    "kf_report": {"kf_search", "kf_store", "kf_core"},
    "kf_dist": {"kf_host", "kf_propose", "kf_store", "kf_eval", "kf_backend", "kf_core"},
}

LAYER_CALL = re.compile(r"^\s*kf_layer\((\w+)(.*?)\)\s*$", re.S | re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]*"', re.M)
KEYWORDS = {"FOLDER", "SOURCES", "LAYERS", "LIBS", "FILES"}


def parse_layers(cmake_text):
    """{target: {"folder": str, "layers": [str], "files": [str] or None, "line": int}}"""
    layers = {}
    for m in LAYER_CALL.finditer(cmake_text):
        words = m.group(2).split()
        fields, key = {}, None
        for w in words:
            if w in KEYWORDS:
                key = w
                fields.setdefault(key, [])
            elif key:
                fields[key].append(w)
        layers[m.group(1)] = {
            "folder": (fields.get("FOLDER") or [""])[0],
            "layers": fields.get("LAYERS", []),
            "files": fields.get("FILES"),
            "line": cmake_text.count("\n", 0, m.start()) + 1,
        }
    return layers


def find_cycle(graph):
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    cmake = root / "src" / "CMakeLists.txt"
    layers = parse_layers(cmake.read_text())
    errors = []

    cycle = find_cycle(ARROWS)
    if cycle:
        errors.append(f"scripts/check_layers.py: ARROWS has a cycle: {' -> '.join(cycle)}")

    for target, info in sorted(layers.items()):
        where = f"src/CMakeLists.txt:{info['line']}"
        if target not in ARROWS:
            errors.append(f"{where}: layer {target} is not placed in the arrows "
                          "(scripts/check_layers.py ARROWS, docs/architecture.md)")
            continue
        for linked in info["layers"]:
            if linked not in ARROWS[target]:
                errors.append(f"{where}: {target} links {linked}, against the arrows "
                              f"({target} may link {', '.join(sorted(ARROWS[target])) or 'nothing'})")

    # Folder -> the layers made of it (propose is two: the interface header and the proposers).
    by_folder = {}
    for target, info in layers.items():
        by_folder.setdefault(info["folder"], []).append(target)
    folders = {p.name for p in (root / "src").iterdir() if p.is_dir()}
    for folder in sorted(folders - set(by_folder) - {"cli"}):
        errors.append(f"src/{folder}: a folder of sources that is no layer's "
                      "(give it a kf_layer in src/CMakeLists.txt)")

    for folder, targets in sorted(by_folder.items()):
        for path in sorted((root / "src" / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h"):
                continue
            rel = path.relative_to(root / "src" / folder).as_posix()
            # The layer this file belongs to: an interface layer names its files.
            owner = next((t for t in targets if layers[t]["files"] and rel in layers[t]["files"]),
                         next((t for t in targets if not layers[t]["files"]), targets[0]))
            allowed = {folder} | {layers[l]["folder"] for l in layers[owner]["layers"]
                                  if l in layers}
            text = path.read_text(errors="replace")
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                if inc in by_folder and inc not in allowed:
                    line = text.count("\n", 0, m.start()) + 1
                    errors.append(f"src/{folder}/{rel}:{line}: includes {inc}/, but {owner} "
                                  f"does not link a layer of {inc}/ (the arrows: "
                                  "scripts/check_layers.py, docs/architecture.md)")

    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check_layers: {len(errors)} breach(es) of the layer arrows", file=sys.stderr)
        return 1
    print(f"check_layers: {len(layers)} layers, the arrows point one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
