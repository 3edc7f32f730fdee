# shellcheck shell=bash
# Booting the guest in QEMU and bringing its results home.
# Sourced after common.sh.

GUEST_MEM=${INITEXIT_GUEST_MEM:-512M}
GUEST_SMP=${INITEXIT_GUEST_SMP:-2}
# wall: guest time follows the host's clock (TCG or KVM speed). icount:
# TCG only, one host thread, 1 ns of guest time per guest instruction and
# no host timing leaking in (sleep=off: an idle guest jumps to its next
# timer; align=off: no syncing to the host's clock), so every timestamp
# and duration in the guest is an instruction count (scripts/bench).
GUEST_CLOCK=${INITEXIT_GUEST_CLOCK:-wall}
ICOUNT_OPTS=shift=0,sleep=off,align=off
# Per-CPU ring buffer for the boot events (trace_buf_size is per CPU).
TRACE_BUF_SIZE=${INITEXIT_TRACE_BUF_SIZE:-4096K}
# The host's trace-cmd report flags are the analysis's (analysis/source.py
# TRACE_CMD_REPORT_ARGS: -N no plugins, -t full-precision timestamps), the
# one place they are chosen; trace_report asks it to print each trace.dat.
# REPORT_FLAGS is what the dry run shows and meta.json records.
read -r -a REPORT_FLAGS <<<"$(cd "${INITEXIT_ROOT:?}" && "${PYTHON:?}" -m analysis print --flags 2>/dev/null)" || true

# The kernel command line of every boot; --append adds to it.
#  initcall_debug      a dmesg line per initcall (name, result, duration)
#  trace_event=...     events on from the first initcall; initexit:* is the
#                      series' own system (a stock kernel only logs that it
#                      does not know it)
#  trace_clock=global  otherwise late_trace_init switches clocks when
#                      sched_clock is unstable, which wipes the boot events
#  panic=-1            a panic reboots at once; with -no-reboot QEMU exits
base_cmdline() {
	printf '%s' "console=ttyS0 earlyprintk=serial,ttyS0,115200 initcall_debug" \
		" trace_event=initcall:*,module:*,initexit:* trace_buf_size=$TRACE_BUF_SIZE" \
		" trace_clock=global panic=-1"
}

# qemu_cmd ACCEL KERNEL APPEND [INITRD [DISK]] : sets QEMU_CMD.
qemu_cmd() {
	local accel=$1 kernel=$2 append=$3 initrd=${4:-} disk=${5:-} clock=()
	# icount needs single-threaded TCG (multi-threaded TCG refuses it);
	# the vCPUs then take turns on one host thread.
	if [ "$GUEST_CLOCK" = icount ] && [ "$accel" = tcg ]; then
		accel=tcg,thread=single clock=(-icount "$ICOUNT_OPTS")
	fi
	QEMU_CMD=(qemu-system-x86_64 -nographic -no-reboot -nic none
		-accel "$accel" "${clock[@]}" -m "$GUEST_MEM" -smp "$GUEST_SMP"
		-kernel "$kernel" -append "$append")
	[ -z "$initrd" ] || QEMU_CMD+=(-initrd "$initrd")
	QEMU_CMD+=("${QEMU_EXTRA[@]}")
	[ -z "$disk" ] || QEMU_CMD+=(
		-drive "file=$disk,format=raw,if=none,id=results"
		-device "virtio-blk-pci,drive=results,serial=initexit-results")
}

# More QEMU arguments for the guest's boot (scripts/run --rootfs host: the
# host's / shared read-only over 9p); the KVM probe boots without them.
QEMU_EXTRA=()

