#!/usr/bin/env python3
"""Synthetic report pages for the page's scale and robustness (bench/report/README.md): builds
them the way src/report/page.cpp does (page.html's three markers replaced where they stand, the
data JSON with every '<' written as \\u003c) from fixture.py's runs, into OUT (default
/tmp/kf-report-pages): small (40 evaluations), big (1,000 kernels, 10,000 evaluations), big_flops
(the same with 400-line sources), partial, empty, nodata.

  python3 bench/report/build.py [OUT]"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402

ASSETS = os.environ.get("KF_ASSETS", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "..", "src", "report", "assets"))
OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/kf-report-pages"


def read(name):
    with open(os.path.join(ASSETS, name), encoding="utf-8") as f:
        return f.read()


def check_assets():
    js, css, page = read("app.js"), read("app.css"), read("page.html")
    for name, text in (("app.js", js), ("app.css", css), ("page.html", page)):
        assert ')KFASSET"' not in text, name + " holds the raw string delimiter"
    low = js.lower()
    for bad in ("</script", "<!--", "<script"):
        assert bad not in low, "app.js holds " + bad
    assert "</style" not in css.lower(), "app.css holds </style"
    for m in ("/*KF_STYLE*/", "/*KF_SCRIPT*/", "/*KF_DATA*/"):
        assert page.count(m) == 1, "page.html must hold " + m + " once"
    assert page.count('<script id="kf-data" type="application/json">/*KF_DATA*/</script>') == 1
    return page, css, js


def page_html(data):
    page, css, js = check_assets()
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    parts = {"/*KF_STYLE*/": css, "/*KF_SCRIPT*/": js, "/*KF_DATA*/": text}
    at = sorted((page.find(m), m) for m in parts)
    out, frm = [], 0
    for pos, m in at:
        out.append(page[frm:pos])
        out.append(parts[m])
        frm = pos + len(m)
    out.append(page[frm:])
    return "".join(out)


def write(name, data):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page_html(data))
    print("wrote", path, "%.1f KiB" % (os.path.getsize(path) / 1024))
    return path


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    small = fixture.make_world(12, 40, seed=1, flops=True)
    v, d = fixture.build(small)
    write("small.html", {"mode": "report", "run": v, "details": d})
    with open(os.path.join(OUT, "small.json"), "w") as f:
        json.dump({"run": v, "details": d}, f)
    big = fixture.make_world(1000, 10000, seed=3, flops=False)
    v, d = fixture.build(big)
    write("big.html", {"mode": "report", "run": v, "details": d})
    bigf = fixture.make_world(1000, 10000, seed=5, flops=True, big_sources=True)
    v, d = fixture.build(bigf)
    write("big_flops.html", {"mode": "report", "run": v, "details": d})
    # a run cut short: no finals, no best, a proposal being evaluated
    v, d = fixture.build(small, upto=25)
    write("partial.html", {"mode": "report", "run": v, "details": d})
    # an empty run
    empty = fixture.make_world(1, 1, seed=2)
    v, d = fixture.build(empty, upto=0)
    write("empty.html", {"mode": "report", "run": v, "details": d})
    # no data at all (the page as it is in the source tree, markers unreplaced but for the assets)
    write("nodata.html", "not an object")
