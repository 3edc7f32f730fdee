# shellcheck shell=bash
# Constants and arrays here are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared helpers for the initexit host scripts (sourced, not executed).
#
# Conventions: progress and logs go to stderr, results to stdout; every
# command that builds or boots something goes through run_cmd so that
# --dry-run can print it instead; step_begin/step_end time each step.

# Repository root (scripts/lib/common.sh -> ../..).
INITEXIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Exit codes of the host scripts that are not a guest script's own status.
readonly EXIT_USAGE=2
readonly EXIT_TIMEOUT=124	# the guest hung; same code as timeout(1)
readonly EXIT_HARNESS=125	# build, patch, config, boot, panic or capture failed

# Every cache path the scripts own. Override with INITEXIT_CACHE.
CACHE=${INITEXIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/initexit}
# Only one kernel build at a time on a small machine: every kernel `make`
# takes this lock (scripts of other team members use the same file).
BUILD_LOCK=${INITEXIT_BUILD_LOCK:-$CACHE/build.lock}
: "${INITEXIT_SOURCE_TARBALL:=/usr/src/linux-source-6.12.tar.xz}"
: "${INITEXIT_SOURCE_PACKAGE:=linux-source-6.12}"
DRY_RUN=${DRY_RUN:-0}
PYTHON=/usr/bin/python3

# ---------------------------------------------------------------- logging

if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then
	_c_bold=$'\e[1m' _c_red=$'\e[31m' _c_yel=$'\e[33m' _c_off=$'\e[0m'
else
	_c_bold='' _c_red='' _c_yel='' _c_off=''
fi

log() { printf '%s[initexit]%s %s\n' "$_c_bold" "$_c_off" "$*" >&2; }
warn() { printf '%s[initexit] WARNING:%s %s\n' "$_c_yel" "$_c_off" "$*" >&2; }
err() { printf '%s[initexit] ERROR:%s %s\n' "$_c_red" "$_c_off" "$*" >&2; }

# die MESSAGE... : print the message and exit with EXIT_HARNESS (or $DIE_CODE).
die() {
	err "$@"
	exit "${DIE_CODE:-$EXIT_HARNESS}"
}

# bad_usage MESSAGE: a usage error (the calling script defines usage()).
bad_usage() {
	err "$*"
	usage >&2
	exit "$EXIT_USAGE"
}

# need_value "$@" (at an option that takes a value): a usage error when the
# value is missing or empty.
need_value() {
	if [ $# -lt 2 ] || [ -z "$2" ]; then bad_usage "$1 needs a value"; fi
}

# A banner that cannot be missed in a long build log.
loud() {
	local line='========================================================================'
	printf '%s%s\n' "$_c_yel" "$line" >&2
	local msg
	for msg in "$@"; do printf '  %s\n' "$msg" >&2; done
	printf '%s%s\n' "$line" "$_c_off" >&2
}

# ------------------------------------------------------------------ steps

# Step times are appended to $STEPS_FILE as "name<TAB>seconds" (meta.json
# reads it) and printed as they finish.
STEPS_FILE=${STEPS_FILE:-}
_step_name=''
_step_t0=''

now() { printf '%s' "${EPOCHREALTIME/,/.}"; }

# elapsed T0 : seconds since T0 with one decimal.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

step_begin() {
	[ -z "$_step_name" ] || step_end
	_step_name=$1
	_step_t0=$(now)
	log "==> $_step_name"
}

step_end() {
	[ -n "$_step_name" ] || return 0
	local secs
	secs=$(elapsed "$_step_t0")
	log "<== $_step_name (${secs} s)"
	if [ -n "$STEPS_FILE" ]; then
		printf '%s\t%s\n' "$_step_name" "$secs" >>"$STEPS_FILE"
	fi
	_step_name=''
}

# --------------------------------------------------------------- commands

# show_cmd CMD... : print a command the way a user can paste it.
show_cmd() {
	local out='' a
	for a in "$@"; do out+=" $(printf '%q' "$a")"; done
	printf '%s+%s%s\n' "$_c_bold" "$_c_off" "$out" >&2
}

# run_cmd CMD... : print, then run unless --dry-run.
run_cmd() {
	show_cmd "$@"
	[ "$DRY_RUN" = 1 ] && return 0
	"$@"
}

# locked_make TREE ARGS... : a kernel make under the machine-wide build lock.
locked_make() {
	local tree=$1
	shift
	mkdir -p "$CACHE" "$(dirname "$BUILD_LOCK")"
	if [ "$DRY_RUN" = 0 ] && ! flock -n "$BUILD_LOCK" true; then
		log "another kernel build holds $BUILD_LOCK: waiting for it"
	fi
	run_cmd flock "$BUILD_LOCK" make -C "$tree" "${KMAKE_VARS[@]}" "$@"
}

# Variables every kernel make gets, so that config, kernel and out-of-tree
# modules see the same compiler (kconfig records CC's version) and so that
# ccache hits across trees and rebuilds (fixed timestamp and build ids).
KMAKE_VARS=(
	-j2
	"CC=ccache gcc"
	"KBUILD_BUILD_TIMESTAMP=Thu Jan  1 00:00:00 UTC 1970"
	KBUILD_BUILD_USER=initexit
	KBUILD_BUILD_HOST=initexit
	KBUILD_BUILD_VERSION=1
)
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$CACHE}
export CCACHE_NOHASHDIR=1

# --------------------------------------------------------------- packages