# host_root_share : QEMU_EXTRA for --rootfs host. The host's / read-only
# (readonly=on: QEMU refuses every write the guest asks for; multidevs=remap:
# the host's / spans several file systems, whose inode numbers would
# collide in the guest), with the
# host's owners and modes as they are (security_model=none), under the
# mount tag the guest's init mounts (initramfs/init, host_root).
host_root_share() {
	QEMU_EXTRA=(-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
		-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot")
}

qemu_version() { qemu-system-x86_64 --version | sed -n '1s/^QEMU emulator version //p'; }

# --------------------------------------------------------------- accelerator

# The KVM device and the probe's time limit (tests/harness/45-accel.sh
# points them at a fake).
KVM_DEV=${INITEXIT_KVM_DEV:-/dev/kvm}
KVM_PROBE_SECS=${INITEXIT_KVM_PROBE_SECS:-20}

# kvm_works KERNEL : a short KVM boot (no initramfs: the kernel prints its
# banner, panics on the missing root and QEMU exits) must reach the console
# within KVM_PROBE_SECS. On some hosts /dev/kvm exists but a guest hangs
# before its first line. The answer is cached until the host reboots.
kvm_works() {
	local kernel=$1 key log rc secs=$KVM_PROBE_SECS
	local probe_file=${CACHE:?}/kvm-probe
	key="$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) $(uname -r) $(qemu_version)"
	if [ -f "$probe_file" ] && [ "$(sed -n 1p "$probe_file")" = "$key" ]; then
		KVM_PROBE="cached: $(sed -n 2p "$probe_file") (delete $probe_file to probe again)"
		[ "$(sed -n 2p "$probe_file")" = works ]
		return
	fi
	qemu_cmd kvm "$kernel" "console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1"
	if [ "$DRY_RUN" = 1 ]; then
		show_cmd timeout --foreground -k 5 "$secs" "${QEMU_CMD[@]}"
		KVM_PROBE="not probed in a dry run: a real run boots the command above first, and uses TCG if it hangs"
		return 0
	fi
	log "probing KVM with a $secs s boot"
	log=$(mktemp)
	rc=0
	show_cmd timeout --foreground -k 5 "$secs" "${QEMU_CMD[@]}"
	timeout --foreground -k 5 "$secs" "${QEMU_CMD[@]}" </dev/null >"$log" 2>&1 || rc=$?
	local verdict
	if grep -q 'Linux version' "$log"; then
		verdict=works
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		verdict="hangs (no console line within $secs s)"
	else
		verdict="fails (qemu exit $rc: $(grep -m1 -i 'error\|fail' "$log" || tail -n1 "$log"))"
	fi
	rm -f "$log"
	mkdir -p "$CACHE"
	printf '%s\n%s\n' "$key" "$verdict" >"$probe_file"
	KVM_PROBE=$verdict
	[ "$verdict" = works ]
}

# choose_accel WANT KERNEL : sets ACCEL (kvm|tcg) and ACCEL_NOTE.
choose_accel() {
	local want=$1 kernel=$2
	KVM_PROBE=''
	case "$GUEST_CLOCK" in
	wall) ;;
	icount)
		[ "$want" != kvm ] || die "INITEXIT_GUEST_CLOCK=icount needs TCG; --accel kvm cannot count instructions"
		ACCEL=tcg ACCEL_NOTE="INITEXIT_GUEST_CLOCK=icount: TCG, one thread, -icount $ICOUNT_OPTS"
		log "accelerator: $ACCEL ($ACCEL_NOTE; guest ns = instructions)"
		return 0 ;;
	*) die "INITEXIT_GUEST_CLOCK=$GUEST_CLOCK: wall or icount" ;;
	esac
	case "$want" in
	tcg)
		ACCEL=tcg ACCEL_NOTE="requested with --accel tcg" ;;
	kvm)
		ACCEL=kvm ACCEL_NOTE="requested with --accel kvm" ;;
	auto)
		if [ ! -e "$KVM_DEV" ]; then
			ACCEL=tcg ACCEL_NOTE="no $KVM_DEV"
		elif [ ! -r "$KVM_DEV" ] || [ ! -w "$KVM_DEV" ]; then
			ACCEL=tcg ACCEL_NOTE="$KVM_DEV not usable by $(id -un) (add yourself to group kvm)"
		elif kvm_works "$kernel"; then
			ACCEL=kvm ACCEL_NOTE="KVM probe: $KVM_PROBE"
		else
			ACCEL=tcg ACCEL_NOTE="KVM probe: $KVM_PROBE"
		fi
		if [ "$ACCEL" = tcg ]; then
			loud "KVM NOT USED: $ACCEL_NOTE." \
				"Falling back to TCG (software emulation): timings are TCG timings," \
				"not KVM timings. meta.json records accel=tcg. (--accel tcg silences this.)"
		fi ;;
	esac
	log "accelerator: $ACCEL ($ACCEL_NOTE)"
}

