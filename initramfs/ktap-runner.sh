#!/bin/sh
# Guest side of scripts/test: run every in-guest test in $INITEXIT_TESTS
# (tests/guest/*.sh of the repository) in this one boot, in name order.
# Each test's output goes to $INITEXIT_OUT/ktap/<name>.tap and its exit
# status to <name>.exit; scripts/test parses them on the host. The console
# gets the output too, between "# initexit-test: <name>" markers.
set -eu

dir=$INITEXIT_OUT/ktap
mkdir -p "$dir"
n=0
for t in "$INITEXIT_TESTS"/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	# INITEXIT_TEST_ONLY="NAME...": run only tests/guest/NAME.sh (a list).
	case " ${INITEXIT_TEST_ONLY:-$name} " in
	*" $name "*) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	echo "# initexit-test: $name"
	# A record of which test was running, in case the kernel dies in it.
	echo "$name" >"$dir/.running"
	rc=0
	sh "$t" >"$dir/$name.tap" 2>&1 || rc=$?
	cat "$dir/$name.tap"
	echo "$rc" >"$dir/$name.exit"
	echo "# initexit-test: $name exit $rc"
done
rm -f "$dir/.running"
echo "# initexit-test: ran $n test file(s)"
