# Guest script: sweep every allocation of atm's load (with the fix: every
# failed load must leave nothing, and the sweep must reach a clean load).
set -eu
cat /dev/kmsg >"$INITEXIT_OUT/kmsg.txt" &
rc=0
fault-sweep --progress --records "$INITEXIT_OUT/atm.jsonl" /lib/modules/initexit/atm.ko \
	>"$INITEXIT_OUT/atm.tap" || rc=$?
cat "$INITEXIT_OUT/atm.tap"
exit "$rc"
