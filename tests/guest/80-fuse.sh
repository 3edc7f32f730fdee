#!/bin/sh
# fs/fuse, the series' converted module (patch "fuse: declare the module's
# setup steps as module_init_exit() pairs"), against stock's: this test runs
# on both kernels (scripts/test's stock boot too).  After a load: fuse,
# fuseblk and fusectl in /proc/filesystems, /dev/fuse, /proc/misc,
# /sys/fs/fuse/connections, /sys/module/fuse, and fusectl mounts; after
# the unload, the state before the load, byte for byte.  The loaded state
# goes to $INITEXIT_OUT/fuse/loaded.txt, which tests/boot compares between
# the kernels.  On the patched kernel the initexit events show one pair per
# step, in order, and the exact reverse on unload.
#
# The three steps that register a file system (fuseblk, fuse, fusectl;
# fusectl's is the last step) allocate nothing, so no fault injection makes
# them fail (the sweeps of tests/fault-sweep reach every other step).  Here
# initexit_fs_squat holds each name in turn: fuse's load must fail with
# EBUSY and leave the state before it, byte for byte (on both kernels: the
# stock ladder undoes its steps too), on the patched kernel with the exits
# of the steps before it run in exact reverse as an unwind, and a load
# right after the name is free again must succeed and unload.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 15
T=${INITEXIT_TRACING:-/sys/kernel/tracing}
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
	while [ "$i" -lt 15 ]; do ktap_skip "fuse" "no fuse.ko (CONFIG_FUSE_FS=m in kconfig/base.config)"; i=$((i + 1)); done
	ktap_finish
	exit 0
fi

trace_instance fuse
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

STEPS="fuse_inode_cache_init fuseblk_init fuse_fs_init fuse_req_cache_init fuse_miscdev_init fuse_sysfs_init fuse_sysfs_conn_init fuse_ctl_init"
EXITS="fuse_ctl_cleanup fuse_sysfs_conn_exit fuse_sysfs_exit fuse_miscdev_exit fuse_req_cache_exit fuse_fs_exit fuseblk_exit fuse_inode_cache_exit"
no_events=''
if [ "$events" = 0 ] || [ "${INITEXIT_KERNEL:-patched}" = stock ]; then
	no_events="no initexit events on this kernel (stock)"
	ktap_skip "fuse: one pair per step, in order" "$no_events"
	ktap_skip "fuse: unload runs the exits in exact reverse" "$no_events"
else
	sed -n 's/.*initexit_init_start: path=module origin=fuse idx=\([0-9]*\) prio=\(-*[0-9]*\) func=\([a-z_]*\) .*/\1 \2 \3/p' "$I/trace" >"$WORK/inits"
	pair_exits fuse "$I/trace" unload >"$WORK/exits"
	i=0 : >"$WORK/want"
	# Priorities: FUSE_INIT_PRIO(step) = INITCALL_PRIO_DEVICE + step (the band of its entry, fuse_init).
	for f in $STEPS; do echo "$i $i $f" >>"$WORK/want"; i=$((i + 1)); done
	ktap_same "fuse: one pair per step, in order" "$WORK/want" "$WORK/inits"
	# shellcheck disable=SC2086 # one exit per line on purpose
	printf '%s\n' $EXITS >"$WORK/want"
	ktap_same "fuse: unload runs the exits in exact reverse" "$WORK/want" "$WORK/exits"
fi

# fail_at NAME STEP: with NAME held by initexit_fs_squat, fuse's STEP
# (register_filesystem(NAME)) fails: 3 cases.
fail_at() {
	what="fuse, the file system $1 taken: $2 fails"
	state >"$WORK/free"
	modload "$MODDIR/initexit_fs_squat.ko" "name=$1"
	if [ "$LOAD_ERR" != 0 ]; then
		ktap_fail "$what with EBUSY, no module left, the state before the load" "initexit_fs_squat name=$1: errno $LOAD_ERR"
		ktap_fail "$what; unwinds the steps before it in exact reverse" "initexit_fs_squat did not load"
		ktap_fail "$what; the name free again, a load succeeds and unloads" "initexit_fs_squat did not load"
		return
	fi
	state >"$WORK/before"
	[ -n "$no_events" ] || echo >"$I/trace"
	modload "$MODDIR/fuse.ko"
	le=$LOAD_ERR
	state >"$WORK/after"
	if [ "$le" = 16 ] && ! loaded fuse && cmp -s "$WORK/before" "$WORK/after"; then
		ktap_ok "$what with EBUSY, no module left, the state before the load"
	else
		ktap_fail "$what with EBUSY, no module left, the state before the load" \
			"errno $le (want 16), $(loaded fuse && echo loaded || echo 'not loaded'), state: $(diff "$WORK/before" "$WORK/after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
	if [ -n "$no_events" ]; then
		ktap_skip "$what; unwinds the steps before it in exact reverse" "$no_events"
	else
		# The exits of the K steps before STEP, newest first: EXITS
		# lists every step's exit newest first, so its last K.
		# shellcheck disable=SC2086 # one step per line on purpose
		k=$(printf '%s\n' $STEPS | sed -n "/^$2\$/=")
		# shellcheck disable=SC2086
		printf '%s\n' $EXITS | tail -n "$((k - 1))" >"$WORK/want"
		pair_exits fuse "$I/trace" unwind >"$WORK/unwound"
		ktap_same "$what; unwinds the steps before it in exact reverse" "$WORK/want" "$WORK/unwound"
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
fail_at fuseblk fuseblk_init
fail_at fuse fuse_fs_init
fail_at fusectl fuse_ctl_init
ktap_finish
