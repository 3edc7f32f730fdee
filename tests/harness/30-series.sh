#!/bin/bash
# patches/ handling on a small made-up tree (no kernel needed):
# scripts/regen-patches writes the commits as numbered patches plus series
# and keeps the cover letter; apply_series applies them once, refuses to
# drop uncommitted work, and stops on a patch that does not apply, naming
# the patch and the file; patches/fixes/series (stand-alone fixes) goes
# first, tagged initexit-fixes, and regen-patches writes only what follows.
set -u
. "$(dirname "$0")/lib.sh"
. "$ROOT/scripts/lib/common.sh"
. "$ROOT/scripts/lib/kernel.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ktap_plan 34
export INITEXIT_CACHE=$tmp/cache CACHE=$tmp/cache
# As on a fresh machine: no user.name/user.email anywhere, so every git
# command of the harness that needs an identity must bring its own.
export HOME=$tmp/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL EMAIL
mkdir -p "$HOME"

tree=$tmp/tree
mkdir -p "$tree/kernel"
printf 'int a;\nint b;\nint c;\n' >"$tree/kernel/a.c"
printf 'one\ntwo\nthree\n' >"$tree/README"
git init -q -b initexit "$tree"
git_tree "$tree" add -A
git_tree "$tree" commit -q -m base
git_tree "$tree" tag -a -m base initexit-base
printf 'int a;\nint b2;\nint c;\n' >"$tree/kernel/a.c"
git_tree "$tree" commit -q -a -m "kernel: rename b"
printf 'one\ntwo\nthree\nfour\n' >"$tree/README"
git_tree "$tree" commit -q -a -m "README: add four"
want_tree=$(git -C "$tree" rev-parse 'HEAD^{tree}')

pdir=$tmp/patches
mkdir -p "$pdir"
echo "cover letter text" >"$pdir/0000-cover-letter.patch"
echo stale >"$pdir/0007-stale-old-patch.patch"
"$ROOT/scripts/regen-patches" --tree "$tree" --patches "$pdir" 2>"$tmp/regen.err"
ktap_check "regen-patches exits 0" [ $? = 0 ]
ktap_check "regen-patches keeps 0000-cover-letter.patch" grep -q 'cover letter text' "$pdir/0000-cover-letter.patch"
ktap_check "regen-patches removes old numbered patches" [ ! -e "$pdir/0007-stale-old-patch.patch" ]
ktap_check "series lists the two patches in order, not the cover letter" \
	[ "$(cat "$pdir/series")" = "$(printf '0001-kernel-rename-b.patch\n0002-README-add-four.patch')" ]
ktap_check "patches carry base-commit:" grep -q '^base-commit: ' "$pdir/0001-kernel-rename-b.patch"

# scripts/test keys the boots' results on the series' code only
# (series_code_hash): an edited message or cover letter boots nothing again,
# an edited line of code does; the tree's stamp (series_hash) takes both.
code0=$(series_code_hash "$pdir") whole0=$(series_hash "$pdir")
cp -a "$pdir" "$tmp/msg"
sed -i 's/^\(Subject: .*kernel: rename b\)$/\1, as the reviewer asked/' "$tmp/msg/0001-kernel-rename-b.patch"
echo "a new paragraph" >>"$tmp/msg/0000-cover-letter.patch"
ktap_check "series_code_hash: a message or the cover letter edited, the same" \
	[ "$(series_code_hash "$tmp/msg")" = "$code0" ]
ktap_check "series_hash: the message edited, another (the tree follows it)" \
	[ "$(series_hash "$tmp/msg")" != "$whole0" ]
cp -a "$pdir" "$tmp/code"
sed -i 's/^+int b2;$/+int b3;/' "$tmp/code/0001-kernel-rename-b.patch"
ktap_check "series_code_hash: a line of code edited, another" \
	[ "$(series_code_hash "$tmp/code")" != "$code0" ]
printf 'diff --git a/x b/x\n-- \n+-- \n-- \n2.39.5\n' | patch_code >"$tmp/pc.out"
ktap_check "patch_code: the diff up to its last '-- ' line, a removed '- ' line kept" \
	[ "$(cat "$tmp/pc.out")" = "$(printf 'diff --git a/x b/x\n-- \n+-- ')" ]
rm -rf "$tmp/msg" "$tmp/code"

git -C "$tree" reset -q --hard initexit-base
apply_series "$tree" "$pdir" 2>"$tmp/apply.err"
ktap_check "apply_series applies the series" [ "$(git -C "$tree" rev-parse 'HEAD^{tree}')" = "$want_tree" ]
head1=$(git -C "$tree" rev-parse HEAD)
apply_series "$tree" "$pdir" 2>"$tmp/apply2.err"
ktap_check "a second apply_series changes nothing" [ "$(git -C "$tree" rev-parse HEAD)" = "$head1" ]
ktap_check "... and says the series is already applied" grep -q 'already applied' "$tmp/apply2.err"

# A developer edit with a changed series: refuse rather than reset it away.
echo "int d;" >>"$tree/kernel/a.c"
echo >>"$pdir/0002-README-add-four.patch"	# a changed series
(apply_series "$tree" "$pdir") 2>"$tmp/dirty.err"
ktap_check "uncommitted edits + changed series: apply_series refuses" [ $? = "$EXIT_HARNESS" ]
ktap_check "... and says why" grep -q 'uncommitted changes' "$tmp/dirty.err"
ktap_check "... and the edit is still there" grep -q 'int d;' "$tree/kernel/a.c"
git -C "$tree" checkout -q -- kernel/a.c

