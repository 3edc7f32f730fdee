"""The outputs compared against golden files, rendered from fixtures with
the fixture's base name as source so the files do not depend on paths."""

from __future__ import annotations

import os

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.diff import diff_captures, render_diff
from analysis.parse import parse_text
from analysis.render_chrome import chrome_trace
from analysis.render_html import render_html
from analysis.render_json import dumps, timeline_dict, verdict_dict
from analysis.render_svg import render_svg
from analysis.render_text import render_text

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
GOLDEN = os.path.join(HERE, "golden")

#: Fixtures that have golden outputs.
GOLDEN_FIXTURES = (
    "synthetic-patched-boot",
    "synthetic-module-fail-unwind",
    "broken-unwind-after-failure",
)

#: Output name -> file suffix.
SUFFIXES = {
    "text": ".timeline.txt",
    "html": ".timeline.html",
    "svg": ".timeline.svg",
    "chrome": ".chrome.json",
    "timeline": ".timeline.json",
    "verdict": ".verdict.json",
}


def render_all(fixture: str) -> dict[str, str]:
    with open(os.path.join(FIXTURES, fixture + ".txt"), encoding="utf-8") as f:
        text = f.read()
    v = run_checks(build_capture(parse_text(text, fixture + ".txt")))
    return {
        "text": render_text(v, slowest=5),
        "html": render_html(v, slowest=5),
        "svg": render_svg(v),
        "chrome": dumps(chrome_trace(v)),
        "timeline": dumps(timeline_dict(v.capture)),
        "verdict": dumps(verdict_dict(v)),
    }


def golden_path(fixture: str, kind: str) -> str:
    return os.path.join(GOLDEN, fixture + SUFFIXES[kind])


CAPTURED = os.path.join(FIXTURES, "captured")

#: Diff goldens: name -> (A, B), fixture paths relative to fixtures/.
DIFF_GOLDEN = {
    "diff-stock-vs-patched-boot": ("captured/stock-boot.txt", "captured/patched-boot-declared.txt"),
    "diff-swapped-pair": ("captured/patched-boot-declared.txt", "captured/broken-declared-link-order.txt"),
}

#: Diff output name -> file suffix.
DIFF_SUFFIXES = {"text": ".txt", "html": ".html", "json": ".json"}


def render_diff_all(name: str) -> dict[str, str]:
    caps = []
    for rel in DIFF_GOLDEN[name]:
        with open(os.path.join(FIXTURES, rel), encoding="utf-8") as f:
            caps.append(build_capture(parse_text(f.read(), os.path.basename(rel))))
    d = diff_captures(caps[0], caps[1])
    return {kind: render_diff(d, kind) for kind in DIFF_SUFFIXES}


def diff_golden_path(name: str, kind: str) -> str:
    return os.path.join(GOLDEN, name + DIFF_SUFFIXES[kind])
