#!/bin/sh
# Guest script of scripts/check-configs for the builtin-fs variant: fs/fuse
# and fs/btrfs, the modules the series converts, built in
# (kconfig/variants/builtin-fs.config). Their pairs run in the boot path:
# each step called once, in its priority's order, returning 0, with no
# unwind, is judged on the host from the boot's initcall_debug lines
# (dmesg.txt, read through analysis/: tests/configs/test_builtin_fs.py).
# Here, after the boot, every step's registration is there, as after a
# load of the modules (tests/guest/80-fuse.sh and 85-btrfs.sh check those
# on the modules), and neither is a module.
set -eu
# Run as ktap-runner.sh runs tests/guest/: KTAP in ktap/builtin-fs.tap, the
# status in builtin-fs.exit (scripts/check-configs judges them).
if [ -z "${INITEXIT_CONFIG_TEST:-}" ]; then
	mkdir -p "$INITEXIT_OUT/ktap"
	rc=0
	INITEXIT_CONFIG_TEST=1 sh "$0" >"$INITEXIT_OUT/ktap/builtin-fs.tap" 2>&1 || rc=$?
	cat "$INITEXIT_OUT/ktap/builtin-fs.tap"
	echo "$rc" >"$INITEXIT_OUT/ktap/builtin-fs.exit"
	exit "$rc"
fi
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"
ktap_plan 2

missing=''
for fs in fuse fuseblk fusectl btrfs; do
	grep -q "	$fs\$" /proc/filesystems || missing="$missing [/proc/filesystems $fs]"
done
grep -q ' fuse$' /proc/misc || missing="$missing [/proc/misc fuse]"
grep -q ' btrfs-control$' /proc/misc || missing="$missing [/proc/misc btrfs-control]"
[ -d /sys/fs/fuse/connections ] || missing="$missing [/sys/fs/fuse/connections]"
[ -d /sys/fs/btrfs/features ] || missing="$missing [/sys/fs/btrfs/features]"
if [ -z "$missing" ]; then
	ktap_ok "builtin fuse and btrfs: every step's registration is there after the boot"
else
	ktap_fail "builtin fuse and btrfs: every step's registration is there after the boot" "missing:$missing"
fi

# Built in, they are no modules: nothing to load, nothing to unload.
if ! grep -qE '^(fuse|btrfs) ' /proc/modules; then
	ktap_ok "builtin fuse and btrfs: not in /proc/modules"
else
	ktap_fail "builtin fuse and btrfs: not in /proc/modules" "$(grep -E '^(fuse|btrfs) ' /proc/modules)"
fi
ktap_finish
