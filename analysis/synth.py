"""Synthetic captures in the exact text format of ``trace-cmd report -N -t``.

Used to make the test fixtures named ``synthetic-*`` and the bench's large
trace.  What the kernel does with a table of pairs (order, exits, skips, refusal)
is analysis/series.py's reference model; this file writes its steps as
events, the built-in ones nested in their objects' entries among the initcalls of the bands.

Line format (trace-cmd 3.1.6 tracecmd/trace-read.c, libtraceevent 1.7)::

    "%16s-%-5d [%03d]" comm pid cpu, " %5llu.%09llu:" time (with -t),
    " %s: " name, padded with spaces to 20 columns, then the fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping, Optional, Sequence

from analysis import series
from analysis.model import BAND_NAMES, BANDS, LEVELS

#: (band name, priority, whether it starts a level): initcall_level fires
#: at each level (stock and the series), the series' initcall_band at every
#: band.
BAND_WALK: tuple[tuple[str, int, bool], ...] = tuple(
    (name, BANDS[name], name in LEVELS) for name in BAND_NAMES
)


def format_line(comm: str, pid: int, cpu: int, ts_ns: int, name: str, info: str,
                nsec: bool = True) -> str:
    """One event line exactly as ``trace-cmd report`` (``-t`` if nsec) prints it."""
    if nsec:
        stamp = f"{ts_ns // 1_000_000_000:5d}.{ts_ns % 1_000_000_000:09d}"
    else:
        us = (ts_ns + 500) // 1000
        stamp = f"{us // 1_000_000:5d}.{us % 1_000_000:06d}"
    pad = " " * max(0, 20 - len(name))
    return f"{comm:>16}-{pid:<5} [{cpu:03d}] {stamp}: {name}: {pad}{info}\n"


@dataclass(frozen=True)
class Pair(series.Pair):
    """One module_init_exit() pair (analysis/series.py) with how long its
    init and exit take in the synthetic capture."""

    init_ns: int = 20_000
    exit_ns: int = 5_000


@dataclass
class Task:
    """Where events come from: comm, pid, cpu."""

    comm: str
    pid: int
    cpu: int = 0


@dataclass
class TraceWriter:
    """Accumulates lines with a running clock."""

    ts_ns: int = 100_000_000
    lines: list[str] = field(default_factory=list)
    nsec: bool = True
    has_exit: bool = True  # initexit_init_start carries has_exit= (kernels since the field)

    def emit(self, task: Task, name: str, info: str, advance_ns: int = 1_000) -> None:
        self.ts_ns += advance_ns
        self.lines.append(format_line(task.comm, task.pid, task.cpu, self.ts_ns, name, info, self.nsec))

    def text(self, cpus: int = 1) -> str:
        return f"cpus={cpus}\n" + "".join(self.lines)

    # -- stock events --------------------------------------------------------

    def level(self, task: Task, level: str) -> None:
        self.emit(task, "initcall_level", f"level={level}")

    def band(self, task: Task, band: str, prio: int) -> None:
        self.emit(task, "initcall_band", f"band={band} prio={prio}")

    def initcall(self, task: Task, func: str, ret: int = 0, dur_ns: int = 10_000) -> None:
        self.emit(task, "initcall_start", f"func={func}+0x0")
        self.emit(task, "initcall_finish", f"func={func}+0x0 ret={ret}", dur_ns)

    # -- initexit events -----------------------------------------------------

    @staticmethod
    def _head(path: str, origin: str, idx: int, prio: int, func: str) -> str:
        return f"path={path} origin={origin} idx={idx} prio={prio} func={func}"

    def pair_init(self, task: Task, path: str, idx: int, p: Pair,
                  initcall_func: Optional[str] = None, refused: bool = False) -> None:
        """A pair's init; ``refused``: do_one_initcall() refused it
        (initcall_blacklist=), so no initcall_start/finish nests in it."""
        assert p.init is not None
        head = self._head(path, p.origin, idx, p.prio, p.init)
        start = self.ts_ns + 500
        tail = f" has_exit={int(p.exit is not None)}" if self.has_exit else ""
        self.emit(task, "initexit_init_start", head + tail, 500)
        # do_one_initcall's events nest inside; a module's init symbols are
        # gone from kallsyms at extract time, so %pS shows an address.
        shown = initcall_func or f"{p.init}+0x0"
        if not refused:
            self.emit(task, "initcall_start", f"func={shown}", 300)
            self.emit(task, "initcall_finish", f"func={shown} ret={p.ret}", p.init_ns)
        self.emit(task, "initexit_init_finish",
                  f"{head} ret={p.ret} duration_ns={self.ts_ns + 300 - start}", 300)

    def pair_exit(self, task: Task, path: str, idx: int, p: Pair, reason: str) -> None:
        assert p.exit is not None
        head = self._head(path, p.origin, idx, p.prio, p.exit)
        start = self.ts_ns + 400
        self.emit(task, "initexit_exit_start", f"{head} reason={reason}", 400)
        self.emit(task, "initexit_exit_finish",
                  f"{head} reason={reason} duration_ns={self.ts_ns + p.exit_ns - start}", p.exit_ns)

    def unwind(self, task: Task, path: str, idx: int, p: Pair, failed_idx: int,
               failed: Pair) -> None:
        assert p.exit is not None and failed.init is not None
        self.emit(task, "initexit_unwind",
                  f"{self._head(path, p.origin, idx, p.prio, p.exit)} failed_idx={failed_idx} "
                  f"failed_prio={failed.prio} failed_func={failed.init} error={failed.ret}", 200)


def _write_steps(w: TraceWriter, task: Task, path: str, steps: Sequence[series.Step]) -> None:
    """The events of the model's steps (analysis/series.py); an unwind names
    the failed init as it ran (a blacklisted one "returns" -EPERM)."""
    failed = {s.idx: s.pair for s in steps if s.kind == "init" and s.pair.ret < 0}
    for st in steps:
        p = st.pair
        assert isinstance(p, Pair)
        if st.kind == "init":
            w.pair_init(task, path, st.idx, p, refused=st.blacklisted)
            continue
        if st.reason == "unwind":
            assert st.failed is not None
            f = failed[st.failed]
            assert isinstance(f, Pair)
            w.unwind(task, path, st.idx, p, st.failed, f)
        assert st.reason is not None
        w.pair_exit(task, path, st.idx, p, st.reason)


def simulate_boot(w: TraceWriter, plain: Mapping[str, Sequence[str]], records: Sequence[series.Record],
                  task: Optional[Task] = None, by_band: bool = True,
                  blacklisted: frozenset[str] = frozenset()) -> series.BootOutcome:
    """A boot: ``plain`` maps band name to its initcalls in order (an
    entry's name where it runs, analysis/series.py boot()); ``records`` are
    the built-in pairs and entries in link order.  initcall_level fires at
    each level as in stock; ``by_band``: initcall_band at every band too,
    as the series fires it.  Returns the model's outcome."""
    boot_task = task or Task("swapper", 1, 0)
    out = series.boot(records, blacklisted, plain)
    w.level(boot_task, "early")
    for func in plain.get("early", []):
        w.initcall(boot_task, func)
    for band, prio, is_level in BAND_WALK:
        if is_level:
            w.level(boot_task, band)
        if by_band:
            w.band(boot_task, band, prio)
        for call in [c for c in out.calls if c.band == band]:
            if call.blacklisted:
                continue
            if call.origin is None:
                w.initcall(boot_task, call.func, call.ret)
                continue
            w.emit(boot_task, "initcall_start", f"func={call.func}+0x0")
            _write_steps(w, boot_task, "boot", call.steps)
            w.emit(boot_task, "initcall_finish", f"func={call.func}+0x0 ret={call.ret}", 2_000)
    return out


def simulate_module_load(w: TraceWriter, task: Task, name: str, pairs: list[Pair],
                         with_module_events: bool = True) -> bool:
    """insmod: module_load, the pairs in order (unwind on failure), and
    module_free if it failed; a load the model refuses before any init
    leaves no event.  Returns whether the load succeeded."""
    out = series.module_load(pairs)
    if out.refused is not None:
        return False
    if with_module_events:
        w.emit(task, "module_load", f"{name} OE", 50_000)
    _write_steps(w, task, "module", out.steps)
    if not out.ok and with_module_events:
        w.emit(task, "module_free", name, 20_000)
    return out.ok


def simulate_module_unload(w: TraceWriter, task: Task, name: str, pairs: list[Pair],
                           with_module_events: bool = True) -> None:
    """rmmod: every exit in reverse order, then module_free."""
    out = series.module_unload(pairs)
    _write_steps(w, task, "module", out.steps)
    if with_module_events:
        w.emit(task, "module_free", name, 20_000)


# -- canned scenarios (the synthetic fixtures) ---------------------------------

STOCK_PLAIN: dict[str, list[str]] = {
    "early": ["init_sigframe_size", "trace_init_flags_sys_enter"],
    "pure": ["ipc_ns_init", "init_mmap_min_addr"],
    "core": ["init_cpu_syscore", "net_inuse_init"],
    "core_sync": ["sched_core_sysctl_init"],
    "postcore": ["kobject_uevent_init", "bdi_class_init"],
    "arch": ["bts_init", "pt_init"],
    "arch_sync": ["pci_arch_init_sync"],
    "subsys": ["vdso_setup", "pci_driver_init", "misc_init"],
    "fs": ["chr_dev_init", "eventpoll_init"],
    "fs_sync": ["pcibios_assign_resources"],
    "rootfs": ["populate_rootfs"],
    "device": ["virtio_pci_driver_init", "serial8250_init", "virtio_blk_init"],
    "device_sync": ["deferred_probe_initcall_sync"],
    "late": ["clk_disable_unused", "printk_late_init"],
    "late_sync": ["tracer_init_tracefs_sync"],
}

#: Built-in objects (link order): each entry in its band, its pairs in the
#: entry's band, declared out of order in places (the entry sorts them).
BOOT_RECORDS: list[series.Record] = [
    series.Entry("ie_boot_demo", "bootdemo_entry", "core"),
    Pair("ie_boot_demo", -4800, "bootdemo_late_init", None),
    Pair("ie_boot_demo", -5000, "bootdemo_core_init", "bootdemo_core_exit"),
    Pair("ie_boot_demo", -4900, "bootdemo_between_init", "bootdemo_between_exit"),
    series.Entry("ie_boot_other", "other_entry", "subsys"),
    Pair("ie_boot_other", -2000, "other_subsys_init", "other_subsys_exit"),
    Pair("ie_boot_other", -1600, "other_after_init", None),
    series.Entry("ie_boot_dev", "bootdev_entry"),
    Pair("ie_boot_dev", 0, "bootdev_init", "bootdev_exit"),
    Pair("ie_boot_dev", 10, None, "bootdev_final_exit"),
    Pair("ie_boot_dev", 400, "bootdev_last_init", "bootdev_last_exit"),
    series.Entry("ie_boot_late", "bootlate_entry", "late"),
    Pair("ie_boot_late", 1000, "bootlate_init", "bootlate_exit"),
]

#: The classic initcalls of each band with the entries where they run.
PATCHED_PLAIN: dict[str, list[str]] = {
    **STOCK_PLAIN,
    "core": ["init_cpu_syscore", "bootdemo_entry", "net_inuse_init"],
    "subsys": ["vdso_setup", "pci_driver_init", "other_entry", "misc_init"],
    "device": ["virtio_pci_driver_init", "bootdev_entry", "serial8250_init", "virtio_blk_init"],
    "late": ["clk_disable_unused", "bootlate_entry", "printk_late_init"],
}

#: ie_boot_unwind: bunw_fail fails, the exit-only pair and the two before
#: it are unwound at once, the last is skipped.  ie_boot_first: its first
#: init fails, nothing to unwind.  ie_boot_ok runs after both (the
#: failures stay in their objects).  ie_boot_keep: an exit-less init before
#: another: refused at bind, its entry returns -ENOEXEC and runs nothing.
#: ie_boot_band: a pair outside its entry's band: refused too.
BOOT_UNWIND_RECORDS: list[series.Record] = [
    series.Entry("ie_boot_unwind", "bunw_entry", "fs"),
    Pair("ie_boot_unwind", -1000, "bunw_fs_init", "bunw_fs_exit"),
    Pair("ie_boot_unwind", -990, None, "bunw_exitonly_exit"),
    Pair("ie_boot_unwind", -980, "bunw_fs2_init", "bunw_fs2_exit"),
    Pair("ie_boot_unwind", -970, "bunw_fail_init", "bunw_fail_exit", ret=-19),
    Pair("ie_boot_unwind", -960, "bunw_late_init", "bunw_late_exit"),
    series.Entry("ie_boot_first", "bfirst_entry"),
    Pair("ie_boot_first", 0, "bfirst_init", "bfirst_exit", ret=-12),
    Pair("ie_boot_first", 100, "bfirst_more_init", "bfirst_more_exit"),
    series.Entry("ie_boot_ok", "bok_entry"),
    Pair("ie_boot_ok", 5, "bok_init", "bok_exit"),
    series.Entry("ie_boot_keep", "bkeep_entry"),
    Pair("ie_boot_keep", 6, "bkeep_a_init", "bkeep_a_exit"),
    Pair("ie_boot_keep", 7, "bkeep_b_init", None),
    Pair("ie_boot_keep", 8, "bkeep_c_init", "bkeep_c_exit", ret=-5),
    series.Entry("ie_boot_band", "bband_entry", "late"),
    Pair("ie_boot_band", 1000, "bband_a_init", "bband_a_exit"),
    Pair("ie_boot_band", 1600, "bband_b_init", "bband_b_exit"),
]

BOOT_UNWIND_PLAIN: dict[str, list[str]] = {
    **STOCK_PLAIN,
    "fs": ["chr_dev_init", "bunw_entry", "eventpoll_init"],
    "device": ["virtio_pci_driver_init", "bfirst_entry", "bok_entry", "bkeep_entry", "serial8250_init"],
    "late": ["clk_disable_unused", "bband_entry", "printk_late_init"],
}

MODULE_PAIRS: list[Pair] = [
    Pair("ie_demo", -10, "demo_alloc_init", "demo_alloc_exit"),
    Pair("ie_demo", 0, "demo_init", "demo_exit"),
    Pair("ie_demo", 10, "demo_register_init", "demo_register_exit"),
    Pair("ie_demo", 20, "demo_noexit_ok_init", None),
    Pair("ie_demo", 30, None, "demo_final_exit"),
]


def failing(pairs: list[Pair], func: str, ret: int) -> list[Pair]:
    """``pairs`` with the init named ``func`` returning ``ret``."""
    return [replace(p, ret=ret) if p.init == func else p for p in pairs]


def scenario_stock_boot() -> str:
    w = TraceWriter()
    simulate_boot(w, STOCK_PLAIN, [], by_band=False)
    return w.text()


def scenario_patched_boot() -> str:
    w = TraceWriter()
    simulate_boot(w, PATCHED_PLAIN, BOOT_RECORDS)
    return w.text()


def scenario_boot_unwind() -> str:
    w = TraceWriter()
    simulate_boot(w, BOOT_UNWIND_PLAIN, BOOT_UNWIND_RECORDS)
    return w.text()


def scenario_module_load_unload() -> str:
    w = TraceWriter()
    simulate_module_load(w, Task("insmod", 112, 0), "ie_demo", MODULE_PAIRS)
    w.ts_ns += 3_000_000
    simulate_module_unload(w, Task("rmmod", 115, 0), "ie_demo", MODULE_PAIRS)
    return w.text()


def scenario_module_fail_unwind() -> str:
    """A load that fails at the third pair (-ENOMEM), then a good load and an
    unload (so the exit of every pair is known)."""
    w = TraceWriter()
    bad = failing(MODULE_PAIRS, "demo_register_init", -12)
    simulate_module_load(w, Task("insmod", 120, 0), "ie_demo", bad)
    w.ts_ns += 2_000_000
    simulate_module_load(w, Task("insmod", 124, 0), "ie_demo", MODULE_PAIRS)
    w.ts_ns += 2_000_000
    simulate_module_unload(w, Task("rmmod", 127, 0), "ie_demo", MODULE_PAIRS)
    return w.text()


def scenario_two_cpus() -> str:
    """Two insmods on two CPUs, their events interleaved by time as trace-cmd
    merges the per-CPU buffers."""
    a, b = TraceWriter(), TraceWriter()
    b.ts_ns += 1_700
    simulate_module_load(a, Task("insmod", 140, 0), "ie_demo", MODULE_PAIRS)
    other = [Pair("ie_other", 0, "other_init", "other_exit"),
             Pair("ie_other", 5, "other_more_init", "other_more_exit")]
    simulate_module_load(b, Task("insmod", 141, 1), "ie_other", other)
    merged = sorted(a.lines + b.lines, key=lambda ln: float(ln.split("]", 1)[1].split(":", 1)[0]))
    return "cpus=2\n" + "".join(merged)


SCENARIOS = {
    "synthetic-stock-boot": scenario_stock_boot,
    "synthetic-patched-boot": scenario_patched_boot,
    "synthetic-boot-unwind": scenario_boot_unwind,
    "synthetic-module-load-unload": scenario_module_load_unload,
    "synthetic-module-fail-unwind": scenario_module_fail_unwind,
    "synthetic-two-cpus": scenario_two_cpus,
}


def large_trace_lines(events: int, seed_modules: int = 64) -> Iterator[str]:
    """At least ``events`` event lines: repeated module load/unload cycles
    (with an occasional failed load) over ``seed_modules`` modules, every
    line in trace-cmd's format.  Yields the ``cpus=`` header first."""
    yield "cpus=2\n"
    w = TraceWriter()
    produced = 0
    cycle = 0
    while produced < events:
        name = f"ie_bench{cycle % seed_modules}"
        pairs = [Pair(name, prio, f"{name}_p{k}_init", f"{name}_p{k}_exit")
                 for k, prio in enumerate((-20, -10, 0, 0, 10, 20, 30, 40))]
        if cycle % 17 == 16:
            pairs = failing(pairs, f"{name}_p5_init", -22)
        task = Task("insmod", 1000 + cycle % 30000, cycle % 2)
        if simulate_module_load(w, task, name, pairs):
            simulate_module_unload(w, Task("rmmod", 1001 + cycle % 30000, cycle % 2), name, pairs)
        produced += len(w.lines)
        yield from w.lines
        w.lines.clear()
        cycle += 1
