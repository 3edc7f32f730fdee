"""Write analysis/tests/fixtures/kernel-logs/: one boot's kernel log in every
form the analysis reads, each printed by the tool that prints it.

The boot is ``source.kmsg`` there: lines of a real stock 6.12 boot with
initcall_debug (fixtures/captured/stock-boot-declared-dmesg.dmesg) in the
kernel's record form ``<level>[seconds] message``, which is what util-linux
``dmesg -F FILE`` reads.  From it:

- ``dmesg -F`` (util-linux, this machine's) prints dmesg's forms: plain,
  ``-r``, ``-x``, ``-T``, ``-t`` (also what a console log holds with
  printk.time=0), ``-d``, ``--time-format iso``; CRLF is the plain form
  with ``\\r\\n`` line ends;
- journalctl (systemd, this machine's) prints ``-k -o short``,
  ``short-precise``, ``short-monotonic``, ``short-iso``,
  ``short-iso-precise``, each with and without the host name, from a
  journal file that systemd-journal-remote (Debian package
  systemd-journal-remote; give its program with ``--journal-remote``)
  writes from the records in journald's export format, fields as journald
  stores a kernel message (``_TRANSPORT=kernel``,
  ``_SOURCE_MONOTONIC_TIMESTAMP``, ``SYSLOG_IDENTIFIER=kernel``);
- CONFIG_PRINTK_CALLER's forms (the stock kernel has none: each record
  gets a made-up caller, ``T1``, every 7th ``C0``; :func:`callers`): the
  kernel's own text is written here from kernel/printk/printk.c's formats
  (:func:`syslog_text`, :func:`console_text`, :func:`devkmsg_records`),
  and dmesg prints each form from it: this machine's (util-linux 2.38)
  with ``-F`` (the syslog form, as ``dmesg -S`` reads it) prints
  ``CALLER_FORMS``; util-linux 2.40 or later (``--new-dmesg``; 2.41.5
  was built from its source for this) prints ``NEW_DMESG_FORMS``, from
  the syslog form (``-F``) or /dev/kmsg's record form (``-K``), and its
  other ``-K`` forms are checked to be the 2.38 ones but for the caller's
  padding.  fixtures/kernel-logs/README.md says which form is which and
  where each was read in the sources;
- syslog files are written here from rsyslog's documented templates
  RSYSLOG_TraditionalFileFormat (``%TIMESTAMP% %HOSTNAME% %syslogtag%%msg%``,
  ``Mmm dd hh:mm:ss`` with a space-padded day) and RSYSLOG_FileFormat
  (RFC 3339 stamps), the message as imklog reads it from the kernel, with
  the kernel's ``[seconds]`` in front (rsyslogd is not run);
- ``kernel-5.10.log``: the plain form under a 5.10 banner (init/main.c of
  5.10 prints the same two lines; its "usecs" are ns >> 10);
- ``kernel-6.16-levels.log``: the plain form with the ``entering initcall
  level: NAME`` lines of Francesco Valla's patch (6.16) before each level's
  calls (the calls' levels from the 6.12 tree's System.map), and
  ``kernel-6.16-levels-swapped.log`` with the device and fs levels swapped.

Run from the repository root (times are UTC, names in the C locale):

    /usr/bin/python3 -m analysis.tests.make_kernel_logs --journal-remote /path/to/systemd-journal-remote \
        --new-dmesg /path/to/util-linux-2.41/dmesg

dmesg ``-T`` and ``--time-format iso`` count from this machine's boot, so
those two fixtures differ from machine to machine; the test that compares
the others with a fresh run of dmesg skips these.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(HERE, "fixtures", "kernel-logs")
SOURCE = os.path.join(LOGS, "source.kmsg")
HOST = "guest"
#: The wall clock of the boot's second 0 for journald and syslog (UTC).
BOOT_WALL = datetime.datetime(2026, 12, 6, 23, 10, 1, tzinfo=datetime.timezone.utc)
ENV = {**os.environ, "TZ": "UTC", "LC_ALL": "C"}

#: dmesg's forms: fixture name -> dmesg options.
DMESG_FORMS: dict[str, tuple[str, ...]] = {
    "dmesg": (),
    "dmesg-r": ("-r",),
    "dmesg-x": ("-x",),
    "dmesg-T": ("-T",),
    "printk-time-0": ("-t",),
    "dmesg-d": ("-d",),
    "dmesg-iso": ("--time-format", "iso"),
}
#: CONFIG_PRINTK_CALLER's forms this machine's dmesg (util-linux 2.38)
#: prints from the kernel's syslog form: fixture name -> (printk.time,
#: dmesg options after ``-F FILE``).
CALLER_FORMS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "printk-caller-dmesg": (True, ()),
    "printk-caller-dmesg-t": (True, ("-t",)),
    "printk-caller-dmesg-T": (True, ("-T",)),
    "printk-caller-dmesg-x": (True, ("-x",)),
    "printk-caller-dmesg-x-t": (True, ("-x", "-t")),
    "printk-caller-dmesg-r": (True, ("-r",)),
    "printk-caller-dmesg-iso": (True, ("--time-format", "iso")),
    "printk-caller-time-0-r": (False, ("-r",)),
    "printk-caller-time-0-dmesg": (False, ()),
}
#: The forms only util-linux 2.40 and later print: fixture name -> (how
#: dmesg reads: ``-F`` the syslog form, ``-K`` /dev/kmsg's records;
#: printk.time; options).
NEW_DMESG_FORMS: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "printk-caller-time-0-dmesg-t": ("-F", False, ("-t",)),
    "printk-caller-dmesg-kmsg-r": ("-K", True, ("-r",)),
}
#: util-linux 2.40's ``-K`` forms that print what 2.38's ``-F`` does (the
#: caller's padding aside: the width of /proc/sys/kernel/pid_max there;
#: and ``-T``'s and iso's wall clock: 2.41 counts from the boot's
#: microsecond, 2.38 from its second).
SAME_IN_NEW_DMESG = ("printk-caller-dmesg", "printk-caller-dmesg-t", "printk-caller-dmesg-T",
                     "printk-caller-dmesg-x", "printk-caller-dmesg-x-t", "printk-caller-dmesg-iso")
#: The forms whose text depends on this machine's boot time.
MACHINE_DEPENDENT = ("dmesg-T", "dmesg-iso", "printk-caller-dmesg-T", "printk-caller-dmesg-iso")

#: journalctl's forms: fixture name -> -o mode (each also -no-hostname).
JOURNAL_FORMS = {
    "journalctl-short": "short",
    "journalctl-short-precise": "short-precise",
    "journalctl-short-monotonic": "short-monotonic",
    "journalctl-short-iso": "short-iso",
    "journalctl-short-iso-precise": "short-iso-precise",
}

#: The level of each call of source.kmsg (its __initcall__kmod_ symbol's
#: suffix in fixtures/captured/stock-boot.System.map): the first call of
#: each level gets the level lines up to its level before it.
FIRST_OF_LEVEL = {
    "init_hw_perf_events": ("early",),
    "release_early_probes": ("pure", "core", "postcore"),
    "sbf_init": ("arch",),
    "pci_apply_final_quirks": ("subsys", "fs"),
    "rapl_pmu_init": ("device",),
    "deferred_probe_initcall": ("late",),
}

RECORD_RE = re.compile(r"<(\d+)>\[ *(\d+)\.(\d{6})\] (.*)$")

#: What each fixture's sidecar says: name -> (origin, expected verdict).
Expect = dict[str, object]


def records() -> list[tuple[int, int, str]]:
    """source.kmsg as (level, microseconds since boot, message)."""
    out = []
    with open(SOURCE, encoding="utf-8") as f:
        for line in f:
            m = RECORD_RE.match(line.rstrip("\n"))
            assert m is not None, line
            out.append((int(m.group(1)), int(m.group(2)) * 1_000_000 + int(m.group(3)), m.group(4)))
    return out


def dmesg(path: str, *opts: str) -> str:
    return subprocess.run(["dmesg", "-F", path, *opts], env=ENV, check=True,
                          capture_output=True, text=True).stdout


def kmsg_text(recs: list[tuple[int, int, str]]) -> str:
    return "".join(f"<{lv}>[{us // 1_000_000:5d}.{us % 1_000_000:06d}] {msg}\n" for lv, us, msg in recs)


def with_levels(recs: list[tuple[int, int, str]], swap: bool = False) -> list[tuple[int, int, str]]:
    """The records with the level lines before each level's first call."""
    out: list[tuple[int, int, str]] = []
    for lv, us, msg in recs:
        m = re.match(r"calling  (\w+)\+", msg)
        for name in FIRST_OF_LEVEL.get(m.group(1), ()) if m else ():
            out.append((7, us, f"entering initcall level: {name}"))
        out.append((lv, us, msg))
    if swap:  # the device level's block before the fs level's: levels out of order
        fs = next(i for i, r in enumerate(out) if r[2] == "entering initcall level: fs")
        dev = next(i for i, r in enumerate(out) if r[2] == "entering initcall level: device")
        late = next(i for i, r in enumerate(out) if r[2] == "entering initcall level: late")
        fs_block, dev_block = out[fs:dev], out[dev:late]
        t_fs, t_dev = fs_block[0][1], dev_block[0][1]
        dev_block = [(lv, us - t_dev + t_fs, msg) for lv, us, msg in dev_block]
        fs_block = [(lv, us - t_fs + dev_block[-1][1] + 20, msg) for lv, us, msg in fs_block]
        out[fs:late] = dev_block + fs_block
    return out


