"""``python3 -m analysis``: one CLI with subcommands.

Exit status: 0 every check holds, 1 findings, 2 usage or unreadable input.
Results go to stdout (or ``-o FILE``), progress and errors to stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from typing import Callable, NoReturn, Optional, Sequence

from analysis import __version__
from analysis.bench import format_bench, run_bench
from analysis.load import check_input, load_capture
from analysis.checks import CHECKS
from analysis.declared import DeclaredOrder, read_map
from analysis.diff import diff_captures, parse_duration, render_diff
from analysis.model import Verdict
from analysis.model import Event, bare_func
from analysis.parse import InputError, parse_text, read_input
from analysis.schema import DMESG_CALLING_INFO_RE, DMESG_RETURNED_INFO_RE, MODULE_NAME_RE, field_parsers
from analysis.source import TRACE_CMD_REPORT_ARGS
from analysis.render_chrome import chrome_trace
from analysis.render_html import render_html
from analysis.render_json import dumps, timeline_dict, verdict_dict
from analysis.render_svg import parse_view, render_svg
from analysis.render_text import render_text
from analysis.synth import SCENARIOS, large_trace_lines

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

#: Files ``report --out-dir DIR`` writes, by format; NAME is ``--name``.
REPORT_FILES = {
    "text": "{name}.timeline.txt",
    "html": "{name}.timeline.html",
    "svg": "{name}.timeline.svg",
    "chrome": "{name}.chrome.json",
    "timeline-json": "{name}.timeline.json",
    "verdict": "{name}.verdict.json",
}

#: Files ``diff --out-dir DIR`` writes, by format; NAME is ``--name``.
DIFF_FILES = {"text": "{name}.diff.txt", "html": "{name}.diff.html", "json": "{name}.diff.json"}

EPILOG = """\
input: a trace.dat (run through `trace-cmd report -N -t`), the text of
`trace-cmd report`, or dmesg with initcall_debug; `-` reads standard input.

exit status: 0 every check holds, 1 findings, 2 usage or unreadable input.

examples:
  python3 -m analysis check out/boot.dat
  trace-cmd report -N -t -i modules.dat | python3 -m analysis timeline -
  python3 -m analysis timeline --format html -o boot.html out/boot.dat
  python3 -m analysis timeline --format svg --view 5.476,5.479 -o load.svg out/modules.dat
  python3 -m analysis report --out-dir out/ out/modules.dat
  python3 -m analysis check --system-map linux/System.map boot.report.txt
  python3 -m analysis diff --fail-on-change stock-boot.dat patched-boot.dat
  python3 -m analysis bench --events 1000000
"""

CHECK_LIST = "\n".join(f"  {n}: {d}" for n, d in CHECKS)


class Progress:
    """Progress lines on stderr (never on stdout), silenced by --quiet."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if not self.quiet:
            print(f"analysis: {msg} ({time.perf_counter() - self.t0:.2f} s)", file=sys.stderr)


def _use_colour(mode: str, stream: object) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _declared_arg(args: argparse.Namespace) -> Optional[DeclaredOrder]:
    path: Optional[str] = getattr(args, "system_map", None)
    return read_map(path) if path else None


def analyse(path: str, progress: Callable[[str], None], declared: Optional[DeclaredOrder] = None,
            expect_all: bool = False, render: bool = True) -> Verdict:
    """Read, parse, build and check one input in one streaming pass;
    ``render``: keep the spans the renders show, not only the boot's."""
    progress(f"reading {path}")
    verdict = check_input(path, declared=declared, expect_all=expect_all, render=render)
    parsed = verdict.capture.parsed
    progress(f"parsed {parsed.n_events} events from {parsed.line_count} lines "
             f"({parsed.fmt.value})")
    progress(f"checked {verdict.capture.n_spans} calls: "
             f"{'ok' if verdict.ok else str(len(verdict.findings)) + ' finding(s)'}")
    return verdict


def _emit(text: str, output: Optional[str]) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