# ---------------------------------------------------------------- the boot

# boot_guest ACCEL KERNEL INITRD OUT TIMEOUT APPEND : boot once, stream the
# console to stderr and OUT/console.log, unpack the results disk into OUT.
# Sets QEMU_RC (124 when the timeout hit).
boot_guest() {
	local accel=$1 kernel=$2 initrd=$3 out=$4 secs=$5 append=$6
	local disk=$out/.results.img
	run_cmd rm -f "$disk"
	run_cmd truncate -s 512M "$disk"
	qemu_cmd "$accel" "$kernel" "$append" "$initrd" "$disk"
	QEMU_RC=0
	show_cmd timeout --foreground -k 10 "$secs" "${QEMU_CMD[@]}"
	if [ "$DRY_RUN" = 1 ]; then
		show_cmd tar -xf "$disk" -C "$out"
		return 0
	fi
	# -k: QEMU ignoring SIGTERM must not outlive the timeout by more than 10 s.
	# --foreground: QEMU stays in scripts/run's process group, so a bound
	# around scripts/run (scripts/test's step timeouts) that kills the group
	# kills QEMU too.
	timeout --foreground -k 10 "$secs" "${QEMU_CMD[@]}" </dev/null 2>&1 |
		sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' |
		tee "$out/console.log" >&2 || QEMU_RC=${PIPESTATUS[0]}
	[ "$QEMU_RC" != 137 ] || QEMU_RC=124
	# An all-zero disk (the guest never wrote) reads as an empty archive.
	tar -xf "$disk" -C "$out" --no-same-owner 2>/dev/null || true
	rm -f "$disk"
}

# ----------------------------------------------------------------- reports

# trace_report DAT : the host's trace-cmd report of DAT into DAT's
# <name>.report.txt, printed by the analysis with its flags. Fails when
# trace-cmd cannot read it.
trace_report() {
	local dat=$1 txt=${1%.dat}.report.txt
	# What `analysis print` runs, with the flags it chose.
	show_cmd trace-cmd report "${REPORT_FLAGS[@]}" -i "$dat" '>' "$txt"
	[ "$DRY_RUN" = 1 ] && return 0
	(cd "$INITEXIT_ROOT" && "$PYTHON" -m analysis print -o "$txt" "$dat") 2>"$txt.err" || {
		cat "$txt.err" >&2
		return 1
	}
	[ -s "$txt.err" ] || rm -f "$txt.err"
}

# count_events REPORT NAME : how many NAME events a report holds (NAME
# `any`: every event the analysis reads), as the analysis reads it; 0 when
# the report is missing or holds none.
count_events() {
	[ -f "$1" ] || { echo 0; return 0; }
	(cd "$INITEXIT_ROOT" && "$PYTHON" -m analysis parse -q --count "$2" "$1" 2>/dev/null) || echo 0
}

# previous_run OUT FLAVOUR : the newest run-* folder beside OUT (name order:
# scripts/run names them run-DATE-TIME) other than OUT, whose meta.json says
# kernel FLAVOUR and that brought a boot trace home; nothing when none.
previous_run() {
	local out=$1 flavour=$2 d best=''
	for d in "$(dirname "$out")"/run-*; do
		if [ ! -f "$d/boot.report.txt" ] || [ "$d" = "$out" ]; then continue; fi
		"$PYTHON" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])).get("kernel") != sys.argv[2])' \
			"$d/meta.json" "$flavour" 2>/dev/null || continue
		best=$d
	done
	printf '%s' "$best"
}

