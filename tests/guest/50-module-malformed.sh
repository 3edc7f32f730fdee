#!/bin/sh
# Malformed pair sections are refused with ENOEXEC (8), a clear message in
# dmesg, nothing left in /proc/modules, and the kernel keeps working (a
# good module loads and unloads afterwards).  Nothing leaks: 16 more
# refused loads of each leave VmallocUsed (module memory) and the active
# kmalloc-1k objects where they were, within the slack of the kselftest's
# fail_sweep.sh (a leaked module image is >= 12 kB of vmalloc space per load).
#   initexit_bad_size:  section size not a multiple of the entry size
#   initexit_bad_empty: an entry with neither init nor exit
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 6

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
slab1=$(slab_active) vm1=$(vmalloc_used) again=''
i=0
while [ "$i" -lt 16 ]; do
	for m in bad_size bad_empty; do
		modload "$MODDIR/initexit_$m.ko"
		[ "$LOAD_ERR" = 8 ] || again="$again $m:$LOAD_ERR"
	done
	i=$((i + 1))
done
slab2=$(slab_active) vm2=$(vmalloc_used)
echo "# kmalloc-1k active: ${slab1:-?} -> ${slab2:-?}; VmallocUsed kB: $vm1 -> $vm2"
if [ -n "$again" ]; then
	ktap_fail "32 more refused loads: all ENOEXEC, nothing leaked" "not ENOEXEC:$again"
elif [ "$((vm2 - vm1))" -gt 64 ] || { [ -n "$slab1" ] && [ "$((slab2 - slab1))" -gt 8 ]; }; then
	ktap_fail "32 more refused loads: all ENOEXEC, nothing leaked" "kmalloc-1k ${slab1:-?} -> ${slab2:-?}, VmallocUsed $vm1 -> $vm2 kB"
else
	ktap_ok "32 more refused loads: all ENOEXEC, nothing leaked"
fi
modload "$MODDIR/initexit_legacy_plain.ko"
le=$LOAD_ERR
modunload initexit_legacy_plain
if [ "$le" = 0 ] && [ "$UNLOAD_ERR" = 0 ]; then ktap_ok "a good module still loads and unloads"
else ktap_fail "a good module still loads and unloads" "load $le unload $UNLOAD_ERR"; fi
ktap_finish
