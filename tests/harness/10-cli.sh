#!/bin/bash
# Harness CLI: --help and bad arguments on every entry point, and
# scripts/run --dry-run on an empty cache prints the make, qemu and
# trace-cmd commands while building and booting nothing. No guest boot.
set -u
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

entry_points=(scripts/run scripts/test scripts/regen-patches scripts/check-series scripts/bench
	scripts/mutation-test scripts/fresh-machine initramfs/build)
missing_value=('scripts/run --out' 'scripts/run --diff-with' 'scripts/run --append' 'scripts/run --kconfig' 'scripts/test --out'
	'scripts/run --include' 'scripts/run --kselftest' 'initramfs/build --include'
	'scripts/regen-patches --tree' 'scripts/bench --runs' 'scripts/mutation-test --only'
	'scripts/fresh-machine --dir' 'initramfs/build --env')
dry_run_prints=('tar -xf /usr/src/linux-source-6.12.tar.xz' 'make -C .* tinyconfig'
	'merge_config.sh' 'make -C .* bzImage modules' 'qemu-system-x86_64 .*-no-reboot'
	'trace-cmd extract -o /tmp/out/boot.dat' 'trace-cmd record -e initcall -e module'
	'trace-cmd report -N -t -i .*/boot.dat')
ktap_plan $((4 * ${#entry_points[@]} + 2 * ${#missing_value[@]} + ${#dry_run_prints[@]} + 26))

for cmd in "${entry_points[@]}"; do
	"$ROOT/$cmd" --help >"$tmp/o" 2>&1
	ktap_check "$cmd --help exits 0" [ $? = 0 ]
	ktap_check "... with a usage text" grep -q '^Usage: ' "$tmp/o"
	"$ROOT/$cmd" --no-such-option >"$tmp/o" 2>&1
	ktap_check "$cmd with a bad argument exits 2" [ $? = 2 ]
	ktap_check "... and prints the usage" grep -q '^Usage: ' "$tmp/o"
done

# An option whose value is missing is a usage error too (not bash's ${2:?}).
for cmd in "${missing_value[@]}"; do
	# shellcheck disable=SC2086  # split into command and option
	"$ROOT"/$cmd >"$tmp/o" 2>&1
	ktap_check "$cmd with no value exits 2" [ $? = 2 ]
	ktap_check "... and says the value is missing" grep -q -e 'needs a\(n argument\| value\)' "$tmp/o"
done
"$ROOT/scripts/run" --out '' >/dev/null 2>&1
ktap_check "scripts/run --out '' is a usage error" [ $? = 2 ]

"$ROOT/scripts/run" --accel warp >/dev/null 2>&1
ktap_check "scripts/run --accel warp is a usage error" [ $? = 2 ]
"$ROOT/scripts/run" --timeout soon >/dev/null 2>&1
ktap_check "scripts/run --timeout soon is a usage error" [ $? = 2 ]
INITEXIT_CACHE=$tmp/cache0 "$ROOT/scripts/run" --dry-run --fail-on-findings --out "$tmp/out0" >/dev/null 2>&1
ktap_check "scripts/run takes --fail-on-findings" [ $? = 0 ]

# --rootfs host, --include, --kselftest (the host's userland in the guest).
# usage_error NAME MSG ARGS... : scripts/run ARGS exits 2 saying MSG.
usage_error() {
	local name=$1 msg=$2 rc=0
	shift 2
	INITEXIT_CACHE=$tmp/cache0 "$ROOT/scripts/run" --dry-run --out "$tmp/out0" "$@" >"$tmp/o" 2>&1 || rc=$?
	if [ "$rc" = 2 ] && grep -q -e "$msg" "$tmp/o"; then
		ktap_ok "$name"
	else
		ktap_fail "$name" "exit $rc, wanted 2 and \"$msg\"; output: $(tail -3 "$tmp/o")"
	fi
}
usage_error "scripts/run --rootfs usb is a usage error" 'rootfs: initramfs or host' --rootfs usb
usage_error "scripts/run --rootfs host --debug is a usage error" 'two kernels' --rootfs host --debug
usage_error "scripts/run --rootfs host --builtin-fs is a usage error" 'two kernels' --rootfs host --builtin-fs
usage_error "scripts/run --include a missing folder is a usage error" 'no such folder' --include "$tmp/none"
usage_error "scripts/run --kselftest with a shell word in it is a usage error" 'target names' --kselftest 'kmod;ls'
INITEXIT_CACHE=$tmp/cache0 "$ROOT/scripts/run" --dry-run --rootfs host --include "$ROOT/tests/configs/host-include" \
	--out "$tmp/out0" >/dev/null 2>"$tmp/dryh"
ktap_check "--rootfs host --dry-run: QEMU shares / read-only over 9p" \
	grep -q -e '^+ .*qemu-system-x86_64 .*-fsdev local.*id=hostroot.*path=/.*readonly=on.*virtio-9p-pci' "$tmp/dryh"
ktap_check "... the kernel gets kconfig/variants/host-rootfs.config, in a tree of its own" \
	grep -q -e '^+ .*linux-host-rootfs.*' "$tmp/dryh"
ktap_check "... the initramfs gets --include and INITEXIT_ROOTFS=host" \
	grep -q -e '^+ .*initramfs/build .*--env INITEXIT_ROOTFS=host --include .*tests/configs/host-include' "$tmp/dryh"

# initramfs/build --include (both --rootfs modes): the folder's files,
# modes and links at /initexit/include; a name with a blank is refused.
mkdir -p "$tmp/inc/sub"
echo data >"$tmp/inc/sub/file.txt"
printf '#!/bin/sh\n' >"$tmp/inc/run.sh"
chmod 755 "$tmp/inc/run.sh"
ln -s sub/file.txt "$tmp/inc/link"
"$ROOT/initramfs/build" -o "$tmp/inc.cpio.gz" --include "$tmp/inc" >"$tmp/o" 2>&1
zcat "$tmp/inc.cpio.gz" 2>/dev/null | cpio -itv 2>/dev/null >"$tmp/inc.list"
ktap_check "initramfs/build --include: a file of a subfolder is at /initexit/include" \
	grep -q ' initexit/include/sub/file.txt$' "$tmp/inc.list"
ktap_check "... an executable keeps its mode" grep -q '^-rwxr-xr-x .* initexit/include/run.sh$' "$tmp/inc.list"
ktap_check "... a link stays a link" grep -q ' initexit/include/link -> sub/file.txt$' "$tmp/inc.list"
: >"$tmp/inc/a blank"
"$ROOT/initramfs/build" -o "$tmp/inc2.cpio.gz" --include "$tmp/inc" >"$tmp/o" 2>&1
ktap_check "... a name with a blank is refused, named" sh -c "[ $? != 0 ] && grep -q 'a blank in its name' '$tmp/o'"

# Dry run against an empty cache: nothing may be created there.
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/dry"
rc=$?
ktap_check "scripts/run --dry-run exits 0" [ "$rc" = 0 ]
for want in "${dry_run_prints[@]}"; do
	ktap_check "--dry-run prints: $want" grep -q -e "^+ .*$want" "$tmp/dry"
done
ktap_check "--dry-run unpacked no tree" [ ! -e "$tmp/cache/linux-patched" ]
ktap_check "--dry-run booted nothing (no console.log)" [ ! -e "$tmp/out/console.log" ]
[ "$KTAP_FAIL" = 0 ] || sed 's/^/# /' "$tmp/dry"

# The comparison with an earlier run: by default the newest earlier run-*
# folder beside the output folder with the same --kernel.
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --diff-with "$tmp" >"$tmp/o" 2>&1
ktap_check "scripts/run --diff-with a folder without traces is a usage error" \
	grep -q 'not a scripts/run output folder' "$tmp/o"
runs=$tmp/runs
mkdir -p "$runs/run-20260101-000000" "$runs/run-20260101-000001" "$runs/run-20260101-000002"
printf '{"kernel": "patched"}\n' >"$runs/run-20260101-000000/meta.json"
printf '{"kernel": "patched"}\n' >"$runs/run-20260101-000001/meta.json"
printf '{"kernel": "stock"}\n' >"$runs/run-20260101-000002/meta.json"
for d in "$runs"/run-*; do : >"$d/boot.report.txt"; done
rm "$runs/run-20260101-000001/boot.report.txt"   # a run that brought no trace home
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --out "$runs/run-20260101-000003" >/dev/null 2>"$tmp/dry2"
ktap_check "--dry-run diffs with the newest earlier patched run that has a trace" \
	grep -q -e '^+ .*analysis diff .*run-20260101-000000/boot.report.txt' "$tmp/dry2"
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --kernel stock --out "$runs/run-20260101-000003" >/dev/null 2>"$tmp/dry3"
ktap_check "... and a stock run with the newest earlier stock run" \
	grep -q -e '^+ .*analysis diff .*run-20260101-000002/boot.report.txt' "$tmp/dry3"
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --no-diff --out "$runs/run-20260101-000003" >/dev/null 2>"$tmp/dry4"
n=$(grep -c "analysis diff" "$tmp/dry4")
ktap_check "--no-diff compares with nothing" [ "$n" = 0 ]
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --no-diff --diff-with "$runs/run-20260101-000000" >"$tmp/o" 2>&1
ktap_check "--no-diff with --diff-with is a usage error" grep -q 'contradict' "$tmp/o"
INITEXIT_CACHE=$tmp/cache "$ROOT/scripts/run" --dry-run --out "$runs/run-20260101-000000" \
	--diff-with "$runs/run-20260101-000000" >"$tmp/o" 2>&1
ktap_check "--diff-with the output folder itself is a usage error" grep -q 'output folder itself' "$tmp/o"
ktap_check "... that removed nothing from it" [ -f "$runs/run-20260101-000000/boot.report.txt" ]
ktap_finish
