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
# which tests/boot compares between the kernels.  On the patched kernel the
# initexit events show one pair per step, in order, and the exact reverse
# on unload.
#
# Booted with initcall_blacklist=register_btrfs (scripts/test's blacklist
# boot), it fails the last step instead, which no allocation fault can
# fail (register_filesystem() allocates nothing; fault-sweep in
# tests/fault-sweep fails the others): the load fails with EPERM, the
# state is the one before, every earlier step's exit runs in exact reverse
# (reason=unwind), and a second load fails the same way at the same step,
# every earlier step set up again (nothing of the first load was left to
# make one of them fail with EBUSY or EEXIST).
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
if [ "$blacklisted" = 1 ]; then plan=6; else plan=7; fi
ktap_plan "$plan"
T=${INITEXIT_TRACING:-/sys/kernel/tracing}
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

trace_instance btrfs

# fs/btrfs/super.c, enum btrfs_init_step, in the order of stock's
# mod_init_seq[] (tests/boot/test_conversions.py checks that against the
# stock source): STEP:INIT; the sanity tests' pair (step 19) exists only
# with CONFIG_BTRFS_FS_RUN_SANITY_TESTS (not set here).
STEPS="0:btrfs_props_init 1:btrfs_init_sysfs 2:btrfs_init_compress 3:btrfs_init_cachep 4:btrfs_init_dio
5:btrfs_transaction_init 6:btrfs_ctree_init 7:btrfs_free_space_init 8:extent_state_init_cachep
9:extent_buffer_init_cachep 10:btrfs_bioset_init 11:extent_map_init 12:ordered_data_init
13:btrfs_delayed_inode_init 14:btrfs_auto_defrag_init 15:btrfs_delayed_ref_init
16:btrfs_prelim_ref_init 17:btrfs_interface_init 18:btrfs_print_mod_info 20:register_btrfs"
EXITS="unregister_btrfs btrfs_nothing_to_undo btrfs_interface_exit btrfs_prelim_ref_exit
btrfs_delayed_ref_exit btrfs_auto_defrag_exit btrfs_delayed_inode_exit ordered_data_exit
extent_map_exit btrfs_bioset_exit extent_buffer_free_cachep extent_state_free_cachep
btrfs_free_space_exit btrfs_ctree_exit btrfs_transaction_exit btrfs_destroy_dio
btrfs_destroy_cachep btrfs_exit_compress btrfs_exit_sysfs btrfs_nothing_to_undo"
# want_inits LAST_RET: "IDX PRIO INIT RET" per step, as the init_finish
# events say (idx: the position in the sorted table; prio:
# BTRFS_INIT_PRIO(step) = INITCALL_PRIO_LATE + step), the last step
# returning LAST_RET, the others 0.
want_inits() {
	i=0 n=$(echo "$STEPS" | wc -w)
	for s in $STEPS; do
		r=0
		[ "$((i + 1))" -ne "$n" ] || r=$1
		echo "$i $((1000 + ${s%%:*})) ${s#*:} $r"
		i=$((i + 1))
	done
}
# inits_of FILE: the init_finish events of btrfs in FILE, as want_inits.
inits_of() {
	sed -n 's/.*initexit_init_finish: path=module origin=btrfs idx=\([0-9]*\) prio=\(-*[0-9]*\) func=\([a-z0-9_]*\) ret=\(-*[0-9]*\) .*/\1 \2 \3 \4/p' "$1"
}
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
	if [ "$events" = 0 ]; then
		ktap_skip "btrfs, register_btrfs blacklisted: every step in order, the last one failing with -EPERM" "no initexit events on this kernel"
		ktap_skip "btrfs, register_btrfs blacklisted: every earlier step's exit in exact reverse" "no initexit events on this kernel"
		ktap_skip "btrfs, register_btrfs blacklisted: a second load fails the same way at the same step" "no initexit events on this kernel"
		unload_deps
		ktap_finish
		exit 0
	fi
	cp "$I/trace" "$WORK/trace1"
	want_inits -1 >"$WORK/want"
	inits_of "$WORK/trace1" >"$WORK/inits"
	ktap_same "btrfs, register_btrfs blacklisted: every step in order, the last one failing with -EPERM" "$WORK/want" "$WORK/inits"
	# shellcheck disable=SC2086 # one exit per line on purpose
	printf '%s\n' $EXITS | sed 1d >"$WORK/want"
	pair_exits btrfs "$WORK/trace1" unwind >"$WORK/exits"
	ktap_same "btrfs, register_btrfs blacklisted: every earlier step's exit in exact reverse" "$WORK/want" "$WORK/exits"
	echo >"$I/trace"
	modload "$MODDIR/btrfs.ko"
	state >"$WORK/again"
	inits_of "$I/trace" >"$WORK/inits2"
	pair_exits btrfs "$I/trace" unwind >"$WORK/exits2"
	if [ "$LOAD_ERR" = 1 ] && ! loaded btrfs && cmp -s "$WORK/inits" "$WORK/inits2" &&
		cmp -s "$WORK/exits" "$WORK/exits2" && cmp -s "$WORK/before" "$WORK/again"; then
		ktap_ok "btrfs, register_btrfs blacklisted: a second load fails the same way at the same step"
	else
		ktap_fail "btrfs, register_btrfs blacklisted: a second load fails the same way at the same step" \
			"errno $LOAD_ERR; inits: $(diff "$WORK/inits" "$WORK/inits2" | grep '^[<>]' | head -n 3 | tr '\n' ' ')exits: $(diff "$WORK/exits" "$WORK/exits2" | grep '^[<>]' | head -n 3 | tr '\n' ' ')state: $(diff "$WORK/before" "$WORK/again" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
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

if [ "$events" = 0 ] || [ "${INITEXIT_KERNEL:-patched}" = stock ]; then
	ktap_skip "btrfs: one pair per step, in order" "no initexit events on this kernel (stock)"
	ktap_skip "btrfs: unload runs the exits in exact reverse" "no initexit events on this kernel (stock)"
	ktap_finish
	exit 0
fi
inits_of "$I/trace" | sed 's/ [^ ]*$//' >"$WORK/inits"
pair_exits btrfs "$I/trace" unload >"$WORK/exits"
want_inits 0 | sed 's/ [^ ]*$//' >"$WORK/want"
ktap_same "btrfs: one pair per step, in order" "$WORK/want" "$WORK/inits"
# shellcheck disable=SC2086 # one exit per line on purpose
printf '%s\n' $EXITS >"$WORK/want"
ktap_same "btrfs: unload runs the exits in exact reverse" "$WORK/want" "$WORK/exits"
ktap_finish
