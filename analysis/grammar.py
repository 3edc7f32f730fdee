"""The line grammar of the inputs: one compiled regex per kind of line,
each with an example.

Used by analysis/source.py to tell the inputs apart and by
analysis/parse.py to read them; the fields inside an event's text are
analysis/schema.py's.
"""

from __future__ import annotations

import re

from analysis.model import EventName

TRACE_LINE_RE = re.compile(
    r"^\s*(.+?)-(\d+)\s+(?:\[(\d+)\]|(\d+))\s*(?:[^\s:]{4,6}\s+)?"
    r"(\d+(?:\.\d+)?):\s+(\w+):\s*(.*)$"
)
"""One event line of ``trace-cmd report`` (also ftrace's ``trace`` file).

Example::

        swapper-1     [000]     0.225379123: initcall_start:       func=init_sigframe_size+0x0

With ``-l`` (latency format, ``%8.8s-%-5d %3d`` then the flags with no
space between): ``  insmod-112     0d..1.     0.100050: module_load: ...``

Groups: comm, pid, cpu (``[000]``), cpu (latency format ``-l``), timestamp,
event name, fields.  comm may hold ``-``, digits and spaces: the comm ends
at the first ``-<pid>`` that is followed by the CPU column and a timestamp,
which is the last such place in any real line (lazy is 2x faster than a
greedy backtrack from the line's end).
"""

FAST_LINE_RE = re.compile(r" *(.+?-\d+ +\[\d+\]) +(\d+)\.(\d{9}): (\w+): +(.*)")
"""The line of ``trace-cmd report -N -t`` as the analysis itself runs it:
:data:`TRACE_LINE_RE` narrowed to ``[cpu]`` and a 9-digit fraction, which
matches in less time.  The task and CPU are one group (``comm-pid [cpu]``),
split once per distinct value.  Lines it misses go through
:data:`TRACE_LINE_RE`."""

TASK_RE = re.compile(r"(.+?)-(\d+) +\[(\d+)\]$")
"""The task group of :data:`FAST_LINE_RE`: comm, pid, cpu."""

DROPPED_RE = re.compile(r"^\s*CPU:\s*(\d+) \[(?:(\d+) )?EVENTS DROPPED\]\s*$")
"""A lost-events marker, with or without a count.

Example::

    CPU:1 [1234 EVENTS DROPPED]
"""

CPUS_RE = re.compile(r"^cpus=(\d+)\s*$")
"""The first line of ``trace-cmd report``.  Example: ``cpus=2``."""

HEADER_RE = re.compile(
    r"^(?:version = \d+|CPU:\s*\d+ \[SUBBUFFER START\].*|CPU \d+ is empty"
    r"|\s*#.*|\s*)$"
)
"""Lines that carry no event and are skipped.

Examples: ``version = 6``, ``CPU:0 [SUBBUFFER START]``, ``# tracer: nop``.
"""

FTRACE_ENTRIES_RE = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")
"""ftrace's ``trace`` file header; written > in-buffer means overwritten data.

Example::

    # entries-in-buffer/entries-written: 310/310   #P:2
"""

DMESG_PREFIX = r"^(?:<\d+>)?(?:\[\s*(\d+\.\d+)\]\s*)?(?:.*?kernel: )?"

DMESG_CALLING_RE = re.compile(
    DMESG_PREFIX + r"calling\s+(\S+)(?: \[([^\]\s]+)\])? @ (\d+)(.*)$"
)
"""initcall_debug's line before a call (``prio=``/``origin=`` are optional).

Example::

    [    0.225379] calling  init_sigframe_size+0x0/0x30 @ 1 prio=-3000 origin=signal
"""

DMESG_RETURNED_RE = re.compile(
    DMESG_PREFIX
    + r"initcall (\S+)(?: \[([^\]\s]+)\])? returned (-?\d+) after (\d+) usecs(.*)$"
)
"""initcall_debug's line after a call.

Example::

    [    0.225390] initcall init_sigframe_size+0x0/0x30 returned 0 after 12 usecs
"""

#: The trace events the model reads, by name; others are counted as ignored.
EVENT_NAMES: dict[str, EventName] = {
    e.value: e for e in EventName if e not in (EventName.DMESG_CALLING, EventName.DMESG_RETURNED)
}

#: 10**(9 - digits) for a fraction of ``digits`` digits.
FRACTION_SCALE = tuple(10 ** (9 - n) for n in range(10))

DMESG_INITEXIT_RE = re.compile(
    DMESG_PREFIX + r"initexit: (?:ordered (?P<ordered>\d+) built-in pairs in (?P<ns>\d+) ns"
    r"|(?P<origin>\S+): (?:skipping (?P<skipped>\S+) \(prio (?P<sprio>-?\d+)\) after an earlier failure"
    r"|(?P<blacklisted>\S+) \(prio (?P<bprio>-?\d+)\) blacklisted, not run"
    r"|(?P<failed>\S+) \(prio (?P<fprio>-?\d+)\) failed with (?P<error>-?\d+)"
    r"(?:, not unwinding \S+: (?P<other>\S+) (?P<why>ran since its first init|has no exit))?(?P<ftail>.*)))\s*$"
)
"""The series' own kernel messages about built-in pairs (kernel/initexit.c).

Examples::

    [    0.296657] initexit: ordered 18 built-in pairs in 377234 ns
    [    1.202441] initexit: lib/test_initexit_adjacent: tia3_init (prio 4) failed with -303, unwinding lib/test_initexit_adjacent
    [    1.202441] initexit: lib/test_initexit_unwind: tiu2_init (prio 10) failed with -202, not unwinding lib/test_initexit_unwind: nmi_warning_debugfs ran since its first init
    [    1.202441] initexit: lib/test_initexit_keep: tik2_init (prio 8) failed with -308, not unwinding lib/test_initexit_keep: tik1_init has no exit
    [    1.202600] initexit: lib/test_initexit_unwind: skipping tiu4_init (prio 1100) after an earlier failure
    [    1.100000] initexit: lib/test_initexit_order: tio_blacklist_me_init (prio 100) blacklisted, not run
"""

DMESG_RUN_INIT_RE = re.compile(DMESG_PREFIX + r"Run (\S+) as init process")
"""The kernel handing over to userspace: the boot finished.

Example: ``[    1.250000] Run /init as init process``
"""