def _render(v: Verdict, fmt: str, args: argparse.Namespace, colour: bool) -> str:
    if fmt == "text":
        return render_text(v, slowest=args.slowest, colour=colour)
    if fmt == "json":
        return dumps(timeline_dict(v.capture))
    if fmt == "chrome":
        return dumps(chrome_trace(v), indent=None)
    if fmt == "html":
        return render_html(v, slowest=args.slowest)
    if fmt == "svg":
        return render_svg(v, view=_view_arg(args))
    raise InputError(f"unknown format {fmt}")


def _view_arg(args: argparse.Namespace) -> Optional[tuple[int, int]]:
    text: Optional[str] = getattr(args, "view", None)
    if text is None:
        return None
    try:
        return parse_view(text)
    except ValueError as e:
        raise InputError(str(e)) from None


def _status(v: Verdict) -> int:
    return EXIT_OK if v.ok else EXIT_FINDINGS


def _about(name: Optional[str]) -> Callable[[Event], bool]:
    """Whether an event is about NAME: a function (its ``func`` field
    without the kallsyms offset; a dmesg ``calling``/``returned`` line's
    function) or, for module_load/module_free, a module; every event when
    NAME is None."""
    if name is None:
        return lambda e: True
    parsers = field_parsers()
    named_first = {"calling": DMESG_CALLING_INFO_RE, "returned": DMESG_RETURNED_INFO_RE,
             "module_load": MODULE_NAME_RE, "module_free": MODULE_NAME_RE}

    def about(e: Event) -> bool:
        rx = named_first.get(e.name.value)
        if rx is not None:
            m = rx.match(e.info)
            return m is not None and bare_func(m.group(1)) == name
        parser = parsers.get(e.name)
        rec = parser(e.info) if parser is not None else None
        func = getattr(rec, "func", None) if rec else None
        return func is not None and bare_func(str(func)) == name
    return about


def cmd_parse(args: argparse.Namespace, progress: Progress) -> int:
    progress(f"reading {args.input}")
    text = read_input(args.input)
    if args.count is not None:
        # The harness asks how many events a report holds (0 when none is
        # an event the analysis reads).
        try:
            parsed = parse_text(text.text, text.source)
        except InputError:
            _emit("0\n", args.output)
            return EXIT_OK
        about = _about(args.about)
        n = sum(1 for e in parsed.events if args.count in ("any", e.name.value) and about(e))
        _emit(f"{n}\n", args.output)
        return EXIT_OK
    parsed = parse_text(text.text, text.source)
    if args.format == "json":
        out = {
            "schema": "initexit-parse/1", "source": parsed.source, "format": parsed.fmt.value,
            "cpus": parsed.cpus, "lines": parsed.line_count,
            "events": [{"line": e.line, "ts_ns": e.ts_ns, "cpu": e.cpu, "pid": e.pid,
                        "comm": e.comm, "name": e.name.value, "fields": e.info}
                       for e in parsed.events],
            "gaps": [{"line": g.line, "cpu": g.cpu, "dropped": g.dropped, "what": g.what}
                     for g in parsed.gaps],
            "unreadable": [{"line": p.line, "text": p.text} for p in parsed.problems],
            "ignored_events": parsed.ignored,
        }
        _emit(dumps(out), args.output)
    else:
        counts: dict[str, int] = {}
        for e in parsed.events:
            counts[e.name.value] = counts.get(e.name.value, 0) + 1
        lines = [f"{parsed.source}: {parsed.fmt.value}, {parsed.line_count} lines, "
                 f"{len(parsed.events)} events" + (f", {parsed.cpus} CPU(s)" if parsed.cpus else "")]
        lines += [f"  {n:<24} {c}" for n, c in sorted(counts.items())]
        lines += [f"  ignored {n:<16} {c}" for n, c in sorted(parsed.ignored.items())]
        lines += [f"  gap: {g.quote()}" for g in parsed.gaps]
        lines += [f"  unreadable: {p.quote()}" for p in parsed.problems[:50]]
        _emit("\n".join(lines) + "\n", args.output)
    return EXIT_FINDINGS if parsed.gaps or parsed.problems else EXIT_OK


