# shellcheck shell=bash
# Kernel trees, series application, configuration and builds, one file
# per stage (tree.sh, kconfig.sh, build.sh, modules.sh), sourced here.
# Sourced after common.sh. Results for the caller: KERNEL_TREE,
# KERNEL_IMAGE, KERNEL_RELEASE.
# shellcheck disable=SC2034
#
# Layout under $CACHE:
#   linux-patched/  Debian's 6.12 source as a git repo; tag initexit-base is
#                   the pristine tarball, branch initexit = base + patches/.
#   linux-stock/    the same source, never patched.
#   kmod/<flavour>/<set>/<name>/  copies of out-of-tree module sources,
#                   built there so the repository stays clean.
# Stamps are dotfiles at the top of each tree (the kernel's .gitignore
# ignores them):
#   .initexit-applied  source+series key, then the HEAD commit after git am
#   .initexit-config   config_key of the .config in the tree
#   .initexit-built    build_key of the last successful build

# Bump when the way the harness configures or builds changes.
readonly KBUILD_RECIPE=1

_kernel_lib=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/lib/kconfig.sh
. "$_kernel_lib/kconfig.sh"
# shellcheck source=scripts/lib/tree.sh
. "$_kernel_lib/tree.sh"
# shellcheck source=scripts/lib/build.sh
. "$_kernel_lib/build.sh"
# shellcheck source=scripts/lib/modules.sh
. "$_kernel_lib/modules.sh"
