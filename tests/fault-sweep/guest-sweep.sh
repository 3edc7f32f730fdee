#!/bin/sh
# Run by scripts/test on the debug kernel (tests/debug/guest.sh, under
# KASAN, lockdep and kmemleak). In a boot of its own:
#   scripts/run --debug --guest-script tests/fault-sweep/guest-sweep.sh --timeout 3600
# or on the test kernel:
#   scripts/run --guest-script tests/fault-sweep/guest-sweep.sh --timeout 1800 \
#       --append "slub_debug=F slab_nomerge"
# (the slab counts are exact only with slub_debug=F). KTAP on stdout and in
# ktap/fault-sweep.tap, the status in ktap/fault-sweep.exit; each module's
# own sweep in fault-sweep/MOD.tap (the host's OUT/guest/fault-sweep/).
#
# Fault-injection sweep (issue 17): fault-sweep (tests/guest/tools/) makes
# every fault-injectable allocation of a load fail in turn, N = 1, 2, ...,
# and checks after each failed load that the module is gone, that the
# observable state and every slab cache's object count are as before,
# and that a load without faults then works and unloads cleanly.
#
# Swept: every project test module with pairs that loads without faults
# and unloads: test_initexit_mod_order (17 pairs, two files), test_initexit_mod_fail without
# fail_at (8 pairs, a kmalloc each), test_initexit_mod_state without fail (2
# pairs), test_initexit_mod_exitonly (exit-only pairs and module_exit():
# its load allocates nothing of its own, so one fault-free load and
# unload), the four-step pair (initexit_sweep_pairs) beside the same
# steps in one module_init() with a goto ladder (initexit_sweep_single),
# fs/fuse (the series converts it: eight pairs) and fs/btrfs (21 pairs,
# one fault per step; the modules it needs are loaded first).  Only the allocations
# made from a module's own code are made to fail (fault-sweep's default).
# Not swept: test_initexit_mod_perm and test_initexit_mod_lastperm (permanent: no unload
# without force, and a forced unload runs no exit for the exit-less
# init), test_initexit_mod_async (its second init always fails),
# test_initexit_mod_positive (its inits allocate nothing, and each load
# warns with a stack dump by design), test_initexit_mod_undoable
# and the malformed ones (refused before any init), the legacy modules
# (no pairs; initexit_sweep_single stands for them).
#
# The negative control: initexit_sweep_single ladder_bug=1 has a ladder
# that forgets a kfree() when proc_create() fails; the sweep must fail on
# it and name the leak. Two more: a report of the kernel planted (a
# "WARNING:" line in /dev/kmsg) in the reload after a failed load and in
# the probe loads of --steps; the sweep must fail on each. Each sweep's
# KTAP output is kept in $INITEXIT_OUT/fault-sweep/ (the host's
# OUT/guest/fault-sweep/), beside its records (MOD.jsonl: fault-sweep
# --records), from which scripts/lib/sweep_judge.py judges it again on
# the host.
set -eu
if [ -z "${INITEXIT_SWEEP_RUN:-}" ]; then
	mkdir -p "$INITEXIT_OUT/ktap"
	rc=0
	INITEXIT_SWEEP_RUN=1 sh "$0" >"$INITEXIT_OUT/ktap/fault-sweep.tap" 2>/dev/console || rc=$?
	cat "$INITEXIT_OUT/ktap/fault-sweep.tap"
	echo "$rc" >"$INITEXIT_OUT/ktap/fault-sweep.exit"
	exit "$rc"
fi
# shellcheck source=../guest/ktap.inc
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"

