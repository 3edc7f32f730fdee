#!/bin/sh
# Guest script of scripts/run --kselftest TARGETS: run every test of the
# kselftest install in /kselftest (the targets asked for, built from the
# booted kernel's tree) with the kernel's own runner, run_kselftest.sh.
# Its KTAP goes to $INITEXIT_OUT/kselftest.tap and its exit status to
# kselftest.exit, which scripts/run judges on the host against the plan
# (a test that never reported fails); the console gets the KTAP too.
#
# Each test's time limit: the kernel's runner gives a test 45 s unless
# the target's settings file says otherwise, a limit set for hardware;
# under QEMU's TCG tests run many times slower, so every test gets
# INITEXIT_KSELFTEST_TIMEOUT seconds (default 900) instead, within the
# boot's own --timeout.
set -u

ksft=/kselftest
dir=${INITEXIT_OUT:?}
if [ ! -x "$ksft/run_kselftest.sh" ]; then
	echo "kselftest.sh: no kselftest in $ksft (scripts/run --kselftest TARGETS installs one)" >&2
	exit 2
fi
echo "# kselftest: $(grep -c . "$ksft/kselftest-list.txt") test(s): $(tr '\n' ' ' <"$ksft/kselftest-list.txt")"
rc=0
(cd "$ksft" && ./run_kselftest.sh -o "${INITEXIT_KSELFTEST_TIMEOUT:-900}") >"$dir/kselftest.tap" 2>&1 || rc=$?
cat "$dir/kselftest.tap"
echo "$rc" >"$dir/kselftest.exit"
echo "# kselftest: run_kselftest.sh exit $rc"
exit "$rc"
