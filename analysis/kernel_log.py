"""The envelopes a kernel log's lines come in, and the clock their stamps give.

A kernel log a user pastes is dmesg in one of util-linux's forms, journalctl
-k in one of its short forms, a syslog file or a console log; each line is
an envelope around the kernel's message: a head (a date and ``host
kernel:``), a level (``<7>``, ``kern  :debug :``) and a stamp (the kernel's
seconds since boot, or a wall clock), each optional.  :func:`split` takes
the envelope off (the regexes are analysis/grammar.py's KLOG_*) so that
analysis/parse.py matches the messages alone, and :class:`StampClock` turns
the stamps of one log into event times.  CONFIG_PRINTK_CALLER's caller
(``[    T45]``, ``[    C0]``) after the kernel's stamp, after dmesg's
``-T``/iso stamp, or in the stamp's place (printk.time=0, ``dmesg -t``) is
kept as :attr:`LogLine.caller`: the task that printed a probe line places
it (analysis/probes.py).  So is what dmesg ``-S`` leaves of a caller with no
stamp (``[    0.000000]    T1] ``: dmesg's zero, not the kernel's stamp).

Which clock a log has is decided once, by its first initcall_debug line:

- the kernel's stamp (dmesg, -r, -x, -d, short-monotonic, a syslog file,
  whose messages keep the kernel's ``[    1.234567]``): times are the
  kernel's own, as in a trace;
- a wall clock (dmesg -T and journalctl -k's short forms: whole seconds;
  short-precise, short-iso-precise, dmesg --time-format iso: microseconds,
  but journald stamps kernel messages when it reads them, not when the
  kernel printed them): a running clock that adds each call's ``after N
  usecs`` and never runs behind a line's stamp;
- none (printk.time=0, dmesg -t; dmesg -S's zeros before a caller's
  remnant): the running clock alone.

Durations are always the kernel's ``after N usecs`` (analysis/build.py).
"""

from __future__ import annotations

import datetime
import enum
from typing import NamedTuple, Optional

from analysis.grammar import (
    KLOG_CALLER_REMNANT_RE,
    KLOG_CALLER_RE,
    KLOG_CTIME_STAMP_RE,
    KLOG_DECODED_LEVEL_RE,
    KLOG_ISO_HEAD_RE,
    KLOG_ISO_STAMP_RE,
    KLOG_KERNEL_STAMP_RE,
    KLOG_LOOSE_HEAD_RE,
    KLOG_MONOTONIC_HEAD_RE,
    KLOG_RAW_LEVEL_RE,
    KLOG_SYSLOG_HEAD_RE,
)

#: What the analysis reads as a kernel log, for the message that refuses
#: an input (one line).
ACCEPTED_LOGS = (
    "a kernel log with initcall_debug's lines as dmesg prints it (plain, -r, -x, -T, -t, -d, "
    "--time-format iso), as journalctl -k prints it (-o short, short-precise, short-monotonic, "
    "short-iso, short-iso-precise; with or without the host name), a syslog file "
    "(rsyslog's traditional or RFC 3339 format) or a console log (printk.time=0 too); "
    "CONFIG_PRINTK_CALLER's [T1] after the stamp or in its place (dmesg -t, -S, -S -r, "
    "printk.time=0) too; LF or CRLF line ends"
)


class Clock(enum.Enum):
    """What a line's stamp measures."""

    __hash__ = object.__hash__  # as analysis/model.py's Enums

    KERNEL = "kernel"  # the kernel's seconds since boot
    WALL = "wall"  # a wall clock (whole seconds or finer)
    NONE = "none"  # no stamp