MODULES="test_initexit_mod_order test_initexit_mod_fail test_initexit_mod_state test_initexit_mod_exitonly initexit_sweep_pairs initexit_sweep_single initexit_sweep_two fuse btrfs"
# initexit_sweep_only=MOD... on the kernel command line (the kernel hands
# it to init's environment: scripts/mutation-test's Append: line) sweeps
# only those modules, without the control and the usage case.
# initexit_sweep_control=1 keeps the controls but the ladder's and the
# usage case with initexit_sweep_only= (scripts/test's sweep boot: the
# two-pair twin is its planted leak, swept at every allocation as the
# pair modules are; the ladder's sweep, six minutes under TCG, is the
# deep row's). initexit_sweep_control=2 keeps every control and adds the
# inconclusive one (below: one more sweep of the planted leak, about 3
# min; scripts/test's deep row, sweeps-all).
ONLY=${initexit_sweep_only:-}
CONTROL=${initexit_sweep_control:-0}
EXTRA=5 LADDER=1
if [ -n "$ONLY" ]; then
	MODULES=$(echo "$ONLY" | tr ',' ' ')
	[ "$CONTROL" != 0 ] || EXTRA=0
fi
[ "$CONTROL" != 1 ] || EXTRA=4 LADDER=0
[ "$CONTROL" != 2 ] || EXTRA=6
ktap_plan $(($(echo "$MODULES" | wc -w) + EXTRA))

SAVE=${INITEXIT_OUT:-$WORK}/fault-sweep
mkdir -p "$SAVE"
if [ ! -w /proc/thread-self/fail-nth ]; then
	for m in $MODULES; do ktap_skip "fault-sweep $m" "no /proc/thread-self/fail-nth: CONFIG_FAULT_INJECTION is not set"; done
	if [ "$EXTRA" -ge 4 ]; then
		[ "$LADDER" = 0 ] || ktap_skip "fault-sweep finds the planted ladder leak" "CONFIG_FAULT_INJECTION is not set"
		ktap_skip "fault-sweep finds initexit_sweep_two leak_bug=1's leak at the second kmalloc() of its second init" "CONFIG_FAULT_INJECTION is not set"
		ktap_skip "fault-sweep fails on a kernel report in the reload after a failed load (planted)" "CONFIG_FAULT_INJECTION is not set"
		ktap_skip "fault-sweep fails on a kernel report in a probe load (--steps) (planted)" "CONFIG_FAULT_INJECTION is not set"
		ktap_skip "fault-sweep --help and usage" "CONFIG_FAULT_INJECTION is not set"
	fi
	[ "$EXTRA" != 6 ] || ktap_skip "fault-sweep without exact counts: the planted leak is inconclusive, not ok, not a leak" "CONFIG_FAULT_INJECTION is not set"
	ktap_finish
	exit
fi

# btrfs is swept one fault per step (fault-sweep --steps), not per
# allocation: its init makes about a thousand (each slab cache's sysfs
# attributes), over an hour under TCG; so are the modules of
# initexit_sweep_steps=MOD,... (kernel command line: the debug kernel's
# fuse, whose every allocation would take half an hour there, a few
# minutes a step).  initexit_sweep_all_of=FUNC,...
# (kernel command line) sweeps every allocation of those steps too: with
# btrfs_init_compress, whose shrinker_alloc() failure leaked the bio set
# in stock 6.12 (the series' btrfs fix; 15 min: each fault in a slab
# cache's sysfs part meets the known stock leak and is looked at again).
sweep() { # sweep MOD PARAMS TAPNAME -> $SAVE/TAPNAME.tap, SWEEP_RC, SWEEP_SECS
	SWEEP_RC=0 mod=$1 par=$2 tap=$3
	read -r t0 _ </proc/uptime
	shift 3
	case ",btrfs,${initexit_sweep_steps:-}," in
	*",$mod,"*)
		set -- --steps
		for f in $(echo "${initexit_sweep_all_of:-}" | tr ',' ' '); do set -- "$@" --all-of "$f"; done
		;;
	esac
	# Each step on the console as it comes: a sweep takes minutes.
	"$TOOLS/fault-sweep" --progress --records "$SAVE/$tap.jsonl" "$@" "$MODDIR/$mod.ko" ${par:+"$par"} >"$SAVE/$tap.tap" 2>/dev/console || SWEEP_RC=$?
	read -r t1 _ </proc/uptime
	SWEEP_SECS=$((${t1%%.*} - ${t0%%.*}))
}
summary() { sed -n 's/^# fault-sweep .*: \(sites tried.*\)/\1/p' "$SAVE/$1.tap"; }

