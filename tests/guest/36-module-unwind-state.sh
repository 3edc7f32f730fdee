#!/bin/sh
# Unwind state = unload state.  initexit_state's first exit logs the
# module's state and whether try_module_get(THIS_MODULE) succeeds.  It runs
# once as an unwind (fail=1: the second init fails) and once on rmmod; both
# must see the module GOING with new references refused, as delete_module()
# gives its exits.  initexit_async: async work a succeeded init scheduled
# finishes before the unwind runs that init's exit (and before the module's
# text is freed).
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 6

mark_log
modload "$MODDIR/initexit_state.ko" fail=1
if [ "$LOAD_ERR" = 11 ]; then ktap_ok "state: the failing load returns EAGAIN"; else ktap_fail "state: the failing load returns EAGAIN" "errno $LOAD_ERR"; fi
module_log initexit_state >"$WORK/unwind"
mark_log
modload "$MODDIR/initexit_state.ko"
modunload initexit_state
if [ "$LOAD_ERR" = 0 ] && [ "$UNLOAD_ERR" = 0 ]; then ktap_ok "state: load and rmmod succeed"; else ktap_fail "state: load and rmmod succeed" "load errno $LOAD_ERR, rmmod errno $UNLOAD_ERR"; fi
module_log initexit_state >"$WORK/unload"
echo "exit s0 state=going get=refused" >"$WORK/expect"
ktap_same "state: rmmod's exit sees GOING, try_module_get() refused" "$WORK/expect" "$WORK/unload"
ktap_same "state: the unwind's exit sees the same as rmmod's" "$WORK/unload" "$WORK/unwind"

mark_log
modload "$MODDIR/initexit_async.ko"
if [ "$LOAD_ERR" = 19 ]; then ktap_ok "async: the failing load returns ENODEV"; else ktap_fail "async: the failing load returns ENODEV" "errno $LOAD_ERR"; fi
printf '%s\n' "async done" "exit a" >"$WORK/expect"
module_log initexit_async >"$WORK/actual"
ktap_same "async: the async work finishes before the unwind's exit" "$WORK/expect" "$WORK/actual"
ktap_finish
