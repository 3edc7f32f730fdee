#!/usr/bin/python3
"""Put local_clock() stamps between the steps of load_module() in a copy
of the kernel tree, for scripts/bench's "profile" kernel (issue 35, B2).

Usage: bench/profile_load.py TREE

Edits TREE/kernel/module/main.c (the bench's own copy, never the managed
tree): each stamp records the time since the one before under the name of
the steps between them, and after do_init_module() one line goes to the
kernel log, e.g.

  initexit-bench: load bench_pairs_16 0: check=51234 layout=80123 ...

in guest ns, which under the bench's icount (shift=0) are instructions.
analysis/phases.py (load_profiles) reads those lines. The stamps cost a
few hundred instructions per load, the same for every module, so they
cancel in (pairs_N - single_N) / N. An anchor that is not in the file
stops the script with exit 1, naming it: the stamps must be where this
says they are, or not at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: (name of the steps before the stamp, the line the stamp goes before,
#: required). The first stamp is load_module()'s start; "initexit" exists
#: only in the series (module_initexit_setup()).
STAMPS: tuple[tuple[str, str, bool], ...] = (
    ("check", "\t/* Figure out module layout, and allocate all the memory. */\n", True),
    ("layout", "\tmodule_allocated = true;\n", True),
    ("setup", "\t/* Fix up syms, so that st_value is a pointer to location. */\n", True),
    ("symbols", "\terr = apply_relocations(mod, info);\n", True),
    ("relocate", "\terr = module_initexit_setup(mod, info);\n", False),
    ("initexit", "\terr = post_relocation(mod, info);\n", True),
    ("post", "\t/* Finally it's fully formed, ready to start executing. */\n", True),
    ("formation", "\t/* Link in to sysfs. */\n", True),
    ("sysfs", "\tif (is_livepatch_module(mod)) {\n", True),
)

DECL_AFTER = "\tlong err = 0;\n"
"""load_module()'s declaration the stamp array follows."""

RETURN = "\treturn do_init_module(mod);\n"
"""The tail call the last two stamps and the log line replace."""

HELPERS = """
/* scripts/bench's profile kernel only (bench/profile_load.py). */
#include <linux/sched/clock.h>
#define INITEXIT_BENCH_STAMPS 16
struct initexit_bench {
	u64 t[INITEXIT_BENCH_STAMPS];
	const char *name[INITEXIT_BENCH_STAMPS];
	unsigned int n;
};

static void initexit_bench_stamp(struct initexit_bench *b, const char *name)
{
	if (b->n < INITEXIT_BENCH_STAMPS) {
		b->name[b->n] = name;
		b->t[b->n++] = local_clock();
	}
}

static void initexit_bench_print(const struct initexit_bench *b,
				 const char *mod, long err)
{
	char line[400];
	int len = 0;
	unsigned int i;

	for (i = 1; i < b->n; i++)
		len += scnprintf(line + len, sizeof(line) - len, " %s=%llu",
				 b->name[i], b->t[i] - b->t[i - 1]);
	pr_info("initexit-bench: load %s %ld:%s\\n", mod, err, line);
}

"""


def edit(text: str) -> str:
    """main.c with the stamps, or SystemExit naming the missing anchor."""
    def need(anchor: str, what: str) -> None:
        if text.count(anchor) != 1:
            raise SystemExit(f"bench/profile_load.py: {what}: {anchor.strip()!r} is in kernel/module/main.c "
                             f"{text.count(anchor)} times, not once")

    need("static int load_module(struct load_info *info", "load_module()")
    start = text.index("static int load_module(struct load_info *info")
    head, body = text[:start], text[start:]
    if "initexit_bench" in text:
        raise SystemExit("bench/profile_load.py: kernel/module/main.c has the stamps already")
    text = body
    need(DECL_AFTER, "the declarations")
    body = body.replace(DECL_AFTER, DECL_AFTER + "\tstruct initexit_bench bench = {};\n\tchar bench_mod[MODULE_NAME_LEN];\n", 1)
    # The first stamp after the declarations' block (the first blank line).
    first_blank = body.index("\n\n", body.index("struct initexit_bench bench")) + 1
    body = body[:first_blank] + "\tinitexit_bench_stamp(&bench, \"start\");\n" + body[first_blank:]
    for name, anchor, required in STAMPS:
        text = body
        if anchor not in body and not required:
            continue
        need(anchor, f"stamp {name}")
        body = body.replace(anchor, f"\tinitexit_bench_stamp(&bench, \"{name}\");\n" + anchor, 1)
    text = body
    need(RETURN, "the tail call of do_init_module()")
    body = body.replace(RETURN, (
        "\tinitexit_bench_stamp(&bench, \"rest\");\n"
        "\tstrscpy(bench_mod, mod->name, sizeof(bench_mod));\n"
        "\terr = do_init_module(mod);\n"
        "\tinitexit_bench_stamp(&bench, \"init\");\n"
        "\tinitexit_bench_print(&bench, bench_mod, err);\n"
        "\treturn err;\n"), 1)
    return head + HELPERS + body


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1], file=sys.stderr if len(argv) != 1 else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    path = Path(argv[0]) / "kernel" / "module" / "main.c"
    if not path.is_file():
        print(f"bench/profile_load.py: no {path}", file=sys.stderr)
        return 1
    path.write_text(edit(path.read_text()))
    print(f"bench/profile_load.py: stamps in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
