"""The reference model of the series (analysis/series.py), which writes the
synthetic fixtures and is the boot test's oracle, on the rules one by one."""

from __future__ import annotations

from analysis import series
from analysis.series import ENOEXEC, Entry, Pair


def _calls(out: series.Outcome) -> list[tuple[str, str]]:
    return [(s.kind, str(s.pair.init if s.kind == "init" else s.pair.exit)) for s in out.steps]


def test_order_is_priority_then_declaration() -> None:
    pairs = [Pair("m", 10, "c_init", "c_exit"), Pair("m", 0, "a_init", "a_exit"), Pair("m", 10, "d_init", "d_exit"),
             Pair("m", -5, "b_init", "b_exit")]
    out = series.module_load(pairs)
    assert out.ok and out.refused is None
    assert [s.pair.init for s in out.steps] == ["b_init", "a_init", "c_init", "d_init"]
    assert [s.idx for s in out.steps] == [0, 1, 2, 3]
    assert _calls(series.module_unload(pairs)) == [("exit", "d_exit"), ("exit", "c_exit"), ("exit", "a_exit"),
                                                    ("exit", "b_exit")]


def test_a_failure_unwinds_the_succeeded_exits_in_reverse_and_stops() -> None:
    pairs = [Pair("m", 0, "a_init", "a_exit"), Pair("m", 1, None, "b_exit"), Pair("m", 2, "c_init", "c_exit", ret=3),
             Pair("m", 3, "d_init", "d_exit", ret=-12), Pair("m", 4, "e_init", "e_exit")]
    out = series.module_load(pairs)
    assert out.error == -12
    assert _calls(out) == [("init", "a_init"), ("init", "c_init"), ("init", "d_init"),
                           ("exit", "c_exit"), ("exit", "b_exit"), ("exit", "a_exit")]
    assert {s.failed for s in out.steps if s.kind == "exit"} == {3}
    assert all(s.reason == "unwind" for s in out.steps if s.kind == "exit")


def test_an_exitless_init_before_another_init_refuses_the_module() -> None:
    pairs = [Pair("m", 0, "a_init", None), Pair("m", 1, "b_init", "b_exit")]
    out = series.module_load(pairs)
    assert out.error == ENOEXEC and out.steps == ()
    assert out.refused is not None and "a_init() has no exit" in out.refused
    # As the last init it loads, and the module is permanent.
    last = [Pair("m", 0, "b_init", "b_exit"), Pair("m", 1, "a_init", None), Pair("m", 2, None, "z_exit")]
    assert series.module_load(last).ok and series.permanent(last)
    assert series.module_load([Pair("m", 0, None, None)]).error == ENOEXEC


def _boot_calls(out: series.BootOutcome) -> list[tuple[str, str]]:
    return [(s.kind, str(s.pair.init if s.kind == "init" else s.pair.exit)) for s in out.steps]


def _notes(out: series.BootOutcome) -> list[tuple[str, str, object]]:
    return [(n.kind, n.origin, n.pair.init if n.pair is not None else n.value) for n in out.notices]


def test_an_object_runs_its_pairs_at_its_entry_sorted() -> None:
    # Declared out of order, in two files (link order): sorted by priority,
    # ties in link then declaration order; the entry record takes table
    # position 0 and the pairs follow it.
    recs: list[series.Record] = [Pair("a", 30, "b_init", "b_exit"), Pair("a", 10, "c_init", "c_exit"), Entry("a", "a_entry"),
            Pair("a", 30, "a_init", "a_exit"), Pair("a", 0, "d_init", "d_exit")]
    out = series.boot(recs, classic={"device": ["x_init", "a_entry", "y_init"]})
    assert [(c.func, c.ret) for c in out.calls] == [("x_init", 0), ("a_entry", 0), ("y_init", 0)]
    entry = out.calls[1]
    assert entry.origin == "a"
    assert [(s.pair.init, s.idx) for s in entry.steps] == [("d_init", 1), ("c_init", 2), ("b_init", 3),
                                                           ("a_init", 4)]
    assert isinstance(out.table[0], Entry) and out.bound == 4 and out.notices == ()


