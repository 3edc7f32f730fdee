"""initexit analysis: trace-cmd / dmesg captures to timelines and order checks.

Run as ``python3 -m analysis --help`` from the repository root.
"""

__version__ = "0.1.0"
