#!/bin/sh
# fs/btrfs, the series' second converted module (patch "btrfs: declare the
# module's setup steps as module_init_exit() pairs"), against stock's: this
# test runs on both kernels (scripts/test's stock boot too), as
# 80-fuse.sh does.  The modules btrfs needs (crypto, crc32c, xxhash, zlib,
# lzo, zstd, raid6_pq, xor: kconfig/base.config) are loaded first and are
# part of the state before.  After a load: btrfs in /proc/filesystems,
# /dev/btrfs-control and /proc/misc, /sys/fs/btrfs (features and their
# values), /sys/module/btrfs; after the unload, the state before the load,
# byte for byte.  The loaded state goes to $INITEXIT_OUT/btrfs/loaded.txt,
# which tests/boot compares between the kernels.  This test only loads,
# fails and unloads: each load's pairs (one per step, in order, the exact
# reverse on unload or unwind) are judged on the host from the scenario's
# trace (tests/boot/test_modules.py, through analysis/).
#
# Booted with initcall_blacklist=register_btrfs (scripts/test's blacklist
# boot), it fails the last step instead, which no allocation fault can
# fail (register_filesystem() allocates nothing; fault-sweep in
# tests/fault-sweep fails the others): the load fails with EPERM and
# leaves the state before it, and a second load fails the same way (the
# host checks that both ran every step, the last failing with -EPERM, and
# unwound every earlier one in exact reverse: nothing of the first load
# was left to make one of them fail with EBUSY or EEXIST).
set -eu
. "$(dirname "$0")/ktap.inc"
# register_btrfs in initcall_blacklist='s comma-separated list?
blacklisted=0
read -r cmdline </proc/cmdline
# shellcheck disable=SC2086 # one word at a time
for w in $cmdline; do
	case "$w" in
	initcall_blacklist=*)
		case ",${w#initcall_blacklist=}," in *,register_btrfs,*) blacklisted=1 ;; esac ;;
	esac
done
# (stock has no register_btrfs: its init_btrfs_fs would be the one to name)
[ "${INITEXIT_KERNEL:-patched}" != stock ] || blacklisted=0
if [ "$blacklisted" = 1 ]; then plan=4; else plan=5; fi
ktap_plan "$plan"
OUT=${INITEXIT_OUT:-/tmp}/btrfs
mkdir -p "$OUT"

state() { # the observable state btrfs touches
	echo "== /proc/filesystems"; cat /proc/filesystems
	echo "== /proc/misc"; sort /proc/misc
	echo "== /dev"; ls /dev
	echo "== /sys/fs"; find /sys/fs -maxdepth 1 | sort
	echo "== /sys/fs/btrfs"
	if [ -d /sys/fs/btrfs ]; then
		find /sys/fs/btrfs | sort
		find /sys/fs/btrfs -type f | sort | while read -r f; do echo "$f: $({ tr '\n' ' ' <"$f"; } 2>&1)"; done
	fi
	echo "== /sys/module/btrfs"; [ -d /sys/module/btrfs ] && find /sys/module/btrfs -maxdepth 2 ! -path '*/sections/*' | sort
	echo "== /proc/modules"; cut -d' ' -f1 /proc/modules | sort
}

if [ ! -f "$MODDIR/btrfs.ko" ]; then
	i=0
	while [ "$i" -lt "$plan" ]; do ktap_skip "btrfs" "no btrfs.ko (CONFIG_BTRFS_FS=m in kconfig/base.config)"; i=$((i + 1)); done
	ktap_finish
	exit 0
fi

# Its dependencies and soft dependencies (mod_deps), as modprobe would.
before_deps=$(cut -d' ' -f1 /proc/modules | sort)
load_deps_of "$MODDIR/btrfs.ko"
if [ -z "$DEPS_ERR" ]; then
	ktap_ok "btrfs: the modules it needs load ($(mod_deps "$MODDIR/btrfs.ko" | xargs))"
else
	ktap_fail "btrfs: the modules it needs load" "$DEPS_ERR"
fi

unload_deps() { # the modules loaded for btrfs go again, the last loaded first
	cut -d' ' -f1 /proc/modules | while read -r m; do
		echo "$before_deps" | grep -qx "$m" || modunload "$m"
	done
}

if [ "$blacklisted" = 1 ]; then
	state >"$WORK/before"
	modload "$MODDIR/btrfs.ko"
	if [ "$LOAD_ERR" = 1 ] && ! loaded btrfs; then
		ktap_ok "btrfs, register_btrfs blacklisted: the load fails with EPERM and leaves no module"
	else
		ktap_fail "btrfs, register_btrfs blacklisted: the load fails with EPERM and leaves no module" "errno $LOAD_ERR, loaded: $(grep -c '^btrfs ' /proc/modules)"
	fi
	state >"$WORK/after"
	ktap_same "btrfs, register_btrfs blacklisted: after the failed load, the state before the load" "$WORK/before" "$WORK/after"
	modload "$MODDIR/btrfs.ko"
	state >"$WORK/again"
	if [ "$LOAD_ERR" = 1 ] && ! loaded btrfs && cmp -s "$WORK/before" "$WORK/again"; then
		ktap_ok "btrfs, register_btrfs blacklisted: a second load fails the same way, the state before the load"
	else
		ktap_fail "btrfs, register_btrfs blacklisted: a second load fails the same way, the state before the load" \
			"errno $LOAD_ERR, loaded: $(grep -c '^btrfs ' /proc/modules); state: $(diff "$WORK/before" "$WORK/again" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
	unload_deps
	ktap_finish
	exit 0
fi

load_between_states btrfs
missing=''
grep -q "^	btrfs\$" /proc/filesystems || missing="$missing [/proc/filesystems btrfs]"
grep -q ' btrfs-control$' /proc/misc || missing="$missing [/proc/misc btrfs-control]"
[ -c /dev/btrfs-control ] || missing="$missing [/dev/btrfs-control]"
[ -d /sys/fs/btrfs/features ] || missing="$missing [/sys/fs/btrfs/features]"
if [ -z "$missing" ]; then ktap_ok "btrfs: every step's registration is there"; else ktap_fail "btrfs: every step's registration is there" "missing:$missing"; fi
modunload btrfs
if [ "$UNLOAD_ERR" = 0 ] && ! loaded btrfs; then ktap_ok "btrfs: unload succeeds"; else ktap_fail "btrfs: unload succeeds" "errno $UNLOAD_ERR"; fi
state >"$WORK/after"
ktap_same "btrfs: after the unload, the state before the load" "$WORK/before" "$WORK/after"

unload_deps
ktap_finish
