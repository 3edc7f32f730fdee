#!/bin/sh
# Load under concurrency (issue 17, section 3), in the guest, KTAP on
# stdout. scripts/test runs it in a boot of the debug kernel of its own
# (layer 4b: tests/debug/guest.sh with initexit_debug_parts=stress,debug-tools)
# under trace-cmd record, as every guest script is; by hand, on any kernel:
#   scripts/run --guest-script tests/stress/guest-stress.sh
#
# At the same time:
#   loader A   STRESS_CYCLES (default 2000) times: load test_initexit_mod_order
#              (17 pairs in two files), which must succeed, and unload it,
#              which must succeed;
#   loader B   until A is done: load test_initexit_mod_fail fail_at=4, which must
#              fail with errno 204 (its fifth init fails, the four before
#              it unwind) and leave no module behind;
#   reader     until A is done: read /sys/kernel/debug/initexit/modules and
#              /proc/modules, which must read without an error.
# A is bounded in time too (STRESS_SECONDS, default 2000): fewer cycles
# than asked by then fail the test, saying how many ran.
# Then: no module left, no slab cache grew by a quarter of A's cycles or
# more (a leak of one object in one load out of four; the counts are
# exact with slub_debug=F, see tests/evidence/fault-sweep.txt), and
# kmemleak, when the kernel has it, reports nothing after a scan.
# The capture's order checks are the analysis's, on the host.
set -eu
# shellcheck source=../guest/ktap.inc
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"

# initexit_stress_cycles= / initexit_stress_seconds= on the kernel command
# line (the kernel hands them to init's environment) set them per boot.
CYCLES=${STRESS_CYCLES:-${initexit_stress_cycles:-2000}}
LIMIT=${STRESS_SECONDS:-${initexit_stress_seconds:-2000}}
DBG=/sys/kernel/debug
A=test_initexit_mod_order B=test_initexit_mod_fail
ktap_plan 7

# slabs FILE: every cache's object count, after a shrink. The shrink
# empties the per-CPU slabs, whose objects all count as in use (not needed
# with slub_debug=F), and, under KASAN, the cache's objects in the
# quarantine, which are freed but still count as in use until it recycles
# them (kasan_cache_shrink(); needed with slub_debug=F too: without it the
# debug kernel's run showed kernfs_node_cache and kmalloc-16 "growing" by
# about one object a cycle, see tests/evidence/debug-kernel.txt).
slabs() {
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
trap 'echo "$printk_level" >/proc/sys/kernel/printk' EXIT

# uptime: whole seconds since boot in $up, without a fork (every fork
# costs the debug kernel's loaders their time).
uptime() { read -r up _ </proc/uptime; up=${up%%.*}; }

# --- the three of them at once
(
	uptime
	i=0 bad=0 t0=$up
	# Written however this loop ends: the other two stop on it.
	trap 'uptime; echo "$i $bad $((up - t0))" >"$WORK/a.done"' EXIT
	while [ "$i" -lt "$CYCLES" ]; do
		uptime
		[ $((up - t0)) -lt "$LIMIT" ] || break
		i=$((i + 1))
		# Progress on the console: the stress takes minutes.
		[ $((i % 250)) != 0 ] || echo "stress: $i of $CYCLES cycles, $((up - t0)) s" >/dev/console
		l=$("$TOOLS/modload" "$MODDIR/$A.ko" 2>&1) || true
		u=$("$TOOLS/modunload" "$A" 2>&1) || true
		case "$l$u" in
		*": ok"*": ok") ;;
		*) bad=$((bad + 1)); [ "$bad" -gt 5 ] || echo "cycle $i: $l / $u" >>"$WORK/a.bad" ;;
		esac
	done
) &
pa=$!
(
	i=0 bad=0
	while [ ! -f "$WORK/a.done" ] && kill -0 "$pa" 2>/dev/null; do
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
	# One cat for both (one fork a round: the loaders need the CPUs more).
	while [ ! -f "$WORK/a.done" ] && kill -0 "$pa" 2>/dev/null; do
		i=$((i + 1))
		cat "$DBG/initexit/modules" /proc/modules >/dev/null 2>>"$WORK/r.bad" || bad=$((bad + 1))
	done
	echo "$i $bad" >"$WORK/r.done"
) &
pr=$!
wait "$pa" "$pb" "$pr" || true
echo "$printk_level" >/proc/sys/kernel/printk

