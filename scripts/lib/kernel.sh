# shellcheck shell=bash
# Kernel trees, series application, configuration and builds.
# Sourced after common.sh. Results for the caller: KERNEL_TREE,
# KERNEL_IMAGE, KERNEL_RELEASE.
# shellcheck disable=SC2034
#
# Layout under $CACHE:
#   linux-patched/  Debian's 6.12 source as a git repo; tag initexit-base is
#                   the pristine tarball, branch initexit = base + patches/.
#   linux-stock/    the same source, never patched.
#   kmod/<flavour>/<set>/<name>/  copies of out-of-tree module sources,
#                   built there so the repository stays clean.
# Stamps are dotfiles at the top of each tree (the kernel's .gitignore
# ignores them):
#   .initexit-applied  source+series key, then the HEAD commit after git am
#   .initexit-config   config_key of the .config in the tree
#   .initexit-built    build_key of the last successful build

# Bump when the way the harness configures or builds changes.
readonly KBUILD_RECIPE=1

# kconfig_fragments FLAVOUR : fragment files for a flavour, in merge order.
# base.config applies to every kernel; <flavour>.config to one; test.config
# (options the series adds, absent from stock) to the patched kernel only,
# unless INITEXIT_NO_TEST_CONFIG=1 (scripts/bench: stock's exact fragments).
kconfig_fragments() {
	local flavour=$1 dir=$INITEXIT_ROOT/kconfig f
	for f in base.config "$flavour.config"; do
		[ -f "$dir/$f" ] && printf '%s\n' "$dir/$f"
	done
	if [ "$flavour" = patched ] && [ "${INITEXIT_NO_TEST_CONFIG:-0}" != 1 ] &&
		[ -f "$dir/test.config" ]; then
		printf '%s\n' "$dir/test.config"
	fi
	local extra
	for extra in "${EXTRA_FRAGMENTS[@]}"; do printf '%s\n' "$extra"; done
}
EXTRA_FRAGMENTS=()

# config_key FLAVOUR : hash of everything that decides .config.
config_key() {
	local f
	{
		echo "recipe $KBUILD_RECIPE ${KMAKE_VARS[*]}"
		source_id
		echo
		while read -r f; do
			printf '%s ' "$(basename "$f")"
			sha256sum <"$f"
		done < <(kconfig_fragments "$1")
	} | sha
}

# ---------------------------------------------------------------- trees

# git_tree TREE ARGS... : git in a kernel tree with the harness identity.
git_tree() {
	git -C "$1" -c user.name='initexit harness' \
		-c user.email='harness@initexit.invalid' "${@:2}"
}

# tree_create TREE : unpack the source tarball into TREE as a git repo whose
# first commit is tagged initexit-base. A sibling tree made from the same
# source is cloned instead (hard-linked objects, no second unpack).
tree_create() {
	local tree=$1 sid sibling tmp
	sid=$(source_id)
	# A dry run on a fresh machine has only printed the apt-get that would
	# bring the tarball: go on printing what would follow.
	[ -f "$INITEXIT_SOURCE_TARBALL" ] || [ "$DRY_RUN" = 1 ] ||
		die "no kernel source at $INITEXIT_SOURCE_TARBALL (apt-get install $INITEXIT_SOURCE_PACKAGE)"
	for sibling in "$CACHE"/linux-patched "$CACHE"/linux-stock; do
		[ "$sibling" != "$tree" ] || continue
		if [ -d "$sibling/.git" ] &&
			[ "$(git -C "$sibling" tag -l --format='%(contents:subject)' initexit-base 2>/dev/null)" = "$sid" ]; then
			log "cloning $tree from $sibling (same source: $sid)"
			run_cmd git clone -q --no-checkout "$sibling" "$tree"
			run_cmd git -C "$tree" checkout -q -B initexit initexit-base
			[ "$DRY_RUN" = 1 ] && return 0
			git -C "$tree" remote remove origin
			git -C "$tree" config core.untrackedCache true
			git -C "$tree" config gc.auto 0
			cp "$sibling/.gitignore" "$tree/.gitignore"
			git -C "$tree" update-index --skip-worktree .gitignore
			return 0
		fi
	done
	log "unpacking $INITEXIT_SOURCE_TARBALL into $tree"
	tmp=$tree.unpack.$$
	run_cmd mkdir -p "$tmp"
	run_cmd tar -xf "$INITEXIT_SOURCE_TARBALL" -C "$tmp" --strip-components=1
	if [ "$DRY_RUN" = 1 ]; then
		show_cmd git init -q -b initexit "$tmp"
		show_cmd git -C "$tmp" add -A -f
		show_cmd git -C "$tmp" commit -q --no-verify -m "Linux source from $INITEXIT_SOURCE_PACKAGE ($sid)"
		show_cmd git -C "$tmp" tag -a -m "$sid" initexit-base
		show_cmd mv "$tmp" "$tree"
		return 0
	fi
	git init -q -b initexit "$tmp"
	# Speed up status on a 90k-file tree; the tree is ours, so allow it.
	git -C "$tmp" config core.untrackedCache true
	git -C "$tmp" config gc.auto 0
	log "committing the pristine source (one-time, about a minute)"
	# -f: Debian's top-level .gitignore ignores everything ("/*"); the base
	# commit must hold every file of the tarball.
	git -C "$tmp" add -A -f
	# Fixed dates and identity: the same tarball gives the same base commit
	# id on every machine, so base-commit: lines in patches/ are stable.
	local date
	date="@$(stat -c %Y "$INITEXIT_SOURCE_TARBALL") +0000"
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git_tree "$tmp" commit -q --no-verify -m "Linux source from $INITEXIT_SOURCE_PACKAGE ($sid)"
	GIT_COMMITTER_DATE=$date git_tree "$tmp" tag -a -m "$sid" initexit-base
	# ... and so that `git status`/`git add` see a developer's new files,
	# drop that Debian rule from the work tree only (never committed).
	sed -i -e '\#^/\*$#d' -e '\#^!/debian/$#d' "$tmp/.gitignore"
	git -C "$tmp" update-index --skip-worktree .gitignore
	mv "$tmp" "$tree"
}

