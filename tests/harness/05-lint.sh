#!/bin/bash
# Lint: every host script of the harness is shellcheck clean (bash), the
# guest scripts and the KTAP producer too (POSIX sh: busybox ash), and
# every Python file (the analysis package, scripts/lib with the verdicts,
# the boot checks, the verdicts' tests, scripts/peers and its test) passes
# mypy --strict. No guest boot.
set -u
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

bash_files=(scripts/run scripts/test scripts/regen-patches scripts/bench scripts/check-series scripts/mutation-test scripts/check-configs
	scripts/fresh-machine initramfs/build scripts/lib/*.sh bench/*.sh tests/harness/*.sh)
sh_files=(initramfs/init initramfs/*.sh .ci/run tests/lib/ktap.sh)
# The in-guest tests source ktap.inc through a path shellcheck cannot
# follow (SC1091); everything else must be clean.
guest_files=(tests/guest/ktap.inc tests/guest/*.sh tests/guest/tools/fault-sweep tests/debug/*.sh tests/fault-sweep/*.sh tests/stress/*.sh)
# tests/configs/: busybox sh, or bash for --rootfs host (the host's bash),
# by the script's #! line.
for f in tests/configs/*.sh; do
	if head -n1 "$f" | grep -q '^#!/bin/bash'; then bash_files+=("$f"); else guest_files+=("$f"); fi
done
have_shellcheck=0 have_mypy=0
command -v shellcheck >/dev/null && have_shellcheck=1
command -v mypy >/dev/null && have_mypy=1
n_lint=1 n_mypy=1
[ "$have_shellcheck" = 0 ] || n_lint=$((${#bash_files[@]} + ${#sh_files[@]} + ${#guest_files[@]}))
[ "$have_mypy" = 0 ] || n_mypy=5
ktap_plan $((n_lint + n_mypy))

if [ "$have_shellcheck" = 0 ]; then
	ktap_skip "shellcheck" "shellcheck is not installed (apt-get install shellcheck)"
else
	for f in "${bash_files[@]}"; do
		ktap_check "shellcheck $f" shellcheck "$f"
	done
	for f in "${sh_files[@]}"; do
		ktap_check "shellcheck -s sh $f (POSIX sh for busybox ash)" shellcheck -s sh "$f"
	done
	for f in "${guest_files[@]}"; do
		ktap_check "shellcheck -s sh $f (in-guest test)" shellcheck -s sh -e SC1091 "$f"
	done
fi
if [ "$have_mypy" = 0 ]; then
	ktap_skip "mypy --strict" "mypy is not installed (apt-get install mypy)"
else
	mypy_cache=$(mktemp -d)
	ktap_check "mypy --strict analysis scripts/lib" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" analysis scripts/lib/*.py
	ktap_check "mypy --strict tests/boot tests/configs" \
		env MYPYPATH="$ROOT:$ROOT/tests/boot:$ROOT/scripts/lib" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" tests/boot/*.py tests/configs/*.py
	ktap_check "mypy --strict tests/verdict bench" \
		env MYPYPATH="$ROOT/scripts/lib:$ROOT/bench" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" tests/verdict/*.py bench/profile_load.py
	ktap_check "mypy --strict scripts/check-error-paths tests/error-paths" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" scripts/check-error-paths tests/error-paths/*.py
	ktap_check "mypy --strict scripts/peers tests/peers" \
		mypy --strict --no-error-summary --cache-dir="$mypy_cache" scripts/peers tests/peers/*.py
	rm -rf "$mypy_cache"
fi
ktap_finish