class LogLine(NamedTuple):
    """One line without its envelope."""

    message: str
    clock: Clock
    #: The stamp in nanoseconds (KERNEL: since boot; WALL: since a fixed
    #: origin of its ``basis``), None for Clock.NONE.
    ns: Optional[int]
    #: What printed the line, e.g. ``dmesg -x -T`` (see :func:`form_name`).
    form: str
    #: WALL only: ``day`` (day of month and time: dmesg -T, journalctl's
    #: short forms) or ``date`` (a whole date: ISO 8601); two bases never
    #: mix on one clock.
    basis: str = ""
    #: WALL only: the stamp's resolution is whole seconds.
    whole_seconds: bool = False
    #: CONFIG_PRINTK_CALLER's caller (after the stamp or in its place):
    #: ``T123`` (the task with that pid printed the line) or ``C0`` (CPU 0,
    #: from interrupt context); "" when the line has none.
    caller: str = ""


def _frac_ns(frac: Optional[str]) -> int:
    if not frac:
        return 0
    digits = frac[:9]
    scale: int = 10 ** (9 - len(digits))
    return int(digits) * scale


def _kernel_ns(stamp: str) -> int:
    whole, _, frac = stamp.partition(".")
    return int(whole) * 1_000_000_000 + _frac_ns(frac)


def _day_ns(day: str, h: str, m: str, s: str, frac: Optional[str]) -> int:
    """Day of month and time of day: no month or year (locale words), so a
    log that crosses a month's end steps back; the clock never follows a
    step back (see StampClock)."""
    return (((int(day) * 24 + int(h)) * 60 + int(m)) * 60 + int(s)) * 1_000_000_000 + _frac_ns(frac)


def _date_ns(y: str, mo: str, d: str, h: str, m: str, s: str, frac: Optional[str]) -> Optional[int]:
    try:
        days = datetime.date(int(y), int(mo), int(d)).toordinal()
    except ValueError:
        return None
    return (((days * 24 + int(h)) * 60 + int(m)) * 60 + int(s)) * 1_000_000_000 + _frac_ns(frac)


def split(raw: str) -> LogLine:
    """Take the envelope off one line (with or without its ``\\n`` or
    ``\\r\\n``): head, then level, then stamp.  A stamp of the kernel's
    after a wall-clock head (a syslog file) is the line's stamp."""
    line = raw.rstrip("\r\n")
    pos = 0
    head = ""
    clock, ns, basis, whole = Clock.NONE, None, "", False
    m = KLOG_SYSLOG_HEAD_RE.match(line)
    if m is not None:
        frac = m.group("frac")
        head = "journal-precise" if frac else "journal"
        clock, ns, basis, whole = Clock.WALL, _day_ns(m["day"], m["h"], m["m"], m["s"], frac), "day", not frac
    else:
        m = KLOG_ISO_HEAD_RE.match(line)
        if m is not None:
            frac = m.group("frac")
            head = "journal-iso-precise" if frac else "journal-iso"
            ns = _date_ns(m["y"], m["mo"], m["d"], m["h"], m["m"], m["s"], frac)
            if ns is not None:
                clock, basis, whole = Clock.WALL, "date", not frac
        else:
            m = KLOG_MONOTONIC_HEAD_RE.match(line)
            if m is not None:
                head = "journal-monotonic"
            elif "kernel: " in line:
                m = KLOG_LOOSE_HEAD_RE.match(line)
                head = "loose" if m is not None else ""
            if m is not None and m.group("mono") is not None:
                clock, ns = Clock.KERNEL, _kernel_ns(m["mono"])
    if m is not None:
        pos = m.end()
    level = ""
    lv = KLOG_RAW_LEVEL_RE.match(line, pos)
    if lv is not None:
        level = "-r"
    else:
        lv = KLOG_DECODED_LEVEL_RE.match(line, pos)
        if lv is not None:
            level = "-x"
    if lv is not None:
        pos = lv.end()
    stamp = ""
    caller = ""
    st = KLOG_KERNEL_STAMP_RE.match(line, pos)
    if st is not None:
        stamp = "-d" if "<" in st.group(0) else "kernel"
        clock, ns, basis, whole = Clock.KERNEL, _kernel_ns(st["mono"]), "", False
        caller = st["caller"] or ""
    elif not head:
        st = KLOG_CTIME_STAMP_RE.match(line, pos)
        if st is not None:
            stamp = "-T"
            clock, ns, basis, whole = Clock.WALL, _day_ns(st["day"], st["h"], st["m"], st["s"], None), "day", True
        else:
            st = KLOG_ISO_STAMP_RE.match(line, pos)
            if st is not None:
                iso_ns = _date_ns(st["y"], st["mo"], st["d"], st["h"], st["m"], st["s"], st["frac"])
                if iso_ns is not None:
                    stamp = "--time-format iso"
                    clock, ns, basis, whole = Clock.WALL, iso_ns, "date", not st["frac"]
                else:
                    st = None
    if st is not None:
        pos = st.end()
    if not caller and not head:
        # CONFIG_PRINTK_CALLER without the kernel's stamp before it.
        c = KLOG_CALLER_RE.match(line, pos)
        if c is None:
            c = KLOG_CALLER_REMNANT_RE.match(line, pos)
            if c is not None:  # dmesg -S of printk.time=0: its stamp is its own zero
                stamp = "remnant"
                clock, ns, basis, whole = Clock.NONE, None, "", False
        if c is not None:
            caller = c["caller"]
            pos = c.end()
    return LogLine(line[pos:], clock, ns, form_name(head, level, stamp), basis, whole, caller)


