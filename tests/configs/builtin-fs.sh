#!/bin/sh
# Guest script of the kernel with fs/fuse and fs/btrfs built in
# (kconfig/variants/builtin-fs.config: the two modules the series
# converts): scripts/check-configs' builtin-fs configuration and
# scripts/test's builtin rows (tests/plan.tsv). Their pairs run in the
# boot path, inside their entries fuse_init and init_btrfs_fs; the calls
# are judged on the host from the boot's capture, read through analysis/
# (tests/configs/test_builtin_fs.py, tests/boot/test_builtin.py).
#
# What this script checks depends on initexit_builtin= on the kernel
# command line (the kernel hands it to init's environment):
#   present (the default)  every step's registration is there after the
#                          boot, as after a load of the modules
#                          (tests/guest/80-fuse.sh and 85-btrfs.sh check
#                          those on the modules), and neither is a module
#   absent                 booted with a step of each failing (its name in
#                          initcall_blacklist=: the pair fails with -EPERM)
#                          or with its entry blacklisted: nothing of fuse
#                          or btrfs is left, and the boot went on to here
# Either way the names the kernel lists (file systems, misc devices,
# /sys/fs, slab caches) go to $INITEXIT_OUT/builtin-fs-state.txt: the
# host compares the boots' lists (an unwound boot must list what a boot
# with both entries blacklisted lists, the clean boot more).
set -eu
# Run as ktap-runner.sh runs tests/guest/: KTAP in ktap/builtin-fs.tap, the
# status in builtin-fs.exit (scripts/check-configs and scripts/test judge
# them).
if [ -z "${INITEXIT_CONFIG_TEST:-}" ]; then
	mkdir -p "$INITEXIT_OUT/ktap"
	rc=0
	INITEXIT_CONFIG_TEST=1 sh "$0" >"$INITEXIT_OUT/ktap/builtin-fs.tap" 2>&1 || rc=$?
	cat "$INITEXIT_OUT/ktap/builtin-fs.tap"
	echo "$rc" >"$INITEXIT_OUT/ktap/builtin-fs.exit"
	exit "$rc"
fi
. "${INITEXIT_TESTS:-/initexit/tests/guest}/ktap.inc"

EXPECT=${initexit_builtin:-present}

# state: one "KIND NAME" line per name the kernel lists. /sys/kernel/slab
# keeps a merged cache's alias link after the cache is destroyed (SLUB:
# sysfs_slab_alias() only removes a leftover link when the name comes
# back; as in stock, for modules too), so the absent rows boot with
# slab_nomerge: every cache its own directory, removed with the cache.
state() {
	awk '{ print "filesystem", $NF }' /proc/filesystems
	awk '{ print "misc", $2 }' /proc/misc
	for f in /sys/fs/*; do [ ! -e "$f" ] || echo "sysfs ${f#/sys/fs/}"; done
	awk 'NR > 2 { print "slabinfo", $1 }' /proc/slabinfo 2>/dev/null || true
	for f in /sys/kernel/slab/*; do [ ! -e "$f" ] || echo "slab ${f#/sys/kernel/slab/}"; done
	for f in /dev/fuse /dev/btrfs-control; do [ ! -e "$f" ] || echo "dev ${f#/dev/}"; done
}
state | sort -u >"$INITEXIT_OUT/builtin-fs-state.txt"

case "$EXPECT" in
present)
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
	;;
absent)
	ktap_plan 4
	# absent WHAT FOUND: ok when FOUND (the names found) is empty.
	absent() {
		if [ -z "$2" ]; then
			ktap_ok "builtin fuse and btrfs failed at boot: $1"
		else
			ktap_fail "builtin fuse and btrfs failed at boot: $1" "left:$(echo "$2" | tr '\n' ' ')"
		fi
	}
	absent "no fuse, fuseblk, fusectl or btrfs in /proc/filesystems" \
		"$(grep -E '	(fuse|fuseblk|fusectl|btrfs)$' /proc/filesystems || true)"
	absent "no fuse or btrfs-control device (/proc/misc, /dev)" \
		"$(grep -E ' (fuse|btrfs-control)$' /proc/misc || true; ls /dev/fuse /dev/btrfs-control 2>/dev/null || true)"
	absent "no /sys/fs/fuse, no /sys/fs/btrfs" "$(ls -d /sys/fs/fuse /sys/fs/btrfs 2>/dev/null || true)"
	# slab_nomerge (see state()): the check is blind to aliases without it.
	if ! grep -qw slab_nomerge /proc/cmdline; then
		ktap_fail "builtin fuse and btrfs failed at boot: no fuse or btrfs slab cache" \
			"the boot line needs slab_nomerge (tests/plan.tsv's absent rows have it): a merged cache's alias link outlives it"
	else
		absent "no fuse or btrfs slab cache (/proc/slabinfo, /sys/kernel/slab)" \
			"$(grep -E '^(slabinfo|slab) (fuse|btrfs)' "$INITEXIT_OUT/builtin-fs-state.txt" || true)"
	fi
	;;
*)
	ktap_plan 1
	ktap_fail "builtin fuse and btrfs: initexit_builtin=$EXPECT" "initexit_builtin= is present or absent"
	;;
esac
ktap_finish
