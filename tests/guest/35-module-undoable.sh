#!/bin/sh
# Nothing that cannot be undone is left behind by a failed load.
# initexit_undoable: module_init(setup) creates /proc/initexit_undoable and
# has no exit, and a later pair's init fails.  The loader must refuse the
# module before any init runs (ENOEXEC, 8), with one error naming both
# functions, and leave no /proc entry.  initexit_lastperm: the exit-less
# init is the last one, so it loads, is [permanent], and a forced removal
# runs the other exits in reverse.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 8

mark_log
modload "$MODDIR/initexit_undoable.ko"
if [ "$LOAD_ERR" = 8 ]; then ktap_ok "undoable: load refused with ENOEXEC"; else ktap_fail "undoable: load refused with ENOEXEC" "errno $LOAD_ERR"; fi
module_log initexit_undoable >"$WORK/actual"
: >"$WORK/expect"
ktap_same "undoable: no init ran" "$WORK/expect" "$WORK/actual"
if [ -e /proc/initexit_undoable ]; then
	ktap_fail "undoable: no /proc entry is left" "$(ls -l /proc/initexit_undoable 2>&1)"
else
	ktap_ok "undoable: no /proc entry is left"
fi
msg=$(dmesg | sed -n "/initexit-mark $$-$KTAP_MARK\$/,\$p" | grep -c 'initexit_undoable: setup() has no exit, but other_init() runs after it' || true)
if [ "$msg" = 1 ]; then ktap_ok "undoable: one error names both functions"; else ktap_fail "undoable: one error names both functions" "$(dmesg | tail -5)"; fi

mark_log
modload "$MODDIR/initexit_lastperm.ko"
if [ "$LOAD_ERR" = 0 ]; then ktap_ok "last exit-less init: load succeeds"; else ktap_fail "last exit-less init: load succeeds" "errno $LOAD_ERR"; fi
line=$(grep '^initexit_lastperm ' /proc/modules || true)
case "$line" in
*"[permanent]"*) ktap_ok "last exit-less init: [permanent]" ;;
*) ktap_fail "last exit-less init: [permanent]" "$line" ;;
esac
modunload initexit_lastperm
if [ "$UNLOAD_ERR" = 16 ] && loaded initexit_lastperm; then ktap_ok "last exit-less init: rmmod fails with EBUSY"; else ktap_fail "last exit-less init: rmmod fails with EBUSY" "errno $UNLOAD_ERR"; fi
modunload initexit_lastperm force
printf '%s\n' "init a" "init b" "init last_setup" "exit b" "exit a" >"$WORK/expect"
module_log initexit_lastperm >"$WORK/actual"
ktap_same "last exit-less init: forced removal runs the other exits in reverse" "$WORK/expect" "$WORK/actual"
ktap_finish
