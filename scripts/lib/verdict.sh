# shellcheck shell=bash
# The bash side of scripts/lib/verdict.py, sourced after common.sh by
# scripts/test (and by tests/harness/15-verdict.sh, which shows through
# these same functions that a test stopping early fails the summary).
#
#   verdicts_begin FILE    every verdict of this run goes to FILE (emptied)
#   judge KIND ARGS...     verdict.py KIND --record FILE ARGS...: one
#                          verdict, its failures printed as they are found
#   verdicts_summary       the failures, then "N passed, N failed[, N
#                          skipped]" on stdout; status 1 when any failed
#
# A judge that itself fails (a Python error, an unreadable input) is a
# failure of the run, named in the summary: nothing passes by default.

VERDICT_PY=$INITEXIT_ROOT/scripts/lib/verdict.py
VERDICTS=''
_judge_errors=()

verdicts_begin() {
	VERDICTS=$1
	: >"$VERDICTS"
	_judge_errors=()
}

judge() {
	local kind=$1 rc=0
	shift
	"$PYTHON" "$VERDICT_PY" "$kind" --record "$VERDICTS" "$@" || rc=$?
	[ "$rc" = 0 ] || _judge_errors+=(--failure "verdict.py $kind $* failed (exit $rc)")
}

verdicts_summary() {
	"$PYTHON" "$VERDICT_PY" summary "${_judge_errors[@]}" "$VERDICTS"
}
