"""The timeline page in a real browser: Debian's chromium, headless, driven
over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on
fd 3, replies and events on fd 4, each message a JSON text ended by NUL;
no port, no network).  scripts/test installs chromium (PKGS_TEST); run
alone without it, the browser tests skip with a message.

Each page must load with no exception and no console error, draw one
element per call, zoom (wheel, buttons, the URL hash) and pan (drag), show
a call's details on click, and filter; read back from the DOM.  The pages
are real captures, a distro-sized boot (750 initcalls, 87 module loads) and
a capture past the drawing limit.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any, Iterator, Optional

import pytest

from analysis import render_html as rh
from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.model import Verdict
from analysis.page_structure import ROW_H, clean_func, section_key
from analysis.parse import parse_text
from analysis.render_svg import render_svg
from analysis.synth import Pair, Task, TraceWriter, simulate_module_load, simulate_module_unload
from analysis.tests.test_svg import two_second_boot

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = os.path.join(HERE, "fixtures", "captured")

#: chromium flags for a headless run that touches no network and no profile
#: of the user's (a fresh --user-data-dir each time).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio")

WIDTH, HEIGHT = 1280, 900


def chromium_binary() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless chromium and one page, over --remote-debugging-pipe."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="initexit-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Above 9 so that moving them to 3 and 4 cannot clobber each other.
        a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.log_path = os.path.join(self.profile, "chromium.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{a} 4>&{b} {a}<&- {b}>&-', binary, *FLAGS,
             f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(a, b), stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        os.close(a)
        os.close(b)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable", page=True)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                  page=True)

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self._r], [], [], max(0.0, timeout))
        if ready:
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium exited; see {self.log_path}")
            self._buf += chunk
        while b"\0" in self._buf:
            msg, self._buf = self._buf.split(b"\0", 1)
            self.events.append(json.loads(msg))

    def send(self, method: str, params: Optional[dict[str, Any]] = None, page: bool = False,
             timeout: float = 60.0) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            for n, m in enumerate(self.events):
                if m.get("id") == self._id:
                    del self.events[n]
                    if "error" in m:
                        raise RuntimeError(f"{method}: {m['error']}")
                    result: dict[str, Any] = m.get("result", {})
                    return result
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply to {method} in {timeout} s")
            self._pump(deadline - time.monotonic())

    def wait_event(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for n, m in enumerate(self.events):
                if m.get("method") == method:
                    del self.events[n]
                    return m
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} in {timeout} s")
            self._pump(deadline - time.monotonic())

    def js(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                      page=True)
        if "exceptionDetails" in r:
            raise AssertionError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, path: str, fragment: str = "") -> None:
        """Load the page (a fresh document: a new path or a reload)."""
        self.events = [m for m in self.events if "id" in m]
        self.send("Page.navigate", {"url": "about:blank"}, page=True)
        self.wait_event("Page.loadEventFired")
        url = "file://" + os.path.abspath(path) + (f"#{fragment}" if fragment else "")
        self.send("Page.navigate", {"url": url}, page=True)
        self.wait_event("Page.loadEventFired")
        assert self.js("document.body.getAttribute('data-ready')") == "1", self.errors()

    def errors(self) -> list[str]:
        """Exceptions and console errors or warnings seen so far."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(p.get("exceptionDetails"))[:500])
            elif m.get("method") == "Runtime.consoleAPICalled" and \
                    p.get("type") in ("error", "assert", "warning"):
                out.append(json.dumps(p.get("args"))[:500])
            elif m.get("method") == "Log.entryAdded" and \
                    p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(json.dumps(p.get("entry"))[:500])
        return out

    def centre_of(self, selector: str) -> tuple[float, float]:
        """Scroll the element into view; its centre in the viewport."""
        box = self.js(f"(function () {{ var e = document.querySelector({json.dumps(selector)});"
                      "e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
                      "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        return float(box[0]), float(box[1])

    def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra}, page=True)

    def click(self, x: float, y: float) -> None:
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.mouse(kind, x, y, button="left", clickCount=1)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium is not installed (scripts/test installs it: PKGS_TEST)")
    b = Browser(binary)
    try:
        yield b
    finally:
        b.close()


# ----------------------------------------------------------------- pages

def verdict_of(text: str, source: str) -> Verdict:
    return run_checks(build_capture(parse_text(text, source)))


