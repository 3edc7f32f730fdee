#!/bin/bash
# Lint: every host script of the harness is shellcheck clean (bash), the
# guest scripts too (POSIX sh: busybox ash), and write_meta.py passes
# mypy --strict. No guest boot.
set -u
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

if ! command -v shellcheck >/dev/null; then
	skip "shellcheck" "shellcheck is not installed (apt-get install shellcheck)"
else
	for f in scripts/run scripts/test scripts/regen-patches initramfs/build scripts/lib/*.sh \
		tests/harness/*.sh; do
		expect "shellcheck $f" shellcheck "$f"
	done
	for f in initramfs/init initramfs/*.sh .ci/run; do
		expect "shellcheck -s sh $f (POSIX sh for busybox ash)" shellcheck -s sh "$f"
	done
fi
if ! command -v mypy >/dev/null; then
	skip "mypy --strict scripts/lib/write_meta.py" "mypy is not installed"
else
	expect "mypy --strict scripts/lib/write_meta.py" \
		mypy --strict --no-error-summary --cache-dir=/dev/null scripts/lib/write_meta.py
fi
ktap_end