def test_entries_run_in_band_then_classic_order_not_by_pair_priority() -> None:
    # b's entry comes first in the device band's link order: its pairs at
    # 400 run before a's at 1; the late entry runs in the late band.
    recs: list[series.Record] = [Entry("l", "l_entry", "late"), Pair("l", 1000, "l_init", "l_exit"),
            Entry("b", "b_entry"), Pair("b", 400, "b_init", "b_exit"),
            Entry("a", "a_entry"), Pair("a", 1, "a_init", "a_exit")]
    out = series.boot(recs, classic={"device": ["b_entry", "z_init", "a_entry"], "fs": ["f_init"]})
    assert [c.func for c in out.calls] == ["f_init", "b_entry", "z_init", "a_entry", "l_entry"]
    assert _boot_calls(out) == [("init", "b_init"), ("init", "a_init"), ("init", "l_init")]
    assert [s.idx for s in out.steps] == [3, 5, 1]
    # Without the classic list a band holds its entries, in link order.
    assert [c.func for c in series.boot(recs).calls] == ["b_entry", "a_entry", "l_entry"]


def test_a_builtin_failure_unwinds_its_object_at_once_and_skips_the_rest() -> None:
    # a1's failure unwinds a0 and the exit-only pair before it, newest
    # first, skips a2 and the entry returns the error; b goes on.
    recs: list[series.Record] = [Entry("a", "a_entry"), Pair("a", 0, "a0_init", "a0_exit"), Pair("a", 1, None, "ax_exit"),
            Pair("a", 2, "a1_init", "a1_exit", ret=-19), Pair("a", 3, "a2_init", "a2_exit"),
            Entry("b", "b_entry"), Pair("b", 0, "b0_init", "b0_exit")]
    out = series.boot(recs)
    assert [(c.func, c.ret) for c in out.calls] == [("a_entry", -19), ("b_entry", 0)]
    assert _boot_calls(out) == [("init", "a0_init"), ("init", "a1_init"), ("exit", "ax_exit"),
                                ("exit", "a0_exit"), ("init", "b0_init")]
    assert {s.failed for s in out.steps if s.kind == "exit"} == {3}
    assert [(n.kind, n.pair.init if n.pair else None, n.why) for n in out.notices] == [
        ("failed", "a1_init", "unwinding"), ("skipped", "a2_init", None)]


def test_a_failure_with_nothing_to_unwind_says_so() -> None:
    # The first init fails: nothing succeeded before it.
    recs: list[series.Record] = [Entry("a", "a_entry"), Pair("a", 0, "a0_init", "a0_exit", ret=-5), Pair("a", 1, "a1_init", "a1_exit")]
    out = series.boot(recs)
    assert _boot_calls(out) == [("init", "a0_init")]
    assert [(n.kind, n.why) for n in out.notices] == [("failed", "nothing"), ("skipped", None)]


def test_a_blacklisted_builtin_init_is_reported_and_fails_its_object() -> None:
    # As in a module: do_one_initcall() refuses it with -EPERM, the object
    # unwinds what ran before it and skips what comes after it.
    recs: list[series.Record] = [Entry("a", "a_entry"), Pair("a", 0, "a0_init", "a0_exit"), Pair("a", 1, "a1_init", "a1_exit"),
            Pair("a", 2, "a2_init", "a2_exit"), Entry("b", "b_entry"), Pair("b", 1, "b1_init", "b1_exit")]
    out = series.boot(recs, blacklisted=frozenset({"a1_init"}))
    assert _boot_calls(out) == [("init", "a0_init"), ("init", "a1_init"), ("exit", "a0_exit"), ("init", "b1_init")]
    assert [(s.pair.ret, s.blacklisted) for s in out.steps if s.kind == "init"] == [
        (0, False), (series.EPERM, True), (0, False)]
    assert [(n.kind, n.idx) for n in out.notices] == [("blacklisted", 2), ("failed", 2), ("skipped", 3)]
    assert out.calls[0].ret == series.EPERM


