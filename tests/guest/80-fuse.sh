#!/bin/sh
# fs/fuse, the series' converted module (patch "fuse: declare the module's
# setup steps as module_init_exit() pairs"), against stock's: this test runs
# on both kernels (scripts/test's stock boot too).  After a load: fuse,
# fuseblk and fusectl in /proc/filesystems, /dev/fuse, /proc/misc,
# /sys/fs/fuse/connections, /sys/module/fuse, and fusectl mounts; after
# the unload, the state before the load, byte for byte.  The loaded state
# goes to $INITEXIT_OUT/fuse/loaded.txt, which tests/boot compares between
# the kernels.  This test only loads, fails and unloads: each load's pairs
# (one per step, in order, the exact reverse on unload; on a failed load
# the steps before it unwound in exact reverse) are judged on the host from
# the scenario's trace (tests/boot/test_modules.py, through analysis/).
#
# The three steps that register a file system (fuseblk, fuse, fusectl;
# fusectl's is the last step) allocate nothing, so no fault injection makes
# them fail (the sweeps of tests/fault-sweep reach every other step).  Here
# initexit_fs_squat holds each name in turn: fuse's load must fail with
# EBUSY and leave the state before it, byte for byte (on both kernels: the
# stock ladder undoes its steps too), and a load right after the name is
# free again must succeed and unload.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 10
OUT=${INITEXIT_OUT:-/tmp}/fuse
mkdir -p "$OUT"

state() { # the observable state fuse touches, module-independent parts
	echo "== /proc/filesystems"; cat /proc/filesystems
	echo "== /proc/misc"; sort /proc/misc
	echo "== /dev"; ls /dev
	echo "== /sys/fs"; find /sys/fs -maxdepth 2 | sort
	echo "== /sys/module/fuse"; [ -d /sys/module/fuse ] && find /sys/module/fuse -maxdepth 2 ! -path '*/sections/*' | sort
	echo "== fusectl"
	if grep -q fusectl /proc/filesystems; then
		mkdir -p /tmp/fusectl
		# (initexit_fs_squat holding the name cannot be mounted)
		if mount -t fusectl none /tmp/fusectl 2>/dev/null; then
			echo mounted
			umount /tmp/fusectl
		fi
	fi
}

if [ ! -f "$MODDIR/fuse.ko" ]; then
	i=0
	while [ "$i" -lt 10 ]; do ktap_skip "fuse" "no fuse.ko (CONFIG_FUSE_FS=m in kconfig/base.config)"; i=$((i + 1)); done
	ktap_finish
	exit 0
fi

load_between_states fuse
missing=''
for want in "nodev	fuse" "	fuseblk" "nodev	fusectl"; do
	grep -q "$want\$" /proc/filesystems || missing="$missing [$want]"
done
grep -q ' fuse$' /proc/misc || missing="$missing [/proc/misc fuse]"
[ -c /dev/fuse ] || missing="$missing [/dev/fuse]"
[ -d /sys/fs/fuse/connections ] || missing="$missing [/sys/fs/fuse/connections]"
grep -q '^mounted$' "$OUT/loaded.txt" || missing="$missing [fusectl mount]"
if [ -z "$missing" ]; then ktap_ok "fuse: every step's registration is there"; else ktap_fail "fuse: every step's registration is there" "missing:$missing"; fi
modunload fuse
if [ "$UNLOAD_ERR" = 0 ] && ! loaded fuse; then ktap_ok "fuse: unload succeeds"; else ktap_fail "fuse: unload succeeds" "errno $UNLOAD_ERR"; fi
state >"$WORK/after"
ktap_same "fuse: after the unload, the state before the load" "$WORK/before" "$WORK/after"

# fail_at NAME: with NAME held by initexit_fs_squat, the step of fuse that
# registers NAME (register_filesystem(NAME)) fails; two test lines each.
fail_at() {
	what="fuse, the file system $1 taken"
	state >"$WORK/free"
	modload "$MODDIR/initexit_fs_squat.ko" "name=$1"
	if [ "$LOAD_ERR" != 0 ]; then
		ktap_fail "$what: the load fails with EBUSY, no module left, the state before the load" "initexit_fs_squat name=$1: errno $LOAD_ERR"
		ktap_fail "$what; the name free again, a load succeeds and unloads" "initexit_fs_squat did not load"
		return
	fi
	state >"$WORK/before"
	modload "$MODDIR/fuse.ko"
	le=$LOAD_ERR
	state >"$WORK/after"
	if [ "$le" = 16 ] && ! loaded fuse && cmp -s "$WORK/before" "$WORK/after"; then
		ktap_ok "$what: the load fails with EBUSY, no module left, the state before the load"
	else
		ktap_fail "$what: the load fails with EBUSY, no module left, the state before the load" \
			"errno $le (want 16), $(loaded fuse && echo loaded || echo 'not loaded'), state: $(diff "$WORK/before" "$WORK/after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
	modunload initexit_fs_squat
	modload "$MODDIR/fuse.ko"
	le=$LOAD_ERR
	modunload fuse
	state >"$WORK/again"
	if [ "$le" = 0 ] && [ "$UNLOAD_ERR" = 0 ] && ! loaded fuse && cmp -s "$WORK/free" "$WORK/again"; then
		ktap_ok "$what; the name free again, a load succeeds and unloads"
	else
		ktap_fail "$what; the name free again, a load succeeds and unloads" \
			"load errno $le, unload errno $UNLOAD_ERR; state: $(diff "$WORK/free" "$WORK/again" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
}
fail_at fuseblk
fail_at fuse
fail_at fusectl
ktap_finish
