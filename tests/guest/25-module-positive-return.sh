#!/bin/sh
# A positive return: initexit_positive's middle pair (p1) returns 7.  As
# for a module_init() that does, the loader must warn ("suspiciously
# returned 7") and count it as a success: the load succeeds, the next
# pair's init (p2) runs, debugfs shows all three as ran, and rmmod runs the
# three exits in reverse.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 5

mark_log
modload "$MODDIR/initexit_positive.ko"
if [ "$LOAD_ERR" = 0 ] && loaded initexit_positive; then ktap_ok "positive: load succeeds"
else ktap_fail "positive: load succeeds" "errno $LOAD_ERR"; fi
printf 'init p0\ninit p1\ninit p2\n' >"$WORK/expect"
module_log initexit_positive >"$WORK/actual"
ktap_same "positive: the init after the positive return runs" "$WORK/expect" "$WORK/actual"
if dmesg | sed -n "/initexit-mark $$-$KTAP_MARK\$/,\$p" | grep -q "initexit_positive.*p1_init suspiciously returned 7"; then
	ktap_ok "positive: the loader warns about the positive return"
else
	ktap_fail "positive: the loader warns about the positive return" \
		"$(dmesg | sed -n "/initexit-mark $$-$KTAP_MARK\$/,\$p" | grep -i suspicious || echo 'no warning in dmesg')"
fi
if [ -r /sys/kernel/debug/initexit/modules ]; then
	grep '^initexit_positive ' /sys/kernel/debug/initexit/modules | awk '{ print $5, $4 }' >"$WORK/actual"
	printf 'p0_init ran\np1_init ran\np2_init ran\n' >"$WORK/expect"
	ktap_same "positive: debugfs shows every init as ran" "$WORK/expect" "$WORK/actual"
else
	ktap_skip "positive: debugfs shows every init as ran" "CONFIG_DEBUG_FS not set or debugfs not mounted"
fi
mark_log
modunload initexit_positive
printf 'exit p2\nexit p1\nexit p0\n' >"$WORK/expect"
module_log initexit_positive >"$WORK/actual"
if [ "$UNLOAD_ERR" = 0 ] && ! loaded initexit_positive && diff -q "$WORK/expect" "$WORK/actual" >/dev/null; then
	ktap_ok "positive: rmmod runs the three exits in reverse"
else
	ktap_fail "positive: rmmod runs the three exits in reverse" "errno $UNLOAD_ERR, log $(tr '\n' '|' <"$WORK/actual")"
fi
ktap_finish
