#!/bin/sh
# Legacy modules load, run and unload as on a stock kernel:
# module_init/module_exit only; hand-written init_module()/cleanup_module();
# no init at all; late_initcall() + module_exit() (as btrfs does), which must
# stay ONE unloadable pair.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 4

legacy() { # NAME "EXPECTED LOG LINES" (separated by |)
	mark_log
	modload "$MODDIR/initexit_$1.ko"
	le=$LOAD_ERR
	perm=$(grep "^initexit_$1 " /proc/modules | grep -c permanent || true)
	modunload "initexit_$1"
	echo "$2" | tr '|' '\n' | sed '/^$/d' >"$WORK/expect"
	module_log "initexit_$1" >"$WORK/actual"
	if [ "$le" = 0 ] && [ "$perm" = 0 ] && [ "$UNLOAD_ERR" = 0 ] && ! loaded "initexit_$1" &&
		diff -q "$WORK/expect" "$WORK/actual" >/dev/null; then
		ktap_ok "legacy $1: load, run, unload"
	else
		ktap_fail "legacy $1: load, run, unload" \
			"load errno $le, permanent $perm, unload errno $UNLOAD_ERR, log: $(tr '\n' '|' <"$WORK/actual")"
	fi
}
legacy legacy_plain "init plain_init|exit plain_exit"
legacy legacy_hand "init init_module|exit cleanup_module"
legacy legacy_none ""
legacy legacy_late "init late_init|exit late_exit"
ktap_finish
