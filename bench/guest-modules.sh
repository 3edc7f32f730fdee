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
#      scripts/bench boots these kernels with initcall_debug=0 appended:
#      booted with initcall_debug, 6.12 registers its printing probes on
#      the initcall tracepoints once and they print two dmesg lines, each
#      with a %pS lookup over the module's symbols, for every module init
#      from then on (the sysfs parameter does not unregister them): that,
#      growing with the module's symbol count, would be what we time.
#      Rounds interleave the modes so drift hits all of them alike.
#      With BENCH_PROFILE=1 (the profile kernel: bench/profile_load.py's
#      stamps in load_module() print one line per load), each modloop
#      call's kernel lines go to $INITEXIT_OUT/profile.log after a mark,
#      "bench-profile: MODE MODULE ROUND" (analysis/phases.py reads them).
#   3. patched only, BENCH_CAPTURE_LOOPS > 0: initcall, module and initexit
#      events on, bench_pairs_256 loaded and unloaded that many times: the
#      >= 1M event scenario.dat for the analysis bench.
# Output: $INITEXIT_OUT/modules.txt, "MODE MODULE ROUND ITER LOAD_NS UNLOAD_NS".
set -eu

T=$INITEXIT_TRACING
RAW=$INITEXIT_OUT/modules.txt
PROFILE=$INITEXIT_OUT/profile.log

events_off() {
	echo 0 >"$T/events/enable"
}

set_mode() {
	events_off
	case "$1" in
	enabled) echo 1 >"$T/events/initexit/enable" ;;
	esac
}

modes() {
	if [ "$INITEXIT_EVENTS" = 1 ]; then
		echo disabled enabled
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
				if [ "${BENCH_PROFILE:-0}" = 1 ]; then
					dmesg -c >/dev/null
					echo "bench-profile: $mode $name $round" >>"$PROFILE"
				fi
				# modloop's own status, not a pipeline's (ash has no pipefail)
				if ! "$BENCH_MODLOOP" "$ko" "$name" "$BENCH_ITERS" >/tmp/modloop.out; then
					cat /tmp/modloop.out >&2
					return 1
				fi
				[ "${BENCH_PROFILE:-0}" != 1 ] || dmesg -c >>"$PROFILE"
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
	echo 1 >"$T/events/initcall/enable"
	echo 1 >"$T/events/module/enable"
	echo 1 >"$T/events/initexit/enable"
	echo "bench: capture: bench_pairs_256 x $BENCH_CAPTURE_LOOPS" >&2
	"$BENCH_MODLOOP" "$ko" bench_pairs_256 "$BENCH_CAPTURE_LOOPS" >"$INITEXIT_OUT/capture.txt"
	events_off
}

: >"$RAW"
time_modules
capture
grep -c . "$RAW" >&2
