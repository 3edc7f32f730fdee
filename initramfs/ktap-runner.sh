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

# The series' kselftest, when the initramfs has it (initramfs/build
# --kselftest): each module/initexit test as "kselftest-<name>" (e.g.
# kselftest-order for order.sh), selectable with INITEXIT_TEST_ONLY too.
# run_kselftest.sh -p writes each test's output to /tmp/<test>, every line
# prefixed "# ": saved unprefixed as kselftest-<name>.tap, with the exit
# status its result line gives (ok: 0, SKIP: 4, TIMEOUT: 124, exit=N: N);
# the runner's own KTAP (one line per test) is kselftest.tap.
KSFT=/kselftest
if [ -x "$KSFT/run_kselftest.sh" ]; then
	sel='' names=''
	# shellcheck disable=SC2013  # test names have no blanks
	for t in $(sed -n 's|^module/initexit:||p' "$KSFT/kselftest-list.txt"); do
		name=kselftest-${t%.sh}
		case " ${INITEXIT_TEST_ONLY:-$name} " in
		*" $name "*) sel="$sel -t module/initexit:$t" names="$names $t" ;;
		esac
	done
	if [ -n "$sel" ]; then
		n=$((n + 1))
		echo "# initexit-test: kselftest"
		echo kselftest >"$dir/.running"
		rc=0
		# permanent.sh makes modules permanent only when asked: the test
		# kernels have CONFIG_MODULE_FORCE_UNLOAD to take them out again.
		# shellcheck disable=SC2086  # $sel is a list of options
		KSELFTEST_PERMANENT_SH_ARGS=--force-unload \
			sh "$KSFT/run_kselftest.sh" -p $sel >"$dir/kselftest.tap" 2>&1 || rc=$?
		cat "$dir/kselftest.tap"
		echo "$rc" >"$dir/kselftest.exit"
		for t in $names; do
			name=kselftest-${t%.sh}
			[ -f "/tmp/$t" ] || continue
			sed 's/^# //' "/tmp/$t" >"$dir/$name.tap"
			line=$(grep -E "^(not )?ok [0-9]+ selftests: module/initexit: $t( |\$)" "$dir/kselftest.tap" || true)
			case "$line" in
			"") continue ;;
			*"# SKIP"*) echo 4 ;;
			*"# TIMEOUT"*) echo 124 ;;
			*"# exit="*) echo "${line##*# exit=}" ;;
			"not ok"*) echo 1 ;;
			*) echo 0 ;;
			esac >"$dir/$name.exit"
			echo "# initexit-test: $name exit $(cat "$dir/$name.exit")"
		done
		echo "# initexit-test: kselftest exit $rc"
	fi
fi
rm -f "$dir/.running"
echo "# initexit-test: ran $n test file(s)"
