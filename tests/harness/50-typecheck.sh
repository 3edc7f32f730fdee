#!/bin/bash
# module_init_exit() checks its functions' types at compile time: an
# out-of-tree module whose init or exit has the wrong type must fail to
# build with the macro's message, and one with the right types (and NULL
# for either function) must build. modpost must report a section mismatch
# for an __init exit (freed after load, called by rmmod) and an __exit
# init, as it does for module_exit(). Builds against the patched tree that
# scripts/run built (skipped when there is none); no guest boot.
set -u
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$ROOT/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/kernel.sh
. "$ROOT/scripts/lib/kernel.sh"

tree=${INITEXIT_TEST_TREE:-$CACHE/linux-patched}
if [ ! -f "$tree/Module.symvers" ] || ! grep -q 'define module_init_exit' "$tree/include/linux/initexit.h" 2>/dev/null; then
	ktap_plan 1
	ktap_skip "module_init_exit() type checks" "no built patched tree in $tree (scripts/run builds one)"
	ktap_finish
	exit
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The good build, the 9 bad ones of the first table, modpost on the good
# one, the 2 of the second table, and modpost's module_init_exit() rules:
# one good build, the 11 of the third table, module_init() and
# module_exit() without pairs, and the four built-in (vmlinux.o) cases.
ktap_plan 30

# build DIR INIT-DEFINITION EXIT-DEFINITION : a module in $tmp/DIR (no
# spaces: kbuild's M=) declaring module_init_exit(1, t_init, t_exit) plus a
# pair with a NULL init and one with a NULL exit; build output in DIR.log.
# A "\n" in a definition is a line break (for a #define after a function).
build() {
	local d=$tmp/$1
	mkdir -p "$d"
	echo 'obj-m += typecheck.o' >"$d/Kbuild"
	cat >"$d/typecheck.c" <<EOF
// SPDX-License-Identifier: GPL-2.0
#include <linux/init.h>
#include <linux/module.h>
$(printf '%b' "$2")
$(printf '%b' "$3")
module_init_exit(1, t_init, t_exit);
module_init_exit(2, NULL, t_exit);
module_init_exit(3, t_init, NULL);
module_init_exit_entry(t_entry);
MODULE_LICENSE("GPL");
EOF
	locked_make "$tree" -s M="$d" modules >"$tmp/$1.log" 2>&1
}

# build_pairs DIR BODY : a module in $tmp/DIR whose pairs and entries are
# BODY (a "\n" is a line break), with t_N_init and t_N_exit defined for
# N = 1..4; build output in DIR.log.
build_pairs() {
	local d=$tmp/$1 i
	mkdir -p "$d"
	echo 'obj-m += rules.o' >"$d/Kbuild"
	{
		printf '// SPDX-License-Identifier: GPL-2.0\n#include <linux/init.h>\n#include <linux/module.h>\n'
		for i in 1 2 3 4; do
			printf 'static int __init __maybe_unused t_%s_init(void) { return 0; }\n' "$i"
			printf 'static void __exit __maybe_unused t_%s_exit(void) { }\n' "$i"
		done
		printf '%b\n' "$2"
		printf 'MODULE_LICENSE("GPL");\n'
	} >"$d/rules.c"
	locked_make "$tree" -s M="$d" modules >"$tmp/$1.log" 2>&1
}

good_init='static int __init t_init(void) { return 0; }'
good_exit='static void __exit t_exit(void) { }'

build good "$good_init" "$good_exit"
rc=$?
ktap_check "right types (and NULL init or exit) build" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/good.log" | tail -20

# fails_with NAME RC LOG MSG : a case that must not build: RC (make's
# exit status) is not 0 and LOG holds MSG.
fails_with() {
	if [ "$2" != 0 ] && grep -qF "$4" "$3"; then
		ktap_ok "$1: the build fails with \"$4\""
	else
		ktap_fail "$1: the build fails with \"$4\""
		ktap_diag "make exited $2"
		sed 's/^/# /' "$3" | tail -10
	fi
}

# builds_clean NAME RC LOG : a case that must build: RC is 0 and LOG
# holds no modpost error.
builds_clean() {
	if [ "$2" = 0 ] && ! grep -q 'ERROR: modpost' "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1"
		sed 's/^/# /' "$3" | tail -10
	fi
}

# name, init, exit, message the build must print
n=0
while IFS='|' read -r name init exit msg; do
	n=$((n + 1))
	build "bad$n" "$init" "$exit"
	fails_with "$name" $? "$tmp/bad$n.log" "$msg"