def test_a_blacklisted_entry_stops_its_whole_object() -> None:
    recs: list[series.Record] = [Entry("a", "a_entry"), Pair("a", 0, "a0_init", "a0_exit")]
    out = series.boot(recs, blacklisted=frozenset({"a_entry"}))
    assert [(c.func, c.blacklisted, c.steps) for c in out.calls] == [("a_entry", True, ())]
    assert out.notices == ()


def test_the_bind_refuses_a_pair_outside_the_entrys_band() -> None:
    # A late entry's band is [1000, 1500); the device band [0, 500).
    assert series.band_range("late") == (1000, 1500) and series.band_range("device") == (0, 500)
    assert series.band_range("late_sync") == (1500, series.INT_MAX)
    recs: list[series.Record] = [Entry("a", "a_entry", "late"), Pair("a", 1000, "a0_init", "a0_exit"),
            Pair("a", 1500, "a1_init", "a1_exit"), Pair("a", 999, "a2_init", "a2_exit")]
    out = series.boot(recs)
    assert [(c.func, c.ret, c.steps) for c in out.calls] == [("a_entry", ENOEXEC, ())]
    assert [(n.kind, n.why, n.pair.init if n.pair else None, n.value) for n in out.notices] == [
        ("refused", "band", "a2_init", 999), ("refused", "band", "a1_init", 1500)]
    assert out.bound == 3  # "ordered N" counts a refused object's pairs


def test_the_bind_refuses_an_init_nothing_could_undo() -> None:
    recs: list[series.Record] = [Entry("k", "k_entry"), Pair("k", 6, "k0_init", "k0_exit"), Pair("k", 7, "k1_init", None),
            Pair("k", 8, "k2_init", "k2_exit", ret=-308)]
    out = series.boot(recs)
    assert [(c.func, c.ret, c.steps) for c in out.calls] == [("k_entry", ENOEXEC, ())]
    assert [(n.kind, n.why, n.idx, n.other) for n in out.notices] == [("refused", "undoable", 2, "k2_init")]
    # The exit-less init last, or an exit-only pair after it: bound and run.
    ok: list[series.Record] = [Entry("k", "k_entry"), Pair("k", 6, "k0_init", "k0_exit"), Pair("k", 7, "k1_init", None),
          Pair("k", 8, None, "k2_exit")]
    assert series.boot(ok).notices == () and len(series.boot(ok).steps) == 2


def test_the_bind_refuses_a_run_without_exactly_one_entry() -> None:
    recs: list[series.Record] = [Pair("a", 0, "a0_init", "a0_exit"), Entry("b", "b1_entry"), Entry("b", "b2_entry"),
            Pair("b", 0, "b0_init", "b0_exit"), Entry("c", "c_entry"), Pair("c", 0, "c0_init", "c0_exit")]
    out = series.boot(recs)
    assert [(n.kind, n.origin, n.why, n.value) for n in out.notices] == [
        ("refused", "a", "entries", 0), ("refused", "b", "entries", 2)]
    assert [(c.func, c.ret, len(c.steps)) for c in out.calls] == [
        ("b1_entry", ENOEXEC, 0), ("b2_entry", ENOEXEC, 0), ("c_entry", 0, 1)]
    assert out.bound == 1
    # Positions: unbound runs stay as linked, c's entry record at 4.
    assert out.steps[0].idx == 5


def test_the_bind_refuses_an_object_split_in_two_runs() -> None:
    e = Entry("a", "a_entry")
    recs: list[series.Record] = [e, Pair("a", 0, "a0_init", "a0_exit"), Entry("b", "b_entry"), Pair("b", 0, "b0_init", "b0_exit"),
            e, Pair("a", 1, "a1_init", "a1_exit")]
    out = series.boot(recs)
    assert [(n.kind, n.why, n.other) for n in out.notices] == [("refused", "split", "a_entry")]
