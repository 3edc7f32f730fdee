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
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 6
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
		mount -t fusectl none /tmp/fusectl && echo mounted && umount /tmp/fusectl
	fi
}

if [ ! -f "$MODDIR/fuse.ko" ]; then
	i=0
	while [ "$i" -lt 6 ]; do ktap_skip "fuse" "no fuse.ko (CONFIG_FUSE_FS=m in kconfig/base.config)"; i=$((i + 1)); done
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

if [ "$events" = 0 ] || [ "${INITEXIT_KERNEL:-patched}" = stock ]; then
	ktap_skip "fuse: one pair per step, in order" "no initexit events on this kernel (stock)"
	ktap_skip "fuse: unload runs the exits in exact reverse" "no initexit events on this kernel (stock)"
	ktap_finish
	exit 0
fi
STEPS="fuse_inode_cache_init fuseblk_init fuse_fs_init fuse_req_cache_init fuse_miscdev_init fuse_sysfs_init fuse_sysfs_conn_init fuse_ctl_init"
EXITS="fuse_ctl_cleanup fuse_sysfs_conn_exit fuse_sysfs_exit fuse_miscdev_exit fuse_req_cache_exit fuse_fs_exit fuseblk_exit fuse_inode_cache_exit"
sed -n 's/.*initexit_init_start: path=module origin=fuse idx=\([0-9]*\) prio=\(-*[0-9]*\) func=\([a-z_]*\) .*/\1 \2 \3/p' "$I/trace" >"$WORK/inits"
sed -n 's/.*initexit_exit_start: path=module origin=fuse idx=[0-9]* prio=-*[0-9]* func=\([a-z_]*\) reason=unload.*/\1/p' "$I/trace" >"$WORK/exits"
i=0 : >"$WORK/want"
# Priorities: FUSE_INIT_PRIO(step) = -16 + step (just below the device band).
for f in $STEPS; do echo "$i $((i - 16)) $f" >>"$WORK/want"; i=$((i + 1)); done
ktap_same "fuse: one pair per step, in order" "$WORK/want" "$WORK/inits"
# shellcheck disable=SC2086 # one exit per line on purpose
printf '%s\n' $EXITS >"$WORK/want"
ktap_same "fuse: unload runs the exits in exact reverse" "$WORK/want" "$WORK/exits"
ktap_finish
