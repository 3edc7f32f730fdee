#!/bin/bash
# Lint: every host script of the harness is shellcheck clean (bash), the
# guest scripts too (POSIX sh: busybox ash), and every Python file (the
# analysis package, scripts/lib, the boot checks) passes mypy --strict.
# No guest boot.
set -u
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

if ! command -v shellcheck >/dev/null; then
	skip "shellcheck" "shellcheck is not installed (apt-get install shellcheck)"
else
	for f in scripts/run scripts/test scripts/regen-patches scripts/bench scripts/check-series scripts/mutation-test \
		scripts/fresh-machine \
		initramfs/build scripts/lib/*.sh bench/*.sh tests/harness/*.sh; do
		expect "shellcheck $f" shellcheck "$f"
	done
	for f in initramfs/init initramfs/*.sh .ci/run; do
		expect "shellcheck -s sh $f (POSIX sh for busybox ash)" shellcheck -s sh "$f"
	done
	# The in-guest tests source ktap.inc through a path shellcheck cannot
	# follow (SC1091); everything else must be clean.
	for f in tests/guest/*.sh; do
		expect "shellcheck -s sh $f (in-guest test)" shellcheck -s sh -e SC1091 "$f"
	done
fi
if ! command -v mypy >/dev/null; then
	skip "mypy --strict" "mypy is not installed (apt-get install mypy)"
else
	mypy_cache=$(mktemp -d)
	expect "mypy --strict analysis scripts/lib" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" analysis scripts/lib/*.py
	expect "mypy --strict tests/kernel" \
		env MYPYPATH="$ROOT:$ROOT/tests/kernel" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" tests/kernel/*.py
	rm -rf "$mypy_cache"
fi
ktap_end
