#!/bin/sh
# Malformed pair sections are refused with ENOEXEC (8), a clear message in
# dmesg, nothing left in /proc/modules, and the kernel keeps working (a
# good module loads and unloads afterwards).
#   initexit_bad_size:  section size not a multiple of the entry size
#   initexit_bad_empty: an entry with neither init nor exit
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 5

bad() { # NAME MESSAGE-PATTERN
	mark_log
	modload "$MODDIR/initexit_$1.ko"
	msg=$(dmesg | grep "initexit_$1: " || true)
	if [ "$LOAD_ERR" = 8 ] && ! loaded "initexit_$1"; then ktap_ok "$1: refused with ENOEXEC"
	else ktap_fail "$1: refused with ENOEXEC" "errno $LOAD_ERR"; fi
	case "$msg" in
	*$2*) ktap_ok "$1: dmesg says why" ;;
	*) ktap_fail "$1: dmesg says why" "dmesg: $msg" ;;
	esac
}
bad bad_size "section size * is not a multiple of"
bad bad_empty "has neither init nor exit"
modload "$MODDIR/initexit_legacy_plain.ko"
le=$LOAD_ERR
modunload initexit_legacy_plain
if [ "$le" = 0 ] && [ "$UNLOAD_ERR" = 0 ]; then ktap_ok "a good module still loads and unloads"
else ktap_fail "a good module still loads and unloads" "load $le unload $UNLOAD_ERR"; fi
ktap_finish
