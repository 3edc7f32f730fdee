#!/bin/sh
# Guest script of scripts/check-configs for the builtin-fs variant: fs/fuse
# and fs/btrfs, the modules the series converts, built in
# (kconfig/variants/builtin-fs.config). Their pairs run in the boot path:
# the boot's initcall_debug lines (dmesg) must show each step called once,
# in its priority's order, returning 0, with no unwind; after the boot
# every step's registration is there, as after a load of the modules
# (tests/guest/80-fuse.sh and 85-btrfs.sh check those on the modules).
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
ktap_plan 5

dmesg >"$WORK/dmesg"
# calls MODNAME: "FUNC PRIO RET" per initcall_debug call of MODNAME's
# built-in code, in call order ("calling  F+0x0/0x10 @ 1 prio=P
# modname=M", then "initcall F+0x0/0x10 returned R after N usecs prio=P
# modname=M"); a call that never returned shows as RET "none".
calls() {
	awk -v m="modname=$1" '
	$0 ~ / calling  / && $NF == m {
		f = $0; sub(/.* calling  /, "", f); sub(/\+.*/, "", f)
		p = $0; sub(/.* prio=/, "", p); sub(/ .*/, "", p)
		n++; fn[n] = f; pr[n] = p; ret[f] = "none" }
	$0 ~ / initcall .* returned / && $NF == m {
		f = $0; sub(/.* initcall /, "", f); sub(/\+.*/, "", f)
		r = $0; sub(/.* returned /, "", r); sub(/ .*/, "", r)
		ret[f] = r }
	END { for (i = 1; i <= n; i++) print fn[i], pr[i], ret[fn[i]] }' "$WORK/dmesg"
}

# fs/fuse: its entry, fuse_init (module_init_exit_entry(), where stock's
# module_init(fuse_init) stood: a device initcall, prio 0), then inside it
# each step at FUSE_INIT_PRIO(step) = INITCALL_PRIO_DEVICE + step.
echo "fuse_init 0 0" >"$WORK/want"
i=0
for f in fuse_inode_cache_init fuseblk_init fuse_fs_init fuse_req_cache_init fuse_miscdev_init \
	fuse_sysfs_init fuse_sysfs_conn_init fuse_ctl_init; do
	echo "$f $i 0"
	i=$((i + 1))
done >>"$WORK/want"
calls fuse >"$WORK/got"
ktap_same "builtin fuse: its entry, then every step inside it, called once at boot, in order, at its priority, returning 0" \
	"$WORK/want" "$WORK/got"

# fs/btrfs: its entry, init_btrfs_fs (late_init_exit_entry(), where stock's
# late_initcall(init_btrfs_fs) stood: prio 1000), then inside it each step
# at BTRFS_INIT_PRIO(step) = INITCALL_PRIO_LATE + step (step 19, the
# sanity tests, only with CONFIG_BTRFS_FS_RUN_SANITY_TESTS).
echo "init_btrfs_fs 1000 0" >"$WORK/want"
for s in 0:btrfs_props_init 1:btrfs_init_sysfs 2:btrfs_init_compress 3:btrfs_init_cachep \
	4:btrfs_init_dio 5:btrfs_transaction_init 6:btrfs_ctree_init 7:btrfs_free_space_init \
	8:extent_state_init_cachep 9:extent_buffer_init_cachep 10:btrfs_bioset_init 11:extent_map_init \
	12:ordered_data_init 13:btrfs_delayed_inode_init 14:btrfs_auto_defrag_init \
	15:btrfs_delayed_ref_init 16:btrfs_prelim_ref_init 17:btrfs_interface_init \
	18:btrfs_print_mod_info 20:register_btrfs; do
	echo "${s#*:} $((1000 + ${s%%:*})) 0"
done >>"$WORK/want"
calls btrfs >"$WORK/got"
ktap_same "builtin btrfs: its entry, then every step inside it, called once at boot, in order, at its priority, returning 0" \
	"$WORK/want" "$WORK/got"

# No pair of either failed or unwound (the series' "initexit: ..." lines).
if grep -E 'initexit: .*(fuse|btrfs)' "$WORK/dmesg" >"$WORK/unwound"; then
	ktap_fail "builtin fuse and btrfs: no failure, no unwind at boot" "$(head -n 5 "$WORK/unwound")"
else
	ktap_ok "builtin fuse and btrfs: no failure, no unwind at boot"
fi

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
