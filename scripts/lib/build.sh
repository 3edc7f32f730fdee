# shellcheck shell=bash
# Kernel builds: the build key, the tree lock, bzImage + modules.
# Sourced by scripts/lib/kernel.sh (after common.sh); see its header for
# the layout under $CACHE and the stamps.
# shellcheck disable=SC2034

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
		# A --tree (--debug's clone included) logs apart from the managed tree.
		[ -z "${TREE_OVERRIDE:-}" ] || blog=$CACHE/logs/build-$(override_tree_id).log
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