def callers(recs: list[tuple[int, int, str]]) -> list[str]:
    """CONFIG_PRINTK_CALLER's caller of each record (made up): task 1's,
    every 7th CPU 0's (from interrupt context)."""
    return ["T1" if i % 7 else "C0" for i in range(len(recs))]


def _stamp(us: int) -> str:
    """print_time()'s ``[%5lu.%06lu]``."""
    return f"[{us // 1_000_000:5d}.{us % 1_000_000:06d}]"


def syslog_text(recs: list[tuple[int, int, str]], time: bool) -> str:
    """The records with their callers in the kernel's syslog form, what
    syslog(2) (``dmesg -S``) and /proc/kmsg read: record_print_text() with
    syslog, so info_print_prefix() writes ``<%u>`` (facility 0), print_time()'s
    stamp when printk.time is on, print_caller()'s ``[%6s]`` and a space."""
    return "".join(f"<{lv}>{_stamp(us) if time else ''}[{c:>6}] {msg}\n"
                   for (lv, us, msg), c in zip(recs, callers(recs)))


def console_text(recs: list[tuple[int, int, str]], time: bool) -> str:
    """The same on a console (info_print_prefix() without syslog)."""
    return "".join(f"{_stamp(us) if time else ''}[{c:>6}] {msg}\n"
                   for (_lv, us, msg), c in zip(recs, callers(recs)))


