"""Write analysis/tests/fixtures/probes/patched-boot-caller.dmesg: the real
capture fixtures/captured/patched-boot.dmesg with CONFIG_PRINTK_CALLER's
caller ids added, as dmesg prints them (``[    0.791510] [   T45] ...``).

Derived, not captured: the test kernel is built without
CONFIG_PRINTK_CALLER, so no boot of it printed these ids.  Each line
gets the id of the task that, by the kernel's code, printed it:

- a line between a call's ``calling ... @ PID`` and its ``initcall ...
  returned`` line: ``[T<PID>]`` (the task that runs the call prints its
  own messages; init/main.c's ``@ %i`` is task_pid_nr(current), the
  same number printk's caller id holds);
- the lines of the PS/2 ports serio0 and serio1 (their three probe lines
  and the two ``input: ... /serio0/``, ``/serio1/`` lines): ``[T45]``.
  serio registers ports and binds their drivers from its work item
  (drivers/input/serio/serio.c, serio_handle_event()), which runs in a
  kworker, not in the initcall that queued the work.  45 is made up:
  the capture does not say which kworker ran it;
- every other line: ``[T1]`` (in the real boot some were printed by
  swapper, pid 0, or from interrupts, ``[C0]``; the analysis reads the
  caller of probe lines only).

So serio1's first probe (``returned 19 after 5115 usecs``, printed
during slab_late_init, which pid 1 runs) has a caller that is not the
enclosing call's task, and i8042's probe (printed during i8042_init by
pid 1) one that is.  ``test_probes.py`` checks the file is what this
script writes.  Run from the repository root:

    /usr/bin/python3 -m analysis.tests.make_caller_fixture
"""

from __future__ import annotations

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fixtures", "captured", "patched-boot.dmesg")
OUT = os.path.join(HERE, "fixtures", "probes", "patched-boot-caller.dmesg")

#: The made-up pid of the kworker that ran serio's work.
SERIO_KWORKER = 45

_STAMP = re.compile(r"^(\[ *\d+\.\d+\]) (.*)$")
_CALLING = re.compile(r"calling +(\S+) .*@ (\d+)")
_RETURNED = re.compile(r"initcall (\S+) .*returned ")
_SERIO = re.compile(r"probe of serio[01] |/serio[01]/")


def with_callers(text: str) -> str:
    """``text`` (dmesg's plain form) with a caller id after each stamp."""
    out: list[str] = []
    open_calls: list[tuple[str, int]] = []
    for line in text.splitlines(keepends=True):
        m = _STAMP.match(line.rstrip("\n"))
        if m is None:
            out.append(line)
            continue
        stamp, msg = m.groups()
        c = _CALLING.match(msg)
        if c is not None:
            open_calls.append((c.group(1), int(c.group(2))))
        task = open_calls[-1][1] if open_calls else 1
        if _SERIO.search(msg):
            task = SERIO_KWORKER
        r = _RETURNED.match(msg)
        if r is not None:
            for k in range(len(open_calls) - 1, -1, -1):
                if open_calls[k][0] == r.group(1):
                    del open_calls[k]
                    break
        out.append(f"{stamp} [{'T' + str(task):>6}] {msg}\n")
    return "".join(out)


def main() -> None:
    with open(SOURCE, encoding="utf-8") as f:
        text = with_callers(f.read())
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
