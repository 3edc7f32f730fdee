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

# -- kernel logs ------------------------------------------------------------------
# A kernel log comes as dmesg prints it (plain, -r, -x, -T, -t, -d, --time-format
# iso), as journalctl -k prints it (-o short, short-precise, short-monotonic,
# short-iso, short-iso-precise, with or without the host), as a syslog file
# (rsyslog's traditional or RFC 3339 format) or as a console log (printk.time=0
# too).  analysis/kernel_log.py takes each line's envelope off with the KLOG_*
# regexes (a head, then a level, then a stamp, then CONFIG_PRINTK_CALLER's
# caller, each optional) and the DMESG_*
# regexes below match the kernel's message alone.

_ISO_STAMP = (r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)T(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)"
              r"(?:[.,](?P<frac>\d{1,9}))?(?:Z|[+-]\d\d:?\d\d)? ")

KLOG_SYSLOG_HEAD_RE = re.compile(
    r"(?P<mon>\S+) +(?P<day>\d{1,2}) (?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)(?:\.(?P<frac>\d{1,9}))? "
    r"(?:\S+ )?kernel: "
)
"""A wall-clock head ending in ``kernel: ``: journalctl -k (short, with or
without the host; short-precise with a fraction) and rsyslog's traditional
file format (then the kernel's own stamp follows).  The month is any word
(strftime's ``%b`` follows the locale).

Examples::

    Dec 06 23:10:01 guest kernel: calling  ipc_ns_init+0x0/0x40 @ 1
    Dec 06 23:10:01.100012 kernel: initcall ipc_ns_init+0x0/0x40 returned 0 after 11 usecs
    Dec  6 23:10:01 guest kernel: [    0.100000] calling  ipc_ns_init+0x0/0x40 @ 1
"""

KLOG_ISO_HEAD_RE = re.compile(_ISO_STAMP + r"(?:\S+ )?kernel: ")
"""An ISO 8601 head ending in ``kernel: ``: journalctl -k -o short-iso or
short-iso-precise, rsyslog's RFC 3339 file format (then the kernel's own
stamp follows).

Examples::

    2026-12-06T23:10:01+0000 guest kernel: calling  ipc_ns_init+0x0/0x40 @ 1
    2026-12-06T23:10:01.100000+00:00 guest kernel: [    0.100000] calling  ipc_ns_init+0x0/0x40 @ 1
"""

KLOG_MONOTONIC_HEAD_RE = re.compile(r"\[ *(?P<mono>\d+\.\d+)\] (?:\S+ )?kernel: ")
"""journalctl -k -o short-monotonic: the kernel's own stamp, then the host
(or not) and ``kernel: ``.

Example: ``[    0.100000] guest kernel: calling  ipc_ns_init+0x0/0x40 @ 1``
"""

KLOG_LOOSE_HEAD_RE = re.compile(r"(?:<\d+>)?(?:\[\s*(?P<mono>\d+\.\d+)\]\s*)?.*?kernel: ")
"""Any other text up to ``kernel: `` (after an optional level and stamp),
as the analysis has always read it.

Example: ``<7>[    0.100000] vm-1 kernel: calling  ipc_ns_init+0x0/0x40 @ 1``
"""

KLOG_RAW_LEVEL_RE = re.compile(r"<\d{1,3}>")
"""dmesg -r: the record's syslog priority.  Example: ``<7>[    0.100000] calling ...``"""

KLOG_DECODED_LEVEL_RE = re.compile(
    r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|res\d|local\d) *:"
    r"(?:emerg|alert|crit|err|warn|notice|info|debug) *: "
)
"""dmesg -x: facility and level, each padded to six.

Example: ``kern  :debug : [    0.100000] calling  ipc_ns_init+0x0/0x40 @ 1``
"""

KLOG_KERNEL_STAMP_RE = re.compile(
    r"\[ *(?P<mono>\d+\.\d+)(?: <[ \d.]+>)?\] ?(?:\[ *(?P<caller>[TC]\d+)\])? *")
"""The kernel's own stamp, seconds since boot (dmesg; ``-d`` adds the delta
to the previous line after ``<``), then, with CONFIG_PRINTK_CALLER, the
task (``T``) or CPU (``C``) that printed the line.

Examples: ``[    0.100000] calling ...``, ``[    0.100012 <    0.000012>] initcall ...``,
``[    0.100000][    T1] calling ...`` (the console), ``[    0.100000] [    T1] calling ...`` (dmesg)
"""

