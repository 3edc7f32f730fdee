#!/bin/bash
# The kconfig fragment check: it lists every fragment line that did not
# land in .config (dependencies off, unknown name), on a made-up .config and
# through a real tinyconfig + fragments + olddefconfig in the kernel tree.
set -u
. "$(dirname "$0")/lib.sh"
. "$ROOT/scripts/lib/common.sh"
. "$ROOT/scripts/lib/kernel.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=$CACHE/linux-patched
if [ -x "$tree/scripts/kconfig/conf" ]; then ktap_plan 10; else ktap_plan 6; fi

printf 'CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_D="x y"\n' >"$tmp/frag.config"
printf 'CONFIG_A=y\nCONFIG_C=y\nCONFIG_D="x y"\n' >"$tmp/dot.config"
kconfig_check "$tmp/dot.config" "$tmp/frag.config" 2>"$tmp/check"
rc=$?
ktap_check "kconfig_check fails when lines are missing" [ "$rc" != 0 ]
ktap_check "... lists CONFIG_B=m (absent)" grep -q 'CONFIG_B=m .*not set' "$tmp/check"
ktap_check "... lists CONFIG_C's is-not-set line (it is set)" grep -q 'CONFIG_C is not set.*CONFIG_C=y' "$tmp/check"
ktap_check "... does not list the lines that landed" [ -z "$(grep -e CONFIG_A -e CONFIG_D "$tmp/check")" ]
printf 'CONFIG_B=y\n' >"$tmp/later.config"
printf 'CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_D="x y"\n' >"$tmp/dot2.config"
ktap_check "a later fragment wins for a symbol set twice" kconfig_check "$tmp/dot2.config" "$tmp/frag.config" "$tmp/later.config"

if [ ! -x "$tree/scripts/kconfig/conf" ]; then
	ktap_skip "real kconfig run" "no configured kernel tree in $CACHE (run scripts/run first)"
else
	# The extra fragment turns MODULE_UNLOAD off, which MODULE_FORCE_UNLOAD
	# (in base.config) depends on, and names an option that does not exist.
	printf '# CONFIG_MODULE_UNLOAD is not set\nCONFIG_INITEXIT_NO_SUCH_OPTION=y\n' >"$tmp/bad.config"
	EXTRA_FRAGMENTS=("$tmp/bad.config")
	mkdir -p "$tmp/cfg"
	(kconfig_generate "$tree" "$tmp/cfg" stock) >"$tmp/gen.out" 2>&1
	rc=$?
	ktap_check "a fragment option that cannot be set fails the config step" [ "$rc" != 0 ]
	ktap_check "... listing CONFIG_MODULE_FORCE_UNLOAD=y (dependency off)" \
		grep -q 'CONFIG_MODULE_FORCE_UNLOAD=y .*base.config' "$tmp/gen.out"
	ktap_check "... listing CONFIG_INITEXIT_NO_SUCH_OPTION=y (unknown)" \
		grep -q 'CONFIG_INITEXIT_NO_SUCH_OPTION=y' "$tmp/gen.out"
	ktap_check "... and not the options that landed" [ -z "$(grep 'CONFIG_VIRTIO_BLK' "$tmp/gen.out")" ]
	EXTRA_FRAGMENTS=()
	(kconfig_generate "$tree" "$tmp/cfg" stock) >"$tmp/gen2.out" 2>&1
	ktap_check "the committed fragments all land (stock)" [ $? = 0 ]
	[ "$KTAP_FAIL" = 0 ] || sed 's/^/# /' "$tmp/gen.out" "$tmp/gen2.out"
fi
ktap_finish
