#!/bin/sh
# Load under concurrency (issue 17, section 3), in the guest, KTAP on
# stdout. Run by the debug kernel's boot (tests/debug/guest.sh) under
# trace-cmd record, as every guest script is; by hand:
#   scripts/run --guest-script tests/stress/guest-stress.sh
#
# At the same time:
#   loader A   STRESS_CYCLES (default 2000) times: load initexit_order
#              (17 pairs in two files), which must succeed, and unload it,
#              which must succeed;
#   loader B   until A is done: load initexit_fail fail_at=4, which must
#              fail with errno 204 (its fifth init fails, the four before
#              it unwind) and leave no module behind;
#   reader     until A is done: read /sys/kernel/debug/initexit/modules and
#              /proc/modules, which must read without an error.
# A is bounded in time too (STRESS_SECONDS, default 1500): fewer cycles
# than asked by then fail the test, saying how many ran.
# Then: no module left, no slab cache grew by a quarter of A's cycles or
# more (a leak of one object in one load out of four; the counts are
# exact with slub_debug=F, see tests/evidence/fault-sweep.txt), and
# kmemleak, when the kernel has it, reports nothing after a scan.
# The capture's order checks are the analysis's, on the host.
set -eu
# shellcheck source=../guest/ktap.inc
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"

CYCLES=${STRESS_CYCLES:-2000}
LIMIT=${STRESS_SECONDS:-1500}
DBG=/sys/kernel/debug
A=initexit_order B=initexit_fail
ktap_plan 7

