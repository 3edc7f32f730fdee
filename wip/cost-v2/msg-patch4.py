"""git filter-branch --msg-filter for patch 4: the module's strings."""
import sys

OLD = """module is freed; the pairs' names are strings recorded at build time,
because kallsyms forgets a module's __init symbols once it is loaded."""
NEW = """module is freed; the pairs' names are strings recorded at build time,
because kallsyms forgets a module's __init symbols once it is loaded:
string literals in a module (the file's name one per source file, no
symbol of their own), the origin set by the loader to the module's
name."""

sys.stdout.write(sys.stdin.read().replace(OLD, NEW))
