#!/bin/sh
# Regression tests for the defects of the 2003 patch (SPEC.md §2.5).  Each
# case names the bug and fails on the buggy behaviour.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 5

# 1. can_unload read pairs->init instead of pairs[i]: only the first entry
#    was looked at.  initexit_perm's first pair is complete, its second has
#    no exit: it must be permanent.
modload "$MODDIR/initexit_perm.ko"
if grep '^initexit_perm ' /proc/modules | grep -q permanent; then
	ktap_ok "seed bug can_unload(pairs->init): a later exit-less pair makes the module permanent"
else
	ktap_fail "seed bug can_unload(pairs->init): a later exit-less pair makes the module permanent" "$(cat /proc/modules)"
fi
modunload initexit_perm force

# 2. The unload loop counted an unsigned index down to >= 0 and never
#    ended (or ran exit[-1]).  rmmod must return success, the module must
#    be gone, and the exit of the pair at index 0 (b_min2) must run exactly
#    once.
modload "$MODDIR/test_initexit_mod_order.ko"
mark_log
( modunload test_initexit_mod_order; echo "$UNLOAD_ERR" >"$WORK/rc" ) &
pid=$!
i=0
while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
	ktap_fail "seed bug unsigned countdown: rmmod returns" "still running after 10 s"
else
	n=$(module_log test_initexit_mod_order | grep -c '^exit b_min2$' || true)
	rc=$(cat "$WORK/rc" 2>/dev/null || echo none)
	if [ "$rc" = 0 ] && [ "$n" = 1 ] && ! loaded test_initexit_mod_order; then
		ktap_ok "seed bug unsigned countdown: rmmod returns, module gone, index 0 exits once"
	else
		ktap_fail "seed bug unsigned countdown: rmmod returns, module gone, index 0 exits once" \
			"rc $rc, b_min2 exits: $n, $(grep '^test_initexit_mod_order ' /proc/modules || echo 'not loaded')"
	fi
fi

# 3. module_exit() had its own entry with a NULL init that the load loop
#    called.  A module with module_exit() only, plus an exit-only pair,
#    must load, be removable, and run both exits on rmmod, in reverse
#    priority: the pair at 5 (e0) before module_exit at 0.
mark_log
modload "$MODDIR/initexit_exitonly.ko"
le=$LOAD_ERR
modunload initexit_exitonly
printf 'exit e0\nexit legacy\n' >"$WORK/expect"
module_log initexit_exitonly >"$WORK/actual"
if [ "$le" = 0 ] && [ "$UNLOAD_ERR" = 0 ] && diff -q "$WORK/expect" "$WORK/actual" >/dev/null; then
	ktap_ok "seed bug NULL init of module_exit: exit-only module loads and unloads"
else
	ktap_fail "seed bug NULL init of module_exit: exit-only module loads and unloads" "load $le unload $UNLOAD_ERR log $(tr '\n' '|' <"$WORK/actual")"
fi

# 4. module_init and module_exit were separate entries, so an unwind did
#    not pair them.  test_initexit_mod_fail's module_init/module_exit is the pair at
#    position 3: when position 4 fails, its module_exit (f3) must run in the
#    unwind, before the exits of 2, 1, 0.
mark_log
modload "$MODDIR/test_initexit_mod_fail.ko" fail_at=4
module_log test_initexit_mod_fail | grep '^exit' >"$WORK/actual" || true
printf 'exit f3\nexit f2\nexit f1\nexit f0\n' >"$WORK/expect"
ktap_same "seed bug unpaired module_init/module_exit: unwind runs module_exit" "$WORK/expect" "$WORK/actual"

# 5. The O(n x levels) boot walk computed next priority as prio + 1, which
#    overflows at INT_MAX (undefined; wraps to INT_MIN and loops).  The
#    built-in test object has a pair at INT_MAX: it must have run exactly
#    once and the boot must have finished (we are here).
if ! dmesg | grep -q 'initexit-boot-test'; then
	ktap_skip "seed bug INT_MAX walk: built-in pair at INT_MAX runs once" "CONFIG_TEST_INITEXIT_BOOT not set"
else
	n=$(dmesg | grep -c 'initexit-boot-test: test_initexit_order init tio_max$' || true)
	if [ "$n" = 1 ]; then ktap_ok "seed bug INT_MAX walk: built-in pair at INT_MAX runs once"
	else ktap_fail "seed bug INT_MAX walk: built-in pair at INT_MAX runs once" "ran $n times"; fi
fi
ktap_finish
