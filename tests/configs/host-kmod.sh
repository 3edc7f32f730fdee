#!/bin/bash
# Guest script of scripts/test's deep rows kselftest-kmod (the patched
# kernel) and stock-kselftest-kmod (stock 6.12), both --rootfs host
# --kselftest kmod: the kernel's own module-loading selftest
# (tools/testing/selftests/kmod/kmod.sh: bash, kmod's modprobe, the
# kernel's request_module() and get_fs_type() from many threads at once)
# run once with each module the series converts as the file system it
# asks for (DEFAULT_KMOD_FS=btrfs, then fuse): loaded by request, by
# many requests at once, refused for a name that does not exist
# ("nope-btrfs"), removed with modprobe -r. Then each module's load
# made to fail through kmod's modprobe: the first, second and third
# allocation of its inits failing in turn (fail-nth); after every failed
# load nothing of the module may be left. The host compares the two kernels'
# results case by case (the same cases pass, the same skip).
#
# Output: $INITEXIT_OUT/ktap/kmod-FS.tap (run_kselftest.sh's KTAP, kmod.sh's
# lines inside), kmod-FS.exit, and ktap/kmod-fail.tap (KTAP: one case per
# module), kmod-fail.exit.
set -u
out=$INITEXIT_OUT/ktap
mkdir -p "$out"
status=0
for fs in btrfs fuse; do
	rc=0
	(cd /kselftest && DEFAULT_KMOD_FS=$fs ./run_kselftest.sh -o 1800) >"$out/kmod-$fs.tap" 2>&1 || rc=$?
	cat "$out/kmod-$fs.tap"
	echo "$rc" >"$out/kmod-$fs.exit"
	[ "$rc" = 0 ] || status=1
done

# left MOD : what of MOD is still there (nothing: empty).
left() {
	local fs=$1
	[ "$fs" != fuse ] || fs='fuse\|fuseblk\|fusectl'
	grep -w "$fs" /proc/filesystems
	[ ! -e "/sys/module/$1" ] || echo "/sys/module/$1"
	[ ! -e "/sys/fs/$1" ] || echo "/sys/fs/$1"
	[ "$1" != fuse ] || [ ! -e /dev/fuse ] || echo /dev/fuse
}

# The faults: failslab and fail_page_alloc, GFP_KERNEL included, quiet,
# only allocations whose stack passes through do_one_initcall() (the
# module's inits, as tests/guest/tools/fault-sweep counts them).
DBG=/sys/kernel/debug
range=$(sort /proc/kallsyms | awk 'found && $1 != a { print "0x" a, "0x" $1; exit }
	$3 == "do_one_initcall" { found = 1; a = $1 }')
read -r range_start range_end <<<"$range"
for d in "$DBG/failslab" "$DBG/fail_page_alloc"; do
	echo N >"$d/ignore-gfp-wait"
	echo 0 >"$d/verbose"
	echo "$range_start" >"$d/require-start"
	echo "$range_end" >"$d/require-end"
done
echo 0 >"$DBG/fail_page_alloc/min-order"

# fail_loads MOD : modprobe MOD (kmod's) with the Nth allocation of its
# inits failing (/proc/self/fail-nth), N = 1, 2, 3: a failed load must
# leave nothing of MOD, a load the fault did not stop (a fault that hit
# an allocation allowed to fail) must unload and leave nothing; at least
# one must fail. Then a clean load and unload.
fail_loads() {
	local mod=$1 n rc failed=0 what=''
	modprobe -r "$mod" 2>/dev/null
	for n in 1 2 3; do
		rc=0
		sh -c 'echo "$1" >/proc/self/fail-nth && exec modprobe -q "$2"' sh "$n" "$mod" 2>/dev/null || rc=$?
		if [ "$rc" != 0 ]; then
			failed=$((failed + 1)) what="$what N=$n: failed (exit $rc);"
		else
			modprobe -r "$mod" || { echo "not ok - $mod: N=$n loaded, modprobe -r failed"; return 1; }
			what="$what N=$n: loaded, unloaded;"
		fi
		if [ -n "$(left "$mod")" ]; then
			echo "not ok - $mod: N=$n ($what) left $(left "$mod" | tr '\n' ' ')"
			return 1
		fi
	done
	[ "$failed" -gt 0 ] || { echo "not ok - $mod: no fault failed its load ($what)"; return 1; }
	if ! { modprobe "$mod" && modprobe -r "$mod" && [ -z "$(left "$mod")" ]; }; then
		echo "not ok - $mod: after the faults, a clean load and unload left something or failed"
		return 1
	fi
	echo "ok - $mod: through kmod's modprobe, the Nth allocation of its inits failing:$what nothing left each time"
}
{
	echo "KTAP version 1"
	echo "1..2"
	i=0 rc=0
	for mod in btrfs fuse; do
		i=$((i + 1))
		line=$(fail_loads "$mod") || rc=1
		echo "${line/ok - /ok $i - }"
	done
	echo "$rc" >"$out/kmod-fail.exit"
} >"$out/kmod-fail.tap"
cat "$out/kmod-fail.tap"
[ "$(cat "$out/kmod-fail.exit")" = 0 ] || status=1
exit "$status"
