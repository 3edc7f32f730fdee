#!/bin/sh
# A check of one of fault-sweep's findings (tests/evidence/fault-sweep.txt):
# 10 plain load/unload cycles each of initexit_fail and initexit_order,
# with kmalloc-96's exact count and its allocation sites before and after.
#   scripts/run --guest-script tests/fault-sweep/cycle-check.sh --timeout 600 \
#       --append "slub_debug=FU,kmalloc-96 slab_nomerge"
# Prints "CYC ..." lines on the console.
M=/lib/modules/initexit; T=/initexit/bin
cnt() { echo 1 > /sys/kernel/slab/kmalloc-96/shrink; awk '$1=="kmalloc-96"{print $2}' /proc/slabinfo; }
for mod in initexit_fail initexit_order; do
  $T/modload $M/$mod.ko >/dev/null; $T/modunload $mod >/dev/null
  a=$(cnt)
  cp /sys/kernel/debug/slab/kmalloc-96/alloc_traces /tmp/t0 2>/dev/null
  i=0; while [ $i -lt 10 ]; do $T/modload $M/$mod.ko >/dev/null; $T/modunload $mod >/dev/null; i=$((i+1)); done
  b=$(cnt)
  echo "CYC $mod: kmalloc-96 $a -> $b over 10 cycles"
  cp /sys/kernel/debug/slab/kmalloc-96/alloc_traces /tmp/t1 2>/dev/null
  grep -A3 '^ *[0-9]* ' /tmp/t1 | head -60 > /tmp/t1h
  echo "CYC traces $mod:"; awk '/^ *[0-9]+ /{print "CYC   " $0}' /tmp/t1 | head -12
done
