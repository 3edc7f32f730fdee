# Guest script: sweep every allocation of the load of iosf_mbi, then the
# first loads of atm (fault-sweep, tests/guest/tools/), keeping the kernel
# log. atm's sweep stops after 4 loads: at stock, once a load failed in
# atm_proc_init() every later load fails with -EEXIST, so the sweep would
# never reach a clean load.
set -eu
cat /dev/kmsg >"$INITEXIT_OUT/kmsg.txt" &
rc=0
fault-sweep --progress --records "$INITEXIT_OUT/iosf_mbi.jsonl" /lib/modules/initexit/iosf_mbi.ko \
	>"$INITEXIT_OUT/iosf_mbi.tap" || rc=$?
cat "$INITEXIT_OUT/iosf_mbi.tap"
echo "# /sys/kernel/debug/iosf_sb after the iosf_mbi sweep: $(ls -d /sys/kernel/debug/iosf_sb 2>&1)"
fault-sweep --max 4 --progress --records "$INITEXIT_OUT/atm.jsonl" /lib/modules/initexit/atm.ko \
	>"$INITEXIT_OUT/atm.tap" || rc=$?
cat "$INITEXIT_OUT/atm.tap"
exit "$rc"