# need_pkgs PKG... : install the Debian packages that are missing, saying so.
need_pkgs() {
	local missing=() p status
	for p in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		case "$status" in
		*" installed") ;;
		*) missing+=("$p") ;;
		esac
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	log "installing missing Debian packages: ${missing[*]}"
	local sudo=()
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 ||
			die "packages missing (${missing[*]}) and not root: install them with apt-get"
		sudo=(sudo)
	fi
	if [ "$DRY_RUN" = 1 ]; then
		show_cmd "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
		return 0
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
		log "apt-get install failed; refreshing package lists once"
		"${sudo[@]}" apt-get update >&2 || true
		"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "could not install: ${missing[*]}"
	fi
}

# Package sets per job, so each entry point installs only what it uses.
PKGS_KERNEL=(linux-source-6.12 xz-utils git gcc make flex bison bc libelf-dev
	libssl-dev kmod cpio ccache util-linux coreutils)
PKGS_GUEST=(qemu-system-x86 busybox-static trace-cmd cpio gzip tar libc6-dev rsync)
PKGS_TEST=(python3 python3-pytest shellcheck mypy chromium lld python3-pip python3-venv time)
# scripts/bench: host-side commands timed with warmup, runs and JSON export.
PKGS_BENCH=(hyperfine)

# ---------------------------------------------------------------- hashing

sha() { sha256sum | cut -c1-16; }

# analysis_check RUNDIR : the analysis exit status scripts/run recorded in
# RUNDIR/meta.json; empty when the analysis did not run or there is none.
analysis_check() {
	"$PYTHON" -c 'import json,sys; v=json.load(open(sys.argv[1])).get("analysis_check"); print("" if v is None else v)' \
		"$1/meta.json" 2>/dev/null || true
}

# source_id : identifies the kernel source the trees are unpacked from.
source_id() {
	local ver
	ver=$(dpkg-query -W -f='${Version}' "$INITEXIT_SOURCE_PACKAGE" 2>/dev/null || echo unpackaged)
	printf '%s %s %s' "$INITEXIT_SOURCE_PACKAGE" "$ver" \
		"$(stat -c '%s-%Y' "$INITEXIT_SOURCE_TARBALL" 2>/dev/null || echo missing)"
}

# series_files [PATCHDIR] : patch paths listed in PATCHDIR/series, in order
# (quilt format: '#' comments, blank lines, and options after the name).
series_files() {
	local dir=${1:-$INITEXIT_ROOT/patches} name _rest
	[ -f "$dir/series" ] || return 0
	while read -r name _rest; do
		case "$name" in '' | '#'*) continue ;; esac
		printf '%s\n' "$dir/$name"
	done <"$dir/series"
}

# series_digest DIGEST [PATCHDIR] : a hash of the series' names and of
# DIGEST (a command: the file on stdin) of each file, in order.
series_digest() {
	local digest=$1 f
	shift
	{
		while read -r f; do
			printf '%s ' "$(basename "$f")"
			if [ -f "$f" ]; then "$digest" <"$f"; else echo missing; fi
		done < <(series_files "$@")
	} | sha
}

# series_hash [PATCHDIR] : content hash of the series (names and contents).
series_hash() { series_digest sha256sum "$@"; }

# patch_code < PATCH : the part of a git format-patch file a kernel built
# from it depends on: from its first "diff --git" line up to its
# signature ("-- "), so without the message (and base-commit and
# prerequisite-patch-id lines kept: the latter follow the fixes' code).
patch_code() {
	awk '/^diff --git /{ p = 1 } p { a[++n] = $0 } p && /^-- $/ { last = n }
		END { m = last ? last - 1 : n; for (i = 1; i <= m; i++) print a[i] }'
}

# series_code_hash [PATCHDIR] : a hash of the code of the patches PATCHDIR's
# series lists (patch_code), in order: what scripts/test keys the boots'
# results on, so that a commit message or a cover letter edited boots
# nothing again. series_hash, the tree's stamp, hashes the whole files, so
# the managed tree still takes every edit of a message.
series_code_hash() { series_digest patch_code_sha "$@"; }
patch_code_sha() { patch_code | sha; }

# series_key PATCHDIR : what a tree made of PATCHDIR's series was made from:
# the source, the series and, when PATCHDIR/fixes/series exists, the
# stand-alone fixes applied before it (the stamp apply_series compares).
series_key() {
	local pdir=$1 key
	key="$(source_id) series=$(series_hash "$pdir")"
	[ ! -f "$pdir/fixes/series" ] || key="$key fixes=$(series_hash "$pdir/fixes")"
	printf '%s' "$key"
}

# series_base TREE : the commit TREE's main series starts from: the tag
# initexit-fixes (initexit-base + patches/fixes/series, set by apply_series)
# when TREE has it, else initexit-base.
series_base() {
	if git -C "$1" rev-parse -q --verify 'initexit-fixes^{commit}' >/dev/null 2>&1; then
		echo initexit-fixes
	else
		echo initexit-base
	fi
}

# ------------------------------------------------------------------- misc

# Print the last N lines of a file, indented, under a heading.
tail_file() {
	local file=$1 n=${2:-30}
	[ -s "$file" ] || return 0
	printf -- '---- last %s lines of %s ----\n' "$n" "$file" >&2
	tail -n "$n" "$file" | sed 's/\r$//' >&2
	printf -- '---- end of %s ----\n' "$file" >&2
}
