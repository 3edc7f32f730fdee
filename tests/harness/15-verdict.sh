#!/bin/bash
# scripts/test's verdicts, through the same functions it calls
# (scripts/lib/verdict.sh): a KTAP test written with tests/lib/ktap.sh
# that stops after its third case of six and exits 0 fails the summary,
# under bash and under busybox ash (the guest's shell); so does one whose
# ktap_finish finds fewer cases than the plan; a complete one passes.
# No guest boot.
set -u
. "$(dirname "$0")/lib.sh"
. "$ROOT/scripts/lib/common.sh"
. "$ROOT/scripts/lib/verdict.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shells=(bash)
command -v busybox >/dev/null && shells+=("busybox ash")
ktap_plan $((6 * ${#shells[@]} + 1))

# a test file: plan 6, three passing cases, then $1 (the rest, or a stop)
write_test() {
	printf '%s\n' "set -eu" ". \"$ROOT/tests/lib/ktap.sh\"" "ktap_plan 6" \
		'ktap_ok "one"' 'ktap_ok "two"' 'ktap_ok "three"' "$1" >"$tmp/t.sh"
}

# verdict_of SHELL : run $tmp/t.sh under SHELL, judge it as scripts/test
# judges a harness test, print the summary line and its status
verdict_of() {
	local rc=0 line src
	# shellcheck disable=SC2086  # "busybox ash" is a command and its argument
	$1 "$tmp/t.sh" >"$tmp/t.tap" 2>&1 || rc=$?
	verdicts_begin "$tmp/verdicts.jsonl"
	judge ktap --name "tests/harness/t.sh" --exit "$rc" "$tmp/t.tap" 2>"$tmp/judge.err"
	src=0
	line=$(verdicts_summary 2>/dev/null) || src=$?
	echo "$line (exit $src; test exit $rc)"
}

for sh in "${shells[@]}"; do
	write_test 'exit 0'
	got=$(verdict_of "$sh")
	ktap_check "$sh: stops after case 3 of 6 with exit 0: the summary fails ($got)" \
		[ "$got" = "3 passed, 3 failed (exit 1; test exit 0)" ]
	ktap_check "... naming the cases that never reported" grep -q 'case 4 of the plan 1..6 never reported' "$tmp/judge.err"
	write_test 'ktap_finish'
	got=$(verdict_of "$sh")
	ktap_check "$sh: ktap_finish after 3 of 6: the test exits 1 and the summary fails ($got)" \
		[ "$got" = "3 passed, 3 failed (exit 1; test exit 1)" ]
	ktap_check "... and ktap_finish says so" grep -q '^# planned 6 case(s), ran 3$' "$tmp/t.tap"
	write_test 'ktap_ok four; ktap_skip five "CONFIG_X is not set"; ktap_ok six; ktap_finish'
	got=$(verdict_of "$sh")
	ktap_check "$sh: all six: the summary passes, the skip counted ($got)" \
		[ "$got" = "5 passed, 0 failed, 1 skipped (exit 0; test exit 0)" ]
	write_test 'ktap_ok "four # five"; ktap_ok five; ktap_ok six; ktap_finish'
	got=$(verdict_of "$sh")
	ktap_check "$sh: a '#' in a description does not lose the case ($got)" \
		[ "$got" = "6 passed, 0 failed (exit 0; test exit 0)" ]
done

# A judge that fails is a failure, never a pass.
verdicts_begin "$tmp/v2.jsonl"
judge ktap --name x --no-such-option "$tmp/t.tap" 2>/dev/null
line=$(verdicts_summary 2>/dev/null)
ktap_check "a judge that fails counts as a failure ($line)" [ "$line" = "0 passed, 1 failed" ]
ktap_finish