KLOG_CALLER_RE = re.compile(r"\[ *(?P<caller>[TC]\d+)\] ?")
"""CONFIG_PRINTK_CALLER's caller where no kernel stamp goes before it: the
kernel prints it without a stamp when printk.time=0 (kernel/printk/printk.c,
info_print_prefix() and print_caller(): ``"[%6s] "`` of ``T%u``/``C%u``, so
``<7>[    T1] `` in the syslog form and ``[    T1] `` on the console), and
util-linux's dmesg prints it after its own stamp or in its place (``-t``,
``-T``, ``--time-format iso``; 2.40 and later from /dev/kmsg's
``caller=``, padded to the width of /proc/sys/kernel/pid_max; before 2.40
only with ``-S``/``-F``, as the kernel's text).

Examples: ``[    T1] calling ...`` (``dmesg -t``, a console with
printk.time=0), ``<7>[    T1] calling ...`` (``dmesg -S -r``, printk.time=0),
``[Sun Dec  6 23:09:05 2026] [    T1] calling ...`` (``dmesg -T``)
"""

KLOG_CALLER_REMNANT_RE = re.compile(r" *(?P<caller>[TC]\d+)\] ")
"""What util-linux's dmesg leaves of the caller of a record with no stamp
(printk.time=0) when it reads the syslog form (``dmesg -S``, ``-F``; 2.38
to 2.41): it takes the ``[`` of ``<7>[    T1] `` for a stamp's, finds no
number, and prints its own zero stamp (or, with ``-T``/iso, the boot's
time) before the rest, less one space (``-t``: nothing before it).

Examples: ``[    0.000000]    T1] calling ...`` (``dmesg -S``), ``   T1] calling ...``
(``dmesg -S -t``, 2.40 and later)
"""

KLOG_CTIME_STAMP_RE = re.compile(
    r"\[\S+ +\S+ +(?P<day>\d{1,2}) (?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d) \d{4}\] ?"
)
"""dmesg -T (or ``--time-format ctime``): wall clock, whole seconds, the
day and month names in the locale's words.

Example: ``[Sun Dec  6 23:09:05 2026] calling  ipc_ns_init+0x0/0x40 @ 1``
"""

KLOG_ISO_STAMP_RE = re.compile(_ISO_STAMP)
"""dmesg --time-format iso: wall clock with microseconds.

Example: ``2026-12-06T23:09:05,100012+00:00 initcall ipc_ns_init+0x0/0x40 returned 0 after 11 usecs``
"""

DMESG_CALLING_RE = re.compile(r"calling\s+(\S+)(?: \[([^\]\s]+)\])? @ (\d+)(.*)$")
"""initcall_debug's message before a call: ``"calling  %pS @ %i\\n"`` in
init/main.c from 5.10 to 7.1 (the same literal in each version's source:
analysis/tests/fixtures/kernel-formats.tsv) (``prio=``/``origin=``/``modname=``
are the series' additions; ``[module]`` is %pS's for a module's init).

Example::

    calling  init_sigframe_size+0x0/0x30 @ 1 prio=-3000 origin=signal
"""

DMESG_RETURNED_RE = re.compile(
    r"initcall (\S+)(?: \[([^\]\s]+)\])? returned (-?\d+) after (\d+) usecs(.*)$"
)
"""initcall_debug's message after a call: ``"initcall %pS returned %d after
%lld usecs\\n"`` in init/main.c from 5.10 to 7.1 (5.10 and 5.15 compute the
"usecs" as nanoseconds >> 10; 6.1 and later with ktime_us_delta(): read in
each version's source, analysis/tests/fixtures/kernel-formats.tsv).

Example::

    initcall init_sigframe_size+0x0/0x30 returned 0 after 12 usecs
"""

DMESG_LEVEL_RE = re.compile(r"entering initcall level: (\S+)\s*$")
"""initcall_debug's message as each initcall level begins (``early``, then
``pure`` ... ``late``), on kernels with Francesco Valla's 2025 patch
"init/main.c: log initcall level when initcall_debug is used" (in
linux-next from next-20250404, through Andrew Morton's tree):
``printk(KERN_DEBUG "entering initcall level: %s\\n", level)``, so in
7.1.5's init/main.c (the fixlet to pr_debug() posted in review is not
there); not in 6.12 and before (analysis/tests/fixtures/kernel-formats.tsv).

Example: ``entering initcall level: device``
"""

