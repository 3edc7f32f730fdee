#!/bin/sh
# The initexit trace events' format files, saved to $INITEXIT_OUT/formats/
# for the host to compare with tracepoints/formats/, the reference page
# (tests/boot/test_boot.py). The events themselves, for every failure
# position and for unload, are the series' kselftest
# (module/initexit/events.sh).
set -eu
. "$(dirname "$0")/ktap.inc"
ktap_plan 1
T=${INITEXIT_TRACING:-/sys/kernel/tracing}
if [ ! -d "$T/events/initexit" ]; then
	ktap_skip "five initexit events, formats saved" "no initexit trace events in this kernel"
	ktap_finish
	exit 0
fi
mkdir -p "${INITEXIT_OUT:-/tmp}/formats"
for f in "$T"/events/initexit/*/format; do
	e=$(basename "$(dirname "$f")")
	cp "$f" "${INITEXIT_OUT:-/tmp}/formats/$e.format"
done
if [ "$(find "${INITEXIT_OUT:-/tmp}/formats" -name '*.format' | wc -l)" = 5 ]; then
	ktap_ok "five initexit events, formats saved"
else
	ktap_fail "five initexit events, formats saved" "$(ls "$T/events/initexit")"
fi
ktap_finish