def captured(name: str) -> Verdict:
    with open(os.path.join(CAPTURED, name), encoding="utf-8") as f:
        return verdict_of(f.read(), name)


def distro_boot() -> str:
    """A boot the size of Debian's 6.12 in QEMU: 750 classic initcalls over
    the levels (some slow, some -ENODEV), then 87 module loads by udev
    workers on two CPUs, and their unloads."""
    w = TraceWriter()
    swapper = Task("swapper/0", 1, 0)
    levels = ("early", "pure", "core", "postcore", "arch", "subsys", "fs", "device", "late")
    n = 0
    for li, level in enumerate(levels):
        w.level(swapper, level)
        for _ in range((750 * (li + 1)) // len(levels) - (750 * li) // len(levels)):
            dur = 2_000 + (n * 7919) % 400_000 + (30_000_000 if n % 97 == 5 else 0)
            w.initcall(swapper, f"{level}_drv{n}_init", -19 if n % 41 == 7 else 0, dur)
            n += 1
    for m in range(87):
        name = f"distro_mod{m}"
        task = Task("systemd-udevd", 200 + m % 8, m % 2)
        pairs = [Pair(name, 0, f"{name}_init", f"{name}_exit", init_ns=50_000 + m * 3_000)]
        if simulate_module_load(w, task, name, pairs):
            simulate_module_unload(w, Task("rmmod", 900 + m, m % 2), name, pairs)
    return w.text(cpus=2)


def write_page(tmp: str, name: str, v: Verdict) -> str:
    path = os.path.join(tmp, name + ".html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(rh.render_html(v, slowest=10))
    return path


def drawn_calls(v: Verdict) -> int:
    return min(len(v.capture.spans), rh.MAX_CALLS)


def view_ns(b: Browser) -> tuple[int, int]:
    start = b.js("document.getElementById('range').getAttribute('data-start-ns')")
    end = b.js("document.getElementById('range').getAttribute('data-end-ns')")
    return int(start), int(end)


PAGES = ("patched-boot-builtin-unwind.txt", "broken-real-unwind-order.txt",
         "module-load-unload-failed-load.txt", "stock-boot.txt", "patched-boot.dmesg")


@pytest.mark.parametrize("name", PAGES)
def test_captured_page_loads_clean_one_element_per_call(browser: Browser, name: str,
                                                        tmp_path: Any) -> None:
    v = captured(name)
    browser.open(write_page(str(tmp_path), name, v))
    assert browser.js("document.querySelectorAll('#tl-svg rect.call').length") == drawn_calls(v)
    # Every call element says which call it is, once.
    ids = browser.js("Array.from(document.querySelectorAll('#tl-svg rect.call'))"
                     ".map(function (r) { return +r.getAttribute('data-i'); })")
    assert sorted(ids) == list(range(drawn_calls(v)))
    start, end = view_ns(browser)
    spans = v.capture.spans
    assert start == min(s.start_ns for s in spans)
    assert browser.js("+document.getElementById('range').getAttribute('data-visible')") \
        == len(spans)
    assert browser.errors() == []


def test_zoom_and_pan(browser: Browser, tmp_path: Any) -> None:
    v = captured("patched-boot-builtin-unwind.txt")
    page = write_page(str(tmp_path), "unwind", v)
    browser.open(page)
    a0, b0 = view_ns(browser)
    # The wheel over the middle of the explorer zooms in around the pointer.
    x, y = browser.centre_of("#explorer")
    browser.mouse("mouseWheel", x, y, deltaX=0, deltaY=-400)
    a1, b1 = view_ns(browser)
    assert a0 < a1 < b1 < b0 and (b1 - a1) < (b0 - a0) / 2
    visible = browser.js("+document.getElementById('range').getAttribute('data-visible')")
    assert 0 < visible < len(v.capture.spans)
    # The buttons: + halves the range, the reset shows everything again.
    browser.js("document.getElementById('zoom-in').click()")
    a2, b2 = view_ns(browser)
    assert abs((b2 - a2) - (b1 - a1) / 2) <= 2
    # Dragging right moves the view earlier, keeping its width.
    x, y = browser.centre_of("#explorer")
    browser.mouse("mousePressed", x, y, button="left", clickCount=1)
    browser.mouse("mouseMoved", x + 200, y, button="left")
    browser.mouse("mouseReleased", x + 200, y, button="left", clickCount=1)
    a3, b3 = view_ns(browser)
    assert a3 < a2 and abs((b3 - a3) - (b2 - a2)) <= 2
    browser.js("document.getElementById('reset').click()")
    assert view_ns(browser) == (a0, b0)
    # The URL hash sets the view (trace-clock seconds), as a link would.
    browser.open(page, "view=0.5,0.6")
    a4, b4 = view_ns(browser)
    assert (a4, b4) == (500_000_000, 600_000_000)
    shown = browser.js("+document.getElementById('range').getAttribute('data-visible')")
    in_range = sum(1 for s in v.capture.spans
                   if s.start_ns <= 600_000_000 and (s.end_ns or 0) >= 500_000_000)
    assert shown == in_range
    assert browser.errors() == []


def test_click_detail_slowest_and_findings_links(browser: Browser, tmp_path: Any) -> None:
    v = captured("broken-real-unwind-order.txt")
    spans = v.capture.spans
    browser.open(write_page(str(tmp_path), "broken", v))
    # Clicking a call's element shows its details.
    browser.open(write_page(str(tmp_path), "broken", v), "call=3")
    x, y = browser.centre_of("#tl-svg rect.call[data-i='3']")
    browser.click(x, y)
    assert browser.js("document.getElementById('detail').getAttribute('data-call')") == "3"
    assert browser.js("document.getElementById('detail-func').textContent") \
        == clean_func(spans[3].func)
    # The slowest list's first link selects the slowest call and zooms to it.
    slowest = max(spans, key=lambda s: s.duration_ns or 0)
    x, y = browser.centre_of("#slowest a.call-link")
    browser.click(x, y)
    assert browser.js("document.getElementById('detail-func').textContent") \
        == clean_func(slowest.func)
    a, b = view_ns(browser)
    assert a <= slowest.start_ns and (slowest.end_ns or 0) <= b
    # A finding links to the calls it quotes; the failed init is one, and
    # its details link to the exits its unwind ran.
    links = browser.js("Array.from(document.querySelectorAll('#findings a.call-link'))"
                       ".map(function (a) { return a.textContent; })")
    assert links and links[0].startswith("f4_init")
    x, y = browser.centre_of("#findings a.call-link")
    browser.click(x, y)
    assert browser.js("document.getElementById('detail-func').textContent") == "f4_init"
    unwound = browser.js("Array.from(document.querySelectorAll('#detail a.call-link'))"
                         ".map(function (a) { return a.textContent; })")
    assert {f"unwound f{k}_exit" for k in range(4)} <= set(unwound)
    assert browser.js("document.querySelectorAll('#tl-svg rect.call.flag').length") == len(links)
    assert browser.errors() == []


def test_filter(browser: Browser, tmp_path: Any) -> None:
    v = captured("patched-boot-builtin-unwind.txt")
    browser.open(write_page(str(tmp_path), "filter", v))
    browser.js("document.getElementById('filter').focus()")
    browser.send("Input.insertText", {"text": "tiu"}, page=True)
    want = sum(1 for s in v.capture.spans if "tiu" in s.func or "tiu" in s.origin)
    assert want > 0
    assert browser.js("+document.getElementById('filter-count').getAttribute('data-count')") \
        == want
    assert browser.js("document.querySelectorAll('#tl-svg rect.call:not(.dim)').length") == want
    browser.js("document.getElementById('fit').click()")
    a, b = view_ns(browser)
    tiu = [s for s in v.capture.spans if "tiu" in s.func]
    assert a <= min(s.start_ns for s in tiu) and max(s.end_ns or 0 for s in tiu) <= b
    assert b - a < max(s.end_ns or 0 for s in v.capture.spans) - v.capture.spans[0].start_ns
    assert browser.errors() == []


def test_distro_sized_boot(browser: Browser, tmp_path: Any) -> None:
    v = verdict_of(distro_boot(), "distro-boot.txt")
    assert len(v.capture.spans) == 750 + 2 * 87
    page = write_page(str(tmp_path), "distro", v)
    started = time.monotonic()
    browser.open(page)
    assert time.monotonic() - started < 20
    assert browser.js("document.querySelectorAll('#tl-svg rect.call').length") == 924
    # Every level is a shaded, labelled band on the overview.
    titles = browser.js("Array.from(document.querySelectorAll('#overview rect.region title'))"
                        ".map(function (t) { return t.textContent; })")
    assert {"early", "core", "fs", "device", "late"} <= set(titles)
    browser.open(page, "zoom=20")
    a, b = view_ns(browser)
    spans = v.capture.spans
    whole = max(s.end_ns or 0 for s in spans) - spans[0].start_ns
    assert abs((b - a) - whole / 20) <= 2
    assert browser.errors() == []


def test_capped_capture(browser: Browser, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rh, "MAX_CALLS", 300)
    v = verdict_of(distro_boot(), "distro-boot.txt")
    page = write_page(str(tmp_path), "capped", v)
    browser.open(page)
    assert browser.js("document.querySelectorAll('#tl-svg rect.call').length") == 300
    note = browser.js("document.querySelector('.cap-note').textContent")
    assert note.startswith(f"300 of {len(v.capture.spans)} calls drawn")
    assert browser.js("document.querySelectorAll('#cut').length") == 1
    # The failed calls and the slowest are among the drawn ones.
    drawn = set(browser.js("JSON.parse(document.getElementById('initexit-data').textContent)"
                           ".calls.map(function (c) { return c[5]; })"))
    failed = {clean_func(s.func) for s in v.capture.spans if s.ret is not None and s.ret < 0}
    assert failed and failed <= drawn
    assert browser.errors() == []


# ------------------------------------------------ the page without a browser

@pytest.mark.parametrize("raw,clean", [
    ("con_init+0x0", "con_init"),
    ("init_hw_perf_events+0x0/0x66a", "init_hw_perf_events"),
    ("orc_header+0x2e08", "orc_header+0x2e08"),
    ("foo+0x10/0x40", "foo+0x10"),
    ("0xffffffffa0007045", "0xffffffffa0007045"),
    ("a_min_init", "a_min_init"),
])
def test_clean_func(raw: str, clean: str) -> None:
    assert clean_func(raw) == clean


def test_no_plus_0x0_and_data_cannot_end_the_script() -> None:
    v = captured("stock-boot.txt")
    page = rh.render_html(v)
    data = page.split('id="initexit-data">', 1)[1].split("</script>", 1)[0]
    assert "+0x0" not in data and "<" not in data
    assert len(json.loads(data)["calls"]) == len(v.capture.spans)
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    assert "</" not in script


def test_cap_keeps_failed_and_slowest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rh, "MAX_CALLS", 100)
    v = verdict_of(distro_boot(), "distro-boot.txt")
    d = rh.PageData(v, slowest=10)
    assert len(d.drawn) == 100 and d.cut is not None
    spans = v.capture.spans
    assert all(i in d.slot for i, s in enumerate(spans) if s.ret is not None and s.ret < 0)
    assert all(i in d.slot for i in d.slowest)
    # Everything still counts in the overview's profile.
    assert sum(d.busy) > 0 and d.total == len(spans)


# ------------------------------------------- structure: lanes, nesting, links

#: Every box element as drawn: its attributes and its place (SVG units).
BOXES_JS = """Array.from(document.querySelectorAll('#tl-svg rect.box')).map(function (r) {
  return {b: +r.getAttribute('data-b'), parent: +r.getAttribute('data-parent'),
          lane: +r.getAttribute('data-lane'), cls: r.getAttribute('class'),
          call: r.hasAttribute('data-i') ? +r.getAttribute('data-i') : -1,
          shown: r.style.display !== 'none',
          x: +r.getAttribute('x'), y: +r.getAttribute('y'),
          w: +r.getAttribute('width'), h: +r.getAttribute('height')}; })"""

LANES_JS = """Array.from(document.querySelectorAll('#tl-svg rect.lane')).map(function (r) {
  var n = r.getAttribute('data-lane');
  var t = document.querySelector('#tl-svg g.lane-name[data-lane="' + n + '"] text');
  var tb = t.getBBox();
  return {name: t.textContent, y: +r.getAttribute('y'), h: +r.getAttribute('height'),
          ty: tb.y, th: tb.height}; })"""

#: Each arrow: the boxes it joins, its ends and its highest point.
LINKS_JS = """Array.from(document.querySelectorAll('#tl-svg path.link')).map(function (p) {
  var n = p.getTotalLength(), a = p.getPointAtLength(0), z = p.getPointAtLength(n);
  return {from: +p.getAttribute('data-from'), to: +p.getAttribute('data-to'),
          cls: p.getAttribute('class'), shown: p.style.display !== 'none',
          x1: a.x, y1: a.y, x2: z.x, y2: z.y, top: p.getBBox().y}; })"""


def call_names(browser: Browser) -> list[str]:
    names: list[str] = browser.js(
        "JSON.parse(document.getElementById('initexit-data').textContent)"
        ".calls.map(function (c) { return c[5]; })")
    return names


@pytest.mark.parametrize("name", ["module-load-unload-failed-load.txt",
                                  "patched-boot-builtin-unwind.txt"])
def test_lanes_per_cpu(browser: Browser, name: str, tmp_path: Any) -> None:
    """One lane per CPU, named; every box inside its lane; a boot call in
    the lane of the CPU it ran on, a module's calls in the lane of the CPU
    its load (or unload) started on."""
    v = captured(name)
    browser.open(write_page(str(tmp_path), name, v))
    lanes = browser.js(LANES_JS)
    assert [lane["name"] for lane in lanes] == ["CPU 0", "CPU 1"]
    for upper, lower in zip(lanes, lanes[1:]):
        assert upper["y"] + upper["h"] <= lower["y"]
    for lane in lanes:  # the name sits in the lane's header strip
        assert lane["y"] <= lane["ty"] and lane["ty"] + lane["th"] <= lane["y"] + 14 + 1
    spans = v.capture.spans
    first_cpu: dict[tuple[str, str, int], int] = {}
    for s in spans:
        first_cpu.setdefault(section_key(s), s.start.cpu)
    boxes = browser.js(BOXES_JS)
    calls = [b for b in boxes if b["call"] >= 0]
    assert len(calls) == len(spans)
    for b in boxes:
        lane = lanes[b["lane"]]
        assert lane["y"] + 14 <= b["y"] and b["y"] + b["h"] <= lane["y"] + lane["h"], b
    for b in calls:
        s = spans[b["call"]]
        cpu = s.start.cpu if s.path.value == "boot" else first_cpu[section_key(s)]
        assert lanes[b["lane"]]["name"] == f"CPU {cpu}", (s.func, s.start.line)
    assert browser.errors() == []


def test_nesting_drawn_inside(browser: Browser, tmp_path: Any) -> None:
    """Zoomed on the real failed load: the load's box holds its nine calls,
    each pair init holds its do_one_initcall, every child is drawn inside
    its parent, below the parent's own row; zooming out keeps it so."""
    v = captured("module-load-unload-failed-load.txt")
    page = write_page(str(tmp_path), "nesting", v)
    browser.open(page, "view=5.4750,5.4875")
    names = call_names(browser)

    def check() -> int:
        boxes = {b["b"]: b for b in browser.js(BOXES_JS)}
        inside = 0
        for b in boxes.values():
            p = boxes.get(b["parent"])
            if p is None or not (b["shown"] and p["shown"]):
                continue
            assert p["x"] - 0.11 <= b["x"] and b["x"] + b["w"] <= p["x"] + p["w"] + 1.2, (b, p)
            assert p["y"] + ROW_H <= b["y"] and b["y"] + b["h"] <= p["y"] + p["h"], (b, p)
            inside += 1
        return inside

    assert check() >= 9 + 5
    boxes = browser.js(BOXES_JS)
    (load,) = [b for b in boxes if "load-failed" in b["cls"]]
    held = sorted(names[b["call"]] for b in boxes if b["parent"] == load["b"])
    assert held == sorted([f"f{k}_init" for k in range(5)] + [f"f{k}_exit" for k in range(4)])
    for init in (b for b in boxes if b["parent"] == load["b"] and "k-init" in b["cls"]):
        (inner,) = [b for b in boxes if b["parent"] == init["b"]]
        assert inner["cls"].startswith("box inner")
    # The load's own label names the failure.
    assert browser.js("Array.from(document.querySelectorAll('#tl-svg text.glbl'))"
                      ".some(function (t) { return t.textContent.indexOf("
                      "'load initexit_fail: f4_init failed (-204)') === 0; })")
    browser.js("document.getElementById('zoom-out').click()")
    assert check() > 0
    # A click on the load's box lists its calls.
    browser.js(f"document.querySelector('#tl-svg rect[data-b=\"{load['b']}\"]')"
               ".scrollIntoView({block: 'center'})")
    x, y = browser.js(f"(function () {{ var r = document.querySelector('#tl-svg "
                      f"rect[data-b=\"{load['b']}\"]').getBoundingClientRect();"
                      "return [r.right - 3, r.top + 6]; })()")
    browser.click(x, y)
    assert browser.js("document.getElementById('detail').getAttribute('data-box')") \
        == str(load["b"])
    assert browser.js("document.querySelectorAll('#detail a.call-link').length") == 9
    assert browser.errors() == []


@pytest.mark.parametrize("name,failed,exits", [
    ("module-load-unload-failed-load.txt", "f4_init", [f"f{k}_exit" for k in (3, 2, 1, 0)]),
    ("patched-boot-builtin-unwind.txt", "tiu2_init", ["tiu1_exit", "tiu0_exit"]),
])
def test_unwind_link(browser: Browser, tmp_path: Any, name: str, failed: str,
                     exits: list[str]) -> None:
    """An arrow from the failing init's end to the start of each exit its
    unwind ran, rising above them; it follows a zoom, and selecting the
    failed init highlights its arrows."""
    v = captured(name)
    page = write_page(str(tmp_path), name, v)
    spans = v.capture.spans
    f_span = next(s for s in spans if clean_func(s.func) == failed)
    last = max(s.end_ns or 0 for s in spans if clean_func(s.func) in exits)
    pad = (last - f_span.start_ns) // 10
    a, b = f_span.start_ns - pad, last + pad
    browser.open(page, f"view={a / 1e9:.9f},{b / 1e9:.9f}")
    names = call_names(browser)

    width = browser.js("+document.getElementById('tl-svg').getAttribute('width')")

    def check() -> list[dict[str, Any]]:
        """The arrows' ends on their boxes' edges, where those are in view
        (the page clips a box at the view's edges); how many were whole."""
        boxes = {bx["b"]: bx for bx in browser.js(BOXES_JS)}
        links = browser.js(LINKS_JS)
        assert [names[boxes[lk["to"]]["call"]] for lk in links] == exits
        whole = []
        for lk in links:
            src, dst = boxes[lk["from"]], boxes[lk["to"]]
            assert names[src["call"]] == failed and "k-init-failed" in src["cls"]
            assert "k-exit-unwind" in dst["cls"] and "link unwind" in lk["cls"]
            if not (lk["shown"] and 0 <= lk["x1"] <= width and 0 <= lk["x2"] <= width):
                continue
            assert src["shown"] and dst["shown"]
            assert abs(lk["x1"] - (src["x"] + src["w"])) <= 1.5 and abs(lk["y1"] - src["y"]) <= 1
            assert abs(lk["x2"] - dst["x"]) <= 1.5 and abs(lk["y2"] - dst["y"]) <= 1
            assert lk["top"] < min(src["y"], dst["y"]) - 3  # it rises: visible over the row
            whole.append(lk)
        return whole

    assert len(check()) == len(exits)
    # Zoomed to the failed init and the first exit, the arrows follow.
    x1 = browser.js(LINKS_JS)[0]["x1"]
    first = next(s for s in spans if clean_func(s.func) == exits[0])
    pad = ((first.end_ns or 0) - f_span.start_ns) // 10
    browser.js(f"location.hash = 'view={(f_span.start_ns - pad) / 1e9:.9f},"
               f"{((first.end_ns or 0) + pad) / 1e9:.9f}'")
    assert view_ns(browser)[1] - view_ns(browser)[0] < b - a
    assert check() and abs(browser.js(LINKS_JS)[0]["x1"] - x1) > 5
    # Selecting the failed init highlights its arrows.
    i = names.index(failed)
    browser.open(page, f"view={a / 1e9:.9f},{b / 1e9:.9f}&call={i}")
    assert all("hot" in lk["cls"] for lk in browser.js(LINKS_JS))
    assert len(check()) == len(exits)
    assert browser.errors() == []


def test_search_dims_boxes(browser: Browser, tmp_path: Any) -> None:
    """The filter dims the calls that do not match, and the boxes holding
    none that match; fit zooms to the matches."""
    v = captured("module-load-unload-failed-load.txt")
    browser.open(write_page(str(tmp_path), "search", v), "filter=initexit_fail")
    assert browser.js("+document.getElementById('filter-count').getAttribute('data-count')") == 9
    boxes = browser.js(BOXES_JS)
    groups = {b["cls"].split()[1] + ("-failed" if "load-failed" in b["cls"] else ""):
              "dim" in b["cls"] for b in boxes if b["call"] < 0 and "inner" not in b["cls"]}
    assert groups == {"load-failed": False, "load": True, "unload": True}
    inner = [b for b in boxes if b["cls"].startswith("box inner")]
    assert sum(1 for b in inner if "dim" not in b["cls"]) == 5  # f0..f4_init's
    browser.js("document.getElementById('fit').click()")
    start, end = view_ns(browser)
    fail = [s for s in v.capture.spans if s.origin == "initexit_fail"]
    assert start <= fail[0].start_ns and max(s.end_ns or 0 for s in fail) <= end
    assert end - start < 20_000_000
    assert browser.errors() == []


@pytest.mark.parametrize("name", ["two-seconds", *PAGES])
def test_overview_axis_labels_do_not_overlap(browser: Browser, tmp_path: Any, name: str) -> None:
    v = two_second_boot() if name == "two-seconds" else captured(name)
    browser.open(write_page(str(tmp_path), "axis", v))
    texts = browser.js("""Array.from(document.querySelectorAll(
        '#overview text.tick, #overview text.axis-name')).map(function (t) {
        var r = t.getBoundingClientRect(); return [r.left, r.right, t.textContent]; })""")
    ov = browser.js("(function () { var r = document.getElementById('overview')"
                    ".getBoundingClientRect(); return [r.left, r.right]; })()")
    texts.sort()
    assert texts[-1][2] == rh.AXIS_NAME and len(texts) >= 3
    for (_a0, a1, ta), (b0, _b1, tb) in zip(texts, texts[1:]):
        assert a1 <= b0, f"{ta!r} overlaps {tb!r}"
    assert ov[0] <= texts[0][0] and texts[-1][1] <= ov[1]
    assert browser.errors() == []


def test_svg_export_in_the_browser(browser: Browser, tmp_path: Any) -> None:
    """The SVG export opens as an image of its own: every box, each child
    inside its parent as the browser lays it out, the four arrows."""
    v = captured("module-load-unload-failed-load.txt")
    path = os.path.join(str(tmp_path), "load.svg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_svg(v, view=(5_476_000_000, 5_479_000_000)))
    browser.events = [m for m in browser.events if "id" in m]
    browser.send("Page.navigate", {"url": "file://" + path}, page=True)
    browser.wait_event("Page.loadEventFired")
    boxes = browser.js("""Array.from(document.querySelectorAll('rect[data-box]')).map(function (r) {
        var b = r.getBoundingClientRect();
        return [+r.getAttribute('data-box'), +r.getAttribute('data-parent'),
                b.left, b.top, b.right, b.bottom]; })""")
    assert len(boxes) > 10
    by = {b[0]: b for b in boxes}
    nested = [(b, by[b[1]]) for b in boxes if b[1] in by]
    assert len(nested) >= 9
    for c, p in nested:
        assert p[2] - 0.2 <= c[2] and c[4] <= p[4] + 1.2 and p[3] < c[3] and c[5] <= p[5] + 0.01
    assert browser.js("document.querySelectorAll('path.link.unwind').length") == 4
    assert browser.errors() == []


PROBES_PAGE = os.path.join(HERE, "fixtures", "probes", "defer-boot.dmesg")


def test_probes_drawn_in_their_calls_and_lanes(browser: Browser, tmp_path: Any) -> None:
    """The real boot with a deferring probe (fixtures/probes/): a box per
    probe; the supplier's probe drawn inside supplier_init's box, the
    consumer's bound retry in the deferred lane, the async probe in its
    lane; a click shows the probe's line; the filter finds a device."""
    with open(PROBES_PAGE, encoding="utf-8") as f:
        v = verdict_of(f.read(), "defer-boot.dmesg")
    probes = v.capture.probes
    browser.open(write_page(str(tmp_path), "probes", v), "view=33.8650,33.8940")
    boxes = {b["b"]: b for b in browser.js(BOXES_JS)}
    prs = browser.js("Array.from(document.querySelectorAll('#tl-svg rect.probe')).map("
                     "function (r) { return [+r.getAttribute('data-b'), +r.getAttribute('data-probe')]; })")
    assert sorted(p for _b, p in prs) == list(range(len(probes)))
    lanes = [ln["name"] for ln in browser.js(LANES_JS)]
    names = call_names(browser)
    by_probe = {p: boxes[b] for b, p in prs}
    for k, pr in enumerate(probes):
        b = by_probe[k]
        if pr.mode.value == "in-call":
            parent = boxes[b["parent"]]
            assert names[parent["call"]] == pr.call_func
            if b["shown"] and parent["shown"]:
                assert parent["x"] - 0.11 <= b["x"] and b["x"] + b["w"] <= parent["x"] + parent["w"] + 1.2
                assert parent["y"] + ROW_H <= b["y"] and b["y"] + b["h"] <= parent["y"] + parent["h"]
        else:
            assert b["parent"] == -1
            want = "deferred probes (kworker)" if pr.mode.value == "deferred" \
                else "probes outside any call (async)"
            assert lanes[b["lane"]] == want
    supplier = next(k for k, pr in enumerate(probes) if pr.device == "initexit-probe-supplier")
    sb = by_probe[supplier]
    assert sb["shown"] and boxes[sb["parent"]]["shown"]
    # A click on the probe shows its line.
    browser.click(*browser.centre_of(f"#tl-svg rect[data-b=\"{sb['b']}\"]"))
    assert browser.js("document.getElementById('detail').getAttribute('data-box')") == str(sb["b"])
    detail = browser.js("document.getElementById('detail').textContent")
    assert "probe initexit-probe-supplier" in detail and "in supplier_init" in detail
    assert f"{probes[supplier].line}: " in detail
    # The filter keeps the matching probes, dims the others.
    browser.js("var f = document.getElementById('filter'); f.value = 'initexit-probe-consumer';"
               "f.dispatchEvent(new Event('input'))")
    now = {b["b"]: b for b in browser.js(BOXES_JS)}
    lit = sorted(p for b, p in prs if "dim" not in now[b]["cls"])
    assert lit == [k for k, pr in enumerate(probes) if pr.device == "initexit-probe-consumer"]
    assert browser.errors() == []


CALLER_PAGE = os.path.join(HERE, "fixtures", "probes", "patched-boot-caller.dmesg")


def test_a_probe_another_task_printed_is_drawn_on_the_async_lane(browser: Browser, tmp_path: Any) -> None:
    """The capture with caller ids (fixtures/probes/patched-boot-caller.dmesg,
    derived): serio1's first probe, printed by task 45 during slab_late_init,
    is drawn in the async lane, whose label names the task, not inside the
    call's box; a click says where it ran and which task printed it."""
    with open(CALLER_PAGE, encoding="utf-8") as f:
        v = verdict_of(f.read(), "patched-boot-caller.dmesg")
    k = next(k for k, p in enumerate(v.capture.probes)
             if "probe of serio1 returned 19 after 5115 usecs" in p.text)
    browser.open(write_page(str(tmp_path), "caller", v), "view=0.7895,0.8030")
    boxes = {b["b"]: b for b in browser.js(BOXES_JS)}
    (b,) = browser.js(f"Array.from(document.querySelectorAll('#tl-svg rect.probe[data-probe=\"{k}\"]'))"
                      ".map(function (r) { return +r.getAttribute('data-b'); })")
    box = boxes[b]
    lanes = [ln["name"] for ln in browser.js(LANES_JS)]
    assert box["shown"] and box["parent"] == -1
    assert lanes[box["lane"]] == "probes outside any call (async), printed by task 45"
    names = call_names(browser)
    slab = next(c for c in boxes.values() if c["call"] >= 0 and names[c["call"]].startswith("slab_late_init"))
    assert slab["lane"] != box["lane"]
    browser.click(*browser.centre_of(f"#tl-svg rect[data-b=\"{b}\"]"))
    detail = browser.js("document.getElementById('detail').textContent")
    assert "probe serio1" in detail and "async, during slab_late_init, task 45" in detail
    assert browser.errors() == []
