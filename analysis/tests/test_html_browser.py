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
from analysis.parse import parse_text
from analysis.synth import Pair, Task, TraceWriter, simulate_module_load, simulate_module_unload

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
        == rh.clean_func(spans[3].func)
    # The slowest list's first link selects the slowest call and zooms to it.
    slowest = max(spans, key=lambda s: s.duration_ns or 0)
    x, y = browser.centre_of("#slowest a.call-link")
    browser.click(x, y)
    assert browser.js("document.getElementById('detail-func').textContent") \
        == rh.clean_func(slowest.func)
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
    failed = {rh.clean_func(s.func) for s in v.capture.spans if s.ret is not None and s.ret < 0}
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
    assert rh.clean_func(raw) == clean


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
