# shellcheck shell=sh
# The one KTAP producer of the project's tests: the in-guest tests
# (busybox ash, through tests/guest/ktap.inc) and the harness's own tests
# (bash, through tests/harness/lib.sh) source it. POSIX sh.
# Model: the kernel's tools/testing/selftests/kselftest/ktap_helpers.sh: the
# plan comes first and the end compares the cases run with it. The judge,
# scripts/lib/verdict.py, checks the same on the host, so a test that stops
# early (exit 0 or not) fails either way.
#
#   ktap_plan N             "KTAP version 1" and "1..N"; call it first  (ktap_print_header + ktap_set_plan)
#   ktap_ok DESC            one passing case                             (ktap_test_pass)
#   ktap_fail DESC [WHY]    one failing case, WHY as "# " diagnostics    (ktap_test_fail)
#   ktap_skip DESC WHY      one skipped case: "ok N - DESC # SKIP WHY"   (ktap_test_skip)
#                           (name the missing CONFIG_ option in WHY)
#   ktap_check DESC CMD...  ok when CMD succeeds; else its output is     (ktap_test_result)
#                           the diagnostics. CMD runs in a subshell: it
#                           cannot set the caller's variables
#   ktap_same DESC EXPECTED_FILE ACTUAL_FILE   ok when both are
#                           identical, else the diff as diagnostics
#   ktap_diag MSG...        "# MSG", one line per argument               (ktap_print_msg)
#   ktap_bail MSG           "Bail out! MSG", the totals, exit 1          (ktap_exit_fail_msg)
#   ktap_finish             the totals line; status 1 when a case failed (ktap_finished)
#                           or the cases run are not the plan's count
#
# A description cannot hold '#' (it starts a KTAP directive): each '#' is
# printed as '_'. KTAP_WORK, when the caller sets it, is a scratch folder
# that ktap_finish and ktap_bail remove. Only the KTAP_* and _ktap_* names
# are taken.

KTAP_PLAN='' KTAP_N=0 KTAP_PASS=0 KTAP_FAIL=0 KTAP_SKIP=0 KTAP_WORK=''

ktap_plan() {
	KTAP_PLAN=$1
	echo "KTAP version 1"
	echo "1..$1"
}

# _ktap_result "ok"|"not ok" DESC [DIRECTIVE]
_ktap_result() {
	_ktap_d=$2
	case "$_ktap_d" in *'#'*) _ktap_d=$(printf '%s' "$_ktap_d" | tr '#' '_') ;; esac
	KTAP_N=$((KTAP_N + 1))
	echo "$1 $KTAP_N - $_ktap_d${3:+ # $3}"
}

ktap_ok() {
	KTAP_PASS=$((KTAP_PASS + 1))
	_ktap_result ok "$1"
}

ktap_fail() {
	KTAP_FAIL=$((KTAP_FAIL + 1))
	_ktap_result "not ok" "$1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/# /'
}

ktap_skip() {
	KTAP_SKIP=$((KTAP_SKIP + 1))
	_ktap_result ok "$1" "SKIP ${2:-}"
}

ktap_check() {
	_ktap_c=$1
	shift
	if _ktap_out=$("$@" 2>&1); then
		ktap_ok "$_ktap_c"
	else
		ktap_fail "$_ktap_c" "$* failed${_ktap_out:+: $_ktap_out}"
	fi
}

ktap_same() {
	if _ktap_out=$(diff -u "$2" "$3" 2>&1); then ktap_ok "$1"; else ktap_fail "$1" "$_ktap_out"; fi
}

ktap_diag() {
	for _ktap_m in "$@"; do printf '# %s\n' "$_ktap_m"; done
}

_ktap_totals() {
	[ -z "$KTAP_WORK" ] || rm -rf "$KTAP_WORK"
	echo "# Totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
}

ktap_bail() {
	echo "Bail out! $*"
	_ktap_totals
	exit 1
}

ktap_finish() {
	_ktap_totals
	if [ -z "$KTAP_PLAN" ]; then
		echo "# no plan: ktap_plan was never called"
		return 1
	fi
	if [ "$KTAP_N" != "$KTAP_PLAN" ]; then
		echo "# planned $KTAP_PLAN case(s), ran $KTAP_N"
		return 1
	fi
	[ "$KTAP_FAIL" = 0 ]
}
