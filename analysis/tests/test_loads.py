"""analysis/loads.py: the loads of a module and the boot calls of an
object, as the host-side tests (tests/boot/test_modules.py,
tests/configs/test_builtin_fs.py) ask for them."""

from __future__ import annotations

import pathlib

from analysis.build import build_capture
from analysis.load import load_capture
from analysis.loads import Call, ModuleLoad, boot_calls, module_loads
from analysis.parse import parse_trace_report

FIX = pathlib.Path(__file__).resolve().parent / "fixtures"


def test_module_loads_in_order_with_their_inits_unload_and_unwind() -> None:
    cap = load_capture(str(FIX / "synthetic-module-fail-unwind.txt"))
    assert module_loads(cap, "ie_demo") == [
        ModuleLoad("ie_demo", 0,
                   (Call(0, -10, "demo_alloc_init", 0), Call(1, 0, "demo_init", 0),
                    Call(2, 10, "demo_register_init", -12)),
                   unload=(), unwind=("demo_exit", "demo_alloc_exit")),
        ModuleLoad("ie_demo", 1,
                   (Call(0, -10, "demo_alloc_init", 0), Call(1, 0, "demo_init", 0),
                    Call(2, 10, "demo_register_init", 0), Call(3, 20, "demo_noexit_ok_init", 0)),
                   unload=("demo_final_exit", "demo_register_exit", "demo_exit", "demo_alloc_exit"), unwind=()),
    ]
    first, second = module_loads(cap, "ie_demo")
    assert first.failed == Call(2, 10, "demo_register_init", -12)
    assert second.failed is None
    assert module_loads(cap, "ie_dem") == [] and module_loads(cap, "ie_demo_x") == []


def test_an_init_the_capture_cut_off_has_no_return() -> None:
    text = (FIX / "synthetic-module-fail-unwind.txt").read_text()
    cut = text[:text.index("initexit_init_finish: path=module origin=ie_demo idx=1 ")]
    cut = cut[:cut.rindex("\n") + 1]
    (load,) = module_loads(build_capture(parse_trace_report(cut, "cut")), "ie_demo")
    assert load.inits == (Call(0, -10, "demo_alloc_init", 0), Call(1, 0, "demo_init", None))
    assert load.failed is None and load.unload == () and load.unwind == ()


def test_boot_calls_of_a_built_in_object_from_a_trace() -> None:
    cap = load_capture(str(FIX / "synthetic-patched-boot.txt"))
    # The object's pairs (its entry, bootdemo_entry, is a classic initcall
    # of the trace and has no origin; its record is index 0).
    assert boot_calls(cap, "ie_boot_demo") == [
        Call(1, -5000, "bootdemo_core_init", 0), Call(2, -4900, "bootdemo_between_init", 0),
        Call(3, -4800, "bootdemo_late_init", 0)]
    # A module's calls are no boot calls.
    assert boot_calls(load_capture(str(FIX / "synthetic-module-fail-unwind.txt")), "ie_demo") == []


def test_boot_calls_from_initcall_debug_lines() -> None:
    # The kernel log names the object by modname= (origin= before): no
    # index, the priority the line prints; an object's entry (bootdev_entry)
    # is one of its calls there, the pairs it runs follow it.
    cap = load_capture(str(FIX / "dmesg-patched-boot.txt"))
    assert boot_calls(cap, "obj_device") == [
        Call(None, 0, "virtio_pci_driver_init", 0), Call(None, 0, "bootdev_entry", 0),
        Call(None, 0, "serial8250_init", 0), Call(None, 0, "virtio_blk_init", 0)]


def test_boot_calls_leave_out_the_exits_an_unwind_ran() -> None:
    cap = load_capture(str(FIX / "synthetic-boot-unwind.txt"))
    assert boot_calls(cap, "ie_boot_unwind") == [
        Call(1, -1000, "bunw_fs_init", 0), Call(3, -980, "bunw_fs2_init", 0), Call(4, -970, "bunw_fail_init", -19)]
