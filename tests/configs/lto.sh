#!/bin/sh
# Guest script of scripts/check-configs for the lto variant (Clang ThinLTO):
# the module-path tests whose outcome depends on the order the linker kept
# (ties across and within files of a multi-file module, failure at every
# position, the trace events). The boot-path checks read the boot trace
# afterwards (tests/boot/test_boot.py on this run's folder).
INITEXIT_TEST_ONLY="kselftest-order kselftest-fail_sweep kselftest-events" exec sh /initexit/ktap-runner.sh