def message(raw: str) -> str:
    """The kernel's message of one line (:func:`split` without the rest)."""
    return split(raw).message


def form_name(head: str, level: str, stamp: str) -> str:
    """What printed a line, from the parts :func:`split` found."""
    if head in ("journal", "journal-precise", "journal-iso", "journal-iso-precise"):
        if stamp:  # the kernel's stamp inside: rsyslog keeps it in the message
            return "syslog (RFC 3339 stamps)" if head.startswith("journal-iso") else "syslog"
        mode = {"journal": "short", "journal-precise": "short-precise", "journal-iso": "short-iso",
                "journal-iso-precise": "short-iso-precise"}[head]
        return f"journalctl -k -o {mode}"
    if head == "journal-monotonic":
        return "journalctl -k -o short-monotonic"
    if head == "loose":
        return "a log with `kernel: ` before each message"
    if stamp == "remnant":
        return " ".join(["dmesg -S", *[f for f in (level,) if f],
                         "of a kernel with printk.time=0 and CONFIG_PRINTK_CALLER"])
    if level == "-r" and not stamp:  # dmesg -r always prints a stamp
        return "the kernel's syslog form without timestamps (printk.time=0: dmesg -S -r, /proc/kmsg)"
    flags = [f for f in (level, "" if stamp == "kernel" else stamp) if f]
    if not stamp and not level:
        return "a log without timestamps (printk.time=0, dmesg -t)"
    if not stamp:
        flags.append("-t")
    return " ".join(["dmesg", *flags])


