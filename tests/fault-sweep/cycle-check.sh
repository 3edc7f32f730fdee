#!/bin/sh
# A check of one of fault-sweep's findings (tests/evidence/fault-sweep.txt):
# 10 plain load/unload cycles each of test_initexit_mod_fail and test_initexit_mod_order,
# with kmalloc-96's exact count and its allocation sites before and after.
#   scripts/run --guest-script tests/fault-sweep/cycle-check.sh --timeout 600 \
#       --append "slub_debug=FU,kmalloc-96 slab_nomerge"
# Prints "CYC ..." lines on the console.
M=/lib/modules/initexit T=/initexit/bin
TRACES=/sys/kernel/debug/slab/kmalloc-96/alloc_traces
count() { echo 1 >/sys/kernel/slab/kmalloc-96/shrink; awk '$1 == "kmalloc-96" { print $2 }' /proc/slabinfo; }
sites() { awk -v w="$1" '/^ *[0-9]+ / { print "CYC   " w ": " $0 }' "$TRACES" | head -n 12; }
cycle() { "$T/modload" "$M/$1.ko" >/dev/null; "$T/modunload" "$1" >/dev/null; }
for mod in test_initexit_mod_fail test_initexit_mod_order; do
	cycle "$mod"	# the first load fills what stays (its kobject, ...)
	a=$(count)
	sites before
	i=0
	while [ "$i" -lt 10 ]; do cycle "$mod"; i=$((i + 1)); done
	echo "CYC $mod: kmalloc-96 $a -> $(count) over 10 cycles"
	sites after
done
