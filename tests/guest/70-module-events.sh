#!/bin/sh
# Trace events of the module path: for a failed load at every position of
# the test_initexit_mod_fail sweep, and for a good load and its unload, the
# initexit:* events must be exactly the expected ones, in order, with the
# right fields (durations masked).  Uses its own tracefs instance, so the
# harness's trace-cmd recording around this script is not disturbed.
# Also saves every initexit event's format file to $INITEXIT_OUT/formats/
# for the host to compare with tracepoints/formats/ (the reference page).
set -eu
. "$(dirname "$0")/ktap.inc"
N=8
ktap_plan $((N + 4))
T=${INITEXIT_TRACING:-/sys/kernel/tracing}
if [ ! -d "$T/events/initexit" ]; then
	i=0
	while [ "$i" -lt $((N + 4)) ]; do ktap_skip "initexit events" "no initexit trace events in this kernel"; i=$((i + 1)); done
	ktap_finish
	exit 0
fi

mkdir -p "${INITEXIT_OUT:-/tmp}/formats"
for f in "$T"/events/initexit/*/format; do
	e=$(basename "$(dirname "$f")")
	cp "$f" "${INITEXIT_OUT:-/tmp}/formats/$e.format"
done
if [ "$(find "${INITEXIT_OUT:-/tmp}/formats" -name '*.format' | wc -l)" = 5 ]; then ktap_ok "five initexit events, formats saved"
else ktap_fail "five initexit events, formats saved" "$(ls "$T/events/initexit")"; fi

I=$T/instances/initexit-test-$$
mkdir "$I"
echo 1 >"$I/events/initexit/enable"
trap 'rmdir "$I" 2>/dev/null || true' EXIT

PRIO="-30 -20 -10 0 10 20 30 40"
# shellcheck disable=SC2086 # split the list on purpose
prio_of() { i=$1; set -- $PRIO; shift "$i"; echo "$1"; }
M='path=module origin=test_initexit_mod_fail'

events() { # the instance's initexit events since the last clear
	sed -n 's/.*\(initexit_[a-z_]*: .*\)$/\1/p' "$I/trace" | sed 's/duration_ns=[0-9]*/duration_ns=D/'
	: >"$I/trace"
}
expect_inits() { # up to K (inclusive); K fails when FAIL=1
	j=0
	while [ "$j" -le "$1" ]; do
		p=$(prio_of "$j") ret=0
		[ "$j" = "$1" ] && [ "$2" = 1 ] && ret=-$((200 + j))
		echo "initexit_init_start: $M idx=$j prio=$p func=f${j}_init has_exit=1"
		echo "initexit_init_finish: $M idx=$j prio=$p func=f${j}_init ret=$ret duration_ns=D"
		j=$((j + 1))
	done
}
expect_exits() { # from K-1 down to 0; REASON; failing K for unwind
	j=$(($1 - 1))
	while [ "$j" -ge 0 ]; do
		p=$(prio_of "$j")
		if [ "$2" = unwind ]; then
			echo "initexit_unwind: $M idx=$j prio=$p func=f${j}_exit failed_idx=$1 failed_prio=$(prio_of "$1") failed_func=f${1}_init error=-$((200 + $1))"
		fi
		echo "initexit_exit_start: $M idx=$j prio=$p func=f${j}_exit reason=$2"
		echo "initexit_exit_finish: $M idx=$j prio=$p func=f${j}_exit reason=$2 duration_ns=D"
		j=$((j - 1))
	done
}

: >"$I/trace"
k=0
while [ "$k" -lt "$N" ]; do
	modload "$MODDIR/test_initexit_mod_fail.ko" "fail_at=$k"
	{ expect_inits "$k" 1; expect_exits "$k" unwind; } >"$WORK/expect"
	events >"$WORK/actual"
	ktap_same "events: failed load at position $k: inits, unwinds in reverse" "$WORK/expect" "$WORK/actual"
	k=$((k + 1))
done

modload "$MODDIR/test_initexit_mod_fail.ko"
modunload test_initexit_mod_fail
{ expect_inits $((N - 1)) 0; expect_exits "$N" unload; } >"$WORK/expect"
events >"$WORK/actual"
ktap_same "events: good load then unload: exits in reverse, reason=unload" "$WORK/expect" "$WORK/actual"

# has_exit tells an init that nothing can undo: initexit_perm's second pair.
modload "$MODDIR/initexit_perm.ko"
modunload initexit_perm force
P='path=module origin=initexit_perm'
printf '%s\n' "initexit_init_start: $P idx=0 prio=-10 func=p0_init has_exit=1" \
	"initexit_init_start: $P idx=1 prio=10 func=p1_init has_exit=0" >"$WORK/expect"
events | grep '^initexit_init_start' >"$WORK/perm" || true
ktap_same "events: has_exit=0 for an init without exit, 1 otherwise" "$WORK/expect" "$WORK/perm"

# Names survive the load: after init, kallsyms forgets __init symbols, the
# events must still carry the string.
if grep -q 'func=f0_init' "$WORK/actual" && ! grep -q 'func=0x' "$WORK/actual"; then
	ktap_ok "events: function names are strings, not addresses"
else
	ktap_fail "events: function names are strings, not addresses"
fi
ktap_finish