def cmd_print(args: argparse.Namespace, progress: Progress) -> int:
    """``trace-cmd report`` of a trace.dat with the flags the analysis reads
    it with (source.TRACE_CMD_REPORT_ARGS): the harness keeps this text
    beside each trace.dat."""
    if args.flags:
        _emit(" ".join(TRACE_CMD_REPORT_ARGS[1:]) + "\n", args.output)
        return EXIT_OK
    if args.input is None:
        raise InputError("print: a trace.dat is needed (or --flags)")
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(f"{args.input}: trace-cmd is not installed")
    out = open(args.output, "wb") if args.output not in (None, "-") else None
    try:
        rc = subprocess.run([exe, *TRACE_CMD_REPORT_ARGS, "-i", args.input],
                            stdout=out if out is not None else sys.stdout.buffer, check=False).returncode
    finally:
        if out is not None:
            out.close()
    return EXIT_OK if rc == 0 else EXIT_ERROR


def cmd_check(args: argparse.Namespace, progress: Progress) -> int:
    v = analyse(args.input, progress, _declared_arg(args), args.expect_all, render=False)
    if args.format == "json":
        _emit(dumps(verdict_dict(v)), args.output)
    else:
        colour = args.output is None and _use_colour(args.color, sys.stdout)
        _emit(render_text(v, slowest=0, colour=colour, timeline=False), args.output)
    return _status(v)


def cmd_timeline(args: argparse.Namespace, progress: Progress) -> int:
    v = analyse(args.input, progress, _declared_arg(args), args.expect_all)
    colour = args.output is None and _use_colour(args.color, sys.stdout)
    _emit(_render(v, args.format, args, colour), args.output)
    if args.output:
        progress(f"wrote {args.output}")
    return _status(v)


def cmd_report(args: argparse.Namespace, progress: Progress) -> int:
    v = analyse(args.input, progress, _declared_arg(args), args.expect_all)
    name = args.name or _default_name(args.input)
    os.makedirs(args.out_dir, exist_ok=True)
    outputs = {
        "text": render_text(v, slowest=args.slowest),
        "html": render_html(v, slowest=args.slowest),
        "svg": render_svg(v),
        "chrome": dumps(chrome_trace(v), indent=None),
        "timeline-json": dumps(timeline_dict(v.capture)),
        "verdict": dumps(verdict_dict(v)),
    }
    for key, text in outputs.items():
        path = os.path.join(args.out_dir, REPORT_FILES[key].format(name=name))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        progress(f"wrote {path}")
    colour = _use_colour(args.color, sys.stdout)
    sys.stdout.write(render_text(v, slowest=args.slowest, colour=colour, timeline=False))
    return _status(v)