done <<EOF
init returns void|static void __init t_init(void) { }|$good_exit|init must be int (*)(void)
init takes an argument|static int __init t_init(int x) { return x; }|$good_exit|init must be int (*)(void)
exit returns int|$good_init|static int __exit t_exit(void) { return 0; }|exit must be void (*)(void)
exit takes an argument|$good_init|static void __exit t_exit(int x) { }|exit must be void (*)(void)
init of the wrong type cast to void *|static void __init t_wrong(void) { }\n#define t_init ((void *)t_wrong)|$good_exit|init must be int (*)(void)
exit of the wrong type cast to void *|$good_init|static int __exit t_wrong(void) { return 0; }\n#define t_exit ((void *)t_wrong)|exit must be void (*)(void)
init of the right type cast to void *|static int __init t_real(void) { return 0; }\n#define t_init ((void *)t_real)|$good_exit|init must be int (*)(void)
neither init nor exit (NULL, NULL)|#define t_init NULL|#define t_exit NULL|a pair needs an init or an exit
neither init nor exit (0, 0)|#define t_init 0|#define t_exit 0|a pair needs an init or an exit
EOF

# modpost: the right sections build without a mismatch; an __init exit and
# an __exit init are each reported, naming the function.
if grep -q 'section mismatch' "$tmp/good.log"; then
	ktap_fail "modpost: __init init and __exit exit: no section mismatch"
	sed 's/^/# /' "$tmp/good.log" | tail -10
else
	ktap_ok "modpost: __init init and __exit exit: no section mismatch"
fi
while IFS='|' read -r name init exit fn sec; do
	n=$((n + 1))
	build "bad$n" "$init" "$exit"
	if grep -q "section mismatch in reference: .*-> $fn (section: $sec)" "$tmp/bad$n.log"; then
		ktap_ok "modpost: $name is a section mismatch naming $fn"
	else
		ktap_fail "modpost: $name is a section mismatch naming $fn"
		sed 's/^/# /' "$tmp/bad$n.log" | tail -10
	fi
done <<EOF
an __init exit|$good_init|static void __init t_exit(void) { }|t_exit|.init.text
an __exit init|static int __exit t_init(void) { return 0; }|$good_exit|t_init|.exit.text
EOF

# modpost's module_init_exit() rules (scripts/mod/modpost.c,
# check_initexit()) hold for a module as for a built-in object, so one
# source cannot build as =m and be refused at boot as =y.  Pairs that keep
# every rule build; each broken rule stops the build, naming the pairs.
build_pairs rules-ok 'module_init_exit(10, t_1_init, t_1_exit);\nmodule_init_exit(20, t_2_init, NULL);\nmodule_init_exit_entry(t_entry);'
builds_clean "modpost: pairs in the entry's band, an exit-less last init: builds" $? "$tmp/rules-ok.log"
while IFS='|' read -r name body msg; do
	n=$((n + 1))
	build_pairs "rules$n" "$body"
	fails_with "modpost: $name" $? "$tmp/rules$n.log" "$msg"
done <<EOF
pairs without an entry|module_init_exit(10, t_1_init, t_1_exit);|module_init_exit(10, t_1_init, t_1_exit) has no entry
a pair outside its entry's band|module_init_exit(10, t_1_init, t_1_exit);\nmodule_init_exit(1000, t_2_init, t_2_exit);\nmodule_init_exit_entry(t_entry);|is outside the band [0, 500) of its entry t_entry
an exit-less init before another init|module_init_exit(10, t_1_init, NULL);\nmodule_init_exit(20, t_2_init, t_2_exit);\nmodule_init_exit_entry(t_entry);|t_1_init has no exit and runs before t_2_init
two entries|module_init_exit(10, t_1_init, t_1_exit);\nmodule_init_exit_entry(t_entry);\nmodule_init_exit_entry(t_other_entry);|two entries, t_
module_init() beside pairs|module_init_exit(10, t_1_init, t_1_exit);\nmodule_init(t_2_init);\nmodule_init_exit_entry(t_entry);|initcall t_2_init (module_init() or *_initcall()) beside module_init_exit() pairs
late_initcall() beside pairs|module_init_exit(10, t_1_init, t_1_exit);\nlate_initcall(t_2_init);\nmodule_init_exit_entry(t_entry);|initcall t_2_init (module_init() or *_initcall()) beside module_init_exit() pairs
module_exit() beside pairs|module_init_exit(10, t_1_init, t_1_exit);\nmodule_exit(t_2_exit);\nmodule_init_exit_entry(t_entry);|module_exit(t_2_exit) beside module_init_exit() pairs
init_module() by hand beside pairs|module_init_exit(10, t_1_init, t_1_exit);\nint init_module(void) { return 0; }\nmodule_init_exit_entry(t_entry);|init_module() beside module_init_exit() pairs
cleanup_module() by hand beside pairs|module_init_exit(10, t_1_init, t_1_exit);\nvoid cleanup_module(void) { }\nmodule_init_exit_entry(t_entry);|cleanup_module() beside module_init_exit() pairs
a pair record that is not one (garbage in its section)|module_init_exit(10, t_1_init, t_1_exit);\nmodule_init_exit_entry(t_entry);\nstatic const char t_bad[] __used __aligned(4) __section(".discard.initexit_check") = "not a record";|section .discard.initexit_check is not a sequence of records
a legacy record of an unknown kind|module_init(t_1_init);\nstatic const char t_bad[] __used __aligned(1) __section(".discard.initexit_legacy") = "q\\\\0origin\\\\0name";|section .discard.initexit_legacy is not a sequence of records
EOF

