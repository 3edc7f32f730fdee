# shellcheck shell=bash
# Kernel configuration: the fragments of a flavour, their key, the check
# Sourced by scripts/lib/kernel.sh (after common.sh); see its header for
# the layout under $CACHE and the stamps.
# shellcheck disable=SC2034

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