# run_diff A OUT : `python3 -m analysis diff` of each trace of the earlier
# run A (as A) with this run's (as B): NAME.diff.{txt,html,json} in OUT and
# the summary on stderr.  Never fails the run: a diff is information.
run_diff() {
	local a=$1 out=$2 name rc summary
	for name in boot scenario; do
		[ -f "$a/$name.report.txt" ] || continue
		if [ "$DRY_RUN" = 0 ] && { [ "$(count_events "$a/$name.report.txt" any)" = 0 ] ||
			[ "$(count_events "$out/$name.report.txt" any)" = 0 ]; }; then
			log "$name: no initcall, module or initexit events here or in $a: not compared"
			continue
		fi
		show_cmd "$PYTHON" -m analysis diff --out-dir "$out" --name "$name" "$a/$name.report.txt" "$out/$name.report.txt"
		[ "$DRY_RUN" = 1 ] && continue
		rc=0 summary=''
		summary=$(cd "$INITEXIT_ROOT" && "$PYTHON" -m analysis diff -q --out-dir "$out" --name "$name" \
			"$a/$name.report.txt" "$out/$name.report.txt") || rc=$?
		if [ "$rc" = 0 ]; then
			log "$name: diff with $a (as A): $summary; see $out/$name.diff.txt"
		else
			warn "analysis diff of $name failed (exit $rc): no $name.diff.* in $out"
		fi
	done
}

# run_report OUT : the analysis (analysis/, owned by another part of the
# project) on each trace: `python3 -m analysis report` writes
# NAME.timeline.{txt,html,json}, NAME.chrome.json and NAME.verdict.json and
# prints the checks, kept in NAME.check.txt. Sets REPORT_RC to the worst
# exit status (0 checks hold, 1 findings, 2 input error), '' when not run.
# The built tree's System.map (KERNEL_TREE) gives the checks the kernel's
# declared initcall order: the report text has no kallsyms of its own.
run_report() {
	local out=$1 name rc map=()
	REPORT_RC=''
	if [ ! -f "$INITEXIT_ROOT/analysis/__main__.py" ]; then
		log "analysis/ not present: no timeline or checks"
		return 0
	fi
	if [ -n "${KERNEL_TREE:-}" ] && [ -f "$KERNEL_TREE/System.map" ]; then
		map=(--system-map "$KERNEL_TREE/System.map")
	else
		log "analysis: no System.map in ${KERNEL_TREE:-the kernel tree}: the declared-order checks are skipped"
	fi
	for name in boot scenario; do
		if [ "$DRY_RUN" = 0 ] && [ "$(count_events "$out/$name.report.txt" any)" = 0 ]; then
			log "analysis: $name.report.txt holds no initcall, module or initexit events: not analysed"
			continue
		fi
		rc=0
		show_cmd "$PYTHON" -m analysis report "${map[@]}" --out-dir "$out" --name "$name" "$out/$name.report.txt"
		[ "$DRY_RUN" = 1 ] && continue
		(cd "$INITEXIT_ROOT" && "$PYTHON" -m analysis report -q --color never "${map[@]}" --out-dir "$out" \
			--name "$name" "$out/$name.report.txt") >"$out/$name.check.txt" || rc=$?
		sed "s/^/  [$name] /" "$out/$name.check.txt" >&2
		if [ -z "$REPORT_RC" ] || [ "$rc" -gt "$REPORT_RC" ]; then REPORT_RC=$rc; fi
	done
	[ -z "$REPORT_RC" ] || log "analysis: worst exit status $REPORT_RC (0 = every check holds)"
}
