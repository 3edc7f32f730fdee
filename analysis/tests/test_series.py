"""The reference model of the series (analysis/series.py), which writes the
synthetic fixtures and is the boot test's oracle, on the rules one by one."""

from __future__ import annotations

from analysis import series
from analysis.series import ENOEXEC, Pair


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


def test_a_builtin_failure_stays_in_its_object() -> None:
    # a's pairs run back to back: a1's failure unwinds a0 and skips a2; b,
    # whose pairs come before and after, goes on.
    pairs = [Pair("b", -10, "b0_init", "b0_exit"), Pair("a", -5, "a0_init", "a0_exit"),
             Pair("a", 0, "a1_init", "a1_exit", ret=-19), Pair("b", 5, "b1_init", "b1_exit"),
             Pair("a", 10, "a2_init", "a2_exit")]
    out = series.boot(pairs)
    assert _calls(out) == [("init", "b0_init"), ("init", "a0_init"), ("init", "a1_init"), ("exit", "a0_exit"),
                           ("init", "b1_init")]
    assert [(n.kind, n.pair.init) for n in out.notices] == [("skipped", "a2_init")]
    assert [s.at for s in out.steps] == [0, 1, 2, 2, 3]


def test_a_builtin_failure_after_another_objects_call_is_not_unwound() -> None:
    # b0 ran between a0 and a1: a0's exit would undo what b0 may use.
    pairs = [Pair("a", -10, "a0_init", "a0_exit"), Pair("b", -5, "b0_init", "b0_exit"),
             Pair("a", 0, "a1_init", "a1_exit", ret=-19), Pair("a", 10, "a2_init", "a2_exit")]
    out = series.boot(pairs)
    assert _calls(out) == [("init", "a0_init"), ("init", "b0_init"), ("init", "a1_init")]
    assert [(n.kind, n.pair.init, n.other) for n in out.notices] == [
        ("not-unwound", "a1_init", "b0_init"), ("skipped", "a2_init", None)]


def test_a_classic_initcall_in_between_is_named() -> None:
    # The device band's classic initcalls run after the pairs below 0 and
    # before the pairs at 0: between a0 and a1.
    pairs = [Pair("a", -10, "a0_init", "a0_exit"), Pair("a", 0, "a1_init", "a1_exit", ret=-5)]
    out = series.boot(pairs, classic={"device": ["d0_init", "d1_init"]})
    assert _calls(out) == [("init", "a0_init"), ("init", "a1_init")]
    assert [(n.kind, n.other) for n in out.notices] == [("not-unwound", "d0_init")]
    # An empty band is no call: the unwind is sound.
    out = series.boot(pairs, classic={"device": [], "fs_sync": []})
    assert _calls(out) == [("init", "a0_init"), ("init", "a1_init"), ("exit", "a0_exit")]
    # A classic initcall of a band above the failure does not count.
    out = series.boot(pairs, classic={"late": ["l0_init"]})
    assert _calls(out)[-1] == ("exit", "a0_exit")


def test_a_blacklisted_builtin_init_is_reported_and_fails_its_object() -> None:
    # As in a module: do_one_initcall() refuses it with -EPERM, the object
    # unwinds what ran before it and skips what comes after it (which may
    # depend on it); another object goes on.
    pairs = [Pair("a", 0, "a0_init", "a0_exit"), Pair("a", 1, "a1_init", "a1_exit"),
             Pair("b", 1, "b1_init", "b1_exit"), Pair("a", 2, "a2_init", "a2_exit")]
    out = series.boot(pairs, blacklisted=frozenset({"a1_init"}))
    assert _calls(out) == [("init", "a0_init"), ("init", "a1_init"), ("exit", "a0_exit"), ("init", "b1_init")]
    assert [s.pair.ret for s in out.steps if s.kind == "init"] == [0, series.EPERM, 0]
    assert [(n.kind, n.idx) for n in out.notices] == [("blacklisted", 1), ("skipped", 3)]


def test_an_exitless_init_before_the_failure_keeps_a_builtin_object() -> None:
    # As a module with it would be refused: nothing is unwound at boot.
    pairs = [Pair("a", 1, "a0_init", "a0_exit"), Pair("a", 2, "a1_init", None),
             Pair("a", 3, "a2_init", "a2_exit", ret=-5), Pair("a", 4, "a3_init", "a3_exit")]
    out = series.boot(pairs)
    assert _calls(out) == [("init", "a0_init"), ("init", "a1_init"), ("init", "a2_init")]
    assert [(n.kind, n.other, n.why) for n in out.notices] == [
        ("not-unwound", "a1_init", "no-exit"), ("skipped", None, None)]


def test_an_exit_only_pair_holds_its_place_in_the_window() -> None:
    # a0 has an exit only; the core band's initcall ran after it, before
    # a1: unwinding a0's exit would undo what the initcall may use.
    pairs = [Pair("a", -5200, None, "a0_exit"), Pair("a", 0, "a1_init", "a1_exit", ret=-5)]
    out = series.boot(pairs, classic={"core": ["c0_init"]})
    assert _calls(out) == [("init", "a1_init")]
    assert [(n.kind, n.other, n.why) for n in out.notices] == [("not-unwound", "c0_init", "ran")]
    # Back to back, its exit is unwound.
    out = series.boot(pairs)
    assert _calls(out) == [("init", "a1_init"), ("exit", "a0_exit")]