# A developer commit that is not in patches/, then patches/ changes (a pull):
# the tree is reset to the new series, and the commit is kept on a branch.
echo "int e;" >>"$tree/kernel/a.c"
git_tree "$tree" commit -q -a -m "kernel: add e"
dev_commit=$(git -C "$tree" rev-parse HEAD)
apply_series "$tree" "$pdir" 2>"$tmp/backup.err"
ktap_check "after a series change the tree is the new series again" \
	[ "$(git -C "$tree" rev-parse 'HEAD^{tree}')" = "$want_tree" ]
backup=$(git -C "$tree" branch --list 'initexit-backup-*' --format='%(refname:short)')
ktap_check "... and the developer's commit is kept on $backup" \
	[ "$(git -C "$tree" rev-parse "${backup:-none}" 2>/dev/null)" = "$dev_commit" ]
ktap_check "... which the run says loudly" grep -q 'kept on branch initexit-backup-' "$tmp/backup.err"

# A patch that does not apply: one whose context is not in the file.
bad=$tmp/bad
mkdir -p "$bad"
cp "$pdir/0001-kernel-rename-b.patch" "$bad/"
sed -e 's/kernel: rename b/kernel: rename c/' -e 's/^-int b;/-int zzz;/' -e 's/^+int b2;/+int c2;/' \
	"$pdir/0001-kernel-rename-b.patch" >"$bad/0002-kernel-rename-c.patch"
printf '0001-kernel-rename-b.patch\n0002-kernel-rename-c.patch\n' >"$bad/series"
(apply_series "$tree" "$bad") 2>"$tmp/bad.err"
rc=$?
ktap_check "a patch that does not apply stops with status $EXIT_HARNESS" [ "$rc" = "$EXIT_HARNESS" ]
ktap_check "... naming the patch" grep -q 'patch 2 of the series, 0002-kernel-rename-c.patch, does not apply' "$tmp/bad.err"
ktap_check "... naming the file and the hunk" grep -q 'patch failed: kernel/a.c:1' "$tmp/bad.err"
ktap_check "... saying what to do" grep -q 'git am -3' "$tmp/bad.err"
ktap_check "... leaving the patches before it applied" \
	[ "$(git -C "$tree" log -1 --format=%s)" = "kernel: rename b" ]
ktap_check "... and no git am in progress" [ ! -d "$tree/.git/rebase-apply" ]

# patches/fixes/series: applied before the series, the commit after the
# fixes tagged initexit-fixes; the stock tree (no PATCHDIR) has no such tag.
git -C "$tree" reset -q --hard initexit-base
mkdir -p "$tree/lib"
printf 'int fixed;\n' >"$tree/lib/fixed.c"
git_tree "$tree" add lib/fixed.c
git_tree "$tree" commit -q -m "lib: add the fix"
fx=$tmp/withfixes
mkdir -p "$fx/fixes"
git -C "$tree" format-patch -q -o "$fx/fixes" initexit-base..HEAD
(cd "$fx/fixes" && ls 0*.patch >series)
cp "$pdir"/0*.patch "$pdir/series" "$fx/"
git -C "$tree" reset -q --hard initexit-base
apply_series "$tree" "$fx" 2>"$tmp/fixes.err"
ktap_check "with patches/fixes/series: the fix, then the series" \
	[ "$(git -C "$tree" log --format=%s initexit-base..HEAD | tr '\n' '|')" = "README: add four|kernel: rename b|lib: add the fix|" ]
ktap_check "... the tag initexit-fixes marks the commit after the fixes" \
	[ "$(git -C "$tree" log -1 --format=%s initexit-fixes 2>/dev/null)" = "lib: add the fix" ]
ktap_check "... series_base names it" [ "$(series_base "$tree")" = initexit-fixes ]
ktap_check "... and the run says how many of each" grep -q 'applied 1 fix(es) from .*fixes/series.*then 2 patch(es)' "$tmp/fixes.err"
apply_series "$tree" "$fx" 2>"$tmp/fixes2.err"
ktap_check "a second apply_series with the fixes changes nothing" grep -q 'already applied' "$tmp/fixes2.err"
"$ROOT/scripts/regen-patches" --tree "$tree" --patches "$fx" 2>"$tmp/regen-fixes.err"
ktap_check "regen-patches writes only the patches after initexit-fixes" \
	[ "$(cat "$fx/series")" = "$(printf '0001-kernel-rename-b.patch\n0002-README-add-four.patch')" ]
# names_prerequisites_on PATCH BASE: PATCH lists prerequisite patches on BASE.
names_prerequisites_on() {
	grep -q '^prerequisite-patch-id: ' "$1" && grep -q "^base-commit: $2" "$1"
}
ktap_check "... which name the fixes as prerequisites, on the same base" \
	names_prerequisites_on "$fx/0001-kernel-rename-b.patch" "$(git -C "$tree" rev-parse 'initexit-base^{commit}')"
ktap_check "... and leaves patches/fixes/ as it was" [ "$(cat "$fx/fixes/series")" = 0001-lib-add-the-fix.patch ]
apply_series "$tree" /dev/null 2>"$tmp/stock.err"
# stock_as_is TREE: TREE is initexit-base, without the tag initexit-fixes.
stock_as_is() {
	[ "$(git -C "$1" rev-parse HEAD)" = "$(git -C "$1" rev-parse 'initexit-base^{commit}')" ] &&
		! git -C "$1" rev-parse -q --verify initexit-fixes >/dev/null
}
ktap_check "the stock tree: initexit-base as is, no initexit-fixes tag" stock_as_is "$tree"
("$ROOT/scripts/regen-patches" --tree "$tree" --patches "$fx") 2>"$tmp/regen-nofix.err"
ktap_check "regen-patches refuses a tree without the fixes when patches/fixes/series exists" \
	[ $? = "$EXIT_HARNESS" ]
[ "$KTAP_FAIL" = 0 ] || sed 's/^/# /' "$tmp"/*.err
ktap_finish
