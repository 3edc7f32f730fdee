# shellcheck shell=bash
# Modules for the guest: out-of-tree module folders and the kernel's own.
# Sourced by scripts/lib/kernel.sh (after common.sh); see its header for
# the layout under $CACHE and the stamps.
# shellcheck disable=SC2034

# ----------------------------------------------------- out-of-tree modules

# module_dirs SRC : the folders to pass as M=: SRC itself when it has a
# Kbuild or Makefile, else each direct subfolder that has one.
module_dirs() {
	local src=$1 d
	if [ -f "$src/Kbuild" ] || [ -f "$src/Makefile" ]; then
		printf '%s\n' "$src"
		return 0
	fi
	for d in "$src"/*/; do
		d=${d%/}
		if [ -f "$d/Kbuild" ] || [ -f "$d/Makefile" ]; then printf '%s\n' "$d"; fi
	done
}

# build_modules SRC SET DEST : build every module folder of SRC against
# $KERNEL_TREE in a copy under $CACHE/kmod and put the .ko files in DEST.
# A copy whose sources and kernel did not change is not rebuilt.
# in_tree_modules DEST : copy the kernel's own modules (its modules.order,
# e.g. fs/fuse/fuse.ko of kconfig/base.config) into DEST, beside the
# project's test modules.
in_tree_modules() {
	local dest=$1 obj ko n=0
	[ -f "$KERNEL_TREE/modules.order" ] || return 0
	mkdir -p "$dest"
	while read -r obj; do
		obj=${obj%.o}
		ko=$KERNEL_TREE/${obj%.ko}.ko
		[ -f "$ko" ] || die "$ko is in modules.order but was not built"
		[ ! -e "$dest/$(basename "$ko")" ] ||
			die "an in-tree module and a project module are both named $(basename "$ko")"
		cp "$ko" "$dest/"
		n=$((n + 1))
	done <"$KERNEL_TREE/modules.order"
	log "the kernel's own modules: $n (modules.order) -> project"
}

build_modules() {
	local src=$1 set=$2 dest=$3 dir name work key
	local flavour=${KERNEL_FLAVOUR:-patched} kset
	# One folder per kernel tree: runs of a --tree of one's own (bench,
	# mutation-test, check-configs) must not share the managed tree's.
	kset=$flavour
	[ -z "${TREE_OVERRIDE:-}" ] || kset=$(override_tree_id)
	mkdir -p "$dest"
	[ -d "$src" ] || return 0
	local dirs=()
	mapfile -t dirs < <(module_dirs "$src")
	if [ "${#dirs[@]}" -eq 0 ]; then
		warn "$src holds no folder with a Kbuild or Makefile: no modules built from it"
		return 0
	fi
	for dir in "${dirs[@]}"; do
		name=$(basename "$dir")
		work=$CACHE/kmod/$kset/$set/$name
		key=$( {
			cat "$KERNEL_TREE/.initexit-built" 2>/dev/null || date +%s%N
			sha256sum "$KERNEL_TREE/Module.symvers" 2>/dev/null
			(cd "$dir" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '.*.cmd' -print0 |
				sort -z | xargs -0r sha256sum)
		} | sha)
		if [ -f "$work/.initexit-built" ] && [ "$(cat "$work/.initexit-built")" = "$key" ]; then
			log "modules in $dir up to date"
		else
			run_cmd rm -rf "$work"
			run_cmd mkdir -p "$(dirname "$work")"
			run_cmd cp -a "$dir" "$work"
			if ! locked_make "$KERNEL_TREE" M="$work" modules >&2; then
				die "building the modules in $dir against $KERNEL_TREE failed (see above)"
			fi
			[ "$DRY_RUN" = 1 ] || printf '%s\n' "$key" >"$work/.initexit-built"
		fi
		[ "$DRY_RUN" = 1 ] && continue
		local ko found=0
		while IFS= read -r -d '' ko; do
			if [ -e "$dest/$(basename "$ko")" ]; then
				die "two modules named $(basename "$ko") in $src: module names must be unique"
			fi
			cp "$ko" "$dest/"
			found=$((found + 1))
		done < <(find "$work" -name '*.ko' -print0)
		log "$dir: $found module(s) -> $set"
	done
}

# --------------------------------------------------------- the kselftest

# The series' kselftest collection, installed in the guest's /kselftest
# (initramfs/build --kselftest) and run by initramfs/ktap-runner.sh.
KSELFTEST_TARGETS=module/initexit

# kselftests DEST [required] : `make install` of the targets
# $KSELFTEST_TARGETS lists of $KERNEL_TREE's tools/testing/selftests into
# DEST (the helper programs built with the host's gcc, as kselftest does);
# a target the tree lacks is left out (the stock kernel has no
# module/initexit), or with "required" (scripts/run --kselftest) stops the
# run; nothing, and DEST absent, when none is left.
kselftests() {
	local dest=$1 required=${2:-} sel=$KERNEL_TREE/tools/testing/selftests t
	local -a targets=()
	rm -rf "$dest"
	for t in $KSELFTEST_TARGETS; do
		if [ -f "$sel/$t/Makefile" ]; then
			targets+=("$t")
		elif [ -n "$required" ]; then
			die "--kselftest: no target $t in $sel (a folder with a Makefile there: ls $sel)"
		else
			log "no kselftest $t in $KERNEL_TREE: not in the guest"
		fi
	done
	[ "${#targets[@]}" -gt 0 ] || return 0
	if ! run_cmd make -s -C "$sel" TARGETS="${targets[*]}" install INSTALL_PATH="$dest" >&2; then
		die "installing the kselftest ${targets[*]} of $KERNEL_TREE failed (see above)"
	fi
	log "kselftest ${targets[*]}: $(grep -c . "$dest/kselftest-list.txt" 2>/dev/null || echo 0) test(s) -> $dest"
}
