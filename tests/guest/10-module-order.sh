#!/bin/sh
# Module order: initexit_order declares 17 pairs over two files (order_a.c
# then order_b.c in link order) in shuffled priority order, with negative,
# duplicate, zero, INT_MIN and INT_MAX priorities, plus module_init/exit.
# Inits must run in ascending priority, ties in link order (file order,
# then declaration order), module_init first among priority 0; rmmod must
# run every exit in exact reverse.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 5

# Expected, derived from the declarations in tests/kmod/initexit/order_*.c.
cat >"$WORK/expect-init" <<'TXT'
init a_min
init b_min2
init a_m100
init a_m5
init b_m5
init b_m1
init legacy
init a_z1
init a_z2
init b_z3
init b_3
init a_d1
init a_d2
init b_d3
init b_d4
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

mark_log
modunload initexit_order
if [ "$UNLOAD_ERR" = 0 ] && ! loaded initexit_order; then ktap_ok "order: rmmod succeeds"; else ktap_fail "order: rmmod succeeds" "errno $UNLOAD_ERR"; fi
module_log initexit_order >"$WORK/actual-exit"
ktap_same "order: exits in exact reverse of inits" "$WORK/expect-exit" "$WORK/actual-exit"
ktap_finish