for m in $MODULES; do
	# What the module needs (btrfs: crypto, zstd, raid6_pq, ...) is loaded
	# before, and so part of the state the sweep compares with.
	load_deps_of "$MODDIR/$m.ko"
	if [ -n "$DEPS_ERR" ]; then
		ktap_fail "fault-sweep $m: no leak, no mismatch" "the modules it needs do not load:$DEPS_ERR"
		continue
	fi
	sweep "$m" "" "$m"
	if [ "$SWEEP_RC" = 0 ]; then
		ktap_ok "fault-sweep $m: no leak, no mismatch ($(summary "$m"); $SWEEP_SECS s)"
	else
		ktap_fail "fault-sweep $m: no leak, no mismatch (exit $SWEEP_RC$( [ "$SWEEP_RC" != 3 ] || echo ': inconclusive, the slab counts were not exact'), $SWEEP_SECS s)" "$(grep -A12 '^not ok' "$SAVE/$m.tap" | head -n 40; summary "$m")"
	fi
done

if [ "$EXTRA" = 0 ]; then
	ktap_finish
	exit
fi

if [ "$LADDER" = 1 ]; then
	sweep initexit_sweep_single ladder_bug=1 initexit_sweep_single-ladder_bug
	t=$SAVE/initexit_sweep_single-ladder_bug.tap
	if [ "$SWEEP_RC" = 1 ] && grep -q '^not ok .*proc.*LEAK' "$t" && grep -q '^# slab kmalloc-4k: .*(+1)' "$t"; then
		ktap_ok "fault-sweep finds the planted ladder leak (initexit_sweep_single ladder_bug=1: $(grep -c '^# slab kmalloc-4k: .*: a leak' "$t") step(s) leak kmalloc-4k)"
	else
		ktap_fail "fault-sweep finds the planted ladder leak (initexit_sweep_single ladder_bug=1)" "exit $SWEEP_RC; $(grep '^not ok\|__proc_create\|^# slab kmalloc-4k\|sites tried' "$t" | head -n 20)"
	fi
fi

# The user's case (issue 33): two pairs, a slab cache then two kmalloc()s
# in one init, whose twin leaks the first (kmalloc-256) when the second
# fails. The sweep must find it at the second kmalloc(): the not-ok line's
# site is two_bufs_init at its larger offset of the two that the sweeps of
# the module and of its twin faulted (kmem_cache_create()'s count of
# allocations moves from load to load, so a sweep may skip one of them:
# the twin's in CI run t2 never faulted the first). The leak is named by
# the alloc tags (sysctl.vm.mem_profiling=1): two_bufs_init's own line,
# still allocated when the failed load's module was freed. The slab count
# of kmalloc-256 is not asked for: other work in the guest moves it too
# (CI's run of 2026-12-07 saw +1, then +3 and +0 in the repeats, and the
# sweep rightly did not call that a leak). A step may also be reported as
# LEAK at the first kmalloc(): its first load faulted there, and a repeat
# at the same N, the count having moved, faulted the second one and
# leaked (a fresh clone of a818299 under load saw N=33 at +0x30 and N=34
# at +0x5e): the leak is real, its site is the first load's, which is issue
# 33's point 3 (aim each repeat by its stack). Such a step is named in
# the ok line, not failed.
sweep initexit_sweep_two leak_bug=1 initexit_sweep_two-leak_bug
t=$SAVE/initexit_sweep_two-leak_bug.tap
offs() { sed -n 's/^\(not \)\{0,1\}ok [0-9]* - N=[0-9]*[^:]*: fault in two_bufs_init+\(0x[0-9a-f]*\) .*/\2/p' "$@" 2>/dev/null; }
leak_offs=$(sed -n 's/^not ok [0-9]* - N=[0-9]*[^:]*: fault in two_bufs_init+\(0x[0-9a-f]*\) .*LEAK.*/\1/p' "$t" | sort -u)
lo='' hi=''
for o in $(offs "$t" "$SAVE/initexit_sweep_two.tap"); do
	if [ -z "$lo" ] || [ $((o)) -lt $((lo)) ]; then lo=$o; fi
	if [ -z "$hi" ] || [ $((o)) -gt $((hi)) ]; then hi=$o; fi