def devkmsg_records(recs: list[tuple[int, int, str]]) -> str:
    """The records as /dev/kmsg gives them (info_print_ext_header():
    ``%u,%llu,%llu,%c`` and ``,caller=%c%u``, ``;``; msg_add_ext_text()
    escapes bytes below space, from 127 and ``\\`` as ``\\x%02x``),
    separated by NUL bytes as util-linux's ``dmesg -K FILE`` reads them (its
    tests/ts/dmesg/cid-kmsg-input)."""
    def esc(msg: str) -> str:
        return "".join(f"\\x{ord(ch):02x}" if ch < " " or ch >= "\x7f" or ch == "\\" else ch for ch in msg)
    return "".join(f"{lv},{seq},{us},-,caller={c};{esc(msg)}\n\0"
                   for seq, ((lv, us, msg), c) in enumerate(zip(recs, callers(recs))))


def caller_form(name: str, program: str = "dmesg") -> str:
    """A CONFIG_PRINTK_CALLER form as ``program`` prints it (CALLER_FORMS,
    NEW_DMESG_FORMS or, with ``-K``, any option list ``-K:OPTS``)."""
    recs = records()
    if name in CALLER_FORMS:
        how, time, opts = "-F", *CALLER_FORMS[name]
    elif name in NEW_DMESG_FORMS:
        how, time, opts = NEW_DMESG_FORMS[name]
    else:
        how, time, opts = "-K", True, tuple(name.split(":", 1)[1].split())
    text = devkmsg_records(recs) if how == "-K" else syslog_text(recs, time)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "caller.kmsg")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return subprocess.run([program, how, path, *opts], env=ENV, check=True,
                              capture_output=True, text=True).stdout


