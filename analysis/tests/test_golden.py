"""Golden-file tests for every output format, plus structural checks of the
HTML (parsed, SVG well-formed) and the JSON (parsed, Chrome events nest)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import pytest

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.model import Verdict
from analysis.parse import parse_text
from analysis.tests.golden_outputs import (
    FIXTURES,
    GOLDEN_FIXTURES,
    SUFFIXES,
    golden_path,
    render_all,
)

CASES = [(f, k) for f in GOLDEN_FIXTURES for k in SUFFIXES]


@pytest.mark.parametrize("fixture,kind", CASES, ids=[f"{f}:{k}" for f, k in CASES])
def test_matches_golden(fixture: str, kind: str) -> None:
    got = render_all(fixture)[kind]
    with open(golden_path(fixture, kind), encoding="utf-8") as f:
        want = f.read()
    assert got == want, "output changed: run python3 -m analysis.tests.regen_golden and review"


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.stack: list[str] = []
        self.external: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href") and v and not v.startswith("#"):
                self.external.append(v)
        if tag not in ("meta", "line", "br", "link", "img", "input"):
            self.stack.append(tag)
        self._in_title = tag == "title"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def render_all_verdict(fixture: str) -> Verdict:
    with open(f"{FIXTURES}/{fixture}.txt", encoding="utf-8") as f:
        return run_checks(build_capture(parse_text(f.read(), fixture + ".txt")))


@pytest.mark.parametrize("fixture", GOLDEN_FIXTURES)
def test_html_structure(fixture: str) -> None:
    page = render_all(fixture)["html"]
    c = _Collector()
    c.feed(page)
    c.close()
    assert not c.stack, f"unclosed tags {c.stack}"
    assert c.title.startswith("initexit timeline")
    assert not c.external, "the page must be self-contained"
    assert c.tags.count("svg") == 1 and "rect" in c.tags  # the static overview
    assert "Legend:" in page and 'id="explorer"' in page and 'id="controls"' in page
    assert 'id="verdict"' in page and 'id="checks"' in page
    # The overview is well-formed XML: shaded regions, an axis in seconds.
    i = page.index("<svg")
    root = ET.fromstring(page[i:page.index("</svg>", i) + len("</svg>")])
    svg_ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text or "" for t in root.iter(svg_ns + "text")]
    assert "trace clock (s)" in texts
    assert [r for r in root.iter(svg_ns + "rect") if r.get("class") == "region"]
    # The explorer's data: one record per call, names without +0x0.
    data = json.loads(page.split('id="initexit-data">', 1)[1].split("</script>", 1)[0])
    calls = render_all_verdict(fixture).capture.spans
    assert len(data["calls"]) == len(calls)
    assert all("+0x0" not in c[5] for c in data["calls"])


def _nesting_ok(events: list[dict[str, Any]]) -> None:
    by_thread: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for e in events:
        if e["ph"] == "X":
            by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for evs in by_thread.values():
        open_ends: list[float] = []
        for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
            while open_ends and open_ends[-1] <= e["ts"]:
                open_ends.pop()
            end = e["ts"] + e["dur"]
            if open_ends:
                assert end <= open_ends[-1] + 1e-6, f"{e['name']} overlaps its parent"
            open_ends.append(end)


@pytest.mark.parametrize("fixture", GOLDEN_FIXTURES)
def test_json_structure(fixture: str) -> None:
    out = render_all(fixture)
    chrome = json.loads(out["chrome"])
    events = chrome["traceEvents"]
    assert chrome["displayTimeUnit"] == "ns"
    assert all({"name", "ph", "pid", "tid"} <= e.keys() for e in events)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    xs = [e for e in events if e["ph"] == "X"]
    assert xs and all(e["dur"] >= 0 and "ts" in e for e in xs)
    _nesting_ok(events)
    # Pair inits contain their do_one_initcall span.
    assert {e["cat"] for e in xs} >= {"init", "initcall"}

    verdict = json.loads(out["verdict"])
    assert verdict["schema"] == "initexit-verdict/1"
    assert verdict["exit_status"] == (0 if verdict["ok"] else 1)
    assert [c["name"] for c in verdict["checks"]][0] == "trace-complete"

    timeline = json.loads(out["timeline"])
    assert timeline["schema"] == "initexit-timeline/1"
    for s in timeline["spans"]:
        assert {"path", "origin", "prio", "func", "start_ns", "duration_ns", "status"} <= s.keys()
