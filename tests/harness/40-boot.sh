#!/bin/bash
# Boot tests of scripts/run (each boots the patched kernel under QEMU):
#  - the run scripts/test made for the in-guest tests brought home a boot
#    trace with >= 100 initcall_start events that the host's trace-cmd
#    reads, a scenario trace, and meta.json;
#  - a guest script that exits 3 makes scripts/run exit 3, and a module
#    given with --modules is in the guest at $USER_MODULES;
#  - a guest that panics, and one that hangs, fail within the timeout with
#    the console tail, and the boot trace still comes home.
set -u
. "$(dirname "$0")/lib.sh"
work=${INITEXIT_TEST_OUT:-$(mktemp -d)}
mkdir -p "$work"
accel=${INITEXIT_TEST_ACCEL:-auto}

meta_keys=(kernel_release series_hash kernel_cmdline accel qemu_version trace_cmd_version
	date steps_seconds guest.clocksource guest.trace_clock guest.kernel_release)
if [ "${INITEXIT_TEST_NO_BOOT:-0}" = 1 ]; then
	ktap_plan 1
	ktap_skip "boot tests" "--no-boot"
	ktap_finish
	exit
fi

json() { /usr/bin/python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1" "$2" 2>/dev/null; }

# The run's own files (8 and one per meta.json key), then 14 of the
# exit-3, panic and hang runs.
if [ -z "$RUN_OUT" ] || [ ! -d "$RUN_OUT" ]; then ktap_plan 15; else ktap_plan $((8 + ${#meta_keys[@]} + 14)); fi

# --- the run of the in-guest tests (made by scripts/test)
if [ -z "$RUN_OUT" ] || [ ! -d "$RUN_OUT" ]; then
	ktap_skip "output of the in-guest test run" "scripts/test did not pass INITEXIT_TEST_RUN_OUT"
else
	# What the traces hold is the analysis's to say (python3 -m analysis parse --count).
	count() { (cd "$ROOT" && /usr/bin/python3 -m analysis parse -q --count "$@") 2>/dev/null; }
	n=$(count initcall_start "$RUN_OUT/boot.report.txt")
	ktap_check "the boot trace has >= 100 initcall_start events (has ${n:-0})" [ "${n:-0}" -ge 100 ]
	ktap_check "the host's trace-cmd report reads boot.dat" trace-cmd report -N -i "$RUN_OUT/boot.dat" -q
	ktap_check "the boot trace starts at the first initcalls (console initcalls are in it)" \
		[ "$(count initcall_start --about con_init "$RUN_OUT/boot.report.txt")" -ge 1 ]
	ktap_check "scenario.dat came home and trace-cmd reads it" trace-cmd report -N -i "$RUN_OUT/scenario.dat" -q
	ktap_check "dmesg.txt holds initcall_debug lines" [ "$(count calling "$RUN_OUT/dmesg.txt")" -ge 100 ]
	for key in "${meta_keys[@]}"; do
		ktap_check "meta.json has $key" [ -n "$(json "$RUN_OUT/meta.json" "$key")" ]
	done
	ktap_check "meta.json: trace_clock is global" [ "$(json "$RUN_OUT/meta.json" guest.trace_clock)" = global ]
	cs=$(json "$RUN_OUT/meta.json" guest.clocksource)
	ktap_check "the guest clocksource is not jiffies (is $cs)" [ "${cs:-jiffies}" != jiffies ]
	ktap_check "meta.json accel is kvm or tcg" grep -q -E '"accel": "(kvm|tcg)"' "$RUN_OUT/meta.json"
fi

# --- exit status 3 and --modules
cat >"$work/exit3.sh" <<'SH'
set -eu
insmod "$USER_MODULES/initexit_hello.ko"
grep initexit_hello /proc/modules >"$INITEXIT_OUT/hello.txt"
rmmod initexit_hello
exit 3
SH
"$ROOT/scripts/run" --accel "$accel" --out "$work/exit3" --guest-script "$work/exit3.sh" \
	--modules "$ROOT/tests/harness/fixtures/hello-module" >/dev/null 2>"$work/exit3.err"
rc=$?
ktap_check "a guest script that exits 3 makes scripts/run exit 3 (got $rc)" [ "$rc" = 3 ]
ktap_check "--modules: the module was in the guest at \$USER_MODULES and loaded" \
	grep -q '^initexit_hello ' "$work/exit3/guest/hello.txt"
ktap_check "scenario.report.txt shows the module load" \
	[ "$(cd "$ROOT" && /usr/bin/python3 -m analysis parse -q --count module_load --about initexit_hello \
		"$work/exit3/scenario.report.txt" 2>/dev/null)" -ge 1 ]
ktap_check "meta.json records guest_exit 3" [ "$(json "$work/exit3/meta.json" guest_exit)" = 3 ]

# --- panic: with panic=-1 the guest reboots at once and QEMU exits
echo 'echo c >/proc/sysrq-trigger' >"$work/panic.sh"
t0=$(date +%s)
"$ROOT/scripts/run" --accel "$accel" --out "$work/panic" --guest-script "$work/panic.sh" \
	--timeout 120 --no-report >/dev/null 2>"$work/panic.err"
rc=$?
secs=$(($(date +%s) - t0))
ktap_check "a panicking guest fails scripts/run (exit $rc)" [ "$rc" = 125 ]
ktap_check "... well within the timeout (${secs} s of 120)" [ "$secs" -lt 120 ]
ktap_check "... saying it panicked" grep -q 'the guest kernel panicked' "$work/panic.err"
ktap_check "... with the last console lines" grep -q -e '---- last 30 lines of .*console.log' "$work/panic.err"
ktap_check "... and the boot trace still came home" [ -s "$work/panic/boot.dat" ]

# --- hang: the guest script never ends; --timeout stops it
echo 'sleep 100000' >"$work/hang.sh"
t0=$(date +%s)
"$ROOT/scripts/run" --accel "$accel" --out "$work/hang" --guest-script "$work/hang.sh" \
	--timeout 30 --no-report >/dev/null 2>"$work/hang.err"
rc=$?
secs=$(($(date +%s) - t0))
ktap_check "a hanging guest fails scripts/run with 124 (exit $rc)" [ "$rc" = 124 ]
ktap_check "... within the timeout (${secs} s for --timeout 30 plus the build check)" [ "$secs" -lt 60 ]
ktap_check "... saying it did not finish" grep -q 'did not finish within --timeout 30' "$work/hang.err"
ktap_check "... with the last console lines" grep -q -e '---- last 30 lines of .*console.log' "$work/hang.err"
ktap_check "... and the boot trace still came home" [ -s "$work/hang/boot.dat" ]
[ "$KTAP_FAIL" = 0 ] || tail -n 40 "$work"/*.err | sed 's/^/# /'
ktap_finish