def unpadded(text: str) -> str:
    """``text`` with each caller's padding taken off (``[    T1]`` -> ``[T1]``)
    and dmesg's wall clock (``-T``, iso) left out."""
    text = re.sub(r"^(?:\[[A-Z][a-z][a-z] [^]]* \d{4}\]|\d{4}-\d\d-\d\dT\S+) ", "", text, flags=re.M)
    return re.sub(r"\[ *([TC]\d+)\]", r"[\1]", text)


def journal_export(recs: list[tuple[int, int, str]], boot_id: str) -> str:
    base = int(BOOT_WALL.timestamp()) * 1_000_000
    out = []
    for lv, us, msg in recs:
        out.append(f"__REALTIME_TIMESTAMP={base + us}\n__MONOTONIC_TIMESTAMP={us}\n_BOOT_ID={boot_id}\n"
                   f"_SOURCE_MONOTONIC_TIMESTAMP={us}\n_TRANSPORT=kernel\nPRIORITY={lv}\n"
                   f"SYSLOG_FACILITY=0\nSYSLOG_IDENTIFIER=kernel\n_HOSTNAME={HOST}\nMESSAGE={msg}\n\n")
    return "".join(out)


def syslog(recs: list[tuple[int, int, str]], rfc3339: bool) -> str:
    out = []
    for _lv, us, msg in recs:
        t = BOOT_WALL + datetime.timedelta(microseconds=us)
        stamp = (t.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00") if rfc3339
                 else f"{t.strftime('%b')} {t.day:2d} {t.strftime('%H:%M:%S')}")
        out.append(f"{stamp} {HOST} kernel: [{us // 1_000_000:5d}.{us % 1_000_000:06d}] {msg}\n")
    return "".join(out)


