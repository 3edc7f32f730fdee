#!/bin/bash
# Guest script of scripts/run --rootfs host (scripts/test's host-rootfs
# row, with --include tests/configs/host-include): the guest runs with
# the host's own userland. A bash script (this one) whose cases use
# bash itself, kmod's modprobe (a module of the booted kernel by name,
# and the kernel's own request_module() through the host's modprobe),
# python3 and a file of --include; and the host's root stays untouched:
# a write lands in the guest's overlay, never on the host (checked there).
# KTAP in $INITEXIT_OUT/ktap/host-rootfs.tap, the status in .exit.
set -u
if [ -z "${INITEXIT_CONFIG_TEST:-}" ]; then
	mkdir -p "$INITEXIT_OUT/ktap"
	rc=0
	INITEXIT_CONFIG_TEST=1 "$0" >"$INITEXIT_OUT/ktap/host-rootfs.tap" 2>&1 || rc=$?
	cat "$INITEXIT_OUT/ktap/host-rootfs.tap"
	echo "$rc" >"$INITEXIT_OUT/ktap/host-rootfs.exit"
	exit "$rc"
fi
# shellcheck source=../lib/ktap.sh
. /initexit/tests/lib/ktap.sh

ktap_plan 9

# The interpreter is the host's bash (a feature busybox ash lacks).
declare -A seen=([bash]=1)
ktap_check "the guest script runs in bash ${BASH_VERSION:-?} (an associative array)" \
	test "${seen[bash]:-}" = 1

# kmod's modprobe, by name, from the modules.dep the host's depmod wrote.
ktap_check "modprobe is kmod's ($(modprobe --version 2>&1 | head -1))" \
	sh -c 'modprobe --version 2>&1 | grep -q "^kmod version"'
ktap_check "modprobe fuse loads the booted kernel's fuse.ko by name" \
	sh -c "modprobe fuse && grep -qw fuse /proc/filesystems && test -d /sys/module/fuse"
ktap_check "modprobe -r fuse unloads it, nothing of it left" \
	sh -c "modprobe -r fuse && ! grep -qw fuse /proc/filesystems && ! test -e /sys/module/fuse"
# The kernel's request_module() (mount of an unknown type asks for fs-btrfs)
# runs /proc/sys/kernel/modprobe, the helper that runs the host's modprobe.
mkdir -p /tmp/mnt
mount -t btrfs none /tmp/mnt >/dev/null 2>&1 || true
ktap_check "request_module(\"fs-btrfs\") loads btrfs through the host's modprobe ($(cat /proc/sys/kernel/modprobe))" \
	sh -c "grep -qw btrfs /proc/filesystems && test -d /sys/module/btrfs"
modprobe -r btrfs >/dev/null 2>&1 || true

# python3 of the host.
ktap_check "python3 -c runs ($(python3 --version 2>&1))" \
	test "$(python3 -c 'import sys; print(sys.version_info[0])')" = 3

# The user's files: data and a helper of --include, at $INITEXIT_INCLUDE.
ktap_check "a data file of --include is at \$INITEXIT_INCLUDE ($INITEXIT_INCLUDE)" \
	grep -qx 'initexit --include reached the guest' "$INITEXIT_INCLUDE/greeting.txt"
ktap_check "an executable of --include runs (helper.py 2 3 prints 5)" \
	test "$("$INITEXIT_INCLUDE/helper.py" 2 3)" = 5

# Writes stay in the guest: / is an overlay whose upper layer is a tmpfs,
# its lower the host's root over 9p, mounted read-only (QEMU's share is
# read-only too). The host checks that the file never reached it.
# shellcheck disable=SC2016  # the awk program's $2 and $3
ktap_check "a write to /etc lands in the guest: / is an overlay" \
	sh -c 'echo guest >/etc/initexit-host-rootfs-write && grep -qx guest /etc/initexit-host-rootfs-write &&
		awk "\$2 == \"/\" && \$3 == \"overlay\" { f = 1 } END { exit !f }" /proc/mounts'
ktap_finish
