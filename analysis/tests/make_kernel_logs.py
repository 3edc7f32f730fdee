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

    /usr/bin/python3 -m analysis.tests.make_kernel_logs --journal-remote /path/to/systemd-journal-remote

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
#: The forms whose text depends on this machine's boot time.
MACHINE_DEPENDENT = ("dmesg-T", "dmesg-iso")

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
    args = ap.parse_args(argv)
    recs = records()
    src = "fixtures/captured/stock-boot-declared-dmesg.dmesg, trimmed (source.kmsg)"
    for name, opts in DMESG_FORMS.items():
        write(name, dmesg(SOURCE, *opts), f"dmesg -F source.kmsg {' '.join(opts)} (util-linux); {src}".replace("  ", " "))
    write("dmesg-crlf", dmesg(SOURCE).replace("\n", "\r\n"), f"dmesg -F source.kmsg, CRLF line ends; {src}")
    # CONFIG_PRINTK_CALLER: the printing task (T) or CPU (C) after the stamp.
    caller = [(lv, us, f"[{'T1' if i % 7 else 'C0':>6}] {msg}") for i, (lv, us, msg) in enumerate(recs)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "caller.kmsg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(kmsg_text(caller))
        write("printk-caller-dmesg", dmesg(path),
              f"dmesg -F of source.kmsg with CONFIG_PRINTK_CALLER's [    T1] / [    C0] after each stamp; {src}")
    write("printk-caller-console", "".join(f"[{us // 1_000_000:5d}.{us % 1_000_000:06d}]{msg}\n"
                                           for _, us, msg in caller),
          f"a serial console's lines with CONFIG_PRINTK_CALLER (no space before [    T1]); {src}")
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
