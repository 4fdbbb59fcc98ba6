#!/usr/bin/env python3
"""Browser test of KernelFoundry's run report and dashboard page (docs/report.md).

  report_ui.py URL --screenshot PNG [--expect-cells N] [--offline] [--api BASE --run NAME]

Loads URL in headless Chromium (selenium + chromium-driver), waits for body[data-ready="1"] and
checks: no SEVERE browser console entry; the number of filled heat map cells (.kf-cell.filled)
is N (with --expect-cells) or at least 1; clicking the first filled cell opens that kernel
(#kf-kernel[data-kernel]) and #kf-kernel-source shows its source (fetched from
BASE/api/runs/NAME/kernels/ID with --api, else read from the page's own #kf-data JSON); the
screenshot is not blank; with --offline, that the page requested nothing but its own file and
data: URLs; with --expect-runs N (the serve index, run with --expect-cells 0), that it lists N runs
as a.kf-run-link[data-run] linking to /runs/NAME. Exits 0 when all hold, 1 (with the reasons on stderr) when one does not, 77 when
Chromium, chromedriver or selenium is missing (ctest reads 77 as "skipped").
"""
import argparse
import json
import os
import struct
import sys
import time
import urllib.parse
import urllib.request
import zlib

# Debian's paths; KF_CHROMEDRIVER and KF_CHROMIUM name others.
CHROMEDRIVER = os.environ.get("KF_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("KF_CHROMIUM", "/usr/bin/chromium")
SKIP = 77


def skip(why):
    print("report_ui: skipped: " + why, file=sys.stderr)
    sys.exit(SKIP)


def import_selenium():
    try:
        from selenium import webdriver  # noqa: F401
        return True
    except ImportError:
        pass
    # Debian's python3-selenium lives in the system interpreter's dist-packages; a python3 found
    # first on PATH (pyenv, a venv) may not see it: run again with the system one.
    system = "/usr/bin/python3"
    if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
            and not os.environ.get("KF_REPORT_UI_REEXEC"):
        os.environ["KF_REPORT_UI_REEXEC"] = "1"
        os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
    return False


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else repr(e)


class Failures:
    def __init__(self):
        self.items = []

    def add(self, text):
        self.items.append(text)
        print("report_ui: FAIL: " + text, file=sys.stderr)


# ---------------------------------------------------------------- the screenshot's pixels
def png_is_blank(data):
    """True when every pixel of the PNG has one colour; PIL when present, else our own decoder."""
    try:
        from PIL import Image  # noqa: WPS433
        import io
        img = Image.open(io.BytesIO(data)).convert("RGBA")
        lo, hi = zip(*img.getextrema())
        return lo == hi
    except ImportError:
        return _png_is_blank_zlib(data)


def _png_is_blank_zlib(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, depth, ctype, interlace = 8, [], 0, 0, 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype)
    if channels is None or depth != 8 or interlace:
        raise ValueError("unsupported PNG (colour type %d, depth %d, interlace %d)" % (ctype, depth, interlace))
    raw = zlib.decompress(b"".join(idat))
    bpp, stride = channels, width * channels
    prev = bytearray(stride)
    first = None
    for y in range(height):
        off = y * (stride + 1)
        ftype, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if first is None:
            first = bytes(line[:bpp])
        if bytes(line) != first * width:
            return False  # two colours: not blank (usually found in the first rows)
        prev = line
    return True


# ---------------------------------------------------------------- the browser
def start_browser(webdriver):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,2000",
                 "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-extensions", "--disable-default-apps", "--metrics-recording-only",
                 "--disable-features=OptimizationHints,MediaRouter,Translate"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def wait_for(driver, script, timeout, what):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = driver.execute_script(script)
            if last:
                return last
        except Exception as e:  # the page may be navigating
            last = e
        time.sleep(0.05)
    raise TimeoutError("%s (after %.0f s; last: %r)" % (what, timeout, last))


def page_source_of(driver, kernel_id):
    """The kernel's source from the page's own #kf-data (the report's inlined details)."""
    text = driver.execute_script("var e = document.getElementById('kf-data'); return e ? e.textContent : null;")
    if text is None:
        raise ValueError("the page has no #kf-data element")
    data = json.loads(text)
    details = data.get("details") or {}
    if kernel_id not in details:
        raise ValueError("the page's #kf-data has no details for kernel %s" % kernel_id)
    return details[kernel_id].get("source", "")


def api_source(base, run, kernel_id):
    url = "%s/api/runs/%s/kernels/%s" % (base.rstrip("/"), urllib.parse.quote(run, safe=""),
                                         urllib.parse.quote(kernel_id, safe=""))
    with urllib.request.urlopen(url, timeout=20) as res:
        return json.loads(res.read().decode("utf-8")).get("source", "")


def requested_urls(perf_entries):
    urls = []
    for entry in perf_entries:
        try:
            msg = json.loads(entry["message"])["message"]
        except (KeyError, ValueError, TypeError):
            continue
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg.get("params", {}).get("request", {}).get("url", ""))
        elif msg.get("method") == "Network.webSocketCreated":
            urls.append(msg.get("params", {}).get("url", ""))
    return urls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--screenshot", required=True, metavar="PNG")
    ap.add_argument("--expect-cells", type=int, metavar="N")
    ap.add_argument("--offline", action="store_true", help="the page may request nothing but itself and data: URLs")
    ap.add_argument("--api", metavar="BASE", help="the server's base URL, to fetch the kernel's source from")
    ap.add_argument("--run", metavar="NAME", help="the run, with --api")
    ap.add_argument("--expect-runs", type=int, metavar="N",
                    help="the index page (serve mode, no run): N links a.kf-run-link[data-run] to /runs/NAME")
    ap.add_argument("--expect-growth", type=float, metavar="S",
                    help="a run that is going: within S seconds the page redraws with more evaluations "
                         "(body[data-evaluations]) than it first showed, without a reload")
    ap.add_argument("--expect-ceilings", action="store_true",
                    help="a task with FLOPs: the roofline (#kf-roofline) draws the copy bandwidth and the "
                         "compute peak as ceilings")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the page (default 20)")
    args = ap.parse_args()
    if bool(args.api) != bool(args.run):
        ap.error("--api and --run go together")

    if not import_selenium():
        skip("selenium is not installed for %s (Debian: apt-get install python3-selenium)" % sys.executable)
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(path):
            skip("%s is missing (Debian: apt-get install %s)" % (path, pkg))
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException

    url = args.url
    if "://" not in url:
        url = "file://" + os.path.abspath(url)
    fails = Failures()
    checked = []
    try:
        driver = start_browser(webdriver)
    except WebDriverException as e:
        # Installed but not starting is a broken machine, not a missing package: fail.
        print("report_ui: chromium could not be started: %s" % first_line(e), file=sys.stderr)
        return 1
    console = []
    perf = []
    try:
        t0 = time.monotonic()
        driver.get(url)
        try:
            wait_for(driver, "return document.body && document.body.dataset.ready === '1';", args.timeout,
                     "the page never set body[data-ready=\"1\"]")
            checked.append("ready in %.2f s" % (time.monotonic() - t0))
        except TimeoutError as e:
            fails.add(str(e))
        error_text = driver.execute_script(
            "var e = document.getElementById('kf-error'); return e && !e.hidden ? e.textContent : '';")
        if error_text:
            fails.add("the page shows an error: " + error_text.strip())

        if args.expect_runs is not None:
            links = driver.execute_script(
                "return Array.from(document.querySelectorAll('a.kf-run-link[data-run]')).map(function (a) {"
                " return [a.getAttribute('data-run'), a.getAttribute('href')]; });") or []
            if len(links) != args.expect_runs:
                fails.add("%d run links (a.kf-run-link[data-run]), expected %d" % (len(links), args.expect_runs))
            for name, href in links:
                tail = (href or "").split("/runs/", 1)
                if len(tail) != 2 or urllib.parse.unquote(tail[1]) != name:
                    fails.add("run link %r goes to %r, not /runs/%s" % (name, href, urllib.parse.quote(name, safe="")))
            checked.append("%d run links" % len(links))

        if args.expect_ceilings:
            labels = driver.execute_script(
                "return Array.from(document.querySelectorAll('#kf-roofline .kf-ceiling-label'))"
                ".map(function (t) { return t.textContent; });") or []
            lines = driver.execute_script("return document.querySelectorAll('#kf-roofline line.kf-ceiling').length;")
            for want in ("copy bandwidth", "compute peak"):
                if not any(want in t for t in labels):
                    fails.add("the roofline has no %r ceiling (labels: %r)" % (want, labels))
            if lines != 2:
                fails.add("the roofline has %d ceiling lines, expected 2 (bandwidth, compute)" % lines)
            checked.append("roofline ceilings: %s" % "; ".join(labels))

        cells = driver.execute_script(
            "return Array.from(document.querySelectorAll('.kf-cell.filled')).map(function (c) {"
            " return [c.getAttribute('data-cell'), c.getAttribute('data-kernel')]; });") or []
        if args.expect_cells is not None:
            if len(cells) != args.expect_cells:
                fails.add("%d filled cells, expected %d" % (len(cells), args.expect_cells))
        elif not cells:
            fails.add("no filled heat map cell (.kf-cell.filled)")
        checked.append("%d filled cells" % len(cells))

        if cells:
            cell, kernel = cells[0]
            if not kernel:
                fails.add("the filled cell %s has no data-kernel" % cell)
            else:
                el = driver.find_element("css selector", ".kf-cell.filled")
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
                el.click()
                try:
                    wait_for(driver, "var k = document.getElementById('kf-kernel');"
                             " return !!k && k.getAttribute('data-kernel') === arguments[0];"
                             .replace("arguments[0]", json.dumps(kernel)), args.timeout,
                             "#kf-kernel never showed kernel %s after a click on cell %s" % (kernel, cell))
                    shown = driver.execute_script(
                        "var p = document.getElementById('kf-kernel-source'); return p ? p.textContent : null;")
                    try:
                        expected = api_source(args.api, args.run, kernel) if args.api else page_source_of(driver, kernel)
                    except Exception as e:  # noqa: BLE001 - any failure to get it is the test's failure
                        fails.add("cannot get kernel %s's source to compare: %s" % (kernel, e))
                        expected = None
                    if shown is None:
                        fails.add("no #kf-kernel-source for kernel %s" % kernel)
                    elif expected is not None:
                        if shown.rstrip() != expected.rstrip():
                            a, b = shown.rstrip(), expected.rstrip()
                            at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                            fails.add("#kf-kernel-source differs from kernel %s's source at character %d "
                                      "(page %r, source %r)" % (kernel, at, a[at:at + 40], b[at:at + 40]))
                        else:
                            checked.append("cell %s opens kernel %s with its source (%d chars)" % (cell, kernel, len(expected)))
                except TimeoutError as e:
                    fails.add(str(e))

        if args.expect_growth is not None:
            count = "return parseInt(document.body.dataset.evaluations || '-1', 10);"
            first = driver.execute_script(count)
            if first < 0:
                fails.add("the page does not say how many evaluations it shows (body[data-evaluations])")
            else:
                try:
                    wait_for(driver, count.replace(";", " > %d;" % first), args.expect_growth,
                             "the page still shows %d evaluations after %.0f s" % (first, args.expect_growth))
                    checked.append("live: %d evaluations grew to %d without a reload"
                                   % (first, driver.execute_script(count)))
                except TimeoutError as e:
                    fails.add(str(e))

        driver.execute_script("window.scrollTo(0, 0);")
        time.sleep(0.2)
        png = driver.get_screenshot_as_png()
        os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)) or ".", exist_ok=True)
        with open(args.screenshot, "wb") as f:
            f.write(png)
        try:
            if png_is_blank(png):
                fails.add("the screenshot %s is blank (one colour)" % args.screenshot)
            else:
                checked.append("screenshot not blank")
        except ValueError as e:
            fails.add("cannot read the screenshot: %s" % e)

        console = driver.get_log("browser")
        perf = driver.get_log("performance")
    except WebDriverException as e:
        fails.add("the browser failed: %s" % first_line(e))
    finally:
        try:
            driver.quit()
        except Exception:  # noqa: BLE001
            pass

    severe = [e for e in console if e.get("level") == "SEVERE"]
    for e in severe:
        fails.add("console: %s" % e.get("message", e))
    if not severe:
        checked.append("no SEVERE console entry (%d entries)" % len(console))

    if args.offline:
        page_url = url.split("#", 1)[0]
        bad = sorted({u for u in requested_urls(perf)
                      if not u.startswith("data:") and u.split("#", 1)[0] != page_url})
        if bad:
            fails.add("the page made requests while --offline: " + ", ".join(bad[:20]) +
                      (" (and %d more)" % (len(bad) - 20) if len(bad) > 20 else ""))
        else:
            checked.append("no request beyond the page itself")

    if fails.items:
        print("report_ui: %d check(s) failed for %s" % (len(fails.items), args.url), file=sys.stderr)
        return 1
    print("report_ui: ok: %s: %s" % (args.url, "; ".join(checked)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
