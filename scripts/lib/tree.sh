# shellcheck shell=bash
# Kernel trees: unpack, apply the series, prepare a flavour's tree.
# Sourced by scripts/lib/kernel.sh (after common.sh); see its header for
# the layout under $CACHE and the stamps.
# shellcheck disable=SC2034

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

# apply_series TREE PATCHDIR : make TREE = initexit-base + PATCHDIR/fixes/series
# (the stand-alone fixes of stock bugs, when that file exists; the commit
# after them is tagged initexit-fixes) + PATCHDIR/series, unless it already
# is. A developer's commits or edits in TREE are never lost.
apply_series() {
	local tree=$1 pdir=$2 key stamp_key='' stamp_head='' head
	if [ "$DRY_RUN" = 1 ] && [ ! -d "$tree/.git" ]; then
		show_cmd git -C "$tree" reset -q --hard initexit-base
		while read -r patch; do
			show_cmd git -C "$tree" am --no-3way --committer-date-is-author-date "$patch"
		done < <(series_files "$pdir/fixes")
		[ ! -f "$pdir/fixes/series" ] || show_cmd git -C "$tree" tag -f initexit-fixes HEAD
		while read -r patch; do
			show_cmd git -C "$tree" am --no-3way --committer-date-is-author-date "$patch"
		done < <(series_files "$pdir")
		return 0
	fi
	key=$(series_key "$pdir")
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
	# A run killed in the middle of `git am` leaves its session behind, and
	# every later `git am` would refuse to start: drop it.
	local am_dir
	am_dir="$(git -C "$tree" rev-parse --absolute-git-dir)/rebase-apply"
	if [ "$DRY_RUN" = 0 ] && [ -d "$am_dir" ]; then
		log "$tree: dropping the git am session a killed run left ($am_dir)"
		git -C "$tree" am --abort >/dev/null 2>&1 || rm -rf "$am_dir"
	fi
	run_cmd git -C "$tree" reset -q --hard initexit-base
	[ "$DRY_RUN" = 1 ] || git -C "$tree" tag -d initexit-fixes >/dev/null 2>&1 || true
	local n=0 nfixes=0
	if [ -f "$pdir/fixes/series" ]; then
		apply_patches "$tree" "$pdir/fixes" "the fixes series" || return 1
		nfixes=$APPLIED
		run_cmd git -C "$tree" tag -f initexit-fixes HEAD
	fi
	apply_patches "$tree" "$pdir" "the series" || return 1
	n=$APPLIED
	[ "$DRY_RUN" = 1 ] && return 0
	if [ -f "$pdir/fixes/series" ]; then
		log "applied $nfixes fix(es) from $pdir/fixes/series onto initexit-base (tag initexit-fixes)," \
			"then $n patch(es) from $pdir/series"
	else
		log "applied $n patch(es) from $pdir/series onto initexit-base"
	fi
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

# apply_patches TREE DIR NAME : git am each patch of DIR/series (called NAME
# in messages) onto TREE's HEAD; APPLIED = how many. On one that does not
# apply: say which and why, and die.
apply_patches() {
	local tree=$1 dir=$2 name=$3 patch out
	APPLIED=0
	while read -r patch; do
		APPLIED=$((APPLIED + 1))
		[ -f "$patch" ] || die "$dir/series lists $(basename "$patch") but $patch does not exist"
		show_cmd git -C "$tree" am --no-3way --committer-date-is-author-date "$patch"
		[ "$DRY_RUN" = 1 ] && continue
		# --committer-date-is-author-date: same series, same commit ids.
		if ! out=$(git_tree "$tree" am --no-3way --committer-date-is-author-date "$patch" 2>&1); then
			printf '%s\n' "$out" >&2
			printf -- '---- the hunks that do not apply (git apply --check -v) ----\n' >&2
			git -C "$tree" apply --check -v "$patch" 2>&1 | grep -v '^Checking patch' | head -40 >&2 || true
			git_tree "$tree" am --abort 2>/dev/null || true  # needs an identity on a fresh machine
			rm -f "$tree/.initexit-applied"
			die "patch $APPLIED of $name, $(basename "$patch"), does not apply to $(source_id)" \
				"(files and hunks above). $tree now holds the patches before it." \
				"To fix: cd $tree && git am -3 $patch; resolve, git add, git am --continue;" \
				"apply the rest of $dir/series the same way, then run scripts/regen-patches."
		fi
	done < <(series_files "$dir")
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

# managed_clone FLAVOUR DIR [strict] : DIR = a clone of the managed tree
# of FLAVOUR (patched: the series applied by prepare_tree; stock) at its
# HEAD, clean, for builds beside the managed tree's own
# (scripts/mutation-test's mutations, scripts/run --debug's debug kernel,
# --builtin-fs's). The clone keeps its build objects between runs, so its
# builds stay incremental. Uncommitted edits in the managed tree are not
# in the clone: "strict" stops on them, otherwise they are named.
managed_clone() {
	local flavour=$1 dst=$2 strict=${3:-} src head
	tree_lock "$flavour"
	prepare_tree "$flavour"
	src=$KERNEL_TREE
	if ! tree_is_clean "$src"; then
		[ "$strict" != strict ] ||
			die "$src has uncommitted edits: commit them (scripts/regen-patches) or stash them first"
		loud "$src has uncommitted edits: $dst builds its HEAD without them"
	fi
	head=$(git -C "$src" rev-parse HEAD)
	tree_unlock
	if [ ! -d "$dst/.git" ]; then
		log "cloning $src into $dst (once)"
		run_cmd git clone -q "$src" "$dst"
	fi
	run_cmd git -C "$dst" fetch -q "$src" HEAD
	run_cmd git -C "$dst" checkout -q -f --detach "$head"
	run_cmd git -C "$dst" reset -q --hard
	# The tag check-configs and series_lines.py read the series' lines by.
	# (the commit: the annotated tag object itself is not fetched)
	run_cmd git -C "$dst" tag -f initexit-base "$(git -C "$src" rev-parse 'initexit-base^{commit}')" >/dev/null
	# ... and where the main series starts, after patches/fixes/series.
	if [ "$(series_base "$src")" = initexit-fixes ]; then
		run_cmd git -C "$dst" tag -f initexit-fixes "$(git -C "$src" rev-parse 'initexit-fixes^{commit}')" >/dev/null
	else
		[ "$DRY_RUN" = 1 ] || git -C "$dst" tag -d initexit-fixes >/dev/null 2>&1 || true
	fi
}
# patched_clone DIR [strict] : managed_clone of the patched tree.
patched_clone() { managed_clone patched "$@"; }
