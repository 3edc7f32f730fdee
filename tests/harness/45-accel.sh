#!/bin/bash
# --accel auto: the KVM probe and the fallback to TCG, with a fake
# qemu-system-x86_64 first on PATH and a fake KVM device, so that every
# branch runs on any host (CI machines may have no usable /dev/kvm).
set -u
. "$(dirname "$0")/lib.sh"
. "$ROOT/scripts/lib/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ktap_plan 19
mkdir -p "$tmp/bin"
# The fake: --version like QEMU; otherwise count the call and act as
# FAKE_QEMU says: boot (print the kernel banner), hang, or fail.
cat >"$tmp/bin/qemu-system-x86_64" <<'SH'
#!/bin/bash
if [ "${1:-}" = --version ]; then echo "QEMU emulator version 7.2.0 (fake)"; exit 0; fi
echo x >>"$FAKE_CALLS"
case "$FAKE_QEMU" in
boots) echo "Linux version 6.12.118+ (fake)"; exit 0 ;;
hangs) exec sleep 30 ;;
fails) echo "qemu-system-x86_64: starting the guest" >&2
	echo "qemu-system-x86_64: error: failed to initialize kvm: Permission denied" >&2
	echo "qemu-system-x86_64: exiting" >&2; exit 1 ;;
esac
SH
chmod +x "$tmp/bin/qemu-system-x86_64"
: >"$tmp/kvm"   # a "device" this user can read and write

# probe MODE DEV : choose_accel auto in a fresh shell with a fresh cache;
# prints ACCEL|ACCEL_NOTE, stderr to $tmp/err.
probe() {
	FAKE_QEMU=$1 FAKE_CALLS=$tmp/calls INITEXIT_KVM_DEV=$2 INITEXIT_KVM_PROBE_SECS=2 \
		INITEXIT_CACHE=${3:-$tmp/cache-$1} PATH="$tmp/bin:$PATH" ROOT="$ROOT" bash -c '
		. "$ROOT/scripts/lib/common.sh"; . "$ROOT/scripts/lib/guest.sh"
		choose_accel auto /nonexistent/bzImage; printf "%s|%s\n" "$ACCEL" "$ACCEL_NOTE"' 2>"$tmp/err"
}
calls() { [ -f "$tmp/calls" ] && wc -l <"$tmp/calls" || echo 0; }
# shellcheck disable=SC2120  # expect passes the argument
banner() { grep -q "KVM NOT USED${1:-}" "$tmp/err"; }
no_banner() { ! banner; }
calls_are() { [ "$(calls)" = "$1" ]; }

rm -f "$tmp/calls"
r=$(probe boots "$tmp/kvm")
ktap_check "a guest that reaches its console: KVM ($r)" [ "$r" = "kvm|KVM probe: works" ]
ktap_check "... no fallback banner" no_banner
ktap_check "... the probe booted once" [ "$(calls)" = 1 ]
r=$(probe boots "$tmp/kvm" "$tmp/cache-boots")
ktap_check "a second run uses the cached answer without booting ($r)" calls_are 1
ktap_check "... and says so" [ "${r%% (delete *}" = "kvm|KVM probe: cached: works" ]

r=$(probe hangs "$tmp/kvm")
ktap_check "a guest that hangs: TCG ($r)" [ "$r" = "tcg|KVM probe: hangs (no console line within 2 s)" ]
ktap_check "... with the loud banner" banner ": KVM probe: hangs"
ktap_check "... saying the timings are TCG's" grep -q "not KVM timings" "$tmp/err"

r=$(probe fails "$tmp/kvm")
ktap_check "QEMU refuses KVM: TCG, quoting QEMU's error line ($r)" \
	[ "$r" = "tcg|KVM probe: fails (qemu exit 1: qemu-system-x86_64: error: failed to initialize kvm: Permission denied)" ]
ktap_check "... with the banner" banner ": KVM probe: fails"
rm -f "$tmp/calls"
r=$(probe fails "$tmp/kvm" "$tmp/cache-fails")
ktap_check "a cached refusal: TCG without probing again ($r)" calls_are 0
ktap_check "... and says it is the cached answer" [ "${r%% (delete *}" = "tcg|KVM probe: cached: fails (qemu exit 1: qemu-system-x86_64: error: failed to initialize kvm: Permission denied)" ]

rm -f "$tmp/calls"
r=$(probe boots "$tmp/no-such-kvm")
ktap_check "no KVM device: TCG ($r)" [ "$r" = "tcg|no $tmp/no-such-kvm" ]
ktap_check "... without probing" calls_are 0
ktap_check "... with the banner" banner ": no $tmp/no-such-kvm"

chmod 000 "$tmp/kvm"
if [ "$(id -u)" = 0 ]; then
	# root reads and writes a mode-000 file: the permission branch cannot
	# be reached as root, so show that the device is then probed instead.
	r=$(probe boots "$tmp/kvm" "$tmp/cache-root")
	ktap_check "as root a mode-000 device is still usable: probed ($r)" [ "$r" = "kvm|KVM probe: works" ]
else
	r=$(probe boots "$tmp/kvm" "$tmp/cache-perm")
	ktap_check "a device this user cannot open: TCG ($r)" [[ "$r" == "tcg|$tmp/kvm not usable by "* ]]
fi

rm -f "$tmp/calls"
r=$(FAKE_QEMU=boots FAKE_CALLS=$tmp/calls PATH="$tmp/bin:$PATH" ROOT="$ROOT" INITEXIT_CACHE=$tmp/c2 bash -c '
	. "$ROOT/scripts/lib/common.sh"; . "$ROOT/scripts/lib/guest.sh"
	choose_accel tcg x; printf "%s|%s\n" "$ACCEL" "$ACCEL_NOTE"' 2>"$tmp/err")
ktap_check "--accel tcg: TCG ($r)" [ "$r" = "tcg|requested with --accel tcg" ]
ktap_check "... no probe" calls_are 0
ktap_check "... no banner" no_banner

ktap_finish