def _default_name(path: str) -> str:
    if path == "-":
        return "stdin"
    base = os.path.basename(path)
    for ext in (".dat", ".txt", ".report", ".log"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def cmd_diff(args: argparse.Namespace, progress: Progress) -> int:
    min_change = parse_duration(args.min_change)
    declared = _declared_arg(args)
    caps = []
    for path in (args.a, args.b):
        progress(f"reading {path}")
        caps.append(load_capture(path, declared=declared))
    d = diff_captures(caps[0], caps[1], min_change)
    if args.out_dir is not None:
        if args.output is not None:
            raise InputError("--out-dir writes every format: give it or -o FILE, not both")
        os.makedirs(args.out_dir, exist_ok=True)
        for fmt, pattern in DIFF_FILES.items():
            path = os.path.join(args.out_dir, pattern.format(name=args.name or "capture"))
            with open(path, "w", encoding="utf-8") as f:
                f.write(render_diff(d, fmt))
            progress(f"wrote {path}")
        sys.stdout.write(f"{'changed' if d.changed else 'no order or result change'}: {d.summary()}\n")
    else:
        _emit(render_diff(d, args.format), args.output)
    progress(f"{'changed' if d.changed else 'no order or result change'}: {d.summary()}")
    return EXIT_FINDINGS if args.fail_on_change and d.changed else EXIT_OK


def cmd_bench(args: argparse.Namespace, progress: Progress) -> int:
    if args.events < 1:
        raise InputError("--events must be positive")
    progress("generating and timing" if args.dat is None else f"timing trace-cmd on {args.dat}")
    r = run_bench(args.events, args.dat)
    _emit(dumps(r) if args.format == "json" else format_bench(r), args.output)
    return EXIT_OK


def cmd_synth(args: argparse.Namespace, progress: Progress) -> int:
    if args.scenario == "large":
        text = "".join(large_trace_lines(args.events))
    else:
        text = SCENARIOS[args.scenario]()
    _emit(text, args.output)
    return EXIT_OK


#: The program's name in usage and --help: ``python3 -m analysis``, or the
#: console script pyproject.toml installs.
PROG = "python3 -m analysis"
CONSOLE_SCRIPT = "initexit-analyze"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Timelines and order checks for initexit captures (trace-cmd or dmesg).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def common(p: argparse.ArgumentParser, formats: Sequence[str], default: str, *,
               output: bool = True, color: bool = True, slowest: bool = True) -> None:
        """The options of the commands that read an INPUT; each command
        takes only those it uses."""
        p.add_argument("input", metavar="INPUT", help="trace.dat, trace-cmd report text, dmesg, or -")
        if len(formats) > 1:
            p.add_argument("--format", choices=formats, default=default,
                           help=f"output format (default {default})")
        else:
            p.set_defaults(format=default)
        if output:
            p.add_argument("-o", "--output", metavar="FILE", help="write the result here, not stdout")
        if color:
            p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                           help="colour the text output (auto: only on a terminal)")
        if slowest:
            p.add_argument("--slowest", type=int, default=10, metavar="N",
                           help="how many slowest calls to list (default 10)")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")

    def declared(p: argparse.ArgumentParser, expect_all: bool = True) -> None:
        p.add_argument("--system-map", metavar="FILE",
                       help="the kernel's declared initcall order: a System.map, `trace-cmd dump "
                            "--kallsyms` text or a trace.dat (default: a trace.dat INPUT's own kallsyms)")
        if expect_all:
            p.add_argument("--expect-all", action="store_true",
                           help="a declared initcall that never ran is a finding, not a note")

    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("parse", help="read the input and list what it holds",
                       description="Count the events, gaps and unreadable lines of INPUT. "
                                   "Exit 1 if it has gaps or unreadable lines.")
    common(p, ("text", "json"), "text", color=False, slowest=False)
    p.add_argument("--count", metavar="EVENT",
                   help="print only how many EVENT events INPUT holds (an event name, or `any`: "
                        "every event the analysis reads); 0 when it holds none")
    p.add_argument("--about", metavar="NAME",
                   help="with --count: only the events about NAME, a function (func= without the "
                        "+0x offset, or dmesg's calling/returned line) or a module (module_load, module_free)")
    p.set_defaults(func=cmd_parse)
    p = sub.add_parser("print", help="print a trace.dat as the analysis reads it (trace-cmd report)",
                       description="Run `trace-cmd report` on DAT with the flags the analysis reads it with "
                                   f"({' '.join(TRACE_CMD_REPORT_ARGS[1:])}), the one place they are chosen. "
                                   "Exit status 0, or 2 when trace-cmd fails (its message on stderr).")
    p.add_argument("input", metavar="DAT", nargs="?", help="the trace.dat")
    p.add_argument("--flags", action="store_true", help="print only the flags")
    p.add_argument("-o", "--output", metavar="FILE", help="write the text here, not stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_print)
    p = sub.add_parser("check", help="run the named invariants", formatter_class=fmt,
                       description="Run every check; --format json prints the verdict.\n\n"
                                   "checks:\n" + CHECK_LIST)
    common(p, ("text", "json"), "text", slowest=False)
    declared(p)
    p.set_defaults(func=cmd_check)
    for name, default, helptext in (
            ("timeline", "text", "render the timeline (text, json, chrome, html, svg)"),
            ("export", "chrome", "export the timeline to a file format (default chrome)")):
        p = sub.add_parser(name, help=helptext, description=helptext + ".")
        common(p, ("text", "json", "chrome", "html", "svg"), default)
        p.add_argument("--view", metavar="S,E",
                       help="svg: draw only this window, in trace-clock seconds as the HTML "
                            "page's #view=S,E (default: the whole capture)")
        declared(p)
        p.set_defaults(func=cmd_timeline)
    p = sub.add_parser("report", help="write every output into a folder, print the summary",
                       formatter_class=fmt,
                       description="Write NAME.timeline.txt, NAME.timeline.html, NAME.timeline.svg,\n"
                                   "NAME.chrome.json, NAME.timeline.json and NAME.verdict.json\n"
                                   "into --out-dir and print the slowest calls, the checks and "
                                   "the verdict.")
    common(p, ("text",), "text", output=False)
    declared(p)
    p.add_argument("--out-dir", required=True, metavar="DIR", help="the folder to write into")
    p.add_argument("--name", metavar="NAME", help="file name prefix (default: input's base name)")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser(
        "diff", help="compare two captures: calls only in one, order, result and duration changes",
        formatter_class=fmt,
        description="Compare capture A with capture B (stock vs patched boot, before vs after a\n"
                    "change, two runs): calls only in A or only in B, order changes within a\n"
                    "level and calls that moved to another level (boot; per module load), result\n"
                    "changes, and duration changes of at least --min-change.\n\n"
                    "exit status: 0; 1 with --fail-on-change when the order or a result changed;\n"
                    "2 usage or unreadable input.")
    p.add_argument("a", metavar="A", help="the first capture (trace.dat, trace-cmd report text, dmesg, -)")
    p.add_argument("b", metavar="B", help="the second capture")
    p.add_argument("--format", choices=("text", "html", "json"), default="text",
                   help="output format (default text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the result here, not stdout")
    p.add_argument("--out-dir", metavar="DIR",
                   help="write NAME.diff.txt, NAME.diff.html and NAME.diff.json here instead")
    p.add_argument("--name", metavar="NAME", help="file name prefix for --out-dir (default capture)")
    p.add_argument("--min-change", default="1ms", metavar="DURATION",
                   help="smallest duration change listed, e.g. 500us, 2ms (default 1ms)")
    p.add_argument("--fail-on-change", action="store_true",
                   help="exit 1 when the order or a result changed")
    declared(p, expect_all=False)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_diff)
    p = sub.add_parser("bench", help="measure parse speed (events/s) on a large capture",
                       description="Generate a >= --events synthetic trace (or take --dat, "
                                   "timing `trace-cmd report` on it) and time the analysis.")
    p.add_argument("--events", type=int, default=1_000_000, metavar="N",
                   help="events in the synthetic trace, without --dat (default 1000000)")
    p.add_argument("--dat", metavar="FILE", help="a real trace.dat to time trace-cmd report on")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the result here, not stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_bench)
    p = sub.add_parser("synth", help="print a synthetic capture (trace-cmd report format)")
    p.add_argument("scenario", choices=sorted(SCENARIOS) + ["large"])
    p.add_argument("--events", type=int, default=1_000_000, metavar="N",
                   help="events for the 'large' scenario (default 1000000)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the capture here, not stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_synth)
    return parser


def main(argv: Optional[Sequence[str]] = None, prog: str = PROG) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    progress = Progress(getattr(args, "quiet", False))
    try:
        status: int = args.func(args, progress)
        return status
    except InputError as e:
        print(f"analysis: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (| head); not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as e:
        print(f"analysis: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - the CLI promises no traceback
        if os.environ.get("ANALYSIS_DEBUG"):
            raise
        print(f"analysis: internal error: {type(e).__name__}: {e} "
              f"(rerun with ANALYSIS_DEBUG=1 for the traceback, and report it)", file=sys.stderr)
        return EXIT_ERROR


def run(prog: str = PROG) -> NoReturn:
    """Run the command line and leave with its status, without freeing
    the capture: a large one is millions of objects, and freeing them one
    by one at interpreter exit takes about a second and helps no one."""
    status = main(prog=prog)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(status)


def console_script() -> NoReturn:
    """``initexit-analyze`` (pyproject.toml's console script): the same
    command line as ``python3 -m analysis``."""
    run(CONSOLE_SCRIPT)
