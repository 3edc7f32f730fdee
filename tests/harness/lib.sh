# shellcheck shell=bash
# ROOT and RUN_OUT are for the test files that source this.
# shellcheck disable=SC2034
# The harness's own tests (host side, bash): each file is one KTAP test
# suite written with tests/lib/ktap.sh, the producer the in-guest tests use
# too. Plan first, then one call per case, then ktap_finish:
#
#   . "$(dirname "$0")/lib.sh"
#   ktap_plan 1
#   ktap_check "scripts/run --help exits 0" "$ROOT/scripts/run" --help
#   ktap_finish

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/ktap.sh
. "$ROOT/tests/lib/ktap.sh"

# The output folder of the guest-test run scripts/test made, if any.
RUN_OUT=${INITEXIT_TEST_RUN_OUT:-}
