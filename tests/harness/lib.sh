# shellcheck shell=bash
# ROOT and RUN_OUT are for the test files that source this.
# shellcheck disable=SC2034
# KTAP output for the harness's own tests (host side). Source it, call
# ok/not_ok/skip for each case, then ktap_end. Each file is one test suite.
#
#   . "$(dirname "$0")/lib.sh"
#   check "scripts/run --help exits 0" scripts/run --help

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
_n=0
_failed=0
echo "KTAP version 1"

ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $*"; }
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; }
diag() { printf '# %s\n' "$@"; }

# expect DESC COND-COMMAND... : ok when the command succeeds.
expect() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

ktap_end() {
	echo "1..$_n"
	[ "$_failed" = 0 ]
}

# The output folder of the guest-test run scripts/test made, if any.
RUN_OUT=${INITEXIT_TEST_RUN_OUT:-}
