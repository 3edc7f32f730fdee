"""git filter-branch --msg-filter for round g: patches 3, 4 and 8 say what
their code now does with a module's strings and the pair section."""
import sys

EDITS = (
    # patch 3
    ("""module_init_exit() puts a struct initexit_pair (priority, init, exit,
the functions' names as strings, origin, KBUILD_MODNAME and the file) in
the __initexit_pairs section, which vmlinux keeps in init data.""",
     """module_init_exit() puts a struct initexit_pair (priority, init, exit,
the functions' names as strings, origin, KBUILD_MODNAME and the file) in
the __initexit_pairs section, which vmlinux keeps in init data (in a
module the names and the file are string literals, and the module
loader fills in the origin and module name).""", ),
    # patch 4
    ("""module is freed; the pairs' names are strings recorded at build time,
because kallsyms forgets a module's __init symbols once it is loaded.""",
     """module is freed; the pairs' names are strings recorded at build time,
because kallsyms forgets a module's __init symbols once it is loaded:
string literals in a module (the file's name one per source file, no
symbol of their own), the origin set by the loader to the module's
name."""),
    # patch 8
    ("""so that the suite can call them, unchanged but
for a bound on the entry count (a section of more than UINT_MAX entries
is refused too).""",
     """so that the suite can call them, unchanged but
for a bound on the entry count (a section of more than UINT_MAX entries
is refused too); find_initexit_sections() now looks the section up once
(find_sec()) instead of again through section_objs()."""),
)

msg = sys.stdin.read()
for old, new in EDITS:
    msg = msg.replace(old, new)
sys.stdout.write(msg)