done
tag=$(sed -n 's/^# alloc tag: \([^ ]*\) (func:two_bufs_init): [0-9]* bytes .*/\1/p' "$t" | sort -u)
leak_off='' others=''
for o in $leak_offs; do
	if [ -n "$hi" ] && [ $((o)) = $((hi)) ]; then leak_off=$o; else others="$others +$o"; fi
done
if [ "$(cat /proc/sys/vm/mem_profiling 2>/dev/null)" != 1 ]; then
	ktap_fail "fault-sweep finds initexit_sweep_two leak_bug=1's leak at the second kmalloc() of its second init" \
		"alloc tags are off: the boot line needs sysctl.vm.mem_profiling=1 (tests/plan.tsv's sweep rows have it)"
elif [ "$SWEEP_RC" = 1 ] && [ -n "$leak_off" ] && [ -n "$lo" ] && [ $((leak_off)) = $((hi)) ] && [ $((hi)) -gt $((lo)) ] &&
	[ -n "$tag" ] && [ "$(echo "$tag" | wc -l)" = 1 ]; then
	ktap_ok "fault-sweep finds initexit_sweep_two leak_bug=1's leak at the second kmalloc() of its second init (two_bufs_init+$leak_off, the first at +$lo; allocated at $tag${others:+; also reported at$others, a repeat that faulted elsewhere})"
else
	ktap_fail "fault-sweep finds initexit_sweep_two leak_bug=1's leak at the second kmalloc() of its second init" \
		"exit $SWEEP_RC, leak at '$leak_off', two_bufs_init's sites from '$lo' to '$hi', alloc tag at '$tag'; $(grep '^not ok\|two_bufs_init\|kmalloc-256\|alloc tag\|sites tried' "$t" | head -n 20)"
fi

# The inconclusive control: the same planted leak judged as if the counts
# were not exact (no slub_debug=F; FAULT_SWEEP_EXACT=0 counts as before):
# what the caches moved is printed, not called a leak, no step passes as
# judged, and the exit status is 3, naming the boot parameters to add.
if [ "$EXTRA" = 6 ]; then
	export FAULT_SWEEP_EXACT=0
	sweep initexit_sweep_single ladder_bug=1 initexit_sweep_single-ladder_bug-inexact
	unset FAULT_SWEEP_EXACT
	t=$SAVE/initexit_sweep_single-ladder_bug-inexact.tap
	if [ "$SWEEP_RC" = 3 ] && ! grep -q '^not ok' "$t" && ! { grep '^ok [0-9]* - N=' "$t" | grep -q -v '# SKIP'; } &&
		grep -q 'slab counts judged .*# SKIP INCONCLUSIVE.*slub_debug=F slab_nomerge' "$t" &&
		grep -q '^# slab counts not exact, not judged: .*kmalloc-4k' "$t"; then
		ktap_ok "fault-sweep without exact counts: the planted leak is inconclusive, not ok, not a leak (exit 3)"
	else
		ktap_fail "fault-sweep without exact counts: the planted leak is inconclusive, not ok, not a leak" "exit $SWEEP_RC; $(grep '^not ok\|INCONCLUSIVE\|not judged\|sites tried' "$t" | head -n 20)"
	fi
fi