DMESG_BLACKLISTED_RE = re.compile(r"initcall (\S+) blacklisted\s*$")
"""The kernel's own message for a call ``initcall_blacklist=`` names:
``pr_debug("initcall %s blacklisted\\n", fn_name)`` in init/main.c's
initcall_blacklisted() (5.10 to 7.1, analysis/tests/fixtures/kernel-formats.tsv),
the function's name without ``+0x..``; a pr_debug(), so printed only with
dynamic debug on for init/main.c (``dyndbg="file init/main.c +p"``).  The
call prints no calling/returned line: do_one_initcall() returns -EPERM
first.  Not the series' own ``(prio N) blacklisted, not run``
(DMESG_INITEXIT_RE).

Example: ``initcall fuse_init blacklisted``
"""

DMESG_LINUX_VERSION_RE = re.compile(r"Linux version (\d+)\.(\d+)")
"""The banner, for the kernel's version.  Example: ``Linux version 5.15.100 (gcc ...) #1 SMP``"""

#: The trace events the model reads, by name; others are counted as ignored.
EVENT_NAMES: dict[str, EventName] = {
    e.value: e for e in EventName if e not in (EventName.DMESG_CALLING, EventName.DMESG_RETURNED)
}

#: 10**(9 - digits) for a fraction of ``digits`` digits.
FRACTION_SCALE = tuple(10 ** (9 - n) for n in range(10))

DMESG_INITEXIT_RE = re.compile(
    r"initexit: (?:ordered (?P<ordered>\d+) built-in pairs in (?P<ns>\d+) ns"
    r"|(?P<origin>\S+): (?:skipping (?P<skipped>\S+) \(prio (?P<sprio>-?\d+)\) after an earlier failure"
    r"|(?P<blacklisted>\S+) \(prio (?P<bprio>-?\d+)\) blacklisted, not run"
    r"|(?P<failed>\S+) \(prio (?P<fprio>-?\d+)\) failed with (?P<error>-?\d+)(?P<ftail>.*)"
    r"|(?P<noexit>\S+) has no exit and runs before (?P<later>\S+): nothing could undo it: none runs"
    r"|module_init_exit\((?P<oprio>-?\d+), (?P<oinit>\S+), (?P<oexit>\S+)\) is outside the band "
    r"\[(?P<lo>-?\d+), (?P<hi>-?\d+)\) of its entry (?P<oentry>\S+): none runs"
    r"|(?P<entries>\d+) entries for its pairs, not 1: none runs"
    r"|the pairs of entry (?P<split>\S+) are not linked together: none runs"
    r"))\s*$"
)
"""The series' own kernel messages about built-in objects (init/main.c
initexit_run_object(), kernel/initexit.c initexit_bind_objects()), matched
after analysis/kernel_log.py took the line's envelope off.

Examples (with dmesg's envelope)::

    [    0.409026] initexit: ordered 26 built-in pairs in 683084 ns
    [    0.556401] initexit: lib/test_initexit_unwind: tiu2_init (prio 200) failed with -202, unwinding lib/test_initexit_unwind
    [    0.556401] initexit: lib/x: x0_init (prio 0) failed with -12, nothing to unwind
    [    0.557308] initexit: lib/test_initexit_unwind: skipping tiu3_init (prio 300) after an earlier failure
    [    0.560386] initexit: lib/test_initexit_order: tio_blacklist_me_init (prio 100) blacklisted, not run
    [    0.408779] initexit: lib/test_initexit_keep: tik1_init has no exit and runs before tik2_init: nothing could undo it: none runs
    [    0.408779] initexit: lib/x: module_init_exit(600, x_init, x_exit) is outside the band [0, 500) of its entry x_entry: none runs
    [    0.408779] initexit: lib/x: 0 entries for its pairs, not 1: none runs
    [    0.408779] initexit: lib/x: the pairs of entry x_entry are not linked together: none runs
"""

DMESG_RUN_INIT_RE = re.compile(r"Run (\S+) as init process")
"""The kernel handing over to userspace: the boot finished (a message, as
DMESG_INITEXIT_RE).

Example: ``Run /init as init process``
"""

