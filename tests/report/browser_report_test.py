#!/usr/bin/env python3
"""The HTML report in a real browser: Debian's chromium, headless, loads the report of a corpus
model with a graph break, of a failing fault-injected model and of a small fuzz store, and the test
asserts on the DOM chromium rendered (break codes and lines, kernel source in a collapsible block
that the page's script highlighted, every link resolving to a file and anchor that exist, no console
message), and saves a screenshot of each page kind that must not be blank. With --measure it also
times a 200-node model's report and a 1000-case store's in chromium and checks < 2 s and < 5 MB
(docs/report.md has the numbers); --screenshots DIR keeps the screenshots (docs/images/).

Usage: browser_report_test.py SOURCE_DIR BINARY_DIR [--measure] [--screenshots DIR]
Skips (exit 0 with a message) only when chromium is not installed; ci/lib/setup.sh installs it.
"""
import html.parser
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary, scratch):
        self.binary = binary
        self.profile = os.path.join(scratch, "chromium-profile")

    def _run(self, args, url):
        cmd = [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--user-data-dir=" + self.profile, "--enable-logging=stderr", "--v=0"] + args + [url]
        start = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return p, time.monotonic() - start

    def dom(self, path):
        """The DOM after load (scripts run), the console messages, and the seconds it took."""
        p, seconds = self._run(["--dump-dom"], "file://" + os.path.abspath(path))
        console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
        return p.stdout, console, seconds

    def screenshot(self, path, png, height=1400):
        self._run(["--screenshot=" + png, "--window-size=1280,%d" % height, "--hide-scrollbars"],
                  "file://" + os.path.abspath(path))
        return os.path.exists(png)


def png_colours(path, sample=9):
    """Distinct colours among every sample-th pixel of an 8-bit RGB/RGBA PNG (no PIL needed)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG format"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % sample == 0:
            for x in range(0, width, sample):
                colours.add(bytes(line[x * bpp:x * bpp + 3]))
        prev = line
    return colours


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "href" and value:
                self.hrefs.append(value)
            if name == "id" and value:
                self.ids.add(value)


def ids_of(path):
    p = Links()
    p.feed(open(path, encoding="utf-8").read())
    return p.ids


def check_links(page, dom):
    """Every link of the rendered page names a file that exists, and an anchor that exists in it."""
    links = Links()
    links.feed(dom)
    for href in links.hrefs:
        if re.match(r"^[a-z]+:", href):
            check(href.startswith("file:"), "%s links off the machine: %s" % (page, href))
            continue
        target, _, anchor = href.partition("#")
        target_path = os.path.join(os.path.dirname(page), urllib.parse.unquote(target)) if target else page
        check(os.path.exists(target_path), "%s links to a missing file: %s" % (page, href))
        if anchor and target_path.endswith(".html") and os.path.exists(target_path):
            check(anchor in ids_of(target_path), "%s links to a missing anchor: %s" % (page, href))
    return len(links.hrefs)


def load(browser, page, shots, shot_name):
    dom, console, seconds = browser.dom(page)
    check("</html>" in dom or "</body>" in dom, "%s: chromium rendered nothing" % page)
    check(not console, "%s: console messages: %s" % (page, console))
    check_links(page, dom)
    if shots is not None:
        png = os.path.join(shots, shot_name + ".png")
        check(browser.screenshot(page, png), "%s: no screenshot" % page)
        if os.path.exists(png):
            check(len(png_colours(png)) >= 4, "%s: the screenshot is blank" % png)
    return dom, seconds


def gbcheck(binary_dir, source_dir, args, ok=(0,)):
    for i, a in enumerate(args[:-1]):  # --html FILE needs its folder (as --json does)
        if a == "--html":
            os.makedirs(os.path.dirname(args[i + 1]), exist_ok=True)
    p = subprocess.run([os.path.join(binary_dir, "bin", "gbcheck")] + args, cwd=source_dir, capture_output=True, text=True,
                       timeout=900)
    if p.returncode not in ok:
        print(p.stdout + p.stderr, file=sys.stderr)
        raise SystemExit("gbcheck %s exited %d" % (" ".join(args), p.returncode))
    return p


def site_bytes(folder, prefix=""):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.startswith(prefix) and f.endswith(".html"))


def chain_model(path, nodes):
    """A model of `nodes` ops: elementwise chains with a matmul and a print every so often."""
    lines = ["format: gbcheck/v1", "name: chain%d" % nodes, "inputs:", "  x: {shape: [16, 16], dtype: float32}",
             "params:", "  w: {shape: [16, 16], dtype: float32}", "graph:"]
    prev, ops = "x", ["relu", "tanh", "sigmoid", "neg", "abs"]
    for i in range(nodes):
        name = "n%d" % i
        if i % 25 == 24:
            lines.append("  - {op: print, args: [%s], message: \"at %d\"}" % (prev, i))
            continue
        if i % 10 == 9:
            lines.append("  - {id: %s, op: matmul, args: [%s, w]}" % (name, prev))
        elif i % 3 == 2:
            lines.append("  - {id: %s, op: add, args: [%s, x]}" % (name, prev))
        else:
            lines.append("  - {id: %s, op: %s, args: [%s]}" % (name, ops[i % len(ops)], prev))
        prev = name
    lines += ["outputs: [%s]" % prev, "check: {cases: 2, tolerance: {float32: {rtol: 1.0e-3, atol: 1.0e-3}}}"]
    open(path, "w").write("\n".join(lines) + "\n")


def inflate_store(db_path, cases, signatures):
    """Copies a store's case rows (and signatures, under new keys) until it holds `cases` cases."""
    con = sqlite3.connect(db_path)
    n = con.execute("SELECT count(*), max(idx) + 1 FROM cases").fetchone()
    have, step = n[0], n[1]
    k = 1
    while have < cases:
        con.execute("INSERT INTO cases SELECT run_id, idx + ?, graph_seed + ?, outcome, nodes, elapsed_ms, recorded_at FROM cases "
                    "WHERE idx < ?", (k * step, k * step, step))
        have = con.execute("SELECT count(*) FROM cases").fetchone()[0]
        k += 1
    con.execute("DELETE FROM cases WHERE idx >= (SELECT min(idx) FROM cases) + ?", (cases,))
    cols = [r[1] for r in con.execute("PRAGMA table_info(signatures)") if r[1] != "id"]
    base = con.execute("SELECT count(*) FROM signatures").fetchone()[0]
    k = 1
    while base and con.execute("SELECT count(*) FROM signatures").fetchone()[0] < signatures:
        select = ", ".join("key || '-copy%d'" % k if c == "key" else c for c in cols)
        con.execute("INSERT INTO signatures(%s) SELECT %s FROM signatures WHERE key NOT LIKE '%%-copy%%'" % (", ".join(cols), select))
        k += 1
    con.commit()
    return con.execute("SELECT count(*) FROM cases").fetchone()[0], con.execute("SELECT count(*) FROM signatures").fetchone()[0]


def main():
    args = sys.argv[1:]
    source_dir, binary_dir = os.path.abspath(args[0]), os.path.abspath(args[1])
    measure = "--measure" in args
    shots_dir = args[args.index("--screenshots") + 1] if "--screenshots" in args else None
    binary = chromium_binary()
    if not binary:
        print("SKIP: chromium is not installed (ci/lib/setup.sh installs it: apt-get install chromium)")
        return 0
    scratch = tempfile.mkdtemp(prefix="gbcheck-browser-")
    shots = shots_dir or os.path.join(scratch, "shots")
    os.makedirs(shots, exist_ok=True)
    browser = Browser(binary, scratch)
    try:
        # 1. A corpus model with a graph break, checked on gbc.
        breaks = os.path.join(scratch, "breaks", "report.html")
        gbcheck(binary_dir, source_dir, ["corpus/docs/print_break.yaml", "--backend", "gbc", "--html", breaks])
        dom, _ = load(browser, breaks, shots, "index")
        check("GB001" in dom, "index: no GB001")
        check('class="node break"' in dom, "index: the picture marks no graph break")
        dom, _ = load(browser, os.path.join(scratch, "breaks", "report-breaks.html"), shots, "breaks")
        check("GB001" in dom and "print_break.yaml:8:" in dom, "breaks page: no GB001 with its line")
        check("report-graph-breaks.html#gb001-print" in dom, "breaks page: no link to the GB001 section")
        graph = os.path.join(scratch, "breaks", "report-graph-gbc-0.html")
        dom, _ = load(browser, graph, shots, "graph")
        check(re.search(r'<details[^>]*>\s*<summary>generated source of module [^<]*</summary><pre><code class="cpp" '
                        r'data-highlighted="1">', dom) is not None,
              "graph page: no collapsible, highlighted kernel source")
        check("print_break.yaml:7:" in dom, "graph page: no source line for relu")
        load(browser, os.path.join(scratch, "breaks", "report-graph-breaks.html"), None, "")
        load(browser, os.path.join(scratch, "breaks", "report-passes.html"), None, "")

        # 2. A failing fault-injected model.
        fail = os.path.join(scratch, "fail", "report.html")
        gbcheck(binary_dir, source_dir, ["corpus/faults/reduce-bound.yaml", "--inject-fault", "reduce-bound", "--backend", "gbc",
                                         "--html", fail], ok=(1,))
        dom, _ = load(browser, os.path.join(scratch, "fail", "report-failures.html"), shots, "failures")
        check("worst element" in dom and "would pass with" in dom, "failures page: no worst element or passing tolerance")
        check("--inject-fault reduce-bound" in dom and "gbcheck reduce corpus/faults/reduce-bound.yaml" in dom,
              "failures page: no replay or reduce command")
        dom, _ = load(browser, fail, None, "")
        check('badge fail' in dom, "index of a failing check: no FAIL badge")

        # 3. A small fuzz store with planted bugs, reduced.
        store = os.path.join(scratch, "store")
        gbcheck(binary_dir, source_dir, ["fuzz", "--out", store, "--cases", "4", "--backends", "gbc", "--max-nodes", "6",
                                         "--graph-cases", "2", "--jobs", "2", "--reduce-checks", "40", "--inject-fault", "const",
                                         "--quiet"])
        store_html = os.path.join(scratch, "store-report", "store.html")
        gbcheck(binary_dir, source_dir, ["db", "report", store, "--html", store_html], ok=(0, 1))
        dom, _ = load(browser, store_html, shots, "store")
        check("New signatures" in dom, "store page: no new signatures section")
        check('<svg' in dom and 'class="graph"' in dom, "store page: no reduced-model picture")
        check("reduced model" in dom, "store page: no link to a reduced model")

        if measure:
            big = os.path.join(scratch, "chain200.yaml")
            chain_model(big, 200)
            big_html = os.path.join(scratch, "big", "report.html")
            gbcheck(binary_dir, source_dir, [big, "--backend", "gbc", "--html", big_html], ok=(0, 1))
            blank = os.path.join(scratch, "blank.html")
            open(blank, "w").write("<!DOCTYPE html><html><body></body></html>")
            startup = min(browser.dom(blank)[2] for _ in range(3))
            page_times = {}
            for f in sorted(os.listdir(os.path.dirname(big_html))):
                if f.endswith(".html"):
                    page_times[f] = min(browser.dom(os.path.join(os.path.dirname(big_html), f))[2] for _ in range(2)) - startup
            worst = max(page_times, key=page_times.get)
            size = site_bytes(os.path.dirname(big_html))
            print("200-node model: %d pages, %.2f MB in all, slowest page %s %.2f s over chromium's start (%.2f s)"
                  % (len(page_times), size / 1e6, worst, page_times[worst], startup))
            check(page_times[worst] < 2.0, "200-node report renders in %.2f s (limit 2 s)" % page_times[worst])
            check(size < 5e6, "200-node report is %.2f MB (limit 5 MB)" % (size / 1e6))
            cases, sigs = inflate_store(os.path.join(store, "fuzz.db"), 1000, 100)
            big_store = os.path.join(scratch, "store-report", "big.html")
            gbcheck(binary_dir, source_dir, ["db", "report", store, "--html", big_store], ok=(0, 1))
            seconds = min(browser.dom(big_store)[2] for _ in range(2)) - startup
            size = os.path.getsize(big_store)
            print("fuzz store of %d cases, %d signatures: %.2f MB, renders in %.2f s over chromium's start" % (cases, sigs, size / 1e6, seconds))
            check(seconds < 2.0, "1000-case store report renders in %.2f s (limit 2 s)" % seconds)
            check(size < 5e6, "1000-case store report is %.2f MB (limit 5 MB)" % (size / 1e6))
    finally:
        if shots_dir is None or not FAILURES:
            shutil.rmtree(scratch, ignore_errors=True)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES), file=sys.stderr)
        return 1
    print("browser report test: all pages render, links resolve, no console messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