def write(name: str, text: str, origin: str, expect: Optional[Expect] = None) -> None:
    with open(os.path.join(LOGS, name + ".log"), "w", encoding="utf-8", newline="") as f:
        f.write(text)
    side: dict[str, object] = {"origin": origin}
    side.update(expect or {"exit": 0, "failed": []})
    with open(os.path.join(LOGS, name + ".expect.json"), "w", encoding="utf-8") as f:
        json.dump(side, f, indent=2)
        f.write("\n")


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--journal-remote", metavar="PROGRAM",
                    help="systemd-journal-remote, for the journalctl forms (skipped without)")
    ap.add_argument("--new-dmesg", metavar="PROGRAM",
                    help="util-linux 2.40 or later's dmesg, for NEW_DMESG_FORMS (skipped without)")
    args = ap.parse_args(argv)
    recs = records()
    src = "fixtures/captured/stock-boot-declared-dmesg.dmesg, trimmed (source.kmsg)"
    for name, opts in DMESG_FORMS.items():
        write(name, dmesg(SOURCE, *opts), f"dmesg -F source.kmsg {' '.join(opts)} (util-linux); {src}".replace("  ", " "))
    write("dmesg-crlf", dmesg(SOURCE).replace("\n", "\r\n"), f"dmesg -F source.kmsg, CRLF line ends; {src}")
    # CONFIG_PRINTK_CALLER: the printing task (T) or CPU (C) after the stamp
    # or in its place.
    for name, (time, opts) in CALLER_FORMS.items():
        kernel = "the kernel's syslog form" + ("" if time else " with printk.time=0")
        write(name, caller_form(name),
              f"dmesg -F {' '.join(('FILE',) + opts)} (util-linux 2.38, = dmesg -S) of {kernel} "
              f"(printk.c's info_print_prefix()) of source.kmsg with CONFIG_PRINTK_CALLER's "
              f"[    T1] / [    C0] (made up); {src}")
    write("printk-caller-console", console_text(recs, True),
          f"a serial console's lines with CONFIG_PRINTK_CALLER (no space before [    T1]), written "
          f"from printk.c's info_print_prefix(); {src}")
    if args.new_dmesg:
        for name, (how, time, opts) in NEW_DMESG_FORMS.items():
            kernel = ("/dev/kmsg's records" if how == "-K" else "the kernel's syslog form"
                      + ("" if time else " with printk.time=0"))
            write(name, caller_form(name, args.new_dmesg),
                  f"dmesg {how} {' '.join(('FILE',) + opts)} (util-linux 2.41.5) of {kernel} "
                  f"(printk.c) of source.kmsg with CONFIG_PRINTK_CALLER's [    T1] / [    C0] "
                  f"(made up); {src}")
        for name in SAME_IN_NEW_DMESG:
            joined = " ".join(CALLER_FORMS[name][1])
            new = caller_form(f"-K:{joined}", args.new_dmesg)
            assert unpadded(new) == unpadded(caller_form(name)), name
        # Both read the syslog form of printk.time=0 alike but with -t.
        for name in ("printk-caller-time-0-dmesg", "printk-caller-time-0-r"):
            assert caller_form(name, args.new_dmesg) == caller_form(name), name
    else:
        print("no --new-dmesg: the forms of util-linux 2.40 and later were not written", file=sys.stderr)
    write("syslog", syslog(recs, False), f"rsyslog's RSYSLOG_TraditionalFileFormat, written by make_kernel_logs.py; {src}")
    write("syslog-rfc3339", syslog(recs, True), f"rsyslog's RSYSLOG_FileFormat, written by make_kernel_logs.py; {src}")
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old.kmsg")
        with open(old, "w", encoding="utf-8") as f:
            f.write(kmsg_text([(lv, us, msg.replace("Linux version 6.12.118+", "Linux version 5.10.228"))
                               for lv, us, msg in recs]))
        write("kernel-5.10", dmesg(old), f"dmesg -F of source.kmsg under a 5.10.228 banner; {src}")
        for swap in (False, True):
            lv_path = os.path.join(tmp, "levels.kmsg")
            with open(lv_path, "w", encoding="utf-8") as f:
                f.write(kmsg_text([(lv, us, msg.replace("Linux version 6.12.118+", "Linux version 6.16.0"))
                                   for lv, us, msg in with_levels(recs, swap)]))
            if swap:
                write("kernel-6.16-levels-swapped", dmesg(lv_path),
                      "kernel-6.16-levels with the device level (its line and calls) run before the fs level",
                      {"exit": 1, "failed": ["boot-priority-order", "levels-agree-with-priorities"]})
            else:
                write("kernel-6.16-levels", dmesg(lv_path),
                      "dmesg -F of source.kmsg under a 6.16.0 banner with the `entering initcall level:` "
                      f"lines before each level's first call; {src}")
        if args.journal_remote:
            with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
                boot_id = f.read().strip().replace("-", "")  # journalctl -k shows this boot only
            export = os.path.join(tmp, "kernel.export")
            with open(export, "w", encoding="utf-8") as f:
                f.write(journal_export(recs, boot_id))
            journal = os.path.join(tmp, "kernel.journal")
            subprocess.run([args.journal_remote, f"--output={journal}", export], check=True,
                           capture_output=True)
            for name, mode in JOURNAL_FORMS.items():
                for host in (True, False):
                    opts = ("-k", "-o", mode) + (() if host else ("--no-hostname",))
                    text = subprocess.run(["journalctl", f"--file={journal}", *opts], env=ENV, check=True,
                                          capture_output=True, text=True).stdout
                    write(name + ("" if host else "-no-hostname"), text,
                          f"journalctl {' '.join(opts)} (systemd 252) of a journal systemd-journal-remote "
                          f"wrote from source.kmsg; {src}")
        else:
            print("no --journal-remote: the journalctl forms were not written", file=sys.stderr)
    print(f"wrote {LOGS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
