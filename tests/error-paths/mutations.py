#!/usr/bin/env python3
"""Show that the tests of scripts/check-error-paths can fail.

Each mutation below breaks one rule, or one of the false-positive fixes
made while triaging the 6.12 report, in a copy of the checker; the
pytest suite of this folder is run against the copy (CHECK_ERROR_PATHS)
and must fail. Prints one line per mutation, CAUGHT with the failing
tests or MISSED; exit status 1 if any is missed.

  /usr/bin/python3 tests/error-paths/mutations.py [--only NAME]...

Not part of the pytest run (it runs the suite once per mutation, about a
second each).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKER = HERE.parent.parent / "scripts" / "check-error-paths"

# name, what it breaks, text of the checker, its replacement
MUTATIONS: list[tuple[str, str, str, str]] = [
    ("rule-double-undo", "the double-undo rule",
     "if text in seen and seen[text] is not pc.call:",
     "if False:"),
    ("rule-undo-not-done", "the undo-not-done rule",
     "targets = self.best_steps(pc.call, maybe + later, liberal=False)",
     "targets = []"),
    ("rule-leak", "the leak rule",
     "if id(c) in ex and id(c) not in path_undone and self.undoable(c):",
     "if False:"),
    ("rule-wrong-label-better", "wrong-label: a better label exists",
     "better = self.better_label(fp, done, ex, later)",
     "better = None"),
    ("rule-wrong-label-name", "wrong-label: the label names another undo",
     "near = [c for c in first if similar(c.name, fn)]",
     "near = []"),
    ("final-return", "`return register_x();` as a failure point",
     "final = self._final_return()",
     "final = None"),
    ("check-macros", "ACPI_FAILURE()/IS_MODULE() are not steps",
     "IS_REACHABLE IS_MODULE ACPI_FAILURE",
     "IS_REACHABLE"),
    ("return-zero-path", "a path ending in return 0 is not a failure",
     'if fp.labels and fp.labels[-1].startswith("return 0@"):',
     "if False:"),
    ("success-return", "`if (!ret) return ret;` is a success return",
     'if (m and m.group("var") == text and (',
     'if (False and m and m.group("var") == text and ('),
    ("success-goto", "`if (error == 0) goto out;` is a success jump",
     'if m and (op in ("==0", ">=0") or (',
     'if False and m and (op in ("==0", ">=0") or ('),
    ("counting-loop", "`if (!found)` after a counting loop",
     "if any(id(a) in counted for a in ancestors(c.node)):",
     "if False:"),
    ("fallback-probe", "a fallback step means the first one failed",
     "if fallback and c.lvalue and norm_object(c.lvalue) == fallback:",
     "if False:"),
    ("both-failed", "a step the failure test also tests failed too",
     "if (c.lvalue and norm_object(c.lvalue) in tested",
     "if (False and c.lvalue and norm_object(c.lvalue) in tested"),
    ("failure-let-pass", "`if (err) err = 0;` returns success",
     "if var and any(assigns(m.toks, var) for m in unconditional(n)):",
     "if False:"),
    ("predicates", "predicate calls are not failing steps",
     "if any(PREDICATE_RE.search(c.name) for c in cond.calls",
     "if False and any(PREDICATE_RE.search(c.name) for c in cond.calls"),
    ("ptr-err-follow", "`ret = PTR_ERR_OR_ZERO(dev)` followed to dev",
     'if best.name.startswith("PTR_ERR") and best.args and depth > 0:',
     "if False:"),
    ("member-call-lvalue", "`err = ops->reg()` assigns err",
     'while j >= 1 and toks[j].text in ("->", ".") and toks[j - 1].kind == "id":',
     "while False:"),
    ("plain-assignment", "a later non-call assignment hides a step",
     "if c.pos < plain:",
     "if False:"),
    ("branch-assignment", "an assignment in another branch hides nothing",
     "and (cond is None or all(",
     "and (True or all("),
    ("step-between", "undos between the failing step and its test",
     "            for c in self.steps:\n"
     "                if not failing.pos < c.pos < ifnode.pos or c.node is None:",
     "            for c in []:\n"
     "                if not failing.pos < c.pos < ifnode.pos or c.node is None:"),
    ("main-line-undo", "an undo on the main line cancels its step",
     "        for u in self.steps:\n"
     "            if u.pos >= fp.fail_pos or not is_undo_name(u.name):",
     "        for u in []:\n"
     "            if u.pos >= fp.fail_pos or not is_undo_name(u.name):"),
    ("initializers", "initializers need no undo",
     "if step.name in NO_UNDO_NEEDED or MANAGED_RE.match(step.name):",
     "if MANAGED_RE.match(step.name):"),
    ("managed", "devm_/tpmm_ resources go with their device",
     "if step.name in NO_UNDO_NEEDED or MANAGED_RE.match(step.name):",
     "if step.name in NO_UNDO_NEEDED:"),
    ("local-helper-body", "a local helper is judged by what it calls",
     "            return any(has_do_verb(c.name) and c.name not in self.fc.funcs\n"
     "                       for c, _, _ in self.fc.expanded(step.name))",
     "            return True"),
    ("sibling-helper", "a sibling file's helper is judged by its body",
     "sib = SIBLINGS.find(self.fc.disk_path, step.name)",
     "sib = None"),
    ("fuller-definition", "#if/#else definitions: the fuller one",
     "continue  # #if/#else definitions: the fuller one",
     "pass"),
    ("teardown-verb", "only removal verbs undo a whole prefix",
     "if prefix and not usuf and tok in GENERIC_UNDO:",
     "if prefix and not usuf:"),
    ("tested-by-jump", "a final return tested by a failure jump",
     "if (failing.node.kind == Kind.IF\n",
     "if (False and failing.node.kind == Kind.IF\n"),
    ("initcall-beside-module-init", "*_initcall next to module_init",
     "        if exits and not inits:",
     "        if exits:"),
    ("required-on-failure", "tee_device_unregister() after a failed register",
     '    ("tee_device_register", "tee_device_unregister"),\n',
     ""),
    ("attribute-owner", "attribute files go with their object",
     "if (ATTRIBUTE_STEP_RE.search(step.name) and step.args",
     "if (False and ATTRIBUTE_STEP_RE.search(step.name) and step.args"),
    ("name-variants", "request_muxed_region/release_region",
     "nosync sz kern muxed",
     "nosync sz kern"),
    ("loop-goto", "a goto inside a loop or backwards is not an unwind",
     "if target is not None and (target.pos < node.pos or any(",
     "if False and target is not None and (target.pos < node.pos or any("),
    ("cannot-fail", "steps that cannot fail",
     "        if failing is None or failing.name in CANNOT_FAIL:",
     "        if failing is None:"),
    ("catch-all-label", "a catch-all label undoes everything by design",
     "if (not pc.definite or pc.call.name in NULL_SAFE_UNDO or shared",
     "if (not pc.definite or pc.call.name in NULL_SAFE_UNDO"),
    ("local-partial-unwind", "a local helper's own partial unwind",
     "                    or pc.call.name in self.fc.funcs):",
     "                    ):"),
    ("null-safe", "pci_dev_put(NULL) of a failed lookup",
     "bitmap_free pci_dev_put",
     "bitmap_free"),
    ("pointer-test-polarity", "`if (wq)` on a path after wq failed",
     'if (m and m.group("var") == failing.lvalue and not m.group("neg")',
     'if (m and m.group("var") == failing.lvalue'),
    ("ternary-return", "a returned condition is not a step",
     "                and matching_paren(ret.toks, 1) == len(ret.toks) - 1):\n"
     "            failing = direct[0]",
     "                ):\n"
     "            failing = direct[0]"),
    ("name-over-object", "a name pairing beats an object pairing",
     "    OBJECT = 2 ",
     "    OBJECT = 5 "),
    ("static-groups", "configfs default groups need no undo",
     "\nconfigfs_add_default_group\n",
     "\n"),
]


def run_suite(checker: Path) -> tuple[bool, list[str]]:
    env = dict(os.environ, CHECK_ERROR_PATHS=str(checker))
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(HERE)], env=env, capture_output=True, text=True, check=False)
    failed = re.findall(r"^FAILED \S+::(\S+)", res.stdout, re.M)
    return res.returncode == 0, failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--only", action="append", metavar="NAME")
    args = ap.parse_args()
    source = CHECKER.read_text()
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, what, old, new in MUTATIONS:
            if args.only and name not in args.only:
                continue
            if source.count(old) != 1:
                print(f"{name}: STALE (the text to break is not there once)")
                missed += 1
                continue
            copy = Path(tmp) / "check-error-paths"
            copy.write_text(source.replace(old, new))
            passed, failed = run_suite(copy)
            if passed:
                missed += 1
                print(f"{name}: MISSED ({what})")
            else:
                print(f"{name}: CAUGHT ({what}) by {', '.join(failed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