# A loop that died wrote nothing: its counts are then "none ran".
a_n=0 a_bad=1 a_s=0 b_n=0 b_bad=1 r_n=0 r_bad=1
[ ! -f "$WORK/a.done" ] || read -r a_n a_bad a_s <"$WORK/a.done"
[ ! -f "$WORK/b.done" ] || read -r b_n b_bad <"$WORK/b.done"
[ ! -f "$WORK/r.done" ] || read -r r_n r_bad <"$WORK/r.done"
ktap_diag "loader A: $a_n cycles of $A in $a_s s; loader B: $b_n failing loads of $B; reader: $r_n rounds of both listings"

if [ "$a_n" -ge "$CYCLES" ]; then
	ktap_ok "stress: $CYCLES load/unload cycles of $A within $LIMIT s ($a_s s)"
else
	ktap_fail "stress: $CYCLES load/unload cycles of $A within $LIMIT s" "only $a_n cycles in $a_s s"
fi
if [ "$a_bad" = 0 ]; then
	ktap_ok "stress: every load and unload of $A succeeded ($a_n cycles)"
else
	ktap_fail "stress: every load and unload of $A succeeded" "$a_bad of $a_n cycles failed; the first: $(cat "$WORK/a.bad" 2>/dev/null)"
fi
if [ "$b_bad" = 0 ] && [ "$b_n" -gt 0 ]; then
	ktap_ok "stress: every load of $B fail_at=4 failed with errno 204 and left no module ($b_n loads)"
else
	ktap_fail "stress: every load of $B fail_at=4 failed with errno 204 and left no module" "$b_bad of $b_n loads; the first: $(cat "$WORK/b.bad" 2>/dev/null)"
fi
if [ "$r_bad" = 0 ] && [ "$r_n" -gt 0 ]; then
	ktap_ok "stress: the listings read without an error meanwhile ($r_n rounds)"
else
	ktap_fail "stress: the listings read without an error meanwhile" "$r_bad of $r_n rounds failed: $(head -n 3 "$WORK/r.bad" 2>/dev/null)"
fi
if loaded "$A" || loaded "$B"; then
	ktap_fail "stress: no test module left loaded" "$(grep "^\($A\|$B\) " /proc/modules)"
else
	ktap_ok "stress: no test module left loaded"
fi

# Slab counts: a leak of one object in a quarter of either loader's loads
# shows as that many objects. The debug tools' own caches shadow the others.
lim=$(( (a_n < b_n ? a_n : b_n) / 4 ))
[ "$lim" -ge 1 ] || lim=1
slabs "$WORK/after"
awk -v lim="$lim" 'NR == FNR { a[$1] = $2; next }
	$1 ~ /^(kmemleak_object|kmemleak_scan_area|debug_objects_cache)$/ { next }
	# what follows processes (trace-cmd record grows its own mappings)
	$1 ~ /^(vm_area_struct|vma_lock|anon_vma|anon_vma_chain|page->ptl|mm_struct|task_struct)$/ { next }
	($1 in a) && $2 - a[$1] >= lim { print "slab " $1 ": " a[$1] " -> " $2 " objects (+" $2 - a[$1] ")" }' \
	"$WORK/before" "$WORK/after" >"$WORK/grew"
# The five largest changes either way, for the record.
awk 'NR == FNR { a[$1] = $2; next } ($1 in a) && $2 != a[$1] { d = $2 - a[$1]; print (d < 0 ? -d : d), $1, a[$1], $2 }' \
	"$WORK/before" "$WORK/after" | sort -rn | head -n 5 |
	while read -r _ c x y; do ktap_diag "slab $c: $x -> $y objects"; done
if [ -s "$WORK/grew" ]; then
	ktap_fail "stress: no slab cache grew by $lim objects or more" "$(cat "$WORK/grew")"
else
	ktap_ok "stress: no slab cache grew by $lim objects or more (a quarter of the fewer loads)"
fi

if [ -w "$DBG/kmemleak" ]; then
	# kmemleak reports only objects older than 5 s.
	sleep 6
	kmemleak_scan >"$WORK/kl" 2>&1 || echo "the kmemleak scan failed: kmemleak is off" >>"$WORK/kl"
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
