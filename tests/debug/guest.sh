#!/bin/sh
# The debug kernel's guest script (issue 17): scripts/test boots the
# patched kernel built with kconfig/variants/debug.config (KASAN, lockdep,
# kmemleak, debugobjects, list debugging, atomic-sleep checks) once
# (scripts/run --debug) and runs here, in this order:
#   1. sweeps: the fault sweeps (tests/fault-sweep/guest-sweep.sh; the
#      modules of initexit_sweep_only= on the kernel command line when given)
#   2. stress: the load stress (tests/stress/guest-stress.sh;
#      initexit_stress_cycles= and initexit_stress_seconds= set its bounds)
#   3. debug-tools: KASAN, kmemleak and lockdep were on during 1 and 2
#      (lockdep turns itself off for good at the first forced unload,
#      which tests/guest does on purpose: that is why it comes last)
#   4. tests: every in-guest test (tests/guest/*.sh and the series'
#      kselftest, initramfs/ktap-runner.sh); the KUnit suite ran at boot
#   5. a last kmemleak scan, its report (if any) on the console
# initexit_debug_parts= on the kernel command line (a comma-separated list
# of the names above; default sweeps,debug-tools,tests) chooses 1-4:
# scripts/test boots it twice when its time budget allows (layer 4b), the
# second time with stress,debug-tools.
# Each writes KTAP to $INITEXIT_OUT/ktap/NAME.tap and its status to
# NAME.exit, which the host judges against their plans. The whole kernel
# log goes to $INITEXIT_OUT/kmsg.txt as it is written (/dev/kmsg: the
# sweeps lower the console's level and log more than the ring buffer
# holds), ending with the record "initexit-debug: end of the log"; the
# host fails the run on any report there or on the console, on a lost
# record or on a missing end (scripts/lib/verdict.py reports).
set -u
OUT=$INITEXIT_OUT
DBG=/sys/kernel/debug
mkdir -p "$OUT/ktap"
cat /dev/kmsg >"$OUT/kmsg.txt" 2>"$OUT/kmsg.err" &
kmsg=$!

# run NAME SCRIPT [ARG]: one KTAP test file, as ktap-runner.sh runs them.
run() {
	echo "# initexit-test: $1"
	rc=0
	sh "$2" ${3:+"$3"} >"$OUT/ktap/$1.tap" 2>&1 || rc=$?
	cat "$OUT/ktap/$1.tap"
	echo "$rc" >"$OUT/ktap/$1.exit"
	echo "# initexit-test: $1 exit $rc"
	[ "$rc" = 0 ] || status=1
}

# The debug tools are on (a kernel without one of them, or one that turned
# itself off, would make every other check here pass without looking).
cat >/tmp/debug-tools.sh <<'EOF'
. "$INITEXIT_TESTS/ktap.inc"
ktap_plan 4
ktap_check "KASAN initialized at boot" grep -q "KernelAddressSanitizer initialized" "$INITEXIT_OUT/../dmesg.txt"
ktap_check "kmemleak is on (a scan runs)" sh -c 'echo scan >/sys/kernel/debug/kmemleak'
ktap_check "lockdep is on (debug_locks 1: no splat, no taint turned it off)" \
	sh -c 'grep -q "debug_locks: *1$" /proc/lockdep_stats || { grep debug_locks /proc/lockdep_stats; dmesg | grep -m3 -i "lock debugging\|turning off the locking"; exit 1; }'
ktap_check "the /dev/kmsg reader is alive and wrote no error" sh -c "kill -0 $1 && [ ! -s '$INITEXIT_OUT/kmsg.err' ]"
ktap_finish
EOF

parts=",${initexit_debug_parts:-sweeps,debug-tools,tests},"
part() { case "$parts" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
status=0
for p in $(echo "$parts" | tr , ' '); do
	case "$p" in
	sweeps | stress | debug-tools | tests) ;;
	*) echo "initexit-debug: initexit_debug_parts: unknown part $p (sweeps, stress, debug-tools, tests)"; status=1 ;;
	esac
done
# guest-sweep.sh writes its own ktap/fault-sweep.tap and .exit.
if part sweeps; then sh /initexit/tests/fault-sweep/guest-sweep.sh >/dev/null || status=1; fi
if part stress; then run stress /initexit/tests/stress/guest-stress.sh; fi
if part debug-tools; then run debug-tools /tmp/debug-tools.sh "$kmsg"; fi
if part tests; then sh /initexit/ktap-runner.sh || status=1; fi

# What kmemleak holds now, older than 5 s (each test above set aside the
# reports it judged): on the console, where the host looks for reports.
if [ -w "$DBG/kmemleak" ]; then
	sleep 6
	if ! echo scan >"$DBG/kmemleak"; then
		echo "initexit-debug: the last kmemleak scan failed: kmemleak is off"
		status=1
	fi
	cat "$DBG/kmemleak" >"$OUT/kmemleak-final.txt"
	if [ -s "$OUT/kmemleak-final.txt" ]; then
		echo "initexit-debug: kmemleak's last scan reports:"
		cat "$OUT/kmemleak-final.txt"
		status=1
	else
		echo "initexit-debug: kmemleak's last scan reports nothing"
	fi
fi
echo "initexit-debug: end of the log" >/dev/kmsg
sleep 1
kill "$kmsg" 2>/dev/null
exit "$status"
