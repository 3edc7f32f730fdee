#!/bin/sh
# Permanent: initexit_perm's second pair has an init and no exit.  The
# module must show [permanent] in /proc/modules, rmmod must fail with EBUSY
# (16) and leave it loaded, and a forced removal must work and run the
# exit of the first pair only.  The first pair is complete: a loader that
# reads only the first entry (the 2003 patch's pairs->init) fails here.
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 5

modload "$MODDIR/initexit_perm.ko"
if [ "$LOAD_ERR" = 0 ]; then ktap_ok "permanent: load succeeds"; else ktap_fail "permanent: load succeeds" "errno $LOAD_ERR"; fi
line=$(grep '^initexit_perm ' /proc/modules || true)
case "$line" in
*"[permanent]"*) ktap_ok "permanent: /proc/modules shows [permanent]" ;;
*) ktap_fail "permanent: /proc/modules shows [permanent]" "$line" ;;
esac
modunload initexit_perm
if [ "$UNLOAD_ERR" = 16 ] && loaded initexit_perm; then ktap_ok "permanent: rmmod fails with EBUSY"; else ktap_fail "permanent: rmmod fails with EBUSY" "errno $UNLOAD_ERR"; fi
mark_log
modunload initexit_perm force
if [ "$UNLOAD_ERR" = 0 ] && ! loaded initexit_perm; then ktap_ok "permanent: forced removal works"; else ktap_fail "permanent: forced removal works" "errno $UNLOAD_ERR"; fi
echo "exit p0" >"$WORK/expect"
module_log initexit_perm >"$WORK/actual"
ktap_same "permanent: forced removal runs the one exit there is" "$WORK/expect" "$WORK/actual"
ktap_finish
