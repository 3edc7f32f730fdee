#!/bin/sh
# The debug kernel's guest script (issue 17): scripts/test boots the
# patched kernel built with kconfig/variants/debug.config (KASAN, lockdep,
# kmemleak, debugobjects, list debugging, atomic-sleep checks) once, with
# "slub_debug=F slab_nomerge" (exact slab counts), and runs here, in this
# order:
#   1. every in-guest test (tests/guest/*.sh, initramfs/ktap-runner.sh);
#      the KUnit suite ran at boot
#   2. the fault sweeps (tests/fault-sweep/guest-sweep.sh)
#   3. the load stress (tests/stress/guest-stress.sh)
#   4. a last kmemleak scan, its report (if any) on the console
# Each writes KTAP to $INITEXIT_OUT/ktap/NAME.tap and its status to
# NAME.exit, which the host judges against their plans. The whole kernel
# log goes to $INITEXIT_OUT/kmsg.txt as it is written (/dev/kmsg: the
# console shows warnings only while the sweeps run, and the sweeps log
# more than the ring buffer holds); the host fails the run on any report
# there or on the console (scripts/lib/verdict.py reports).
set -u
OUT=$INITEXIT_OUT
DBG=/sys/kernel/debug
mkdir -p "$OUT/ktap"
cat /dev/kmsg >"$OUT/kmsg.txt" 2>"$OUT/kmsg.err" &
kmsg=$!

# run NAME SCRIPT: one KTAP test file, as ktap-runner.sh runs them.
run() {
	echo "# initexit-test: $1"
	rc=0
	sh "$2" >"$OUT/ktap/$1.tap" 2>&1 || rc=$?
	cat "$OUT/ktap/$1.tap"
	echo "$rc" >"$OUT/ktap/$1.exit"
	echo "# initexit-test: $1 exit $rc"
}

status=0
sh /initexit/ktap-runner.sh || status=1
# guest-sweep.sh writes its own ktap/fault-sweep.tap and .exit.
sh /initexit/tests/fault-sweep/guest-sweep.sh >/dev/null || status=1
run stress /initexit/tests/stress/guest-stress.sh
[ "$rc" = 0 ] || status=1

# What kmemleak holds now, older than 5 s (each test above set aside the
# reports it judged): on the console, where the host looks for reports.
if [ -w "$DBG/kmemleak" ]; then
	sleep 6
	echo scan >"$DBG/kmemleak"
	cat "$DBG/kmemleak" >"$OUT/kmemleak-final.txt"
	if [ -s "$OUT/kmemleak-final.txt" ]; then
		echo "initexit-debug: kmemleak's last scan reports:"
		cat "$OUT/kmemleak-final.txt"
		status=1
	else
		echo "initexit-debug: kmemleak's last scan reports nothing"
	fi
fi
sleep 1
kill "$kmsg" 2>/dev/null
exit "$status"
