"""Entry point for ``python3 -m analysis`` (installed, also ``initexit-analyze``)."""

from analysis.cli import run

run()
