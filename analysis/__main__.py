"""Entry point for ``python3 -m analysis``."""

import sys

from analysis.cli import main

sys.exit(main())
