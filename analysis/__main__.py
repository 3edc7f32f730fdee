"""Entry point for ``python3 -m analysis``."""

import os
import sys

from analysis.cli import main

status = main()
# A large capture is millions of objects; freeing them one by one at
# interpreter exit takes about a second and helps no one.  Flush and leave.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BrokenPipeError:
    pass
os._exit(status)