# The second control: a report of the kernel in a load other than the
# faulted one. A modload in front of the real one (fault-sweep's
# INITEXIT_TOOLS) writes a planted "WARNING:" to /dev/kmsg before it
# loads: in "reload" mode in the first load without a fault after one
# with it (N=1's reload), in "probe" mode in every load with a fault but
# the first (with --steps those after N=1 are the probes). fault-sweep
# must fail on each and say where (the per-N check of the later loads;
# the probe loads' case).
planted() { # planted MODE DESC NOTOK DIAG ARGS...: the sweep of ARGS must exit 1 with a
	# "not ok" line matching NOTOK and a diagnostic line matching DIAG
	pmode=$1 pdesc=$2 notok=$3 pdiag=$4
	shift 4
	d=$WORK/plant-$pmode t=$SAVE/planted-$pmode.tap
	mkdir -p "$d"
	ln -sf "$TOOLS/modunload" "$d/modunload"
	cat >"$d/modload" <<EOF
#!/bin/sh
say() { echo "<4>WARNING: CPU: 0 PID: \$\$ at planted by guest-sweep.sh's $pmode control (no kernel fault)" >/dev/kmsg; }
case " \$* " in
*" --fail-nth "*)
	n=\$((\$(cat "$d/nth" 2>/dev/null || echo 0) + 1))
	echo "\$n" >"$d/nth"
	if [ $pmode = probe ] && [ "\$n" -gt 1 ]; then say; fi ;;
*)
	if [ $pmode = reload ] && [ -e "$d/nth" ] && [ ! -e "$d/said" ]; then : >"$d/said"; say; fi ;;
esac
exec "$TOOLS/modload" "\$@"
EOF
	chmod +x "$d/modload"
	rc=0
	INITEXIT_TOOLS=$d "$TOOLS/fault-sweep" --progress --records "$SAVE/planted-$pmode.jsonl" "$@" >"$t" 2>/dev/console || rc=$?
	if [ "$rc" = 1 ] && grep -q "^not ok [0-9]* - $notok" "$t" &&
		grep -q "^# $pdiag.*WARNING: .*planted by guest-sweep.sh's $pmode control" "$t"; then
		ktap_ok "fault-sweep fails on a kernel report $pdesc (planted)"
	else
		ktap_fail "fault-sweep fails on a kernel report $pdesc (planted)" "exit $rc; $(grep '^not ok\|reported\|probe N=\|sites tried' "$t" | head -n 20)"
	fi
}
planted reload "in the reload after a failed load" 'N=1: .* MISMATCH' 'the kernel reported, in the reload, ' \
	--max 1 "$MODDIR/initexit_sweep_single.ko"
planted probe "in a probe load (--steps)" 'initexit_sweep_single: no kernel report in the probe loads' 'probe N=[0-9]*: ' \
	--steps --max 4 "$MODDIR/initexit_sweep_single.ko"

rc_help=0 rc_none=0 rc_opt=0
"$TOOLS/fault-sweep" --help >"$WORK/help" 2>&1 || rc_help=$?
"$TOOLS/fault-sweep" >/dev/null 2>&1 || rc_none=$?
"$TOOLS/fault-sweep" --bogus "$MODDIR/test_initexit_mod_order.ko" >/dev/null 2>&1 || rc_opt=$?
if [ "$rc_help" = 0 ] && grep -q '^Usage: fault-sweep' "$WORK/help" && [ "$rc_none" = 2 ] && [ "$rc_opt" = 2 ]; then
	ktap_ok "fault-sweep --help and usage (exit 0, 2, 2)"
else
	ktap_fail "fault-sweep --help and usage (exit 0, 2, 2)" "--help $rc_help, no argument $rc_none, unknown option $rc_opt"
fi

# One stack per fault site lands in the kernel log: hundreds with
# slub_debug=F, more than the ring buffer keeps. The sweeps have a boot of
# their own (scripts/run --guest-script), so no test reads the boot's
# lines from dmesg afterwards; the boot trace keeps them.
ktap_finish
