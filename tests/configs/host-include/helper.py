#!/usr/bin/python3
"""A helper of the user's own, run in the guest by tests/configs/host-rootfs.sh:
prints the sum of its arguments (python3 of the host, a file of --include)."""
import sys

print(sum(int(a) for a in sys.argv[1:]))
