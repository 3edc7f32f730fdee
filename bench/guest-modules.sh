# shellcheck shell=sh
# initexit bench: module load/unload timings, run in the guest by
# scripts/bench through scripts/run --guest-script. POSIX sh (busybox ash).
#
# scripts/bench prepends the settings (BENCH_ROUNDS, BENCH_ITERS,
# BENCH_CAPTURE_LOOPS) and the modloop helper (bench/tools/modloop.c,
# static, gzip + base64) to this file; see scripts/bench.
#
# Order:
#   1. all trace events off (trace-cmd record enabled initcall, module,
#      initexit for the whole script; we want them only where measured)
#   2. BENCH_ROUNDS rounds; in each, every mode of this kernel, every
#      bench module, BENCH_ITERS load+unload cycles timed by modloop:
#        stock:   mode "absent"   (no initexit events exist)
#        patched: mode "disabled" (initexit events compiled in, off)
#                 mode "enabled"  (events/initexit/enable = 1)
#                 mode "disabled-debug" (as "disabled", initcall_debug on)
#      initcall_debug (on the command line scripts/run boots with) is off
#      in every mode but *-debug: it prints two dmesg lines, each with a
#      %pS lookup, per init call, i.e. per pair, and would be what we time.
#      Rounds interleave the modes so drift hits all of them alike.
#   3. patched only, BENCH_CAPTURE_LOOPS > 0: initcall, module and initexit
#      events on, bench_pairs_256 loaded and unloaded that many times: the
#      >= 1M event scenario.dat for the analysis bench.
# Output: $INITEXIT_OUT/modules.txt, "MODE MODULE ROUND ITER LOAD_NS UNLOAD_NS".
set -eu

T=$INITEXIT_TRACING
RAW=$INITEXIT_OUT/modules.txt

events_off() {
	echo 0 >"$T/events/enable"
}

DEBUG_PARAM=/sys/module/kernel/parameters/initcall_debug

set_mode() {
	events_off
	case "$1" in
	enabled) echo 1 >"$T/events/initexit/enable" ;;
	esac
	case "$1" in
	*-debug) echo Y >"$DEBUG_PARAM" ;;
	*) echo N >"$DEBUG_PARAM" ;;
	esac
}

modes() {
	if [ "$INITEXIT_EVENTS" = 1 ]; then
		echo disabled enabled disabled-debug
	else
		echo absent
	fi
}

time_modules() {
	round=1
	while [ "$round" -le "$BENCH_ROUNDS" ]; do
		for mode in $(modes); do
			set_mode "$mode"
			for ko in "$USER_MODULES"/bench_*.ko; do
				name=$(basename "$ko" .ko)
				# modloop's own status, not a pipeline's (ash has no pipefail)
				if ! "$BENCH_MODLOOP" "$ko" "$name" "$BENCH_ITERS" >/tmp/modloop.out; then
					cat /tmp/modloop.out >&2
					return 1
				fi
				sed "s/^/$mode $name $round /" /tmp/modloop.out >>"$RAW"
			done
		done
		echo "bench: round $round of $BENCH_ROUNDS done" >&2
		round=$((round + 1))
	done
	events_off
}

capture() {
	ko=$USER_MODULES/bench_pairs_256.ko
	[ "$BENCH_CAPTURE_LOOPS" -gt 0 ] && [ -f "$ko" ] || return 0
	echo N >"$DEBUG_PARAM"
	echo 1 >"$T/events/initcall/enable"
	echo 1 >"$T/events/module/enable"
	echo 1 >"$T/events/initexit/enable"
	echo "bench: capture: bench_pairs_256 x $BENCH_CAPTURE_LOOPS" >&2
	"$BENCH_MODLOOP" "$ko" bench_pairs_256 "$BENCH_CAPTURE_LOOPS" >"$INITEXIT_OUT/capture.txt"
	events_off
	echo Y >"$DEBUG_PARAM"
}

: >"$RAW"
time_modules
capture
grep -c . "$RAW" >&2
