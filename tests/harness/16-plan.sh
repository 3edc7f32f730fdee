#!/bin/bash
# scripts/test walks tests/plan.tsv: --list prints it, --only and --deep
# select rows with what they need, in table order; a malformed table is a
# usage error naming its line; a step that runs over its timeout fails,
# naming itself; nothing in scripts/test chooses what to run by the clock.
# No guest boot (the timed-out step is a host row of a table of one row).
set -u
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=$ROOT/scripts/test
ktap_plan 10

rows() { grep -v -e '^#' -e '^$' "$ROOT/tests/plan.tsv" | cut -d'|' -f1 | tr -d ' '; }
listed=$("$T" --list | sed 1d | cut -d' ' -f1)
ktap_check "--list prints every row of tests/plan.tsv, in order" [ "$listed" = "$(rows)" ]

sel() { "$T" --list "$@" | sed 1d | cut -d' ' -f1 | tr '\n' ' '; }
got=$(sel --only boot)
ktap_check "--only boot runs what it reads, in table order (got: $got)" \
	[ "$got" = "build guest-tests blacklist build-builtin builtin builtin-unwind builtin-blacklist build-stock stock build-stock-builtin stock-builtin boot " ]
got=$(sel --deep=stress)
ktap_check "--deep=stress builds the debug kernel first (got: $got)" [ "$got" = "build-debug stress " ]
got=$(sel --no-boot)
ktap_check "--no-boot runs the host rows of tier test only (got: $got)" [ "$got" = "python error-paths verdict boot harness " ]
ktap_check "two --list runs of one commit list the same steps" sh -c "[ \"\$('$T' --list)\" = \"\$('$T' --list)\" ]"

# A malformed table stops everything, naming the line.
printf 'python|test|-|9x|-|-|-|the analysis\n' >"$tmp/bad.tsv"
rc=0
INITEXIT_TEST_PLAN=$tmp/bad.tsv "$T" --list >/dev/null 2>"$tmp/err" || rc=$?
ktap_check "a timeout that is not seconds is a usage error naming the line (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q 'line 1: timeout' '$tmp/err'"
printf 'python|test|-|9|nothing|-|-|the analysis\n' >"$tmp/bad.tsv"
rc=0
INITEXIT_TEST_PLAN=$tmp/bad.tsv "$T" --list >/dev/null 2>"$tmp/err" || rc=$?
ktap_check "a row that needs an unknown row is a usage error (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q 'python needs nothing' '$tmp/err'"
rc=0
"$T" --only nothing >/dev/null 2>"$tmp/err" || rc=$?
ktap_check "--only NAME of no row is a usage error (exit $rc)" sh -c "[ $rc = 2 ] && grep -q 'no row nothing' '$tmp/err'"

# A step past its timeout: the run fails and the summary names the step.
printf 'verdict|test|-|0|-|-|-|the judge on saved outputs\n' >"$tmp/one.tsv"
rc=0
INITEXIT_TEST_PLAN=$tmp/one.tsv "$T" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
ktap_check "a step over its timeout fails the run, naming itself (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q 'step verdict: ran over its timeout of 0 s' '$tmp/stderr' && grep -q '^0 passed, [1-9]' '$tmp/stdout'"

ktap_check "scripts/test chooses nothing by the clock (no budget, no time left compared)" \
	sh -c "! grep -n -E 'BUDGET|no_room|elapsed \"\\\$t0\"\\)? *-(le|lt|gt|ge)' '$T'"
ktap_finish
