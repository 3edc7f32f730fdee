#!/bin/sh
# Guest script of scripts/check-configs for the unload-off variant
# (CONFIG_MODULE_UNLOAD=n): a failed load still unwinds, through pair exits
# and through module_exit(), which the loader keeps in init memory until the
# load ends; the undoable-init rule still refuses test_initexit_mod_undoable. KTAP on
# stdout and in ktap/unload-off.tap; exit 1 when a case failed.
set -eu
# Run as ktap-runner.sh runs tests/guest/: KTAP in ktap/unload-off.tap, the
# status in unload-off.exit (scripts/check-configs judges them).
if [ -z "${INITEXIT_CONFIG_TEST:-}" ]; then
	mkdir -p "$INITEXIT_OUT/ktap"
	rc=0
	INITEXIT_CONFIG_TEST=1 sh "$0" >"$INITEXIT_OUT/ktap/unload-off.tap" 2>&1 || rc=$?
	cat "$INITEXIT_OUT/ktap/unload-off.tap"
	echo "$rc" >"$INITEXIT_OUT/ktap/unload-off.exit"
	exit "$rc"
fi
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"
ktap_plan 5

# test_initexit_mod_fail: position 3 is module_init(f3_init)/module_exit(f3_exit).
mark_log
modload "$MODDIR/test_initexit_mod_fail.ko" fail_at=5
if [ "$LOAD_ERR" = 205 ]; then ktap_ok "unload off: failed load returns the init's error"; else ktap_fail "unload off: failed load returns the init's error" "errno $LOAD_ERR"; fi
printf '%s\n' "init f0" "init f1" "init f2" "init f3" "init f4" "init f5" \
	"exit f4" "exit f3" "exit f2" "exit f1" "exit f0" >"$WORK/expect"
module_log test_initexit_mod_fail >"$WORK/actual"
ktap_same "unload off: exits 4..0 unwind in reverse, module_exit() included" "$WORK/expect" "$WORK/actual"
if loaded test_initexit_mod_fail; then ktap_fail "unload off: module gone"; else ktap_ok "unload off: module gone"; fi
modload "$MODDIR/test_initexit_mod_fail.ko"
if [ "$LOAD_ERR" = 0 ] && loaded test_initexit_mod_fail; then ktap_ok "unload off: a good load succeeds"; else ktap_fail "unload off: a good load succeeds" "errno $LOAD_ERR"; fi
modload "$MODDIR/test_initexit_mod_undoable.ko"
if [ "$LOAD_ERR" = 8 ]; then ktap_ok "unload off: an init nothing undoes before another is refused"; else ktap_fail "unload off: an init nothing undoes before another is refused" "errno $LOAD_ERR"; fi
ktap_finish