class StampClock:
    """The time of each event line of one log, on one clock.

    The clock is the one of the first line it is asked about (a calling,
    returned or level line).  ``start`` is for a line that begins
    something (calling, a level), ``finish`` for a returned line with its
    ``after N usecs``.
    """

    def __init__(self) -> None:
        self.clock: Optional[Clock] = None
        self.basis = ""
        self.whole_seconds = False
        self.form = ""
        self.now = 0
        self.origin: Optional[int] = None

    def _decide(self, line: LogLine) -> None:
        if self.clock is None:
            self.clock, self.basis, self.form = line.clock, line.basis, line.form
            self.whole_seconds = line.whole_seconds

    def _floor(self, line: LogLine) -> Optional[int]:
        """A wall stamp as time since the log's first one (WALL clocks)."""
        if line.clock is not Clock.WALL or line.basis != self.basis or line.ns is None:
            return None
        if self.origin is None:
            self.origin = line.ns
        return line.ns - self.origin

    def start(self, line: LogLine) -> int:
        self._decide(line)
        if self.clock is Clock.KERNEL:
            t = line.ns if line.clock is Clock.KERNEL and line.ns is not None else self.now
        elif self.clock is Clock.WALL:
            floor = self._floor(line)
            t = self.now if floor is None else max(self.now, floor)
        else:
            t = self.now
        self.now = t
        return t

    def finish(self, line: LogLine, usecs: int) -> int:
        self._decide(line)
        if self.clock is Clock.KERNEL and line.clock is Clock.KERNEL and line.ns is not None:
            t = line.ns
        else:
            if self.clock is Clock.WALL:
                self._floor(line)  # the first stamp may be on a returned line
            t = self.now + usecs * 1000
        self.now = t
        return t

    def note(self) -> str:
        """What the reader should know about these times ("" when they are
        the kernel's own)."""
        if self.clock is Clock.WALL:
            if self.whole_seconds:
                res = "whole seconds"
            elif self.form.startswith("journalctl"):
                res = "journald's, which may be when it read the message, not when the kernel printed it"
            else:
                res = "microseconds"
            return (f"kernel log read as {self.form}: its stamps are a wall clock ({res}), so each "
                    "call's time is rebuilt from the `after N usecs` of the calls before it, never "
                    "earlier than its line's stamp, counted from the first initcall_debug line; "
                    "durations are the kernel's `after N usecs`")
        if self.clock is Clock.NONE:
            return (f"kernel log read as {self.form}: no stamps, so each call's time is rebuilt "
                    "from the `after N usecs` of the calls before it (the time between calls is "
                    "not known); durations are the kernel's `after N usecs`")
        return ""


def duration_note(version: Optional[tuple[int, int]]) -> str:
    """What the kernel's ``after N usecs`` are on the kernel of that
    ``Linux version`` ("" when they are microseconds)."""
    if version is None or version >= (6, 1):
        return ""
    # init/main.c of 5.10 and 5.15 prints ktime_to_ns(delta) >> 10;
    # 6.1 prints ktime_us_delta() (Mark-PK Tsai's 2022 patch).
    certain = version < (5, 16)
    return (f"Linux {version[0]}.{version[1]}: initcall_debug's `usecs` are "
            f"{'' if certain else 'probably '}nanoseconds / 1024 on kernels before 6.1 "
            "(init/main.c shifts by 10), so these durations read 2.3% short")


#: drivers/base/dd.c printed initcall_debug's probe line with pr_debug()
#: from 5.8 (eb7fbc9fb118, "driver core: Add missing '\\n' in log
#: messages") until e2f06aa88508 ("driver core: Don't require
#: dynamic_debug for initcall_debug probe timing", April 2023; taken by
#: the 6.1, 5.15 and 5.10 stable trees in April and May 2023): on those
#: kernels the line needs dynamic debug on for that file.
PROBE_PR_DEBUG = ((5, 8), (6, 4))


def probe_note(version: Optional[tuple[int, int]], calls: int, probes: int) -> str:
    """Why a kernel log with initcall_debug's calls has no probe line, on
    a kernel that printed them with pr_debug() ("" otherwise)."""
    lo, hi = PROBE_PR_DEBUG
    if version is None or probes or not calls or not lo <= version < hi:
        return ""
    return (f"no device probe lines (`probe of DEV returned N after T usecs`): Linux "
            f"{version[0]}.{version[1]}'s drivers/base/dd.c may print them with pr_debug() "
            "(5.8 to 6.3, and 5.10, 5.15 and 6.1 before their stable trees took e2f06aa88508 "
            "in spring 2023), which prints nothing without dynamic debug: boot with "
            "dyndbg=\"file drivers/base/dd.c +p\" beside initcall_debug to see the probes")