# tree_is_clean TREE : no uncommitted changes to tracked files.
tree_is_clean() {
	[ -z "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]
}

# apply_series TREE PATCHDIR : make TREE = initexit-base + the series, unless
# it already is. A developer's commits or edits in TREE are never lost.
apply_series() {
	local tree=$1 pdir=$2 key stamp_key='' stamp_head='' head
	if [ "$DRY_RUN" = 1 ] && [ ! -d "$tree/.git" ]; then
		show_cmd git -C "$tree" reset -q --hard initexit-base
		while read -r patch; do
			show_cmd git -C "$tree" am --no-3way --committer-date-is-author-date "$patch"
		done < <(series_files "$pdir")
		return 0
	fi
	key="$(source_id) series=$(series_hash "$pdir")"
	if [ -f "$tree/.initexit-applied" ]; then
		stamp_key=$(sed -n 1p "$tree/.initexit-applied")
		stamp_head=$(sed -n 2p "$tree/.initexit-applied")
	fi
	head=$(git -C "$tree" rev-parse HEAD 2>/dev/null || echo none)
	if [ "$stamp_key" = "$key" ]; then
		if [ "$head" = "$stamp_head" ] && tree_is_clean "$tree"; then
			log "series already applied in $tree (series $(series_hash "$pdir"))"
		else
			loud "$tree has changes that are not in $pdir:" \
				"building the tree as it is. When done, commit them there and run" \
				"scripts/regen-patches to write them into patches/."
		fi
		return 0
	fi
	if ! tree_is_clean "$tree"; then
		git -C "$tree" status --short --untracked-files=no | head -20 >&2
		die "$tree has uncommitted changes and patches/ changed since it was applied." \
			"Commit them in $tree and run scripts/regen-patches (or git stash them), then re-run."
	fi
	local base_tree head_tree
	head_tree=$(git -C "$tree" rev-parse 'HEAD^{tree}')
	base_tree=$(git -C "$tree" rev-parse 'initexit-base^{tree}')
	run_cmd git -C "$tree" reset -q --hard initexit-base
	local patch n=0
	while read -r patch; do
		n=$((n + 1))
		[ -f "$patch" ] || die "patches/series lists $(basename "$patch") but $patch does not exist"
		show_cmd git -C "$tree" am --no-3way --committer-date-is-author-date "$patch"
		[ "$DRY_RUN" = 1 ] && continue
		local out
		# --committer-date-is-author-date: same series, same commit ids.
		if ! out=$(git_tree "$tree" am --no-3way --committer-date-is-author-date "$patch" 2>&1); then
			printf '%s\n' "$out" >&2
			printf -- '---- the hunks that do not apply (git apply --check -v) ----\n' >&2
			git -C "$tree" apply --check -v "$patch" 2>&1 | grep -v '^Checking patch' | head -40 >&2 || true
			git_tree "$tree" am --abort 2>/dev/null || true  # needs an identity on a fresh machine
			rm -f "$tree/.initexit-applied"
			die "patch $n of the series, $(basename "$patch"), does not apply to $(source_id)" \
				"(files and hunks above). $tree now holds the patches before it." \
				"To fix: cd $tree && git am -3 $patch; resolve, git add, git am --continue;" \
				"apply the rest of patches/series the same way, then run scripts/regen-patches."
		fi
	done < <(series_files "$pdir")
	[ "$DRY_RUN" = 1 ] && return 0
	log "applied $n patch(es) from $pdir/series onto initexit-base"
	local new_tree
	new_tree=$(git -C "$tree" rev-parse 'HEAD^{tree}')
	if [ "$head_tree" != "$base_tree" ] && [ "$head_tree" != "$new_tree" ] && [ -n "$stamp_head" ] &&
		[ "$head" != "$stamp_head" ]; then
		local backup
		backup=initexit-backup-$(date +%Y%m%d-%H%M%S)
		git_tree "$tree" branch "$backup" "$head"
		loud "The previous HEAD of $tree held commits that differ from the new patches/." \
			"They are kept on branch $backup (git -C $tree log $backup)."
	fi
	printf '%s\n%s\n' "$key" "$(git -C "$tree" rev-parse HEAD)" >"$tree/.initexit-applied"
}

# prepare_tree FLAVOUR : echo the tree to build for FLAVOUR after making sure
# it exists and (for managed trees) holds the right patches.
prepare_tree() {
	local flavour=$1
	local tree=$CACHE/linux-$flavour
	if [ -n "${TREE_OVERRIDE:-}" ]; then
		[ -f "$TREE_OVERRIDE/Makefile" ] || die "--tree $TREE_OVERRIDE: not a kernel tree (no Makefile)"
		log "using the developer tree $TREE_OVERRIDE as is (no patches applied)"
		KERNEL_TREE=$TREE_OVERRIDE
		return 0
	fi
	if [ -d "$tree/.git" ]; then
		local have
		have=$(git -C "$tree" tag -l --format='%(contents:subject)' initexit-base)
		if [ "$have" != "$(source_id)" ]; then
			tree_is_clean "$tree" ||
				die "$tree has uncommitted changes but the kernel source changed ($have -> $(source_id))." \
					"Save your work (git -C $tree diff) and remove $tree."
			loud "kernel source changed ($have -> $(source_id)): re-creating $tree"
			run_cmd rm -rf "$tree"
		fi
	elif [ -e "$tree" ]; then
		die "$tree exists but is not a git repository; remove it"
	fi
	[ -d "$tree/.git" ] || tree_create "$tree"
	if [ "$flavour" = patched ]; then
		apply_series "$tree" "$INITEXIT_ROOT/patches"
	else
		apply_series "$tree" /dev/null
	fi
	KERNEL_TREE=$tree
}

# ---------------------------------------------------------------- kconfig

# kconfig_check CONFIG FRAGMENT... : every line of the fragments (the last
# one wins for a symbol set twice) must be in CONFIG. Lists the misses.
kconfig_check() {
	local config=$1
	shift
	awk '
	FNR == 1 { fi++ ; name[fi] = FILENAME }
	fi <= nfrag {
		sym = ""; want = ""
		if ($0 ~ /^CONFIG_[A-Za-z0-9_]+=/) {
			sym = $0; sub(/=.*/, "", sym); want = $0
		} else if ($0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set/) {
			sym = $2; want = "unset"
		}
		if (sym != "") {
			if (!(sym in expect)) order[++n] = sym
			expect[sym] = want; from[sym] = FILENAME ":" FNR
		}
		next
	}
	/^CONFIG_[A-Za-z0-9_]+=/ { s = $0; sub(/=.*/, "", s); have[s] = $0 }
	END {
		bad = 0
		for (i = 1; i <= n; i++) {
			s = order[i]; w = expect[s]
			present = (s in have)	# test before any have[s]: a lookup creates it
			if (w == "unset") { if (!present) continue; got = have[s]; w = "# " s " is not set" }
			else { if (present && have[s] == w) continue; got = present ? have[s] : "not set" }
			printf "  %-40s wanted by %s, .config has: %s\n", w, from[s], got
			bad++
		}
		exit bad > 0
	}' nfrag=$# "$@" "$config" >&2
}

# kconfig_generate TREE OUTDIR FLAVOUR : tinyconfig + the flavour's fragments
# into OUTDIR/.config, then check that every fragment line landed.
kconfig_generate() {
	local tree=$1 outdir=$2 flavour=$3 frags=()
	mapfile -t frags < <(kconfig_fragments "$flavour")
	[ "${#frags[@]}" -gt 0 ] || die "no kconfig fragments found in $INITEXIT_ROOT/kconfig"
	local cfg=$outdir/.config
	locked_make "$tree" -s KCONFIG_CONFIG="$cfg" tinyconfig
	run_cmd env KCONFIG_CONFIG="$cfg" "$tree/scripts/kconfig/merge_config.sh" -m -O "$outdir" \
		"$cfg" "${frags[@]}" >/dev/null
	locked_make "$tree" -s KCONFIG_CONFIG="$cfg" olddefconfig
	[ "$DRY_RUN" = 1 ] && return 0
	if ! kconfig_check "$cfg" "${frags[@]}"; then
		err "these kconfig fragment lines did not land in $cfg (above)."
		err "An option is dropped when its dependencies are off or its name is wrong;"
		err "look it up with: make -C $tree menuconfig (press / and type the name)."
		return 1
	fi
	log "kconfig: all lines of ${frags[*]##*/} are in .config"
}

# ------------------------------------------------------------------ build

# build_key TREE FLAVOUR : what a finished build depends on, or '' when the
# tree has uncommitted edits (then make always runs; it is incremental).
build_key() {
	local tree=$1
	[ -d "$tree/.git" ] && tree_is_clean "$tree" || return 0
	printf '%s %s\n' "$(git -C "$tree" rev-parse HEAD)" "$(config_key "$2")" | sha
}

# override_tree_id : "tree-<hash of its path>" for the --tree in use; what
# its locks and module folders are named by.
override_tree_id() {
	printf 'tree-%s' "$(printf '%s' "$(cd "$TREE_OVERRIDE" && pwd)" | sha)"
}

# tree_lock FLAVOUR / tree_unlock : keep two scripts/run from preparing,
# configuring or building in the same managed tree at once (the build lock
# only covers each make). Held from build_kernel until tree_unlock.
tree_lock() {
	[ "$DRY_RUN" = 0 ] || return 0
	mkdir -p "$CACHE"
	# A --tree of one's own is locked by its path, not with the managed tree.
	local name=linux-$1 where=$CACHE/linux-$1
	if [ -n "${TREE_OVERRIDE:-}" ]; then
		where=$TREE_OVERRIDE
		name=$(override_tree_id)
	fi
	exec 8>"$CACHE/$name.lock"
	if ! flock -n 8; then
		log "another scripts/run is using $where: waiting for it"
		flock 8
	fi
}
tree_unlock() {
	[ "$DRY_RUN" = 0 ] || return 0
	flock -u 8 2>/dev/null || true
	exec 8>&-
}

# build_kernel FLAVOUR : prepare the tree, configure, build bzImage + modules.
# Sets KERNEL_TREE, KERNEL_IMAGE, KERNEL_RELEASE. Takes the tree lock; the
# caller releases it with tree_unlock once it built its modules too.
build_kernel() {
	local flavour=$1
	step_begin "kernel tree ($flavour)"
	tree_lock "$flavour"
	prepare_tree "$flavour"
	local tree=$KERNEL_TREE key
	KERNEL_IMAGE=$tree/arch/x86/boot/bzImage
	step_begin "kernel config + build ($flavour)"
	key=$(build_key "$tree" "$flavour")
	if [ -n "$key" ] && [ -f "$KERNEL_IMAGE" ] && [ "$(cat "$tree/.initexit-built" 2>/dev/null)" = "$key" ]; then
		log "kernel up to date in $tree (build key $key): not rebuilding"
		if [ "$DRY_RUN" = 1 ]; then
			log "(a rebuild would run:)"
			show_cmd flock "$BUILD_LOCK" make -C "$tree" "${KMAKE_VARS[@]}" bzImage modules
		fi
	else
		local ckey
		ckey=$(config_key "$flavour")
		if [ "$(cat "$tree/.initexit-config" 2>/dev/null)" != "$ckey" ] || [ ! -f "$tree/.config" ]; then
			kconfig_generate "$tree" "$tree" "$flavour" || die "kernel configuration failed (see above)"
			[ "$DRY_RUN" = 1 ] || printf '%s\n' "$ckey" >"$tree/.initexit-config"
		fi
		mkdir -p "$CACHE/logs"
		local blog=$CACHE/logs/build-$flavour.log
		log "building (log: $blog)"
		if ! locked_make "$tree" bzImage modules 2>&1 | tee "$blog" >&2; then
			tail_file "$blog" 40
			rm -f "$tree/.initexit-built"
			die "kernel build failed in $tree (log: $blog). Fix the tree or the patch, then re-run."
		fi
		[ "$DRY_RUN" = 1 ] || printf '%s\n' "$key" >"$tree/.initexit-built"
		[ -n "$key" ] || rm -f "$tree/.initexit-built"
	fi
	KERNEL_RELEASE=$(cat "$tree/include/config/kernel.release" 2>/dev/null || echo unknown)
	step_end
}

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
