#!/bin/sh
# Default guest scenario of scripts/run (used when no --guest-script is
# given): load and unload every module the run built, project modules
# ($INITEXIT_MODULES) first, then the user's ($USER_MODULES), in name order.
# init has trace-cmd recording around this script (scenario.dat).
#
# A module whose load fails is not an error of the scenario: some test
# modules fail on purpose (unwind tests). The analysis judges the trace; this
# script exits non-zero only when a loaded module cannot be removed.
set -eu

status=0

load_and_unload() {
	ko=$1
	name=$(basename "$ko" .ko)
	if insmod "$ko"; then
		echo "scenario: loaded $name: $(grep "^$name " /proc/modules || echo '(not listed)')"
		if rmmod "$name"; then
			echo "scenario: removed $name"
		elif rmmod -f "$name"; then
			echo "scenario: removed $name with force (permanent module)"
		else
			echo "scenario: cannot remove $name"
			status=1
		fi
	else
		echo "scenario: loading $name failed (exit $?)"
	fi
}

for dir in "$INITEXIT_MODULES" "$USER_MODULES"; do
	for ko in "$dir"/*.ko; do
		[ -f "$ko" ] || continue
		load_and_unload "$ko"
	done
done
# One failed load with its unwind, so the default capture shows one: the
# project's test_initexit_mod_fail with its pair at position 4 failing.  modload
# (tests/guest/tools) makes exactly one finit_module call; busybox insmod
# would retry the failed load with init_module and run the inits twice.
if [ -f "$INITEXIT_MODULES/test_initexit_mod_fail.ko" ] && command -v modload >/dev/null; then
	echo "scenario: a failed load with unwind: test_initexit_mod_fail fail_at=4"
	modload "$INITEXIT_MODULES/test_initexit_mod_fail.ko" fail_at=4 || true
fi
[ -n "$(ls "$INITEXIT_MODULES" "$USER_MODULES")" ] || echo "scenario: no modules to load"
exit "$status"
