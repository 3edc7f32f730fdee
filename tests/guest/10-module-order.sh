#!/bin/sh
# Module order: initexit_order declares 18 pairs over two files (order_b.c
# then order_a.c in link order: see the Kbuild) in shuffled priority order,
# with negative, duplicate, zero, INT_MIN and INT_MAX priorities, plus
# module_init/exit.  Inits must run in ascending priority, ties in link
# order (file order, then declaration order, both chosen to differ from the
# names' alphabetical order), module_init first among priority 0; rmmod
# must run every exit in exact reverse.  After the load, the module's
# __init functions are gone from kallsyms (init text freed) while debugfs
# still names them (names recorded at build time).
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 6

# Expected, derived from the declarations in tests/kmod/initexit/order_*.c.
cat >"$WORK/expect-init" <<'TXT'
init b_min2
init a_min
init a_m100
init b_m5
init a_m5
init b_m1
init legacy
init b_z3
init a_z2
init a_z1
init b_3
init b_d4
init b_d3
init a_d1
init a_d2
init a_100
init b_1000
init a_max
TXT
sed 's/^init /exit /' "$WORK/expect-init" | sed -n '1!G;h;$p' >"$WORK/expect-exit"

mark_log
modload "$MODDIR/initexit_order.ko"
if [ "$LOAD_ERR" = 0 ]; then ktap_ok "order: load succeeds"; else ktap_fail "order: load succeeds" "errno $LOAD_ERR"; fi
module_log initexit_order >"$WORK/actual-init"
ktap_same "order: inits ascending, ties in link order, module_init first at 0" "$WORK/expect-init" "$WORK/actual-init"

# debugfs shows the pairs with their state, in run order.
if [ -r /sys/kernel/debug/initexit/modules ]; then
	grep '^initexit_order ' /sys/kernel/debug/initexit/modules |
		awk '{ print $5, $4 }' >"$WORK/actual-debugfs"
	sed 's/^init \(.*\)$/\1_init ran/' "$WORK/expect-init" >"$WORK/expect-debugfs"
	ktap_same "order: debugfs initexit/modules lists 18 pairs, all ran" "$WORK/expect-debugfs" "$WORK/actual-debugfs"
else
	ktap_skip "order: debugfs initexit/modules" "CONFIG_DEBUG_FS not set or debugfs not mounted"
fi

# Init text is freed after the load: kallsyms no longer has the module's
# __init functions, but keeps its __exit ones (unload needs them).
if grep -Eq ' a_max_exit[[:space:]]+\[initexit_order\]' /proc/kallsyms; then
	if grep -Eq ' a_max_init[[:space:]]+\[initexit_order\]' /proc/kallsyms; then
		ktap_fail "order: init text freed (a_max_init gone from kallsyms, a_max_exit kept)" \
			"$(grep 'initexit_order' /proc/kallsyms | grep '_init' | head -5)"
	else
		ktap_ok "order: init text freed (a_max_init gone from kallsyms, a_max_exit kept)"
	fi
else
	ktap_fail "order: init text freed (a_max_init gone from kallsyms, a_max_exit kept)" \
		"a_max_exit not in /proc/kallsyms: is CONFIG_KALLSYMS set?"
fi

mark_log
modunload initexit_order
if [ "$UNLOAD_ERR" = 0 ] && ! loaded initexit_order; then ktap_ok "order: rmmod succeeds"; else ktap_fail "order: rmmod succeeds" "errno $UNLOAD_ERR"; fi
module_log initexit_order >"$WORK/actual-exit"
ktap_same "order: exits in exact reverse of inits" "$WORK/expect-exit" "$WORK/actual-exit"
ktap_finish