slabs() { # slabs FILE: every cache's object count, after a shrink
	for s in /sys/kernel/slab/*/shrink; do echo 1 >"$s"; done 2>/dev/null || true
	awk 'NR > 2 { print $1, $2 }' /proc/slabinfo 2>/dev/null | sort >"$1"
}
kmemleak_scan() { # -> what kmemleak reports after a scan (nothing without it)
	[ -w "$DBG/kmemleak" ] || return 0
	echo scan >"$DBG/kmemleak"
	cat "$DBG/kmemleak"
}

# The state before: kmemleak's earlier reports set aside (they are the
# earlier tests'), the slab counts after a warm-up cycle of each module.
if [ -w "$DBG/kmemleak" ]; then
	echo scan >"$DBG/kmemleak"
	echo clear >"$DBG/kmemleak"
fi
modload "$MODDIR/$A.ko"
modunload "$A"
modload "$MODDIR/$B.ko" fail_at=4
slabs "$WORK/before"
# The test modules print a line per init and exit: 50 lines a cycle on a
# serial console would be most of the run's time. The kernel log keeps
# them; the console keeps warnings and worse.
printk_level=$(cut -f1 /proc/sys/kernel/printk)
echo 5 >/proc/sys/kernel/printk

# --- the three of them at once
(
	i=0 bad=0 t0=$(cut -d. -f1 /proc/uptime)
	while [ "$i" -lt "$CYCLES" ]; do
		[ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt "$LIMIT" ] || break
		i=$((i + 1))
		l=$("$TOOLS/modload" "$MODDIR/$A.ko" 2>&1) || true
		u=$("$TOOLS/modunload" "$A" 2>&1) || true
		case "$l$u" in
		*": ok"*": ok") ;;
		*) bad=$((bad + 1)); [ "$bad" -gt 5 ] || echo "cycle $i: $l / $u" >>"$WORK/a.bad" ;;
		esac
	done
	echo "$i $bad $(($(cut -d. -f1 /proc/uptime) - t0))" >"$WORK/a.done"
) &
pa=$!
(
	i=0 bad=0
	while [ ! -f "$WORK/a.done" ]; do
		i=$((i + 1))
		l=$("$TOOLS/modload" "$MODDIR/$B.ko" fail_at=4 2>&1) || true
		case "$l" in
		*": error 204 "*)
			if grep -q "^$B " /proc/modules; then
				bad=$((bad + 1))
				echo "load $i: $B is still there" >>"$WORK/b.bad"
				"$TOOLS/modunload" "$B" force >/dev/null 2>&1 || true
			fi ;;
		*) bad=$((bad + 1)); [ "$bad" -gt 5 ] || echo "load $i: $l" >>"$WORK/b.bad" ;;
		esac
	done
	echo "$i $bad" >"$WORK/b.done"
) &
pb=$!
(
	i=0 bad=0
	while [ ! -f "$WORK/a.done" ]; do
		i=$((i + 1))
		if [ -r "$DBG/initexit/modules" ]; then
			cat "$DBG/initexit/modules" >/dev/null 2>>"$WORK/r.bad" || bad=$((bad + 1))
		fi
		cat /proc/modules >/dev/null 2>>"$WORK/r.bad" || bad=$((bad + 1))
	done
	echo "$i $bad" >"$WORK/r.done"
) &
pr=$!
wait "$pa" "$pb" "$pr" || true
echo "$printk_level" >/proc/sys/kernel/printk

read -r a_n a_bad a_s <"$WORK/a.done"
read -r b_n b_bad <"$WORK/b.done"
read -r r_n r_bad <"$WORK/r.done"
ktap_diag "loader A: $a_n cycles of $A in $a_s s; loader B: $b_n failing loads of $B; reader: $r_n reads"

if [ "$a_n" -ge "$CYCLES" ]; then
	ktap_ok "stress: $CYCLES load/unload cycles of $A within $LIMIT s ($a_s s)"
else
	ktap_fail "stress: $CYCLES load/unload cycles of $A within $LIMIT s" "only $a_n cycles in $a_s s"
fi
if [ "$a_bad" = 0 ]; then
	ktap_ok "stress: every load and unload of $A succeeded ($a_n cycles)"
else
	ktap_fail "stress: every load and unload of $A succeeded" "$a_bad of $a_n cycles failed; the first: $(cat "$WORK/a.bad")"
fi
if [ "$b_bad" = 0 ] && [ "$b_n" -gt 0 ]; then
	ktap_ok "stress: every load of $B fail_at=4 failed with errno 204 and left no module ($b_n loads)"
else
	ktap_fail "stress: every load of $B fail_at=4 failed with errno 204 and left no module" "$b_bad of $b_n loads; the first: $(cat "$WORK/b.bad" 2>/dev/null)"
fi
if [ "$r_bad" = 0 ] && [ "$r_n" -gt 0 ]; then
	ktap_ok "stress: the listings read without an error meanwhile ($r_n reads)"
else
	ktap_fail "stress: the listings read without an error meanwhile" "$r_bad of $r_n reads failed: $(head -n 3 "$WORK/r.bad")"
fi
if grep -q "^\($A\|$B\) " /proc/modules; then
	ktap_fail "stress: no test module left loaded" "$(grep "^\($A\|$B\) " /proc/modules)"
else
	ktap_ok "stress: no test module left loaded"
fi

# Slab counts: a leak of one object per load shows as thousands.
slabs "$WORK/after"
awk -v lim=$((CYCLES / 4)) 'NR == FNR { a[$1] = $2; next }
	($1 in a) && $2 - a[$1] >= lim { print "slab " $1 ": " a[$1] " -> " $2 " objects (+" $2 - a[$1] ")" }' \
	"$WORK/before" "$WORK/after" >"$WORK/grew"
if [ -s "$WORK/grew" ]; then
	ktap_fail "stress: no slab cache grew by $((CYCLES / 4)) objects or more" "$(cat "$WORK/grew")"
else
	ktap_ok "stress: no slab cache grew by $((CYCLES / 4)) objects or more"
fi

if [ -w "$DBG/kmemleak" ]; then
	# kmemleak reports only objects older than 5 s.
	sleep 6
	kmemleak_scan >"$WORK/kl"
	if [ -s "$WORK/kl" ]; then
		ktap_fail "stress: kmemleak reports nothing after a scan" "$(head -n 40 "$WORK/kl")"
		echo clear >"$DBG/kmemleak"
	else
		ktap_ok "stress: kmemleak reports nothing after a scan"
	fi
else
	ktap_skip "stress: kmemleak reports nothing after a scan" "no $DBG/kmemleak: CONFIG_DEBUG_KMEMLEAK is not set"
fi
ktap_finish