# A module without pairs is built as before: module_init() and
# module_exit() alone are no pair's business.
build_pairs legacy-ok 'module_init(t_1_init);\nmodule_exit(t_1_exit);'
builds_clean "modpost: module_init() and module_exit() without pairs: builds" $? "$tmp/legacy-ok.log"

# The same rule built in: the object compiled as built-in code (no
# -DMODULE: Kbuild's flags for a module are emptied for this directory)
# and handed to modpost as vmlinux.o, as the kernel's link does.  Its
# module_init() or late_initcall() is then an initcall beside the
# object's entry, which a module would refuse: modpost must refuse both
# alike.  The entry's own initcall leaves no record: the first case.
# builtin_modpost DIR BODY : modpost's output in DIR.log; the status is
# modpost's, 99 when the object did not compile.
builtin_modpost() {
	local d=$tmp/$1
	mkdir -p "$d"
	printf 'KBUILD_CFLAGS_MODULE :=\nobj-m += rules.o\n' >"$d/Kbuild"
	{
		printf '// SPDX-License-Identifier: GPL-2.0\n#include <linux/init.h>\n#include <linux/module.h>\n'
		# A pair's exit is init text built in; module_exit()'s is exit text.
		printf 'static int __init __maybe_unused t_1_init(void) { return 0; }\n'
		printf 'static void __init __maybe_unused t_1_exit(void) { }\n'
		printf 'static int __init __maybe_unused t_2_init(void) { return 0; }\n'
		printf 'static void __exit __maybe_unused t_2_exit(void) { }\n'
		printf '%b\n' "$2"
	} >"$d/rules.c"
	locked_make "$tree" -s M="$d" rules.o >"$tmp/$1.log" 2>&1 || return 99
	cp "$d/rules.o" "$d/vmlinux.o"
	(cd "$d" && "$tree/scripts/mod/modpost" -o "$d/Module.symvers" vmlinux.o) >>"$tmp/$1.log" 2>&1
}
# builtin_case NAME BODY MSG : MSG empty = modpost must accept the object.
builtin_case() {
	builtin_modpost "builtin-$2" "$3"
	local rc=$? log=$tmp/builtin-$2.log
	if [ "$rc" = 99 ]; then
		ktap_fail "modpost, built in: $1: the object did not compile"
		sed 's/^/# /' "$log" | tail -10
	elif [ -z "$4" ]; then
		builds_clean "modpost, built in: $1: accepted" "$rc" "$log"
	else
		fails_with "modpost, built in: $1" "$rc" "$log" "$4"
	fi
}
builtin_case "pairs and their entry" ok 'module_init_exit(10, t_1_init, t_1_exit);\nmodule_init_exit_entry(t_entry);' ''
builtin_case "module_init() beside pairs" init 'module_init_exit(10, t_1_init, t_1_exit);\nmodule_init(t_2_init);\nmodule_init_exit_entry(t_entry);' 'initcall t_2_init (module_init() or *_initcall()) beside module_init_exit() pairs'
builtin_case "late_initcall() beside pairs" late 'module_init_exit(10, t_1_init, t_1_exit);\nlate_initcall(t_2_init);\nmodule_init_exit_entry(t_entry);' 'initcall t_2_init (module_init() or *_initcall()) beside module_init_exit() pairs'
builtin_case "module_exit() beside pairs" exit 'module_init_exit(10, t_1_init, t_1_exit);\nmodule_exit(t_2_exit);\nmodule_init_exit_entry(t_entry);' 'module_exit(t_2_exit) beside module_init_exit() pairs'
ktap_finish
