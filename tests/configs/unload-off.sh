#!/bin/sh
# Guest script of scripts/check-configs for the unload-off variant
# (CONFIG_MODULE_UNLOAD=n): a failed load still fails with the init's error
# and leaves no module, a good load succeeds, and the undoable-init rule
# still refuses test_initexit_mod_undoable. That the failed load unwound
# through pair exits and through module_exit(), which the loader keeps in
# init memory until the load ends, is judged on the host from the
# scenario trace (tests/configs/test_unload_off.py). KTAP on stdout and in
# ktap/unload-off.tap; exit 1 when a case failed.
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
ktap_plan 4

# test_initexit_mod_fail: position 3 is module_init(f3_init)/module_exit(f3_exit).
modload "$MODDIR/test_initexit_mod_fail.ko" fail_at=5
if [ "$LOAD_ERR" = 205 ]; then ktap_ok "unload off: failed load returns the init's error"; else ktap_fail "unload off: failed load returns the init's error" "errno $LOAD_ERR"; fi
if loaded test_initexit_mod_fail; then ktap_fail "unload off: module gone"; else ktap_ok "unload off: module gone"; fi
modload "$MODDIR/test_initexit_mod_fail.ko"
if [ "$LOAD_ERR" = 0 ] && loaded test_initexit_mod_fail; then ktap_ok "unload off: a good load succeeds"; else ktap_fail "unload off: a good load succeeds" "errno $LOAD_ERR"; fi
modload "$MODDIR/test_initexit_mod_undoable.ko"
if [ "$LOAD_ERR" = 8 ]; then ktap_ok "unload off: an init nothing undoes before another is refused"; else ktap_fail "unload off: an init nothing undoes before another is refused" "errno $LOAD_ERR"; fi
ktap_finish