DMESG_PROBE_RE = re.compile(r"probe of (.+?) returned (-?\d+) after (\d+) usecs\s*$")
"""initcall_debug's message after each driver probe: ``"probe of %s returned
%d after %lld usecs\\n"`` (KERN_DEBUG, drivers/base/dd.c's
really_probe_debug(), printed when the probe returns: dev_name(), then
really_probe()'s result, which is the driver's error negated, so a
deferral is ``517`` (-EPROBE_DEFER from a driver's probe) or ``-517`` (a
supplier's device link not ready), ``19``/``6`` a driver that rejects the
device (-ENODEV, -ENXIO); ``ktime_us_delta()`` microseconds).  The same
text from 5.10 on; from 5.8 until e2f06aa88508 (April 2023, then in the
5.10, 5.15 and 6.1 stable trees) it was a pr_debug(), printed only with
dynamic debug on for drivers/base/dd.c (kernel_log.probe_note).

Example: ``probe of serio1 returned 19 after 7197 usecs``
"""

DMESG_TASK_COMM_RE = re.compile(r"\bPID: (\d+) Comm: (\S+)")
"""A task's pid and name, as dump_stack_print_info() (lib/dump_stack.c)
prints them at the head of every WARN, BUG, oops and dump_stack():
``"%sCPU: %d PID: %d Comm: %.20s %s%s %s %.*s"`` (6.6; 6.12 adds ``UID:
%u`` before ``PID:``).  The only line of a kernel log that names the task
behind a pid, so CONFIG_PRINTK_CALLER's ``[T45]`` on a probe line can be
told a kworker (analysis/probes.py); a name with a space is cut at it.

Example: ``CPU: 1 UID: 0 PID: 115 Comm: insmod Tainted: G  R        O       6.12.118+ #1``
"""

DMESG_DEFERRAL_RE = re.compile(
    r"(\S+) (\S+): (?:(?P<pending>deferred probe pending): |(?P<defer>error -EPROBE_DEFER): "
    r"|(?P<timeout>deferred probe timeout, ignoring dependency)"
    r"|(?P<nodriver>ignoring dependency for device, assuming no driver))(?P<reason>.*?)\s*$"
)
"""The kernel's messages about why a device's probe is deferred, after
dev_printk()'s ``DRIVER-OR-BUS DEVICE: `` head (drivers/base/dd.c and
core.c, 6.12):

- ``deferred probe pending: REASON``: dev_warn() for each device still
  deferred when the deferred probe timeout (``deferred_probe_timeout=``,
  10 s after the late initcalls with modules) runs out; REASON is what
  dev_err_probe() recorded, ``DRIVER: message`` (or ``(reason unknown)``).
- ``error -EPROBE_DEFER: REASON``: dev_err_probe()'s own dev_dbg(), printed
  only with dynamic debug enabled for drivers/base/core.c.
- ``deferred probe timeout, ignoring dependency``: dev_warn() once the
  timeout ran out, from a probe that asked
  driver_deferred_probe_check_state().
- ``ignoring dependency for device, assuming no driver``: the same
  function's dev_warn() on a kernel without modules once the initcalls
  are done (the probe gets -ENODEV instead of deferring again).

Example: ``platform initexit-probe-consumer: deferred probe pending: initexit-probe-consumer: waiting for initexit-probe-supplier``
"""


BENCH_LOAD_RE = re.compile(r"initexit-bench: load (?P<mod>\S+) (?P<err>-?\d+):(?P<steps>(?: \w+=\d+)*)\s*$")
"""The line scripts/bench's profile kernel prints after each module load
(bench/profile_load.py: load_module() with local_clock() stamps), matched
after analysis/kernel_log.py took the line's envelope off: the module, what
the load returned, and each step's guest ns since the stamp before::

    [   12.345678] initexit-bench: load bench_pairs_16 0: check=5123 layout=81234 init=40213
"""

BENCH_MARK_RE = re.compile(r"^bench-profile: (?P<mode>\S+) (?P<mod>\S+) (?P<round>\d+)\s*$")
"""bench/guest-modules.sh's mark before each modloop call of the profile
kernel's run (``bench-profile: MODE MODULE ROUND``): the first load after
it ran with cold caches."""
